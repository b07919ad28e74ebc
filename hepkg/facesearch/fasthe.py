"""FastHE-Search's own C++ (github.com/FastHE-Search/FastHE-Search, the face-search paper's code) beside hepkg's
methods, for ``python -m hepkg.bench.versus fasthe``.

Their ``ImageMatching`` runs unchanged, CPU only (``USE_GPU=OFF``): approach 5, their HyDia
("FastHE-Search_CPU"), and approach 8, their BSGS-Diagonal ("BSGS-Precomp-Opt (CPU)", per-thread accumulators
over the diagonals). :func:`prepare` builds it from their checkout (``--authors`` or ``$HEPKG_AUTHORS_FASTHE``:
``CMakeLists.txt``, ``include/``, ``src/``), once per comparison depth (their ``COMP_DEPTH_VAL``, kappa: depth
1 + kappa), against OpenFHE :data:`OPENFHE_REF` built from ``$HEPKG_OPENFHE_SRC`` (with HEXL where
:func:`hepkg.bench.builds.accelerator` has it), and openfhe-python :data:`OPENFHE_PYTHON_REF` on that same build
from ``$HEPKG_OPENFHE_PYTHON_SRC`` for hepkg's side (the OMR bench's pair: one OpenFHE for every program);
without that checkout hepkg runs the openfhe wheel, and its rows name the module they ran (``openfhe_module``).
Given ``$HEPKG_AUTHORS_HYDIA``, HyDia's own ``ImageMatching`` (:mod:`hepkg.facesearch.authors`) is built on that
same OpenFHE and joins the kappa 10 cases (its comparison's depth) where it builds there.

A run of theirs is ``ImageMatching <dataset> <approach> --keep-serial`` in a scratch folder (their ``serial/``
folders made, their ``latency.csv`` appended there), with ``OUTER_THREADS`` (their parallel loops' team) and
OpenMP's threads and thread limit at the case's threads, on the database :func:`hepkg.facesearch.authors.
write_dataset` writes in their format. Their lines give the membership and index times ("done (wall: ...)"), the
answers and their ``[SETUP_COSTS]`` (key, rotation-key generation, database encryption: their timer starts
after ``GenCryptoContext``, and hepkg's ``keygen_s`` times its keys alone, :attr:`hepkg.he.Context.keygen_s`,
the same span); the peak RSS is the process's own (``wait4``), the disk their encrypted diagonals under
``serial/db_diagonal``. hepkg's side is
:func:`hepkg.facesearch.experiments.measure_here` in a child process on the same database, at the ring their
OpenFHE chooses for that depth (N = 2^15: ``ckks-32768-d9`` at kappa 8, ``-d11`` at kappa 10). Sides alternate,
their order rotated round by round, after a warm-up round; the reference is their HyDia, and hepkg's
BSGS-Diagonal is also set beside their BSGS-Diagonal (:data:`PAIRS`). ``correct``: the membership decision is
right and so are the identified indices (hepkg: the decrypted count within 0.5 of numpy's).
"""
from __future__ import annotations

import dataclasses
import os
import pathlib
import re
import tempfile

from hepkg.bench import builds
from hepkg.bench.builds import Program
from hepkg.bench.child import in_child

from . import authors as A
from .experiments import estimated_peak_bytes, measure_here
from .versus import hepkg_row

__all__ = ["REPO", "ENV", "FILES", "OPENFHE_REF", "OPENFHE_PYTHON_REF", "APPROACHES", "REFERENCE", "PAIRS",
           "Program", "Authors", "prepare", "parse", "run_authors", "versus_cases", "versus_run"]

REPO, ENV, FILES = "FastHE-Search/FastHE-Search", "HEPKG_AUTHORS_FASTHE", ("src/main.cpp", "CMakeLists.txt",
                                                                           "include/exp_approaches.h")
