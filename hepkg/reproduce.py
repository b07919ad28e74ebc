"""Run the notebooks with papermill and summarize what reproduced.

``python -m hepkg.reproduce [--scale quick|default|full] [--only spmv,gemm] [--artifacts DIR] [--overwrite]
[--notebooks DIR] [--executor inline|process|dask] [--workers N] [--scheduler tcp://host:port] [--render-only]``

Each notebook ``notebooks/NN_<section>.ipynb`` runs with the parameters SCALE, SEED,
ARTIFACT_DIR, EXECUTOR, WORKERS, SCHEDULER and RENDER_ONLY; its executed copy lands in
``<results>/<section>/``. The results folder is ``artifacts/``, the committed results, at the default
scale only: any other scale writes ``artifacts/_<scale>/`` (outside git) unless ``--artifacts`` names a
folder, and replacing the committed results with another scale needs ``--overwrite``; the runner says
where it writes before it starts and where the results are when it ends. Before each notebook it
prints its expected time (from the committed run records, :func:`hepkg.summary.expected`), and while it
runs, a terminal bar of its cells and one per experiment grid (configurations done / total, elapsed,
remaining; see :mod:`hepkg.progress`). A failing notebook does not stop the others; the exit status is 1 if any
failed. At the end the summary, each section's results page and the README's generated blocks are
rewritten from the artifacts (:mod:`hepkg.summary`). Each executed copy is normalized (no timestamps, no
machine paths, stable cell ids), so a render of unchanged raw tables rewrites the same bytes.

``--render-only`` (``make figures``) computes nothing: each notebook rebuilds its tables,
figures and claims from the committed raw tables ``artifacts/<section>/raw/`` (see
:mod:`hepkg.bench.raw`), at the scale they were computed at; ``run.json``, which describes the
computation, is left as it is. A section never computed is skipped and its summary row says so.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import sys
import tempfile
import time

from hepkg import paths, progress, summary
from hepkg.atomic import atomic_path
from hepkg.paths import section_of
from hepkg.reference.claims import STATUSES, load_claims

SCALES = ("quick", "default", "full")


def notebooks(only=None, folder=None) -> list[pathlib.Path]:
    """The notebooks ``NN_<section>.ipynb`` of ``folder`` (default: :func:`hepkg.paths.notebooks`), or those of
    the sections in ``only``."""
    try:
        found = sorted(paths.notebooks(folder).glob("[0-9][0-9]_*.ipynb"))
    except FileNotFoundError as exc:
        raise SystemExit(str(exc)) from None
    if only:
        wanted = set(only)
        unknown = wanted - {section_of(nb) for nb in found}
        if unknown:
            raise SystemExit(f"unknown section(s) {sorted(unknown)}; known: {[section_of(nb) for nb in found]}")
        found = [nb for nb in found if section_of(nb) in wanted]
    return found


def run_notebook(notebook: pathlib.Path, parameters: dict, artifact_root: pathlib.Path,
                 timeout: int | None = None) -> dict:
    """Execute one notebook; return its summary row (the executed copy is kept either way, normalized)."""
    import papermill as pm

    section = section_of(notebook)
    out = paths.artifacts(section, artifact_root) / notebook.name
    start = time.time()
    status, error = "ok", ""
    with atomic_path(out) as tmp, _progress_file() as bars, progress.Watcher(bars):
        try:
            pm.execute_notebook(str(notebook), str(tmp), parameters=parameters, cwd=str(notebook.parent),
                                kernel_name="python3", progress_bar=dict(desc="    cells", leave=False),
                                execution_timeout=timeout, kernel_manager_class=_kernel_manager_class())
        except Exception as exc:  # a failing notebook must not stop the others
            last = (str(exc).strip().splitlines() or [""])[-1]
            status, error = "failed", f"{type(exc).__name__}: {last[:300]}"
        if tmp.is_file():
            normalize(tmp, notebook)
    return dict(notebook=notebook.name, section=section, status=status, seconds=round(time.time() - start, 1),
                **summary.claim_columns(load_claims(section, artifact_root)), error=error)


def _kernel_manager_class():
    """The kernel manager papermill starts each notebook's kernel with: on Unix sockets in Jupyter's runtime folder
    (nothing listens on TCP, so the kernel has no "running over TCP without encryption" warning to print), and
    without the SIGINT jupyter_client sends before shutting a kernel down (the notebook has finished by then; the
    signal only made the kernel log "KeyboardInterrupt caught in kernel" when it landed in a message handler)."""
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import CaselessStrEnum

    class QuietKernelManager(AsyncKernelManager):
        transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

        async def _async_interrupt_kernel(self) -> None:
            if not self.shutting_down:  # a cell's timeout still interrupts
                await super()._async_interrupt_kernel()

    return QuietKernelManager


#: per-cell metadata papermill and nbclient write that changes on every run
_VOLATILE = ("duration", "end_time", "start_time")


def normalize(executed: pathlib.Path, source: pathlib.Path) -> None:
    """Rewrite an executed notebook without what changes from run to run: papermill's and nbclient's timestamps
    and durations, the machine paths of its input and output, and the injected parameter cell's random id (it
    becomes ``injected-parameters``); cells without an id get ``cell-<n>``. Consecutive stream outputs of one
    stream are joined (the kernel flushes a print in one message or two, as timing has it); outputs are kept
    otherwise as they are."""
    nb = json.loads(executed.read_text())
    meta = nb.get("metadata", {}).get("papermill", {})
    for key in (*_VOLATILE, "output_path"):
        meta.pop(key, None)
    if "input_path" in meta:
        meta["input_path"] = (str(source.resolve().relative_to(paths.ROOT)) if paths.CHECKOUT
                              and source.resolve().is_relative_to(paths.ROOT) else source.name)
    for n, cell in enumerate(nb.get("cells", [])):
        cell["metadata"].pop("execution", None)
        for key in _VOLATILE:
            cell["metadata"].get("papermill", {}).pop(key, None)
        if "injected-parameters" in cell["metadata"].get("tags", []):
            cell["id"] = "injected-parameters"
        cell.setdefault("id", f"cell-{n}")
        if "outputs" in cell:
            cell["outputs"] = _joined_streams(cell["outputs"])
    executed.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


def _joined_streams(outputs: list) -> list:
    """``outputs`` with each run of stream outputs of one name (stdout, stderr) joined into one."""
    out = []
    for o in outputs:
        if o.get("output_type") == "stream" and out and out[-1].get("output_type") == "stream" \
                and out[-1].get("name") == o.get("name"):
            text = "".join(out[-1]["text"]) + "".join(o["text"])
            out[-1] = dict(out[-1], text=text.splitlines(keepends=True))
        else:
            out.append(o)
    return out


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


def estimate(sections: list[str], scale: str) -> dict[str, tuple[float | None, float | None]]:
    """Section -> (seconds, peak GB) on 2 cores, from the committed run records (:func:`hepkg.summary.expected`:
    the README's numbers). In a checkout they are read as committed at HEAD: an interrupted run has already
    replaced some raw tables in the working tree with its partial ones."""
    with _as_committed(sections) as committed:
        found = summary.expected([summary.section_row(committed / s) for s in sections], scale)
    return {s: found.get(s, (None, None)) for s in sections}


@contextlib.contextmanager
def _as_committed(sections: list[str]):
    """A folder holding ``sections``' results as committed at HEAD (exported by git into a temporary folder);
    the results folder itself where there is no git checkout or a section is not committed."""
    import subprocess

    folder = paths.committed()
    with tempfile.TemporaryDirectory(prefix="hepkg-committed-") as tmp:
        exported = []
        for s in sections if paths.CHECKOUT else ():
            try:
                archive = subprocess.run(["git", "archive", "HEAD", "--", f"artifacts/{s}"], cwd=folder.parent,
                                         capture_output=True, check=True).stdout
                subprocess.run(["tar", "-x", "-C", tmp], input=archive, capture_output=True, check=True)
                exported.append(s)
            except (OSError, subprocess.CalledProcessError):
                break
        yield pathlib.Path(tmp, "artifacts") if sections and exported == sections else folder


def plan_message(sections: list[str], scale: str, estimates: dict, root: pathlib.Path) -> str:
    """What the run is about to do: its length, its peak memory and where it writes, before it starts."""
    known = [v for v, _ in estimates.values() if v is not None]
    unknown = [s for s, (v, _) in estimates.items() if v is None]
    peaks = {s: gb for s, (_, gb) in estimates.items() if gb}
    text = (f"SCALE={scale}: {len(sections)} notebook(s), {summary.duration(sum(known)) if known else 'time unknown'}"
            f" of computation on 2 cores" + (f" (unknown for {', '.join(unknown)})" if known and unknown else ""))
    if peaks:
        text += "; peak memory " + ", ".join(f"{gb} GB ({s})" for s, gb in peaks.items())
    if scale != "quick":
        text += ". An interrupted run resumes where it stopped"
    return f"{text}.\n{where_message(root, before=True)}"


def where_message(root: pathlib.Path, before: bool) -> str:
    """Where the results go (before the run) or went (after it), and whether they replace the committed ones."""
    if paths.is_committed(root):
        return (f"{'Writing into' if before else 'Wrote into'} {root}: the committed results, which this run "
                f"{'replaces' if before else 'replaced'}" + ("; `git diff --stat artifacts` shows what changed."
                                                              if paths.CHECKOUT and not before else "."))
    return (f"{'Writing into' if before else 'Results are in'} {root} (the committed results in {paths.committed()} "
            f"are left as they are).")


def computed_scale(section: str, artifact_root: pathlib.Path) -> str | None:
    """The scale a section's committed raw tables were computed at (None: it has none)."""
    path = artifact_root / section / "raw" / "provenance.json"
    return json.loads(path.read_text())["scale"] if path.is_file() else None


def results_folder(args) -> pathlib.Path:
    """The folder a run writes: --artifacts; the committed results for a render (it rebuilds them from their own
    raw tables), at the committed scale or with --overwrite; else artifacts/_<scale>/ (:func:`hepkg.paths.results`).
    A non-default scale aimed at the committed results without --overwrite is refused."""
    if args.artifacts:
        root = pathlib.Path(args.artifacts)
    elif args.render_only or args.overwrite:
        root = paths.committed()
    else:
        root = paths.results(args.scale)
    if (not args.render_only and args.scale != paths.COMMITTED_SCALE and paths.is_committed(root)
            and not args.overwrite):
        raise SystemExit(f"{root} holds the committed results of the {paths.COMMITTED_SCALE} scale: a {args.scale} run "
                         f"there would replace them. Leave --artifacts out (it then writes {paths.results(args.scale)}),"
                         f" or add --overwrite (make reproduce ... OVERWRITE=1) to replace them on purpose")
    return paths.artifacts(base=root)


def notebook_folder_parameter(root: pathlib.Path, scale: str | None, notebook: pathlib.Path) -> str | None:
    """``ARTIFACT_DIR`` for a notebook: None where its own default (:func:`hepkg.paths.results`) is ``root``, else
    ``root`` relative to the notebook inside the checkout, so that no machine path enters an executed copy."""
    if paths.CHECKOUT and paths.results(scale).resolve() == root.resolve():  # installed: the kernel's cwd differs
        return None
    if paths.CHECKOUT and root.resolve().is_relative_to(paths.ROOT):
        return os.path.relpath(root.resolve(), notebook.parent.resolve())
    return str(root.resolve())


def record_tables(args) -> int:
    """``--record-tables``: :func:`hepkg.bench.raw.record_tables` for each selected section of the results folder
    whose provenance has no record yet, at the current commit; the files must be exactly as committed."""
    import subprocess

    from hepkg.bench.raw import record_tables as record
    from hepkg.bench.sysinfo import git_state

    root = pathlib.Path(args.artifacts) if args.artifacts else paths.committed()
    revision = git_state()["revision"]
    for nb in notebooks(args.only.split(",") if args.only else None, args.notebooks):
        folder = root / section_of(nb) / "raw"
        if not (folder / "provenance.json").is_file() or "tables" in json.loads((folder / "provenance.json").read_text()):
            continue
        status = subprocess.run(["git", "status", "--porcelain", "--", "."], cwd=folder, capture_output=True,
                                text=True)
        if revision is None or status.returncode or status.stdout.strip():
            raise SystemExit(f"{folder} is not as committed ({status.stdout.strip() or status.stderr.strip()}): "
                             "record tables only from committed files")
        tables = record(folder, revision)["tables"]
        print(f"{folder}: recorded {len(tables)} tables as committed at {revision[:12]}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Execute the hepkg notebooks with papermill.")
    parser.add_argument("--scale", choices=SCALES, default="default")
    parser.add_argument("--only", help="comma-separated sections (e.g. spmv,gemm)")
    parser.add_argument("--artifacts", help="results folder (default: artifacts/ at the default scale, "
                                            "artifacts/_<scale>/ at the others; installed: ./artifacts)")
    parser.add_argument("--overwrite", action="store_true",
                        help="write a non-default scale into artifacts/, replacing the committed results")
    parser.add_argument("--notebooks", help=f"notebook folder (default: the checkout's notebooks/, ${paths.NOTEBOOKS_ENV})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--executor", choices=("inline", "process", "dask"), default="inline",
                        help="how experiment grids run")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--scheduler", help="existing Dask scheduler, tcp://host:port (implies --executor dask)")
    parser.add_argument("--timeout", type=int, default=None, help="per-cell timeout in seconds")
    parser.add_argument("--render-only", action="store_true",
                        help="rebuild tables, figures and claims from the committed raw tables, computing nothing")
    parser.add_argument("--record-tables", action="store_true",
                        help="record the row counts and hashes of raw tables computed before hepkg recorded them "
                             "(the record says so, and the commit), then stop")
    args = parser.parse_args(argv)
    if args.record_tables:
        return record_tables(args)

    if args.notebooks:  # the summary lists every notebook of this folder too
        os.environ[paths.NOTEBOOKS_ENV] = str(pathlib.Path(args.notebooks).resolve())
    selected = notebooks(args.only.split(",") if args.only else None, args.notebooks)
    root = results_folder(args)
    executor = "dask" if args.scheduler else args.executor
    readme = summary.default_readme(root)
    parameters = dict(SCALE=args.scale, SEED=args.seed, EXECUTOR=executor, WORKERS=args.workers,
                      SCHEDULER=args.scheduler, RENDER_ONLY=args.render_only)
    if not args.render_only:
        sections = [section_of(nb) for nb in selected]
        estimates = estimate(sections, args.scale)
        print(plan_message(sections, args.scale, estimates, root), flush=True)
    rows = []
    for i, nb in enumerate(selected, 1):
        section = section_of(nb)
        if args.render_only:
            parameters["SCALE"] = computed_scale(section, root)
            if parameters["SCALE"] is None:  # said, and not a failure: the summary's row says it was never computed
                print(f"[{i}/{len(selected)}] {nb.name}: not computed (no raw tables in {root / section / 'raw'}); "
                      f"nothing to render", flush=True)
                continue
        parameters["ARTIFACT_DIR"] = notebook_folder_parameter(root, parameters["SCALE"], nb)
        what = "rendering" if args.render_only else f"computing, {summary.duration(estimates[section][0])}"
        print(f"[{i}/{len(selected)}] {nb.name} ({what}, scale {parameters['SCALE']}) ...", flush=True)
        row = run_notebook(nb, parameters, root, args.timeout)
        print(f"    {row['status']} in {row['seconds']} s; claims: "
              + ", ".join(f"{row[summary.COLUMNS[s]]} {s}" for s in STATUSES) + f" {row['error']}", flush=True)
        rows.append(row)
    summary.write_all(root, readme)
    print("\n" + (root / "summary.md").read_text())
    if not args.render_only:
        print(where_message(root, before=False), flush=True)
    return int(any(r["status"] != "ok" for r in rows))


if __name__ == "__main__":
    sys.exit(main())
