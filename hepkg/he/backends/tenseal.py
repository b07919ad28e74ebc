"""``tenseal``: CKKS on Microsoft SEAL through TenSEAL's low-level ``sealapi`` bindings.

Each hook is the SEAL call of its name (TenSEAL's high-level CKKSVector would hide
rotations and rescale on its own), plus only what SEAL needs to accept the operands: a
modulus switch of the upper operand when two ciphertexts sit at different levels, the
scale set equal when rescaling left them a rounding drift apart, and a plaintext
re-encoded when its level or scale is not the ciphertext's. Level L is the parms_id
L modulus drops below the first data level. Rotations are SEAL's ``rotate_vector``
(positive steps rotate left) with one Galois key per held step. These bindings serialize
only through files, so (de)serialization goes through a temporary directory.
"""
from __future__ import annotations

import math
import os
import tempfile

import numpy as np
import tenseal.sealapi as seal

from ..context import Context
from ..envelope import frame, unframe
from ..errors import CorruptedData, ParameterError, SchemeError


def _save(obj) -> bytes:
    """SEAL's own serialization of ``obj`` (compressed as SEAL defaults to)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "obj")
        obj.save(path)
        with open(path, "rb") as f:
            return f.read()


def _load(obj, data: bytes, *context):
    """Load ``data`` into the empty SEAL object ``obj`` (validated against ``context``)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "obj")
        with open(path, "wb") as f:
            f.write(data)
        obj.load(*context, path)
    return obj


class _Plain:
    """A CKKS plaintext: SEAL's encoding at (level, 2^scale_bits) plus the values, which
    are re-encoded when an operation needs another level or the ciphertext's exact scale."""

    __slots__ = ("values", "plain")

    def __init__(self, values: np.ndarray, plain):
        self.values, self.plain = values, plain