OPENFHE_REF, OPENFHE_PYTHON_REF = "v1.5.1", "v1.5.1.0"     # the OMR bench's OpenFHE (their Dockerfile: v1.4.2)
SOURCES = ("CMakeLists.txt", "include", "src")
#: side -> their approach number
APPROACHES = {"FastHE-Search 5 (HyDia)": 5, "FastHE-Search 8 (BSGS-Diagonal)": 8}
REFERENCE = "FastHE-Search 5 (HyDia)"
HYDIA = "hydia C++ (image_matching)"       # HyDia's own program, at kappa 10
#: sides also set beside another reference side than REFERENCE (hepkg.bench.versus.summarize)
PAIRS = {"bsgs-diagonal": "FastHE-Search 8 (BSGS-Diagonal)"}
METHODS = ("hydia", "hydia-lean", "bsgs-diagonal")
QUANTITIES = ("e2e_s", "identify_s", "rss_gb", "keygen_s")
PARAMS = {8: "ckks-32768-d9", 10: "ckks-32768-d11"}
REPS = 5
KM = 16
ROUND_RECORDS = True       # a case takes up to an hour: each round is kept as it finishes (hepkg.bench.versus)
HEPKG_ALONE = False        # without their checkout the section is skipped (hepkg alone: the facesearch section)
_CASE = re.compile(r"l(\d+) K(\d+) kappa(\d+) threads(\d+)")
_TIME = r"done \(wall: ([0-9.eE+-]+)s\)"
_SETUP = re.compile(r"\[SETUP_COSTS\] KeyGen=([0-9.]+)s RotKeyGen=([0-9.]+)s DBEncrypt=([0-9.]+)s")
_SERIAL = ("db", "db_blind", "db_diagonal", "db_hers")


@dataclasses.dataclass(frozen=True)
class Authors:
    """Their builds by kappa (:func:`prepare`), ``python``: the folder holding an ``openfhe`` module built against
    their OpenFHE (None: hepkg runs the wheel), ``hepkg_build``: that module's build, ``hydia``: HyDia's own
    ``ImageMatching`` on the same OpenFHE (:mod:`hepkg.facesearch.authors`; None without its checkout)."""

    programs: dict
    python: pathlib.Path | None = None
    hepkg_build: str | None = None
    hydia: A.Authors | None = None


def prepare(checkout) -> Authors:
    """Their program built (cached) for kappa 8 and 10 against OpenFHE :data:`OPENFHE_REF` from
    ``$HEPKG_OPENFHE_SRC``, and openfhe-python :data:`OPENFHE_PYTHON_REF` on that build where
    ``$HEPKG_OPENFHE_PYTHON_SRC`` is given (else it says so, and hepkg runs the wheel)."""
    programs = {}
    for kappa in PARAMS:
        lib, prog = builds.against_openfhe(f"fasthe-search-k{kappa}", checkout, OPENFHE_REF, paths=SOURCES,
                                           with_hexl=True, options=dict(USE_GPU="OFF", COMP_DEPTH_VAL=str(kappa)))
        programs[kappa] = Program(prog.root / "build" / "ImageMatching", lib.prefix / "lib",
                                  f"{prog.root.name} + {lib.root.name}")
    hydia = _hydia(lib)
    src = os.environ.get(builds.OPENFHE_PYTHON_ENV)
    if not src:
        print(f"for OpenFHE {OPENFHE_REF} on hepkg's side too: {builds.clone_hint(builds.OPENFHE_PYTHON_REPO)} and "
              f"set {builds.OPENFHE_PYTHON_ENV} to its path; hepkg runs the openfhe wheel", flush=True)
        return Authors(programs, hydia=hydia)
    return Authors(programs, *builds.hepkg_python(src, OPENFHE_PYTHON_REF, lib), hydia)


def _hydia(lib) -> A.Authors | None:
    """HyDia's own ``ImageMatching`` (``$HEPKG_AUTHORS_HYDIA``) built against the OpenFHE build ``lib``, or None
    (saying why: no checkout, or it does not build on that version; it pins v1.2.3)."""
    checkout = os.environ.get(A.ENV)
    if not checkout:
        print(f"HyDia's own C++ not run: git clone https://github.com/{A.REPO} and set {A.ENV}", flush=True)
        return None
    try:
        prog = builds.program("hydia", checkout, deps=[lib], paths=A.SOURCES)
    except builds.BuildError as exc:
        print(f"HyDia's own C++ not run: it does not build on {lib.root.name} ({exc})", flush=True)
        return None
    return A.Authors(prog.root / "build" / "ImageMatching", lib.prefix / "lib", (lib, prog))


def parse(output: str) -> dict:
    """Their printed query times (seconds), setup costs and answers; ValueError naming a missing line."""
    setup = _SETUP.search(output)
    if not setup:
        raise ValueError(f"FastHE-Search's output has no line matching {_SETUP.pattern!r}")
    keygen, rotkeys, enroll = map(float, setup.groups())
    return A.parse(output, _TIME) | dict(keygen_s=keygen + rotkeys, enroll_s=enroll)


