"""The authors' CSSC (github.com/EchizenG/CSSC), run from a checkout beside hepkg on the same inputs.

Nothing of theirs is copied into hepkg: :func:`load` imports their ``main.py`` (and its ``utils.py``)
from the checkout. Their script builds a module-level Pyfhel context at import (n = 2^13,
``t_bits=20``); :func:`run_authors` replaces it with a timed one at the compared parameters
(``bfv-8192-default``: t = 65537, SEAL's default modulus, SEAL's default power-of-two Galois keys
as their ``rotateKeyGen()``) and calls their ``run(matrix, vector)`` on the dense integer matrix.
Their ``run`` halves a module-level ``cipherSize`` on every call; it is reset before each.

What is timed: ``total_s``, the wall time of their ``run`` (all parties in one process, no key
transfer, their preprocessing included); ``cloud_s``, their cloud's work (see :func:`run_authors`);
``he_s``, all their seconds inside Pyfhel.

:func:`versus_run` is the section's part of ``python -m hepkg.bench.versus spmv``: their run and
:func:`hepkg.spmv.run_cssc` (in each of :data:`VARIANTS`) alternating on one matrix, every result checked
against numpy mod t. hepkg multiplies every chunk's sums by the 0/1 mask of its rows (one ct x pt product
each); their ``totalSum`` skips it on the first chunk, so the slots past its rows, which the key holder
decrypts, carry that chunk's partial sums. hepkg keeps the mask and pays for it.
"""
from __future__ import annotations

import contextlib
import io
import time

import numpy as np

from hepkg.bench.foreign import timed_pyfhel
from hepkg.bench.versus import alternate, import_script

__all__ = ["REPO", "ENV", "VARIANTS", "load", "authors_context", "run_authors", "versus_cases", "versus_run"]

REPO, ENV, FILES = "EchizenG/CSSC", "HEPKG_AUTHORS_CSSC", ("main.py", "utils.py")
QUANTITIES = ("e2e_s", "cloud_s")
PARAMS = "bfv-8192-default"


def load(checkout):
    """Their ``main`` module, imported from ``checkout`` (``ssgetpy``, their downloader, stubbed when
    absent: the matrices come from hepkg)."""
    return import_script(checkout, "main", files=FILES, stubs=("ssgetpy",))


def authors_context(params):
    """Their Pyfhel setup (``contextGen``, ``keyGen``, ``relinKeyGen``, ``rotateKeyGen()``) at ``params``
    (a SEAL-default-modulus BFV set), timed."""
    if not params.seal_default_modulus or params.scheme != "bfv":
        raise ValueError(f"the authors' setup takes SEAL's default BFV modulus; {params.name} is not one")
    return timed_pyfhel(scheme="bfv", n=params.n, t=params.plain_modulus)


def run_authors(module, he, matrix, vector) -> tuple[np.ndarray, dict]:
    """Their ``run`` on ``matrix`` (sparse or dense integers) and ``vector`` with the Pyfhel object ``he``:
    (the product mod t, in [0, t); {total_s, cloud_s, he_s}). ``cloud_s`` is the wall time of their
    ``totalSum`` less the decryption it ends with, plus the seconds of the products and relinearizations
    before it (their cloud's work, with no Python of theirs left out)."""
    dense = np.asarray(matrix.toarray() if hasattr(matrix, "toarray") else matrix, dtype=np.int64)
    total_sum, summing = module.totalSum, []

    def timed_total_sum(*args, **kwargs):
        decrypt = he.seconds["decrypt"]
        start = time.perf_counter()
        out = total_sum(*args, **kwargs)
        summing.append(time.perf_counter() - start - (he.seconds["decrypt"] - decrypt))
        return out

    module.HE, module.cipherSize, module.totalSum = he, he.n, timed_total_sum
    before = dict(he.seconds)
    start = time.perf_counter()
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # their tqdm bar
            y = module.run(dense, [int(x) for x in vector])
    finally:
        module.totalSum = total_sum
    total = time.perf_counter() - start
    spent = {k: v - before.get(k, 0.0) for k, v in he.seconds.items()}
    return np.asarray(y, dtype=np.int64) % he.t, dict(
        total_s=total, cloud_s=sum(summing) + spent.get("multiply", 0.0) + spent.get("relinearize", 0.0),
        he_s=sum(spent.values()))


