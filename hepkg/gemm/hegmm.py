"""HEGMM (Algorithm 1) and HEGMM-En (Algorithm 2) as plans.

HEGMM: ``C = sum_{k<l} epsilon^k(sigma(A)) * omega^k(tau(B))`` with A m x l, B l x n and C
m x n each flattened in one order (column-major by default, as Table 2 assumes).

HEGMM-En with ``p = min(m, l, n)``: if p = m, A is stacked ``t = ceil(l/m)`` times vertically
and matrices are flattened column-major; if p = n, B is repeated t times horizontally and
matrices are flattened row-major, which is the p = m case of ``C^T = B^T A^T`` (that is how
it is built here); if p = l nothing is duplicated. The operands are kept in the extended
layouts of lines 16-17, ``sA = epsilon^0_{M x max(l,N)}(sigma(Abar))`` and
``tB = omega^0_{max(l,M) x N}(tau(Bbar))`` (M = t m, N = n), so every epsilon^k and
omega^k needs at most two diagonals. Iteration k yields the t partial products
``p = k + h m`` (block h of rows); the copies with ``k + h m >= l`` are redundant
(Theorem 3.5) and are zeroed by the epsilon^k masks at no extra cost; the t blocks are
added at the end with ``rotate_and_sum`` (``floor(log2 t) + popcount(t) - 1`` rotations).

'hegmm-ext' is Algorithm 1 on these extended layouts without duplication (t = 1, l
iterations of at most 2 + 2 diagonals), in the orientation (A B or B^T A^T) with fewer wrapped
epsilon^k. The literal Algorithm 1 ('hegmm', Table 2's
costs) is far slower when m < l or n < l (16 x 64 x 64: 5340 HE-CMult against 221);
the paper's measured HEGMM times (Table 7: 16-64-64 about E2DM-S, 64-16-64 about HEGMM-En)
match 'hegmm-ext', so both are provided.

'hegmm-en-bsgs' is HEGMM-En with sigma and tau evaluated baby-step giant-step, as the E2DM
baselines are here (the paper evaluates HEGMM-En's transforms one rotation per diagonal):
the same products with far fewer key switches (16 x 64 x 64: 171 against 564).

When ``t m x max(l, n)`` slots do not fit one row, fewer copies t' are used: the layouts
keep ``M = max(t' m, l)`` rows (zero rows pad up to l, so omega^k still needs two
diagonals) and the loop runs ``l - (t' - 1) m`` iterations, block h < t' - 1 contributing
its first m partial products (the paper's P2 blocking needs this: 36 x 64 x 64 with t = 2
would take 72 x 64 slots). If not even ``l x max(l, n)`` fits, Algorithm 1 is used.

Differences from the paper's accounting (Table 3), all measured by the tests:

* the client encrypts A already stacked and extended (an encoding, like E2DM's padding),
  so sigma on the cloud acts on the t m x max(l, N) matrix: ``2 min(t m, l) - 1`` diagonals
  (``2l - 1`` with full duplication), not ``2 min(m, l) - 1``, and epsilon^0 is folded into
  it (depth 1C, as the paper's depth column requires);
* iteration 0 needs no transform (line 18); iterations k >= 1 need two diagonals each for
  omega^k and one or two for epsilon^k (one, without a mask, when no wrap and no redundant
  block occurs); a transform with d diagonals costs d - 1 additions, not d;
* extracting the t partial products costs ``rotate_and_sum`` rotations, which Table 3
  leaves out.

``authors=True`` evaluates HEGMM-En (and 'hegmm-ext') as the authors' code does: the copies
are all ``ceil(l/p)`` or none (then l iterations, no transposition); epsilon^k is the two
masked rotations by k and k - l columns (one when no column wraps), every rotated copy is
masked, the redundant
partial products are zeroed by a plaintext product on the unrelinearized product (by
epsilon^k's masks when sigma/tau run on the cloud, which has no public code: the product
mask would then exceed the parameter set's depth), the
products are relinearized once, and the t row blocks are added one by one, two masked
rotations each. The authors also mask both operands of iteration 0 (two plaintext
products per matrix product); hepkg leaves them out.
"""
from __future__ import annotations

import math

import numpy as np

from .layout import Layout, SlotMap, every, gather, wrap
from .plan import Operand, Plan


