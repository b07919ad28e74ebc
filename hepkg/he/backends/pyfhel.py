"""``pyfhel``: BFV and CKKS on Pyfhel 3.5 (Microsoft SEAL 4.1).

Slot layout (checked by the tests against ``sim``): ``encodeInt`` puts entries
[0, N/2) in the first BFV row and [N/2, N) in the second; ``Pyfhel.rotate(ct, k)`` with
k > 0 is a left rotation of each row (CKKS: of the N/2 slots) and ``flip`` swaps the rows.

Parameters: with ``seal_default_modulus`` the context is made with ``sec=128``, and
Pyfhel then IGNORES ``qi_sizes`` for BFV and takes SEAL's default modulus for N (the
key generation checks that it matches ``qi_bits``); otherwise ``qi_sizes`` are passed
with ``sec=0``, since hepkg checks 128-bit security itself.

Keys: ``rotateKeyGen(steps)`` reaches SEAL's ``create_galois_keys(steps)``, so the
context holds Galois keys for exactly its left-rotation steps; step 0 is SEAL's
column-swap element, added when the context has the swap key.

Workarounds for Pyfhel 3.5: ``mod_switch_to_next_ctxt`` silently skips BFV ciphertexts,
so the BFV modulus switch relabels a copy as BGV for the call (SEAL's
``mod_switch_to_next`` itself handles BFV). Pyfhel's ``mod_level`` counter is not the
SEAL level (products increment it), so a ciphertext's level is read from its size.
SEAL refuses "transparent" results (x - x, a product with an all-zero plaintext); those
become fresh encryptions of zero. Ciphertexts are serialized uncompressed (``compr_mode="none"``),
so their byte sizes are SEAL's raw sizes; the public keys go out in :attr:`PyfhelContext.key_compression`
('none', or 'zstd': the smallest form Pyfhel writes, 17% below raw at N = 8192, for a party that ships
them; Pyfhel 3.5 makes its keys with SEAL's unseeded ``create_*_keys(out)`` and cannot export seeded
ones). Loading reads either form.

Roles: Pyfhel dereferences a missing secret key (SIGSEGV) when a public object decrypts or
measures noise, so a public context's Pyfhel object is a :class:`_PublicPyfhel`, a subclass
whose secret-key methods raise SecretKeyRequired instead. Being the object itself (not a
wrapper), it is also what every ciphertext of the context refers to (``ct.raw._pyfhel``),
so ``ct.raw.decrypt()`` raises too.
"""
from __future__ import annotations

import struct

import numpy as np
from Pyfhel import Pyfhel, PyCtxt

from ..context import Context
from ..envelope import frame, unframe
from ..errors import CorruptedData, ParameterError, SecretKeyRequired

_COMPR = "none"
_WORD = 8  # bytes per RNS coefficient in SEAL's serialization


_SEAL_MAGIC = b"\x5e\xa1"


def _seal_moduli(data: bytes) -> tuple[int, list[int]]:
    """(N, coefficient-modulus primes) from Pyfhel's context bytes: SEAL's serialized
    EncryptionParameters (uncompressed: 16-byte header, scheme byte, u64 N, u64 count, then
    each prime as a header and a u64). Pyfhel 3.5 forgets ``qi`` when it loads a context."""
    pos = data.find(_SEAL_MAGIC) + 16 + 1
    if pos < 17 or len(data) < pos + 16:
        raise CorruptedData("Pyfhel context bytes without SEAL encryption parameters")
    n, count = struct.unpack_from("<QQ", data, pos)
    pos += 16
    if len(data) < pos + 24 * count:
        raise CorruptedData("Pyfhel context bytes: the SEAL coefficient modulus is truncated")
    primes = [struct.unpack_from("<Q", data, pos + 24 * i + 16)[0] for i in range(count)]
    return n, primes


class _PublicPyfhel(Pyfhel):
    """A Pyfhel object without a secret key: its secret-key methods raise instead of crashing SEAL."""

    SECRET = ("decrypt", "decryptInt", "decryptFrac", "decryptComplex", "decryptBGV", "decryptPtxt", "decryptAInt",
              "decryptAFrac", "decryptAComplex", "decryptABGV", "decryptAPtxt", "noise_level", "keyGen", "relinKeyGen",
              "rotateKeyGen", "to_bytes_secret_key", "save_secret_key", "from_bytes_secret_key", "load_secret_key",
              "sizeof_secret_key")


def _refuse(name: str):
    def method(self, *args, **kwargs):
        raise SecretKeyRequired(f"Pyfhel.{name} needs the secret key; this is a public (evaluation) context")
    method.__name__ = name
    return method


for _name in _PublicPyfhel.SECRET:
    setattr(_PublicPyfhel, _name, _refuse(_name))
del _name


