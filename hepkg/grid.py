"""Experiment grids: many independent configurations, one executor interface, resumable.

``run_grid(fn, configs, store)`` calls ``fn(config)`` for every configuration, in-process,
on a local process pool, or on a Dask cluster, and keeps each result as ``store/<key>.json``
the moment it arrives, so a rerun after an interruption computes only what is missing.
A store file that cannot be used is set aside (renamed, never deleted) and recomputed.
"""
from __future__ import annotations

import concurrent.futures as cf
import datetime
import hashlib
import json
import multiprocessing
import os
import pathlib
import sys
import time
import warnings

import pandas as pd

from . import paths
from .atomic import clean_stale, write_text
from .bench.sysinfo import git_state, machine_key
from .lifeline import end_with
from .progress import Bar

__all__ = ["run_grid", "grid_store", "config_key", "GridError", "GridStoreWarning", "EXECUTORS", "resumed_seconds"]

EXECUTORS = ("inline", "process", "dask")
CONFIG_PREFIX = "config_"
CORRUPT_MARK = ".corrupt-"
_RESUMED = {"seconds": 0.0}


def resumed_seconds() -> float:
    """The seconds earlier sessions spent on the configurations this process loaded from a store instead of
    computing (their records' ``elapsed_s``): what a resumed run adds to its own wall time to give its computation."""
    return _RESUMED["seconds"]


def grid_store(section: str, artifact_dir: str | os.PathLike | None = None) -> pathlib.Path:
    """Where a section's resumable per-configuration results live (never in git).

    With an ``artifact_dir`` (or $HEPKG_ARTIFACTS) other than the repository's ``artifacts/``
    (tests, one-off runs): ``<artifact_dir>/<section>/grid``. Otherwise hepkg's cache, keyed by this machine and the
    code's git revision,
    ``cache("grid", "<machine>-<revision>", section)``: a rerun resumes its own interrupted
    work and never mixes another machine's (or other code's) measurements into its tables.
    """
    artifact_dir = artifact_dir if artifact_dir is not None else os.environ.get("HEPKG_ARTIFACTS")
    if artifact_dir is not None and not paths.is_committed(artifact_dir):
        out = pathlib.Path(artifact_dir) / section / "grid"
        out.mkdir(parents=True, exist_ok=True)
        return out
    git = git_state()
    revision = (git["revision"] or "norev")[:12] + ("-dirty" if git["dirty"] else "")
    return paths.cache("grid", f"{machine_key()}-{revision}", section)


class GridError(RuntimeError):
    """Some configurations raised; ``failures`` lists ``(config, exception)``, ``results`` the rest."""

    def __init__(self, failures: list[tuple[dict, BaseException]], results: pd.DataFrame):
        self.failures = failures
        self.results = results
        lines = [f"  {json.dumps(cfg, sort_keys=True)}: {type(exc).__name__}: {exc}" for cfg, exc in failures]
        super().__init__(f"{len(failures)} configuration(s) failed:\n" + "\n".join(lines))


class GridStoreWarning(UserWarning):
    """A store file could not be used; it was renamed ``<key>.json.corrupt-<UTC time>`` and is recomputed."""


def _fn_name(fn) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