class TenSEALContext(Context):
    backend = "tenseal"
    schemes = ("ckks",)
    has_noise_budget = False

    # ------------------------------------------------------------------ setup and keys
    def _parms(self):
        p = self.params
        parms = seal.EncryptionParameters(seal.SCHEME_TYPE.CKKS)
        try:
            parms.set_poly_modulus_degree(p.n)
            parms.set_coeff_modulus(seal.CoeffModulus.Create(p.n, list(p.qi_bits)))
        except ValueError as exc:
            raise ParameterError(f"SEAL rejects {p.name} (N={p.n}, qi {list(p.qi_bits)}): {exc}") from None
        return parms

    def _setup(self, parms):
        """SEAL context, encoder, evaluator and the parms_id of each level."""
        sec = seal.SEC_LEVEL_TYPE.NONE if self.insecure else seal.SEC_LEVEL_TYPE.TC128
        self._ctx = seal.SEALContext(parms, True, sec)
        if not self._ctx.parameters_set():
            raise ParameterError(f"SEAL rejects {self.params.name}: {self._ctx.parameters_error_message()}")
        self._scale = 2.0 ** self.params.scale_bits
        self._encoder = seal.CKKSEncoder(self._ctx)
        self._ev = seal.Evaluator(self._ctx)
        self._pids, data = [], self._ctx.first_context_data()
        while data is not None:
            self._pids.append(data.parms_id())
            data = data.next_context_data()
        self._top = len(self._pids) - 1  # chain index of level 0

    def _keygen(self):
        self._setup(self._parms())
        with self._generating_keys():
            keygen = seal.KeyGenerator(self._ctx)
            self._pk, self._rk, self._gk = seal.PublicKey(), seal.RelinKeys(), seal.GaloisKeys()
            keygen.create_public_key(self._pk)
            keygen.create_relin_keys(self._rk)
            # Galois element of a left rotation by s in CKKS is 3^s mod 2N (SEAL's convention).
            keygen.create_galois_keys([pow(3, s, 2 * self.params.n) for s in sorted(self.keys.steps)], self._gk)
        self._encryptor = seal.Encryptor(self._ctx, self._pk)
        self._decryptor = seal.Decryptor(self._ctx, keygen.secret_key())

    def _public_payload(self, evaluation_keys: bool) -> "bytes | list":
        keys = [_save(self._rk), _save(self._gk)] if evaluation_keys else [b"", b""]
        return frame([_save(self._ctx.key_context_data().parms()), _save(self._pk), *keys])

    def _load_public(self, payload: bytes):
        parms_b, pk_b, rk_b, gk_b = unframe(payload, 4, "tenseal context payload")
        try:
            parms = _load(seal.EncryptionParameters(seal.SCHEME_TYPE.CKKS), parms_b)
        except (RuntimeError, ValueError, MemoryError, TypeError) as exc:
            raise CorruptedData(f"tenseal could not parse the encryption parameters: {exc}") from None
        if parms != self._parms():
            raise CorruptedData(f"the payload's SEAL parameters do not match {self.params.name}")
        self._setup(parms)
        try:
            self._pk = _load(seal.PublicKey(), pk_b, self._ctx)
            self._rk = _load(seal.RelinKeys(), rk_b, self._ctx) if rk_b else None
            self._gk = _load(seal.GaloisKeys(), gk_b, self._ctx) if gk_b else None
        except (RuntimeError, ValueError, MemoryError, TypeError) as exc:
            raise CorruptedData(f"tenseal could not parse the evaluation keys: {exc}") from None
        self._encryptor = seal.Encryptor(self._ctx, self._pk)

    # ------------------------------------------------------------------ helpers
    def _chain(self, x) -> int:
        return self._ctx.get_context_data(x.parms_id()).chain_index()

    def _encode_at(self, values: np.ndarray, parms_id, scale: float):
        out = seal.Plaintext()
        self._encoder.encode(values.tolist(), parms_id, scale, out)
        return out

    def _plain_at(self, p: _Plain, x, scale: float):
        """``p`` encoded at ciphertext ``x``'s parms_id with ``scale``."""
        if p.plain.parms_id() == x.parms_id() and p.plain.scale == scale:
            return p.plain
        return self._encode_at(p.values, x.parms_id(), scale)

    def _switched(self, x, parms_id):
        out = seal.Ciphertext()
        self._ev.mod_switch_to(x, parms_id, out)
        return out

    def _same_level(self, x, y):
        """x, y at the lower of their two levels (the other is mod switched down)."""
        cx, cy = self._chain(x), self._chain(y)
        if cx > cy:
            x = self._switched(x, y.parms_id())
        elif cy > cx:
            y = self._switched(y, x.parms_id())
        return x, y

    def _aligned(self, x, y):
        """x, y at one level and one scale: scales that differ only by the drift of
        rescaling by primes near (not equal to) 2^scale_bits are set equal to x's."""
        x, out = self._same_level(x, y)
        if out.scale != x.scale:
            if round(math.log2(out.scale)) != round(math.log2(x.scale)):
                raise SchemeError(f"CKKS scales 2^{math.log2(x.scale):.2f} and 2^{math.log2(out.scale):.2f} "
                                  f"differ: rescale the product first")
            if out is y:  # copy: inputs are never modified
                out = self._switched(y, y.parms_id())
            out.scale = x.scale
        return x, out

    def _call(self, method, *args, scale: float | None = None):
        """``method(*args, out)`` into a new ciphertext.

        SEAL (as TenSEAL builds it) refuses a transparent result (``x - x``, ``x * 0``),
        which is exactly zero: it is returned as a fresh encryption of zero at the first
        operand's level, with that operand's scale or ``scale``.
        """
        out = seal.Ciphertext()
        try:
            method(*args, out)
        except RuntimeError as exc:
            if "transparent" not in str(exc):
                raise
            out = seal.Ciphertext()
            self._encryptor.encrypt_zero(args[0].parms_id(), out)
            out.scale = args[0].scale if scale is None else scale
        return out

    # ------------------------------------------------------------------ hooks
    def _encode(self, values, level):
        return _Plain(values, self._encode_at(values, self._pids[level], self._scale))

    def _encrypt(self, pt):
        return self._call(self._encryptor.encrypt, pt.plain)

    def _decrypt(self, ct):
        plain = seal.Plaintext()
        self._decryptor.decrypt(ct, plain)
        return np.array(self._encoder.decode_complex(plain))

    def _add(self, x, y):
        return self._call(self._ev.add, *self._aligned(x, y))

    def _sub(self, x, y):
        return self._call(self._ev.sub, *self._aligned(x, y))

    def _add_plain(self, x, p):
        return self._call(self._ev.add_plain, x, self._plain_at(p, x, x.scale))

    def _sub_plain(self, x, p):
        return self._call(self._ev.sub_plain, x, self._plain_at(p, x, x.scale))

    def _negate(self, x):
        return self._call(self._ev.negate, x)

    def _mul(self, x, y):
        return self._call(self._ev.multiply, *self._same_level(x, y))

    def _relin(self, x):
        return self._call(self._ev.relinearize, x, self._rk)

    def _mul_plain(self, x, p):
        return self._call(self._ev.multiply_plain, x, self._plain_at(p, x, self._scale), scale=x.scale * self._scale)

    def _rotate(self, x, step):
        return self._call(self._ev.rotate_vector, x, step, self._gk)

    def _swap(self, x):
        raise SchemeError("CKKS has no column swap")

    def _rescale(self, x):
        return self._call(self._ev.rescale_to_next, x)

    def _mod_switch(self, x):
        return self._call(self._ev.mod_switch_to_next, x)

    def _noise_budget(self, x):
        raise SchemeError("CKKS has no noise budget")

    def _ser(self, x) -> bytes:
        return _save(x)

    def _deser(self, data: bytes):
        return _load(seal.Ciphertext(), data, self._ctx)

    def _modulus(self) -> dict:
        full = [q.bit_count() for q in self._ctx.key_context_data().parms().coeff_modulus()]
        data = len(self._ctx.first_context_data().parms().coeff_modulus())
        return dict(n=self._ctx.key_context_data().parms().poly_modulus_degree(), q_bits=tuple(full[:data]),
                    p_bits=tuple(full[data:]), source="SEAL")

    def _key_sizes(self) -> dict[str, int]:
        zero = seal.Ciphertext()
        self._encryptor.encrypt_zero(zero)
        return {"public_key": len(_save(self._pk)), "relin_key": len(_save(self._rk)) if self._rk is not None else 0,
                "galois_keys": len(_save(self._gk)) if self._gk is not None else 0, "ciphertext": len(_save(zero))}
