"""CSSC against the diagonal baselines, measured side by side: interleaved repetitions.

``python -m hepkg.spmv.bench arc130 M80PI_n1 --reps 5`` runs each method on each matrix in
interleaved rounds (cssc, diagonal, diagonal-dense, cssc, ...) after a warm-up round, on
Pyfhel BFV with SEAL's default modulus as the paper ran it (``bfv-8192-default``), checks
every result against numpy, and reports per method the median and quartiles of the time the
paper timed (every phase but key generation and key transfer), the time inside the HE
library and the overhead (wall / library) of the whole run, and CSSC's speedups with a
verdict that respects the noise (:func:`hepkg.bench.compare`). A method whose priced floor
exceeds ``--limit`` seconds is not run: its time is modelled from its exact op counts priced
with the per-op times the measured runs of the same matrix observed (and a calibration of
the primitives in the same run for kinds they did not exercise), and says so.
"""
from __future__ import annotations

import argparse

import numpy as np

from hepkg.bench import compare, estimate, interleaved, observed_costs, op_costs
from hepkg.he.counting import OpCounts, library_seconds

from .experiments import _RUN, make_operands, predict_all_ops

BASELINES = ("diagonal", "diagonal-dense")
_VERDICT = {"less": "cssc faster", "greater": "cssc slower", "inconclusive": "inconclusive"}


def measure(matrix, methods=("cssc",) + BASELINES, *, backend: str = "pyfhel", params: str = "bfv-8192-default",
            reps: int = 5, warmup: int = 1, seed: int = 0):
    """(runs, observed): one row per kept run (method, rep, paper_s = every phase but keygen, cloud_s,
    wall_s, cpu_s, he_s, overhead), and every party's op counts with the library seconds per hook,
    summed over all runs (warm-up included), for :func:`hepkg.bench.observed_costs`."""
    csr, vector, _, encoding = make_operands(matrix, params, "auto", seed)
    ref = csr.astype(np.int64) @ np.asarray(vector, dtype=np.int64)
    kept, observed = [], OpCounts()

    def run(method):
        before = library_seconds()
        res = _RUN[method](csr, vector, backend=backend, params=params, encoding=encoding)
        observed.update({k: v for k, v in res.total_ops().items() if k != "depth"})
        observed.seconds.update(library_seconds() - before)
        return res

    def check(name, res):
        if not np.array_equal(res.y, ref):
            raise AssertionError(f"{name} returned a wrong product")
        kept.append(res)

    runs = interleaved({m: (lambda m=m: run(m)) for m in methods}, reps=reps, warmup=warmup, check=check,
                       progress=False)
    kept = kept[warmup * len(methods):]
    runs["paper_s"] = [r.timings["total"] - r.timings["keygen"] for r in kept]
    runs["cloud_s"] = [r.timings["cloud"] for r in kept]
    return runs, observed


def compare_methods(name: str, methods=("cssc",) + BASELINES, *, limit_s: float = 60.0, reps: int = 5,
                    backend: str = "pyfhel", params: str = "bfv-8192-default"):
    """Per method: median and quartiles of paper_s, the whole run's time inside the library and overhead
    (``run_he_s``, ``run_overhead``: key generation included), CSSC's speedup over it and a verdict
    (cssc faster / slower / inconclusive, by interquartile overlap). A method whose
    floor exceeds ``limit_s`` is modelled instead: every party's exact op counts priced with the
    per-op times observed in this matrix's measured runs (kinds they did not exercise: a
    calibration of the primitives measured in the same run, :func:`hepkg.bench.op_costs`)."""
    import pandas as pd

    from hepkg.datasets import load_matrix

    matrix = load_matrix(name, download=False)
    calibration = op_costs(backend, params, reps=reps, refresh=True)  # kinds the runs may not exercise
    _, probe = measure(matrix, ["cssc"], reps=1, warmup=0, backend=backend, params=params)
    priced = {m: _floor(matrix, m, params, {**calibration, **observed_costs(probe)}) for m in methods}
    runs, observed = measure(matrix, [m for m in methods if m == "cssc" or priced[m] <= limit_s], reps=reps,
                             backend=backend, params=params)
    costs = {**calibration, **observed_costs(observed)}
    cssc = runs.query("method == 'cssc'").paper_s
    rows = []
    for m in methods:
        g = runs.query("method == @m")
        if len(g):
            q1, med, q3 = g.paper_s.quantile([0.25, 0.5, 0.75])
            rows.append(dict(matrix=name, method=m, status="measured", median_s=med, q1_s=q1, q3_s=q3,
                             run_he_s=g.he_s.median(), run_overhead=g.overhead.median(),
                             verdict=None if m == "cssc" else _VERDICT[compare(cssc, g.paper_s)]))
        else:
            rows.append(dict(matrix=name, method=m, status="modelled (in-run costs)",
                             median_s=_floor(matrix, m, params, costs)))
    out = pd.DataFrame(rows)
    out["cssc_speedup"] = out.median_s / float(cssc.median())
    return out


def _floor(matrix, method: str, params, costs) -> float:
    """Seconds of every party's exact op counts (but key generation) priced by ``costs``."""
    ops = {k[3:]: v for k, v in predict_all_ops(matrix, method, params).items() if k.startswith("op_")}
    return estimate(ops, costs)


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
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.4g}".format):
        print(table.to_string(index=False))


if __name__ == "__main__":
    main()
