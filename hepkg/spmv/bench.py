"""CSSC against its baselines, measured side by side: interleaved repetitions with their spread.

``python -m hepkg.spmv.bench arc130 M80PI_n1 --reps 5`` runs each method on each matrix in
interleaved rounds (cssc, diagonal, diagonal-dense, cssc, ...) after a warm-up round, on
Pyfhel BFV with SEAL's default modulus as the paper ran it (``bfv-8192-default``), checks
every result against numpy, and reports per method the median and quartiles of the time the
paper timed (every phase but key generation and key transfer), the time inside the HE
library and the overhead (wall / library) of the whole run, and CSSC's speedups with a
verdict that respects the noise (:func:`hepkg.bench.compare`). A method whose priced floor
exceeds ``--limit`` seconds is not run: its time is modelled from its exact op counts priced
with the per-op times the measured runs observed (and a calibration of the primitives for
kinds they did not exercise), and says so.

The notebook uses the same pieces: :func:`measure_matrix` (one grid configuration: the
interleaved runs of one matrix, one row per run) and :func:`summarize_runs`.
"""
from __future__ import annotations

import argparse

import numpy as np

from hepkg.bench import compare, estimate, interleaved, observed_costs, op_costs
from hepkg.he.counting import KINDS, OpCounts, library_seconds

from .experiments import _RUN, make_operands, predict_all_ops
from .result import paper_seconds

BASELINES = ("diagonal", "diagonal-dense")
MODELLED = "modelled (in-run costs)"
_VERDICT = {"less": "cssc faster", "greater": "cssc slower", "inconclusive": "inconclusive"}


def measure(matrix, methods=("cssc",) + BASELINES, *, name: str = "matrix", backend: str = "pyfhel",
            params: str = "bfv-8192-default", reps: int = 5, warmup: int = 1, seed: int = 0):
    """One row per kept run: matrix, method, rep, the interleaved timing (wall_s, cpu_s, he_s,
    overhead), ``paper_s`` (every phase but key generation and transfer, as the paper timed), each
    phase's seconds, bytes per message and of the keys each party received, ``n_ct``, every party's op counts
    (``op_<kind>``) and the library seconds per hook of that run (``sec_<hook>``, see
    :func:`observed`). CSSC runs with the paper's settings (power-of-two keys, no prime dropped, raw keys), which
    the predicted counts and Tables 1-8 assume; ``make bench`` measures hepkg's defaults and each lever. Every
    run, warm-up included, is checked against numpy."""
    import pandas as pd

    csr, vector, _, encoding = make_operands(matrix, params, "auto", seed)
    ref = csr.astype(np.int64) @ np.asarray(vector, dtype=np.int64)
    kept = []

    def run(method):
        before = library_seconds()
        paper = dict(policy="pow2", drop_primes=0, compress_keys=False) if method == "cssc" else {}  # as predicted
        res = _RUN[method](csr, vector, backend=backend, params=params, encoding=encoding, **paper)
        res.info["library_s"] = library_seconds() - before
        return res

    def check(method, res):
        if not np.array_equal(res.y, ref):
            raise AssertionError(f"{method} returned a wrong product on {name}")
        kept.append(res)

    runs = interleaved({m: (lambda m=m: run(m)) for m in methods}, reps=reps, warmup=warmup, check=check,
                       progress=False)
    rows = []
    for res in kept[warmup * len(methods):]:
        t, ops = res.timings, res.total_ops()
        rows.append(dict(paper_s=paper_seconds(t), **{f"{k}_s": v for k, v in t.items() if k != "total"},
                         n_ct=res.info.get("n_ct"), **{f"bytes_{k}": v for k, v in res.traffic.items()},
                         **{f"op_{k}": int(ops.get(k, 0)) for k in KINDS + ("depth",)},
                         **{f"sec_{k}": v for k, v in res.info["library_s"].items()}))
    extra = pd.DataFrame(rows)
    extra = extra.fillna({c: 0 for c in extra if c.startswith(("sec_", "bytes_"))})
    return pd.concat([runs.assign(matrix=name, backend=backend, params=str(params)), extra], axis=1)


def observed(runs) -> OpCounts:
    """The op counts of ``runs`` (rows of :func:`measure`) with the library seconds they spent per
    hook: :func:`hepkg.bench.observed_costs` of it prices each kind as these runs observed it."""
    counts = OpCounts({c[3:]: int(runs[c].sum()) for c in runs if c.startswith("op_") and c != "op_depth"})
    counts.seconds.update({c[4:]: float(runs[c].sum()) for c in runs if c.startswith("sec_")})
    return counts


def in_run_costs(runs, calibration: dict) -> dict:
    """Seconds per op kind as ``runs`` observed them inside the library (:func:`observed`), over the
    ``calibration`` (:func:`hepkg.bench.op_costs`) for kinds the runs did not exercise."""
    return {**calibration, **observed_costs(observed(runs))}


