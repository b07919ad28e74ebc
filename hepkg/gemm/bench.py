"""Encrypted products measured side by side: interleaved repetitions, as the paper's authors timed them.

A *group* is the products of one shape, preprocessing, parameter set and key policy
(several methods and baselines). :func:`measure_group` builds one context holding the
rotation keys every product of the group needs (outside the timer, shared: the authors'
``rotateKeyGen()`` gives every method the same power-of-two keys), then, after a warm-up
round, runs every product once per round (A B C, A B C, ...). Each run is the whole product
as the authors timed it (the client encrypts, the cloud multiplies, the client decrypts),
checked against numpy mod t, and timed: ``wall_s``, ``cpu_s`` (process user + system time,
the authors' ``getrusage`` measure), ``he_s`` (time inside the HE library) and
``overhead = wall_s / he_s``, with the cloud's part. One more run per product, after the
timed ones, is traced: the ``tracemalloc`` peak of the Python heap (the paper's Fig. 8
quantity; the authors also timed with it on, which we do not: its own CPU time is
``cpu_traced_s``) and the peak resident memory of the run (``rss_peak_bytes``, the kernel's
high-water mark reset before it).

:func:`stats` gives per product the median and quartiles and the verdict against HEGMM-En
of the same group and baseline (:func:`hepkg.bench.compare`: inside the noise is
inconclusive). ``python -m hepkg.gemm.bench 16-64-64 64-16-64 64-64-16 --reps 10`` prints Table 7.
"""
from __future__ import annotations

import argparse
import os
import resource
import time
import tracemalloc
from collections import defaultdict

import numpy as np

import hepkg.he as he
from hepkg.bench import compare, timed
from hepkg.bench.memory import peak_rss, reset_peak_rss

from .errors import NotApplicable, ShapeTooLarge
from .operands import random_operands
from .protocol import Client, Cloud, centered, make_plan, matmul

METHODS = ("hegmm-en", "hegmm-ext", "e2dm-s", "e2dm-r", "huang", "uscore")
#: What identifies a product, and what puts products in one interleaved group.
PRODUCT = ("m", "l", "n", "method", "baseline", "preprocess", "params", "policy", "blocking")
GROUP = ("m", "l", "n", "preprocess", "params", "policy")
_VERDICT = {"less": "faster than hegmm-en", "greater": "slower than hegmm-en", "inconclusive": "inconclusive"}
_DEFAULTS = dict(baseline="hepkg", preprocess="client", params="bfv-8192-t20", policy="pow2", blocking=None)


def product(**config) -> dict:
    """A product configuration with the defaults filled in (the authors' setting: sigma, tau by the client)."""
    return _DEFAULTS | config


def traced(fn) -> tuple[dict, object]:
    """Run ``fn()`` with tracemalloc on: its Python-heap peak, peak RSS (NaN off Linux) and CPU time."""
    rss = reset_peak_rss()
    tracemalloc.start()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    try:
        out = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return dict(trace_peak_bytes=peak, rss_peak_bytes=peak_rss() if rss else float("nan"), cpu_traced_s=cpu), out


def measure_group(config: dict) -> list[dict]:
    """The runs of one group (a grid configuration, picklable): one row per kept run and product.

    ``config``: the group's ``m, l, n, preprocess, params, policy``; ``products``: a list of
    {method, baseline, blocking}; ``reps``, optional ``warmup`` (1), ``seed`` (0), ``backend``
    ('pyfhel'), ``trace`` (True: one traced run per product). A product that does not apply is
    one row with its ``status`` ('N/A', 'too large') and the reason.
    """
    cfg = dict(warmup=1, seed=0, backend="pyfhel", trace=True) | dict(config)
    m, l, n, pre, params = (cfg[k] for k in ("m", "l", "n", "preprocess", "params"))
    period = he.get_params(params).n // 2
    rows, plans = [], {}
    for p in cfg["products"]:
        p = dict(p, blocking=p.get("blocking"))
        base = {k: cfg[k] for k in GROUP} | p
        try:
            plans[p["method"], p["baseline"], p["blocking"]] = (base, make_plan(
                p["method"], m, l, n, period, preprocess=pre, blocking=p["blocking"], baseline=p["baseline"]))
        except (NotApplicable, ShapeTooLarge) as exc:
            rows.append(base | dict(status="N/A" if isinstance(exc, NotApplicable) else "too large", reason=str(exc)))
    if not plans:
        return rows
    steps = sorted(set().union(*(plan.rotation_steps() for _, plan in plans.values())))
    t0 = time.perf_counter()
    ctx = he.context(cfg["backend"], params, rotations=steps, policy=cfg["policy"])
    keygen_s = time.perf_counter() - t0
    parties = (Client(ctx, drop_primes=0), Cloud(ctx.public()))  # the paper's setting
    t = ctx.plain_modulus
    A, B = random_operands(m, l, n, t, cfg["seed"])
    want = centered(A @ B, t)

    def run(key):
        base, _ = plans[key]
        return matmul(parties, A, B, base["method"], preprocess=pre, blocking=base["blocking"],
                      baseline=base["baseline"], on_overflow="ignore")

    extra = defaultdict(list)
    for round_ in range(cfg["warmup"] + cfg["reps"]):
        for key in plans:
            timing, res = timed(lambda key=key: run(key))
            if not np.array_equal(res.C, want):
                raise AssertionError(f"{key} returned a wrong {m} x {l} x {n} product")
            if round_ >= cfg["warmup"]:
                extra[key].append(timing | dict(rep=round_ - cfg["warmup"], cloud_s=res.seconds["cloud"]))
    for key, (base, plan) in plans.items():
        memory, res = traced(lambda key=key: run(key)) if cfg["trace"] else ({}, run(key))
        ops = {k: res.ops[k] for k in ("mul_ct", "mul_pt", "rotate", "keyswitch", "relinearize", "add")}
        common = base | dict(status="ok", reason="", correct=True, keygen_s=keygen_s, key_bytes=ctx.key_sizes().get(
            "galois_keys", 0), rotation_steps=len(plan.rotation_steps()), **ops, **memory)
        rows += [common | r for r in extra[key]]
    return rows


