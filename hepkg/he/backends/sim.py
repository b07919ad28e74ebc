"""``sim``: exact plaintext simulation of BFV/BGV and CKKS slot semantics.

Slots are held in the clear: integers mod t (two rows of N/2 for BFV/BGV) or complex
floats (N/2 slots for CKKS), with no noise. Everything else is the real protocol: key
availability, depth and level limits, op accounting, serialization framing and roles.
It is fast enough for paper-scale op-count experiments; byte sizes of ciphertexts and
keys are SEAL-style estimates from the parameter set (``key_sizes()['estimated'] == 1``).
"""
from __future__ import annotations

import numpy as np

from ..context import Context
from ..errors import CorruptedData
from ..subring import descended_slots

_WORD = 8  # bytes per RNS coefficient


class SimContext(Context):
    backend = "sim"
    schemes = ("bfv", "bgv", "ckks")
    lowers = True
    subrings = True

    # keys and roles: nothing secret to hold, the role flag is what matters
    def _keygen(self):
        self.keygen_s = 0.0

    def _keygen_lowered(self, parent):
        self.keygen_s = 0.0

    def _adopted(self, parent, raw):
        return raw.copy()

    def _keygen_subring(self, parent):
        self.keygen_s = 0.0

    def _descended(self, parent, raw):
        return descended_slots(raw, self.descent, self.plain_modulus)

    def _load_public(self, payload: bytes):
        if payload:  # a real backend's keys relabelled "sim" would let its parties send values in the clear
            raise CorruptedData(f"a sim context carries no key material, but this one carries {len(payload)} bytes: "
                                f"it is another backend's context relabelled as sim")

    def _public_payload(self, evaluation_keys: bool) -> "bytes | list":
        return b""

    @property
    def _dtype(self):
        return np.int64 if self.is_integer else np.complex128

    def _reduce(self, x):
        return x % self.plain_modulus if self.is_integer else x

    def _encode(self, values, level):
        return values.astype(self._dtype)

    def _encrypt(self, pt):
        return pt.copy()

    def _decrypt(self, ct):
        return ct.copy()

    def _add(self, x, y):
        return self._reduce(x + y)

    def _sub(self, x, y):
        return self._reduce(x - y)

    _add_plain, _sub_plain = _add, _sub

    def _negate(self, x):
        return self._reduce(-x)

    def _mul(self, x, y):
        return self._reduce(x * y)

    _mul_plain = _mul

    def _relin(self, x):
        return x

    def _rotate(self, x, step):
        if self.is_integer:
            return np.roll(x.reshape(2, self.period), -step, axis=1).reshape(-1)
        return np.roll(x, -step)

    def _swap(self, x):
        return x.reshape(2, self.period)[::-1].reshape(-1).copy()

    def _rescale(self, x):
        return x

    _mod_switch = _rescale

    def _noise_budget(self, x):
        return 0

    def _ser(self, x) -> bytes:
        return x.tobytes()

    def _deser(self, data: bytes):
        expected = self.slots * np.dtype(self._dtype).itemsize
        if len(data) != expected:
            raise ValueError(f"expected {expected} bytes of slots, got {len(data)}")
        return np.frombuffer(data, dtype=self._dtype).copy()

    def _modulus(self) -> dict:
        p = self.params
        return dict(n=p.n, q_bits=p.qi_bits[:-1], p_bits=p.qi_bits[-1:] + ((p.special_bits,) if p.special_bits else ()),
                    source="declared (sim builds no modulus)")

    def _key_sizes(self) -> dict[str, int]:
        n, primes = self.params.n, len(self.params.qi_bits)
        ksk = (primes - 1) * 2 * n * primes * _WORD  # one key-switching key, SEAL layout
        return {"public_key": 2 * n * primes * _WORD, "relin_key": ksk if self.relin_key else 0,
                "galois_keys": ksk * (len(self.keys) + int(self.swap_key)),
                "ciphertext": 2 * n * (primes - 1) * _WORD, "estimated": 1,
                "switch_key": 2 * 2 * n * self.descent * _WORD if self.descent > 1 else 0}
