"""The CSSC format (Compressed Sparse Sorted Column), CSSC paper Sec. 4.3 and Algorithm 5.

Rows are sorted by decreasing non-zero count (ties keep their original order), each
row's non-zeros are shifted to the left, and the left-aligned matrix is read column by
column:

- ``VA`` values and ``CI`` their original column indices, column-major (length nnz);
- ``RM``: ``RM[p]`` is the original row of sorted row ``p`` (length rows);
- ``CP``: column pointers, ``CP[j]:CP[j+1]`` is CSSC column j (length L+1, L the longest row).

Because the rows are sorted, CSSC column j holds exactly the sorted rows ``0..nnz_j-1``:
entry ``CP[j] + p`` belongs to sorted row ``p``. The conversion is vectorized (no Python
loop over non-zeros) and never densifies.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from hepkg.he.errors import EncodingError

from .encoding import value_range

__all__ = ["CSSC", "as_csr"]


def as_csr(matrix, what: str = "matrix", *, allow_zero: bool = False) -> sp.csr_matrix:
    """A validated canonical CSR copy: 2-D, real, finite, duplicates summed, explicit zeros dropped.

    Raises ValueError for an empty matrix (a zero dimension, or no non-zero entry unless
    ``allow_zero``) and :class:`~hepkg.he.EncodingError` for NaN/inf or complex values.
    """
    if not sp.issparse(matrix):
        arr = np.asarray(matrix)
        if arr.ndim != 2:
            raise ValueError(f"{what} must be 2-D (a scipy.sparse matrix or a 2-D array), got shape {arr.shape}")
        matrix = arr
    m = sp.csr_matrix(_summable(matrix, what), copy=True)
    if 0 in m.shape:
        raise ValueError(f"empty {what}: shape {m.shape}")
    if m.dtype.kind == "c":
        raise EncodingError(f"{what} has complex values; CSSC encodes real or integer matrices")
    if m.dtype.kind not in "biuf":
        raise EncodingError(f"{what} has dtype {m.dtype}; expected real or integer values")
    if m.dtype.kind == "f" and not np.all(np.isfinite(m.data)):
        bad = np.flatnonzero(~np.isfinite(m.data))
        row = int(np.searchsorted(m.indptr, bad[0], side="right") - 1)
        raise EncodingError(f"{what} has {bad.size} NaN/inf value(s), the first at ({row}, {m.indices[bad[0]]})")
    m.sum_duplicates()
    m.eliminate_zeros()
    if m.nnz == 0 and not allow_zero:
        raise ValueError(f"empty {what}: {m.shape[0]}x{m.shape[1]} with no non-zero entry")
    return m


def _summable(matrix, what: str):
    """``matrix`` with integer duplicates widened to int64, where their exact sums fit it.

    scipy sums duplicate entries in the input's dtype, wrapping around (uint8: 200 + 100 = 44).
    """
    if not sp.issparse(matrix) or matrix.dtype.kind not in "iu" or getattr(matrix, "has_canonical_format", True):
        return matrix
    coo = matrix.tocoo()
    if coo.nnz == 0:
        return matrix
    _, counts = np.unique(coo.row.astype(np.int64) * coo.shape[1] + coo.col, return_counts=True)
    lo, hi = value_range(coo.data)
    if int(counts.max()) * max(-lo, hi) >= 2 ** 63:
        raise EncodingError(f"{what} has duplicate entries (up to {int(counts.max())} at one position) with values "
                            f"in [{lo}, {hi}]: their sums leave int64")
    return coo.astype(np.int64)


@dataclass(frozen=True, eq=False)
class CSSC:
    """A sparse matrix in CSSC form ``(VA, CI, RM, CP)`` plus its shape."""

    VA: np.ndarray
    CI: np.ndarray
    RM: np.ndarray
    CP: np.ndarray
    shape: tuple[int, int]

    @classmethod
    def from_sparse(cls, matrix) -> "CSSC":
        """Algorithm 5 on the CSR form of ``matrix`` (any scipy.sparse format or 2-D array)."""
        m = as_csr(matrix)
        rows = m.shape[0]
        row_nnz = np.diff(m.indptr)
        rm = np.argsort(-row_nnz, kind="stable")          # line 6: rows by decreasing nnz
        sorted_pos = np.empty(rows, dtype=np.int64)
        sorted_pos[rm] = np.arange(rows)
        row_of = np.repeat(np.arange(rows), row_nnz)
        j = np.arange(m.nnz) - m.indptr[row_of]           # position of each non-zero in its row
        col_nnz = np.bincount(j, minlength=int(row_nnz.max()))
        cp = np.concatenate([[0], np.cumsum(col_nnz)])    # lines 10, 23
        w = cp[j] + sorted_pos[row_of]                    # lines 17-19: slot in column-major order
        va = np.empty(m.nnz, dtype=m.dtype)
        ci = np.empty(m.nnz, dtype=np.int64)
        va[w], ci[w] = m.data, m.indices
        return cls(va, ci, rm.astype(np.int64), cp.astype(np.int64), (int(m.shape[0]), int(m.shape[1])))

    def to_sparse(self) -> sp.csr_matrix:
        """The matrix back in CSR form (exactly the non-zeros that went in)."""
        return sp.csr_matrix((self.VA, (self.RM[self.entry_rows], self.CI)), shape=self.shape)

    @property
    def entry_rows(self) -> np.ndarray:
        """The sorted row of each entry: entry ``CP[j] + p`` is in sorted row ``p``."""
        return np.arange(self.nnz) - np.repeat(self.CP[:-1], self.col_nnz)

    @property
    def nnz(self) -> int:
        return int(self.VA.size)

    @property
    def n_columns(self) -> int:
        """L: the number of CSSC columns (the longest row's non-zero count)."""
        return int(self.CP.size - 1)

    @property
    def col_nnz(self) -> np.ndarray:
        """Non-zeros per CSSC column (non-increasing)."""
        return np.diff(self.CP)

    @property
    def row_nnz(self) -> np.ndarray:
        """Non-zeros per sorted row (non-increasing); ``row_nnz[p]`` is row ``RM[p]``'s count."""
        return np.bincount(self.entry_rows, minlength=self.shape[0])

    def __repr__(self) -> str:
        return f"CSSC(shape={self.shape}, nnz={self.nnz}, columns={self.n_columns})"
