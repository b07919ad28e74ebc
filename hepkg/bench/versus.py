"""hepkg beside the papers' authors' public code: same machine, library, parameters and inputs.

``python -m hepkg.bench.versus [spmv ...] [--reps 7] [--authors DIR]`` (``make bench``) runs, per
section, the authors' code from a checkout (``--authors`` or the section's environment variable,
e.g. ``HEPKG_AUTHORS_CSSC``) and hepkg's implementation of the same method in alternating rounds
(authors, hepkg, authors, ...) after a warm-up round, checks both results against numpy, and writes
``artifacts/bench/versus_<section>.csv`` (one row per run), ``versus_<section>_summary.csv`` (per case
and quantity: both medians and quartiles, the speedup = authors / hepkg median, the quartiles of the
per-round speedups, the verdict of :func:`hepkg.bench.compare`) and a figure of the speedups. Without
a checkout it says how to get one and measures hepkg's side alone. Nothing of the authors' code is
copied into hepkg: :func:`import_script` imports it from the checkout.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import pathlib
import sys
import types

from .repeat import compare

__all__ = ["find_checkout", "import_script", "alternate", "summarize", "plot", "main", "SECTIONS"]

#: section -> the module holding its ``versus_cases`` and ``versus_run`` (see :func:`measure`).
SECTIONS = {"spmv": "hepkg.spmv.authors", "gemm": "hepkg.gemm.authors"}


class MissingCheckout(FileNotFoundError):
    """No checkout of the authors' code was given or found."""


def find_checkout(path, env: str, repo: str, files=()) -> pathlib.Path:
    """The authors' checkout: ``path``, else ``$env``; it must hold ``files``."""
    where = path or os.environ.get(env)
    if not where:
        raise MissingCheckout(f"no checkout of {repo}: git clone https://github.com/{repo} and pass its path "
                              f"(--authors DIR, or the environment variable {env})")
    where = pathlib.Path(where).expanduser()
    missing = [f for f in files if not (where / f).is_file()]
    if missing:
        raise MissingCheckout(f"{where} is not a checkout of {repo}: {missing} not found")
    return where


def import_script(checkout, module: str, files=(), stubs=()):
    """``module`` imported from the directory ``checkout`` (with the sibling modules it imports); a module in
    ``stubs`` that is not installed is replaced by an empty one while importing (the authors' downloaders).
    ``sys.path`` and ``sys.modules`` are restored afterwards; the returned module keeps its own imports."""
    checkout = pathlib.Path(checkout)
    for f in files:
        if not (checkout / f).is_file():
            raise MissingCheckout(f"{checkout / f} not found")
    siblings = {p.stem for p in checkout.glob("*.py")}
    saved = {name: sys.modules.pop(name) for name in siblings & set(sys.modules)}
    stubbed = []
    for name in stubs:
        try:
            importlib.import_module(name)
        except ImportError:
            sys.modules[name] = types.ModuleType(name)
            stubbed.append(name)
    sys.path.insert(0, str(checkout))
    try:
        with contextlib.redirect_stdout(sys.stderr):
            return importlib.import_module(module)
    finally:
        sys.path.remove(str(checkout))
        for name in siblings | set(stubbed):
            sys.modules.pop(name, None)
        sys.modules.update(saved)


def alternate(sides: dict, reps: int):
    """``sides`` (name -> a function returning a dict of its run's measures) run in alternating rounds
    after one warm-up round: one row per kept run, ``side``, ``rep``, ``wall_s``, ``cpu_s`` and the dict."""
    import pandas as pd

    from .repeat import interleaved

    rows = []
    timing = interleaved(sides, reps=reps, warmup=1, progress=False,
                         check=lambda name, out: rows.append(dict(side=name) | out))
    kept = pd.DataFrame(rows[len(sides):]).reset_index(drop=True)
    return pd.concat([timing[["rep", "wall_s", "cpu_s"]], kept], axis=1)