def floor_s(matrix, method: str, params, costs) -> float:
    """Seconds of every party's exact op counts (but key generation) priced by ``costs``."""
    ops = {k[3:]: v for k, v in predict_all_ops(matrix, method, params).items() if k.startswith("op_")}
    return estimate(ops, costs)


def measure_matrix(config: dict) -> list[dict]:
    """The interleaved runs of one matrix (a grid configuration, picklable; rows of :func:`measure`).

    ``config``: ``matrix`` (a name), ``methods``, ``reps``, ``backend``, ``params``, ``limit_s``,
    optional ``always`` (methods measured whatever their floor), ``seed``. CSSC is always measured;
    a baseline when its floor, priced with the machine's calibrated op costs, is at most ``limit_s``."""
    from hepkg.datasets import load_matrix

    cfg = dict(always=(), seed=0, warmup=1) | dict(config)
    matrix = load_matrix(cfg["matrix"])
    costs = op_costs(cfg["backend"], cfg["params"])
    chosen = [m for m in cfg["methods"] if m == "cssc" or m in cfg["always"]
              or floor_s(matrix, m, cfg["params"], costs) <= cfg["limit_s"]]
    runs = measure(matrix, chosen, name=cfg["matrix"], backend=cfg["backend"], params=cfg["params"],
                   reps=cfg["reps"], warmup=cfg["warmup"], seed=cfg["seed"])
    return runs.to_dict("records")


def measured_stats(runs):
    """One row per measured (matrix, method) of ``runs`` (rows of :func:`measure`): reps, median,
    quartiles, min and max of ``paper_s``, the median ``cloud_s``, the whole run's library time and
    overhead, and the verdict against CSSC on the same matrix (interquartile overlap)."""
    import pandas as pd

    rows = []
    for (name, m), g in runs.groupby(["matrix", "method"], sort=False):
        cssc = runs[(runs.matrix == name) & (runs.method == "cssc")].paper_s
        q1, med, q3 = g.paper_s.quantile([0.25, 0.5, 0.75])
        rows.append(dict(matrix=name, method=m, status="measured", reps=len(g), median_s=med, q1_s=q1, q3_s=q3,
                         min_s=g.paper_s.min(), max_s=g.paper_s.max(), cloud_s=g.cloud_s.median(),
                         run_he_s=g.he_s.median(), run_overhead=g.overhead.median(),
                         verdict=None if m == "cssc" or not len(cssc) else _VERDICT[compare(cssc, g.paper_s)]))
    return pd.DataFrame(rows)


def summarize_runs(runs, methods, matrices, params, costs):
    """:func:`measured_stats` for the measured methods, and for the others ``modelled (in-run
    costs)``: every party's exact counts priced by ``costs`` (per-op times observed in the measured
    runs over a calibration for kinds they did not exercise); CSSC's speedup over each method.
    ``matrices``: {name: sparse matrix}."""
    import pandas as pd

    stats = measured_stats(runs).set_index(["matrix", "method"])
    rows = [stats.loc[(name, m)].to_dict() | dict(matrix=name, method=m) if (name, m) in stats.index else
            dict(matrix=name, method=m, status=MODELLED, reps=0, median_s=floor_s(matrix, m, params, costs))
            for name, matrix in matrices.items() for m in methods]
    out = pd.DataFrame(rows)
    cssc_median = out[out.method == "cssc"].set_index("matrix").median_s
    out["cssc_speedup"] = out.median_s / out.matrix.map(cssc_median)
    return out


def compare_methods(name: str, methods=("cssc",) + BASELINES, *, limit_s: float = 60.0, reps: int = 5,
                    backend: str = "pyfhel", params: str = "bfv-8192-default"):
    """:func:`summarize_runs` of one matrix measured by :func:`measure_matrix`; modelled methods are
    priced with this matrix's observed op costs over a calibration measured now."""
    import pandas as pd

    from hepkg.datasets import load_matrix

    calibration = op_costs(backend, params, reps=reps, refresh=True)
    runs = pd.DataFrame(measure_matrix(dict(matrix=name, methods=methods, reps=reps, backend=backend, params=params,
                                            limit_s=limit_s)))
    costs = in_run_costs(runs, calibration)
    return summarize_runs(runs, methods, {name: load_matrix(name, download=False)}, params, costs)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("matrices", nargs="+")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--limit", type=float, default=60.0, help="seconds: slower baselines are modelled")
    parser.add_argument("--backend", default="pyfhel")
    parser.add_argument("--params", default="bfv-8192-default")
    parser.add_argument("--csv")
    args = parser.parse_args(argv)
    import pandas as pd
    table = pd.concat([compare_methods(n, limit_s=args.limit, reps=args.reps, backend=args.backend,
                                       params=args.params) for n in args.matrices])
    if args.csv:
        table.to_csv(args.csv, index=False)
    shown = ["matrix", "method", "status", "median_s", "q1_s", "q3_s", "run_he_s", "run_overhead", "verdict",
             "cssc_speedup"]
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.4g}".format):
        print(table[shown].to_string(index=False))


if __name__ == "__main__":
    main()