class PyfhelContext(Context):
    backend = "pyfhel"
    schemes = ("bfv", "ckks")
    has_noise_budget = True

    # ------------------------------------------------------------------ keys and roles
    def _keygen(self):
        p = self.params
        he = Pyfhel()
        if p.scheme == "bfv":
            kw = dict(t=p.plain_modulus, sec=128) if p.seal_default_modulus else \
                dict(t=p.plain_modulus, sec=0, qi_sizes=list(p.qi_bits))
        else:
            kw = dict(scale=2.0 ** p.scale_bits, sec=0, qi_sizes=list(p.qi_bits))
        try:
            status = he.contextGen(scheme=p.scheme, n=p.n, **kw)
        except (AssertionError, ValueError, RuntimeError) as exc:
            raise ParameterError(f"Pyfhel rejected {p.name}: {exc}") from exc
        if status != "success: valid":
            raise ParameterError(f"Pyfhel rejected {p.name} (N={p.n}, qi={list(p.qi_bits)}): {status}")
        bits = tuple(q.bit_length() for q in he.qi)
        if bits != tuple(p.qi_bits):
            raise ParameterError(f"{p.name}: SEAL chose moduli of {list(bits)} bits, not the {list(p.qi_bits)} "
                                 f"the parameter set records")
        with self._generating_keys():
            he.keyGen()
            he.relinKeyGen()
            steps = sorted(self.keys.steps) + [0] * self.swap_key
            if steps:
                he.rotateKeyGen(steps)
        self._setup(he)

    def _setup(self, he: Pyfhel):
        self._he = he
        self._data_primes = len(self.params.qi_bits) - 1
        self._scale = 2.0 ** self.params.scale_bits if self.scheme == "ckks" else 1.0

    #: How :meth:`to_bytes` serializes the keys: 'none' (SEAL's raw form: the fastest to write and read, for
    #: ``public()`` in one process) or 'zstd' (the smallest Pyfhel writes, for keys sent to another party).
    key_compression = "none"

    def _public_payload(self, evaluation_keys: bool) -> "bytes | list":
        he, mode = self._he, self.key_compression
        if mode not in ("zstd", "none"):
            raise ValueError(f"key_compression must be 'zstd' or 'none', got {mode!r}")
        parts = [he.to_bytes_context(_COMPR), he.to_bytes_public_key(mode)]
        if evaluation_keys:
            parts += [he.to_bytes_relin_key(mode), b"" if he.is_rotate_key_empty() else he.to_bytes_rotate_key(mode)]
        return frame(parts + [b""] * (4 - len(parts)))

    def _load_public(self, payload: bytes):
        parts = unframe(payload, 4, "Pyfhel context payload")
        if any(not x for x in parts[:2 + self.relin_key]):
            raise CorruptedData("malformed Pyfhel context payload")
        he = _PublicPyfhel()
        he.from_bytes_context(parts[0])
        he.from_bytes_public_key(parts[1])
        if parts[2]:
            he.from_bytes_relin_key(parts[2])
        if parts[3]:
            he.from_bytes_rotate_key(parts[3])
        self._setup(he)

    # ------------------------------------------------------------------ levels and scales
    def _level(self, ct) -> int:
        """Moduli dropped from ``ct``: from its serialized size, N*size words per prime."""
        primes = ct.sizeof_ciphertext(_COMPR) // (ct.size() * self.params.n * _WORD)
        return self._data_primes - primes

    def _down(self, ct, levels: int):
        """A copy of ``ct`` with ``levels`` more moduli dropped (scale unchanged)."""
        ct = PyCtxt(copy_ctxt=ct)
        for _ in range(levels):
            if self.scheme == "bfv":  # Pyfhel only switches CKKS/BGV ciphertexts
                ct.scheme = "bgv"
                self._he.mod_switch_to_next_ctxt(ct)
                ct.scheme = "bfv"
            else:
                self._he.mod_switch_to_next_ctxt(ct)
        return ct

    def _align(self, x, y, scale: bool):
        """``x``, ``y`` at the same level (the higher one switched down) and, with ``scale``,
        at the same CKKS scale when they differ by rounding only."""
        lx, ly = self._level(x), self._level(y)
        if lx < ly:
            x = self._down(x, ly - lx)
        elif ly < lx:
            y = self._down(y, lx - ly)
        if scale and self.scheme == "ckks" and x.scale != y.scale \
                and round(np.log2(x.scale)) == round(np.log2(y.scale)):
            y = PyCtxt(copy_ctxt=y)
            y.set_scale(x.scale)
        return x, y

    def _plain_like(self, p, x, scale: bool):
        """CKKS plaintext ``p`` at the level of ``x`` and, with ``scale``, at its exact scale."""
        level = self._level(x)
        if p.mod_level == level and (not scale or p.scale == x.scale):
            return p
        return self._encode_ckks(self._he.decodeComplex(p), level, x.scale if scale else p.scale)

    def _zero(self, level: int, scale: float):
        """A fresh encryption of zero at ``level`` and ``scale``, for results SEAL calls transparent."""
        z = self._encrypt(self._encode(np.zeros(self.slots, dtype=np.int64 if self.is_integer else float), level))
        if self.scheme == "ckks":
            z.set_scale(scale)
        return z

    def _eval(self, op, x, other, zero_scale: float):
        """``op(x, other)`` into a new ciphertext; a transparent result becomes an encryption of zero."""
        try:
            return op(x, other, in_new_ctxt=True)
        except RuntimeError as exc:
            if "transparent" not in str(exc):
                raise
            return self._zero(self._level(x), zero_scale)

    # ------------------------------------------------------------------ encoding, encryption
    def _encode_ckks(self, values, level: int, scale: float):
        arr = np.ascontiguousarray(values)
        if arr.dtype.kind == "c":
            pt = self._he.encodeComplex(arr.astype(np.complex128), scale=scale)
        else:
            pt = self._he.encodeFrac(arr.astype(np.float64), scale=scale)
        for _ in range(level):
            self._he.mod_switch_to_next_ptxt(pt, in_new_ptxt=False)
        return pt

    def _encode(self, values, level):
        if self.scheme == "ckks":
            return self._encode_ckks(values, level, self._scale)
        t = self.plain_modulus
        centered = np.where(values > t // 2, values - t, values).astype(np.int64)  # SEAL wants |v| <= t/2
        pt = self._he.encodeInt(np.ascontiguousarray(centered))
        pt.mod_level = level  # BFV plaintexts fit every level; the ciphertext is switched on encryption
        return pt

    def _encrypt(self, pt):
        ct = self._he.encryptPtxt(pt)
        return self._down(ct, pt.mod_level) if self.scheme == "bfv" and pt.mod_level else ct

    def _decrypt(self, ct) -> np.ndarray:
        return self._he.decryptInt(ct) if self.is_integer else self._he.decryptComplex(ct)

    # ------------------------------------------------------------------ arithmetic
    def _add(self, x, y):
        x, y = self._align(x, y, scale=True)
        return self._eval(self._he.add, x, y, x.scale)

    def _sub(self, x, y):
        x, y = self._align(x, y, scale=True)
        return self._eval(self._he.sub, x, y, x.scale)

    def _add_plain(self, x, p):
        if self.scheme == "ckks":
            p = self._plain_like(p, x, scale=True)
        return self._he.add_plain(x, p, in_new_ctxt=True)

    def _sub_plain(self, x, p):
        if self.scheme == "ckks":
            p = self._plain_like(p, x, scale=True)
        return self._he.sub_plain(x, p, in_new_ctxt=True)

    def _negate(self, x):
        return self._he.negate(x, in_new_ctxt=True)

    def _mul(self, x, y):
        x, y = self._align(x, y, scale=False)
        return self._he.multiply(x, y, in_new_ctxt=True)

    def _relin(self, x):
        out = PyCtxt(copy_ctxt=x)
        self._he.relinearize(out)
        return out

    def _mul_plain(self, x, p):
        if self.scheme == "ckks":
            p = self._plain_like(p, x, scale=False)
        return self._eval(self._he.multiply_plain, x, p, x.scale * p.scale)

    # ------------------------------------------------------------------ rotations, levels
    def _rotate(self, x, step: int):
        return self._he.rotate(x, step, in_new_ctxt=True)

    def _swap(self, x):
        return self._he.flip(x, in_new_ctxt=True)

    def _rescale(self, x):
        out = PyCtxt(copy_ctxt=x)
        self._he.rescale_to_next(out)
        return out

    def _mod_switch(self, x):
        return self._down(x, 1)

    def _noise_budget(self, x) -> int:
        return self._he.noise_level(x)

    # ------------------------------------------------------------------ bytes
    def _ser(self, x) -> bytes:
        return x.to_bytes(_COMPR)

    def _deser(self, data: bytes):
        if not data:
            raise ValueError("empty ciphertext bytes")
        return PyCtxt(pyfhel=self._he, bytestring=data)

    def _modulus(self) -> dict:
        n, primes = _seal_moduli(self._he.to_bytes_context(_COMPR))
        bits = [q.bit_length() for q in primes]
        return dict(n=n, q_bits=tuple(bits[:-1]), p_bits=tuple(bits[-1:]), source="SEAL")

    def _key_sizes(self) -> dict[str, int]:
        he = self._he
        fresh = self._zero(0, self._scale)
        return {"public_key": he.sizeof_public_key(_COMPR),
                "relin_key": he.sizeof_relin_key(_COMPR) if self.relin_key else 0,
                "galois_keys": 0 if he.is_rotate_key_empty() else he.sizeof_rotate_key(_COMPR),
                "ciphertext": fresh.sizeof_ciphertext(_COMPR)}
