"""The authors' CSSC (github.com/EchizenG/CSSC), run from a checkout beside hepkg on the same inputs.

Nothing of theirs is copied into hepkg: :func:`load` imports their ``main.py`` (and its ``utils.py``)
from the checkout. Their script builds a module-level Pyfhel context at import (n = 2^13,
``t_bits=20``); :func:`run_authors` replaces it with a timed one at the compared parameters
(``bfv-8192-default``: t = 65537, SEAL's default modulus, SEAL's default power-of-two Galois keys
as their ``rotateKeyGen()``) and calls their ``run(matrix, vector)`` on the dense integer matrix.
Their ``run`` halves a module-level ``cipherSize`` on every call; it is reset before each.

What is timed: ``total_s``, the wall time of their ``run`` (all parties in one process, no key
transfer, their preprocessing included); ``preprocess_s``, their ``process_matrix`` (row sorting and
left shift: the CSSC conversion), which their own timer leaves out; ``cloud_s``, their cloud's work
(see :func:`run_authors`); ``he_s``, all their seconds inside Pyfhel.

:func:`versus_run` is the section's part of ``python -m hepkg.bench.versus spmv``: their run and
:func:`hepkg.spmv.run_cssc` (in each of :data:`VARIANTS`: the authors' settings, each of hepkg's levers
alone, and hepkg's defaults) alternating on one matrix, every result checked against numpy mod t.
Both sides' end to end leaves their preprocessing out (``e2e_s``, as their timer) or keeps it in
(``e2e_pre_s``); ``e2e_nokeys_s`` also leaves out hepkg's key transfer, a phase theirs does not have.
hepkg multiplies every chunk's sums by the 0/1 mask of its rows (one ct x pt product each); their
``totalSum`` skips it on the first chunk, so the slots past its rows, which the key holder decrypts,
carry that chunk's partial sums. hepkg keeps the mask and pays for it.
"""
from __future__ import annotations

import contextlib
import io
import time

import numpy as np

from hepkg.bench.foreign import timed_pyfhel
from hepkg.bench.versus import alternate, import_script

__all__ = ["REPO", "ENV", "VARIANTS", "load", "authors_context", "run_authors", "versus_cases", "versus_run",
           "derive"]

