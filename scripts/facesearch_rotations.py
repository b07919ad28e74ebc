"""A query's rotated-query table on the fasthe bench's openfhe-python (docs/benchmarks.md): the hoisted rotations
run step by step through the bindings (each EvalFastRotation spread over OpenMP's threads inside OpenFHE) or as
one parallel loop, a step per thread (hepkg_openfhe_encode's ``fast_rotations``), interleaved, at one and two
OpenMP threads.

    source bench_env.sh      # the fasthe bench's builds (make bench's)
    python scripts/facesearch_rotations.py METHOD ROUNDS [KAPPA] > rotations.jsonl

METHOD: hydia-lean (511 rotations from one decomposition) or bsgs-diagonal (22 baby steps, then each of the 23
rotated by its giant steps); l = 512, the bench's ring for KAPPA (default 8), the method's keys alone. Each line:
rotation path, OpenMP threads, round, seconds for the table; every table decrypts to the other path's.
"""
import json
import sys
import time

import numpy as np

from hepkg.bench.child import in_child
from hepkg.bench.versus import find_checkout
from hepkg.facesearch import fasthe as F

L = 512


def measure(config: dict) -> list[dict]:
    """The table's seconds on both rotation paths, ``rounds`` times, interleaved."""
    from hepkg import he
    from hepkg.facesearch import similarity
    from hepkg.he.backends import openfhe as backend

    parallel, rows = backend._PARALLEL_ROTATIONS, []
    if parallel is None:
        raise RuntimeError("hepkg_openfhe_encode has no fast_rotations here: build it with make bench's builds")
    paths = {"step by step (bindings)": None, "one parallel loop (hepkg_openfhe_encode)": parallel}
    method = config["method"]
    with he.context("openfhe", config["params"], rotations=similarity.rotation_steps(method, L),
                    policy="exact") as ctx:
        v = np.random.default_rng(0).uniform(-1, 1, L)
        q = ctx.encrypt(np.tile(v, ctx.slots // L))
        tables = {}
        for r in range(config["rounds"]):
            for path, fn in (paths.items() if r % 2 else reversed(paths.items())):
                backend._PARALLEL_ROTATIONS = fn
                start = time.perf_counter()
                tables[path] = similarity.query_table(ctx, q, method, L)
                rows.append(dict(rotation_path=path, round=r, seconds=time.perf_counter() - start))
            a, b = ([ctx.decrypt(t[i], L) for i in (1, L // 2, L - 1)] for t in tables.values())
            if not all(np.array_equal(x, y) for x, y in zip(a, b)):
                raise AssertionError(f"round {r}: the two paths' tables decrypt differently")
    backend._PARALLEL_ROTATIONS = parallel
    return rows


def main(method: str, rounds: int, kappa: int = 8) -> None:
    authors = F.prepare(find_checkout(None, F.ENV, F.REPO, F.FILES))
    for omp in (1, 2):
        cfg = dict(method=method, rounds=rounds, params=F.PARAMS[kappa])
        for row in in_child(measure, cfg, int(16e9 if method == "hydia-lean" else 4e9), omp,
                            python_path=authors.python):
            print(json.dumps(row | dict(method=method, omp_threads=omp, params=F.PARAMS[kappa],
                                        build=authors.hepkg_build)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], *map(int, sys.argv[2:]))
