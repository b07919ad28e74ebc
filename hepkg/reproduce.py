"""Run the notebooks with papermill and summarize what reproduced.

``python -m hepkg.reproduce [--scale quick|default|full] [--only spmv,gemm] [--artifacts DIR]
[--executor inline|process|dask] [--workers N] [--scheduler tcp://host:port] [--render-only]``

Each notebook ``notebooks/NN_<section>.ipynb`` runs with the parameters SCALE, SEED,
ARTIFACT_DIR, EXECUTOR, WORKERS, SCHEDULER and RENDER_ONLY; its executed copy lands in
``artifacts/<section>/``. A failing notebook does not stop the others; the exit status is
1 if any failed. The summary (printed, and written to ``artifacts/summary.md`` and
``summary.json``) lists each notebook's status, time and claim tally.

``--render-only`` (``make figures``) computes nothing: each notebook rebuilds its tables,
figures and claims from the committed raw tables ``artifacts/<section>/raw/`` (see
:mod:`hepkg.bench.raw`), at the scale they were computed at; ``run.json`` and the summary,
which describe the computation, are left as they are.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
import time

from hepkg import paths
from hepkg.atomic import atomic_path, write_text
from hepkg.bench.sysinfo import git_state
from hepkg.reference.claims import load_claims, tally

SCALES = ("quick", "default", "full")


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
    with atomic_path(out) as tmp:
        try:
            pm.execute_notebook(str(notebook), str(tmp), parameters=parameters, cwd=str(notebook.parent),
                                kernel_name="python3", progress_bar=False, execution_timeout=timeout)
        except Exception as exc:  # a failing notebook must not stop the others
            last = (str(exc).strip().splitlines() or [""])[-1]
            status, error = "failed", f"{type(exc).__name__}: {last[:300]}"
    claims = tally(load_claims(section, artifact_root))
    return dict(notebook=notebook.name, section=section, status=status, seconds=round(time.time() - start, 1),
                claims_hold=claims["holds"], claims_fail=claims["fails"], claims_inconclusive=claims["inconclusive"],
                claims_not_measured=claims["not measured"], error=error)


def computed_scale(section: str, artifact_root: pathlib.Path) -> str | None:
    """The scale a section's committed raw tables were computed at (None: it has none)."""
    path = artifact_root / section / "raw" / "provenance.json"
    return json.loads(path.read_text())["scale"] if path.is_file() else None


def merged_summary(path: pathlib.Path, rows: list[dict], scale: str) -> list[dict]:
    """This run's rows (tagged with ``scale``) over the earlier summary's rows of other notebooks."""
    earlier = json.loads(path.read_text()).get("notebooks", []) if path.exists() else []
    fresh = {r["notebook"]: dict(r, scale=scale) for r in rows}
    kept = {r["notebook"]: r for r in earlier if r["notebook"] not in fresh}
    return [v for _, v in sorted({**kept, **fresh}.items())]


def summary_markdown(rows: list[dict], scale: str) -> str:
    head = ("| notebook | scale | status | time (s) | claims hold | fail | inconclusive | not measured |\n"
            "|---|---|---|---|---|---|---|---|\n")
    body = "".join(f"| {r['notebook']} | {r.get('scale', scale)} | {r['status']} | {r['seconds']} | {r['claims_hold']} | "
                   f"{r['claims_fail']} | {r.get('claims_inconclusive', 0)} | {r['claims_not_measured']} |\n"
                   for r in rows)
    errors = "".join(f"\n- {r['notebook']}: {r['error']}" for r in rows if r["error"])
    return f"# Reproduction summary (last run: scale {scale})\n\n{head}{body}" + (f"\nErrors:{errors}\n" if errors else "")


def dirty_warning(git: dict) -> str:
    """A loud paragraph when the run's code is not a clean git revision (empty when it is)."""
    if not git.get("dirty"):
        return ""
    return (f"**WARNING: this run used uncommitted code** (revision {git.get('revision')} plus changes to "
            f"{', '.join(git.get('changed') or [])}): its artifacts cannot be traced to a commit. Commit, then "
            f"run again.\n\n")


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
    parameters = dict(SCALE=args.scale, SEED=args.seed, ARTIFACT_DIR=str(root.resolve()), EXECUTOR=executor,
                      WORKERS=args.workers, SCHEDULER=args.scheduler, RENDER_ONLY=args.render_only)
    selected = notebooks(args.only.split(",") if args.only else None)
    rows = []
    for i, nb in enumerate(selected, 1):
        if args.render_only:
            parameters["SCALE"] = computed_scale(section_of(nb), root)
            if parameters["SCALE"] is None:  # not rendered, loudly; the others still are
                rows.append(dict(notebook=nb.name, section=section_of(nb), status="failed", seconds=0.0,
                                 claims_hold=0, claims_fail=0, claims_inconclusive=0, claims_not_measured=0,
                                 error=f"no raw tables in {root / section_of(nb) / 'raw'}: compute them first "
                                       f"(make reproduce ONLY={section_of(nb)})"))
                print(f"[{i}/{len(selected)}] {nb.name}: {rows[-1]['error']}", flush=True)
                continue
        what = "rendering" if args.render_only else "computing"
        print(f"[{i}/{len(selected)}] {nb.name} ({what}, scale {parameters['SCALE']}) ...", flush=True)
        row = run_notebook(nb, parameters, root, args.timeout)
        print(f"    {row['status']} in {row['seconds']} s; claims: {row['claims_hold']} hold, "
              f"{row['claims_fail']} fail, {row['claims_inconclusive']} inconclusive, {row['claims_not_measured']} "
              f"not measured {row['error']}", flush=True)
        rows.append(row)
    if args.render_only:
        print("\n" + summary_markdown(rows, "as computed"))
        return int(any(r["status"] != "ok" for r in rows))
    all_rows = merged_summary(root / "summary.json", rows, args.scale)
    text = dirty_warning(git_state()) + summary_markdown(all_rows, args.scale)
    write_text(root / "summary.md", text)
    write_text(root / "summary.json", json.dumps(dict(notebooks=all_rows), indent=1))
    print("\n" + text)
    return int(any(r["status"] != "ok" for r in rows))


if __name__ == "__main__":
    sys.exit(main())