def hegmm_plan(m: int, l: int, n: int, period: int, preprocess: str = "cloud", order: str = "F") -> Plan:
    """Algorithm 1: l iterations of epsilon^k, omega^k, one product each."""
    LA, LB, LC = Layout(m, l, order), Layout(l, n, order), Layout(m, n, order)
    for lay, what in ((LA, "HEGMM's A"), (LB, "HEGMM's B"), (LC, "HEGMM's C")):
        lay.check(period, what)
    sig = SlotMap.between(LA, LA, lambda i, j: (i, (i + j) % l, every(i)), period)
    tau = SlotMap.between(LB, LB, lambda i, j: ((i + j) % l, j, every(i)), period)
    ops = [Operand("A", "A", LA, gather(LA, (m, l), lambda i, j: (i, j, every(i))), sig),
           Operand("B", "B", LB, gather(LB, (l, n), lambda i, j: (i, j, every(i))), tau)]
    steps = []
    for k in range(l):
        steps += [("map", "X", "A", SlotMap.between(LC, LA, lambda i, j: (i, (j + k) % l, every(i)), period)),
                  ("map", "Y", "B", SlotMap.between(LC, LB, lambda i, j: ((i + k) % l, j, every(i)), period)),
                  ("mul", "P", "X", "Y", LC.size), ("acc", "C", "P")]
    return Plan("hegmm", (m, l, n), period, preprocess, ops, steps, LC, (m, n), info={"order": order})


def hegmm_en_orientation(m: int, l: int, n: int, period: int = 0, duplicate: bool = True) -> bool:
    """True when the plan computes ``C^T = B^T A^T``: HEGMM-En when it duplicates B (p = n < m);
    'hegmm-ext' (``duplicate=False``, one copy) when that orientation needs fewer two-diagonal epsilon^k
    (a column of the extended A wraps when ``N - 1 + k >= max(l, N)``, unless A fills the row cyclically)."""
    if duplicate:
        p = min(m, l, n)
        return p != m and p == n

    def wraps(mo: int, no: int) -> float:
        if not hegmm_en_copies(mo, l, no, period, False):
            return math.inf
        M, Lp = max(mo, l), max(l, no)
        return 0 if M * Lp == period and Lp % l == 0 else sum(no - 1 + k >= Lp for k in range(1, l))
    return wraps(n, m) < wraps(m, n)


def hegmm_en_copies(m: int, l: int, n: int, period: int, duplicate: bool = True) -> int:
    """Copies t' of A (oriented product) that fit: ``ceil(l/m)`` if possible, else fewer; 0 if none.

    The layouts hold ``M = max(t' m, l)`` rows (rows past ``t' m`` are zero padding) and
    ``max(l, n)`` columns. ``duplicate=False``: one copy at most ('hegmm-ext').
    """
    t = math.ceil(l / m) if duplicate else 1
    return next((c for c in range(t, 0, -1) if max(c * m, l) * max(l, n) <= period), 0)


def hegmm_en_copies_authors(m: int, l: int, n: int, period: int, duplicate: bool = True) -> tuple[bool, int]:
    """(transposed, copies) of the authors' HEGMM-En: A duplicated when m is the smallest dimension
    (B, transposed, when n is) and ``max(m, l, n) p ceil(l/p)`` slots fit a row; else neither."""
    p = min(m, l, n)
    if duplicate and p in (m, n) and max(m, l, n) * p * math.ceil(l / p) <= period:
        return p != m, math.ceil(l / p)
    return False, 1


def _hegmm_en_authors(m: int, l: int, n: int, period: int, preprocess: str, duplicate: bool) -> Plan:
    transposed, t = hegmm_en_copies_authors(m, l, n, period, duplicate)
    mo, lo, no = (n, l, m) if transposed else (m, l, n)
    M, N, Lp = max(t * mo, lo), no, max(lo, no)
    K = mo if t > 1 else lo
    LA, LB = Layout(M, Lp, "F"), Layout(M, N, "F")
    for lay, what in ((LA, "HEGMM-En's A (the authors' layout)"), (LB, "HEGMM-En's B (the authors' layout)")):
        lay.check(period, what)
    gA = gather(LA, (mo, lo), lambda i, c: (i % mo, c % lo, i < t * mo))
    gB = gather(LB, (lo, no), lambda r, c: (r % lo, c, every(r)))
    sig = SlotMap.between(LA, LA, lambda i, c: (i, wrap(c + i % lo, lo, Lp), i < t * mo), period)
    tau = SlotMap.between(LB, LB, lambda r, c: (wrap(r + c % lo, lo, M), c, every(r)), period)
    ops = [Operand("A", "A", LA, gA, sig), Operand("B", "B", LB, gB, tau)]
    acc = "S" if t > 1 else "C"
    # block t-1 of iterations k >= l mod p carries the redundant product k + (t-1) p >= l: the
    # authors zero it with a mask on the product; with sigma/tau on the cloud that would exceed
    # depth 4, so epsilon^k's masks zero it instead (at no cost)
    spare = np.where(np.arange(LB.size) % M < (t - 1) * mo, 1, 0)
    in_eps = preprocess == "cloud"

    def keep(i, k):
        return (i < (t - 1) * mo) | (k < lo % mo) | (lo % mo == 0) if in_eps and t > 1 else every(i)

    steps = []
    for k in range(K):
        eps = SlotMap.between(LB, LA, lambda i, c: (i, wrap(c + k, lo, Lp), keep(i, k)), period)
        omg = SlotMap.between(LB, LB, lambda r, c: (wrap(r + k, lo, M), c, every(r)), period)
        steps += [("map", "X", "A", eps), ("map", "Y", "B", omg), ("mul", "P", "X", "Y", LB.size)]
        if t > 1 and lo % mo and k >= lo % mo and not in_eps:
            steps.append(("mask", "P", "P", spare))
        steps.append(("acc", acc, "P"))
    if t > 1:
        for j in range(1, t):  # S is relinearized by the first map, before it becomes C
            shift = SlotMap.between(LB, LB, lambda r, c: ((r + j * mo) % M, c, every(r)), period)
            steps += [("map", "T", "S", shift)] + [("acc", "C", "S")] * (j == 1) + [("acc", "C", "T")]
    method = "hegmm-en" if duplicate else "hegmm-ext"
    return Plan(method, (m, l, n), period, preprocess, ops, steps, LB, (mo, no), transposed,
                info={"t": t, "M": M, "N": N, "order": "C" if transposed else "F"}, baseline="authors")


