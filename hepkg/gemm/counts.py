"""Operation counts: the paper's formulas (Tables 2-4) and the exact counts of this implementation.

:func:`formula_counts` returns the paper's expressions as printed (Table 4, or Table 3 for
HEGMM-En). :func:`expected_counts` returns closed forms of what hepkg's plans perform,
derived independently of the plans and asserted against measured counts by the tests.
Where they differ, and why:

* one transform with d diagonals costs d plaintext products, d - 1 additions and d
  rotations less one for the zero offset (the paper counts d of each); identity maps cost
  nothing; a single-diagonal shift is one rotation without a mask when the other factor of
  the product is already zero outside the result; diagonals whose offsets agree mod the
  input length merge when the input fills the row (it is then cyclic);
* HEGMM: Table 4's ``W = (floor(m/l) + 2) n`` per iteration ignores Theorem 3.4's own
  ``m = l`` case (two diagonals), so for 64 x 64 x 16 the paper's formula gives 3296
  HE-CMult where 221 are done; epsilon^k in column-major order has
  ``floor((n - 1 + k)/l) + 1`` diagonals, one more than Theorem 3.3 for some k (see
  :mod:`hepkg.gemm.transforms`); omega^k has the distinct values of ``k - q l + c (l - m)``
  (``q <= (m - 1 + k) // l``, c < n);
* E2DM-S: sigma ``2d - 1`` and tau d diagonals (``2d - 1`` when tau(B) cannot be cyclic),
  phi^k two, psi^k one rotation: about 5d HE-CMult (Table 4: 4d) and 5d HE-Add (6d);
  HE-Rot ``3(d - 1)`` plus the BSGS rotations, close to ``3d + 5 sqrt(d)``;
* E2DM-R: as E2DM-S with r = p iterations and ``rotate_and_sum`` over d/r blocks; p must be
  m or n (see :mod:`hepkg.gemm.e2dm`);
* HEGMM-En, 'hegmm-ext' and Huang: see :mod:`hepkg.gemm.hegmm` and :mod:`hepkg.gemm.huang`.

HE-Mult agrees everywhere the paper's shape assumptions hold (tests).

``baseline='authors'``: closed forms of the methods as the authors' code evaluates them
(:mod:`hepkg.gemm.plan` lists the rules): every transform one rotation and one mask per
diagonal (a rotation by a multiple of the row length is none), no BSGS, tau(B) stored once,
the row blocks of E2DM-R and HEGMM-En added one by one (two masked rotations each).

Count keys: ``mul_ct`` (HE-Mult), ``mul_pt`` (HE-CMult), ``rotate`` (HE-Rot), ``add`` (HE-Add).
Rotations are logical rotations (a pow2 key policy composes each from several key switches).
"""
from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache

import numpy as np

from hepkg.linalg.diagonal import best_n1, bsgs_rotations

from .e2dm import e2dm_r_shape, e2dm_r_shape_authors
from .errors import NotApplicable
from .hegmm import hegmm_en_copies, hegmm_en_copies_authors, hegmm_en_orientation
from .huang import huang_copies, huang_rows_authors

METHODS = ("hegmm-en", "hegmm", "hegmm-ext", "hegmm-en-bsgs", "e2dm-s", "e2dm-r", "huang", "uscore")
HEGMM_EN = ("hegmm-en", "hegmm-ext", "hegmm-en-bsgs")  #: the plans of hegmm_en_plan
KEYS = ("mul_ct", "mul_pt", "rotate", "add")


def rotsum_cost(count: int) -> int:
    """Rotations (= additions) of ``rotate_and_sum`` over ``count`` terms."""
    return 0 if count <= 1 else count.bit_length() - 1 + bin(count).count("1") - 1


