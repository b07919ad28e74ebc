"""The one verdict rule every section's claims go through.

A statement of a paper is one of four kinds, each judged one way:

- **a stated figure** (a speedup, a size, a share, a number of bits): ours and the paper's are each a range.
  Ours: the median and quartiles of repeated measurements, or the value itself when it is exact (a count, a
  size, a formula, a model). The paper's: its printed mean +- std where it prints one (a ratio of two such
  means: the range of the ratio), its binomial interval for a share of n draws (:func:`share`), the value
  when it is exact. A side without a spread (a figure printed without one, or ours measured once) gets the
  one stated :data:`TOLERANCE`, x/÷ 1.25, once. The figure **holds** when the two ranges meet, else it
  **fails: above** or **fails: below** (ours entirely above or below the paper's) (:func:`figure`);
- **a limit** ("under 3 minutes", "over 40x"): holds when ours' range is on the stated side, fails when it is
  entirely on the other, **inconclusive** when it straddles the limit (:func:`limit`);
- **a direction** ("faster", "less memory"): judged on direction alone, its size beside it: holds when ours'
  quartiles are apart in the stated direction, fails when apart the other way, inconclusive when they
  overlap (inside the noise); exact values (modelled, counted) compare as they are (:func:`direction`);
- **a fact** (a count equal to a formula, a result equal to numpy's): holds or fails.

Where a statement is judged on several rows (every K, every matrix), :func:`combine` gives one status. A
statement judged on several subjects (the authors' program, hepkg's code, another baseline) is one row with
a status per subject; its own status is the first subject's, the experiment as the authors ran it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

HOLDS, FAILS, INCONCLUSIVE = "holds", "fails", "inconclusive"
ABOVE, BELOW = "fails: above", "fails: below"
NOT_MEASURED, NOT_REPRODUCIBLE = "not measured", "not reproducible here"
#: every status a claim can have
VERDICTS = (HOLDS, ABOVE, BELOW, FAILS, INCONCLUSIVE, NOT_MEASURED, NOT_REPRODUCIBLE)
#: x/÷ around a figure that has no spread of its own (printed without one, or ours measured once): the paper's
#: means come from other machines and libraries, so a figure within 25% of it is the same figure
TOLERANCE = 1.25
#: the binomial interval of a share: +- this many standard errors (Wilson score interval)
Z = 2.0

__all__ = ["HOLDS", "FAILS", "ABOVE", "BELOW", "INCONCLUSIVE", "NOT_MEASURED", "NOT_REPRODUCIBLE", "VERDICTS",
           "TOLERANCE", "Value", "measured", "ratio", "exact", "once", "stated", "stated_ratio", "share", "figure",
           "limit", "direction", "combine", "failed", "RULE"]

#: the rule in one paragraph, printed on every results page
RULE = ("A stated figure holds when ours (median and quartiles of the repetitions, or the exact value) meets "
        "the paper's (its printed mean +- std, a share's binomial interval, or the exact value); a side without "
        f"a spread gets x/÷ {TOLERANCE} once; otherwise it fails: above or fails: below. A limit holds when ours "
        "is on its side, inconclusive when ours straddles it. A direction is judged on direction (quartiles "
        "apart: holds or fails; overlapping: inconclusive), its size beside it. A statement judged on several "
        "subjects has one status, the first subject's (the experiment as the authors ran it), and a column per "
        "subject.")


@dataclass(frozen=True)
class Value:
    """A figure with its range; ``spread`` says where the range comes from: 'quartiles', 'std', 'binomial',
    'exact' (the range is the value), 'none' (no spread known) or 'tolerance' (none known: x/÷ :data:`TOLERANCE`
    stands in for it)."""
    value: float
    lo: float
    hi: float
    spread: str

    def __post_init__(self):
        if any(not isinstance(v, (int, float, np.integer, np.floating)) or math.isnan(v)
               for v in (self.value, self.lo, self.hi)):
            raise ValueError(f"a verdict needs a number and its range, got {self.value!r} [{self.lo!r}, {self.hi!r}]")
        if self.spread not in ("quartiles", "std", "binomial", "exact", "none", "tolerance"):
            raise ValueError(f"unknown spread {self.spread!r}")

    def widened(self) -> "Value":
        """The range x/÷ :data:`TOLERANCE` (for a side with no spread of its own)."""
        ends = sorted((self.lo / TOLERANCE, self.lo * TOLERANCE, self.hi / TOLERANCE, self.hi * TOLERANCE))
        return Value(self.value, ends[0], ends[-1], "tolerance")

    def record(self) -> dict:
        return dict(value=_round(self.value), range=[_round(self.lo), _round(self.hi)], spread=self.spread)


def _round(v: float) -> float:
    return float(f"{float(v):.4g}")


def _sample(x) -> np.ndarray:
    a = np.asarray(x, dtype=float).ravel()
    if a.size == 0 or np.isnan(a).any():
        raise ValueError(f"a verdict needs a non-empty sample without NaN, got {a.tolist()}")
    return a


def measured(sample) -> Value:
    """Repeated measurements: median and quartiles (one measurement: no spread)."""
    a = _sample(sample)
    if a.size == 1:
        return once(a[0])
    q1, med, q3 = np.quantile(a, [0.25, 0.5, 0.75])
    return Value(float(med), float(q1), float(q3), "quartiles")


def ratio(num, den) -> Value:
    """num / den of two repeated measurements: medians' ratio, range from the quartiles crossed
    (:func:`hepkg.bench.ratio_range`)."""
    from hepkg.bench.repeat import ratio_range

    n, d = _sample(num), _sample(den)
    if n.size == 1 and d.size == 1:
        return once(n[0] / d[0])
    return Value(*(float(v) for v in ratio_range(n, d)), "quartiles")


def exact(v: float) -> Value:
    """A value without noise: a count, a size, a formula, a model."""
    return Value(float(v), float(v), float(v), "exact")


def once(v: float) -> Value:
    """A noisy quantity measured once: no spread known."""
    return Value(float(v), float(v), float(v), "none")


def stated(v: float, std: float | None = None) -> Value:
    """A figure the paper prints, with its std where it prints one."""
    if std is None:
        return Value(float(v), float(v), float(v), "none")
    return Value(float(v), float(v - std), float(v + std), "std")


def stated_ratio(num: float, num_std: float, den: float, den_std: float) -> Value:
    """The ratio of two printed means +- std: its range from the stds crossed."""
    return Value(num / den, (num - num_std) / (den + den_std), (num + num_std) / (den - den_std), "std")


def share(k: int, n: int) -> Value:
    """k of n draws: the share and its Wilson score interval at :data:`Z` standard errors."""
    if not (isinstance(n, (int, np.integer)) and n > 0 and 0 <= k <= n):
        raise ValueError(f"a share needs 0 <= k <= n, n > 0: got {k}/{n}")
    p, z2 = k / n, Z * Z
    mid = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return Value(p, max(0.0, mid - half), min(1.0, mid + half), "binomial")


def _verdict(status: str, **numbers) -> dict:
    return dict(verdict=status, **numbers)


def figure(ours: Value, paper: Value) -> dict:
    """A stated figure: holds when the ranges meet (a side without spread widened by the tolerance, once),
    else fails: above / fails: below. The record has both sides as judged."""
    if paper.spread == "none":
        paper = paper.widened()
    elif ours.spread == "none":
        ours = ours.widened()
    status = ABOVE if ours.lo > paper.hi else BELOW if ours.hi < paper.lo else HOLDS
    return _verdict(status, ours=ours.record(), paper=paper.record())


def limit(ours: Value, bound: float, side: str = "below") -> dict:
    """A limit ("under", side='below'; "over", side='above'): holds when ours' range is on that side of
    ``bound``, fails when entirely on the other, inconclusive when it straddles the bound."""
    if side not in ("below", "above"):
        raise ValueError(f"side must be 'below' or 'above', got {side!r}")
    good, bad = (ours.hi < bound, ours.lo > bound) if side == "below" else (ours.lo > bound, ours.hi < bound)
    status = HOLDS if good else (ABOVE if side == "below" else BELOW) if bad else INCONCLUSIVE
    return _verdict(status, ours=ours.record(), limit=bound, side=side)


def direction(a, b, expect: str = "less") -> dict:
    """Whether ``a`` is less (``expect='less'``) or greater than ``b``: samples compare by their quartiles
    (overlapping: inconclusive), exact values (a scalar each) as they are; the size b / a beside it."""
    from hepkg.bench.repeat import compare

    if expect not in ("less", "greater"):
        raise ValueError(f"expect must be 'less' or 'greater', got {expect!r}")
    sa, sb = _sample(a), _sample(b)
    seen = compare(sa, sb)
    status = INCONCLUSIVE if seen == INCONCLUSIVE else HOLDS if seen == expect else FAILS
    return _verdict(status, seen=seen, size=ratio(sb, sa).record())


def failed(status) -> bool:
    """Whether a status is a failure (fails, fails: above, fails: below)."""
    return isinstance(status, str) and status.startswith(FAILS)


def combine(statuses) -> str:
    """One status for a statement judged on several rows: holds when every row holds; a failure when any
    fails (fails: above / fails: below when all failures go one way); else inconclusive; rows not measured (or not
    reproducible) left aside, not measured when no row is left."""
    every = [HOLDS if v is True else FAILS if v is False else NOT_MEASURED if v is None else v for v in statuses]
    s = [v for v in every if v not in (NOT_MEASURED, NOT_REPRODUCIBLE)]
    if not s:
        return NOT_REPRODUCIBLE if NOT_REPRODUCIBLE in every else NOT_MEASURED
    bad = {v for v in s if failed(v)}
    if bad:
        return bad.pop() if len(bad) == 1 else FAILS
    return HOLDS if all(v == HOLDS for v in s) else INCONCLUSIVE
