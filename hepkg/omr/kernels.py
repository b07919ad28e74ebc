"""The detector's matrix diagonals compiled for the CPU (numba): one pass where numpy makes several.

:func:`compression_block` computes what :func:`hepkg.omr.detector._compression_entries`'s numpy path does for one
giant step of the wide MatMul, entry by entry: row r of [C; D_1; ...; D_t] at column c is
(c + 1)^(r mod k + 1) times the weight of row block r // k (1 for C, payload slot s for D_s, 0 past them), mod p.
:func:`affine_block` does the same for the affine transform's tall MatMul (``Detector._affine``'s numpy path): row
r of -Neg^j(A) at column c, read slot by slot, so that one slot's diagonals read neighbouring words of its clue
(numpy's gather reads one word of each clue per diagonal).
Compiled on first use and cached on disk (numba's cache); imported only where numba is installed.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["compression_block", "affine_block"]


@njit(cache=True)
def _block(power, weights, offset, block, cols, N, p, out):
    m, n = cols.shape
    inverse = 1.0 / p
    for b in range(m):
        for s in range(n):
            c = cols[b, s]
            if c < 0 or c >= N:
                raise IndexError("a compression entry outside the matrix")
            x = power[c * offset[0] + offset[s + 1]] * weights[block[s] + c]      # < p^2 < 2^53: exact in a float
            x -= np.int64(x * inverse) * p
            out[b, s] = x + p if x < 0 else x - p if x >= p else x


def compression_block(power: np.ndarray, weights: np.ndarray, rows: np.ndarray, cols: np.ndarray, k: int,
                      blocks: int, N: int, p: int) -> np.ndarray:
    """The (m, n) entries at ``rows`` (n,) and ``cols`` (m, n): ``power`` the powers j = 0..k of columns 0..N-1
    stored skewed (j of c at (c + k)(k + 1) - j k), ``weights`` the row-major (blocks + 1, N) weights (row
    ``blocks``: zeros), flattened. The divisions by k are made once per slot, the reduction mod p by a float
    reciprocal."""
    rows, cols = np.asarray(rows, np.int64), np.ascontiguousarray(cols, np.int64)
    if p >= 1 << 26:
        raise ValueError(f"p = {p} is too large for the float reduction (p^2 must stay below 2^53)")
    offset = np.concatenate([[k + 1], k * (k + 1) - (rows % k + 1) * k])
    out = np.empty(cols.shape, np.int64)
    _block(power, weights, offset, np.minimum(rows // k, blocks) * N, cols, N, p, out)
    return out


@njit(cache=True)
def _affine(a, j, rows, cols, p, out):
    m, n = cols.shape
    width = a.shape[1]
    for s in range(n):
        clue = a[rows[s]]
        for b in range(m):
            c = cols[b, s]
            if c < 0 or c >= width:
                raise IndexError("an affine entry outside the matrix")
            if c <= j:
                v = clue[j - c]
                out[b, s] = p - v if v else 0
            else:
                out[b, s] = clue[width + j - c]


def affine_block(a: np.ndarray, j: int, rows: np.ndarray, cols: np.ndarray, p: int) -> np.ndarray:
    """The (m, n) entries of -Neg^j(a_r)[c] mod p at ``rows`` (n,) and ``cols`` (m, n), ``a`` the (N, n') clue
    vectors (entries in [0, p)): p - a_r[j - c] for c <= j (0 for 0), a_r[n' + j - c] above."""
    rows, cols = np.asarray(rows, np.int64), np.asarray(cols, np.int64)
    if rows.min(initial=0) < 0 or rows.max(initial=0) >= len(a):
        raise IndexError("an affine entry outside the matrix")
    out = np.empty(cols.shape, np.int64)
    _affine(a, int(j), rows, cols, int(p), out)
    return out