def hegmm_en_plan(m: int, l: int, n: int, period: int, preprocess: str = "cloud", duplicate: bool = True,
                  bsgs: bool = False, authors: bool = False) -> Plan:
    """Algorithm 2: min(m, l, n) iterations on duplicated operands (see the module docstring).

    Falls back to :func:`hegmm_plan` (as the paper suggests) when no layout with extended
    rows and columns fits one ciphertext row. ``duplicate=False`` gives 'hegmm-ext': the
    extended layouts without duplication, l iterations. ``bsgs``: sigma and tau evaluated
    baby-step giant-step ('hegmm-en-bsgs').
    """
    if authors:
        return _hegmm_en_authors(m, l, n, period, preprocess, duplicate)
    method = ("hegmm-en-bsgs" if bsgs else "hegmm-en") if duplicate else "hegmm-ext"
    transposed = hegmm_en_orientation(m, l, n, period, duplicate)
    mo, lo, no = (n, l, m) if transposed else (m, l, n)
    t = hegmm_en_copies(mo, lo, no, period, duplicate)
    if t == 0:
        plan = hegmm_plan(m, l, n, period, preprocess)
        plan.method, plan.info["fallback"] = method, "hegmm"
        return plan
    M, N, Lp = max(t * mo, lo), no, max(lo, no)
    K = max(min(mo, lo), lo - (t - 1) * mo)
    LA, LB = Layout(M, Lp, "F"), Layout(M, N, "F")
    # A stacked t times (then zero rows up to M) with its columns extended cyclically to Lp;
    # B's rows extended cyclically to M.
    gA = gather(LA, (mo, lo), lambda i, c: (i % mo, c % lo, i < t * mo))
    gB = gather(LB, (lo, no), lambda r, c: (r % lo, c, every(r)))
    sig = SlotMap.between(LA, LA, lambda i, c: (i, wrap(c + i % lo, lo, Lp), i < t * mo), period)
    tau = SlotMap.between(LB, LB, lambda r, c: (wrap(r + c % lo, lo, M), c, every(r)), period)
    if bsgs:
        sig, tau = sig.bsgs(period), tau.bsgs(period)
    ops = [Operand("A", "A", LA, gA, sig), Operand("B", "B", LB, gB, tau)]

    def needed(i, k):
        """Row block h of iteration k carries partial product k + h m; keep each product once."""
        h = i // mo
        return (h >= t) | ((k + h * mo < lo) & ((h == t - 1) | (k < mo)))

    # when A's extended columns fill the row (M Lp slots = period) and repeat with period l (l | Lp),
    # column c + k >= Lp may be read as column (c + k) mod Lp: the same entries, one rotation, no mask
    cyclic = LA.size == period and Lp % lo == 0

    steps = []
    for k in range(K):
        eps = SlotMap.between(LB, LA, lambda i, c: (i, (c + k) % Lp if cyclic else wrap(c + k, lo, Lp),
                                                    needed(i, k)), period)
        omg = SlotMap.between(LB, LB, lambda r, c: (wrap(r + k, lo, M), c, every(r)), period)
        steps += [("map", "X", "A", eps), ("map", "Y", "B", omg), ("mul", "P", "X", "Y", LB.size),
                  ("acc", "C", "P")]
    if t > 1:
        steps.append(("rotsum", "C", "C", t, mo))
    return Plan(method, (m, l, n), period, preprocess, ops, steps, LB, (mo, no), transposed,
                info={"t": t, "M": M, "N": N, "order": "C" if transposed else "F"})