REPO, ENV, FILES = "EchizenG/CSSC", "HEPKG_AUTHORS_CSSC", ("main.py", "utils.py")
QUANTITIES = ("e2e_s", "e2e_pre_s", "e2e_nokeys_s", "cloud_s")
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
    (the product mod t, in [0, t); {total_s, preprocess_s, cloud_s, he_s}). ``cloud_s`` is the wall time of
    their ``totalSum`` less the decryption it ends with, plus the seconds of the products and
    relinearizations before it (their cloud's work, with no Python of theirs left out); ``preprocess_s``
    the wall time of their ``process_matrix``."""
    dense = np.asarray(matrix.toarray() if hasattr(matrix, "toarray") else matrix, dtype=np.int64)
    total_sum, process_matrix, summing, preprocessing = module.totalSum, module.process_matrix, [], []

    def timed_process_matrix(*args, **kwargs):
        start = time.perf_counter()
        out = process_matrix(*args, **kwargs)
        preprocessing.append(time.perf_counter() - start)
        return out

    def timed_total_sum(*args, **kwargs):
        decrypt = he.seconds["decrypt"]
        start = time.perf_counter()
        out = total_sum(*args, **kwargs)
        summing.append(time.perf_counter() - start - (he.seconds["decrypt"] - decrypt))
        return out

    module.HE, module.cipherSize = he, he.n
    module.totalSum, module.process_matrix = timed_total_sum, timed_process_matrix
    before = dict(he.seconds)
    start = time.perf_counter()
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):  # tqdm, prints
            y = module.run(dense, [int(x) for x in vector])
    finally:
        module.totalSum, module.process_matrix = total_sum, process_matrix
    total = time.perf_counter() - start
    spent = {k: v - before.get(k, 0.0) for k, v in he.seconds.items()}
    return np.asarray(y, dtype=np.int64) % he.t, dict(
        total_s=total, preprocess_s=sum(preprocessing),
        cloud_s=sum(summing) + spent.get("multiply", 0.0) + spent.get("relinearize", 0.0),
        he_s=sum(spent.values()))


def derive(runs):
    """``runs`` with ``e2e_nokeys_s``: the end to end over the phases both sides have, hepkg's ``e2e_s`` less
    its key transfer (Client A writing the keys, the cloud and Client B loading them), the authors' ``e2e_s``
    (one process: no transfer)."""
    keys = runs.reindex(columns=["key_s_a", "key_s_cloud", "key_s_b"]).fillna(0.0).sum(axis=1)
    return runs.assign(e2e_nokeys_s=runs.e2e_s - keys)


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


#: hepkg's sides in the comparison: name -> run_cssc's settings (None: its default). The authors' settings
#: (SEAL's power-of-two keys, no prime dropped, the keys in SEAL's raw form), each lever alone on them,
#: and hepkg's defaults (all three levers: exact keys, the primes the noise allows, compressed keys).
VARIANTS = {
    "hepkg authors' settings": dict(lever="none", policy="pow2", drop_primes=0, compress_keys=False),
    "hepkg exact keys": dict(lever="exact keys", policy="exact", drop_primes=0, compress_keys=False),
    "hepkg prime dropping": dict(lever="prime dropping", policy="pow2", drop_primes="auto", compress_keys=False),
    "hepkg light keys": dict(lever="light key transfer", policy="pow2", drop_primes=0, compress_keys=True),
    "hepkg": dict(lever="all (defaults)", policy=None, drop_primes=None, compress_keys=None),
}
#: The side with the authors' settings, each lever's ``gain`` is measured against (see versus.summarize).
BASE = "hepkg authors' settings"


def versus_run(case: str, checkout, *, reps: int, variants=None, seed: int = 0):
    """Alternating runs of their ``run`` and :func:`~hepkg.spmv.run_cssc` in each of ``variants`` (name ->
    settings; :data:`VARIANTS`) on ``case``: one row per kept run with ``e2e_s`` (all parties, key
    generation and each side's preprocessing excluded, as their timer: hepkg's key transfer counts, theirs
    has none), ``e2e_pre_s`` (the same with the preprocessing), ``cloud_s``, ``he_s``, ``overhead``
    (= e2e / he), hepkg's ``cloud_overhead`` (the cloud's wall / its seconds inside the library), the key
    transfer (``key_bytes_cloud``, ``key_bytes_b``; ``key_s_a`` writing, ``key_s_cloud`` and ``key_s_b``
    loading), ``correct`` and the cloud's counts (``keyswitch``: the rotations' and the relinearizations'
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

    def hepkg_side(lever, **settings):
        settings = {k: v for k, v in settings.items() if v is not None}  # None: run_cssc's default

        def run():
            before = library_seconds()
            res = run_cssc(csr, vector, params=params, encoding=encoding, **settings)
            spent = library_seconds() - before
            cloud, tm, keys = res.ops["cloud"], res.timings, res.info["key_seconds"]
            pre = tm["total"] - tm["keygen"]
            return dict(lever=lever, backend=res.backend, policy=res.info["policy"],
                        drop_primes=res.info["drop_primes"], e2e_s=pre - res.info["preprocess_s"], e2e_pre_s=pre,
                        cloud_s=tm["cloud"], cloud_overhead=tm["cloud"] / res.info["cloud_he_s"],
                        he_s=sum(spent.values()) - spent["keygen"],
                        key_bytes_cloud=res.traffic["keys_to_cloud"], key_bytes_b=res.traffic["keys_to_b"],
                        key_s_a=keys["client_a"], key_s_cloud=keys["cloud"], key_s_b=keys["client_b"],
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
            return dict(lever="authors' code", backend="pyfhel", policy="pow2 (SEAL default)", drop_primes=0,
                        e2e_s=tm["total_s"] - tm["preprocess_s"], e2e_pre_s=tm["total_s"], cloud_s=tm["cloud_s"],
                        he_s=tm["he_s"], correct=bool(np.array_equal(y, ref)),
                        mul_ct=lib.calls["multiply"] - calls.get("multiply", 0), rotate=sum(rot.values()),
                        keyswitch=relin + sum(v * len(pow2_terms(k, params.n // 2)) for k, v in rot.items()))
        sides["authors"] = authors_side
    sides |= {name: hepkg_side(**lever) for name, lever in (VARIANTS if variants is None else variants).items()}
    out = alternate(sides, reps)
    out["overhead"] = out.e2e_s / out.he_s
    return derive(out.assign(case=case, params=PARAMS))
