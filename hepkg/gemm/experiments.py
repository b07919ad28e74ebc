"""Experiment helpers for the gemm notebook: shape groups and one configuration -> one row.

:func:`run_config` is top-level and takes a plain dict, so ``hepkg.grid.run_grid`` can run
it in worker processes; on ``sim`` it gives each product's exact op counts. The table helpers
below turn those rows into the paper's tables: price the counts with per-op costs measured on
the machine (:func:`priced`: ``modelled_s``), pick what to measure side by side
(:func:`to_measure`, :func:`pair_products`, run by :mod:`hepkg.gemm.bench`), put the measured
medians beside the modelled times (:func:`with_measured`), and summarize speedups, memory and
key policies, per baseline ('authors' or 'hepkg') and preprocessing.
"""
from __future__ import annotations

import math
import time

import numpy as np

import hepkg.he as he

from .errors import NotApplicable, ShapeTooLarge
from .operands import random_operands
from .protocol import Client, Cloud, centered, gemm_context, matmul

#: The paper's shape groups (Tables 5 and 6).
GROUPS = ("square", "e2dm-r favourable", "m=min", "l=min", "n=min")


def shape_group(m: int, l: int, n: int) -> str:
    """The paper's group of a shape: 'square'; 'e2dm-r favourable' ((m x l)(l x l), l mod m = 0);
    else which dimension is the smallest ('m=min', 'l=min', 'n=min'; ties go to the first)."""
    if m == l == n:
        return "square"
    if l == n and l % m == 0:
        return "e2dm-r favourable"
    p = min(m, l, n)
    return "m=min" if p == m else "l=min" if p == l else "n=min"


