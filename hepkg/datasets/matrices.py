"""Sparse matrices by name: SuiteSparse and SNAP matrices, Mycielski graphs.

:func:`load_matrix` looks, in order, at

1. ``name`` itself when it is the path of a file;
2. ``mycielskian<k>``: generated exactly (:mod:`hepkg.datasets.mycielski`), never downloaded;
3. the data folders: ``data_dir``, then $HEPKG_DATA, then the shared data's ``suitesparse``
   folder (and its ``snap_raw`` SNAP edge lists) where present, then the download cache
   ``hepkg.paths.cache("matrices")``; in each, ``<name>.mtx``, ``<name>.mtx.gz``,
   ``<name>/<name>.mtx``, ``<name>.tar.gz``, ``<name>.txt`` and ``<name>.txt.gz``
   (SNAP edge lists, converted);
4. a download of ``<base>/<Group>/<name>.tar.gz`` from the SuiteSparse collection (base URL:
   ``base_url``, else $HEPKG_SUITESPARSE_URL, else https://sparse.tamu.edu/MM) into the cache,
   sha256 recorded and verified (:mod:`hepkg.datasets.fetch`). The group comes from
   ``"Group/name"`` or the table :data:`SUITESPARSE_GROUPS` (SNAP graphs are the ``SNAP`` group).

Offline and not found, :class:`MatrixNotFound` names every place searched. Names match
exactly: a variant such as ``ca-AstroPh_LCC_VARIANT`` is loaded only under its own name.
Matrices come back as canonical CSR (Matrix Market symmetric storage expanded).

Bad files: a download enters the cache only once it opens as a gzip tarball holding
``<name>/<name>.mtx`` that parses whole (:class:`~hepkg.datasets.fetch.CorruptDownload`
otherwise, nothing cached); a file that fails to parse later raises :class:`CorruptMatrixFile`
naming it and the fix; a pinned ``sha256`` is checked against whichever file is loaded.
Every file is parsed in a forked child (:func:`hepkg.he.guard.isolated`): scipy 1.15.3's
``mmread`` (fast_matrix_market) dies with SIGSEGV on a last line cut short without its newline
(``1.5E-``, ``1.5E``, ``2 `` ...), an upstream defect that would otherwise take the interpreter down.
"""
from __future__ import annotations

import gzip
import json
import os
import pathlib
import re
import tarfile
import urllib.error
import zipfile
import zlib

import scipy.io
import scipy.sparse as sp

from hepkg import paths
from hepkg.he.errors import CorruptedData
from hepkg.he.guard import isolated

from . import fetch as dl
from .mycielski import mycielskian, mycielskian_size
from .snap import read_edge_list

__all__ = ["load_matrix", "list_matrices", "read_matrix", "search_dirs", "MatrixNotFound", "CorruptMatrixFile",
           "SUITESPARSE_GROUPS", "DATA_ENV"]

DATA_ENV = "HEPKG_DATA"

_HB = "arc130 494_bus fs_541_4 jpwh_991 bcspwr06 watt_2 psmigr_1 psmigr_2 psmigr_3 bcsstm21"
_SNAP = ("ca-GrQc ca-HepTh ca-HepPh ca-AstroPh ca-CondMat as-caida email-Enron cit-HepTh cit-HepPh "
         "p2p-Gnutella31")
#: SuiteSparse group of the CSSC paper's matrices (where known); others need "Group/name".
SUITESPARSE_GROUPS = {
    **{n: "HB" for n in _HB.split()}, **{n: "SNAP" for n in _SNAP.split()},
    **{f"stat96v{i}": "Meszaros" for i in (1, 4, 5)},
    **{f"nemeth{i}": "Nemeth" for i in range(20, 27)},
    "msc10848": "Boeing", "ct20stif": "Boeing", "ship_001": "DNVS", "tsyl201": "DNVS",
    "TSC_OPF_1047": "IPSO", "TSOPF_RS_b300_c1": "TSOPF", "heart1": "Norris", "ramage02": "GHS_psdef",
    "pkustk07": "Chen", "smt": "TKK", "raefsky3": "Simon", "raefsky4": "Simon",
}


class MatrixNotFound(FileNotFoundError):
    """No local copy, and no download possible; the message lists every place searched."""


class CorruptMatrixFile(dl.DatasetError):
    """A matrix file does not parse (truncated, not Matrix Market, not gzip); the message says what to do."""


#: what reading a damaged file raises, by format
#: what a malformed file raises in the readers: a truncated .npz a BadZipFile, one without a sparse matrix KeyError
_READ_ERRORS = (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, ValueError, IndexError, KeyError, zlib.error)