# ----------------------------------------------------------------------------- the paper
def formula_counts(method: str, m: int, l: int, n: int, preprocess: str = "cloud", table: int = 4) -> dict:
    """The paper's op-count expressions for an m x l times l x n product (floats: log2, sqrt).

    ``table=4``: Table 4 (E = floor(n/l) + 1, W = (floor(m/l) + 2) n; the caption's
    "floor(m/l) + 2 n" is read as Theorem 3.4's bound, as Table 3's "(... + 2 .) N" confirms).
    ``table=3``: HEGMM-En with Table 3's E = floor(max(l, N)/l) + 1 and
    W = (floor(max(l, M)/l) + 2) N (M, N of Algorithm 2). ``preprocess='client'`` drops the
    sigma/tau terms (E2DM: Jiang et al.'s step 1, 3d additions, 3d products, 5 sqrt(d)
    rotations; HEGMM/HEGMM-En: the lines 2-3 and 16-17 terms); the paper prints no such table.
    """
    d, p, s = max(m, l, n), min(m, l, n), max(l, n)
    mu, nu = min(m, l), min(l, n)
    E, W = n // l + 1, (m // l + 2) * n
    client = preprocess == "client"
    if method == "e2dm-s":
        out = dict(add=6 * d, mul_ct=d, mul_pt=4 * d, rotate=3 * d + 5 * math.sqrt(d), depth="1M+2C")
        if client:
            out.update(add=3 * d, mul_pt=d, rotate=3 * d)
    elif method == "e2dm-r":
        lg = math.log2(d / p)
        out = dict(add=3 * d + 2 * p + lg, mul_ct=p, mul_pt=3 * d + 2 * p, rotate=3 * p + 5 * math.sqrt(d) + lg,
                   depth="1M+2C")
        if client:
            out.update(add=2 * p + lg, mul_pt=2 * p, rotate=3 * p + lg)
    elif method == "huang":
        r = l * math.log2(s) + l + math.log2(d / l)
        out = dict(add=r, mul_ct=l, mul_pt=l, rotate=r, depth="1M+1C")
    elif method in ("hegmm", "hegmm-ext"):  # the paper has one HEGMM row
        pre = 0 if client else 2 * (mu + nu)
        x = E * l + W * l + pre
        out = dict(add=x + l, mul_ct=l, mul_pt=x, rotate=x, depth="1M+2C")
    elif method == "hegmm-en":
        if table == 3:
            t = math.ceil(l / p)
            M, N = (t * m, n) if p == m else (m, t * n) if p == n else (m, n)
            E, W = max(l, N) // l + 1, (max(l, M) // l + 2) * N
        pre = 0 if client else E + W + 2 * (mu + nu)
        out = dict(add=5 * p + pre, mul_ct=p, mul_pt=4 * p + pre, rotate=4 * p + pre, depth="1M+2C")
    else:
        raise ValueError(f"Table 4 has no row for {method!r}; it has e2dm-s, e2dm-r, huang, hegmm (also used for "
                         f"hegmm-ext), hegmm-en")
    return out


# ----------------------------------------------------------------------------- this implementation
def _transform(c: Counter, offsets, period: int, din: int, full: bool = True, n1: bool = False) -> str:
    """Add the cost of a 0/1 slot map with these diagonal offsets; return its kind.

    Offsets fold mod ``din`` when the input fills the row (it is then cyclic); ``full``:
    every output slot has a source (a single diagonal is then a bare rotation); ``n1``:
    baby-step giant-step evaluation.
    """
    offs = {o % din for o in offsets} if din == period else set(offsets)
    if len(offs) == 1 and full:
        if next(iter(offs)) == 0:
            return "identity"
        c["rotate"] += 1
        return "window"
    rot = bsgs_rotations(offs, period, best_n1(offs, period)) if n1 else len({o % period for o in offs} - {0})
    c.update(mul_pt=len(offs), rotate=rot, add=len(offs) - 1)
    return "general"


def _masked(c: Counter, offsets, period: int, din: int, full: bool = True) -> None:
    """Add the cost of a map evaluated one masked rotation per diagonal (the authors' way);
    ``full``: every output slot has a source (the zero offset alone is then the identity)."""
    offs = {o % din for o in offsets} if din == period else set(offsets)
    if offs == {0} and full:
        return
    c.update(mul_pt=len(offs), rotate=len({o % period for o in offs} - {0}), add=len(offs) - 1)


def _sigma_offsets(mu: int, l: int, stride: int) -> list[int]:
    """Diagonals of sigma (and tau): ``rho`` and ``rho - l`` (rho < mu, the latter rho >= 1), times stride."""
    return [r * stride for r in range(mu)] + [(r - l) * stride for r in range(1, mu)]


def _product(c: Counter, kinds, dins, dout: int) -> None:
    """A mask when both factors may be non-zero outside the result (windows, identities of longer inputs)."""
    dirty = [k == "window" or (k == "identity" and din > dout) for k, din in zip(kinds, dins)]
    c["mul_pt"] += all(dirty)


