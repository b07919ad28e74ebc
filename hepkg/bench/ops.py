"""Per-operation latency medians on every installed backend.

``python -m hepkg.bench.ops [--reps 20]`` measures encrypt, decrypt, add, ct x ct product
(with relinearization), ct x pt product and a one-key-switch rotation for BFV N=8192
t=65537 (pyfhel with SEAL's default modulus as the paper; openfhe at depth 2, the deepest
it accepts at N=8192 and 128 bits) and CKKS N=2^15 (openfhe, pyfhel, tenseal), plus numpy's
plaintext counterparts, and prints them beside the CSSC paper's Table 1. The libraries run
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


def he_op_latencies(ctx, reps: int = 20, seed: int = 0) -> dict[str, float]:
    """Median ms of each op in OPS on ``ctx`` (needs a key for rotation by 1)."""
    rng = np.random.default_rng(seed)
    if ctx.is_integer:
        t = ctx.plain_modulus
        a, b = rng.integers(0, t, ctx.slots), rng.integers(0, t, ctx.slots)
    else:
        a, b = rng.uniform(-1, 1, ctx.slots), rng.uniform(-1, 1, ctx.slots)
    ca, cb, pb = ctx.encrypt(a), ctx.encrypt(b), ctx.encode(b)
    return {
        "encrypt": median_ms(lambda: ctx.encrypt(pb), reps),
        "decrypt": median_ms(lambda: ctx.decrypt(ca), reps),
        "add": median_ms(lambda: ctx.add(ca, cb), reps),
        "mul_ct": median_ms(lambda: ctx.mul(ca, cb), reps),
        "mul_pt": median_ms(lambda: ctx.mul_plain(ca, pb), reps),
        "rotate": median_ms(lambda: ctx.rotate(ca, 1), reps),
    }


def plain_op_latencies(n: int, reps: int = 20, seed: int = 0) -> dict[str, float]:
    """numpy counterparts on an n-slot int64 vector: add, multiply, rotate (no modular reduction)."""
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 65537, n), rng.integers(0, 65537, n)
    mul = median_ms(lambda: a * b, reps)
    return {"add": median_ms(lambda: a + b, reps), "mul_ct": mul, "mul_pt": mul,
            "rotate": median_ms(lambda: np.roll(a, -1), reps)}


def measure(configs=DEFAULT_CONFIGS, reps: int = 20):
    """Long table: one row per (backend, params, op) with the median latency."""
    import pandas as pd
    from tqdm.auto import tqdm

    rows = []
    for backend, params in tqdm(configs, desc="backends"):
        if not he.availability().get(backend):
            continue
        ctx = he.context(backend, params, rotations=[1], policy="exact")
        for op, ms in he_op_latencies(ctx, reps).items():
            rows.append(dict(backend=backend, params=params, scheme=ctx.scheme, n=ctx.params.n, op=op, ms=ms,
                             reps=reps))
    for op, ms in plain_op_latencies(8192, reps).items():
        rows.append(dict(backend="numpy", params="plain-8192", scheme="plain", n=8192, op=op, ms=ms, reps=reps))
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
        print(f"Per-op latency, median ms over {args.reps} runs (after one warm-up)")
        print(table1(long).to_string())


if __name__ == "__main__":
    main()
