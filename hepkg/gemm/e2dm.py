"""E2DM (Jiang, Kim, Lauter, Song, CCS 2018) as plans: E2DM-S (square) and E2DM-R (rectangular).

E2DM-S pads both operands to d x d, ``d = max(m, l, n)``, row-major, and computes
``sum_{k<d} phi^k(sigma(A)) * psi^k(tau(B))`` (phi: column shift, two diagonals; psi: row
shift). sigma and tau are evaluated baby-step giant-step. psi^k is a cyclic shift of the
d^2-vector by k d: one rotation when the vector repeats cyclically, which holds when
``d^2`` is the row length or when tau(B) is stored twice (``2 d^2 <= slots``); otherwise
(``2 d^2 > slots > d^2``) psi^k needs two masked rotations and tau ``2d - 1`` diagonals instead
of d. tau(B) is doubled with one rotation and one addition.

E2DM-R multiplies ``A_{r x d} B_{d x d}`` with ``d mod r = 0`` in r iterations on A stacked
``d/r`` times, then adds the ``d/r`` row blocks with ``rotate_and_sum`` (about ``log(d/r)``
rotations). For a general m x l x n product ``r = p = min(m, l, n)`` must be m (or n, via
``C^T = B^T A^T``); d is ``max(m, l, n)`` rounded up to a multiple of r. It does not apply
(:class:`NotApplicable`) when l is strictly the smallest dimension or when ``d^2`` exceeds
one ciphertext row; the paper's Tables 7, 8 and 10 mark such shapes N/A.
"""
from __future__ import annotations

import math

from .errors import NotApplicable, ShapeTooLarge
from .layout import Layout, SlotMap, every, gather
from .plan import Operand, Plan


def e2dm_r_shape(m: int, l: int, n: int, period: int) -> tuple[bool, int, int]:
    """(transposed, r, d) of E2DM-R for an m x l x n product, or :class:`NotApplicable`."""
    p = min(m, l, n)
    if p not in (m, n):
        raise NotApplicable(f"E2DM-R needs the row count of A (or the column count of B) to be the smallest "
                            f"dimension; {m} x {l} x {n} has the inner dimension l={l} strictly smallest")
    transposed = p != m
    d = p * math.ceil(max(m, l, n) / p)
    if d * d > period:
        raise NotApplicable(f"E2DM-R pads {m} x {l} x {n} to r={p}, d={d} (a multiple of r): d^2 = {d * d} "
                            f"slots exceed the {period} slots of one ciphertext row")
    return transposed, p, d


def _e2dm(method: str, shape, mo, lo, no, r: int, d: int, period: int, preprocess: str, transposed: bool) -> Plan:
    D = d * d
    L = Layout(d, d, "C")
    L.check(period, f"{method.upper()}'s {d} x {d} matrices")
    copies = 2 if r > 1 and 2 * D <= period else 1
    LB = Layout(d, d, "C", copies)
    gA = gather(L, (mo, lo), lambda i, j: (i % r, j, (i % r < mo) & (j < lo)))
    gB = gather(L, (lo, no), lambda i, j: (i, j, (i < lo) & (j < no)))
    sig = SlotMap.between(L, L, lambda i, j: (i, (i + j) % d, every(i)), period).bsgs(period)
    tau = SlotMap.between(L, LB, lambda i, j: ((i + j) % d, j, every(i)), period).bsgs(period)
    ops = [Operand("A", "A", L, gA, sig), Operand("B", "B", LB, gB, tau, copies)]
    steps = []
    for k in range(r):
        steps += [("map", "X", "A", SlotMap.between(L, L, lambda i, j: (i, (j + k) % d, every(i)), period)),
                  ("map", "Y", "B", SlotMap.between(L, LB, lambda i, j: ((i + k) % d, j, every(i)), period)),
                  ("mul", "P", "X", "Y", D), ("acc", "C", "P")]
    if d > r:
        steps.append(("rotsum", "C", "C", d // r, r * d))
    return Plan(method, shape, period, preprocess, ops, steps, L, (mo, no), transposed,
                info={"d": d, "r": r, "copies": copies})


def e2dm_s_plan(m: int, l: int, n: int, period: int, preprocess: str = "cloud", d: int | None = None) -> Plan:
    """E2DM-S on the operands padded to d x d (``d = max(m, l, n)`` unless given, e.g. by uSCORE)."""
    d = max(m, l, n) if d is None else d
    if d < max(m, l, n):
        raise ValueError(f"E2DM-S pad size d={d} is smaller than the largest dimension {max(m, l, n)}")
    if d * d > period:
        raise ShapeTooLarge(f"E2DM-S pads {m} x {l} x {n} to {d} x {d} = {d * d} slots, more than the {period} "
                            f"slots of one ciphertext row; use blocking='auto' or an explicit blocking")
    return _e2dm("e2dm-s", (m, l, n), m, l, n, d, d, period, preprocess, False)


def e2dm_r_plan(m: int, l: int, n: int, period: int, preprocess: str = "cloud") -> Plan:
    """E2DM-R (raises :class:`NotApplicable` for shapes it cannot take)."""
    transposed, r, d = e2dm_r_shape(m, l, n, period)
    mo, lo, no = (n, l, m) if transposed else (m, l, n)
    return _e2dm("e2dm-r", (m, l, n), mo, lo, no, r, d, period, preprocess, transposed)
