"""The range check of Detect (Alg. 6, Step 2) on the backend protocol, mod the BFV plaintext modulus p.

For each repetition j the affine transform leaves d_j in the slots. PerfOMR's decomposition
(Sec. 3.3), as SophOMR evaluates it:

- g(X) = X prod_{i=1..B} (X^2 - i^2) is 0 exactly on |X| <= B (B = r in the paper's convention,
  r - 1 in the authors' code); P(Y) = prod (Y - i^2) is evaluated on Y = X^2 by Paterson-Stockmeyer
  in the monomial basis (baby powers Y..Y^(m-1), giant powers Y^m, Y^2m, Y^4m, ..., the chunks
  combined as a balanced tree);
- h(X) = X^(p-1) maps nonzero values to 1 (Fermat), by left-to-right square-and-multiply
  (p - 1 = 3 * 2^18: 19 squarings and 1 product);
- PV = prod_j (1 - h(g(d_j))): 1 where every repetition is in range (pertinent), else 0.

With a ``plan`` (:func:`drop_plan`) every product first drops its operands to the primes the products still to come
need, as OpenFHE's parameter generation sizes them (a BGV-like modulus chain on BFV): the circuit and its
result are the same, its deep products cost less (one product at 2^16, bfv-omr-soph-d2: 465 ms at 19 primes,
160 ms at 9, 62 ms at 4).

:func:`range_check_numpy` is the exact plaintext twin; :func:`range_check_counts` the ct x ct
products the circuit takes (checked against the protocol's counts in the tests).
"""
from __future__ import annotations

import math

import numpy as np

from ..he.context import Ciphertext

__all__ = ["range_poly", "baby_count", "eval_poly", "power", "range_check", "drop_plan", "range_check_numpy",
           "range_check_counts"]


def range_poly(bound: int, p: int) -> list[int]:
    """Coefficients (constant first) of P(Y) = prod_{i=1..bound} (Y - i^2) mod p."""
    coeffs = [1]
    for i in range(1, bound + 1):
        root = i * i % p
        shifted = [0] + coeffs                          # Y * P
        coeffs = [(s - root * c) % p for s, c in zip(shifted, coeffs + [0])]
    return coeffs


def baby_count(degree: int) -> int:
    """m, the Paterson-Stockmeyer chunk size: the power of two nearest sqrt(degree + 1), at least 2."""
    return max(2, 2 ** round(math.log2(math.sqrt(degree + 1))))


