"""Compute, then render: a section's raw results as committed tidy tables.

A notebook opens ``raw = RawTables(SECTION, ARTIFACT_DIR, render_only=RENDER_ONLY)`` and wraps
every computation whose result it reports: ``df = raw.table("runs", lambda: measure(...))``.

- **Compute** (``render_only=False``): the old ``raw/`` folder is emptied, each table is
  computed, written to ``artifacts/<section>/raw/<name>.csv`` and read back; ``provenance.json``
  records the machine, the git revision, the scale, when, and each table's row count and sha256.
- **Render** (``render_only=True``, ``make figures``): each table is read from ``raw/`` after its
  bytes were checked against the row count and sha256 recorded when it was computed (a cut, emptied
  or edited table raises :class:`RawMismatch`, naming it), the scale must be the one computed, and
  building any HE context raises, so nothing is recomputed by accident.

The folder the tables live in is ``paths.results(scale, base)`` (:attr:`RawTables.root`): the
committed ``artifacts/`` at the default scale, ``artifacts/_<scale>/`` at the others unless ``base``
names a folder. ``python -m hepkg.reproduce --record-tables`` records the row counts and hashes of
raw tables computed before they were recorded (:func:`record_tables`, saying so, and at which commit).

Both modes hand the notebook the same frames (read back from the CSV), so tables, figures and
claims rendered later are identical to those of the compute run.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import pathlib

from hepkg import atomic, paths

__all__ = ["RawTables", "RawMissing", "RawMismatch", "record_tables"]

PROVENANCE = "provenance.json"


class RawMissing(FileNotFoundError):
    """Render-only was asked for, but the raw table it needs was never computed."""


class RawMismatch(ValueError):
    """A raw table's bytes differ from what was recorded when it was computed (cut, emptied, edited), or the
    render asked for another scale than the one computed."""


def _fingerprint(path: pathlib.Path) -> dict:
    """A raw file's row count (CSV data rows; None for JSON) and sha256."""
    data = path.read_bytes()
    rows = None
    if path.suffix == ".csv":
        import pandas as pd

        rows = len(pd.read_csv(path, keep_default_na=False, na_values=[""])) if data.strip() else 0
    return dict(rows=rows, sha256=hashlib.sha256(data).hexdigest())


