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

``authors=True`` builds them as the authors' code (EchizenG/HEGMM) evaluates them: sigma and
tau one rotation and one mask per diagonal (no BSGS), tau(B) stored once so that psi^k is
two masked rotations (one when ``d^2`` fills the row), and E2DM-R only where their script
runs it, ``m <= l`` and ``d = m ceil(max(l, n)/m) <= 64``, with r = m (no transposition),
its d/r row blocks added one by one, two masked rotations each.
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


def e2dm_r_shape_authors(m: int, l: int, n: int) -> tuple[bool, int, int]:
    """(False, r, d) of the authors' E2DM-R (r = m, d = m ceil(max(l, n)/m)), or :class:`NotApplicable`."""
    d = m * math.ceil(max(l, n) / m)
    if m > l or d > 64:
        raise NotApplicable(f"the authors' script runs E2DM-R only when m <= l and d = m ceil(max(l, n)/m) <= 64; "
                            f"{m} x {l} x {n} has d = {d}")
    return False, m, d


def _row_shift(L: Layout, s: int, period: int) -> SlotMap:
    """Rows of a row-major d x d layout shifted up by s, cyclically (two masked rotations)."""
    return SlotMap.between(L, L, lambda i, j: ((i + s) % L.rows, j, every(i)), period)


def _e2dm(method: str, shape, mo, lo, no, r: int, d: int, period: int, preprocess: str, transposed: bool,
          authors: bool = False) -> Plan:
    D = d * d
    L = Layout(d, d, "C")
    L.check(period, f"{method.upper()}'s {d} x {d} matrices")
    copies = 2 if r > 1 and 2 * D <= period and not authors else 1
    LB = Layout(d, d, "C", copies)
    gA = gather(L, (mo, lo), lambda i, j: (i % r, j, (i % r < mo) & (j < lo)))
    gB = gather(L, (lo, no), lambda i, j: (i, j, (i < lo) & (j < no)))
    sig = SlotMap.between(L, L, lambda i, j: (i, (i + j) % d, every(i)), period)
    tau = SlotMap.between(L, LB, lambda i, j: ((i + j) % d, j, every(i)), period)
    if not authors:
        sig, tau = sig.bsgs(period), tau.bsgs(period)
    ops = [Operand("A", "A", L, gA, sig), Operand("B", "B", LB, gB, tau, copies)]
    acc = "S" if authors and d > r else "C"
    steps = []
    for k in range(r):
        steps += [("map", "X", "A", SlotMap.between(L, L, lambda i, j: (i, (j + k) % d, every(i)), period)),
                  ("map", "Y", "B", SlotMap.between(L, LB, lambda i, j: ((i + k) % d, j, every(i)), period)),
                  ("mul", "P", "X", "Y", D), ("acc", acc, "P")]
    if d > r and authors:
        for j in range(1, d // r):  # S is relinearized by the first map, before it becomes C
            steps += [("map", "T", "S", _row_shift(L, j * r, period))] + [("acc", "C", "S")] * (j == 1)
            steps.append(("acc", "C", "T"))
    elif d > r:
        steps.append(("rotsum", "C", "C", d // r, r * d))
    return Plan(method, shape, period, preprocess, ops, steps, L, (mo, no), transposed,
                info={"d": d, "r": r, "copies": copies}, baseline="authors" if authors else "hepkg")


def e2dm_s_plan(m: int, l: int, n: int, period: int, preprocess: str = "cloud", d: int | None = None,
                authors: bool = False) -> Plan:
    """E2DM-S on the operands padded to d x d (``d = max(m, l, n)`` unless given, e.g. by uSCORE)."""
    d = max(m, l, n) if d is None else d
    if d < max(m, l, n):
        raise ValueError(f"E2DM-S pad size d={d} is smaller than the largest dimension {max(m, l, n)}")
    if d * d > period:
        raise ShapeTooLarge(f"E2DM-S pads {m} x {l} x {n} to {d} x {d} = {d * d} slots, more than the {period} "
                            f"slots of one ciphertext row; use blocking='auto' or an explicit blocking")
    return _e2dm("e2dm-s", (m, l, n), m, l, n, d, d, period, preprocess, False, authors)


def e2dm_r_plan(m: int, l: int, n: int, period: int, preprocess: str = "cloud", authors: bool = False) -> Plan:
    """E2DM-R (raises :class:`NotApplicable` for shapes it cannot take)."""
    transposed, r, d = e2dm_r_shape_authors(m, l, n) if authors else e2dm_r_shape(m, l, n, period)
    mo, lo, no = (n, l, m) if transposed else (m, l, n)
    return _e2dm("e2dm-r", (m, l, n), mo, lo, no, r, d, period, preprocess, transposed, authors)
