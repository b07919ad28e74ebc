"""Table 7 measured side by side: interleaved repetitions of every method on one shape.

``python -m hepkg.gemm.bench 16-64-64 64-16-64 64-64-16 --reps 10`` builds each method's keys
once (outside the timer, alike for all), then runs every applicable method once per round
(hegmm-en, hegmm-ext, e2dm-s, ..., after a warm-up round), each run the whole product as the
paper's authors timed it: the client encrypts, the cloud multiplies, the client decrypts. Every
product is checked against numpy mod t. Per method: the median and quartiles of wall and
process CPU time (``getrusage``-style user + system, as the authors measured), the cloud's
part, the time inside the HE library and the overhead (wall / library), the paper's Table 7
time beside, and a verdict against HEGMM-En that respects the noise (:func:`hepkg.bench.compare`).
"""
from __future__ import annotations

import argparse

import numpy as np

from hepkg.bench import compare, interleaved
from hepkg.reference import HEGMM_TABLE7_TIME_S

from .errors import NotApplicable, ShapeTooLarge
from .experiments import random_operands
from .protocol import Client, Cloud, centered, gemm_context, matmul

METHODS = ("hegmm-en", "hegmm-ext", "e2dm-s", "e2dm-r", "huang", "uscore")
#: The paper's Table 7 column each method is compared with ('hegmm-ext' is the HEGMM the authors timed).
PAPER_NAME = {"hegmm-ext": "hegmm"}
_VERDICT = {"less": "faster than hegmm-en", "greater": "slower than hegmm-en", "inconclusive": "inconclusive"}


def measure_shape(m: int, l: int, n: int, methods=METHODS, *, backend: str = "pyfhel",
                  params: str = "bfv-8192-default", preprocess: str = "cloud", policy: str = "pow2",
                  reps: int = 10, warmup: int = 1, seed: int = 0):
    """(runs, skipped): one row per kept run (method, rep, wall_s, cpu_s, he_s, overhead, cloud_s) and
    {method: why it does not run on this shape}."""
    import pandas as pd

    setups, skipped = {}, {}
    for method in methods:
        try:
            ctx = gemm_context(method, m, l, n, backend=backend, params=params, policy=policy, preprocess=preprocess)
        except (NotApplicable, ShapeTooLarge) as exc:
            skipped[method] = f"{type(exc).__name__}: {exc}"
            continue
        setups[method] = (Client(ctx), Cloud(ctx.public()))
    if not setups:
        return pd.DataFrame(columns=["method", "rep", "wall_s", "cpu_s", "he_s", "overhead", "cloud_s"]), skipped
    t = next(iter(setups.values()))[0].ctx.plain_modulus
    A, B = random_operands(m, l, n, t, seed)
    want, cloud_s = centered(A @ B, t), []

    def check(method, res):
        if not np.array_equal(res.C, want):
            raise AssertionError(f"{method} returned a wrong {m} x {l} x {n} product")
        cloud_s.append(res.seconds["cloud"])

    runs = interleaved({meth: (lambda meth=meth: matmul(setups[meth], A, B, meth, preprocess=preprocess))
                        for meth in setups}, reps=reps, warmup=warmup, check=check, progress=False)
    runs["cloud_s"] = cloud_s[warmup * len(setups):]
    return runs, skipped


def table7(shapes, methods=METHODS, **kwargs):
    """Per (shape, method): median, quartiles of wall time, median CPU and cloud time, library overhead,
    the paper's Table 7 seconds and ours / paper, and the verdict against HEGMM-En on that shape;
    methods that do not apply say why."""
    import pandas as pd

    rows = []
    for m, l, n in shapes:
        runs, skipped = measure_shape(m, l, n, methods, **kwargs)
        paper = HEGMM_TABLE7_TIME_S.get((m, l, n), {})
        en = runs[runs.method == "hegmm-en"].wall_s
        for method in methods:
            g = runs[runs.method == method]
            row = dict(shape=f"{m}-{l}-{n}", method=method, paper_s=paper.get(PAPER_NAME.get(method, method)))
            if not len(g):
                rows.append(row | dict(status=skipped.get(method, "not run")))
                continue
            q1, med, q3 = g.wall_s.quantile([0.25, 0.5, 0.75])
            rows.append(row | dict(status="measured", reps=len(g), wall_s=med, q1_s=q1, q3_s=q3,
                                   cpu_s=g.cpu_s.median(), cloud_s=g.cloud_s.median(), overhead=g.overhead.median(),
                                   verdict=None if method == "hegmm-en" or not len(en)
                                   else _VERDICT[compare(g.wall_s, en)]))
    out = pd.DataFrame(rows)
    out["ratio"] = out.get("wall_s") / out.paper_s
    return out


def _shape(text: str) -> tuple[int, int, int]:
    m, l, n = (int(x) for x in text.split("-"))
    return m, l, n


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shapes", nargs="+", type=_shape, help="m-l-n, e.g. 16-64-64")
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--backend", default="pyfhel")
    parser.add_argument("--params", default="bfv-8192-default")
    parser.add_argument("--preprocess", choices=("cloud", "client"), default="cloud")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--csv")
    args = parser.parse_args(argv)
    import pandas as pd
    table = table7(args.shapes, tuple(args.methods.split(",")), backend=args.backend, params=args.params,
                   preprocess=args.preprocess, reps=args.reps)
    if args.csv:
        table.to_csv(args.csv, index=False)
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.4g}".format):
        print(table.to_string(index=False))


if __name__ == "__main__":
    main()
