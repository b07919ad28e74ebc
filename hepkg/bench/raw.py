"""Compute, then render: a section's raw results as committed tidy tables.

A notebook opens ``raw = RawTables(SECTION, ARTIFACT_DIR, render_only=RENDER_ONLY)`` and wraps
every computation whose result it reports: ``df = raw.table("runs", lambda: measure(...))``.

- **Compute** (``render_only=False``): the old ``raw/`` folder is emptied, each table is
  computed, written to ``artifacts/<section>/raw/<name>.csv`` and read back; ``provenance.json``
  records the machine, the git revision, the scale and when.
- **Render** (``render_only=True``, ``make figures``): each table is read from ``raw/``, and
  building any HE context raises, so nothing is recomputed by accident.

Both modes hand the notebook the same frames (read back from the CSV), so tables, figures and
claims rendered later are identical to those of the compute run.
"""
from __future__ import annotations

import datetime
import json
import pathlib

from hepkg import atomic, paths

__all__ = ["RawTables", "RawMissing"]


class RawMissing(FileNotFoundError):
    """Render-only was asked for, but the raw table it needs was never computed."""


class RawTables:
    """The raw tables of one section (see the module docstring)."""

    def __init__(self, section: str, base=None, *, render_only: bool = False, scale: str | None = None):
        from hepkg.he import forbid_contexts

        self.section = section
        self.render_only = bool(render_only)
        self.folder = paths.artifacts(section, base) / "raw"
        forbid_contexts(f"{section} renders from {self.folder} (render-only)" if self.render_only else None)
        if self.render_only:
            if not (self.folder / "provenance.json").is_file():
                raise RawMissing(f"{self.folder} has no raw tables to render from: compute them first "
                                 f"(make reproduce ONLY={section})")
            self.provenance = json.loads((self.folder / "provenance.json").read_text())
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        for old in self.folder.iterdir():  # a compute run never mixes with an earlier one's tables
            if old.is_file():
                old.unlink()
        from hepkg.bench.sysinfo import git_state, machine_key, system_info

        info = system_info()
        self.provenance = dict(section=section, scale=scale, machine=machine_key(), cpu=info.get("cpu"),
                               versions=info.get("versions"), git=git_state(),
                               computed=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
        atomic.write_text(self.folder / "provenance.json", json.dumps(self.provenance, indent=1, default=str) + "\n")

    def _path(self, name: str, suffix: str) -> pathlib.Path:
        path = self.folder / f"{name}{suffix}"
        if self.render_only and not path.is_file():
            raise RawMissing(f"raw table {path} is missing: the committed raw tables come from another version "
                             f"of the notebook; compute again (make reproduce ONLY={self.section})")
        return path

    def table(self, name: str, compute, index=None):
        """The frame ``compute()`` returns (computed now, or read from ``raw/<name>.csv``).

        A named index is stored as columns; ``index`` (column name or list) sets it again."""
        import pandas as pd

        from hepkg.bench.report import _plain_frame

        path = self._path(name, ".csv")
        if not self.render_only:
            atomic.write_text(path, _plain_frame(compute()).to_csv(index=False))
        if not path.read_text().strip():  # a frame without columns (nothing was computed) writes nothing
            return pd.DataFrame()
        df = pd.read_csv(path, keep_default_na=False, na_values=[""])  # only empty cells are missing: "N/A" is a value
        return df.set_index(index) if index is not None else df

    def value(self, name: str, compute):
        """A JSON value ``compute()`` returns (a dict, list or number), stored as ``raw/<name>.json``."""
        path = self._path(name, ".json")
        if not self.render_only:
            atomic.write_text(path, json.dumps(compute(), indent=1, sort_keys=True, default=_json_default) + "\n")
        return json.loads(path.read_text())


def _json_default(obj):
    if hasattr(obj, "tolist"):  # numpy arrays and scalars
        return obj.tolist()
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")