class _Powers:
    """x^e on demand, each by one product of two lower powers: depth ceil(log2 e), the least possible."""

    def __init__(self, ctx, x):
        self.ctx, self.cache = ctx, {1: x}

    def __call__(self, e: int):
        if e not in self.cache:
            hi = 1 << (e.bit_length() - 1)
            if hi == e:
                self.cache[e] = self.ctx.mul(self(e // 2), self(e // 2))
            else:
                self.cache[e] = self.ctx.mul(self(hi), self(e - hi))
        return self.cache[e]


def eval_poly(ctx, x, coeffs: list[int], odd: bool = False):
    """sum_j coeffs[j] x^j mod p, or with ``odd`` sum_j coeffs[j] x^(2j+1), by Paterson-Stockmeyer.

    Chunks of m coefficients on the babies x^e(j), j < m (e(j) = j, or 2j + 1), combined as a balanced
    tree with the giants x^(s m), x^(2 s m), ... (s = 1, or 2). Every power comes from :class:`_Powers`,
    so g(X) = X P(X^2) (``odd``) of degree 2B + 1 takes depth ceil(log2(2B + 2)): 7 for B = 39, one less
    than P evaluated on Y = X^2 and then multiplied by X. The polynomial must not be constant.
    """
    degree = max((j for j, c in enumerate(coeffs) if c), default=0)
    if degree == 0 and not odd:
        raise ValueError("eval_poly needs a polynomial of degree >= 1")
    m = min(baby_count(degree), 1 << degree.bit_length())
    step = 2 if odd else 1
    power = _Powers(ctx, x)
    chunks = [list(coeffs[c:c + m]) for c in range(0, degree + 1, m)]
    levels = math.ceil(math.log2(len(chunks))) if len(chunks) > 1 else 0
    giants = [power(step * m << i) for i in range(levels)]

    def chunk(cs: list[int]):
        """One chunk: a ciphertext, an int (a constant chunk, never with ``odd``) or None (zero)."""
        out = None
        for j, c in enumerate(cs):
            if c and (odd or j):
                term = ctx.mul_plain(power(step * j + odd), int(c))
                out = term if out is None else ctx.add(out, term)
        if odd or not cs[0]:
            return out
        return int(cs[0]) if out is None else ctx.add(out, int(cs[0]))

    def tree(lo: int, count: int, level: int):
        """sum over chunks lo..lo+count-1 of chunk_c * giant^(c - lo), count <= 2^level."""
        if level == 0:
            return chunk(chunks[lo])
        half = 1 << (level - 1)
        low = tree(lo, min(count, half), level - 1)
        if count <= half:
            return low
        high = tree(lo + half, count - half, level - 1)
        if high is None:
            return low
        high = ctx.mul_plain(giants[level - 1], high) if isinstance(high, int) else ctx.mul(high, giants[level - 1])
        return high if low is None else ctx.add(high, low)

    return tree(0, len(chunks), levels)


def power(ctx, x, e: int):
    """x^e mod p by left-to-right square-and-multiply (e >= 1)."""
    if e < 1:
        raise ValueError(f"exponent must be >= 1, got {e}")
    out = x
    for bit in bin(e)[3:]:
        out = ctx.mul(out, out)
        if bit == "1":
            out = ctx.mul(out, x)
    return out


def _product(ctx, cts: list):
    """The product of the ciphertexts as a balanced tree (depth ceil(log2 len))."""
    while len(cts) > 1:
        cts = [ctx.mul(cts[i], cts[i + 1]) if i + 1 < len(cts) else cts[i] for i in range(0, len(cts), 2)]
    return cts[0]


def range_check(ctx, d_cts: list, bound: int, plan: list | None = None):
    """PV = prod_j (1 - h(g(d_j))) for the l ciphertexts ``d_cts`` of one block of slots; ``plan``
    (:func:`drop_plan` for these l): each product's operands first keep the primes it gives."""
    if plan is not None:
        ctx = _Dropping(ctx, plan, max(d.depth for d in d_cts))
    p = ctx.plain_modulus
    coeffs = range_poly(bound, p)
    flags = []
    for d in d_cts:
        g = eval_poly(ctx, d, coeffs, odd=True) if bound else d
        flags.append(ctx.add(ctx.negate(power(ctx, g, p - 1)), 1))
    return _product(ctx, flags)


def drop_plan(ctx, bound: int, l: int, after: int) -> list | None:
    """plan[i] (i = 0 .. depth - 1): the primes each operand of a range-check product keeps when the deeper one
    is i products into the circuit: :meth:`Context.primes_for_depth` of the products still to come on the deepest
    path from there (this one included) and the ``after`` that follow the range check; None where the backend
    does not say (every prime is kept)."""
    depth = range_check_counts(bound, ctx.plain_modulus, l, ctx.params.plain_depth)["depth"]
    plan = [ctx.primes_for_depth(depth - i + after) for i in range(depth)]
    return None if None in plan else plan


class _Dropping:
    """``ctx`` for :func:`range_check` whose products first drop their operands to ``plan``'s primes (a square's
    once); ``base``: the depth of the range check's inputs. Nothing is cached: a ciphertext lives as long as the
    circuit holds it (a cache of drops kept every intermediate of the squarings: peak RSS 3.6 against 2.8 GB)."""

    def __init__(self, ctx, plan: list, base: int):
        self.ctx, self.plan, self.base, self.plain_modulus = ctx, plan, base, ctx.plain_modulus
        self.mul_plain, self.add, self.negate = ctx.mul_plain, ctx.add, ctx.negate

    def mul(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        primes = self.plan[max(a.depth, b.depth) - self.base]
        a_kept = self.ctx.keep_primes(a, primes)
        return self.ctx.mul(a_kept, a_kept if b is a else self.ctx.keep_primes(b, primes))


def range_check_numpy(d: np.ndarray, bound: int, p: int) -> np.ndarray:
    """The twin: 1 where every column of d (shape (count, l), any representatives mod p) has |d| <= bound."""
    centred = np.asarray(d, dtype=np.int64) % p
    centred = np.where(centred > p // 2, centred - p, centred)
    return (np.abs(centred) <= bound).all(axis=-1).astype(np.int64)


class _Tally:
    """A stand-in context on which the circuit runs on depths alone (a ciphertext is its depth, a float);
    ``plain_depth``: plaintext products add depth, as on a parameter set that counts them."""

    def __init__(self, p: int, plain_depth: bool = False):
        self.plain_modulus, self.mul_ct, self.plain_depth = p, 0, plain_depth

    def mul(self, a: float, b: float) -> float:
        self.mul_ct += 1
        return max(a, b) + 1.0

    def mul_plain(self, a: float, _) -> float:
        return a + self.plain_depth

    def add(self, a, b) -> float:
        return max(v for v in (a, b) if isinstance(v, float))

    def negate(self, a: float) -> float:
        return a


def range_check_counts(bound: int, p: int, l: int, plain_depth: bool = False) -> dict[str, int]:
    """ct x ct products and depth of :func:`range_check` for one block (the same code, run on depths;
    ``plain_depth``: plaintext products counted in the depth)."""
    tally = _Tally(p, plain_depth)
    depth = range_check(tally, [0.0] * l, bound)
    return {"mul_ct": tally.mul_ct, "depth": int(depth)}
