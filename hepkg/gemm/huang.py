"""Huang and Zong 2022, as the HEGMM paper characterizes it (Sec. 2.2, Table 4), as a plan.

``C = sum_{k<l} X_k * omega^k(B)`` where ``X_k[i, j] = sigma(A)[i, k]``: column k of sigma(A),
encrypted by the client as its own ciphertext (one value at the start of each row of an
m x n row-major layout), is replicated across the n columns on the cloud by a rotate-and-add
total sum (``floor(log2 n) + popcount(n) - 1`` rotations). B is encrypted once (l x n,
row-major); when m > l its rows are first repeated cyclically to ``ceil(m/l) l`` rows
(``rotate_and_sum``, the ``log(d/l)`` term; fewer copies when they do not fit one row).
The row-shifted copy omega^k(B) is then at most two masked rotations (one unmasked rotation
when no row wraps: the replicated column is already zero outside C, so no mask is needed;
more when the copies did not fit). Depth 1M + 1C.

Differences from Table 4 (measured by the tests): the column replication costs
``log n``-ish rotations, not ``log s`` with ``s = max(l, n)``; omega^k costs one or two
rotations and zero or two plaintext products rather than exactly one of each; sigma is the
client's (each column of sigma(A) is what it encrypts), so both preprocessing settings
coincide.

``authors=True`` lays the product out as the authors' implementation (EchizenG/HEGMM) does:
column-major ``R x max(l, n)`` with R = l when m < l, else the least multiple of l from m
(B's rows repeated R/l times by the client); column k of sigma(A) is replicated over the
``max(l, n)`` columns (the same logarithmic total sum), omega^k(B) is two masked rotations
for k >= 1, and the products are relinearized once, at the end.
"""
from __future__ import annotations

import math

from .layout import Layout, SlotMap, every, gather, wrap
from .plan import Operand, Plan


def huang_copies(m: int, l: int, n: int, period: int) -> int:
    """Copies of B's rows kept on the cloud: ``ceil(m/l)`` when they fit, else as many as fit."""
    return max(1, min(math.ceil(m / l), period // (l * n)))


def huang_rows_authors(m: int, l: int) -> int:
    """R of the authors' layout: l when m < l, else the least multiple of l that is at least m."""
    return l if m < l else l * math.ceil(m / l)


def _huang_authors(m: int, l: int, n: int, period: int, preprocess: str) -> Plan:
    R, W = huang_rows_authors(m, l), max(l, n)
    LX, LB = Layout(R, W, "F"), Layout(R, n, "F")
    LX.check(period, "Huang et al.'s replicated column (the authors' layout)")
    ops = [Operand(f"A{k}", "A", LX, gather(LX, (m, l), lambda i, j: (i, (i + k) % l, (j == 0) & (i < m))))
           for k in range(l)]
    ops.append(Operand("B", "B", LB, gather(LB, (l, n), lambda i, j: (i % l, j, every(i)))))
    steps = []
    for k in range(l):
        steps += [("rotsum", "X", f"A{k}", W, -R),
                  ("map", "Y", "B", SlotMap.between(LB, LB, lambda i, j: ((i + k) % R, j, every(i)), period)),
                  ("mul", "P", "X", "Y", LB.size), ("acc", "C", "P")]
    return Plan("huang", (m, l, n), period, preprocess, ops, steps, LB, (m, n), info={"copies": R // l},
                baseline="authors")


def huang_plan(m: int, l: int, n: int, period: int, preprocess: str = "cloud", authors: bool = False) -> Plan:
    if authors:
        return _huang_authors(m, l, n, period, preprocess)
    LC, LB = Layout(m, n, "C"), Layout(l, n, "C")
    LC.check(period, "Huang et al.'s C")
    LB.check(period, "Huang et al.'s B")
    copies = huang_copies(m, l, n, period)
    LR = Layout(copies * l, n, "C")
    ops = [Operand(f"A{k}", "A", LC, gather(LC, (m, l), lambda i, j: (i, (i + k) % l, j == 0))) for k in range(l)]
    ops.append(Operand("B", "B", LB, gather(LB, (l, n), lambda i, j: (i, j, every(i)))))
    steps = [("rotsum", "B", "B", copies, -l * n)] if copies > 1 else []
    for k in range(l):
        steps += [("rotsum", "X", f"A{k}", n, -1),
                  ("map", "Y", "B", SlotMap.between(LC, LR, lambda i, j: (wrap(i + k, l, LR.rows), j,
                                                                          every(i)), period)),
                  ("mul", "P", "X", "Y", LC.size), ("acc", "C", "P")]
    return Plan("huang", (m, l, n), period, preprocess, ops, steps, LC, (m, n), info={"copies": copies})