def run_config(config: dict) -> dict:
    """Run one configuration and return a result row.

    Keys: m, l, n, method; optional baseline ('hepkg', or 'authors': the methods as the authors'
    code evaluates them), preprocess ('cloud'), backend ('sim'), params ('bfv-8192-default'),
    policy ('pow2'), blocking (None), order ('F'), seed (0), max_abs (auto), insecure (False). The row repeats the configuration and adds ``status``
    ('ok', 'N/A' where the method does not apply, 'too large' where it does not fit),
    seconds (keygen, encrypt, cloud, decrypt), the cloud's op counts and depth, bytes
    uploaded/downloaded, key bytes (Galois + relinearization) and count, the distinct rotation
    steps (the keys the 'exact' policy needs), and ``correct`` (equal to numpy mod t).
    """
    cfg = dict(baseline="hepkg", preprocess="cloud", backend="sim", params="bfv-8192-default", policy="pow2",
               blocking=None, order="F", seed=0, max_abs=None, insecure=False) | dict(config)
    m, l, n, method = cfg["m"], cfg["l"], cfg["n"], cfg["method"]
    params = he.get_params(cfg["params"])
    row = dict(cfg, slots=params.n // 2, group=shape_group(m, l, n), status="ok", reason="")
    t0 = time.perf_counter()
    try:
        ctx = gemm_context(method, m, l, n, backend=cfg["backend"], params=params, policy=cfg["policy"],
                           preprocess=cfg["preprocess"], blocking=cfg["blocking"], order=cfg["order"],
                           insecure=cfg["insecure"], baseline=cfg["baseline"])
    except (NotApplicable, ShapeTooLarge) as exc:
        return row | dict(status="N/A" if isinstance(exc, NotApplicable) else "too large", reason=str(exc))
    keygen = time.perf_counter() - t0
    A, B = random_operands(m, l, n, params.plain_modulus, cfg["seed"], cfg["max_abs"])
    res = matmul((Client(ctx, drop_primes=0), Cloud(ctx.public())), A, B, method, preprocess=cfg["preprocess"],
                 blocking=cfg["blocking"], order=cfg["order"], on_overflow="ignore", baseline=cfg["baseline"])
    keys = ctx.key_sizes()
    return row | dict(
        seconds_keygen=keygen, seconds_encrypt=res.seconds["encrypt"], seconds_cloud=res.seconds["cloud"],
        seconds_decrypt=res.seconds["decrypt"], seconds_total=sum(res.seconds.values()),
        **{k: res.ops[k] for k in ("mul_ct", "mul_pt", "rotate", "keyswitch", "relinearize", "add", "encode", "depth")},
        upload_bytes=res.upload_bytes, download_bytes=res.download_bytes, upload_ciphertexts=res.upload_ciphertexts,
        download_ciphertexts=res.download_ciphertexts, key_bytes=keys.get("galois_keys", 0) + keys.get("relin_key", 0),
        rotation_keys=keys["rotation_keys"], rotation_steps=len(res.plan.rotation_steps()),
        correct=bool(np.array_equal(res.C, centered(A @ B, params.plain_modulus))))


# ----------------------------------------------------------------------------- notebook tables
#: The methods of the random study (Tables 5-6, Figs. 6-8); 'hegmm-ext' is the HEGMM the paper timed.
PAIR_METHODS = ("hegmm-en", "hegmm-ext", "e2dm-s", "e2dm-r", "huang")
E2DM = ("e2dm-s", "e2dm-r")
#: Speedup columns (Tables 5, 6, 10; Figs. 6-7): name -> (method, reference); 'e2dm' is the faster E2DM.
SPEEDUPS = {"HEGMM vs E2DM": ("hegmm-ext", "e2dm"), "HEGMM vs Huang": ("hegmm-ext", "huang"),
            "HEGMM-En vs E2DM": ("hegmm-en", "e2dm"), "HEGMM-En vs Huang": ("hegmm-en", "huang"),
            "Huang vs E2DM": ("huang", "e2dm")}
#: The same for HEGMM-En with baby-step giant-step sigma and tau (hepkg's variant).
BSGS_SPEEDUPS = {"HEGMM-En BSGS vs E2DM": ("hegmm-en-bsgs", "e2dm"), "HEGMM-En BSGS vs Huang": ("hegmm-en-bsgs", "huang"),
                 "HEGMM-En BSGS vs HEGMM-En": ("hegmm-en-bsgs", "hegmm-en")}
#: Fields of a :func:`run_config` configuration (what identifies a run).
CONFIG_KEYS = ("m", "l", "n", "method", "baseline", "preprocess", "backend", "params", "policy", "blocking", "order",
               "seed", "max_abs", "insecure")
_PAIR = ["m", "l", "n", "group", "baseline", "preprocess"]
_PRODUCT = ["m", "l", "n", "method", "baseline", "preprocess", "params", "policy", "blocking"]
_INT_KEYS = ("m", "l", "n", "seed", "max_abs")
_COUNTS = ("mul_ct", "mul_pt", "rotate", "add")


def rows(frame):
    """A ``run_grid`` frame of :func:`run_config` rows without the duplicated ``config_`` columns."""
    out = frame.loc[:, ~frame.columns.str.startswith("config_")].copy()
    out["blocking"] = out["blocking"].map(lambda b: _config_value("blocking", b))
    return out


def expected(row) -> dict | None:
    """``expected_counts`` of a row's product (None for blocked products other than uSCORE's)."""
    from .blocking import uscore_block
    from .counts import expected_counts

    m, l, n, method, pre, period, base = (row[k] for k in ("m", "l", "n", "method", "preprocess", "slots",
                                                           "baseline"))
    if method == "uscore":
        block = row["blocking"] or uscore_block(m, l, n, period, pre, baseline=base)
        return expected_counts(method, m, l, n, pre, period, block=int(block), baseline=base)
    if row["blocking"] is not None:
        return None
    return expected_counts(method, m, l, n, pre, period, row["order"], baseline=base)


def priced(frame, costs: dict):
    """sim rows with their modelled time: ``modelled_s`` (the counts priced with ``costs``, key switches
    as run), ``modelled_exact_s`` and ``keyswitch_exact`` (one key switch per rotation: the 'exact'
    key policy), ``key_bytes_exact`` (one key per distinct step) and ``counts_match`` (counts equal
    :func:`expected`; NA where none is defined).

    ``costs``: parameter-set name -> seconds per op kind (:func:`hepkg.bench.op_costs`).
    """
    import pandas as pd

    from hepkg.bench import estimate

    if frame.empty:
        return frame
    out = rows(frame)
    ok = out["status"] == "ok"
    out["keyswitch_exact"] = (out["rotate"] + out["relinearize"]).where(ok)

    def model(r, ks):
        c = {k: r[k] for k in ("mul_ct", "mul_pt", "add", "encode", "relinearize")} | dict(keyswitch=r[ks])
        return estimate(c, costs[r["params"]])

    for col, ks in (("modelled_s", "keyswitch"), ("modelled_exact_s", "keyswitch_exact")):
        out[col] = [model(r, ks) if good else float("nan") for good, (_, r) in zip(ok, out.iterrows())]
    out["key_bytes_exact"] = out["key_bytes"] * (out["rotation_steps"] + 1) / (out["rotation_keys"] + 1)
    exp = [expected(r) if good else None for good, (_, r) in zip(ok, out.iterrows())]
    out["counts_match"] = pd.array([None if e is None else all(int(r[k]) == e[k] for k in _COUNTS)
                                    for e, (_, r) in zip(exp, out.iterrows())], dtype="boolean")
    return out


def _config_value(key: str, value):
    """A configuration field as :func:`run_config` was given it, from a row that may have been read
    back from CSV (a raw table): NaN is None again, numpy scalars plain, integral fields ints."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    value = value.item() if hasattr(value, "item") else value
    if key == "blocking" and isinstance(value, str) and value.isdigit():
        return int(value)
    return int(value) if key in _INT_KEYS and isinstance(value, float) and value.is_integer() else value


def to_measure(priced_rows, limit_s: float, methods=None, baselines=None, preprocess=None) -> list[dict]:
    """:func:`hepkg.gemm.bench.product` configurations of the applicable rows whose modelled time is at
    most ``limit_s`` (restricted to these methods, baselines, preprocessings when given)."""
    from .bench import product

    keep = priced_rows[(priced_rows["status"] == "ok") & (priced_rows["modelled_s"] <= limit_s)]
    for col, allowed in (("method", methods), ("baseline", baselines), ("preprocess", preprocess)):
        if allowed is not None:
            keep = keep[keep[col].isin(allowed)]
    return [product(**{k: _config_value(k, r[k]) for k in _PRODUCT}) for _, r in keep.iterrows()]


def strongest(runs, methods=E2DM, value: str = "modelled_s"):
    """Per pair, baseline and preprocessing, the row of ``methods`` with the lowest ``value``."""
    ok = runs[(runs["status"].isin(("ok", "measured"))) & runs["method"].isin(methods)].dropna(subset=[value])
    return ok.loc[ok.groupby(["m", "l", "n", "baseline", "preprocess"])[value].idxmin()]


def pair_products(priced_rows, shapes) -> list[dict]:
    """The products measured on these random pairs: HEGMM-En and the faster E2DM (by the model) of each
    pair, baseline and preprocessing."""
    from .bench import product

    import pandas as pd

    wanted = {tuple(s) for s in shapes}
    sel = priced_rows[[s in wanted for s in zip(priced_rows["m"], priced_rows["l"], priced_rows["n"])]]
    sel = pd.concat([sel[(sel["method"] == "hegmm-en") & (sel["status"] == "ok")], strongest(sel)])
    return [product(**{k: _config_value(k, r[k]) for k in _PRODUCT}) for _, r in sel.iterrows()]


def with_measured(modelled, measured):
    """One row per product of the priced sim rows ``modelled``: ``time_s`` is the median measured wall
    time where ``measured`` (:func:`hepkg.gemm.bench.stats`) has the product (``timing``
    'measured', with quartiles ``q1_s``, ``q3_s``, CPU, cloud and library overhead), else the
    modelled time (``timing`` 'modelled'); inapplicable products keep their status."""
    import pandas as pd

    out = modelled.copy()
    out["timing"] = out["status"].where(out["status"] != "ok", "modelled")
    out["time_s"] = out["modelled_s"]
    if measured is None or measured.empty:
        return out
    meas = measured[measured["status"] == "measured"].copy()
    meas["blocking"] = meas["blocking"].map(lambda b: _config_value("blocking", b))
    cols = ["wall_s", "q1_s", "q3_s", "min_s", "max_s", "reps", "cpu_s", "cloud_s", "overhead", "verdict",
            "trace_peak_bytes", "rss_peak_bytes", "cpu_traced_s"]
    key = lambda f: [tuple(map(str, t)) for t in f[_PRODUCT].itertuples(index=False)]  # noqa: E731
    found = dict(zip(key(meas), meas[[c for c in cols if c in meas]].to_dict("records")))
    extra = pd.DataFrame([found.get(k, {}) for k in key(out)], index=out.index)
    out = out.join(extra.drop(columns=[c for c in extra if c in out], errors="ignore"))
    hit = out["wall_s"].notna() if "wall_s" in out else pd.Series(False, index=out.index)
    out.loc[hit, "timing"] = "measured"
    out.loc[hit, "time_s"] = out.loc[hit, "wall_s"]
    return out


def speedups(runs, value: str = "modelled_s", names: dict = SPEEDUPS):
    """Per pair, baseline and preprocessing: the ``names`` ratios of ``value`` (reference / method)."""
    import pandas as pd

    ok = runs[runs["status"] == "ok"]
    wide = ok.pivot_table(index=_PAIR, columns="method", values=value)
    wide = wide.reindex(columns=sorted(set(wide.columns) | set(PAIR_METHODS)))
    wide["e2dm"] = wide[list(E2DM)].min(axis=1)
    return pd.DataFrame({name: wide[ref] / wide[meth] for name, (meth, ref) in names.items()}).reset_index()


def speedup_table(sp, paper: dict, preprocess: str, formula=None):
    """Tables 5/6 per baseline: average, median, max of each speedup per group and overall, beside the
    paper's; ``formula``: the same speedups of :func:`formula_seconds` (the paper's model on our pairs)."""
    import pandas as pd

    def stats(frame):
        sub = frame[frame["preprocess"] == preprocess]
        for baseline, part_b in sub.groupby("baseline"):
            for group, part in [*part_b.groupby("group"), ("overall", part_b)]:
                for name in [c for c in SPEEDUPS if c in paper.get(group, {})]:
                    x = part[name].dropna()
                    yield from ((baseline, group, name, stat, len(x), v) for stat, v in
                                zip(("average", "median", "max"), (x.mean(), x.median(), x.max())))

    cols = ["baseline", "group", "speedup", "stat", "pairs"]
    out = pd.DataFrame(stats(sp), columns=cols + ["modelled"])
    if formula is not None:
        model = pd.DataFrame(stats(formula), columns=cols + ["paper_formula"])
        out = out.merge(model.drop(columns=["pairs", "baseline"]).drop_duplicates(["group", "speedup", "stat"]),
                        on=["group", "speedup", "stat"], how="left")
    stat_index = {"average": 0, "median": 1, "max": 2}
    out["paper"] = [paper[g][n][stat_index[st]] for g, n, st in zip(out["group"], out["speedup"], out["stat"])]
    out["ratio"] = out["modelled"] / out["paper"]
    return out


def speedup_bins(sp, bins=(0, 1, 2, float("inf"))):
    """Figs. 6-7: pairs per speedup range (0, 1], (1, 2], (2, inf) over E2DM, by baseline and preprocessing."""
    import pandas as pd

    names = [c for c in SPEEDUPS if c.endswith("vs E2DM")]
    long = sp.melt(id_vars=["baseline", "preprocess"], value_vars=names, var_name="speedup").dropna()
    long["range"] = pd.cut(long["value"], bins=list(bins)).astype(str)
    return long.groupby(["baseline", "preprocess", "speedup", "range"]).size().rename("pairs").reset_index()


def faster_shares(sp, paper_counts: dict, paper_pairs: int):
    """Figs. 6-7's headline: the share of pairs faster than the better E2DM, per baseline, preprocessing
    and method, beside the paper's (its counts over its ``paper_pairs``)."""
    names = {"HEGMM vs E2DM": "HEGMM", "HEGMM-En vs E2DM": "HEGMM-En", "Huang vs E2DM": "Huang"}
    out = (sp.melt(id_vars=["baseline", "preprocess"], value_vars=list(names), var_name="speedup").dropna()
           .groupby(["baseline", "preprocess", "speedup"])["value"]
           .agg(pairs="size", faster=lambda v: int((v > 1).sum()), median_speedup="median").reset_index())
    out["modelled"] = out["faster"] / out["pairs"]
    out["paper"] = [paper_counts[p][names[s]] / paper_pairs for p, s in zip(out["preprocess"], out["speedup"])]
    out["ratio"] = out["modelled"] / out["paper"]
    return out