def summarize(runs, quantities=("e2e_s", "cloud_s")):
    """Per case, hepkg side (every ``side`` but ``authors``) and quantity: hepkg's median and quartiles and,
    where the authors ran, theirs, the speedup (authors / hepkg medians), the quartiles of the per-round
    speedups, and the verdict on hepkg (``less``: faster, outside the noise)."""
    import pandas as pd

    rows = []
    if "status" in runs:
        runs = runs[runs.status == "ok"]
    for case, g in runs.groupby("case", sort=False):
        a = g[g.side == "authors"].set_index("rep")
        for side, h in g[g.side != "authors"].groupby("side", sort=False):
            h = h.set_index("rep")
            for q in quantities:
                row = dict(case=case, side=side, quantity=q, hepkg_median=h[q].median(),
                           hepkg_q1=h[q].quantile(0.25), hepkg_q3=h[q].quantile(0.75), reps=len(h),
                           hepkg_correct=bool(h.correct.all()))
                if len(a):
                    per_round = (a[q] / h[q]).dropna()
                    row |= dict(authors_median=a[q].median(), authors_q1=a[q].quantile(0.25),
                                authors_q3=a[q].quantile(0.75), speedup=a[q].median() / h[q].median(),
                                speedup_q1=per_round.quantile(0.25), speedup_q3=per_round.quantile(0.75),
                                verdict=compare(h[q], a[q]), authors_correct=bool(a.correct.all()))
                rows.append(row)
    return pd.DataFrame(rows)


def plot(summary, title: str):
    """Speedups (authors / hepkg) per case and quantity, with the per-round quartiles."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, ax = plt.subplots(figsize=(8, 0.8 + 0.3 * len(summary)))
    if "speedup" in summary and summary.speedup.notna().any():
        s = summary.dropna(subset=["speedup"]).reset_index(drop=True)
        labels = s.case + " " + s.quantity.str.removesuffix("_s") + " (" + s.side + ")"
        colors = sns.color_palette("deep", 2)
        ax.barh(labels, s.speedup, color=[colors[0] if v == "less" else colors[1] for v in s.verdict])
        # the ratio of the medians may lie outside the quartiles of the per-round ratios
        xerr = [(s.speedup - s.speedup_q1).clip(lower=0), (s.speedup_q3 - s.speedup).clip(lower=0)]
        ax.errorbar(s.speedup, labels, xerr=xerr,
                    fmt="none", ecolor="k", capsize=3)
        ax.axvline(1, color="0.3", lw=1)
    ax.set(xlabel="speedup of hepkg over the authors' code (median, per-round quartiles)", title=title)
    fig.tight_layout()
    return fig


def measure(section: str, checkout, *, reps: int, scale: str):
    """One row per kept run of ``section`` (its module's ``versus_cases(scale)`` and ``versus_run``)."""
    import pandas as pd

    from tqdm.auto import tqdm

    mod = importlib.import_module(SECTIONS[section])
    runs = [mod.versus_run(case, checkout, reps=reps) for case in tqdm(mod.versus_cases(scale), desc=section)]
    return pd.concat(runs, ignore_index=True), mod


def main(argv=None) -> None:
    from . import report

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", default=list(SECTIONS), choices=list(SECTIONS))
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--scale", default="default", choices=("quick", "default"))
    parser.add_argument("--authors", help="checkout of the section's authors' code (one section)")
    parser.add_argument("--artifacts", help="artifact root (default: artifacts/)")
    args = parser.parse_args(argv)
    if args.authors and len(args.sections) != 1:
        parser.error("--authors names the checkout of one section")
    for section in args.sections:
        mod = importlib.import_module(SECTIONS[section])
        try:
            checkout = find_checkout(args.authors, mod.ENV, mod.REPO, mod.FILES)
        except MissingCheckout as exc:
            print(f"{section}: {exc}; measuring hepkg's side alone", file=sys.stderr)
            checkout = None
        runs, mod = measure(section, checkout, reps=args.reps, scale=args.scale)
        summary = summarize(runs, mod.QUANTITIES)
        report.save_table(runs, "bench", f"versus_{section}", base=args.artifacts)
        report.save_table(summary, "bench", f"versus_{section}_summary", base=args.artifacts)
        report.save_figure(plot(summary, f"{section}: hepkg vs {mod.REPO}"), "bench", f"versus_{section}",
                           base=args.artifacts)
        print(summary.to_string(index=False))


if __name__ == "__main__":
    main()
