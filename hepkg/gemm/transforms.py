"""The paper's matrix transforms (Eqs. 1-4) and the diagonal counts of Theorems 3.1-3.4.

For ``C = A B`` with A m x l and B l x n::

    sigma(A)[i, j]       = A[i, (i + j) mod l]        m x l       (Eq. 1)
    tau(B)[i, j]         = B[(i + j) mod l, j]        l x n       (Eq. 2)
    epsilon^k(A)[i, j]   = A[i, (j + k) mod l]        m x n       (Eq. 3)
    omega^k(B)[i, j]     = B[(i + k) mod l, j]        m x n       (Eq. 4)

and ``A B = sum_{k<l} epsilon^k(sigma(A)) * omega^k(tau(B))`` (Eq. 5, element-wise).
On a flattened matrix each transform is a 0/1 matrix U (Eqs. 12-15 for column-major
order); a ciphertext evaluates it with one rotation and one plaintext product per non-zero
generalized diagonal (Eq. 7), so the diagonal count is the cost.

Theorems vs. the exact counts (checked on every shape up to 12 x 12 x 12, both orders):

* Theorems 3.1, 3.2 (sigma, tau: ``2 min(m, l) - 1``, ``2 min(n, l) - 1``) are exact.
* Theorem 3.3, row-major bound ``(floor(n/l) + 2) m`` and Theorem 3.4, column-major bound
  ``(floor(m/l) + 2) n`` hold (they are upper bounds, often loose).
* Theorem 3.3, column-major ``floor(n/l) + 1`` and Theorem 3.4, row-major
  ``floor(m/l) + 1`` are one short when ``n mod l >= 2`` (resp. ``m mod l >= 2``): the exact
  count of epsilon^k in column-major order is ``floor((n - 1 + k) / l) + 1``, which exceeds
  the bound for ``k >= l + 1 - (n mod l)``; the proof bounds ``floor((k m + i) / (m l))``
  by ``floor(n/l)`` although ``k + n - 1`` can reach the next multiple of l. Example:
  m=1, l=3, n=2, k=2 reads columns (2, 0): offsets +2 and -1, two diagonals, not one.
  omega^k in row-major order is the transposed case (m in place of n).

:func:`diagonal_counts` returns the exact count beside the theorem's.
"""
from __future__ import annotations

import numpy as np

from hepkg.linalg import diagonals

TRANSFORMS = ("sigma", "tau", "epsilon", "omega")


def sigma(A: np.ndarray) -> np.ndarray:
    """Eq. 1: row i rotated left by i."""
    m, l = A.shape
    i, j = np.indices((m, l))
    return A[i, (i + j) % l]


def tau(B: np.ndarray) -> np.ndarray:
    """Eq. 2: column j rotated up by j."""
    l, n = B.shape
    i, j = np.indices((l, n))
    return B[(i + j) % l, j]


def epsilon(A: np.ndarray, k: int, m: int, n: int) -> np.ndarray:
    """Eq. 3: the m x n matrix of A's columns shifted left by k (cyclically, mod l)."""
    i, j = np.indices((m, n))
    return A[i, (j + k) % A.shape[1]]


def omega(B: np.ndarray, k: int, m: int, n: int) -> np.ndarray:
    """Eq. 4: the m x n matrix of B's rows shifted up by k (cyclically, mod l)."""
    i, j = np.indices((m, n))
    return B[(i + k) % B.shape[0], j]


