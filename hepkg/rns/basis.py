"""RNS bases: the limbs of Q and P, fast basis conversion, rescale, ModUp/ModDown, CRT to floats.

Limb rows are numbered once for the whole modulus QP: rows 0..L are q_0..q_L (rescale drops
the last), rows L+1.. are the special primes p_j. A ciphertext at level l holds rows
0..L-l; key switching extends them with the P rows.
"""
from __future__ import annotations

import numpy as np

from .arith import Modulus, add_mod, mul_mod, mul_shoup, sub_mod
from .device import check_memory
from .fused import Fused
from .ntt import NTT


def digit_rows(nq: int, level: int, dnum: int) -> list[tuple]:
    """The key-switching digits of Q (``nq`` primes) at ``level``: dnum groups of ceil(nq / dnum) consecutive
    rows of the full Q, each cut to the rows the level still has (empty ones dropped)."""
    alpha = -(-nq // dnum)
    k = nq - level
    return [tuple(range(s, min(s + alpha, k))) for s in range(0, k, alpha)]


class Converter:
    """Basis conversion from basis B (rows ``src``) to basis D (rows ``dst``), coefficient form.

    x mod d = sum_i [x_i (B/b_i)^-1]_{b_i} (B/b_i mod d) - v B, where v = round(sum_i y_i / b_i) is
    computed in float64 (Halevi-Polyakov-Shoup): the result is the centered representative of x
    in [-B/2, B/2), exact unless the fraction is within ~2^-50 of one half (then off by B). The
    centered value keeps ModDown's division by P an unbiased rounding and ModUp's digits small."""

    def __init__(self, src: Modulus, dst: Modulus):
        self.src, self.dst = src, dst
        total = src.product()
        hats = [total // b for b in src.primes]
        self.inv_hat = src.constants([pow(h % b, -1, b) for h, b in zip(hats, src.primes)])
        self.hat = [dst.constants([h] * len(dst)) for h in hats]
        self.total = dst.constants([total] * len(dst))
        self.inv_src = src.xp.asarray(np.asarray([1.0 / b for b in src.primes]).reshape(-1, 1))

    def __call__(self, x):
        """(..., |D|, N) residues of the (..., |B|, N) coefficient residues x."""
        xp, dst = self.dst.xp, self.dst
        y = mul_shoup(x, *self.inv_hat, self.src.q, xp)
        out = xp.zeros(x.shape[:-2] + (len(dst), x.shape[-1]), dtype=np.uint64)
        for i, (h, hs) in enumerate(self.hat):   # |B| vectorized passes (the key-switch inner product's twin)
            out = add_mod(out, mul_shoup(y[..., i:i + 1, :], h, hs, dst.q, xp), dst.q, xp)
        v = xp.rint(xp.sum(y.astype(np.float64) * self.inv_src, axis=-2, keepdims=True)).astype(np.uint64)
        return sub_mod(out, mul_shoup(v, *self.total, dst.q, xp), dst.q, xp)


class Bases:
    """Every sub-basis of the modulus QP used by the engine, built once and cached by its rows."""

    def __init__(self, n: int, q_primes, p_primes, xp=np):
        self.n, self.xp = n, xp
        self.q_primes, self.p_primes = tuple(q_primes), tuple(p_primes)
        self.nq = len(self.q_primes)
        self.p_rows = tuple(range(self.nq, self.nq + len(self.p_primes)))
        self.full = Modulus(self.q_primes + self.p_primes, xp)
        check_memory(NTT.table_bytes(n, len(self.full)), "the NTT tables", xp)
        self._ntt_full = NTT(n, self.full)
        self._cache: dict = {}
        self.fused = None if xp is np else Fused(self)

    def _cached(self, key, make):
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def mod(self, rows) -> Modulus:
        rows = tuple(rows)
        return self._cached(("mod", rows), lambda: self.full.take(rows))

    def ntt(self, rows) -> NTT:
        rows = tuple(rows)
        return self._cached(("ntt", rows), lambda: self._ntt_full.take(rows))

    def converter(self, src, dst) -> Converter:
        src, dst = tuple(src), tuple(dst)
        return self._cached(("conv", src, dst), lambda: Converter(self.mod(src), self.mod(dst)))

    def q_rows(self, level: int) -> tuple:
        """Rows of Q at ``level`` (levels dropped)."""
        return tuple(range(self.nq - level))

    def digits(self, level: int, dnum: int) -> list[tuple]:
        return digit_rows(self.nq, level, dnum)


def rescale(bases: Bases, c):
    """Divide the NTT-form (..., k, N) polynomials c by their last prime q_last, rounding: (..., k-1, N)."""
    xp = bases.xp
    if xp is not np:
        return bases.fused.rescale(c)
    k = c.shape[-2]
    rows, last = tuple(range(k - 1)), k - 1
    q_last = bases.full.primes[last]
    half = q_last // 2
    top = bases.ntt((last,)).inverse(c[..., last:, :])            # (..., 1, N) coefficients mod q_last
    top = top + np.uint64(half)
    top = xp.minimum(top, top - np.uint64(q_last))              # x + floor(q_last/2), mod q_last: rounds
    m = bases.mod(rows)
    half_i = m.constants([half] * len(m))[0]
    t = sub_mod(top % m.q, half_i, m.q, xp)
    t = bases.ntt(rows).forward(t)
    inv = m.constants([pow(q_last, -1, q) for q in m.primes])
    return mul_shoup(sub_mod(c[..., :last, :], t, m.q, xp), *inv, m.q, xp)


def mod_up(bases: Bases, d, level: int, dnum: int):
    """ModUp of the NTT-form (k, N) polynomial d: one (k + |P|, N) extension per digit, stacked.

    Digit j keeps its own rows exactly; the other Q rows and the P rows are its fast basis
    extension (inverse NTT on the digit, conversion, NTT on the new rows)."""
    xp = bases.xp
    q_rows = bases.q_rows(level)
    ext_rows = q_rows + bases.p_rows
    digits = bases.digits(level, dnum)
    out = xp.empty((len(digits), len(ext_rows), d.shape[-1]), dtype=np.uint64)
    for j, rows in enumerate(digits):
        other = tuple(r for r in ext_rows if r not in rows)
        coeffs = bases.ntt(rows).inverse(d[rows[0]:rows[-1] + 1])
        out[j, rows[0]:rows[-1] + 1] = d[rows[0]:rows[-1] + 1]
        idx = xp.asarray(np.asarray([ext_rows.index(r) for r in other], dtype=np.int64))
        out[j, idx] = bases.ntt(other).forward(bases.converter(rows, other)(coeffs))
    return out


def mod_down(bases: Bases, c, level: int, rescale: bool = False):
    """ModDown: the NTT-form (..., k + |P|, N) polynomials c over Q_l and P, divided by P: (..., k, N); with
    ``rescale``, divided by P q_last at once (the rescale folded in): (..., k - 1, N). The dropped limbs' centered
    value (fast conversion) is subtracted first, so the division is exact and rounds to nearest."""
    xp = bases.xp
    q_rows = bases.q_rows(level)
    keep = q_rows[:-1] if rescale else q_rows
    drop = q_rows[len(keep):] + bases.p_rows
    coeffs = bases.ntt(drop).inverse(c[..., len(keep):, :])
    t = bases.ntt(keep).forward(bases.converter(drop, keep)(coeffs))
    m = bases.mod(keep)
    divisor = bases.mod(drop).product()
    inv = m.constants([pow(divisor % q, -1, q) for q in m.primes])
    return mul_shoup(sub_mod(c[..., :len(keep), :], t, m.q, xp), *inv, m.q, xp)


def dot_mod(x, y, m: Modulus):
    """sum_j x[j] * y[j] mod q over the leading axis (the key-switching inner product)."""
    xp = m.xp
    acc = mul_mod(x[0], y[0], m)
    for j in range(1, x.shape[0]):
        acc = add_mod(acc, mul_mod(x[j], y[j], m), m.q, xp)
    return acc


def to_centered_float(x, m: Modulus):
    """float64 values of the integers in (-Q/2, Q/2] with coefficient residues x (k, N), Q = prod m.

    Garner's algorithm with balanced mixed-radix digits v_j in (-q_j/2, q_j/2]:
    x = sum_j v_j q_0...q_{j-1}, evaluated in floats from the top digit (relative error ~2^-52)."""
    xp, primes = m.xp, m.primes
    digits = []
    for j, q in enumerate(primes):
        qj = m.take([j])
        acc = x[j:j + 1]
        radix = 1
        for i, v in enumerate(digits):              # subtract sum_{i<j} v_i M_i mod q_j
            w, ws = qj.constants([radix])
            acc = sub_mod(acc, mul_shoup((v % np.int64(q)).astype(np.uint64), w, ws, qj.q, xp), qj.q, xp)
            radix *= primes[i]
        w, ws = qj.constants([pow(radix % q, -1, q)])
        v = mul_shoup(acc, w, ws, qj.q, xp).astype(np.int64)
        digits.append(xp.where(v > q // 2, v - np.int64(q), v))
    out = digits[-1][0].astype(np.float64)
    for j in range(len(primes) - 2, -1, -1):
        out = out * float(primes[j]) + digits[j][0].astype(np.float64)
    return out
