"""``rns``: hepkg's own RNS-CKKS engine (hepkg.rns) behind the backend protocol.

Numpy on the CPU; CuPy on a GPU with ``HEPKG_RNS_XP=cupy``. The engine chooses its primes
(first and level primes of the parameter set's sizes, level primes tracking the scale) and
its key-switching primes P: the fewest equal primes of at most 60 bits whose product exceeds
the largest of the ``ks_digits`` digits. Where the set leaves ``ks_digits`` open, the digits
are the fewest from 3 up that keep log QP within the 128-bit bound (more digits, smaller P),
else 3. The built modulus reports them.
"""
from __future__ import annotations

import io
import math
import os
import zipfile

import numpy as np

from hepkg.rns import CKKS
from hepkg.rns.ckks import Ciphertext as RawCt
from hepkg.rns.device import array_module, to_host
from hepkg.rns.keys import KeySet, SwitchKey
from hepkg.rns.params import RnsParams, fitted

from ..context import Context
from ..envelope import frame, unframe
from ..errors import CorruptedData, SchemeError

_DEFAULT_DNUM = 3
_NPY_HEADER = 4096  # bytes allowed for one array's .npy header (numpy writes 128)


def _pack(arrays: dict) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **{k: to_host(v) for k, v in arrays.items()})
    return buf.getvalue()