def elementwise_matmul(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Eq. 5 in plaintext: ``sum_k epsilon^k(sigma(A)) * omega^k(tau(B))``."""
    (m, l), n = A.shape, B.shape[1]
    sA, tB = sigma(A), tau(B)
    return sum(epsilon(sA, k, m, n) * omega(tB, k, m, n) for k in range(l))


def _shapes(name: str, m: int, l: int, n: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(input shape, output shape) of a transform in the product m x l times l x n."""
    return {"sigma": ((m, l), (m, l)), "tau": ((l, n), (l, n)),
            "epsilon": ((m, l), (m, n)), "omega": ((l, n), (m, n))}[name]


def _source(name: str, k: int, l: int, i: np.ndarray, j: np.ndarray):
    """Input (row, column) read by output (i, j)."""
    if name == "sigma":
        return i, (i + j) % l
    if name == "tau":
        return (i + j) % l, j
    if name == "epsilon":
        return i, (j + k) % l
    return (i + k) % l, j


def _flat(i, j, shape, order):
    return i + j * shape[0] if order == "F" else i * shape[1] + j


def _entries(name: str, m: int, l: int, n: int, k: int, order: str):
    """(output index, input index, output size, input size) of U's non-zeros."""
    if name not in TRANSFORMS:
        raise ValueError(f"unknown transform {name!r}; one of {TRANSFORMS}")
    if order not in ("F", "C"):
        raise ValueError(f"order must be 'F' (column-major) or 'C' (row-major), got {order!r}")
    shape_in, shape_out = _shapes(name, m, l, n)
    i, j = (a.ravel() for a in np.indices(shape_out))
    si, sj = _source(name, k, l, i, j)
    return (_flat(i, j, shape_out, order), _flat(si, sj, shape_in, order),
            shape_out[0] * shape_out[1], shape_in[0] * shape_in[1])


def transform_matrix(name: str, m: int, l: int, n: int, k: int = 0, order: str = "F") -> sp.csr_matrix:
    """U with ``flatten(T(X)) = U @ flatten(X)`` (Eqs. 12-15 for ``order='F'``), scipy.sparse.

    ``order``: 'F' column-major or 'C' row-major flattening; ``k`` is used by epsilon/omega.
    """
    import scipy.sparse as sp

    rows, cols, size_out, size_in = _entries(name, m, l, n, k, order)
    return sp.csr_matrix((np.ones(rows.size, dtype=np.int64), (rows, cols)), shape=(size_out, size_in))


def transform_diagonals(name: str, m: int, l: int, n: int, k: int = 0, order: str = "F") -> dict[int, np.ndarray]:
    """Non-zero generalized diagonals of U (signed offsets ``col - row``), via :func:`hepkg.linalg.diagonals`.

    A non-square U is padded with zeros to a square matrix first (offsets are unchanged).
    """
    import scipy.sparse as sp

    rows, cols, size_out, size_in = _entries(name, m, l, n, k, order)
    d = max(size_out, size_in)
    return diagonals(sp.coo_matrix((np.ones(rows.size, dtype=np.int64), (rows, cols)), shape=(d, d)), d)


def theorem_count(name: str, m: int, l: int, n: int, order: str = "F") -> int:
    """The bound of Theorems 3.1-3.4 (including their 'at most two when n = l / m = l' case)."""
    if name == "sigma":
        return 2 * min(m, l) - 1
    if name == "tau":
        return 2 * min(n, l) - 1
    if name == "epsilon":
        bound = n // l + 1 if order == "F" else (n // l + 2) * m
        return min(bound, 2) if n == l else bound
    bound = (m // l + 2) * n if order == "F" else m // l + 1
    return min(bound, 2) if m == l else bound


def diagonal_counts(name: str, m: int, l: int, n: int, order: str = "F", k: int | None = None) -> dict:
    """``{'exact': ..., 'theorem': ...}``: the diagonal count of U and the theorem's bound.

    For epsilon/omega, ``k=None`` takes the largest count over ``k = 0..l-1`` (the theorem
    bounds every k).
    """
    ks = [0] if name in ("sigma", "tau") else (range(l) if k is None else [k])
    exact = max(len(transform_diagonals(name, m, l, n, kk, order)) for kk in ks)
    return {"exact": exact, "theorem": theorem_count(name, m, l, n, order)}


def exact_count(name: str, m: int, l: int, n: int, order: str = "F", k: int = 0) -> int:
    """Closed form of the diagonal count where one exists (the theorem-exceeding cases).

    epsilon^k column-major: ``floor((n - 1 + k) / l) + 1``; omega^k row-major:
    ``floor((m - 1 + k) / l) + 1``; sigma, tau: Theorems 3.1, 3.2.
    """
    if name in ("sigma", "tau"):
        return theorem_count(name, m, l, n, order)
    if name == "epsilon" and order == "F":
        return (n - 1 + k) // l + 1
    if name == "omega" and order == "C":
        return (m - 1 + k) // l + 1
    return len(transform_diagonals(name, m, l, n, k, order))