def footprint(runs, ct_bytes: int):
    """Fig. 8's model: bytes the cloud holds for a product: its evaluation keys (Galois and
    relinearization, per policy) and the ciphertexts it receives and returns (``ct_bytes`` each)."""
    cts = (runs["upload_ciphertexts"] + runs["download_ciphertexts"]) * ct_bytes
    return runs.assign(memory_pow2=runs["key_bytes"] + cts, memory_exact=runs["key_bytes_exact"] + cts)


def memory_ratios(runs, ct_bytes: int):
    """Per pair and baseline: each method's :func:`footprint` / that of the faster E2DM variant, per key policy."""
    import pandas as pd

    mem = footprint(runs[runs["status"] == "ok"], ct_bytes)
    fast = strongest(mem).set_index(["m", "l", "n", "baseline", "preprocess"])
    out = []
    for policy in ("pow2", "exact"):
        wide = mem.pivot_table(index=["m", "l", "n", "baseline", "preprocess", "group"], columns="method",
                               values=f"memory_{policy}").reset_index("group")
        e2dm = fast[f"memory_{policy}"].reindex(wide.index)
        for method in ("hegmm-ext", "hegmm-en", "huang"):
            out.append(pd.DataFrame({"policy": policy, "method": method, "group": wide["group"],
                                     "ratio": wide[method] / e2dm}).reset_index())
    return pd.concat(out, ignore_index=True)


