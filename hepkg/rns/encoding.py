"""CKKS canonical-embedding encoding: N/2 complex slots <-> real polynomial coefficients.

Slot j is m(zeta^(5^j)) with zeta = exp(i pi / N); its conjugate sits at zeta^(-5^j). The
evaluations at all odd powers of zeta are one length-N FFT of m_i zeta^i, so encode and
decode are O(N log N). Left rotation by k is X -> X^(5^k mod 2N).

Rounding into RNS limbs is exact: a coefficient times the scale is rounded in float64
(exact below 2^53, which covers scale 2^45 with values up to 2^7; above 2^53 float64
holds only integers, so the value is already what was asked for), then split into
signed 32-bit chunks (exact float operations) whose residues are combined per limb
with 2^32 mod q. No coefficient passes through a lossy integer conversion.
"""
from __future__ import annotations

import numpy as np

from .arith import Modulus, add_mod, mul_mod, signed_to_rns

#: magnitudes below this go to int64 directly; larger ones are split into 32-bit chunks
_DIRECT = 2.0 ** 62


def slot_positions(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices, in the FFT of m_i zeta^i, of the N/2 slots and of their conjugates."""
    g = np.ones(n // 2, dtype=np.int64)
    for j in range(1, n // 2):
        g[j] = g[j - 1] * 5 % (2 * n)
    return (g - 1) // 2, (2 * n - g - 1) // 2


def galois_element(n: int, step: int) -> int:
    """The Galois element 5^step mod 2N of a left rotation by ``step`` slots."""
    return pow(5, step % (n // 2), 2 * n)


class Encoder:
    """Encode/decode for ring degree n with array module xp (FFTs run on xp)."""

    def __init__(self, n: int, xp=np):
        self.n, self.xp = n, xp
        slots, conj = slot_positions(n)
        self.slots, self.conj = xp.asarray(slots), xp.asarray(conj)
        self.twist = xp.asarray(np.exp(1j * np.pi * np.arange(n) / n))

    def embed_inverse(self, values):
        """Real coefficients (float64, length N) of the polynomial whose slots are ``values``."""
        xp, n = self.xp, self.n
        z = xp.zeros(n // 2, dtype=np.complex128)
        v = xp.asarray(values, dtype=np.complex128)
        z[:v.shape[0]] = v
        e = xp.zeros(n, dtype=np.complex128)
        e[self.slots], e[self.conj] = z, xp.conj(z)
        return (xp.fft.fft(e) / n * xp.conj(self.twist)).real

    def embed(self, coeffs):
        """The N/2 slots of the real polynomial with coefficients ``coeffs`` (float64, length N)."""
        e = self.xp.fft.ifft(coeffs * self.twist) * self.n
        return e[self.slots]

    def encode(self, values, scale: float, m: Modulus):
        """Coefficient-form residues (k, N) of round(scale * coefficients) for the slot ``values``."""
        coeffs = self.xp.rint(self.embed_inverse(values) * scale)
        return float_to_rns(coeffs, m)

    def decode(self, coeffs, scale: float):
        """Slots of the real coefficient vector ``coeffs`` (float64) at ``scale``."""
        return self.embed(coeffs / scale)


def float_to_rns(x, m: Modulus):
    """Residues (k, N) of the integer-valued float64 vector x (any magnitude below 2^1023), exactly."""
    xp = m.xp
    if x.size == 0 or float(xp.max(xp.abs(x))) < _DIRECT:
        return signed_to_rns(x.astype(np.int64), m)
    chunks = []
    while True:                                   # x = sum_c chunk_c * 2^(32 c), every step exact
        low = x - xp.floor(x / 2.0 ** 32) * 2.0 ** 32
        chunks.append(low.astype(np.int64))
        x = (x - low) / 2.0 ** 32
        if float(xp.max(xp.abs(x))) < _DIRECT:
            chunks.append(x.astype(np.int64))
            break
    radix = m.constants([1 << 32] * len(m))[0]
    out = signed_to_rns(chunks[-1], m)
    for c in reversed(chunks[:-1]):               # Horner in base 2^32, per limb
        out = add_mod(mul_mod(out, radix, m), signed_to_rns(c, m), m.q, xp)
    return out
