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