def _distinct_per_row(keys: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Number of distinct valid values in each row of a 2-D integer array."""
    span = int(keys.max() - keys.min()) + 1 if keys.size else 1
    rows = np.broadcast_to(np.arange(keys.shape[0])[:, None], keys.shape)
    flat = np.unique(rows[valid] * span + (keys[valid] - keys.min()))
    return np.bincount(flat // span, minlength=keys.shape[0])


def _omega_stats(m: int, l: int, n: int, period: int):
    """Per k < l, for omega^k in column-major order (offsets ``k - q l + c (l - m)``,
    ``q <= (m - 1 + k) // l``, c < n, folded mod l n when B fills the row): the diagonal
    count, the rotation count and the offset when there is a single diagonal."""
    k, q, c = np.ix_(np.arange(l), np.arange((m + l - 2) // l + 1), np.arange(n))
    vals = (k - q * l + c * (l - m)).reshape(l, -1)
    valid = np.broadcast_to(q <= (m - 1 + k) // l, (l, q.size, n)).reshape(l, -1)
    if l * n == period:
        vals = vals % period
    diags = _distinct_per_row(vals, valid)
    rots = _distinct_per_row(vals % period, valid & (vals % period != 0))
    return diags, rots, vals[:, 0]


def _hegmm_parts(m: int, l: int, n: int, period: int) -> dict[str, Counter]:
    """Algorithm 1, column-major."""
    parts = {"prep_a": Counter(), "prep_b": Counter(), "loop": Counter(mul_ct=l, add=l - 1)}
    _transform(parts["prep_a"], _sigma_offsets(min(m, l), l, m), period, m * l)
    _transform(parts["prep_b"], _sigma_offsets(min(n, l), l, 1), period, l * n)
    loop = parts["loop"]
    for k, (d, rot, first) in enumerate(zip(*(a.tolist() for a in _omega_stats(m, l, n, period)))):
        eps = [(k - q * l) * m for q in range((n - 1 + k) // l + 1)]
        kinds = [_transform(loop, eps, period, m * l)]
        if d > 1:
            loop.update(mul_pt=d, rotate=rot, add=d - 1)
            kinds.append("general")
        else:
            loop["rotate"] += rot
            kinds.append("window" if rot else "identity")
        _product(loop, kinds, (m * l, l * n), m * n)
    return parts


def _hegmm_en_parts(m: int, l: int, n: int, period: int, duplicate: bool = True,
                    bsgs: bool = False) -> dict[str, Counter]:
    mo, no = (n, m) if hegmm_en_orientation(m, l, n, period, duplicate) else (m, n)
    t = hegmm_en_copies(mo, l, no, period, duplicate)
    if t == 0:  # Algorithm 1 on the product as given
        return _hegmm_parts(m, l, n, period)
    m, n = mo, no
    M, N, Lp = max(t * m, l), n, max(l, n)
    K = max(min(m, l), l - (t - 1) * m)
    parts = {"prep_a": Counter(), "prep_b": Counter(),
             "loop": Counter(mul_ct=K, add=K - 1 + rotsum_cost(t), rotate=rotsum_cost(t))}
    _transform(parts["prep_a"], _sigma_offsets(min(t * m, l), l, M), period, M * Lp, full=t * m == M, n1=bsgs)
    _transform(parts["prep_b"], _sigma_offsets(min(N, l), l, 1), period, M * N, n1=bsgs)
    loop = parts["loop"]
    cyclic = M * Lp == period and Lp % l == 0  # a wrapped column is read one period on: no second diagonal
    for k in range(1, K):
        redundant = (t > 1 and k >= m) or k + (t - 1) * m >= l
        eps = [k * M] + ([(k - l) * M] if N - 1 + k >= Lp and not cyclic else [])
        kinds = [_transform(loop, eps, period, M * Lp, full=not redundant),
                 _transform(loop, [k, k - l], period, M * N)]
        _product(loop, kinds, (M * Lp, M * N), M * N)
    return parts


@lru_cache(maxsize=None)
def _e2dm_parts(r: int, d: int, period: int) -> dict[str, Counter]:
    D = d * d
    copies = 2 if r > 1 and 2 * D <= period else 1
    fold = D if copies == 2 or D == period else None
    parts = {"prep_a": Counter(), "prep_b": Counter(),
             "loop": Counter(mul_ct=r, add=r - 1 + rotsum_cost(d // r), rotate=rotsum_cost(d // r))}
    _transform(parts["prep_a"], range(-(d - 1), d), period, D, n1=True)
    tau = [c * d for c in range(-(d - 1), d)]
    _transform(parts["prep_b"], {o % fold for o in tau} if fold else tau, period, D, n1=True)
    if copies == 2:
        parts["prep_b"].update(rotate=1, add=1)
    for k in range(1, r):
        _transform(parts["loop"], [k, k - d], period, D)  # phi^k
        _transform(parts["loop"], {(k * d) % fold} if fold else [k * d, k * d - D], period, D)  # psi^k
    return parts


@lru_cache(maxsize=None)
def _e2dm_authors_parts(r: int, d: int, period: int) -> dict[str, Counter]:
    D = d * d
    parts = {"prep_a": Counter(), "prep_b": Counter(), "loop": Counter(mul_ct=r, add=r - 1)}
    _masked(parts["prep_a"], range(-(d - 1), d), period, D)
    _masked(parts["prep_b"], [c * d for c in range(-(d - 1), d)], period, D)
    loop = parts["loop"]
    for k in range(1, r):
        _masked(loop, [k, k - d], period, D)  # phi^k
        _masked(loop, [k * d, k * d - D], period, D)  # psi^k
    for j in range(1, d // r):
        _masked(loop, [j * r * d, j * r * d - D], period, D)
        loop["add"] += 1
    return parts


def _huang_authors_parts(m: int, l: int, n: int, period: int) -> dict[str, Counter]:
    R, W = huang_rows_authors(m, l), max(l, n)
    loop = Counter(mul_ct=l, add=l - 1 + l * rotsum_cost(W), rotate=l * rotsum_cost(W))
    for k in range(1, l):
        _masked(loop, [k, k - R], period, R * n)
    return {"prep_a": Counter(), "prep_b": Counter(), "loop": loop}


def _hegmm_en_authors_parts(m: int, l: int, n: int, period: int, duplicate: bool) -> dict[str, Counter]:
    """As :func:`count_parts`, with ``masks``: the masks of redundant products (client preprocessing only)."""
    transposed, t = hegmm_en_copies_authors(m, l, n, period, duplicate)
    m, n = (n, m) if transposed else (m, n)
    M, N, Lp = max(t * m, l), n, max(l, n)
    K = m if t > 1 else l
    parts = {"prep_a": Counter(), "prep_b": Counter(), "loop": Counter(mul_ct=K, add=K - 1)}
    _masked(parts["prep_a"], _sigma_offsets(min(t * m, l), l, M), period, M * Lp, full=t * m == M)
    _masked(parts["prep_b"], _sigma_offsets(min(N, l), l, 1), period, M * N)
    loop = parts["loop"]
    for k in range(1, K):
        _masked(loop, [k * M] + ([(k - l) * M] if N - 1 + k >= Lp else []), period, M * Lp)
        _masked(loop, [k, k - l], period, M * N)
    parts["masks"] = Counter(mul_pt=K - l % m if t > 1 and l % m else 0)
    if t > 1:
        for j in range(1, t):
            _masked(loop, [j * m, j * m - M], period, M * N)
            loop["add"] += 1
    return parts


def _huang_parts(m: int, l: int, n: int, period: int) -> dict[str, Counter]:
    copies = huang_copies(m, l, n, period)
    rows = copies * l
    loop = Counter(mul_ct=l, add=l - 1 + l * rotsum_cost(n), rotate=l * rotsum_cost(n))
    for k in range(l):
        wraps = max(0, -(-(m + k - rows) // l))  # omega^k reads B's rows wrapped this many times
        _transform(loop, [(k - q * l) * n for q in range(wraps + 1)], period, rows * n)
    return {"prep_a": Counter(), "prep_b": Counter(rotate=rotsum_cost(copies), add=rotsum_cost(copies)),
            "loop": loop}


@lru_cache(maxsize=65536)
def count_parts(method: str, m: int, l: int, n: int, period: int = 4096, order: str = "F",
                d: int | None = None, baseline: str = "hepkg") -> dict[str, Counter]:
    """Expected counts split into ``prep_a``, ``prep_b`` (the cloud's sigma/tau, with E2DM's
    doubling of tau(B); Huang: B's row repetition) and ``loop`` (the rest)."""
    if baseline == "authors":
        if method in ("hegmm-en", "hegmm-ext"):
            return _hegmm_en_authors_parts(m, l, n, period, method == "hegmm-en")
        if method == "e2dm-s":
            d = max(m, l, n) if d is None else d
            return _e2dm_authors_parts(d, d, period)
        if method == "e2dm-r":
            _, r, d = e2dm_r_shape_authors(m, l, n)
            return _e2dm_authors_parts(r, d, period)
        if method == "huang":
            return _huang_authors_parts(m, l, n, period)
        raise ValueError(f"the authors' code has no {method!r}")
    if method == "hegmm":
        return _hegmm_parts(m, l, n, period) if order == "F" else _hegmm_parts(n, l, m, period)
    if method in HEGMM_EN:
        return _hegmm_en_parts(m, l, n, period, method != "hegmm-ext", method == "hegmm-en-bsgs")
    if method == "e2dm-s":
        d = max(m, l, n) if d is None else d
        return _e2dm_parts(d, d, period)
    if method == "e2dm-r":
        _, r, d = e2dm_r_shape(m, l, n, period)
        return _e2dm_parts(r, d, period)
    if method == "huang":
        return _huang_parts(m, l, n, period)
    raise ValueError(f"unknown method {method!r}; one of {METHODS}")


def expected_counts(method: str, m: int, l: int, n: int, preprocess: str = "cloud", period: int = 4096,
                    order: str = "F", block: int | None = None, baseline: str = "hepkg") -> dict:
    """Exact op counts of hepkg's plan for an m x l x n product on the cloud (``KEYS``).

    ``block``: uSCORE's square block size (E2DM-S on every b x b block; required for uscore).
    ``baseline``: 'hepkg' or 'authors' (the methods as the authors' code evaluates them).
    """
    if method == "uscore":
        if not block:
            raise ValueError("uscore counts need the block size `block`")
        qm, ql, qn = (math.ceil(x / block) for x in (m, l, n))
        parts = count_parts("e2dm-s", block, block, block, period, d=block, baseline=baseline)
        total = Counter()
        for key, times in (("prep_a", qm * ql), ("prep_b", ql * qn), ("loop", qm * ql * qn)):
            if preprocess == "cloud" or key == "loop":
                total.update({k: v * times for k, v in parts[key].items()})
        total["add"] += qm * qn * (ql - 1)
    else:
        parts = count_parts(method, m, l, n, period, order, baseline=baseline)
        total = Counter(parts["loop"])
        if preprocess == "client":
            total.update(parts.get("masks", {}))
        if preprocess == "cloud" or method == "huang":
            total.update(parts["prep_a"])
            total.update(parts["prep_b"])
    return {k: int(total.get(k, 0)) for k in KEYS}


def fits(method: str, m: int, l: int, n: int, period: int, baseline: str = "hepkg") -> bool:
    """Whether the method's layouts for this shape fit one ciphertext row (uSCORE always blocks)."""
    if baseline == "authors" and method in ("hegmm-en", "hegmm-ext"):
        transposed, t = hegmm_en_copies_authors(m, l, n, period, method == "hegmm-en")
        mo = n if transposed else m
        return max(t * mo, l) * max(l, n) <= period
    if baseline == "authors" and method == "e2dm-r":
        return m <= l and m * math.ceil(max(l, n) / m) <= min(64, math.isqrt(period))
    if baseline == "authors" and method == "huang":
        return huang_rows_authors(m, l) * max(l, n) <= period
    if method == "hegmm":
        return max(m * l, l * n, m * n) <= period
    if method in HEGMM_EN:
        o = (n, l, m) if hegmm_en_orientation(m, l, n, period, method != "hegmm-ext") else (m, l, n)
        return hegmm_en_copies(*o, period, method != "hegmm-ext") > 0 or fits("hegmm", m, l, n, period)
    if method == "e2dm-s":
        return max(m, l, n) ** 2 <= period
    if method == "e2dm-r":
        try:
            e2dm_r_shape(m, l, n, period)
        except NotApplicable:
            return False
        return True
    if method == "huang":
        return m * n <= period and l * n <= period
    if method == "uscore":
        return True
    raise ValueError(f"unknown method {method!r}; one of {METHODS}")
