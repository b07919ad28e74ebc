"""Mycielski graphs, generated exactly (SuiteSparse's ``Mycielski/mycielskian<k>`` matrices).

The Mycielskian of a graph with adjacency A (n vertices) has 2n + 1 vertices: the
originals, one shadow per original, and a hub. Its adjacency is

    [[A, A, 0],
     [A, 0, 1],
     [0, 1', 0]]

(shadow i is joined to original i's neighbours, and every shadow to the hub).
``mycielskian(2)`` is K2, ``mycielskian(3)`` the 5-cycle, ``mycielskian(4)`` the Grötzsch
graph; ``mycielskian(k)`` has ``3 * 2^(k-2) - 1`` vertices and the vertex order of the
SuiteSparse matrices (checked against regenerated copies of mycielskian12-14).
"""
from __future__ import annotations

import scipy.sparse as sp

__all__ = ["mycielskian", "mycielski_step", "mycielskian_size"]


def mycielski_step(adjacency) -> sp.csr_matrix:
    """The Mycielskian of one graph, given by its (symmetric) adjacency matrix."""
    a = sp.csr_matrix(adjacency)
    n = a.shape[0]
    ones = sp.csr_matrix(([1.0] * n, ([0] * n, range(n))), shape=(1, n))
    return sp.bmat([[a, a, None], [a, None, ones.T], [None, ones, None]], format="csr")


def mycielskian(k: int) -> sp.csr_matrix:
    """Adjacency (float64 ones, symmetric, CSR) of the k-th Mycielski graph, k >= 2."""
    if int(k) != k or k < 2:
        raise ValueError(f"mycielskian(k) needs an integer k >= 2, got {k!r}")
    a = sp.csr_matrix([[0.0, 1.0], [1.0, 0.0]])
    for _ in range(int(k) - 2):
        a = mycielski_step(a)
    a.sort_indices()
    return a


def mycielskian_size(k: int) -> tuple[int, int]:
    """(vertices, non-zeros) of ``mycielskian(k)`` without building it."""
    n, edges = 2, 1
    for _ in range(int(k) - 2):
        n, edges = 2 * n + 1, 3 * edges + n
    return n, 2 * edges