class RawTables:
    """The raw tables of one section (see the module docstring)."""

    def __init__(self, section: str, base=None, *, render_only: bool = False, scale: str | None = None):
        from hepkg.he import forbid_contexts

        self.section = section
        self.render_only = bool(render_only)
        #: the results folder of this run: ``base``, else artifacts/ at the default scale, artifacts/_<scale>/ else
        self.root = paths.results(scale, base)
        self.folder = paths.artifacts(section, self.root) / "raw"
        forbid_contexts(f"{section} renders from {self.folder} (render-only)" if self.render_only else None)
        if self.render_only:
            if not (self.folder / PROVENANCE).is_file():
                raise RawMissing(f"{self.folder} has no raw tables to render from: compute them first "
                                 f"(make reproduce ONLY={section})")
            self.provenance = json.loads((self.folder / PROVENANCE).read_text())
            if scale is not None and self.provenance.get("scale") != scale:
                raise RawMismatch(f"{self.folder} was computed at scale {self.provenance.get('scale')!r}, not "
                                  f"{scale!r}: render it at its own scale (SCALE = {self.provenance.get('scale')!r})")
            if not isinstance(self.provenance.get("tables"), dict):
                raise RawMismatch(f"{self.folder / PROVENANCE} records no row counts and hashes of its tables, so "
                                  f"a damaged table could not be told apart: compute again (make reproduce "
                                  f"ONLY={section}), or record them as they are: python -m hepkg.reproduce --record-tables "
                                  f"--only {section}")
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        for old in self.folder.iterdir():  # a compute run never mixes with an earlier one's tables
            if old.is_file():
                old.unlink()
        from hepkg.bench.sysinfo import git_state, machine_key, system_info

        info = system_info()
        self.provenance = dict(section=section, scale=scale, machine=machine_key(), cpu=info.get("cpu"),
                               versions=info.get("versions"), git=git_state(),
                               computed=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                               tables={}, tables_recorded="as each table was computed")
        self._write_provenance()

    def _write_provenance(self) -> None:
        atomic.write_text(self.folder / PROVENANCE, json.dumps(self.provenance, indent=1, default=str) + "\n")

    def _path(self, name: str, suffix: str) -> pathlib.Path:
        path = self.folder / f"{name}{suffix}"
        if self.render_only and not path.is_file():
            raise RawMissing(f"raw table {path} is missing: the committed raw tables come from another version "
                             f"of the notebook; compute again (make reproduce ONLY={self.section})")
        return path

    def _written(self, path: pathlib.Path) -> None:
        """Record a table just computed (compute), or check it against its record (render)."""
        if not self.render_only:
            self.provenance["tables"][path.name] = _fingerprint(path)
            self._write_provenance()
            return
        recorded = self.provenance["tables"].get(path.name)
        if recorded is None:
            raise RawMismatch(f"raw table {path} has no record in {PROVENANCE}: it was not written by the run that "
                              f"computed this folder; compute again (make reproduce ONLY={self.section})")
        data = path.read_bytes()
        digest, lines = hashlib.sha256(data).hexdigest(), data.count(b"\n")
        if digest != recorded["sha256"]:
            rows = "" if recorded.get("rows") is None else f"; {recorded['rows']} rows were recorded"
            raise RawMismatch(f"raw table {path} does not match what was recorded when it was computed: sha256 "
                              f"{digest[:16]}..., recorded {recorded['sha256'][:16]}... ({len(data)} bytes, "
                              f"{lines} lines{rows}): it was cut, emptied or edited. Restore it "
                              f"(git checkout -- {path.name}, in its folder) or compute again (make reproduce "
                              f"ONLY={self.section}); nothing was rendered from it")

    def table(self, name: str, compute, index=None):
        """The frame ``compute()`` returns (computed now, or read from ``raw/<name>.csv``).

        A named index is stored as columns; ``index`` (column name or list) sets it again."""
        import pandas as pd

        from hepkg.bench.report import _plain_frame

        path = self._path(name, ".csv")
        if not self.render_only:
            atomic.write_text(path, _plain_frame(compute()).to_csv(index=False))
        self._written(path)
        if not path.read_text().strip():  # a frame without columns (nothing was computed) writes nothing
            return pd.DataFrame()
        df = pd.read_csv(path, keep_default_na=False, na_values=[""])  # only empty cells are missing: "N/A" is a value
        return df.set_index(index) if index is not None else df

    def value(self, name: str, compute):
        """A JSON value ``compute()`` returns (a dict, list or number), stored as ``raw/<name>.json``."""
        path = self._path(name, ".json")
        if not self.render_only:
            atomic.write_text(path, json.dumps(compute(), indent=1, sort_keys=True, default=_json_default) + "\n")
        self._written(path)
        return json.loads(path.read_text())


def _json_default(obj):
    if hasattr(obj, "tolist"):  # numpy arrays and scalars
        return obj.tolist()
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def record_tables(folder, revision: str) -> dict:
    """Record, in ``folder/provenance.json``, the row count and sha256 of every raw table in ``folder`` as it is now,
    for tables computed before hepkg recorded them; the record says it was made afterwards, at ``revision``."""
    folder = pathlib.Path(folder)
    path = folder / PROVENANCE
    provenance = json.loads(path.read_text())
    if isinstance(provenance.get("tables"), dict):
        raise ValueError(f"{path} already records its tables ({provenance.get('tables_recorded')}); nothing to do")
    provenance["tables"] = {p.name: _fingerprint(p) for p in sorted(folder.iterdir())
                            if p.is_file() and p.suffix in (".csv", ".json") and p.name != PROVENANCE}
    provenance["tables_recorded"] = (f"afterwards, from the files committed at {revision}: the computation "
                                     f"predates the record")
    atomic.write_text(path, json.dumps(provenance, indent=1, default=str) + "\n")
    return provenance

