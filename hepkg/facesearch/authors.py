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
import pathlib
import re

import numpy as np

from hepkg.bench import builds

__all__ = ["REPO", "ENV", "FILES", "OPENFHE_REF", "Authors", "prepare", "write_dataset", "parse", "run_authors",
           "as_row"]

REPO, ENV, FILES = "n7koirala/image_matching", "HEPKG_AUTHORS_HYDIA", ("src/main.cpp", "CMakeLists.txt",
                                                                       "include/config.h")
OPENFHE_REF = "v1.2.3"
SOURCES = ("CMakeLists.txt", "include", "src")
APPROACH = 5                      # their "Novel diagonal transform": HyDia
DIM = 512                         # their VECTOR_DIM (config.h)
_TIME = r"done \(([0-9.eE+-]+)s\)"


@dataclasses.dataclass(frozen=True)
class Authors:
    """Their built program: ``binary``, the OpenFHE ``libdir`` it loads, and ``built``, the builds."""

    binary: pathlib.Path
    libdir: pathlib.Path
    built: tuple = ()


def prepare(checkout) -> Authors:
    """Their ``ImageMatching`` built (cached) against OpenFHE :data:`OPENFHE_REF` from ``$HEPKG_OPENFHE_SRC``."""
    lib, prog = builds.against_openfhe("hydia", checkout, OPENFHE_REF, paths=SOURCES)
    return Authors(prog.root / "build" / "ImageMatching", lib.prefix / "lib", (lib, prog))


def write_dataset(path, database: np.ndarray, query: np.ndarray) -> None:
    """``database`` (K x 512) and ``query`` in their dataset format: K, then the query, then one vector a line."""
    database, query = np.asarray(database, dtype=float), np.asarray(query, dtype=float)
    if database.ndim != 2 or database.shape[1] != DIM or query.shape != (DIM,):
        raise ValueError(f"their program reads {DIM}-dimensional vectors; got a database of shape {database.shape} "
                         f"and a query of shape {query.shape}")
    rows = [" ".join(f"{v:.17g}" for v in row) for row in (query, *database)]
    pathlib.Path(path).write_text(f"{len(database)}\n" + "\n".join(rows) + "\n")


def parse(output: str, time: str = _TIME) -> dict:
    """Their printed query times (seconds) and answers; ValueError naming a missing line. ``time``: how their
    program prints a phase's seconds (FastHE-Search's later ``main.cpp``: "done (wall: ...s)")."""
    found = {}
    for name, pattern in dict(membership_s=r"Computing membership scenario\.\.\. " + time,
                              identify_s=r"Computing index scenario\.\.\. " + time,
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
    def folders(tmp):
        for sub in ("db_baseline", "db_blind", "db_diagonal", "db_hers"):
            (tmp / "serial" / sub).mkdir(parents=True)

    marks = ("CKKS scheme set up", "Running Experiments")
    output, seen, peak, files = builds.run(authors.binary, [pathlib.Path(dataset).resolve(), APPROACH],
                                           libdir=authors.libdir, threads=threads, thread_limit=True, marks=marks,
                                           setup=folders)
    keygen = seen.get(marks[0], float("nan"))
    return parse(output) | dict(keygen_s=keygen, enroll_s=seen.get(marks[1], float("nan")) - keygen,
                                rss_gb=peak / 1e9,
                                disk_gb=sum(v for f, v in files.items() if f.startswith("serial/db_diagonal/")) / 1e9)


def as_row(run: dict, matches) -> dict:
    """A run of a face-search program (:func:`run_authors`, FastHE-Search's alike) as a bench row: the query
    times, memory, setup and disk, and ``correct``: the membership decision and the identified indices are right."""
    return dict(status="measured", e2e_s=run["membership_s"], identify_s=run["identify_s"], rss_gb=run["rss_gb"],
                keygen_s=run["keygen_s"], enroll_s=run["enroll_s"], disk_gb=run["disk_gb"],
                correct=run["member"] == (len(matches) > 0) and sorted(run["indices"]) == sorted(matches))
