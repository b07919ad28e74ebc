"""Run the notebooks with papermill and summarize what reproduced.

``python -m hepkg.reproduce [--scale quick|default|full] [--only spmv,gemm] [--artifacts DIR]
[--executor inline|process|dask] [--workers N] [--scheduler tcp://host:port] [--render-only]``

Each notebook ``notebooks/NN_<section>.ipynb`` runs with the parameters SCALE, SEED,
ARTIFACT_DIR, EXECUTOR, WORKERS, SCHEDULER and RENDER_ONLY; its executed copy lands in
``artifacts/<section>/``. Before each notebook the runner prints its estimated time, and while it
runs, a terminal bar of its cells and one per experiment grid (configurations done / total, elapsed,
remaining; see :mod:`hepkg.progress`). A failing notebook does not stop the others; the exit status is 1 if any
failed. At the end the summary, each section's results page and the README's results table are
rewritten from the artifacts (:mod:`hepkg.summary`).

``--render-only`` (``make figures``) computes nothing: each notebook rebuilds its tables,
figures and claims from the committed raw tables ``artifacts/<section>/raw/`` (see
:mod:`hepkg.bench.raw`), at the scale they were computed at; ``run.json``, which describes the
computation, is left as it is.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import re
import sys
import tempfile
import time

from hepkg import paths, progress, summary
from hepkg.atomic import atomic_path
from hepkg.reference.claims import STATUSES, load_claims

SCALES = ("quick", "default", "full")
#: seconds per notebook on 2 cores, nothing else running, from an empty grid (the README's table)
ESTIMATE_S = {
    "quick": {"quickstart": 5, "he_primitives": 15, "spmv": 60, "gemm": 90, "facesearch": 300, "facesearch_gpu": 140,
              "omr": 60},
    # facesearch: the four methods interleaved at K 2^10, 2^15, 2^16, kappa 8 and 10, 5 repetitions (estimated
    # from the per-query times of the e8cacb1 run; not yet run at this scale); facesearch_gpu on numpy; omr: 5
    # interleaved rounds of the four schemes at 1 and 2 threads and PerfOMD's two noise traces (the committed
    # 9d10d42 run on a 2-vCPU Xeon: its records took 10.7 h, the 40 digests 9.9 h of them)
    "default": {"quickstart": 10, "he_primitives": 25, "spmv": 1500, "gemm": 3700, "facesearch": 25200,
                "facesearch_gpu": 1800, "omr": 38400},
}
#: peak resident memory of a notebook at default scale where it exceeds 4 GB
PEAK_GB = {"default": {"facesearch": 16.5, "omr": 11.6}, "full": {"omr": 14.3}}


def section_of(notebook: pathlib.Path) -> str:
    """``10_spmv.ipynb`` -> ``spmv``; ``31_facesearch_gpu.ipynb`` -> ``facesearch_gpu``."""
    return re.sub(r"^\d+_", "", notebook.stem)


def notebooks(only=None) -> list[pathlib.Path]:
    found = sorted(paths.NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    if only:
        wanted = set(only)
        unknown = wanted - {section_of(nb) for nb in found}
        if unknown:
            raise SystemExit(f"unknown section(s) {sorted(unknown)}; known: {[section_of(nb) for nb in found]}")
        found = [nb for nb in found if section_of(nb) in wanted]
    return found


def run_notebook(notebook: pathlib.Path, parameters: dict, artifact_root: pathlib.Path,
                 timeout: int | None = None) -> dict:
    """Execute one notebook; return its summary row (the executed copy is kept either way)."""
    import papermill as pm

    section = section_of(notebook)
    out = paths.artifacts(section, artifact_root) / notebook.name
    start = time.time()
    status, error = "ok", ""
    with atomic_path(out) as tmp, _progress_file() as bars, progress.Watcher(bars):
        try:
            pm.execute_notebook(str(notebook), str(tmp), parameters=parameters, cwd=str(notebook.parent),
                                kernel_name="python3", progress_bar=dict(desc="    cells", leave=False),
                                execution_timeout=timeout)
        except Exception as exc:  # a failing notebook must not stop the others
            last = (str(exc).strip().splitlines() or [""])[-1]
            status, error = "failed", f"{type(exc).__name__}: {last[:300]}"
    return dict(notebook=notebook.name, section=section, status=status, seconds=round(time.time() - start, 1),
                **summary.claim_columns(load_claims(section, artifact_root)), error=error)


@contextlib.contextmanager
def _progress_file():
    """A fresh file the notebook's kernel reports its bars to ($HEPKG_PROGRESS, inherited by the kernel)."""
    with tempfile.TemporaryDirectory(prefix="hepkg-progress-") as folder:
        path = pathlib.Path(folder) / "bar.json"
        before = os.environ.get(progress.ENV)
        os.environ[progress.ENV] = str(path)
        try:
            yield path
        finally:
            if before is None:
                os.environ.pop(progress.ENV, None)
            else:
                os.environ[progress.ENV] = before