def run_authors(program: Program, dataset, approach: int, threads: int) -> dict:
    """One run of their ``program`` (see the module docstring): times, answers, peak RSS, disk."""
    def folders(tmp):
        for sub in _SERIAL:
            (tmp / "serial" / sub).mkdir(parents=True)

    output, _, peak, files = builds.run(program.binary, [pathlib.Path(dataset).resolve(), approach, "--keep-serial"],
                                        libdir=program.libdir, threads=threads, thread_limit=True, setup=folders,
                                        variables=dict(OUTER_THREADS=str(threads)))
    return parse(output) | dict(rss_gb=peak / 1e9, disk_gb=sum(v for f, v in files.items()
                                                                if f.startswith("serial/db_diagonal/")) / 1e9)


def versus_cases(scale: str) -> list[str]:
    """``'l512 K<K> kappa<kappa> threads<threads>'``: their program reads 512-dimensional vectors; K = 2^10 (one
    group) and 2^15 (two), kappa 8 and 10, at one and two OpenMP threads; quick: K = 2^10 at kappa 8, two threads."""
    if scale == "quick":
        return ["l512 K1024 kappa8 threads2"]
    return [f"l512 K{K} kappa{kappa} threads{th}" for th in (1, 2) for kappa in (8, 10) for K in (1 << 10, 1 << 15)]


def _measure_naming_module(config: dict) -> list[dict]:
    """:func:`hepkg.facesearch.experiments.measure_here`, each row naming the ``openfhe`` module it ran, its
    encoding path and whether its calls released the interpreter lock (:func:`hepkg.he.backends.openfhe.binding`)."""
    from hepkg.he.backends.openfhe import binding

    return [r | binding() for r in measure_here(config)]


def _hepkg(method: str, l: int, K: int, kappa: int, threads: int, seed: int, python) -> dict:
    cfg = dict(backend="openfhe", params=PARAMS[kappa], method=method, K=K, Km=KM, l=l, kappa=kappa, seed=seed,
               reps=1, warmup=0, workers=1, omp_threads=threads, identify=True, absent=False)
    (r,) = in_child(_measure_naming_module, cfg, estimated_peak_bytes(cfg), threads, python_path=python)
    row = hepkg_row(r)
    return row if r["status"] != "measured" else row | dict(openfhe_module=r["openfhe_module"],
                                                         encode_path=r["encode_path"], call_path=r["call_path"],
                                                         params=PARAMS[kappa])


def _theirs(program: Program, dataset, approach: int, matches, threads: int) -> dict:
    return A.as_row(run_authors(program, dataset, approach, threads), matches) | dict(build=program.build)


def _hydias(hydia: A.Authors, dataset, matches, threads: int) -> dict:
    return A.as_row(A.run_authors(hydia, dataset, threads), matches) | dict(
        build=" + ".join(b.root.name for b in hydia.built))


def versus_run(case: str, authors: Authors | None = None, *, reps: int, warmup: int = 1, seed: int = 0,
               rotate: int = 0):
    """One row per kept run of each side on ``case`` (``authors``: :func:`prepare`'s builds, or None: hepkg's
    methods alone), ``warmup`` rounds first; the sides' order rotated by ``rotate`` and then round by round.
    Every side runs at the case's OpenMP threads."""
    import pandas as pd

    from hepkg.datasets.faces import synthetic_database

    l, K, kappa, threads = (int(x) for x in _CASE.fullmatch(case).groups())
    inst = synthetic_database(K, KM, l, seed)
    python = None if authors is None else authors.python
    hepkg_build = "openfhe wheel" if python is None else authors.hepkg_build
    rows = []
    with tempfile.TemporaryDirectory(prefix="hepkg-faces-dataset-") as tmp:
        sides = {m: (lambda m=m: _hepkg(m, l, K, kappa, threads, seed, python) | dict(build=hepkg_build))
                 for m in METHODS}
        if authors is not None:
            dataset = f"{tmp}/dataset.dat"
            A.write_dataset(dataset, inst.database, inst.query)
            for side, approach in APPROACHES.items():
                sides[side] = (lambda a=approach: _theirs(authors.programs[kappa], dataset, a, list(inst.matches),
                                                          threads))
            if authors.hydia is not None and kappa == 10:          # their comparison's depth
                sides[HYDIA] = lambda: _hydias(authors.hydia, dataset, list(inst.matches), threads)
        names = list(sides)
        for rnd in range(warmup + reps):
            turn = (rotate + rnd) % len(names)
            for name in names[turn:] + names[:turn]:
                row = sides[name]()
                if rnd >= warmup:
                    rows.append(dict(side=name, rep=rnd - warmup, omp_threads=threads) | row)
    return pd.DataFrame(rows).assign(case=case)
