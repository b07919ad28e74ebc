"""The device pipelines measured on a GPU one unit per call, resumable across calls (``scripts/gpu_facesearch.sh``).

A GPU is lent only at times and for minutes, so Tables 7-8 fill across runs: a unit is one K of Tables 7-8
(``K1024``: every variant at K = 2^10, ...) or the stream pool's overlap (``streams``). ``python -m
hepkg.facesearch.gpu_run --out DIR`` measures the first unit of :data:`PLAN` that is complete neither in the
committed folder (``artifacts/facesearch_gpu/device/``) nor in DIR, writing its rows to ``DIR/<unit>.jsonl``
as each finishes and its record to ``DIR/<unit>.json`` (machine, device, revision, configuration, start and end,
``complete`` once every round is kept). Copy DIR's files into the committed folder and commit them: the next
call moves on. The notebook's compute reads the complete units (:func:`load`).

At the paper's sizes (ckks-32768-d9, l = 512, kappa 8, Table 7's Km) with 5 interleaved rounds after one
warm-up; ``--params``, ``--l``, ``--Km``, ``--reps``, ``--warmup``, ``--insecure`` and ``--plan`` make the
same runs at a toy ring (the tests).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import signal
import sys
import time

import numpy as np

from hepkg import atomic, paths

from .gpu import VARIANTS

__all__ = ["PLAN", "PAPER_RUN", "STREAMS_K", "committed", "complete_units", "next_unit", "unit_config", "run_unit",
           "load", "main"]

#: the units, in the order they are measured: K = 2^10 first (one group: the pipelines' own speed), the stream
#: overlap, then the larger databases
PLAN = ("K1024", "streams", "K32768", "K65536", "K131072")
#: the paper's GPU runs (Sec. 6.4, Tables 7-8): its ring and depth for kappa 8, l = 512
PAPER_RUN = dict(params="ckks-32768-d9", l=512, kappa=8, reps=5, warmup=1, insecure=False, seed=0)
#: the database the stream overlap is measured on: two groups at the paper's ring
STREAMS_K = 2 ** 15


def committed() -> pathlib.Path:
    """The committed GPU measurements (not created here)."""
    return paths.ROOT / "artifacts" / "facesearch_gpu" / "device"


def _record(folder: pathlib.Path, unit: str) -> dict | None:
    path = pathlib.Path(folder) / f"{unit}.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def complete_units(*folders) -> set[str]:
    """The units whose record in one of ``folders`` says ``complete``."""
    out = set()
    for folder in folders:
        for path in sorted(pathlib.Path(folder).glob("*.json")) if folder and pathlib.Path(folder).is_dir() else ():
            rec = _record(path.parent, path.stem)
            if isinstance(rec, dict) and rec.get("complete") is True:
                out.add(path.stem)
    return out


def next_unit(plan, *folders) -> str | None:
    """The first unit of ``plan`` complete in none of ``folders`` (None when all are)."""
    done = complete_units(*folders)
    return next((u for u in plan if u not in done), None)


def _K(unit: str) -> int:
    if unit == "streams":
        return STREAMS_K
    if unit.startswith("K") and unit[1:].isdigit() and int(unit[1:]) > 0:
        return int(unit[1:])
    raise ValueError(f"unknown unit {unit!r}: 'streams' or K<database size>, e.g. K1024")


def unit_config(unit: str, base: dict) -> dict:
    """The experiment configuration of ``unit``: ``base`` (:data:`PAPER_RUN` by default) at the unit's K, with
    Table 7's Km there unless ``base`` sets one."""
    from hepkg.reference import FACESEARCH as PAPER

    K = _K(unit)
    table = PAPER.gpu_table()
    km = table[table.K == K].Km
    Km = base.get("Km")
    return dict(base, K=K, Km=Km if Km is not None else int(km.iloc[0]) if len(km) else 16)


