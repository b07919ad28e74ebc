"""Per-operation latencies on every installed backend: median and spread of interleaved runs.

``python -m hepkg.bench.ops [--reps 20]`` measures encrypt, decrypt, add, ct x ct product
(with relinearization), ct x pt product and a one-key-switch rotation for BFV N=8192
t=65537 (pyfhel with SEAL's default modulus as the paper; openfhe at depth 2, the deepest
it accepts at N=8192 and 128 bits) and CKKS N=2^15 (openfhe, pyfhel, tenseal), plus numpy's
plaintext counterparts, and prints them beside the CSSC paper's Table 1. The ops of one
context run in interleaved rounds after a warm-up round (:func:`hepkg.bench.interleaved`),
each run timed on the wall clock and inside the HE library, so the table also gives the
overhead of hepkg's protocol layer per op (wall / library). The libraries run
single-threaded (``--threads``) as in the paper; ``decrypt`` includes decoding and, on
backends that report it, the noise-budget check hepkg makes before every BFV decryption.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

import hepkg.he as he
from hepkg.reference import CSSC_TABLE1_OPS_MS

OPS = ("encrypt", "decrypt", "add", "mul_ct", "mul_pt", "rotate")
#: (backend, parameter set) pairs of the Table 1 benchmark.
DEFAULT_CONFIGS = (("pyfhel", "bfv-8192-default"), ("openfhe", "bfv-8192-d2"),
                   ("pyfhel", "ckks-32768-d9"), ("openfhe", "ckks-32768-d9"), ("tenseal", "ckks-32768-d9"))


def median_ms(fn, reps: int) -> float:
    """Median wall time of ``fn()`` over ``reps`` calls, in milliseconds (one warm-up call)."""
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def _he_ops(ctx, seed: int) -> dict:
    """The OPS of Table 1 on ``ctx`` (needs a key for rotation by 1), as zero-argument calls."""
    rng = np.random.default_rng(seed)
    if ctx.is_integer:
        t = ctx.plain_modulus
        a, b = rng.integers(0, t, ctx.slots), rng.integers(0, t, ctx.slots)
    else:
        a, b = rng.uniform(-1, 1, ctx.slots), rng.uniform(-1, 1, ctx.slots)
    ca, cb, pb = ctx.encrypt(a), ctx.encrypt(b), ctx.encode(b)
    return {"encrypt": lambda: ctx.encrypt(pb), "decrypt": lambda: ctx.decrypt(ca), "add": lambda: ctx.add(ca, cb),
            "mul_ct": lambda: ctx.mul(ca, cb), "mul_pt": lambda: ctx.mul_plain(ca, pb),
            "rotate": lambda: ctx.rotate(ca, 1)}


def _plain_ops(n: int, seed: int) -> dict:
    """numpy counterparts on an n-slot int64 vector: add, multiply, rotate (no modular reduction)."""
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 65537, n), rng.integers(0, 65537, n)
    return {"add": lambda: a + b, "mul_ct": lambda: a * b, "mul_pt": lambda: a * b, "rotate": lambda: np.roll(a, -1)}


def _summary(runs) -> list[dict]:
    """Per op: median, quartiles of the wall time (ms), median time inside the library and overhead."""
    rows = []
    for op, g in runs.groupby("method", sort=False):
        q1, med, q3 = 1e3 * g.wall_s.quantile([0.25, 0.5, 0.75])
        rows.append(dict(op=op, ms=med, q1_ms=q1, q3_ms=q3, he_ms=1e3 * g.he_s.dropna().median(),
                         overhead=g.overhead.dropna().median(), reps=len(g)))  # NaN (no warning): the numpy rows
    return rows


def he_op_latencies(ctx, reps: int = 20, seed: int = 0) -> dict[str, float]:
    """Median ms of each op in OPS on ``ctx`` over ``reps`` interleaved rounds (needs a key for step 1)."""
    from .repeat import interleaved
    return {r["op"]: r["ms"] for r in _summary(interleaved(_he_ops(ctx, seed), reps=reps, progress=False))}


def measure(configs=DEFAULT_CONFIGS, reps: int = 20, seed: int = 0):
    """Long table: one row per (backend, params, op): median ms with quartiles, the median time inside
    the HE library and the overhead (wall / library), over ``reps`` interleaved rounds."""
    import pandas as pd
    from tqdm.auto import tqdm

    from .repeat import interleaved

    rows = []
    for backend, params in tqdm(configs, desc="backends"):
        if not he.availability().get(backend):
            continue
        ctx = he.context(backend, params, rotations=[1], policy="exact")
        for row in _summary(interleaved(_he_ops(ctx, seed), reps=reps, progress=False)):
            rows.append(dict(backend=backend, params=params, scheme=ctx.scheme, n=ctx.params.n, **row))
    for row in _summary(interleaved(_plain_ops(8192, seed), reps=reps, progress=False)):
        rows.append(dict(backend="numpy", params="plain-8192", scheme="plain", n=8192, **row))
    return pd.DataFrame(rows)


def table1(long):
    """Wide table: ops x (backend, params), with the CSSC paper's Table 1 beside."""
    wide = long.pivot_table(index="op", columns=["backend", "params"], values="ms").reindex(list(OPS))
    wide.columns = [f"{b} {p}" for b, p in wide.columns]
    wide.insert(0, "paper HE (pyfhel bfv-8192)", [CSSC_TABLE1_OPS_MS[o]["he"] for o in OPS])
    wide.insert(1, "paper plain", [CSSC_TABLE1_OPS_MS[o]["plain"] for o in OPS])
    bfv = "pyfhel bfv-8192-default"
    if bfv in wide:
        wide["pyfhel bfv / paper"] = wide[bfv] / wide["paper HE (pyfhel bfv-8192)"]
    return wide


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20, help="repetitions per op (median reported)")
    parser.add_argument("--csv", help="also write the long table here")
    parser.add_argument("--threads", type=int, default=1,
                        help="OpenMP threads for the HE libraries (the papers measured single-threaded)")
    args = parser.parse_args(argv)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)  # read when a library first loads
    long = measure(reps=args.reps)
    if args.csv:
        long.to_csv(args.csv, index=False)
    import pandas as pd
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.3f}".format):
        print(f"Per-op latency, median ms over {args.reps} interleaved runs (after one warm-up round)")
        print(table1(long).to_string())


if __name__ == "__main__":
    main()
