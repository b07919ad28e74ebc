"""Negacyclic NTT over Z_q[X]/(X^N + 1), batched over limbs: arrays of shape (..., k, N).

Forward: Cooley-Tukey with the powers of a primitive 2N-th root psi in bit-reversed order;
the output is in bit-reversed order, slot j holding a(psi^(2 brv(j) + 1)). Inverse:
Gentleman-Sande with psi^-1, then a multiplication by N^-1. One Python iteration per
stage (log N); each stage is one vectorized butterfly over every limb and block.
"""
from __future__ import annotations

import numpy as np

from .arith import Modulus, add_mod, mul_mod, mul_shoup, root_of_unity, shoup_table, sub_mod


def bit_reverse(n: int) -> np.ndarray:
    """The bit-reversal permutation of 0..n-1 (n a power of two)."""
    bits = n.bit_length() - 1
    idx = np.arange(n)
    out = np.zeros(n, dtype=np.int64)
    for b in range(bits):
        out |= ((idx >> b) & 1) << (bits - 1 - b)
    return out


def _powers(base, n: int, m: Modulus):
    """(k, n) array of base^i mod q per limb, i < n (log n vectorized doublings)."""
    xp = m.xp
    out = xp.ones((len(m), n), dtype=np.uint64)
    step = xp.asarray(np.asarray([int(b) for b in base], dtype=np.uint64).reshape(-1, 1))
    size = 1
    while size < n:
        out[:, size:2 * size] = mul_mod(out[:, :size], step, m)
        step = mul_mod(step, step, m)
        size *= 2
    return out


class NTT:
    """Twiddle tables of one RNS basis (every limb: q = 1 mod 2N) and the transforms."""

    def __init__(self, n: int, m: Modulus):
        self.n, self.mod, xp = n, m, m.xp
        psi = [root_of_unity(q, 2 * n) for q in m.primes]
        rev = xp.asarray(bit_reverse(n))
        self.w = _powers(psi, n, m)[:, rev]
        self.iw = _powers([pow(p, -1, q) for p, q in zip(psi, m.primes)], n, m)[:, rev]
        self.ws, self.iws = shoup_table(self.w, m.q, xp), shoup_table(self.iw, m.q, xp)
        self.n_inv = m.constants([pow(n, -1, q) for q in m.primes])

    def take(self, rows) -> "NTT":
        """The tables of the limbs ``rows`` (no recomputation)."""
        out = object.__new__(NTT)
        out.n, out.mod = self.n, self.mod.take(rows)
        idx = self.mod.xp.asarray(np.asarray(rows, dtype=np.int64))
        out.w, out.iw, out.ws, out.iws = (t[idx] for t in (self.w, self.iw, self.ws, self.iws))
        out.n_inv = tuple(c[idx] for c in self.n_inv)
        return out

    def forward(self, a):
        """NTT of coefficient arrays (..., k, N); returns a new array."""
        xp, n = self.mod.xp, self.n
        a = xp.array(a, dtype=np.uint64, copy=True)
        k, lead = a.shape[-2], a.shape[:-2]
        q = self.mod.q.reshape(k, 1, 1)
        m, t = 1, n
        while m < n:
            t //= 2
            v = a.reshape(*lead, k, m, 2, t)
            w, ws = self.w[:, m:2 * m, None], self.ws[:, m:2 * m, None]
            u, x = v[..., 0, :], mul_shoup(v[..., 1, :], w, ws, q, xp)
            v[..., 0, :], v[..., 1, :] = add_mod(u, x, q, xp), sub_mod(u, x, q, xp)
            m *= 2
        return a

    def inverse(self, a):
        """Inverse NTT of (..., k, N) evaluation arrays; returns a new array of coefficients."""
        xp, n = self.mod.xp, self.n
        a = xp.array(a, dtype=np.uint64, copy=True)
        k, lead = a.shape[-2], a.shape[:-2]
        q = self.mod.q.reshape(k, 1, 1)
        m, t = n // 2, 1
        while m >= 1:
            v = a.reshape(*lead, k, m, 2, t)
            w, ws = self.iw[:, m:2 * m, None], self.iws[:, m:2 * m, None]
            u, x = v[..., 0, :], v[..., 1, :]
            v[..., 0, :], v[..., 1, :] = add_mod(u, x, q, xp), mul_shoup(sub_mod(u, x, q, xp), w, ws, q, xp)
            m //= 2
            t *= 2
        return mul_shoup(a, *self.n_inv, self.mod.q, xp)

    def multiply(self, a, b):
        """Element-wise product of two NTT-form arrays (the negacyclic product of the polynomials)."""
        return mul_mod(a, b, self.mod)


def automorphism_index(n: int, g: int) -> np.ndarray:
    """Index map of X -> X^g on NTT-form arrays (bit-reversed order): out[..., j] = in[..., idx[j]].

    Slot j holds a(psi^e) with e = 2 brv(j) + 1; a(X^g) there is a(psi^(e g)), which is slot
    brv((e g mod 2N - 1) / 2)."""
    if g % 2 == 0:
        raise ValueError(f"Galois element {g} must be odd")
    rev = bit_reverse(n)
    e = (2 * rev + 1) * g % (2 * n)
    return rev[(e - 1) // 2]


def automorphism_coeffs(a, g: int, q):
    """X -> X^g on coefficient arrays (..., k, N) with moduli q of shape (k, 1) (reference for tests)."""
    n = a.shape[-1]
    pos = np.arange(n) * g % (2 * n)
    out = np.zeros_like(a)
    flip = pos >= n
    out[..., pos % n] = np.where(flip, (q - a) % q, a)
    return out
