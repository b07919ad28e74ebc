"""Rounds of a long versus bench kept across sittings, and the section's runs folded from them.

A section with ``ROUND_RECORDS`` keeps each round of a case in the bench's grid store, named by the machine and
hepkg's revision (:func:`hepkg.grid.grid_store`), as the round finishes. A machine here lasts one sitting, and the
next may be another kind, so the rounds are committed under ``artifacts/bench/kept/<machine>-<revision>/bench/``
with the machine's description (:func:`keep`), and the section's runs are folded from every folder (:func:`fold`):
each case whole, its warm-up and every round, from one folder (the newest where a case was run again), so that
every ratio compares sides measured side by side on one machine and one revision. Each row names its ``machine``,
``cpu`` and ``revision``.
"""
from __future__ import annotations

import json
import pathlib
import shutil

__all__ = ["KEPT", "MACHINE", "describe_machine", "keep", "fold"]

KEPT, MACHINE = "kept", "machine.json"
#: a row the harness before 581246f marked "measured" although its side was left out: it kept the side's estimated
#: peak (set only on a run left out) but overwrote its status ("exceeds memory" or "killed")
LEFT_OUT = "left out"


def describe_machine() -> dict:
    """This machine's key (:func:`hepkg.bench.sysinfo.machine_key`) and what it names: host name, CPU model, cores
    and RAM."""
    from .sysinfo import key_of, machine

    described = machine()
    return dict(key=key_of(described)) | described


def _kept(artifacts=None) -> pathlib.Path:
    from hepkg import paths

    return paths.artifacts("bench", artifacts) / KEPT


def _records(store: pathlib.Path, section: str) -> dict[str, dict]:
    """The grid records of ``section`` in a bench store (a kept folder's ``bench/``), by file name."""
    out = {}
    for path in sorted(store.glob("*.json")):
        record = json.loads(path.read_text())
        if record.get("config", {}).get("section") == section:
            out[path.name] = record
    return out


def keep(section: str, artifacts=None) -> pathlib.Path:
    """This machine's rounds of ``section`` in the grid store of this revision, copied to
    ``kept/<machine>-<revision>/bench/`` with ``machine.json`` (:func:`describe_machine`); a round kept in another
    folder byte for byte (a store seeded with it, so that this sitting skips its case) is not copied. A record's
    name is its configuration's, so a round this machine ran anew may share its name with one kept elsewhere: it is
    copied. The folder."""
    from hepkg import atomic
    from hepkg.grid import grid_store

    store = grid_store("bench")
    dest = _kept(artifacts) / store.parent.name
    others = [f / "bench" for f in _kept(artifacts).iterdir() if f != dest] if _kept(artifacts).is_dir() else []
    (dest / "bench").mkdir(parents=True, exist_ok=True)
    for name in _records(store, section):
        data = (store / name).read_bytes()
        if not any((o / name).is_file() and (o / name).read_bytes() == data for o in others):
            shutil.copyfile(store / name, dest / "bench" / name)
    atomic.write_text(dest / MACHINE, json.dumps(describe_machine(), indent=2) + "\n")
    return dest


def _newest(case: str, whole: list[tuple[str, dict, str | None]]) -> tuple[tuple[str, dict], list[str]]:
    """Of the folders that hold ``case`` whole, as (folder, rounds, last round's ``finished``), the one whose last
    round finished last, and the others' names (superseded: a case is run again where the code it measures
    changed). ValueError: two that finished at the same time, or a round with no ``finished``."""
    if len(whole) == 1:
        return whole[0][:2], []
    if any(not finished for *_, finished in whole):
        raise ValueError(f"{case} is whole in {', '.join(f for f, *_ in whole)}, and a round has no finish time")
    ordered = sorted(whole, key=lambda held: held[2])
    if ordered[-1][2] == ordered[-2][2]:
        raise ValueError(f"{case} is whole in {ordered[-1][0]} and {ordered[-2][0]}, both finished "
                         f"{ordered[-1][2]}")
    return ordered[-1][:2], [f for f, *_ in ordered[:-1]]


def fold(section: str, cases: list[str], reps: int, artifacts=None):
    """(runs, info): for each of the section's ``cases`` (its ``versus_cases("default")``), the rows of the kept
    folder that holds it whole (round 0, the warm-up, to ``reps``), each row with ``machine``, ``cpu`` and
    ``revision``; where several folders hold it whole, the one whose last round finished last (:func:`_newest`).
    A row marked "measured" that carries an estimated peak gets its status back as :data:`LEFT_OUT`. ``info``:
    each case's folder, each folder's machine, the rounds left out (cases a folder holds in part) and the folders
    superseded, by case. ValueError: a case no folder holds whole; a folder whose ``machine.json`` does not give
    its key."""
    import pandas as pd

    from .sysinfo import key_of

    rounds = set(range(1 + reps))
    folders = sorted(p for p in _kept(artifacts).iterdir() if p.is_dir()) if _kept(artifacts).is_dir() else []
    held, machines, partial = {}, {}, {}
    for folder in folders:
        machine = json.loads((folder / MACHINE).read_text())
        key, revision = folder.name.split("-", 1)
        if machine.get("key") != key or key_of(machine) != key:
            raise ValueError(f"{folder / MACHINE}: it does not describe machine {key}")
        machines[folder.name] = machine
        by_case, finished = {}, {}
        for record in _records(folder / "bench", section).values():
            case = record["config"]["case"]
            by_case.setdefault(case, {})[record["config"]["round"]] = record["rows"]
            finished.setdefault(case, []).append(record.get("finished"))
        for case, got in by_case.items():
            if set(got) == rounds:
                last = None if None in finished[case] else max(finished[case])
                held.setdefault(case, []).append((folder.name, got, last))
            else:
                partial.setdefault(folder.name, {})[case] = sorted(got)
    missing = [c for c in cases if c not in held]
    if missing:
        raise ValueError(f"{section}: no kept folder holds {', '.join(missing)} whole")
    chosen, superseded = {}, {}
    for case in cases:
        chosen[case], older = _newest(case, held[case])
        if older:
            superseded[case] = older
    rows = []
    for case in cases:
        name, got = chosen[case]
        labels = dict(machine=name.split("-", 1)[0], cpu=machines[name]["cpu"], revision=name.split("-", 1)[1])
        rows += [row | labels for r in sorted(got) for row in got[r]]
    runs = pd.DataFrame(rows)
    lost = (runs.status == "measured") & (runs["estimated_rss_gb"].notna() if "estimated_rss_gb" in runs else False)
    runs.loc[lost, "status"] = LEFT_OUT
    info = dict(cases={c: chosen[c][0] for c in cases}, machines=machines, partial=partial, superseded=superseded,
                restored_status=int(lost.sum()))
    return runs, info