def versus_cases(scale: str) -> list[str]:
    """The matrices compared: the issue's four (``random-2000``: 2000 x 2000, 20,000 non-zeros)."""
    return ["arc130", "494_bus"] if scale == "quick" else ["arc130", "494_bus", "M80PI_n1", "random-2000"]


def _matrix(case: str):
    import scipy.sparse as sp

    if case == "random-2000":
        rng = np.random.default_rng(2000)
        return sp.random(2000, 2000, density=0.005, format="csr", random_state=rng,
                         data_rvs=lambda k: rng.integers(1, 10, k)).astype(np.int64)
    from hepkg.datasets import load_matrix
    return load_matrix(case)


#: hepkg's sides in the comparison: name -> (rotation-key policy, primes dropped by the clients).
#: ``hepkg`` is the default setting; the others isolate its two levers.
VARIANTS = {"hepkg": ("exact", 2), "hepkg exact keys": ("exact", 0), "hepkg pow2 keys": ("pow2", 0)}


def versus_run(case: str, checkout, *, reps: int, variants=None, seed: int = 0):
    """Alternating runs of their ``run`` and :func:`~hepkg.spmv.run_cssc` in each of ``variants`` (name ->
    (policy, drop_primes); :data:`VARIANTS`) on ``case``: one row per kept run with ``e2e_s`` (all parties,
    key generation excluded: hepkg's key transfer counts, theirs has none), ``cloud_s``, ``he_s``,
    ``overhead`` (= e2e / he), hepkg's ``cloud_overhead`` (the cloud's wall / its seconds inside the
    library), ``correct`` and the cloud's counts (``keyswitch``: the rotations' and the relinearizations'
    key switches)."""
    import hepkg.he as he
    from hepkg.he.counting import library_seconds
    from hepkg.he.keys import pow2_terms

    from .experiments import make_operands
    from .parties import run_cssc

    params = he.get_params(PARAMS)
    csr, vector, _, encoding = make_operands(_matrix(case), params, "auto", seed)
    t = params.plain_modulus
    ref = (csr.astype(np.int64) @ np.asarray(vector, dtype=np.int64)) % t

    def hepkg_side(name, policy, drop_primes):
        def run():
            before = library_seconds()
            res = run_cssc(csr, vector, backend="pyfhel", params=params, encoding=encoding, policy=policy,
                           drop_primes=drop_primes)
            spent = library_seconds() - before
            cloud, tm = res.ops["cloud"], res.timings
            return dict(policy=policy, drop_primes=drop_primes, e2e_s=tm["total"] - tm["keygen"],
                        cloud_s=tm["cloud"], cloud_overhead=tm["cloud"] / res.info["cloud_he_s"],
                        he_s=sum(spent.values()) - spent["keygen"],
                        correct=bool(np.array_equal(np.asarray(res.y, np.int64) % t, ref)),
                        mul_ct=cloud.get("mul_ct", 0), rotate=cloud.get("rotate", 0),
                        keyswitch=cloud.get("keyswitch", 0))
        return run

    sides = {}
    if checkout is not None:
        module, lib = load(checkout), authors_context(params)

        def authors_side():
            calls, steps = dict(lib.calls), dict(lib.rotations)
            y, tm = run_authors(module, lib, csr, vector)
            rot = {k: v - steps.get(k, 0) for k, v in lib.rotations.items()}
            relin = lib.calls["relinearize"] - calls.get("relinearize", 0)
            return dict(policy="pow2 (SEAL default)", drop_primes=0, e2e_s=tm["total_s"],
                        cloud_s=tm["cloud_s"], he_s=tm["he_s"], correct=bool(np.array_equal(y, ref)),
                        mul_ct=lib.calls["multiply"] - calls.get("multiply", 0), rotate=sum(rot.values()),
                        keyswitch=relin + sum(v * len(pow2_terms(k, params.n // 2)) for k, v in rot.items()))
        sides["authors"] = authors_side
    sides |= {name: hepkg_side(name, *lever) for name, lever in (VARIANTS if variants is None else variants).items()}
    out = alternate(sides, reps)
    out["overhead"] = out.e2e_s / out.he_s
    return out.assign(case=case, params=PARAMS)
