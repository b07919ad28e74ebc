"""hepkg beside a reference on the same machine, library, parameters and inputs: the papers' authors' code.

``python -m hepkg.bench.versus [spmv gemm facesearch fasthe omr] [--reps N] [--authors DIR]`` (``make bench``)
runs, per section, the reference and hepkg's implementation of the same method in alternating rounds
after a warm-up round, checks every result against numpy, and writes ``artifacts/bench/versus_<section>.csv``
(one row per run), ``versus_<section>_summary.csv`` (per case, side and quantity: both medians and
quartiles, ``ratio`` = reference / side median, its range from the quartiles, the verdict of
:func:`hepkg.bench.compare`), a figure of the ratios and ``versus_<section>_run.json`` (the command and the
machine: :func:`save_run_info`). The reference of spmv and gemm is the
authors' public code, from a checkout (``--authors`` or the section's environment variable, e.g.
``HEPKG_AUTHORS_CSSC``); nothing of it is copied into hepkg (:func:`import_script` imports it from
the checkout), and without a checkout hepkg's side is measured alone. The omr reference is the
authors' C++ program, built from their checkout by the section's ``prepare`` (cached:
:mod:`hepkg.bench.builds`). The face-search reference is HyDia's method as hepkg reimplements it from
the authors' code, with HyDia's own C++ beside it given a checkout of theirs. Each case's runs are kept
in the bench's grid store the moment the case finishes (:func:`measure`; for omr, whose cases take hours,
each round), so an interrupted ``make bench`` resumes at the case (the round) it stopped in.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import os
import pathlib
import sys
import types

from .repeat import INCONCLUSIVE, compare, ratio_range

__all__ = ["MissingCheckout", "find_checkout", "import_script", "alternate", "summarize", "plot", "measure",
           "run_case", "save_run_info", "load_runs", "load_run_info", "beside_theirs", "main", "SECTIONS"]

#: section -> the module holding its ``versus_cases`` and ``versus_run`` (see :func:`measure`).
SECTIONS = {"spmv": "hepkg.spmv.authors", "gemm": "hepkg.gemm.authors", "facesearch": "hepkg.facesearch.versus",
            "fasthe": "hepkg.facesearch.fasthe", "omr": "hepkg.omr.authors"}


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


def alternate(sides: dict, reps: int, warmup: int = 1):
    """``sides`` (name -> a function returning a dict of its run's measures) run in alternating rounds
    after ``warmup`` rounds: one row per kept run, ``side``, ``rep``, ``wall_s``, ``cpu_s`` and the dict."""
    import pandas as pd

    from .repeat import interleaved

    rows = []
    timing = interleaved(sides, reps=reps, warmup=warmup, progress=False,
                         check=lambda name, out: rows.append(dict(side=name) | out))
    kept = pd.DataFrame(rows[warmup * len(sides):]).reset_index(drop=True)
    return pd.concat([timing[["rep", "wall_s", "cpu_s"]], kept], axis=1)


def summarize(runs, quantities=("e2e_s", "cloud_s"), reference: str = "authors", base: str | None = None,
              pairs: dict | None = None):
    """Per case, side other than ``reference`` and quantity: the side's median and quartiles and, where the
    reference ran, its median and quartiles, ``ratio`` = reference median / side median (> 1: the side is
    faster, or smaller), ``ratio_low`` and ``ratio_high``, the quartiles crossed (:func:`hepkg.bench.repeat.
    ratio_range`: the reference's first over the side's third, its third over the side's first), and the verdict on
    the side (:func:`hepkg.bench.compare`; ``less``: below the reference, outside the noise). The range holds the
    ratio and leaves out 1 exactly when the verdict is not inconclusive. With runs of a side ``base`` (hepkg with
    the reference's settings), ``gain`` = base median / side median: what the side's ``lever`` (a column of the
    runs, kept) adds on its own. ``pairs``: side -> a second reference side it is
    also set beside (rows of their own, ``reference`` naming it)."""
    import pandas as pd

    rows = []
    if "status" in runs:
        runs = runs[runs.status.isin(["ok", "measured"])]
    pairs = pairs or {}
    for case, g in runs.groupby("case", sort=False):
        for side in dict.fromkeys(g.side[g.side != reference]):
            for ref in [reference] + ([pairs[side]] if side in pairs else []):
                rows += _summary_rows(case, g, side, ref, quantities, base)
    return pd.DataFrame(rows)


def _summary_rows(case: str, g, side: str, reference: str, quantities, base) -> list[dict]:
    """:func:`summarize`'s rows of one side beside one reference on one case's runs ``g``."""
    a = g[g.side == reference].set_index("rep")
    h = g[g.side == side].set_index("rep")
    rows = []
    for q in quantities:
        row = dict(case=case, side=side, quantity=q, reference=reference, side_median=h[q].median(),
                   **({"lever": h.lever.iloc[0]} if "lever" in h else {}),
                   side_q1=h[q].quantile(0.25), side_q3=h[q].quantile(0.75), reps=len(h),
                   side_correct=bool(h.correct.all()))
        ref, own = a[q].dropna(), h[q].dropna()
        if len(ref) and len(own):
            ratio, low, high = ratio_range(ref, own)
            row |= dict(ref_median=ref.median(), ref_q1=ref.quantile(0.25), ref_q3=ref.quantile(0.75),
                        ratio=ratio, ratio_low=low, ratio_high=high, verdict=compare(own, ref),
                        ref_correct=bool(a.correct.all()))
        b = g[g.side == base]
        if base is not None and len(b):
            row["gain"] = b[q].median() / h[q].median()
        rows.append(row)
    return rows


def plot(summary, title: str):
    """Ratios (reference / side: speedups, or memory ratios) per case, one panel per quantity and one
    colour per side, with the ratio's range from the quartiles; a hatched bar is inside the noise (inconclusive)."""
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.patches import Patch

    s = summary.dropna(subset=["ratio"]).reset_index(drop=True) if "ratio" in summary else summary.iloc[:0]
    ref = s.reference.mode().iloc[0] if len(s) else "reference"          # summarize's reference; pairs apart
    s = s.assign(side=[side if r == ref else f"{side} (beside {r})" for side, r in zip(s.side, s.reference)])
    quantities = list(dict.fromkeys(s.quantity)) or [None]
    cases, sides = list(dict.fromkeys(s.case)), list(dict.fromkeys(s.side))
    colours = dict(zip(sides, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    ncols = min(2, len(quantities))  # at most two panels a row: a page's width
    nrows = -(-len(quantities) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.5 * ncols + 2.5, nrows * max(2.8, 1.4 + 0.32 * len(cases))),
                             sharey=True, squeeze=False)
    for ax in axes.flat[len(quantities):]:
        ax.set_visible(False)
    height = 0.8 / max(1, len(sides))
    for ax, quantity in zip(axes.flat, quantities):
        q = s[s.quantity == quantity]
        for i, side in enumerate(sides):
            r = q[q.side == side].set_index("case").reindex(cases)
            y = np.arange(len(cases)) + (i - (len(sides) - 1) / 2) * height
            ratio, low, high = (r[c].to_numpy(dtype=float) for c in ("ratio", "ratio_low", "ratio_high"))
            ax.barh(y, ratio, height, color=colours[side],
                    hatch=["//" if v == INCONCLUSIVE else None for v in r.verdict], edgecolor="white")
            ax.errorbar(ratio, y, xerr=np.vstack([ratio - low, high - ratio]), fmt="none", ecolor="k", capsize=2,
                        lw=0.8)
        ax.axvline(1, color="0.3", lw=1)
        ax.set_yticks(range(len(cases)), cases)
        ax.invert_yaxis()
        ax.set(title=str(quantity).removesuffix("_s") + (" (time)" if str(quantity).endswith("_s") else ""),
               xlabel=f"{ref} / side (median): > 1: the side is faster or smaller")
        ax.grid(axis="x", alpha=0.3)
    handles = [Patch(color=colours[x], label=x) for x in sides] + [
        Patch(facecolor="white", edgecolor="0.3", hatch="//", label="inside the noise")]
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 0.95), fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


@functools.lru_cache(maxsize=None)
def _prepared(section: str, checkout: str):
    """The section's ``prepare(checkout)`` (C++: the cached build, and its checks) once per process."""
    return importlib.import_module(SECTIONS[section]).prepare(checkout)


def run_case(config: dict) -> list[dict]:
    """A grid function: the rows of ``versus_run`` on ``config["case"]`` of ``config["section"]``, with the
    section's reference from ``config["checkout"]`` (a path, built by its ``prepare`` where it has one) or
    none; given ``config["round"]``, that round alone (the sides once, their order rotated by the round;
    round 0 is the case's warm-up, its rows ``status`` "warmup", the others' "measured", ``rep`` the round
    less one; a side left out keeps its own status, e.g. "exceeds memory")."""
    mod = importlib.import_module(SECTIONS[config["section"]])
    checkout = config["checkout"]
    if checkout is not None and hasattr(mod, "prepare"):
        checkout = _prepared(config["section"], checkout)
    if "round" not in config:
        return mod.versus_run(config["case"], checkout, reps=config["reps"]).to_dict("records")
    r = config["round"]
    out = mod.versus_run(config["case"], checkout, reps=1, warmup=0, seed=r, rotate=r)
    label = "measured" if r else "warmup"
    own = out.status if "status" in out else None       # a side left out keeps why ("exceeds memory", "killed")
    status = label if own is None else own.where(own.notna() & (own != "measured"), label)
    return out.assign(rep=r - 1, status=status).to_dict("records")


def measure(section: str, checkout, *, reps: int, scale: str, artifacts=None):
    """One row per run of ``section`` (its module's ``versus_cases(scale)`` and ``versus_run``), each case kept in
    the bench's grid store as it finishes (:func:`hepkg.grid.run_grid`): an interrupted bench resumes at the
    case it stopped in. A section whose cases run for hours (``ROUND_RECORDS``) keeps each round of a case,
    warm-up first, as it finishes, and resumes at the round (without another warm-up: every run of theirs is a
    process of its own)."""
    from hepkg.grid import grid_store, run_grid

    mod = importlib.import_module(SECTIONS[section])
    per_round = [dict(round=r) for r in range(1 + reps)] if getattr(mod, "ROUND_RECORDS", False) else [dict(reps=reps)]
    configs = [dict(section=section, case=case, checkout=None if checkout is None else str(checkout)) | each
               for case in mod.versus_cases(scale) for each in per_round]
    return run_grid(run_case, configs, grid_store("bench", artifacts), desc=section, rows_only=True), mod


def main(argv=None) -> None:
    from . import report

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", help=f"some of {', '.join(SECTIONS)} (default: all)")
    parser.add_argument("--reps", type=int, help="repetitions per side (default: the section's REPS, else 7)")
    parser.add_argument("--scale", default="default", choices=("quick", "default"))
    parser.add_argument("--authors", help="checkout of the section's authors' code (one section)")
    parser.add_argument("--artifacts", help="artifact root (default: artifacts/)")
    parser.add_argument("--render-only", action="store_true",
                        help="rebuild each summary table and figure from the committed runs, measuring nothing")
    parser.add_argument("--from-kept", action="store_true",
                        help="write each section's runs from its rounds kept under artifacts/bench/kept/ "
                             "(hepkg.bench.kept.fold: each case whole from one machine), measuring nothing")
    args = parser.parse_args(argv)
    args.sections = args.sections or list(SECTIONS)
    if set(args.sections) - set(SECTIONS):
        parser.error(f"unknown section(s) {sorted(set(args.sections) - set(SECTIONS))}; known: {', '.join(SECTIONS)}")
    if args.render_only:
        return render(args.sections, args.artifacts)
    if args.from_kept:
        return _from_kept(args.sections, sys.argv[1:] if argv is None else argv, args.artifacts)
    if args.authors and len(args.sections) != 1:
        parser.error("--authors names the checkout of one section")
    _warn_page_reporting()
    for section in args.sections:
        mod = importlib.import_module(SECTIONS[section])
        checkout = None
        if mod.REPO is not None:
            try:
                checkout = find_checkout(args.authors, mod.ENV, mod.REPO, mod.FILES)
                if hasattr(mod, "prepare"):
                    _prepared(section, str(checkout))    # C++: built (cached) before the first case
            except MissingCheckout as exc:
                checkout = None
                if not getattr(mod, "HEPKG_ALONE", True):       # hepkg's side alone is another section's
                    print(f"{section}: {exc}; skipped", file=sys.stderr)
                    continue
                print(f"{section}: {exc}; measuring hepkg's side alone", file=sys.stderr)
        reps = args.reps or getattr(mod, "REPS", 7)
        runs, mod = measure(section, checkout, reps=reps, scale=args.scale, artifacts=args.artifacts)
        report.save_table(runs, "bench", f"versus_{section}", base=args.artifacts)
        save_run_info(section, runs, sys.argv[1:] if argv is None else argv, reps=reps, scale=args.scale,
                      artifacts=args.artifacts)
        print(_summarize_and_plot(section, mod, runs, args.artifacts).to_string(index=False))


def _from_kept(sections, argv, artifacts=None) -> None:
    """Each section's runs folded from its kept rounds (:func:`hepkg.bench.kept.fold`), saved with their record,
    summary and figure."""
    from . import kept, report

    for section in sections:
        mod = importlib.import_module(SECTIONS[section])
        runs, info = kept.fold(section, mod.versus_cases("default"), mod.REPS, artifacts)
        report.save_table(runs, "bench", f"versus_{section}", base=artifacts)
        save_run_info(section, runs, argv, reps=mod.REPS, scale="default", artifacts=artifacts, kept=info)
        print(_summarize_and_plot(section, mod, runs, artifacts).to_string(index=False))


def _warn_page_reporting() -> None:
    """Say so where this VM hands freed memory back to its host (:func:`hepkg.bench.sysinfo.page_reporting`): a
    side that grows inside its timed span then pays the host's faults, the other side less if it grew earlier."""
    from .sysinfo import MAX_PAGE_ORDER, PAGE_REPORTING, page_reporting

    order = page_reporting()
    if order is not None:
        print(f"this machine reports freed memory to its host (page_reporting_order {order}): memory a run touches "
              f"afresh is faulted in by the host, up to 2.3 s/GB here; as root, `echo {MAX_PAGE_ORDER + 1} > "
              f"{PAGE_REPORTING}` turns it off (each run's record gives the setting)", file=sys.stderr)


def save_run_info(section: str, runs, argv, *, reps: int, scale: str, artifacts=None,
                  kept: dict | None = None) -> pathlib.Path:
    """``versus_<section>_run.json`` beside the runs: the command, reps, scale, how many runs, the grid store they
    were kept in (named by this machine's key and hepkg's revision, so every run in the table ran here, on this
    code) and :func:`hepkg.bench.sysinfo.system_info` (CPU, cores, RAM, versions, revision); runs folded from kept
    rounds: ``kept`` (:func:`hepkg.bench.kept.fold`'s record: each case's folder and machine) in place of the
    store and this machine."""
    import datetime
    import json

    from hepkg import atomic
    from hepkg.grid import grid_store

    from .sysinfo import machine_key, system_info

    here = kept is None
    where = dict(store=str(grid_store("bench", artifacts)), machine_key=machine_key()) if here else dict(kept=kept)
    info = dict(section=section, command=" ".join(["python -m hepkg.bench.versus", *argv]), reps=reps, scale=scale,
                runs=len(runs), **where,
                written=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                **(dict(system=system_info()) if here else {}))
    path = _run_record(section, artifacts)
    atomic.write_text(path, json.dumps(info, indent=2, default=str) + "\n")
    return path


def _summarize_and_plot(section: str, mod, runs, artifacts=None):
    """The section's summary table and figure from its runs (measured now or read back), saved; returned."""
    from . import report

    runs = mod.derive(runs) if hasattr(mod, "derive") else runs
    lacking = [q for q in mod.QUANTITIES if q not in runs]   # runs recorded by an earlier harness
    if lacking:
        print(f"{section}: the runs do not record {', '.join(lacking)}; summarized without it", file=sys.stderr)
    quantities = [q for q in mod.QUANTITIES if q not in lacking]
    summary = summarize(runs, quantities, getattr(mod, "REFERENCE", "authors"), getattr(mod, "BASE", None),
                        getattr(mod, "PAIRS", None))
    report.save_table(summary, "bench", f"versus_{section}_summary", base=artifacts)
    report.save_figure(plot(summary, _title(section, mod)), "bench", f"versus_{section}", base=artifacts)
    return summary


def _title(section: str, mod) -> str:
    return f"{section}: hepkg vs {mod.REPO or getattr(mod, 'REFERENCE', 'authors')}"


def load_runs(section: str, artifacts=None):
    """The committed runs of ``make bench ONLY=<section>`` (``artifacts/bench/versus_<section>.csv``), or an empty
    table where the bench has not run."""
    import pandas as pd

    from hepkg import paths

    table = paths.artifacts("bench", artifacts) / f"versus_{section}.csv"
    return pd.read_csv(table) if table.is_file() else pd.DataFrame()


def load_run_info(section: str, artifacts=None) -> dict:
    """The committed run record of ``make bench ONLY=<section>`` (``versus_<section>_run.json``, :func:`save_run_info`:
    its command and machine), or an empty dict where there is none."""
    import json

    record = _run_record(section, artifacts)
    return json.loads(record.read_text()) if record.is_file() else {}


def _run_record(section: str, artifacts=None) -> pathlib.Path:
    """Where a section's bench run record lives: ``artifacts/bench/versus_<section>_run.json``."""
    from hepkg import paths

    return paths.artifacts("bench", artifacts) / f"versus_{section}_run.json"


def beside_theirs(runs, quantities, reference: str = "authors"):
    """:func:`summarize` with the reference's columns named ``authors_*`` (theirs) and ``authors_build``, the
    build their side ran; empty where the reference did not run."""
    import pandas as pd

    if not len(runs) or reference not in set(runs.side):
        return pd.DataFrame()
    s = summarize(runs, quantities, reference).rename(columns=lambda c: c.replace("ref_", "authors_"))
    s["authors_build"] = runs[runs.side == reference].build.iloc[0] if "build" in runs else None
    return s.drop(columns="reference")


def render(sections, artifacts=None) -> None:
    """``versus_<section>_summary`` and ``versus_<section>.png`` rebuilt from the committed runs
    ``versus_<section>.csv`` of each section that has them, measuring nothing."""
    for section in sections:
        runs = load_runs(section, artifacts)
        if len(runs):
            _summarize_and_plot(section, importlib.import_module(SECTIONS[section]), runs, artifacts)


if __name__ == "__main__":
    main()