def measured_memory(measured):
    """Fig. 8 on the measured pairs: per pair, baseline and preprocessing, HEGMM-En's tracemalloc peak
    (the paper's quantity) and peak RSS over the faster E2DM's measured beside it."""
    ok = measured[measured["status"] == "measured"]
    en = ok[ok["method"] == "hegmm-en"].set_index(["m", "l", "n", "baseline", "preprocess"])
    base = ok[ok["method"].isin(E2DM)].set_index(["m", "l", "n", "baseline", "preprocess"])
    out = en[["trace_peak_bytes", "rss_peak_bytes"]].join(base[["method", "trace_peak_bytes", "rss_peak_bytes"]],
                                                          rsuffix="_e2dm", how="inner")
    out["trace_ratio"] = out["trace_peak_bytes"] / out["trace_peak_bytes_e2dm"]
    out["rss_ratio"] = out["rss_peak_bytes"] / out["rss_peak_bytes_e2dm"]
    return out.rename(columns={"method": "e2dm"}).reset_index()


def _formula(row) -> dict:
    """The paper's Table 4 counts of a row's product ({} for uSCORE, which has no row)."""
    from .counts import formula_counts

    try:
        return formula_counts(row["method"], row["m"], row["l"], row["n"], row["preprocess"])
    except ValueError:
        return {}