def search_dirs(data_dir=None) -> list[pathlib.Path]:
    """The data folders searched, in order (existing ones only), ending with the cache."""
    shared = paths.shared_data()
    cands = [data_dir, os.environ.get(DATA_ENV)]
    if shared is not None:
        cands += [shared / "suitesparse", shared / "suitesparse" / "snap_raw"]
    out = []
    for c in cands:
        if c and pathlib.Path(c).is_dir() and pathlib.Path(c) not in out:
            out.append(pathlib.Path(c))
    return out + [paths.cache("matrices")]


_SUFFIXES = (".mtx", ".mtx.gz", ".tar.gz", ".txt", ".txt.gz", ".npz")


def _file_names(name: str) -> list[str]:
    return [f"{name}.mtx", f"{name}.mtx.gz", f"{name}/{name}.mtx", f"{name}.tar.gz", f"{name}.txt", f"{name}.txt.gz"]


def _tar_member(tar: tarfile.TarFile, name: str) -> tarfile.TarInfo:
    wanted = f"{name}/{name}.mtx"
    for member in tar.getmembers():
        if member.name == wanted or member.name.endswith("/" + wanted):
            return member
    raise ValueError(f"{tar.name}: no member {wanted} (has {[m.name for m in tar.getmembers()][:5]})")


def read_matrix(path) -> sp.csr_matrix:
    """Read a .mtx[.gz], a SuiteSparse .tar.gz, a SNAP edge list .txt[.gz] or a scipy .npz file.

    CorruptMatrixFile (naming the file) when it does not parse."""
    path = pathlib.Path(path)
    try:
        return isolated(_read, path, what=str(path), size=path.stat().st_size, timed=False)
    except CorruptMatrixFile:
        raise
    except (CorruptedData,) + _READ_ERRORS as exc:
        raise CorruptMatrixFile(f"{path} does not parse as a matrix ({type(exc).__name__}: {exc}); replace it, or "
                                f"delete it if it is in hepkg's cache ({paths.cache('matrices')}) so that it is "
                                f"downloaded again") from exc


def _read(path: pathlib.Path) -> sp.csr_matrix:
    name = path.name
    if name.endswith(".tar.gz"):
        m = _read_tarball(path, name[:-len(".tar.gz")])
    elif name.endswith((".mtx", ".mtx.gz")):
        m = scipy.io.mmread(path)
    elif name.endswith((".txt", ".txt.gz")):
        m = read_edge_list(path)
    elif name.endswith(".npz"):
        m = sp.load_npz(path)
    else:
        raise CorruptMatrixFile(f"{path}: unknown matrix file type (expected .mtx, .mtx.gz, .tar.gz, .txt, .txt.gz, "
                                f".npz)")
    return _canonical(m)


def _canonical(m) -> sp.csr_matrix:
    """Canonical CSR: duplicates summed, indices sorted."""
    out = sp.csr_matrix(m)
    out.sum_duplicates()
    return out


def _read_tarball(path: pathlib.Path, name: str):
    with tarfile.open(path, "r:gz") as tar:
        return scipy.io.mmread(tar.extractfile(_tar_member(tar, name)))


def _split(name: str) -> tuple[str | None, str]:
    if name.count("/") == 1 and not os.path.exists(name):
        group, base = name.split("/")
        return group, base
    return SUITESPARSE_GROUPS.get(name), name


def load_matrix(name: str, *, data_dir=None, download: bool = True, base_url: str | None = None,
                sha256: str | None = None, progress: bool = True) -> sp.csr_matrix:
    """A matrix by name or path (see the module docstring for the search order).

    ``sha256`` pins the checksum of the file loaded, found locally or downloaded (ChecksumError
    naming it otherwise); ``download=False`` stays offline.
    """
    if os.path.isfile(name):
        dl.verify_cached(name, sha256)
        return read_matrix(name)
    if name.endswith(_SUFFIXES):
        raise MatrixNotFound(f"no matrix file at {os.path.abspath(name)}")
    group, base = _split(name)
    match = re.fullmatch(r"mycielskian(\d+)", base)
    if match:
        return mycielskian(int(match.group(1)))
    searched = []
    cache = paths.cache("matrices")
    for folder in search_dirs(data_dir):
        searched.append(f"{folder}/ ({', '.join(_file_names(base))})")
        for fname in _file_names(base):
            path = folder / fname
            if path.is_file():
                dl.verify_cached(path, sha256)
                return read_matrix(path)
    if os.environ.get(DATA_ENV) is None and data_dir is None:
        searched.append(f"(${DATA_ENV} is not set; set it or pass data_dir= to search another folder)")
    if not download:
        reason = "download disabled"
    elif group is None:
        reason = (f"no SuiteSparse group known for {base!r}: pass 'Group/{base}' "
                  f"(see https://sparse.tamu.edu) to download it")
    else:
        url = dl.suitesparse_url(group, base, base_url)
        parsed = []
        try:
            dl.download(url, cache / f"{base}.tar.gz", sha256=sha256, progress=progress,
                        validate=lambda tmp: parsed.append(_check_tarball(tmp, base)))
            return parsed[-1]
        except (urllib.error.URLError, OSError) as exc:
            reason = f"download of {url} failed: {getattr(exc, 'reason', exc)}"
    raise MatrixNotFound(f"matrix {name!r} not found. Searched:\n  " + "\n  ".join(searched) + f"\nand: {reason}")


