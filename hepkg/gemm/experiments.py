"""Experiment helpers for the gemm notebook: shapes, operands, and one configuration -> one row.

:func:`run_config` is top-level and takes a plain dict, so ``hepkg.grid.run_grid`` can run
it in worker processes. The table helpers below turn its rows into the paper's tables: price
sim counts with measured per-op costs (:func:`priced`: the floor), pick what to measure
(:func:`affordable`, :func:`measure_configs`), merge measured and estimated runs
(:func:`combine`), and summarize speedups, memory and key policies.
"""
from __future__ import annotations

import math
import time

import numpy as np

import hepkg.he as he

from .errors import NotApplicable, ShapeTooLarge
from .protocol import Client, Cloud, centered, gemm_context, matmul

#: The paper's shape groups (Tables 5 and 6).
GROUPS = ("square", "e2dm-r favourable", "m=min", "l=min", "n=min")


def random_shapes(n_pairs: int, low: int = 1, high: int = 64, seed: int = 0) -> list[tuple[int, int, int]]:
    """``n_pairs`` shapes (m, l, n), each dimension uniform in [low, high] (Sec. 4.3: [1, 64])."""
    rng = np.random.default_rng(seed)
    return [tuple(int(x) for x in row) for row in rng.integers(low, high + 1, size=(n_pairs, 3))]


def shape_group(m: int, l: int, n: int) -> str:
    """The paper's group of a shape: 'square'; 'e2dm-r favourable' ((m x l)(l x l), l mod m = 0);
    else which dimension is the smallest ('m=min', 'l=min', 'n=min'; ties go to the first)."""
    if m == l == n:
        return "square"
    if l == n and l % m == 0:
        return "e2dm-r favourable"
    p = min(m, l, n)
    return "m=min" if p == m else "l=min" if p == l else "n=min"