def _key(fn_name: str, config: dict) -> str:
    canonical = json.dumps([fn_name, config], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def config_key(fn, config: dict) -> str:
    """A stable 16-hex-digit key: SHA-256 of ``fn``'s qualified name and ``config`` as canonical JSON."""
    return _key(_fn_name(fn), config)


def _timed(fn, config: dict) -> tuple[list[dict], float]:
    """Run ``fn(config)`` (in a worker), returning its rows as a list of dicts and the seconds taken."""
    start = time.perf_counter()
    out = fn(config)
    elapsed = time.perf_counter() - start
    rows = [out] if isinstance(out, dict) else out
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise TypeError(f"{_fn_name(fn)} must return a dict or a list of dicts, got {type(out).__name__}")
    return rows, elapsed


def _json_scalar(obj):
    """JSON fallback for numpy scalars (anything with ``.item()``)."""
    if hasattr(obj, "item"):
        return obj.item()
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def _outcomes(fn, todo: dict[str, dict], executor: str, workers, scheduler):
    """Yield ``(key, (rows, elapsed) or exception)`` for each configuration in ``todo`` as it finishes."""
    if executor == "inline":
        for key, cfg in todo.items():
            try:
                yield key, _timed(fn, cfg)
            except Exception as exc:
                yield key, exc
    elif executor == "process":
        ctx = multiprocessing.get_context()
        pool = cf.ProcessPoolExecutor(workers, mp_context=ctx, initializer=end_with,
                                      initargs=(os.getpid(), ctx.get_start_method()))
        try:
            futures = {pool.submit(_timed, fn, cfg): key for key, cfg in todo.items()}
            for fut in cf.as_completed(futures):
                exc = fut.exception()
                yield futures[fut], fut.result() if exc is None else exc
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    else:
        from distributed import Client, LocalCluster, as_completed

        cluster = None
        if scheduler is None:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   host="127.0.0.1", dashboard_address=None)
        client = Client(cluster or scheduler)
        try:
            names = {f"{fn.__name__}-{key}": key for key in todo}
            futures = [client.submit(_timed, fn, todo[key], key=name) for name, key in names.items()]
            for fut in as_completed(futures):
                yield names[fut.key], fut.exception() if fut.status == "error" else fut.result()
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def _read(path: pathlib.Path, key: str) -> dict:
    """The record in store file ``path``; ValueError or OSError unless it is a valid record for ``key``."""
    record = json.loads(path.read_text())
    if not isinstance(record, dict) or not isinstance(record.get("fn"), str) \
            or not isinstance(record.get("config"), dict):
        raise ValueError("not an object with an 'fn' string and a 'config' object")
    rows, elapsed = record.get("rows"), record.get("elapsed_s")
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ValueError("'rows' is not a list of objects")
    if isinstance(elapsed, bool) or not isinstance(elapsed, (int, float)):
        raise ValueError("'elapsed_s' is not a number")
    if _key(record["fn"], record["config"]) != key:
        raise ValueError("its fn and config do not hash to its key (edited, or misnamed)")
    return record


def _load_store(store: pathlib.Path, keys) -> tuple[dict[str, dict], int]:
    """The valid records in ``store`` for ``keys``, and how many files were set aside (with a warning)."""
    records, corrupt = {}, 0
    for key in keys:
        path = store / f"{key}.json"
        if not path.exists():
            continue
        try:
            records[key] = _read(path, key)
        except (OSError, ValueError) as exc:  # ValueError: also invalid JSON or UTF-8
            stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
            aside = path.with_name(f"{path.name}{CORRUPT_MARK}{stamp}")
            os.replace(path, aside)
            warnings.warn(f"{path}: {type(exc).__name__}: {exc}; moved to {aside.name}, recomputing",
                          GridStoreWarning, stacklevel=3)
            corrupt += 1
    return records, corrupt


def _frame(configs: list[dict], records: list[dict], rows_only: bool = False) -> pd.DataFrame:
    """One row per result row; columns: config fields (``config_``-prefixed on a clash), row fields, elapsed_s
    (``rows_only``: the row fields alone)."""
    row_cols = list(dict.fromkeys(k for rec in records for row in rec["rows"] for k in row))
    if rows_only:
        return pd.DataFrame([row for rec in records for row in rec["rows"]], columns=row_cols)
    taken = {*row_cols, "elapsed_s"}
    rename = {k: CONFIG_PREFIX + k if k in taken else k for cfg in configs for k in cfg}
    out = []
    for cfg, rec in zip(configs, records):
        fields = {rename[k]: v for k, v in cfg.items()}
        out += [{**fields, **row, "elapsed_s": rec["elapsed_s"]} for row in rec["rows"]]
    return pd.DataFrame(out, columns=[*rename.values(), *row_cols, "elapsed_s"])


