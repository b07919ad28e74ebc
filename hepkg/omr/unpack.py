"""PerfOMR's PVUnpack on BFV slots (Sec. 3.4.1): SlotToCoeff, then oblivious expansion into one
ciphertext per slot, each holding that slot's value in all of its slots.

Slot algebra (OpenFHE's packed encoding for n a power of two and t = 1 mod 2n; the tests check it
against the library): slot j of row 0 holds m(z^(5^j)), slot j of row 1 holds m(z^(-5^j)), z the
smallest primitive 2n-th root of unity mod t. ``ctx.rotate(ct, r)`` is the automorphism X -> X^(5^r)
and ``ctx.swap_columns`` is X -> X^(-1). ``sim`` moves slots the same way, so the same circuit runs
there; SEAL's batch encoder orders slots differently and is refused.

1. **SlotToCoeff**: the dense n x n map E / n, ``E[j][i] = z^(e_j i)`` (:func:`~hepkg.linalg.rectangular.square_matvec`),
   turns slots v into the polynomial sum_i (v_i / n) X^i (whose slots are E v / n).
2. **Expansion** [ACLS18]: log2 n levels. A node holding monomials X^(2^l j) splits into
   c + sigma(c) (the even j) and (c - sigma(c)) X^(-2^l) (the odd j, shifted down), sigma an
   automorphism with sigma(X^(2^l j)) = (-1)^j X^(2^l j): X -> X^(5^(n / 2^(l+2))), a rotation, for
   l < log2 n - 1, and X -> X^(-1), the swap, at the last level; X^(-2^l) is applied as (sigma(c) - c)
   X^(n - 2^l), a plaintext with coefficient +1 (t - 1 would multiply the noise by t at every level). Every
   level doubles the values, so
   leaf i is the constant n (v_i / n) = v_i. Depth first: at most log2 n ciphertexts are alive.

The authors (SEAL) take the rotation keys {1, 128} for SlotToCoeff at four primes and the expansion's
Galois keys at two; monomial products are coefficient shifts there and pre-encoded plaintexts here.
"""
from __future__ import annotations

import math
from typing import Iterator

import numpy as np

from ..linalg.rectangular import square_counts, square_matvec, tall_steps

__all__ = ["BACKENDS", "encoding_root", "slot_exponents", "slot_to_coeff_entries", "slots_to_coeffs", "expand", "expand_path",
           "unpack_steps", "unpack_counts"]

#: Backends whose slots follow the algebra above.
BACKENDS = ("openfhe", "sim")


def _ring(n: int, t: int) -> tuple[int, int]:
    if not isinstance(n, (int, np.integer)) or n < 4 or n & (n - 1):
        raise ValueError(f"the slot count n must be a power of two >= 4, got {n!r}")
    if not isinstance(t, (int, np.integer)) or t < 3 or (t - 1) % (2 * n):
        raise ValueError(f"the plaintext modulus t={t!r} must be a prime = 1 mod 2n = {2 * n} (full batching)")
    return int(n), int(t)


def encoding_root(n: int, t: int) -> int:
    """z: the smallest primitive 2n-th root of unity mod t (z^n = -1), OpenFHE's packed-encoding root."""
    n, t = _ring(n, t)
    return next(x for x in range(2, t) if pow(x, n, t) == t - 1)


def slot_exponents(n: int) -> np.ndarray:
    """e_j: slot j holds m(z^(e_j)); 5^j in row 0, -5^j in row 1 (mod 2n)."""
    half, m = n // 2, 2 * n
    row = np.empty(half, np.int64)
    row[0] = 1
    for j in range(1, half):
        row[j] = row[j - 1] * 5 % m
    return np.concatenate([row, (m - row) % m])


def _powers(n: int, t: int, scale: int = 1) -> np.ndarray:
    """scale * z^k mod t for k = 0..2n-1."""
    z, out = encoding_root(n, t), np.empty(2 * n, np.int64)
    out[0] = scale % t
    for k in range(1, 2 * n):
        out[k] = out[k - 1] * z % t
    return out