def random_operands(m: int, l: int, n: int, t: int, seed: int = 0, max_abs: int | None = None):
    """Random integer A (m x l), B (l x n) whose exact product fits t (|entries| <= sqrt(t/2 / l))."""
    v = max_abs if max_abs is not None else max(1, math.isqrt(t // 2 // l))
    rng = np.random.default_rng(seed)
    return rng.integers(-v, v + 1, size=(m, l)), rng.integers(-v, v + 1, size=(l, n))


def run_config(config: dict) -> dict:
    """Run one configuration and return a result row.

    Keys: m, l, n, method; optional preprocess ('cloud'), backend ('sim'), params
    ('bfv-8192-default'), policy ('pow2'), blocking (None), order ('F'), seed (0),
    max_abs (auto), insecure (False). The row repeats the configuration and adds ``status``
    ('ok', 'N/A' where the method does not apply, 'too large' where it does not fit),
    seconds (keygen, encrypt, cloud, decrypt), the cloud's op counts and depth, bytes
    uploaded/downloaded, key bytes (Galois + relinearization) and count, the distinct rotation
    steps (the keys the 'exact' policy needs), and ``correct`` (equal to numpy mod t).
    """
    cfg = dict(preprocess="cloud", backend="sim", params="bfv-8192-default", policy="pow2", blocking=None,
               order="F", seed=0, max_abs=None, insecure=False) | dict(config)
    m, l, n, method = cfg["m"], cfg["l"], cfg["n"], cfg["method"]
    params = he.get_params(cfg["params"])
    row = dict(cfg, slots=params.n // 2, group=shape_group(m, l, n), status="ok", reason="")
    t0 = time.perf_counter()
    try:
        ctx = gemm_context(method, m, l, n, backend=cfg["backend"], params=params, policy=cfg["policy"],
                           preprocess=cfg["preprocess"], blocking=cfg["blocking"], order=cfg["order"],
                           insecure=cfg["insecure"])
    except (NotApplicable, ShapeTooLarge) as exc:
        return row | dict(status="N/A" if isinstance(exc, NotApplicable) else "too large", reason=str(exc))
    keygen = time.perf_counter() - t0
    A, B = random_operands(m, l, n, params.plain_modulus, cfg["seed"], cfg["max_abs"])
    res = matmul((Client(ctx), Cloud(ctx.public())), A, B, method, preprocess=cfg["preprocess"],
                 blocking=cfg["blocking"], order=cfg["order"], on_overflow="ignore")
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
BASELINES = ("e2dm-s", "e2dm-r", "huang")
#: Speedup columns (Tables 5, 6, 10; Figs. 6-7): name -> (method, reference); 'e2dm' is the faster E2DM.
SPEEDUPS = {"HEGMM vs E2DM": ("hegmm-ext", "e2dm"), "HEGMM vs Huang": ("hegmm-ext", "huang"),
            "HEGMM-En vs E2DM": ("hegmm-en", "e2dm"), "HEGMM-En vs Huang": ("hegmm-en", "huang"),
            "Huang vs E2DM": ("huang", "e2dm")}
#: The same for HEGMM-En with baby-step giant-step sigma and tau (hepkg's variant).
BSGS_SPEEDUPS = {"HEGMM-En BSGS vs E2DM": ("hegmm-en-bsgs", "e2dm"), "HEGMM-En BSGS vs Huang": ("hegmm-en-bsgs", "huang"),
                 "HEGMM-En BSGS vs HEGMM-En": ("hegmm-en-bsgs", "hegmm-en")}
#: Fields of a :func:`run_config` configuration (what identifies a run).
CONFIG_KEYS = ("m", "l", "n", "method", "preprocess", "backend", "params", "policy", "blocking", "order", "seed",
               "max_abs", "insecure")
_MATCH = ("m", "l", "n", "method", "preprocess", "params", "policy", "blocking")
_INT_KEYS = ("m", "l", "n", "seed", "max_abs")
_COUNTS = ("mul_ct", "mul_pt", "rotate", "add")


def rows(frame):
    """A ``run_grid`` frame of :func:`run_config` rows without the duplicated ``config_`` columns."""
    out = frame.loc[:, ~frame.columns.str.startswith("config_")].copy()
    out["blocking"] = out["blocking"].map(lambda b: None if b is None or b != b else b)
    return out


def expected(row) -> dict | None:
    """``expected_counts`` of a row's product (None for blocked products other than uSCORE's)."""
    from .blocking import uscore_block
    from .counts import expected_counts

    m, l, n, method, pre, period = (row[k] for k in ("m", "l", "n", "method", "preprocess", "slots"))
    if method == "uscore":
        block = row["blocking"] or uscore_block(m, l, n, period, pre)
        return expected_counts(method, m, l, n, pre, period, block=int(block))
    if row["blocking"] is not None:
        return None
    return expected_counts(method, m, l, n, pre, period, row["order"])


def priced(frame, costs: dict):
    """Rows with their op-count floor: ``floor_s`` (as run), ``floor_exact_s`` and ``keyswitch_exact``
    (one key switch per rotation: the 'exact' key policy), ``key_bytes_exact`` (one key per
    distinct step), ``counts_match`` (counts equal :func:`expected`; NaN where none is defined)
    and ``measured_over_floor`` (cloud seconds / floor, for runs on a real backend).

    ``costs``: parameter-set name -> seconds per op kind (:func:`hepkg.bench.op_costs`).
    """
    import pandas as pd

    from hepkg.bench import estimate

    if frame.empty:
        return frame
    out = rows(frame)
    ok = out["status"] == "ok"
    out["keyswitch_exact"] = (out["rotate"] + out["relinearize"]).where(ok)

    def floor(r, ks):
        c = {k: r[k] for k in ("mul_ct", "mul_pt", "add", "encode", "relinearize")} | dict(keyswitch=r[ks])
        return estimate(c, costs[r["params"]])

    for col, ks in (("floor_s", "keyswitch"), ("floor_exact_s", "keyswitch_exact")):
        out[col] = [floor(r, ks) if good else float("nan") for good, (_, r) in zip(ok, out.iterrows())]
    out["key_bytes_exact"] = out["key_bytes"] * (out["rotation_steps"] + 1) / (out["rotation_keys"] + 1)
    exp = [expected(r) if good else None for good, (_, r) in zip(ok, out.iterrows())]
    out["counts_match"] = pd.array([None if e is None else all(int(r[k]) == e[k] for k in _COUNTS)
                                    for e, (_, r) in zip(exp, out.iterrows())], dtype="boolean")
    out["measured_over_floor"] = (out["seconds_cloud"] / out["floor_s"]).where(out["backend"] != "sim")
    return out


def _config_value(key: str, value):
    """A configuration field as :func:`run_config` was given it, from a row that may have been read
    back from CSV (a raw table): NaN is None again, numpy scalars plain, integral fields ints."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    value = value.item() if hasattr(value, "item") else value
    return int(value) if key in _INT_KEYS and isinstance(value, float) and value.is_integer() else value


def affordable(priced_rows, limit_s: float, backend: str, **changes) -> list[dict]:
    """Configurations of the applicable rows whose floor is at most ``limit_s``, moved to ``backend``."""
    keep = priced_rows[(priced_rows["status"] == "ok") & (priced_rows["floor_s"] <= limit_s)]
    return [{k: _config_value(k, r[k]) for k in CONFIG_KEYS} | dict(backend=backend, **changes)
            for _, r in keep.iterrows()]


def _keys(frame, cols) -> list[tuple]:
    return [tuple(map(str, t)) for t in frame[list(cols)].itertuples(index=False)]


def measure_configs(priced_rows, shapes, backend: str, methods=None, exact=("cloud",)) -> list[dict]:
    """What to measure on ``backend`` for these shapes: ``methods`` (None: HEGMM-En and the
    :func:`strongest` baseline of each pair and preprocessing) with the rows' key policy, and the
    same again with exact keys for the preprocessings in ``exact``."""
    import pandas as pd

    wanted = {tuple(s) for s in shapes}
    chosen = np.array([s in wanted for s in zip(priced_rows["m"], priced_rows["l"], priced_rows["n"])], dtype=bool)
    sel = priced_rows[(priced_rows["status"] == "ok") & chosen]
    sel = sel[sel["method"].isin(methods)] if methods else pd.concat([sel[sel["method"] == "hegmm-en"], strongest(sel)])
    configs = affordable(sel, math.inf, backend)
    return configs + [c | dict(policy="exact") for c in configs if c["preprocess"] in exact]


def combine(estimated, measured):
    """One row per configuration: the measured run where there is one (``timing`` 'measured', with
    ``counts_match`` also requiring the sim counts), else the priced sim run ('estimated', time = floor).
    ``time_s`` is the cloud's time: measured seconds, or the floor."""
    import pandas as pd

    est = estimated.assign(timing="estimated", time_s=estimated["floor_s"])
    if measured is None or measured.empty:
        return est
    same = [k for k in _MATCH if k != "policy"]  # op counts do not depend on the key policy
    sim = dict(zip(_keys(est, same), est[list(_COUNTS)].to_numpy().tolist()))
    meas = measured.assign(timing="measured", time_s=measured["seconds_cloud"])
    agree = [sim.get(k) in (None, c) for k, c in zip(_keys(meas, same), meas[list(_COUNTS)].to_numpy().tolist())]
    meas["counts_match"] = meas["counts_match"].fillna(True) & pd.array(agree, dtype="boolean")
    done = set(_keys(meas, _MATCH))
    rest = est[[k not in done for k in _keys(est, _MATCH)]]
    return pd.concat([rest, meas], ignore_index=True)


def speedups(runs, value: str = "floor_s", names: dict = SPEEDUPS):
    """Per pair (and preprocessing): the ``names`` ratios of ``value`` (reference / method)."""
    import pandas as pd

    ok = runs[runs["status"] == "ok"]
    wide = ok.pivot_table(index=["m", "l", "n", "group", "preprocess"], columns="method", values=value)
    wide = wide.reindex(columns=sorted(set(wide.columns) | set(PAIR_METHODS)))
    wide["e2dm"] = wide[["e2dm-s", "e2dm-r"]].min(axis=1)
    return pd.DataFrame({name: wide[ref] / wide[meth] for name, (meth, ref) in names.items()}).reset_index()


def speedup_table(sp, paper: dict, preprocess: str, formula=None):
    """Tables 5/6: average, median, max of each speedup per group and overall, beside the paper's;
    ``formula``: the same speedups of :func:`formula_seconds` (the paper's model on our pairs)."""
    import pandas as pd

    def stats(frame):
        sub = frame[frame["preprocess"] == preprocess]
        for group, part in [*sub.groupby("group"), ("overall", sub)]:
            for name in [c for c in SPEEDUPS if c in paper.get(group, {})]:
                x = part[name].dropna()
                yield from ((group, name, stat, len(x), v) for stat, v in
                            zip(("average", "median", "max"), (x.mean(), x.median(), x.max())))

    out = pd.DataFrame(stats(sp), columns=["group", "speedup", "stat", "pairs", "ours"])
    if formula is not None:
        model = pd.DataFrame(stats(formula), columns=["group", "speedup", "stat", "pairs", "formula"])
        out = out.merge(model.drop(columns="pairs"), on=["group", "speedup", "stat"], how="left")
    stat_index = {"average": 0, "median": 1, "max": 2}
    out["paper"] = [paper[g][n][stat_index[st]] for g, n, st in zip(out["group"], out["speedup"], out["stat"])]
    out["ratio"] = out["ours"] / out["paper"]
    return out


def speedup_bins(sp, bins=(0, 1, 2, float("inf"))):
    """Figs. 6-7: pairs per speedup range (0, 1], (1, 2], (2, inf) over E2DM, by preprocessing."""
    import pandas as pd

    names = [c for c in SPEEDUPS if c.endswith("vs E2DM")]
    long = sp.melt(id_vars=["preprocess"], value_vars=names, var_name="speedup").dropna()
    long["range"] = pd.cut(long["value"], bins=list(bins)).astype(str)
    return long.groupby(["preprocess", "speedup", "range"]).size().rename("pairs").reset_index()


def strongest(runs, methods=BASELINES):
    """Per pair and preprocessing, the method of ``methods`` with the lowest floor."""
    ok = runs[(runs["status"] == "ok") & runs["method"].isin(methods)]
    return ok.loc[ok.groupby(["m", "l", "n", "preprocess"])["floor_s"].idxmin()]


def footprint(runs, ct_bytes: int):
    """Fig. 8's memory: bytes the cloud holds for a product: its evaluation keys (Galois and
    relinearization, per policy) and the ciphertexts it receives and returns (``ct_bytes`` each)."""
    cts = (runs["upload_ciphertexts"] + runs["download_ciphertexts"]) * ct_bytes
    return runs.assign(memory_pow2=runs["key_bytes"] + cts, memory_exact=runs["key_bytes_exact"] + cts)


def memory_ratios(runs, ct_bytes: int):
    """Per pair: each method's :func:`footprint` / that of the faster E2DM variant, per key policy."""
    import pandas as pd

    mem = footprint(runs[runs["status"] == "ok"], ct_bytes)
    out = []
    for policy in ("pow2", "exact"):
        wide = mem.pivot_table(index=["m", "l", "n", "group", "preprocess"], columns="method",
                               values=f"memory_{policy}")
        fast = mem.pivot_table(index=["m", "l", "n", "group", "preprocess"], columns="method", values="floor_s")
        fast = fast.reindex(columns=["e2dm-s", "e2dm-r"])
        e2dm = wide["e2dm-s"].where(fast["e2dm-r"].isna() | (fast["e2dm-s"] <= fast["e2dm-r"]), wide.get("e2dm-r"))
        for method in ("hegmm-ext", "hegmm-en", "huang"):
            out.append(pd.DataFrame({"policy": policy, "method": method, "ratio": wide[method] / e2dm}).reset_index())
    return pd.concat(out, ignore_index=True)


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
    """Table 4 long: per product and op kind, the count measured on the backend, hepkg's closed form
    (:func:`expected`) and the paper's expression (``formula_counts``; 'hegmm-ext' uses its HEGMM
    row), with the floor of the measured counts and the paper's formula priced at ``formula_costs``."""
    import pandas as pd

    ok = runs[runs["status"] == "ok"]
    paper_s = formula_seconds(ok, formula_costs)
    out = []
    for i, r in ok.iterrows():
        exp, formula = expected(r) or {}, _formula(r)
        for k in _COUNTS + ("depth",):
            out.append(dict(m=r["m"], l=r["l"], n=r["n"], method=r["method"], preprocess=r["preprocess"],
                            params=r["params"], op=k, measured=r[k], expected=exp.get(k),
                            paper_formula=formula.get(k), floor_s=r["floor_s"], paper_formula_s=paper_s[i]))
    return pd.DataFrame(out)


_PAIR = ["m", "l", "n", "group", "preprocess"]


def measured_speedups(runs, method: str = "hegmm-en"):
    """Per pair measured beside its strongest baseline (pow2 keys): the method's speedup, measured
    (cloud seconds) and modelled (floors), and their ratio."""
    meas = runs[(runs["timing"] == "measured") & (runs["policy"] == "pow2") & (runs["status"] == "ok")]
    en = meas[meas["method"] == method].set_index(_PAIR)[["time_s", "floor_s"]]
    base = strongest(meas).set_index(_PAIR)[["method", "time_s", "floor_s"]]
    out = en.join(base, rsuffix="_baseline", how="inner").rename(columns={"method": "baseline"})
    out["speedup_measured"] = out["time_s_baseline"] / out["time_s"]
    out["speedup_model"] = out["floor_s_baseline"] / out["floor_s"]
    out["measured_over_model"] = out["speedup_measured"] / out["speedup_model"]
    return out.reset_index()


def policy_table(runs):
    """pow2 (the paper's) vs exact rotation keys, per method and preprocessing, means per product:
    key switches, floor, keys held and their bytes from the pow2 runs (the exact values follow from
    their counts), and, where the same product was measured under both policies, the measured
    cloud and key-generation seconds and key bytes."""
    import pandas as pd

    ok = runs[runs["status"] == "ok"]
    est = ok[ok["policy"] == "pow2"].groupby(["method", "preprocess"]).agg(
        products=("floor_s", "size"), keyswitch_pow2=("keyswitch", "mean"),
        keyswitch_exact=("keyswitch_exact", "mean"), floor_pow2_s=("floor_s", "mean"),
        floor_exact_s=("floor_exact_s", "mean"), keys_pow2=("rotation_keys", "mean"),
        keys_exact=("rotation_steps", "mean"), key_mb_pow2=("key_bytes", "mean"),
        key_mb_exact=("key_bytes_exact", "mean"))
    est[["key_mb_pow2", "key_mb_exact"]] /= 1e6
    meas = ok[ok["timing"] == "measured"].pivot_table(
        index=["m", "l", "n", "method", "preprocess"], columns="policy",
        values=["seconds_cloud", "seconds_keygen", "key_bytes", "keyswitch"]).dropna()
    if meas.empty:
        return est.reset_index()
    meas.columns = [f"measured_{v}_{p}" for v, p in meas.columns]
    by = meas.groupby(["method", "preprocess"])
    both = by.mean().assign(measured_products=by.size())
    return pd.concat([est, both], axis=1).reset_index()