def run_grid(fn, configs: list[dict], store, *, executor: str = "inline", workers: int | None = None,
             scheduler: str | None = None, progress: bool = True, desc: str | None = None,
             rows_only: bool = False) -> pd.DataFrame:
    """Run ``fn(config) -> dict | list[dict]`` over ``configs``, resuming from ``store``; return the rows.

    ``fn`` must be a top-level (picklable, importable by the workers) function and each config a
    JSON-serializable dict. Each result is written atomically to ``store/<config_key>.json``
    (config, rows, elapsed seconds, finish time) as soon as it arrives; configurations whose file
    exists are loaded instead of recomputed, and duplicates run once. ``executor``: ``"inline"``
    (a loop in this process), ``"process"`` (a pool of ``workers`` processes) or ``"dask"`` (a
    loopback ``LocalCluster`` of ``workers`` single-threaded processes, or the cluster at
    ``scheduler``, ``tcp://host:port``).

    Returns a DataFrame with one row per result row, in the order of ``configs`` (first
    occurrence): the config's fields (prefixed ``config_`` where a row field has the same name),
    the row's fields and ``elapsed_s`` (``rows_only=True``: the row's fields alone). Configurations that raise leave no file and do not stop
    the others; at the end a ``GridError`` names them and carries the other results.

    Robustness: leftover temporary files of writers killed mid-write are removed from ``store``
    (:func:`hepkg.atomic.clean_stale`); a store file that does not parse, lacks ``fn``, ``config``,
    ``rows`` (a list of objects) or a numeric ``elapsed_s``, or whose fn and config do not hash to its
    key, is renamed ``<key>.json.corrupt-<UTC time>`` with a ``GridStoreWarning`` and recomputed;
    ``"process"`` workers end when this process dies, even by SIGKILL (:func:`hepkg.lifeline.end_with`). The frame's (and the
    ``GridError``'s results') ``attrs["grid"]`` counts configurations:
    ``{"loaded": from the store, "computed": now, "corrupt": files set aside, "failed": raised}``.
    """
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {EXECUTORS}, got {executor!r}")
    if scheduler is not None and executor != "dask":
        raise ValueError(f"scheduler={scheduler!r} needs executor='dask', got {executor!r}")
    store = pathlib.Path(store)
    clean_stale(store)
    unique = {config_key(fn, cfg): cfg for cfg in configs}
    records, corrupt = _load_store(store, unique)
    loaded = len(records)
    _RESUMED["seconds"] += sum(r["elapsed_s"] for r in records.values())
    todo = {key: cfg for key, cfg in unique.items() if key not in records}

    failures = {}
    with Bar(total=len(unique), initial=len(records), desc=desc or fn.__name__, disable=not progress) as bar:
        for key, outcome in _outcomes(fn, todo, executor, workers, scheduler):
            bar.update()
            if isinstance(outcome, BaseException):     # said at once: a long grid goes on with the others
                failures[key] = outcome
                print(f"{desc or fn.__name__}: {json.dumps(todo[key], sort_keys=True)} raised "
                      f"{type(outcome).__name__}: {outcome}", file=sys.stderr, flush=True)
                continue
            rows, elapsed = outcome
            record = {"fn": _fn_name(fn), "config": todo[key], "rows": rows, "elapsed_s": elapsed,
                      "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
            try:
                text = json.dumps(record, indent=1, default=_json_scalar)
            except (TypeError, ValueError) as exc:
                failures[key] = exc
                continue
            write_text(store / f"{key}.json", text)
            records[key] = json.loads(text)

    done = [key for key in unique if key in records]
    frame = _frame([unique[k] for k in done], [records[k] for k in done], rows_only)
    frame.attrs["grid"] = {"loaded": loaded, "computed": len(records) - loaded, "corrupt": corrupt,
                           "failed": len(failures)}
    if failures:
        raise GridError([(unique[k], failures[k]) for k in unique if k in failures], frame)
    return frame
