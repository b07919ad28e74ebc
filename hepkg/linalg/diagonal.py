"""Linear transforms by generalized diagonals (Halevi-Shoup), plain and baby-step giant-step.

A linear map ``L`` (``D x D``, ``D <= period``) acts on the first D slots of a ciphertext
whose other slots are zero. With signed offsets ``k = j - i`` its non-zero generalized
diagonals are ``u_k[i] = L[i, i + k]`` (zero where ``i + k`` leaves ``[0, D)``), and

    L x = sum_k u_k * rotate(x, k)

needs one rotation and one ct x pt product per non-zero diagonal. Rotation steps are known
before any ciphertext exists, so keys are generated for exactly those
(:func:`transform_steps`). The BSGS form writes ``k = g + b`` with baby steps ``b`` and
giant steps ``g`` (multiples of ``n1``) and pre-rotates the diagonals by ``-g``:

    L x = sum_g rotate( sum_b rotate(u_{g+b}, -g) * rotate(x, b), g )

so it needs only |baby| + |giant| rotations instead of one per diagonal.
"""
from __future__ import annotations

import math

import numpy as np


def diagonals(matrix, period: int) -> dict[int, np.ndarray]:
    """Non-zero generalized diagonals of a square (dense or scipy.sparse) matrix.

    Returns ``{k: u_k}`` with ``u_k`` of length ``period`` (zero beyond the matrix size);
    offsets are signed, ``-D < k < D``. Sparse input is never densified.
    """
    import scipy.sparse as sp

    m = sp.coo_matrix(matrix)
    d = m.shape[0]
    if m.shape[0] != m.shape[1]:
        raise ValueError(f"diagonals needs a square matrix, got shape {m.shape}")
    if d > period:
        raise ValueError(f"a {d}x{d} map does not fit a rotation period of {period} slots")
    keep = m.data != 0
    rows, cols, vals = m.row[keep], m.col[keep], m.data[keep]
    out: dict[int, np.ndarray] = {}
    for k in np.unique(cols - rows):
        sel = (cols - rows) == k
        u = np.zeros(period, dtype=vals.dtype)
        np.add.at(u, rows[sel], vals[sel])
        out[int(k)] = u
    return out


def bsgs_split(offsets, n1: int, period: int) -> dict[int, list[int]]:
    """Group offsets (mod period) by giant step ``g = n1 * floor(k / n1)``: {g: [baby b]}."""
    groups: dict[int, list[int]] = {}
    for k in sorted({k % period for k in offsets}):
        groups.setdefault(n1 * (k // n1), []).append(k % n1)
    return groups


def default_n1(n_diagonals: int) -> int:
    """Baby-step count balancing baby and giant rotations: about sqrt(#diagonals)."""
    return max(1, math.isqrt(max(n_diagonals - 1, 0)) + 1)


def transform_steps(offsets, period: int, n1: int | None = None) -> list[int]:
    """Rotation steps a transform with these diagonal offsets uses (plain, or BSGS if n1)."""
    if not n1:
        return sorted({k % period for k in offsets} - {0})
    groups = bsgs_split(offsets, n1, period)
    babies = {b for bs in groups.values() for b in bs}
    return sorted((babies | set(groups)) - {0})


def linear_transform(ctx, ct, diags: dict[int, np.ndarray], *, n1: int | None = None):
    """``L x`` for a ciphertext x and L given by its diagonals (from :func:`diagonals`).

    ``n1``: baby-step count for the BSGS evaluation (None: one rotation per diagonal).
    Baby-step rotations of x go through ``ctx.rotate_many`` (hoisted where the backend can).
    """
    if not diags:
        raise ValueError("the linear map has no non-zero diagonal")
    period = ctx.period
    if not n1:
        rots = ctx.rotate_many(ct, [k % period for k in diags])
        terms = [ctx.mul_plain(rots[k % period], u) for k, u in diags.items()]
        return _sum(ctx, terms)
    by_offset = {k % period: u for k, u in diags.items()}
    groups = bsgs_split(by_offset, n1, period)
    babies = ctx.rotate_many(ct, sorted({b for bs in groups.values() for b in bs}))
    out = []
    for g, bs in groups.items():
        inner = [ctx.mul_plain(babies[b], _rotate_plain(by_offset[g + b], g, ctx)) for b in bs]
        out.append(ctx.rotate(_sum(ctx, inner), g))
    return _sum(ctx, out)


def _rotate_plain(u: np.ndarray, g: int, ctx) -> np.ndarray:
    """rotate(u, -g) in the slot layout of ``ctx`` (BFV rows rotate separately)."""
    if ctx.is_integer and u.size == ctx.slots:
        return np.roll(u.reshape(2, -1), g, axis=1).reshape(-1)
    return np.roll(u, g)


def _sum(ctx, cts):
    acc = cts[0]
    for c in cts[1:]:
        acc = ctx.add(acc, c)
    return acc


def fold_diagonals(diags: dict[int, np.ndarray], modulus: int) -> dict[int, np.ndarray]:
    """Merge diagonals whose offsets agree mod ``modulus``; offsets become ``k % modulus``.

    Valid when the input vector repeats with that period over the slots read: it is
    stored twice (slots ``[m, 2m)`` copy ``[0, m)``, output length at most m), or
    ``modulus`` is the rotation period itself. A cyclic shift then needs one diagonal.
    """
    out: dict[int, np.ndarray] = {}
    for k, u in diags.items():
        r = k % modulus
        out[r] = out[r] + u if r in out else u.copy()
    return out


def bsgs_rotations(offsets, period: int, n1: int | None) -> int:
    """Rotations :func:`linear_transform` performs for these offsets (plain, or BSGS if n1)."""
    if not n1:
        return len({k % period for k in offsets} - {0})
    groups = bsgs_split(offsets, n1, period)
    babies = {b for bs in groups.values() for b in bs}
    return len(babies - {0}) + len(set(groups) - {0})


def best_n1(offsets, period: int) -> int | None:
    """Baby-step count minimizing the rotations of a transform (None: plain is cheapest).

    Searches multiples of the offsets' gcd up to about twice the square root of the
    largest offset (mod period), so strided offsets (``c * d``) get strided baby steps.
    """
    ks = sorted({k % period for k in offsets} - {0})
    if not ks:
        return None
    g = math.gcd(*ks)
    best, cost = None, bsgs_rotations(ks, period, None)
    for q in range(2, 2 * math.isqrt(ks[-1] // g) + 3):
        c = bsgs_rotations(ks, period, g * q)
        if c < cost:
            best, cost = g * q, c
    return best