def estimate(sections: list[str], scale: str, root: pathlib.Path) -> dict[str, float | None]:
    """Seconds each section should take: the longer of :data:`ESTIMATE_S` (from an empty grid) and its last
    run at this scale (run.json; a run that resumed a grid took less), None when neither is known."""
    out = {}
    for section in sections:
        run = root / section / "run.json"
        last = json.loads(run.read_text()) if run.is_file() else {}
        known = [ESTIMATE_S.get(scale, {}).get(section),
                 summary.section_row(root / section)["seconds"] if last.get("scale") == scale else None]
        out[section] = max((v for v in known if v is not None), default=None)
    return out


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "time unknown"
    return f"about {seconds / 3600:.1f} h" if seconds >= 5400 else f"about {max(1, round(seconds / 60))} min"


def plan_message(sections: list[str], scale: str, estimates: dict) -> str:
    """What the run is about to do: its length and its peak memory, before it starts."""
    known = [v for v in estimates.values() if v is not None]
    peaks = {s: gb for s, gb in PEAK_GB.get(scale, {}).items() if s in sections}
    text = (f"SCALE={scale}: {len(sections)} notebook(s), {_duration(sum(known)) if known else 'time unknown'} in "
            f"total on 2 cores")
    if peaks:
        text += "; peak memory " + ", ".join(f"{gb} GB ({s})" for s, gb in peaks.items())
    if scale != "quick":
        text += ". SCALE=quick runs every notebook in about 5 min; an interrupted run resumes where it stopped"
    return text + "."


def computed_scale(section: str, artifact_root: pathlib.Path) -> str | None:
    """The scale a section's committed raw tables were computed at (None: it has none)."""
    path = artifact_root / section / "raw" / "provenance.json"
    return json.loads(path.read_text())["scale"] if path.is_file() else None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Execute the hepkg notebooks with papermill.")
    parser.add_argument("--scale", choices=SCALES, default="default")
    parser.add_argument("--only", help="comma-separated sections (e.g. spmv,gemm)")
    parser.add_argument("--artifacts", help="artifact folder (default: artifacts/)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--executor", choices=("inline", "process", "dask"), default="inline",
                        help="how experiment grids run")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--scheduler", help="existing Dask scheduler, tcp://host:port (implies --executor dask)")
    parser.add_argument("--timeout", type=int, default=None, help="per-cell timeout in seconds")
    parser.add_argument("--render-only", action="store_true",
                        help="rebuild tables, figures and claims from the committed raw tables, computing nothing")
    args = parser.parse_args(argv)

    root = paths.artifacts(base=args.artifacts)
    executor = "dask" if args.scheduler else args.executor
    readme = summary.default_readme(root)
    # the repository's artifacts/ is the notebooks' default: no machine path enters the executed copies
    parameters = dict(SCALE=args.scale, SEED=args.seed, ARTIFACT_DIR=None if readme else str(root.resolve()),
                      EXECUTOR=executor, WORKERS=args.workers, SCHEDULER=args.scheduler, RENDER_ONLY=args.render_only)
    selected = notebooks(args.only.split(",") if args.only else None)
    estimates = estimate([section_of(nb) for nb in selected], args.scale, root)
    if not args.render_only:
        print(plan_message([section_of(nb) for nb in selected], args.scale, estimates), flush=True)
    rows = []
    for i, nb in enumerate(selected, 1):
        if args.render_only:
            parameters["SCALE"] = computed_scale(section_of(nb), root)
            if parameters["SCALE"] is None:  # not rendered, loudly; the others still are
                rows.append(dict(notebook=nb.name, section=section_of(nb), status="failed", seconds=0.0,
                                 **summary.claim_columns([]),
                                 error=f"no raw tables in {root / section_of(nb) / 'raw'}: compute them first "
                                       f"(make reproduce ONLY={section_of(nb)})"))
                print(f"[{i}/{len(selected)}] {nb.name}: {rows[-1]['error']}", flush=True)
                continue
        what = "rendering" if args.render_only else f"computing, {_duration(estimates[section_of(nb)])}"
        print(f"[{i}/{len(selected)}] {nb.name} ({what}, scale {parameters['SCALE']}) ...", flush=True)
        row = run_notebook(nb, parameters, root, args.timeout)
        print(f"    {row['status']} in {row['seconds']} s; claims: "
              + ", ".join(f"{row[summary.COLUMNS[s]]} {s}" for s in STATUSES) + f" {row['error']}", flush=True)
        rows.append(row)
    summary.write_all(root, readme)
    print("\n" + (root / "summary.md").read_text())
    return int(any(r["status"] != "ok" for r in rows))


if __name__ == "__main__":
    sys.exit(main())