def formula_seconds(runs, costs: dict):
    """Seconds of the paper's Table 4 expressions priced at ``costs`` (s per 'add', 'mul_ct',
    'mul_pt', 'rotate'; Table 4's last row), per applicable row: the paper's own model."""
    import pandas as pd

    def price(r):
        f = _formula(r) if r["status"] == "ok" else {}
        return sum(f[k] * costs[k] for k in _COUNTS) if f else float("nan")

    return pd.Series([price(r) for _, r in runs.iterrows()], index=runs.index, dtype=float)


def table4(runs, formula_costs: dict):
    """Table 4 long: per product, baseline and op kind, the count on sim, hepkg's closed form
    (:func:`expected`) and the paper's expression (``formula_counts``; 'hegmm-ext' uses its HEGMM
    row), with the modelled time of the counts and the paper's formula priced at ``formula_costs``."""
    import pandas as pd

    ok = runs[runs["status"] == "ok"]
    paper_s = formula_seconds(ok, formula_costs)
    out = []
    for i, r in ok.iterrows():
        exp, formula = expected(r) or {}, _formula(r)
        for k in _COUNTS + ("depth",):
            out.append(dict(m=r["m"], l=r["l"], n=r["n"], method=r["method"], baseline=r["baseline"],
                            preprocess=r["preprocess"], params=r["params"], op=k, counted=r[k], expected=exp.get(k),
                            paper_formula=formula.get(k), modelled_s=r["modelled_s"], paper_formula_s=paper_s[i]))
    return pd.DataFrame(out)