def _unpack(data: bytes, members: int, words: int, what: str) -> dict:
    """The arrays of a :func:`_pack` archive, if it holds at most ``members`` arrays of at most ``words``
    64-bit words each (what the parameters imply); CorruptedData, before anything is inflated or
    allocated, for more, larger or compressed members (1 MB of zeros deflated inflates to a gigabyte)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            infos = z.infolist()
            if len(infos) > members:
                raise CorruptedData(f"{what} holds {len(infos)} arrays; its parameters allow {members}")
            for info in infos:
                if info.compress_type != zipfile.ZIP_STORED:
                    raise CorruptedData(f"{what}: array {info.filename!r} is compressed (rns stores arrays as they are)")
                with z.open(info) as f:
                    if info.file_size > 8 * words + _NPY_HEADER or np.lib.format.read_magic(f) != (1, 0):
                        raise CorruptedData(f"{what}: array {info.filename!r} has {info.file_size} bytes; its "
                                            f"parameters allow {8 * words} bytes of data in npy format 1.0")
                    shape, _, dtype = np.lib.format.read_array_header_1_0(f)
                if math.prod(shape) * dtype.itemsize > 8 * words:
                    raise CorruptedData(f"{what}: array {info.filename!r} claims shape {shape} of {dtype}; its "
                                        f"parameters allow {words} 64-bit words")
    except CorruptedData:
        raise
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:  # also truncated or malformed headers
        raise CorruptedData(f"{what} is not an rns array archive: {type(exc).__name__}: {exc}") from None
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def engine_params(params) -> RnsParams:
    """The rns engine's parameters for a hepkg parameter set (its primes, P and digits: what a context builds),
    without building a context (device pipelines size their memory from them before loading anything)."""
    return fitted(params.name, params.n, params.scale_bits, tuple(params.qi_bits[:-1]), params.ks_digits,
                  _DEFAULT_DNUM)


class RnsContext(Context):
    backend = "rns"
    schemes = ("ckks",)

    # ------------------------------------------------------------------ parameters and keys
    def _rns_params(self) -> RnsParams:
        return engine_params(self.params)   # security is judged by Context._check_built on what is built

    def _engine(self, keys=None) -> CKKS:
        return CKKS(self._rns_params(), xp=self._xp, keys=keys)

    @property
    def _xp(self):
        return array_module(os.environ.get("HEPKG_RNS_XP", "numpy"))

    def _keygen(self):
        with self._generating_keys():    # the engine makes its tables and keys in one call: both are timed
            self._eng = self._engine()
            if self.keys.steps:
                self._eng.gen_rotation_keys(sorted(self.keys.steps))

    def _public_payload(self, evaluation_keys: bool) -> list:
        """Four framed parts, as the other backends: the primes, the public key, the relinearization key
        and the Galois keys (the last two empty without evaluation keys)."""
        k, p = self._eng.keys, self._eng.params
        primes = _pack({"q": np.asarray(p.q_primes, dtype=np.uint64), "p": np.asarray(p.p_primes, dtype=np.uint64)})
        parts = [primes, _pack({"b": k.pk[0], "a": k.pk[1]}), b"", b""]
        if evaluation_keys:
            parts[2] = _pack({"b": k.relin.b, "a": k.relin.a})
            parts[3] = _pack({f"{kind}{s}": getattr(key, kind) for s, key in k.galois.items() for kind in "ba"})
        return frame(parts)

    def _load_public(self, payload: bytes):
        primes_b, pk_b, relin_b, galois_b = unframe(payload, 4, "rns context payload")
        p = self._rns_params()
        nq, full = len(p.q_primes), len(p.q_primes) + len(p.p_primes)
        key = p.dnum * full * p.n  # a switching key's half: at most dnum digits of the full basis
        primes = _unpack(primes_b, 2, full, "the rns context's primes")
        if set(primes) != {"q", "p"} or primes["q"].tolist() != list(p.q_primes) \
                or primes["p"].tolist() != list(p.p_primes):
            raise CorruptedData(f"the payload's primes are not the ones rns builds for {self.params.name}")
        pk, relin, galois = (self._arrays(b, members, words, what) for b, members, words, what in (
            (pk_b, 2, nq * p.n, "the rns public key"), (relin_b, 2, key, "the rns relinearization key"),
            (galois_b, 2 * len(self.keys.steps), key, "the rns Galois keys")))
        keys = KeySet(pk=(pk["b"], pk["a"]), relin=SwitchKey(relin["b"], relin["a"]) if relin else None,
                      galois={int(name[1:]): SwitchKey(galois[name], galois["a" + name[1:]])
                              for name in galois if name.startswith("b")})
        self._eng = self._engine(keys)
        self._check_keys()

    def _arrays(self, part: bytes, members: int, words: int, what: str) -> dict:
        """The arrays of one payload part (bounded as :func:`_unpack`), on this context's array module (none
        for an empty part)."""
        return {k: self._xp.asarray(v) for k, v in _unpack(part, members, words, what).items()} if part else {}

    def _check_keys(self) -> None:
        """CorruptedData unless the loaded keys have the shapes this parameter set builds and every residue
        lies below its prime."""
        eng, k = self._eng, self._eng.keys
        want = (len(eng.bases.digits(0, eng.dnum)), len(eng.bases.full), eng.n)
        keys = [k.relin] if self.relin_key else []
        keys += [k.galois.get(s) for s in self.keys.steps]
        if any(key is None or key.b.shape != want or key.a.shape != want or key.b.dtype != np.uint64
               or key.a.dtype != np.uint64 for key in keys) \
                or any(a.shape != (eng.bases.nq, eng.n) or a.dtype != np.uint64 for a in k.pk):
            raise CorruptedData("the rns public context's keys do not have the shapes its parameters build")
        q = eng.bases.full.q
        if not all(bool((a < q).all()) for key in keys for a in (key.b, key.a)) \
                or not all(bool((a < q[:eng.bases.nq]).all()) for a in k.pk):
            raise CorruptedData("the rns public context's keys hold residues outside their primes")

    def _modulus(self) -> dict:
        p = self._eng.params
        return dict(n=p.n, q_bits=tuple(q.bit_length() for q in p.q_primes),
                    p_bits=tuple(q.bit_length() for q in p.p_primes), source="hepkg.rns (primes chosen by the engine)")

    # ------------------------------------------------------------------ encoding, encryption
    def _encode(self, values: np.ndarray, level: int):
        return self._eng.encode(values, level)

    def _encrypt(self, pt):
        return self._eng.encrypt(pt)

    def _decrypt(self, ct) -> np.ndarray:
        return self._eng.decrypt(ct)

    # ------------------------------------------------------------------ arithmetic
    def _add(self, x, y):
        return self._eng.add(x, y)

    def _sub(self, x, y):
        return self._eng.sub(x, y)

    _add_plain, _sub_plain = _add, _sub

    def _negate(self, x):
        return self._eng.negate(x)

    def _mul(self, x, y):
        return self._eng.mul(x, y)

    def _relin(self, x):
        return self._eng.relinearize(x)

    def _relin_rescale(self, x):
        return self._eng.relinearize(x, rescale=True)

    def _mul_plain(self, x, p):
        return self._eng.mul_plain(x, p)

    def _rotate(self, x, step: int):
        return self._eng.rotate(x, step)

    def _rotate_hoisted(self, x, steps: list[int]) -> list:
        out = self._eng.rotate_hoisted(x, steps)
        return [out[s] for s in steps]

    def _swap(self, x):
        raise SchemeError("CKKS has no column swap")

    def _rescale(self, x):
        return self._eng.rescale(x)

    def _mod_switch(self, x):
        return self._eng.drop_level(x, 1)

    def _noise_budget(self, x) -> int:
        raise SchemeError("the rns backend is CKKS only: no BFV noise budget")

    # ------------------------------------------------------------------ bytes
    def _ser(self, x) -> bytes:
        return _pack({"data": x.data, "meta": np.array([x.level, x.scale], dtype=np.float64)})

    def _deser(self, data: bytes):
        z = _unpack(data, 2, 3 * self._eng.bases.nq * self._eng.n, "the rns ciphertext")
        level, scale = z["meta"]
        return RawCt(self._eng.xp.asarray(z["data"]), int(level), float(scale))

    def _checked(self, raw, meta: dict, payload: bytes):
        eng = self._eng
        shape = raw.data.shape
        if raw.level != meta["level"] or len(shape) != 3 or shape[0] not in (2, 3) \
                or shape[1:] != (eng.bases.nq - raw.level, eng.n) or raw.data.dtype != np.uint64:
            raise CorruptedData(f"the rns ciphertext payload (shape {shape}, level {raw.level}) does not match "
                                f"its metadata (level {meta['level']})")
        if not np.isfinite(raw.scale) or raw.scale <= 0:
            raise CorruptedData(f"the rns ciphertext payload has an invalid scale {raw.scale!r}")
        if not bool((raw.data < eng.bases.full.q[:eng.bases.nq - raw.level]).all()):
            raise CorruptedData("the rns ciphertext payload holds residues outside their primes")
        return raw

    def _key_sizes(self) -> dict[str, int]:
        k = self._eng.keys
        return {"public_key": int(sum(a.nbytes for a in k.pk)),
                "relin_key": k.relin.nbytes if k.relin is not None and self.relin_key else 0,
                "galois_keys": int(sum(g.nbytes for g in k.galois.values())),
                "ciphertext": 2 * self._eng.bases.nq * self._eng.n * 8}
