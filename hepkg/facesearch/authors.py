"""HyDia's own C++ (github.com/n7koirala/image_matching, the face-search paper's baseline), run unchanged.

:func:`prepare` builds their ``ImageMatching`` from their checkout (``$HEPKG_AUTHORS_HYDIA``: the
sources alone, ``CMakeLists.txt``, ``include/`` and ``src/``, since their repository's datasets are
large files) against OpenFHE at the version their Dockerfile pins (:data:`OPENFHE_REF`), from an
openfhe-development checkout (``$HEPKG_OPENFHE_SRC``), cached by :mod:`hepkg.bench.builds`.
:func:`run_authors` runs ``ImageMatching <dataset> 5`` (their diagonal method) in a scratch folder,
where it serializes its keys and encrypted database under ``serial/``, on a database written in
their format (:func:`write_dataset`: the count, the query, one vector a line). Their lines give the
membership and index (identification) times and decisions; the time to their "CKKS scheme set up"
line is their key generation (process start included), from there to "Running Experiments" their
enrollment (encryption and serialization); the peak RSS is the process's own (``wait4``).

Their parallel loops ask for ``MAX_NUM_CORES`` = 48 threads (``num_threads(48)``, hard-coded);
``OMP_THREAD_LIMIT`` caps every team at the run's ``threads`` without changing their code.
"""
from __future__ import annotations

import dataclasses
import os
import pathlib
import re
import subprocess
import tempfile
import time

import numpy as np

from hepkg.bench.versus import MissingCheckout

__all__ = ["REPO", "ENV", "FILES", "OPENFHE_REF", "Authors", "prepare", "write_dataset", "parse", "run_authors"]

REPO, ENV, FILES = "n7koirala/image_matching", "HEPKG_AUTHORS_HYDIA", ("src/main.cpp", "CMakeLists.txt",
                                                                       "include/config.h")
OPENFHE_REPO, OPENFHE_ENV, OPENFHE_REF = "openfheorg/openfhe-development", "HEPKG_OPENFHE_SRC", "v1.2.3"
SOURCES = ("CMakeLists.txt", "include", "src")
APPROACH = 5                      # their "Novel diagonal transform": HyDia
DIM = 512                         # their VECTOR_DIM (config.h)
_TIME = r"done \(([0-9.eE+-]+)s\)"


@dataclasses.dataclass(frozen=True)
class Authors:
    """Their built program: ``binary``, the OpenFHE ``libdir`` it loads, and the builds' records."""

    binary: pathlib.Path
    libdir: pathlib.Path
    builds: tuple = ()


def prepare(checkout) -> Authors:
    """Their ``ImageMatching`` built (cached) against OpenFHE :data:`OPENFHE_REF` from ``$HEPKG_OPENFHE_SRC``;
    MissingCheckout, with the clone command, when that checkout is not given."""
    from hepkg.bench import builds

    src = os.environ.get(OPENFHE_ENV)
    if not src:
        raise MissingCheckout(f"no OpenFHE source to build {REPO} against: "
                              f"{builds.clone_hint(OPENFHE_REPO, OPENFHE_REF, recursive=True)} and set {OPENFHE_ENV} "
                              f"to its path (its third-party/cereal submodule checked out)")
    lib = builds.openfhe(src, OPENFHE_REF)
    prog = builds.program("hydia", checkout, deps=[lib], paths=SOURCES)
    return Authors(prog.root / "build" / "ImageMatching", lib.prefix / "lib", (lib, prog))


def write_dataset(path, database: np.ndarray, query: np.ndarray) -> None:
    """``database`` (K x 512) and ``query`` in their dataset format: K, then the query, then one vector a line."""
    database, query = np.asarray(database, dtype=float), np.asarray(query, dtype=float)
    if database.ndim != 2 or database.shape[1] != DIM or query.shape != (DIM,):
        raise ValueError(f"their program reads {DIM}-dimensional vectors; got a database of shape {database.shape} "
                         f"and a query of shape {query.shape}")
    rows = [" ".join(f"{v:.17g}" for v in row) for row in (query, *database)]
    pathlib.Path(path).write_text(f"{len(database)}\n" + "\n".join(rows) + "\n")


def parse(output: str) -> dict:
    """Their printed query times (seconds) and answers; ValueError naming a missing line."""
    found = {}
    for name, pattern in dict(membership_s=r"Computing membership scenario\.\.\. " + _TIME,
                              identify_s=r"Computing index scenario\.\.\. " + _TIME,
                              member=r"Membership scenario: (true|false)",
                              indices=r"Index scenario: ([^\n]*)").items():
        m = re.search(pattern, output)
        if not m:
            raise ValueError(f"the authors' output has no line matching {pattern!r}")
        found[name] = m.group(1)
    return dict(membership_s=float(found["membership_s"]), identify_s=float(found["identify_s"]),
                member=found["member"] == "true", indices=[int(x) for x in re.findall(r"\d+", found["indices"])])


def run_authors(authors: Authors, dataset, threads: int) -> dict:
    """One run of their program on ``dataset`` (see the module docstring)."""
    env = os.environ | dict(OMP_NUM_THREADS=str(threads), OMP_THREAD_LIMIT=str(threads),
                            LD_LIBRARY_PATH=os.pathsep.join(filter(None, [str(authors.libdir),
                                                                          os.environ.get("LD_LIBRARY_PATH")])))
    with tempfile.TemporaryDirectory(prefix="hepkg-hydia-") as tmp:
        for sub in ("db_baseline", "db_blind", "db_diagonal", "db_hers"):
            (pathlib.Path(tmp) / "serial" / sub).mkdir(parents=True)
        start = time.perf_counter()
        proc = subprocess.Popen([str(authors.binary), str(pathlib.Path(dataset).resolve()), str(APPROACH)], cwd=tmp,
                                env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        lines, marks = [], {}
        for line in proc.stdout:
            lines.append(line)
            for mark in ("CKKS scheme set up", "Running Experiments"):
                if mark in line and mark not in marks:
                    marks[mark] = time.perf_counter() - start
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        output = "".join(lines)
        if proc.returncode:
            raise RuntimeError(f"the authors' ImageMatching exited with {proc.returncode}:\n{output[-2000:]}")
        disk = sum(p.stat().st_size for p in (pathlib.Path(tmp) / "serial" / "db_diagonal").iterdir())
    keygen = marks.get("CKKS scheme set up", float("nan"))
    return parse(output) | dict(keygen_s=keygen, enroll_s=marks.get("Running Experiments", float("nan")) - keygen,
                                rss_gb=usage.ru_maxrss * 1024 / 1e9, disk_gb=disk / 1e9)
