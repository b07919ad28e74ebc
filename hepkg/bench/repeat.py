"""Repeated, interleaved measurements with their spread.

:func:`interleaved` runs each method ``reps`` times in rounds (A B C, A B C, ...) after
``warmup`` rounds that are not kept, so a drift of the machine (load, frequency, cache)
touches every method alike. Each run is timed three ways: ``wall_s`` (perf_counter),
``cpu_s`` (process CPU time, as the HEGMM paper's authors measured) and ``he_s`` (time
inside the HE library, from the backend hooks of every context the run used, see
:mod:`hepkg.he.counting`), with ``overhead = wall_s / he_s``. :func:`spread` gives the
median and the spread (quartiles, min, max); :func:`compare` says whether one method is
faster, slower, or inconclusive: inside the noise, their interquartile ranges overlap.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from hepkg.he.counting import library_seconds

from .timing import Timer

__all__ = ["timed", "interleaved", "spread", "compare", "ratio_range", "LESS", "GREATER", "INCONCLUSIVE"]

LESS, GREATER, INCONCLUSIVE = "less", "greater", "inconclusive"


def timed(fn: Callable[[], object]) -> tuple[dict, object]:
    """Run ``fn()`` once: ({wall_s, cpu_s, he_s, overhead}, its result)."""
    before = sum(library_seconds().values())
    with Timer() as t:
        out = fn()
    he_s = sum(library_seconds().values()) - before
    return dict(wall_s=t.wall, cpu_s=t.cpu, he_s=he_s, overhead=t.wall / he_s if he_s > 0 else math.nan), out


def interleaved(methods: Mapping[str, Callable[[], object]], *, reps: int = 5, warmup: int = 1,
                check: Callable[[str, object], None] | None = None, progress: bool = True):
    """One row per kept run: method, rep, wall_s, cpu_s, he_s, overhead (a pandas table).

    ``check(method, result)`` is called on every run, warm-up included (e.g. compare with numpy).
    """
    import pandas as pd
    from tqdm.auto import tqdm

    if reps < 1 or warmup < 0:
        raise ValueError(f"need reps >= 1 and warmup >= 0, got reps={reps}, warmup={warmup}")
    rows = []
    with tqdm(total=(warmup + reps) * len(methods), desc="interleaved runs", disable=not progress) as bar:
        for round_ in range(warmup + reps):
            for name, fn in methods.items():
                timing, out = timed(fn)
                if check is not None:
                    check(name, out)
                if round_ >= warmup:
                    rows.append(dict(method=name, rep=round_ - warmup, **timing))
                bar.update()
    return pd.DataFrame(rows, columns=["method", "rep", "wall_s", "cpu_s", "he_s", "overhead"])


def spread(runs, value: str = "wall_s", by=("method",)):
    """Median, quartiles, min, max and count of ``value`` per group of ``by``."""
    groups = runs.groupby(list(by), sort=False)[value]
    out = groups.agg(median="median", q1=lambda x: x.quantile(0.25), q3=lambda x: x.quantile(0.75),
                     min="min", max="max", n="count")
    return out.reset_index()


def compare(a, b) -> str:
    """LESS when sample ``a`` is clearly below ``b`` (a's third quartile under b's first),
    GREATER when clearly above, else INCONCLUSIVE (the interquartile ranges overlap)."""
    import numpy as np

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size == 0 or b.size == 0:
        raise ValueError("compare needs two non-empty samples")
    (a1, a3), (b1, b3) = np.quantile(a, [0.25, 0.75]), np.quantile(b, [0.25, 0.75])
    return LESS if a3 < b1 else GREATER if a1 > b3 else INCONCLUSIVE


def ratio_range(num, den) -> tuple[float, float, float]:
    """(median ratio, low, high) of two samples' ratio num / den: medians, and the quartile bounds crossed
    (num's first quartile over den's third, num's third over den's first)."""
    import numpy as np

    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    if num.size == 0 or den.size == 0:
        raise ValueError("ratio_range needs two non-empty samples")
    (n1, nm, n3), (d1, dm, d3) = np.quantile(num, [0.25, 0.5, 0.75]), np.quantile(den, [0.25, 0.5, 0.75])
    return nm / dm, n1 / d3, n3 / d1
