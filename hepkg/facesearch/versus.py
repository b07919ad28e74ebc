"""HyDia and BSGS-Diagonal, and HyDia's own C++, for ``python -m hepkg.bench.versus facesearch``.

Sides: ``hydia`` (the authors' HyDia as hepkg reimplements it: every product of a group held, their key set;
where its estimated peak does not fit, its rows say 'exceeds memory'), ``hydia-lean`` (the same operations, one
product held at a time), ``bsgs-diagonal`` (the paper's Algorithm 1), all on OpenFHE at the paper's ring
(``ckks-32768-d11``, 128-bit), and, given a checkout of HyDia's code (``$HEPKG_AUTHORS_HYDIA``, built by
:func:`hepkg.facesearch.authors.prepare`), the reference ``hydia C++``: their ``ImageMatching`` on the same
database written in their format, where they support it (l = 512; their comparison is their own, at depth 10 as
kappa = 10). Every run is one process (hepkg's: :func:`hepkg.facesearch.experiments.measure`, a spawned child)
that generates its keys, enrolls the database and answers one membership query and one identification, as their
program does; the sides alternate, their order rotated round by round, after a warm-up round. ``e2e_s`` is the
membership query (Algorithm 7: rotations, similarity with the diagonals read from disk, comparison,
aggregation), ``identify_s`` the identification, ``rss_gb`` the process's peak resident memory, ``keygen_s``
(hepkg's: the keys alone, :attr:`hepkg.he.Context.keygen_s`) and ``enroll_s`` the setup; ``correct``: the
membership decision is right (a member iff a vector matches; hepkg: the decrypted count within 0.5 of numpy's)
and so are the identified indices.
"""
from __future__ import annotations

import os
import re
import tempfile

from . import authors as A

__all__ = ["REFERENCE", "METHODS", "versus_cases", "versus_run", "prepare", "hepkg_row"]

REPO, ENV, FILES = A.REPO, A.ENV, A.FILES
REFERENCE = "hydia C++"
METHODS = ("hydia", "hydia-lean", "bsgs-diagonal")
QUANTITIES = ("e2e_s", "identify_s", "rss_gb", "keygen_s")
PARAMS = "ckks-32768-d11"
REPS = 5
KM = 16
prepare = A.prepare


def versus_cases(scale: str) -> list[str]:
    """``'l<l> K<K> kappa<kappa>'``: one group at l = 512 (their program's least K; hepkg's HyDia, every product
    of the group held, is estimated at 23 GB); quick: l = 128."""
    return ["l128 K1024 kappa8"] if scale == "quick" else ["l512 K1024 kappa10"]


def _hepkg(method: str, l: int, K: int, kappa: int, threads: int, seed: int) -> dict:
    from .experiments import measure

    cfg = dict(backend="openfhe", params=PARAMS, method=method, K=K, Km=KM, l=l, kappa=kappa, seed=seed, reps=1,
               warmup=0, workers=1, omp_threads=threads, identify=True, absent=False)
    (r,) = measure(cfg)
    row = hepkg_row(r)
    return row if r["status"] != "measured" else row | dict(
        server_rss_gb=r["server_rss_peak_bytes"] / 1e9, rotate=r["op_rotate"], keyswitch=r["op_keyswitch"],
        mul_ct=r["op_mul_ct"], rotation_keys=r["rotation_keys"])


def hepkg_row(r: dict) -> dict:
    """One measured query of hepkg's (:func:`hepkg.facesearch.experiments.measure_here`'s row) as a bench row: the
    query times, memory and setup, ``correct`` (the count within 0.5 of numpy's and the indices right); a run
    left out keeps its status and estimated peak."""
    if r["status"] != "measured":
        return dict(status=r["status"], correct=False, estimated_rss_gb=r["estimated_peak_bytes"] / 1e9)
    return dict(status="measured", e2e_s=r["membership_s"], he_s=r["membership_he_s"], identify_s=r["identify_s"],
                rss_gb=r["rss_peak_bytes"] / 1e9, keygen_s=r["keygen_s"], context_s=r["context_s"],
                enroll_s=r["enroll_s"], count_error=r["count_error"],
                correct=bool(r["count_error"] < 0.5 and r["identified"]))


def _theirs(authors, dataset, matches, threads: int) -> dict:
    return A.as_row(A.run_authors(authors, dataset, threads), matches)


def versus_run(case: str, authors=None, *, reps: int, seed: int = 0):
    """One row per kept run of each side on ``case`` (``authors``: :func:`prepare`'s build, or None: hepkg's
    two methods alone). OpenMP threads: ``$OMP_NUM_THREADS``, else 2, on every side."""
    import pandas as pd

    from hepkg.datasets.faces import synthetic_database

    l, K, kappa = (int(x) for x in re.fullmatch(r"l(\d+) K(\d+) kappa(\d+)", case).groups())
    threads = int(os.environ.get("OMP_NUM_THREADS", 2))
    inst = synthetic_database(K, KM, l, seed)
    rows = []
    with tempfile.TemporaryDirectory(prefix="hepkg-faces-dataset-") as tmp:
        sides = {m: (lambda m=m: _hepkg(m, l, K, kappa, threads, seed)) for m in METHODS}
        if authors is not None and l == A.DIM and kappa == 10:
            dataset = f"{tmp}/dataset.dat"
            A.write_dataset(dataset, inst.database, inst.query)
            sides[REFERENCE] = lambda: _theirs(authors, dataset, list(inst.matches), threads)
        names = list(sides)
        for rnd in range(1 + reps):                       # round 0: warm-up
            for name in names[rnd % len(names):] + names[:rnd % len(names)]:
                row = sides[name]()
                if rnd:
                    rows.append(dict(side=name, rep=rnd - 1, omp_threads=threads) | row)
    runs = pd.DataFrame(rows).assign(case=case, params=PARAMS)
    if authors is not None:                    # which OpenFHE and program build their side ran
        runs["build"] = runs.side.map({REFERENCE: " + ".join(b.root.name for b in authors.built)})
    return runs