def slot_to_coeff_entries(n: int, t: int):
    """Entries of E / n, ``entries(rows, cols) = n^-1 z^(e_row col) mod t`` (never materialised: n^2 words)."""
    n, t = _ring(n, t)
    table, e = _powers(n, t, pow(n, -1, t)), slot_exponents(n)
    return lambda rows, cols: table[(e[rows] * cols) % (2 * n)]


def _supported(ctx) -> None:
    if ctx.backend not in BACKENDS:
        raise ValueError(f"PVUnpack needs OpenFHE's slot order (backends {BACKENDS}); '{ctx.backend}' orders "
                         f"its slots another way")


def slots_to_coeffs(ctx, ct, *, b: int | None = None):
    """The ciphertext of sum_i (v_i / n) X^i for the slots v of ``ct``."""
    _supported(ctx)
    return square_matvec(ctx, ct, slot_to_coeff_entries(ctx.slots, ctx.plain_modulus), b=b)


def _splitter(ctx, ct):
    """split(c, level) -> (even child, odd child) of a node at ``level`` of ``ct``'s expansion tree."""
    _supported(ctx)
    n, t = ctx.slots, ctx.plain_modulus
    levels = int(math.log2(n))
    table, e = _powers(n, t), slot_exponents(n)
    # X^(-2^l) = -X^(n - 2^l): the product by X^(n - 2^l), whose coefficient is +1, keeps the noise (a
    # coefficient t - 1 would multiply it by t at every level); the sign goes into the subtraction
    monomials = [ctx.encode(table[(e * (n - (1 << l))) % (2 * n)], level=ct.level) for l in range(levels)]

    def split(c, level: int):
        sigma = ctx.rotate(c, n >> (level + 2)) if level < levels - 1 else ctx.swap_columns(c)
        return ctx.add(c, sigma), ctx.mul_plain(ctx.sub(sigma, c), monomials[level])
    return split, levels


def expand(ctx, ct) -> Iterator[tuple[int, object]]:
    """(i, leaf i) for i = 0..n-1 in depth-first order: leaf i has coefficient i of ``ct``'s polynomial, times n,
    as a constant (in every slot)."""
    split, levels = _splitter(ctx, ct)

    def node(c, level: int, residue: int):
        if level == levels:
            yield residue, c
            return
        even, odd = split(c, level)
        yield from node(even, level + 1, residue)
        yield from node(odd, level + 1, residue + (1 << level))
    return node(ct, 0, 0)


def expand_path(ctx, ct, i: int) -> list:
    """The nodes on the way to leaf i of :func:`expand` (log2 n of them, the leaf last): one split per level."""
    split, levels = _splitter(ctx, ct)
    if not isinstance(i, (int, np.integer)) or not 0 <= i < ctx.slots:
        raise ValueError(f"leaf index must be an integer in [0, {ctx.slots}), got {i!r}")
    path, c = [], ct
    for level in range(levels):
        c = split(c, level)[(i >> level) & 1]
        path.append(c)
    return path


def unpack_steps(n: int, b: int) -> list[int]:
    """Rotation keys of PVUnpack: SlotToCoeff's (1, b) and the expansion's n/4, n/8, ..., 1 (the swap on top)."""
    return sorted(set(tall_steps(n // 2, b)) | {n >> (l + 2) for l in range(int(math.log2(n)) - 1)})


def unpack_counts(n: int, b: int) -> dict[str, dict[str, int]]:
    """Op counts of SlotToCoeff and of the expansion of one ciphertext of n slots."""
    s2c = square_counts(n, b)
    return {"slot_to_coeff": {k: s2c[k] for k in ("mul_pt", "rotate", "swap")} | dict(
                keyswitch=s2c["rotate"] + 1, encode=n),
            "expansion": dict(rotate=n // 2 - 1, swap=n // 2, keyswitch=n - 1, mul_pt=n - 1,
                              encode=int(math.log2(n)))}