def stats(runs):
    """Per product: reps, median, quartiles, min and max of wall time; medians of CPU, cloud and library
    time, overhead, the traced run's memory; the verdict against HEGMM-En of the same group and baseline."""
    import pandas as pd

    keys = [k for k in PRODUCT if k in runs.columns]
    ok = runs[runs.status == "ok"]
    rows = []
    for key, g in runs.groupby(keys, sort=False, dropna=False):
        row = dict(zip(keys, key))
        if not (g.status == "ok").all():
            rows.append(row | dict(status=g.status.iloc[0], reason=g.reason.iloc[0]))
            continue
        same = (ok[[k for k in GROUP if k in keys] + ["baseline"]] == pd.Series(
            {k: row[k] for k in GROUP if k in keys} | dict(baseline=row["baseline"]))).all(axis=1)
        en = ok[same & (ok.method == "hegmm-en") & ok.blocking.isna()].wall_s
        q1, med, q3 = g.wall_s.quantile([0.25, 0.5, 0.75])
        rows.append(row | dict(
            status="measured", correct=bool(g.correct.all()), reps=len(g), wall_s=med, q1_s=q1, q3_s=q3, min_s=g.wall_s.min(), max_s=g.wall_s.max(),
            cpu_s=g.cpu_s.median(), cpu_q1_s=g.cpu_s.quantile(0.25), cpu_q3_s=g.cpu_s.quantile(0.75),
            cloud_s=g.cloud_s.median(), he_s=g.he_s.median(), overhead=g.overhead.median(),
            **{k: g[k].iloc[0] for k in ("mul_ct", "mul_pt", "rotate", "keyswitch", "relinearize", "key_bytes",
                                         "trace_peak_bytes", "rss_peak_bytes", "cpu_traced_s") if k in g},
            verdict=None if row["method"] == "hegmm-en" or not len(en) else _VERDICT[compare(g.wall_s, en)]))
    return pd.DataFrame(rows)


def groups(products: list[dict], reps: int, **extra) -> list[dict]:
    """The :func:`measure_group` configurations of these :func:`product` configurations."""
    out: dict[tuple, dict] = {}
    for p in products:
        key = tuple(p[k] for k in GROUP)
        g = out.setdefault(key, dict(zip(GROUP, key), products=[], reps=reps, **extra))
        item = {k: p[k] for k in ("method", "baseline", "blocking")}
        if item not in g["products"]:
            g["products"].append(item)
    return list(out.values())


def _shape(text: str) -> tuple[int, int, int]:
    m, l, n = (int(x) for x in text.split("-"))
    return m, l, n


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shapes", nargs="+", type=_shape, help="m-l-n, e.g. 16-64-64")
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--backend", default="pyfhel")
    parser.add_argument("--params", default=_DEFAULTS["params"])
    parser.add_argument("--preprocess", choices=("cloud", "client"), default=_DEFAULTS["preprocess"])
    parser.add_argument("--baselines", default="authors,hepkg")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--csv")
    args = parser.parse_args(argv)
    import pandas as pd

    from hepkg.reference import HEGMM_TABLE7_TIME_S

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    prods = [product(m=m, l=l, n=n, method=meth, baseline=b, preprocess=args.preprocess, params=args.params)
             for m, l, n in args.shapes for b in args.baselines.split(",") for meth in args.methods.split(",")]
    runs = pd.DataFrame([r for g in groups(prods, args.reps, backend=args.backend) for r in measure_group(g)])
    table = stats(runs)
    table["paper_s"] = [HEGMM_TABLE7_TIME_S.get((m, l, n), {}).get("hegmm" if meth == "hegmm-ext" else meth)
                        for m, l, n, meth in zip(table.m, table.l, table.n, table.method)]
    table["ratio"] = table.get("wall_s") / table.paper_s
    if args.csv:
        table.to_csv(args.csv, index=False)
    cols = [c for c in ("m", "l", "n", "baseline", "method", "status", "reps", "wall_s", "q1_s", "q3_s", "cpu_s",
                        "cloud_s", "overhead", "paper_s", "ratio", "verdict") if c in table]
    with pd.option_context("display.width", 220, "display.max_columns", 20, "display.float_format", "{:.4g}".format):
        print(table[cols].to_string(index=False))


if __name__ == "__main__":
    main()
