"""Every path hepkg reads or writes, in one place.

In a checkout, ``ROOT`` is the repository: its ``notebooks/`` and its ``artifacts/``, the committed
results of the default reproduction. Installed with ``pip install .`` (no repository around the
package), results go to ``./artifacts`` under the current directory (or wherever ``--artifacts``,
``ARTIFACT_DIR`` or $HEPKG_ARTIFACTS says), and the notebooks are wherever $HEPKG_NOTEBOOKS or
``--notebooks`` says: they are not part of the package.
"""
from __future__ import annotations

import os
import pathlib
import re

PACKAGE = pathlib.Path(__file__).resolve().parent
ROOT = PACKAGE.parent
#: True when hepkg runs from its repository (an editable install or the source tree), not from site-packages
CHECKOUT = (ROOT / "pyproject.toml").is_file() and (ROOT / "notebooks").is_dir()
NOTEBOOKS_ENV = "HEPKG_NOTEBOOKS"
ARTIFACTS_ENV = "HEPKG_ARTIFACTS"
#: the scale whose results are committed under ``artifacts/``: only it writes there unless told to
COMMITTED_SCALE = "default"


def committed() -> pathlib.Path:
    """The results folder a run writes by default: the repository's ``artifacts/`` in a checkout, else
    ``./artifacts`` under the current directory."""
    return ROOT / "artifacts" if CHECKOUT else pathlib.Path.cwd() / "artifacts"


def section_of(notebook: str | os.PathLike) -> str:
    """``10_spmv.ipynb`` -> ``spmv``; ``31_facesearch_gpu.ipynb`` -> ``facesearch_gpu``."""
    return re.sub(r"^\d+_", "", pathlib.Path(notebook).stem)


def notebooks(folder: str | os.PathLike | None = None) -> pathlib.Path:
    """The folder of the notebooks: ``folder``, else $HEPKG_NOTEBOOKS, else the checkout's ``notebooks/``."""
    chosen = folder or os.environ.get(NOTEBOOKS_ENV) or (ROOT / "notebooks" if CHECKOUT else None)
    if chosen is None:
        raise FileNotFoundError(
            "the notebooks are not part of the installed package: they live in the repository's notebooks/ "
            f"folder. Clone the repository (and run there), or name the folder with --notebooks DIR or "
            f"${NOTEBOOKS_ENV}")
    out = pathlib.Path(chosen)
    if not out.is_dir():
        raise FileNotFoundError(f"notebook folder {out} does not exist")
    return out


def artifacts(section: str | None = None, base: str | os.PathLike | None = None) -> pathlib.Path:
    """``base`` (else $HEPKG_ARTIFACTS, else :func:`committed`), optionally one section's folder, created."""
    root = pathlib.Path(base or os.environ.get(ARTIFACTS_ENV) or committed())
    out = root / section if section else root
    out.mkdir(parents=True, exist_ok=True)
    return out


def results(scale: str | None, base: str | os.PathLike | None = None) -> pathlib.Path:
    """Where a notebook at ``scale`` writes: ``base`` when given (else $HEPKG_ARTIFACTS); the committed folder at
    the committed scale; ``<committed>/_<scale>/`` at any other, so that a quick run (or a notebook opened in
    JupyterLab at its default ``SCALE = "quick"``) never replaces the committed results."""
    if base or os.environ.get(ARTIFACTS_ENV):
        return pathlib.Path(base or os.environ[ARTIFACTS_ENV])
    return committed() if scale in (None, COMMITTED_SCALE) else committed() / f"_{scale}"


def is_committed(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` is the committed results folder (what ``git status`` would show changed)."""
    return pathlib.Path(folder).resolve() == committed().resolve()


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
