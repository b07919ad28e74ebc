"""SNAP edge lists (``from<TAB>to[<TAB>value]`` lines, plain or .gz; lines
not starting with a digit, such as ``#`` comments, are skipped) to sparse matrices.

Node ids are renumbered in ascending order to 0..n-1 (the convention of the shared data's
MANIFEST; SuiteSparse's own SNAP matrices may order nodes differently, a permutation only).
Each listed edge becomes one entry ``A[from, to]``: undirected SNAP files that list both
directions give a symmetric matrix, as in SuiteSparse. Without a value column entries are
1; repeated edges are kept once (pattern) or summed (values).
"""
from __future__ import annotations

import gzip
import io
import pathlib

import numpy as np
import scipy.sparse as sp

__all__ = ["read_edge_list"]


def read_edge_list(path, *, return_ids: bool = False):
    """A CSR matrix of the edge list at ``path`` (and the original node ids if ``return_ids``)."""
    path = pathlib.Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as fh:
        lines = [ln for ln in fh if ln.lstrip()[:1].isdigit()]  # skips comments and text headers
    if not lines:
        raise ValueError(f"{path}: no edges (only comments or blank lines)")
    table = np.loadtxt(io.StringIO("".join(lines)), ndmin=2)
    if table.shape[1] not in (2, 3):
        raise ValueError(f"{path}: expected 2 or 3 columns per edge line, got {table.shape[1]}")
    ends = table[:, :2]
    if not np.all(ends == np.round(ends)):
        raise ValueError(f"{path}: node ids must be integers")
    ids, index = np.unique(ends.astype(np.int64), return_inverse=True)
    index = index.reshape(-1, 2)
    n = ids.size
    if table.shape[1] == 3:
        values = table[:, 2]
        if np.all(values == np.round(values)):
            values = values.astype(np.int64)
        out = sp.csr_matrix((values, (index[:, 0], index[:, 1])), shape=(n, n))
    else:
        out = sp.csr_matrix((np.ones(len(index)), (index[:, 0], index[:, 1])), shape=(n, n))
        out.data[:] = 1.0
    out.sort_indices()
    return (out, ids) if return_ids else out