def measured_speedups(measured, modelled):
    """Per measured pair, baseline and preprocessing: HEGMM-En against the faster E2DM measured beside it,
    the speedup measured (medians) and modelled, and the verdict (interquartile overlap: inconclusive)."""
    import pandas as pd

    ok = measured[measured["status"] == "measured"]
    rows = []
    for key, g in ok.groupby(["m", "l", "n", "baseline", "preprocess"]):
        en, base = g[g["method"] == "hegmm-en"], g[g["method"].isin(E2DM)]
        if en.empty or base.empty:
            continue
        en, base = en.iloc[0], base.loc[base["wall_s"].idxmin()]
        mod = modelled.set_index(_PRODUCT[:6])["modelled_s"]
        m_en, m_b = (mod.get(key[:3] + (meth,) + key[3:]) for meth in ("hegmm-en", base["method"]))
        verdict = {"faster than hegmm-en": "slower", "slower than hegmm-en": "faster"}.get(base["verdict"],
                                                                                           "inconclusive")
        rows.append(dict(zip(["m", "l", "n", "baseline", "preprocess"], key), e2dm=base["method"],
                         hegmm_en_s=en["wall_s"], e2dm_s=base["wall_s"], speedup_measured=base["wall_s"] / en["wall_s"],
                         speedup_modelled=m_b / m_en if m_en and m_b else float("nan"), hegmm_en_is=verdict))
    out = pd.DataFrame(rows)
    if len(out):
        out["measured_over_modelled"] = out["speedup_measured"] / out["speedup_modelled"]
    return out


def policy_table(runs):
    """pow2 (the paper's) vs exact rotation keys, modelled per baseline, method and preprocessing (means per
    product): key switches, modelled time, keys held by the cloud and their bytes."""
    ok = runs[(runs["status"] == "ok") & (runs["policy"] == "pow2")]
    est = ok.groupby(["baseline", "method", "preprocess"]).agg(
        products=("modelled_s", "size"), keyswitch_pow2=("keyswitch", "mean"),
        keyswitch_exact=("keyswitch_exact", "mean"), modelled_pow2_s=("modelled_s", "mean"),
        modelled_exact_s=("modelled_exact_s", "mean"), keys_pow2=("rotation_keys", "mean"),
        keys_exact=("rotation_steps", "mean"), key_mb_pow2=("key_bytes", "mean"),
        key_mb_exact=("key_bytes_exact", "mean"))
    est[["key_mb_pow2", "key_mb_exact"]] /= 1e6
    return est.reset_index()