def _check_tarball(path: pathlib.Path, name: str) -> sp.csr_matrix:
    """The matrix of ``path``; ValueError unless it is a gzip tarball whose ``<name>/<name>.mtx`` is a
    Matrix Market file that parses whole (in a forked child: see the module docstring)."""
    with open(path, "rb") as fh:
        start = fh.read(64)
    if start[:2] != b"\x1f\x8b":
        looks = "an HTML page" if b"<" in start[:16] else f"{start[:16]!r}..."
        raise ValueError(f"{looks}, not a gzip tarball")
    try:
        with tarfile.open(path, "r:gz") as tar:
            lines = _header_lines(tar.extractfile(_tar_member(tar, name)))
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise ValueError(f"a damaged or truncated gzip tarball ({type(exc).__name__}: {exc})") from None
    if not lines[0].startswith("%%MatrixMarket"):
        raise ValueError(f"{name}/{name}.mtx is not a Matrix Market file")
    try:
        m = isolated(_read_tarball, path, name, what=f"{name}/{name}.mtx", size=path.stat().st_size, timed=False)
    except (CorruptedData,) + _READ_ERRORS as exc:
        raise ValueError(f"{name}/{name}.mtx does not parse whole ({type(exc).__name__}: {exc})") from None
    return _canonical(m)


def _mm_header(path: pathlib.Path) -> dict:
    """rows, cols, stored entries and symmetry from a Matrix Market header (no full read)."""
    if path.name.endswith(".tar.gz"):
        with tarfile.open(path, "r:gz") as tar:
            lines = _header_lines(tar.extractfile(_tar_member(tar, path.name[:-len(".tar.gz")])))
    else:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as fh:
            lines = _header_lines(fh)
    banner, size = lines
    rows, cols, stored = (int(x) for x in size.split()[:3])
    symmetry = banner.split()[-1].lower()
    return dict(rows=rows, cols=cols, stored=stored, symmetry=symmetry,
                nnz=stored if symmetry == "general" else None)


def _header_lines(fh) -> tuple[str, str]:
    banner = fh.readline().decode()
    for raw in fh:
        line = raw.decode().strip()
        if line and not line.startswith("%"):
            return banner, line
    raise ValueError("Matrix Market file without a size line")


def list_matrices(data_dir=None):
    """A pandas table of the matrices available without a download: name, rows, cols, nnz, source, path.

    ``nnz`` counts stored entries after symmetric expansion (from the shared data's
    verification.json where listed, else the header of a general matrix; None otherwise).
    The paper's Mycielski graphs are listed as generated.
    """
    import pandas as pd

    rows, seen = [], set()
    for folder in search_dirs(data_dir):
        verified = {}
        if (folder / "verification.json").exists():
            verified = {pathlib.Path(e["file"]).name: e for e in json.loads((folder / "verification.json").read_text())}
        for path in sorted(folder.iterdir()):
            m = re.fullmatch(r"(.+?)(\.mtx|\.mtx\.gz|\.tar\.gz)", path.name)
            if not m or m.group(1) in seen or m.group(1).endswith("_regenerated"):
                continue
            try:
                info = _mm_header(path)
            except (OSError, ValueError, tarfile.TarError):
                continue
            if path.name in verified:
                info["nnz"] = verified[path.name]["nnz_full"]
            seen.add(m.group(1))
            rows.append(dict(name=m.group(1), **info, source="cache" if folder == paths.cache("matrices") else "local",
                             path=str(path)))
    for k in (12, 13, 14):
        n, nnz = mycielskian_size(k)
        rows.append(dict(name=f"mycielskian{k}", rows=n, cols=n, stored=nnz, symmetry="symmetric", nnz=nnz,
                         source="generated", path=None))
    return pd.DataFrame(rows, columns=["name", "rows", "cols", "nnz", "stored", "symmetry", "source", "path"])