def _json(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def run_unit(unit: str, out, base: dict) -> dict:
    """Measure ``unit`` into ``out``: its rows appended to ``<unit>.jsonl`` as they finish, its record written at
    the start (``complete`` False) and at the end (True). The record."""
    from dataclasses import asdict

    from hepkg.bench.sysinfo import git_state, machine_key, system_info

    from . import gpu_experiment
    from .gpu_device import device_info

    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    config = unit_config(unit, base)
    rows_path = out / f"{unit}.jsonl"
    rows_path.unlink(missing_ok=True)   # an earlier, incomplete attempt of this unit in this folder
    started = time.time()
    record = dict(unit=unit, config=config, machine=machine_key(), system=system_info(), git=git_state(),
                  device=asdict(device_info()), xp=os.environ.get("HEPKG_RNS_XP", "numpy"),
                  started=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  complete=False, rows=0)

    def save() -> None:
        atomic.write_text(out / f"{unit}.json", json.dumps(record, indent=1, default=_json) + "\n")

    def on_row(row: dict) -> None:
        with rows_path.open("a") as f:
            f.write(json.dumps(dict(row, unit=unit), default=_json) + "\n")
        record["rows"] += 1
        save()
    save()
    measure = gpu_experiment.measure_streams if unit == "streams" else gpu_experiment.measure
    measure(config, on_row=on_row)
    record.update(complete=True, seconds=round(time.time() - started, 1),
                  finished=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    save()
    return record


def load(folder=None):
    """The rows of every complete unit in ``folder`` (default: the committed one), with each unit's machine,
    device and start: a pandas table (empty when there are none)."""
    import pandas as pd

    folder = pathlib.Path(folder or committed())
    frames = []
    for unit in sorted(complete_units(folder)):
        rec = _record(folder, unit)
        rows = pd.read_json(folder / f"{unit}.jsonl", lines=True, dtype=False)
        frames.append(rows.assign(unit=unit, machine=rec["machine"], started=rec["started"],
                                  gpu=rec["device"]["name"]))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hepkg.facesearch.gpu_run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder the unit's rows and record are written to")
    parser.add_argument("--unit", default="next", help="a unit of --plan, or 'next' (the first not yet complete)")
    parser.add_argument("--plan", default=",".join(PLAN), help="the units in order (comma-separated)")
    parser.add_argument("--committed", default=None, help="the committed measurements (default: the repository's)")
    parser.add_argument("--params", default=PAPER_RUN["params"])
    parser.add_argument("--l", type=int, default=PAPER_RUN["l"])
    parser.add_argument("--Km", type=int, default=None, help="planted matches (default: Table 7's at the unit's K)")
    parser.add_argument("--reps", type=int, default=PAPER_RUN["reps"])
    parser.add_argument("--warmup", type=int, default=PAPER_RUN["warmup"])
    parser.add_argument("--variants", default=",".join(VARIANTS), help="the pipelines measured (comma-separated)")
    parser.add_argument("--insecure", action="store_true", help="toy parameter sets (tests only)")
    parser.add_argument("--tmp", default=None, help="where databases are enrolled (never under --out)")
    args = parser.parse_args(argv)
    plan = [u for u in args.plan.split(",") if u]
    for u in plan:
        _K(u)
    out = pathlib.Path(args.out)
    if args.tmp and pathlib.Path(args.tmp).resolve().is_relative_to(out.resolve()):
        parser.error("--tmp must not lie under --out (a database would be carried back)")
    unit = args.unit
    if unit == "next":
        unit = next_unit(plan, args.committed or committed(), out)
        if unit is None:
            print("every unit of the plan is complete:", ", ".join(plan))
            return 0
    elif unit in complete_units(args.committed or committed()):
        print(f"{unit} is committed complete already; nothing to do")
        return 0
    variants = [v for v in args.variants.split(",") if v]
    if not variants or set(variants) - set(VARIANTS):
        parser.error(f"--variants: choose among {', '.join(VARIANTS)}")
    base = dict(PAPER_RUN, params=args.params, l=args.l, Km=args.Km, reps=args.reps, warmup=args.warmup,
                insecure=args.insecure or PAPER_RUN["insecure"], tmp=args.tmp, variants=variants)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # timeout's TERM: the enrolled databases deleted
    print(f"measuring {unit} into {out}", flush=True)
    record = run_unit(unit, out, base)
    print(f"{unit}: {record['rows']} rows in {record['seconds']} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
