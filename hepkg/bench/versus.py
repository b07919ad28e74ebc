"""hepkg beside a reference on the same machine, library, parameters and inputs: the papers' authors' code.

``python -m hepkg.bench.versus [spmv gemm facesearch] [--reps N] [--authors DIR]`` (``make bench``)
runs, per section, the reference and hepkg's implementation of the same method in alternating rounds
after a warm-up round, checks every result against numpy, and writes ``artifacts/bench/versus_<section>.csv``
(one row per run), ``versus_<section>_summary.csv`` (per case, side and quantity: both medians and
quartiles, ``ratio`` = reference / side median, the quartiles of the per-round ratios, the verdict of
:func:`hepkg.bench.compare`) and a figure of the ratios. The reference of spmv and gemm is the
authors' public code, from a checkout (``--authors`` or the section's environment variable, e.g.
``HEPKG_AUTHORS_CSSC``); nothing of it is copied into hepkg (:func:`import_script` imports it from
the checkout), and without a checkout hepkg's side is measured alone. The face-search reference is
HyDia's method, the paper's baseline (no public code of the paper's; both sides are hepkg's).
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
SECTIONS = {"spmv": "hepkg.spmv.authors", "gemm": "hepkg.gemm.authors", "facesearch": "hepkg.facesearch.versus"}


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


def summarize(runs, quantities=("e2e_s", "cloud_s"), reference: str = "authors", base: str | None = None):
    """Per case, side other than ``reference`` and quantity: the side's median and quartiles and, where the
    reference ran, its median and quartiles, ``ratio`` = reference median / side median (> 1: the side is
    faster, or smaller), the quartiles of the per-round ratios and the verdict on the side
    (:func:`hepkg.bench.compare`; ``less``: below the reference, outside the noise). With runs of a side
    ``base`` (hepkg with the reference's settings), ``gain`` = base median / side median: what the side's
    ``lever`` (a column of the runs, kept) adds on its own."""
    import pandas as pd

    rows = []
    if "status" in runs:
        runs = runs[runs.status.isin(["ok", "measured"])]
    for case, g in runs.groupby("case", sort=False):
        a = g[g.side == reference].set_index("rep")
        for side, h in g[g.side != reference].groupby("side", sort=False):
            h = h.set_index("rep")
            for q in quantities:
                row = dict(case=case, side=side, quantity=q, reference=reference, side_median=h[q].median(),
                           **({"lever": h.lever.iloc[0]} if "lever" in h else {}),
                           side_q1=h[q].quantile(0.25), side_q3=h[q].quantile(0.75), reps=len(h),
                           side_correct=bool(h.correct.all()))
                if len(a):
                    per_round = (a[q] / h[q]).dropna()
                    row |= dict(ref_median=a[q].median(), ref_q1=a[q].quantile(0.25), ref_q3=a[q].quantile(0.75),
                                ratio=a[q].median() / h[q].median(), ratio_q1=per_round.quantile(0.25),
                                ratio_q3=per_round.quantile(0.75), verdict=compare(h[q], a[q]),
                                ref_correct=bool(a.correct.all()))
                b = g[g.side == base]
                if base is not None and len(b):
                    row["gain"] = b[q].median() / h[q].median()
                rows.append(row)
    return pd.DataFrame(rows)


def plot(summary, title: str):
    """Ratios (reference / side: speedups, or memory ratios) per case and quantity, with the per-round
    quartiles."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, ax = plt.subplots(figsize=(8, 0.8 + 0.3 * len(summary)))
    if "ratio" in summary and summary.ratio.notna().any():
        s = summary.dropna(subset=["ratio"]).reset_index(drop=True)
        labels = s.case + " " + s.quantity.str.removesuffix("_s") + " (" + s.side + ")"
        colors = sns.color_palette("deep", 2)
        ax.barh(labels, s.ratio, color=[colors[0] if v == "less" else colors[1] for v in s.verdict])
        # the ratio of the medians may lie outside the quartiles of the per-round ratios
        xerr = [(s.ratio - s.ratio_q1).clip(lower=0), (s.ratio_q3 - s.ratio).clip(lower=0)]
        ax.errorbar(s.ratio, labels, xerr=xerr, fmt="none", ecolor="k", capsize=3)
        ax.axvline(1, color="0.3", lw=1)
        ax.set(xlabel=f"{s.reference.iloc[0]} / side (median; per-round quartiles): > 1 is faster or smaller")
    ax.set(title=title)
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
    parser.add_argument("--reps", type=int, help="repetitions per side (default: the section's REPS, else 7)")
    parser.add_argument("--scale", default="default", choices=("quick", "default"))
    parser.add_argument("--authors", help="checkout of the section's authors' code (one section)")
    parser.add_argument("--artifacts", help="artifact root (default: artifacts/)")
    args = parser.parse_args(argv)
    if args.authors and len(args.sections) != 1:
        parser.error("--authors names the checkout of one section")
    for section in args.sections:
        mod = importlib.import_module(SECTIONS[section])
        checkout = None
        if mod.REPO is not None:
            try:
                checkout = find_checkout(args.authors, mod.ENV, mod.REPO, mod.FILES)
            except MissingCheckout as exc:
                print(f"{section}: {exc}; measuring hepkg's side alone", file=sys.stderr)
        runs, mod = measure(section, checkout, reps=args.reps or getattr(mod, "REPS", 7), scale=args.scale)
        reference = getattr(mod, "REFERENCE", "authors")
        summary = summarize(runs, mod.QUANTITIES, reference, getattr(mod, "BASE", None))
        report.save_table(runs, "bench", f"versus_{section}", base=args.artifacts)
        report.save_table(summary, "bench", f"versus_{section}_summary", base=args.artifacts)
        report.save_figure(plot(summary, f"{section}: hepkg vs {mod.REPO or reference}"), "bench", f"versus_{section}",
                           base=args.artifacts)
        print(summary.to_string(index=False))


if __name__ == "__main__":
    main()
