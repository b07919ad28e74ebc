"""Every path hepkg reads or writes, in one place."""
from __future__ import annotations

import os
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def artifacts(section: str | None = None, base: str | os.PathLike | None = None) -> pathlib.Path:
    """``artifacts/`` (or ``base``, or $HEPKG_ARTIFACTS), optionally one section's folder, created."""
    root = pathlib.Path(base or os.environ.get("HEPKG_ARTIFACTS") or ROOT / "artifacts")
    out = root / section if section else root
    out.mkdir(parents=True, exist_ok=True)
    return out


def cache(*parts: str) -> pathlib.Path:
    """hepkg's cache folder ($HEPKG_CACHE, else $XDG_CACHE_HOME/hepkg), created."""
    base = os.environ.get("HEPKG_CACHE") or pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache")) / "hepkg"
    out = pathlib.Path(base, *parts)
    out.mkdir(parents=True, exist_ok=True)
    return out


def shared_data() -> pathlib.Path | None:
    """The ``shared/data`` folder beside the checkout, where present."""
    for cand in (ROOT.parent / "shared" / "data", ROOT / "shared" / "data"):
        if cand.is_dir():
            return cand
    return None


def grid_store(section: str, artifact_dir: str | os.PathLike | None = None) -> pathlib.Path:
    """Where a section's resumable per-configuration results live (never in git).

    With an ``artifact_dir`` (or $HEPKG_ARTIFACTS) other than the repository's ``artifacts/``
    (tests, one-off runs): ``<artifact_dir>/<section>/grid``. Otherwise hepkg's cache, keyed by this machine and the
    code's git revision,
    ``cache("grid", "<machine>-<revision>", section)``: a rerun resumes its own interrupted
    work and never mixes another machine's (or other code's) measurements into its tables.
    """
    artifact_dir = artifact_dir if artifact_dir is not None else os.environ.get("HEPKG_ARTIFACTS")
    if artifact_dir is not None and pathlib.Path(artifact_dir).resolve() != (ROOT / "artifacts").resolve():
        out = pathlib.Path(artifact_dir) / section / "grid"
        out.mkdir(parents=True, exist_ok=True)
        return out
    from hepkg.bench.sysinfo import git_state, machine_key

    git = git_state()
    revision = (git["revision"] or "norev")[:12] + ("-dirty" if git["dirty"] else "")
    return cache("grid", f"{machine_key()}-{revision}", section)
