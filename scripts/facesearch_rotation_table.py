"""BSGS-Diagonal's rotation table (l = 512) at ckks-32768-d9, and the page faults it takes (docs/benchmarks.md).

    OMP_NUM_THREADS=T [GLIBC_TUNABLES=glibc.malloc.hugetlb=1] PYTHONPATH=[OPENFHE_PYTHON:]CHECKOUT \\
        python scripts/facesearch_rotation_table.py [PASSES] > rotation_table.jsonl

One process: PASSES (default 3) passes, each building the table three ways: as the server holds it
(:func:`hepkg.facesearch.similarity.query_table`), each baby step's giant rotations dropped as soon as they are
made, and bare OpenFHE calls (EvalFastRotationPrecompute / EvalFastRotation, outputs held). Each line gives the
pass's seconds and its minor page faults (getrusage), with the OpenMP threads, the glibc tunables, the
machine's free page reporting and the openfhe module the run used.
"""
import json
import os
import resource
import sys
import time

import numpy as np
import openfhe

import hepkg.he as he
from hepkg.bench.sysinfo import page_reporting
from hepkg.facesearch import key_steps, similarity

L = 512


def _faults() -> int:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_minflt + usage.ru_majflt


def _giant_steps(b: int, n1: int) -> list[int]:
    """Baby step b's giant rotations, as :func:`hepkg.facesearch.similarity.query_table` makes them."""
    return [g for g in similarity._giants(L, n1) if g + b < L]


def build(ctx, q, mode: str, n1: int):
    """The table (or nothing, ``dropped``) built the ``mode`` way."""
    if mode == "held":
        return similarity.query_table(ctx, q, "bsgs-diagonal", L)
    if mode == "dropped":
        for b, src in ({0: q} | ctx.rotate_many(q, range(1, n1))).items():
            if steps := _giant_steps(b, n1):
                ctx.rotate_many(src, steps)
        return None
    cc, order = ctx._cc, ctx._order
    digits = cc.EvalFastRotationPrecompute(q.raw)
    table = [q.raw] + [cc.EvalFastRotation(q.raw, b, order, digits) for b in range(1, n1)]
    for b in range(n1):
        pre = cc.EvalFastRotationPrecompute(table[b])
        table += [cc.EvalFastRotation(table[b], s, order, pre) for s in _giant_steps(b, n1)]
    return table


def main(passes: int = 3) -> None:
    ctx = he.context("openfhe", "ckks-32768-d9", rotations=key_steps("bsgs-diagonal", L, 16384), policy="exact",
                     insecure=True)
    q = ctx.encrypt(np.random.default_rng(0).uniform(-1, 1, ctx.slots))
    n1, _ = similarity.bsgs_shape(L, None)
    for rep in range(passes):
        for mode in ("held", "dropped", "bare"):
            faults, start = _faults(), time.perf_counter()
            table = build(ctx, q, mode, n1)
            seconds = time.perf_counter() - start
            del table
            print(json.dumps(dict(mode=mode, rep=rep, s=round(seconds, 3), minor_faults=_faults() - faults,
                                  threads=os.environ.get("OMP_NUM_THREADS"),
                                  glibc_tunables=os.environ.get("GLIBC_TUNABLES"),
                                  page_reporting_order=page_reporting(), openfhe=openfhe.__file__)), flush=True)


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
