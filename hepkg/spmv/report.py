"""The spmv notebook's tables, figures and claims, shaped from its raw tables (no HE calls).

Inputs are the raw tables of ``notebooks/10_spmv.ipynb`` (see :mod:`hepkg.bench.raw`):
``predicted`` (every party's exact counts per matrix and method, :func:`~hepkg.spmv.experiments.grid_row`
in ``estimate`` mode), ``runs`` (interleaved repetitions, :func:`hepkg.spmv.bench.measure_matrix`),
``memory`` (peak RSS of runs in a new interpreter each), ``noise``, ``table2``, ``table3``.
Every time is ``measured`` (median of interleaved repetitions, with quartiles and min-max) or
``modelled`` (exact counts x per-op times observed in this run's measured runs); a speedup or
claim compares measured with measured, or modelled with modelled.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from hepkg.bench import observed_costs
from hepkg.reference import (CSSC_CIPHERTEXT_MB, CSSC_FIG10_SLOPE, CSSC_PAPER_NAMES, CSSC_TABLE1_OPS_MS,
                             CSSC_TABLE4_NOISE_BITS, CSSC_TABLE5_TIME_S, CSSC_TABLE6_APPROXIMATE,
                             CSSC_TABLE6_MEMORY_MB, CSSC_TABLE7_COMMUNICATION, CSSC_TABLE8_RHOMBUS, CSSC_TABLEA9_ALL,
                             Claim)
from hepkg.reference import verdict as V
from hepkg.reference.compare import paper_vs_ours

from .bench import MODELLED, measured_stats, observed
from .experiments import METHODS, loglog_fit

#: The paper's Table 5 column each method is compared with.
PAPER_COL = {"cssc": "ours", "diagonal": "diagonal", "diagonal-dense": "diagonal", "hegmm": "hegmm"}
TABLE1_OPS = ["encrypt", "decrypt", "add", "mul_ct", "mul_pt", "rotate"]
MB = 1e6


def _price(rows, prefix: str, costs_: dict) -> list[float]:
    from hepkg.bench import estimate

    cols = [c for c in rows.columns if c.startswith(prefix) and c != prefix + "depth"]
    return [estimate({c[len(prefix):]: v for c, v in r.items()}, costs_) for r in rows[cols].to_dict("records")]


def summary(predicted, runs, memory, noise, costs_: dict):
    """One row per (matrix, method): the pattern's facts, ``floor_s``/``cloud_floor_s`` (modelled),
    ``status`` measured or modelled, ``time_s``/``cloud_time_s`` (median or floor), the spread, the
    run's library time and overhead, the verdict against CSSC, ``counts_match`` (a measured run's
    counts equal the prediction), median bytes per message and of the keys each party received,
    memory (median and range of peak RSS above start, MiB) and CSSC's noise budget."""
    est = predicted.set_index(["matrix", "method"])
    out = est[["rows", "cols", "nnz", "n_ct", "uploads_a", "uploads_b", "results"]].copy()
    out["floor_s"], out["cloud_floor_s"] = _price(est, "op_", costs_), _price(est, "cloud_", costs_)
    out["status"], out["time_s"], out["cloud_time_s"] = MODELLED, out.floor_s, out.cloud_floor_s
    if len(runs):
        stats = measured_stats(runs).set_index(["matrix", "method"])
        out = out.join(stats.drop(columns=["status"]))
        measured = out.index.isin(stats.index)
        out.loc[measured, "status"] = "measured"
        out.loc[measured, "time_s"] = out.loc[measured, "median_s"]
        out.loc[measured, "cloud_time_s"] = out.loc[measured, "cloud_s"]
        byte_cols = [c for c in runs if c.startswith("bytes_")]
        out = out.join(runs.groupby(["matrix", "method"])[byte_cols].median())
        ops = [c for c in runs if c.startswith("op_") and c in est]
        first = runs.groupby(["matrix", "method"])[ops].agg(["min", "max"])
        own = [i for i in stats.index if i[1] in METHODS + ("diagonal-dense",)]
        out["counts_match"] = pd.Series({i: bool(all(first.loc[i, (c, "min")] == first.loc[i, (c, "max")]
                                                     == est.loc[i, c] for c in ops)) for i in own}, dtype=object)
    out["measured_over_floor"] = out.time_s.where(out.status == "measured") / out.floor_s
    if len(memory):
        mem = memory.groupby(["matrix", "method"]).delta_rss.agg(["median", "min", "max", "count"]) / 2 ** 20
        mem.columns = ["rss_mib", "rss_min_mib", "rss_max_mib", "rss_runs"]
        mem["rss_runs"] *= 2 ** 20
        mem["py_mib"] = memory.groupby(["matrix", "method"]).py_peak.median() / 2 ** 20
        out = out.join(mem)
    if len(noise):
        out = out.join(noise.assign(method="cssc").set_index(["matrix", "method"])[
            ["fresh_bits", "result_bits_min", "result_bits_max", "depth"]])
    return out


def table1(runs, calibration: dict, primitives=None):
    """Per-op ms: the paper's, observed inside the library in this run's measured runs, the
    calibration, and the primitives notebook's (SEAL default modulus), with ours / paper."""
    seen = observed_costs(observed(runs)) if len(runs) else {}
    kind = {o: "keyswitch" if o == "rotate" else o for o in TABLE1_OPS}
    tab = pd.DataFrame({"op": TABLE1_OPS, "paper_ms": [CSSC_TABLE1_OPS_MS[o]["he"] for o in TABLE1_OPS],
                        "observed_in_runs_ms": [1e3 * seen[kind[o]] if kind[o] in seen else math.nan
                                                for o in TABLE1_OPS],
                        "calibration_ms": [1e3 * calibration[kind[o]] for o in TABLE1_OPS]})
    if primitives is not None and "pyfhel bfv-8192-default" in primitives:
        tab["primitives_ms"] = primitives.set_index("op")["pyfhel bfv-8192-default"].reindex(TABLE1_OPS).to_numpy()
    tab["ours_ms"] = tab.observed_in_runs_ms.fillna(tab.calibration_ms)
    tab["ratio"] = tab.ours_ms / tab.paper_ms
    return tab


def table4(s):
    """CSSC's noise budget per measured matrix against the bits the paper's Table 4 implies it uses."""
    t = CSSC_TABLE4_NOISE_BITS
    paper_used = t["mul_ct"][0] - t["mul_ct"][1] + t["mul_pt"][0] - t["mul_pt"][1]
    cssc = s.xs("cssc", level="method")
    tab = cssc.reindex(columns=["nnz", "n_ct", "fresh_bits", "result_bits_min", "result_bits_max", "depth"]).dropna()
    tab = tab.astype(int)
    tab = tab.assign(bits_used=tab.fresh_bits - tab.result_bits_min, paper_fresh=t["mul_ct"][0],
                     paper_bits_used=paper_used, paper_depth=2).reset_index()
    tab["ratio_used"] = tab.bits_used / tab.paper_bits_used
    return tab


def table5_time(s, methods):
    """Long table: time per (matrix, method) with status and spread beside the paper's Table 5."""
    paper = {(m, meth): row[col] for m, row in CSSC_TABLE5_TIME_S.items() for meth, col in PAPER_COL.items()
             if row[col] is not None}
    long = s.reset_index().loc[lambda d: d.method.isin(methods),
                               ["matrix", "rows", "cols", "nnz", "method", "status", "time_s", "q1_s", "q3_s",
                                "min_s", "max_s", "reps", "floor_s", "run_overhead"]]
    return paper_vs_ours(long, paper, on=["matrix", "method"], value="time_s")


def speedup(s, base: str):
    """CSSC's speedup over ``base`` per matrix: measured / measured where both ran (with the
    verdict of their interquartile ranges), else modelled / modelled (both floors, same costs)."""
    c, o = s.xs("cssc", level="method"), s.xs(base, level="method").reindex(s.xs("cssc", level="method").index)
    both = (c.status == "measured") & (o.status == "measured")
    value = (o.time_s / c.time_s).where(both, o.floor_s / c.floor_s)
    verdict = o.verdict.where(both, "modelled") if "verdict" in o else pd.Series("modelled", index=o.index)
    return pd.DataFrame({"speedup": value, "kind": both.map({True: "measured", False: "modelled"}),
                         "verdict": verdict})


def table5_speedup(s, hegmm: bool):
    """Per matrix: CSSC over the paper's (dense) diagonal baseline first, then over hepkg's
    zero-skipping one and HEGMM; the paper's speedup (diagonal / ours) and ours / paper."""
    c = s.xs("cssc", level="method")
    tab = c[["rows", "nnz", "n_ct", "status"]].rename(columns={"status": "cssc_status"})
    for base, tag in [("diagonal-dense", "dense"), ("diagonal", "nonzero")] + ([("hegmm", "hegmm")] if hegmm else []):
        sp = speedup(s, base)
        tab[f"speedup_{tag}"], tab[f"kind_{tag}"], tab[f"verdict_{tag}"] = sp.speedup, sp.kind, sp.verdict
    tab["paper"] = pd.Series({m: r["diagonal"] / r["ours"] for m, r in CSSC_TABLE5_TIME_S.items()})
    tab["ratio_dense"] = tab.speedup_dense / tab.paper
    return tab.reset_index()


def table6(s):
    """Memory per measured (matrix, method): peak RSS above start (median, min, max over runs in a new
    interpreter each), tracemalloc's peak, and what the cloud receives (keys and ciphertexts, from
    serialized sizes), beside the paper's Table 6 MB."""
    cols = ["matrix", "nnz", "method", "rss_mib", "rss_min_mib", "rss_max_mib", "rss_runs", "py_mib",
            "cloud_received_mb"]
    long = s.reset_index()
    received = long.reindex(columns=["bytes_keys_to_cloud", "bytes_a_to_cloud", "bytes_b_to_cloud"])
    long["cloud_received_mb"] = received.fillna(0).sum(axis=1) / MB
    long = long.reindex(columns=cols)
    long = long[long.rss_mib.notna()]
    paper = {(m, meth): row[PAPER_COL[meth]] for m, row in CSSC_TABLE6_MEMORY_MB.items()
             for meth in ("cssc", "diagonal", "diagonal-dense", "hegmm")}
    tab = paper_vs_ours(long, paper, on=["matrix", "method"], value="rss_mib")
    tab["paper_approximate"] = [(m, PAPER_COL.get(meth)) in CSSC_TABLE6_APPROXIMATE
                                for m, meth in zip(tab.matrix, tab.method)]
    return tab


def paper_memory_fit():
    """The paper's CSSC memory (Table A.9 MB) against a dense float64 rows x cols matrix (MB)."""
    a9 = pd.DataFrame(CSSC_TABLEA9_ALL, columns=["matrix", "rows", "cols", "nnz", "time_s", "paper_mb"])
    a9 = a9.drop_duplicates("matrix")
    a9["dense_float64_mb"] = a9.rows * a9.cols * 8 / MB
    a9["ratio"] = a9.paper_mb / a9.dense_float64_mb
    return a9.sort_values("dense_float64_mb").reset_index(drop=True)


def table7(s, ct_bytes: int):
    """CSSC's messages and keys in MB per direction (modelled runs: their ciphertexts x
    ``ct_bytes``), the ciphertexts each message holds, and the paper's Table 7 (A -> Cloud MB, its n_ct = MB / 0.52, A -> B bytes)."""
    c = s.xs("cssc", level="method").reset_index()
    for side, uploads in (("a", "uploads_a"), ("b", "uploads_b")):  # modelled: ciphertexts x their size
        c[f"bytes_{side}_to_cloud"] = c.get(f"bytes_{side}_to_cloud", pd.Series(np.nan, index=c.index)).fillna(
            c[uploads] * ct_bytes)
    tab = c[["matrix", "nnz", "n_ct", "status"]].copy()
    for col in ("a_to_cloud", "b_to_cloud", "a_to_b", "cloud_to_a", "keys_to_cloud", "keys_to_b"):
        tab[f"{col}_mb"] = c.get(f"bytes_{col}", pd.Series(np.nan, index=c.index)) / MB
    tab["ciphertexts_a_to_cloud"] = c.bytes_a_to_cloud / ct_bytes
    tab = paper_vs_ours(tab, {m: r["to_cloud_mb"] for m, r in CSSC_TABLE7_COMMUNICATION.items()}, on="matrix",
                        value="a_to_cloud_mb")
    tab["paper_n_ct"] = (tab.paper / CSSC_CIPHERTEXT_MB).round()
    tab["paper_a_to_b_bytes"] = tab.matrix.map({m: r["a_to_b_bytes"] for m, r in CSSC_TABLE7_COMMUNICATION.items()})
    return tab


def table8(s):
    """CSSC against the Rhombus-style method: time (measured or modelled, like with like), memory, paper."""
    c, r = s.xs("cssc", level="method"), s.xs("rowwise", level="method")
    sp = speedup(s, "rowwise")
    tab = pd.DataFrame({"nnz": c.nnz, "cssc_s": c.time_s, "cssc_status": c.status, "rowwise_s": r.time_s,
                        "rowwise_status": r.status, "speedup": sp.speedup, "kind": sp.kind, "verdict": sp.verdict,
                        "cssc_mib": c.get("rss_mib"), "rowwise_mib": r.get("rss_mib")})
    paper8 = pd.DataFrame(CSSC_TABLE8_RHOMBUS).T.add_prefix("paper_")
    return tab.join(paper8).assign(paper_speedup=lambda d: d.paper_rhombus_s / d.paper_ours_s).reset_index()


def table_a9(s):
    """CSSC on every matrix beside the paper's Table A.9 (its NNZ, time and MB)."""
    ours = {paper: mine for mine, paper in CSSC_PAPER_NAMES.items()}
    paper = {}
    for name, _, _, nnz, t, mem in CSSC_TABLEA9_ALL:  # the first of the duplicated rows
        paper.setdefault(ours.get(name, name), dict(paper_nnz=nnz, paper_s=t, paper_mb=mem))
    c = s.xs("cssc", level="method")
    tab = c.reindex(columns=["rows", "cols", "nnz", "n_ct", "status", "time_s", "q1_s", "q3_s", "cloud_time_s",
                             "rss_mib"])
    return tab.join(pd.DataFrame(paper).T).assign(ratio=lambda d: d.time_s / d.paper_s).reset_index()


def fig10_fits(s) -> pd.DataFrame:
    """Log-log slopes of CSSC's cloud time against NNZ and against n_ct: over the measured runs, over
    the modelled floors of every matrix, and the paper's Table A.9 (whole-run time vs NNZ)."""
    c = s.xs("cssc", level="method")
    meas = c[c.status == "measured"]
    a9 = pd.DataFrame(CSSC_TABLEA9_ALL, columns=["matrix", "rows", "cols", "nnz", "time_s", "mem_mb"])
    rows = []
    for x in ("nnz", "n_ct"):
        if len(meas) >= 3:
            rows.append(dict(x=x, data=f"measured cloud time ({len(meas)} matrices)", kind="measured",
                             slope=loglog_fit(meas[x], meas.cloud_time_s)[0],
                             nnz_range=f"{int(meas.nnz.min())}-{int(meas.nnz.max())}"))
        rows.append(dict(x=x, data=f"modelled cloud floor ({len(c)} matrices)", kind="modelled",
                         slope=loglog_fit(c[x], c.cloud_floor_s)[0], nnz_range=f"{int(c.nnz.min())}-{int(c.nnz.max())}"))
    rows.append(dict(x="nnz", data=f"paper, Table A.9 whole-run time ({len(a9)} rows)", kind="paper",
                     slope=loglog_fit(a9.nnz, a9.time_s)[0], nnz_range=f"{a9.nnz.min()}-{a9.nnz.max()}"))
    return pd.DataFrame(rows).assign(paper_slope=CSSC_FIG10_SLOPE)


def fig10(s, backend: str):
    """Cloud time against NNZ and n_ct (measured: dots; modelled floors: crosses), with the fits."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    c = s.xs("cssc", level="method").reset_index()
    a9 = pd.DataFrame(CSSC_TABLEA9_ALL, columns=["matrix", "rows", "cols", "nnz", "time_s", "mem_mb"])
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, x in zip(axes, ("nnz", "n_ct")):
        sns.scatterplot(data=c, x=x, y="cloud_time_s", style="status", hue="status", s=60, ax=ax,
                        markers={"measured": "o", MODELLED: "X"})
        meas = c[c.status == "measured"]
        if len(meas) >= 3:
            slope, icpt = loglog_fit(meas[x], meas.cloud_time_s)
            grid = np.geomspace(meas[x].min(), meas[x].max(), 20)
            ax.plot(grid, np.exp(icpt) * grid ** slope, "--", label=f"fit, measured (slope {slope:.2f})")
        if x == "nnz":
            ax.scatter(a9.nnz, a9.time_s, color="grey", alpha=0.4, s=15,
                       label=f"paper, Table A.9 whole run (slope {loglog_fit(a9.nnz, a9.time_s)[0]:.2f})")
        ax.set(xscale="log", yscale="log", xlabel=x.upper() if x == "nnz" else "n_ct (ciphertexts)",
               ylabel="cloud time (s), key loading excluded")
        ax.legend(fontsize=7)
    fig.suptitle(f"Figure 10: CSSC cloud time ({backend}); paper: slope close to {CSSC_FIG10_SLOPE:g}")
    fig.tight_layout()
    return fig


def fig5(tab5, names):
    """Time per method and matrix: ours (measured: filled circles, median of interleaved runs; modelled:
    crosses, op-count floor) and the paper's Table 5 (hollow squares), one colour per method."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    t = tab5.dropna(subset=["ours"]).assign(matrix=lambda d: pd.Categorical(d.matrix, names)).sort_values("matrix")
    x = {m: i for i, m in enumerate(names)}
    methods = list(dict.fromkeys(t.method))
    colours = dict(zip(methods, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    fig, ax = plt.subplots(figsize=(max(7.0, 0.42 * len(names) + 3), 4.8))
    for i, method in enumerate(methods):
        rows = t[t.method == method]
        shift = (i - (len(methods) - 1) / 2) * 0.12  # side by side, so no marker hides another
        for status, marker in (("measured", "o"), ("modelled", "X")):
            sel = rows[rows.status.str.startswith(status)]
            ax.scatter([x[m] + shift for m in sel.matrix], sel.ours, marker=marker, s=36, color=colours[method])
        paper = rows.dropna(subset=["paper"])
        ax.scatter([x[m] + shift for m in paper.matrix], paper.paper, marker="s", s=60, facecolors="none",
                   edgecolors=colours[method], linewidths=1.3)
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right", rotation_mode="anchor", fontsize=8)
    ax.set(yscale="log", ylabel="time (s, log scale)", title="Table 5: time per method, ours and the paper's")
    handles = [Line2D([], [], ls="", marker="o", color=colours[m], label=m) for m in methods] + [
        Line2D([], [], ls="", marker="o", color="grey", label="ours, measured"),
        Line2D([], [], ls="", marker="X", color="grey", label="ours, modelled (op-count floor)"),
        Line2D([], [], ls="", marker="s", markerfacecolor="none", color="grey", label="paper (Table 5)")]
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def _spearman(a, b) -> float:
    return float(pd.Series(list(a)).rank().corr(pd.Series(list(b)).rank()))


def _all_or_inconclusive(verdicts, good: str):
    """A direction judged on every matrix (:func:`hepkg.reference.verdict.combine`): each verdict ``good``
    holds, 'inconclusive' stays, anything else fails."""
    return V.combine(True if x == good else x if x == "inconclusive" else False for x in verdicts)


def _headline(head: pd.DataFrame):
    """The three stated speedups (printed without a spread) against ours per matrix, measured side by side or
    modelled (:func:`hepkg.reference.verdict.figure`)."""
    if len(head) < 3:
        return None, "not every headline matrix at this scale"
    got = {r.matrix: V.figure(V.once(r.speedup_dense) if r.kind_dense == "measured" else V.exact(r.speedup_dense),
                              V.stated(r.paper)) | dict(kind=r.kind_dense) for r in head.itertuples()}
    return V.combine(g["verdict"] for g in got.values()), got


def claims(r: dict) -> list[Claim]:
    """The paper's testable statements on this run's results ``r`` (the tables above, plus ``summary``,
    ``runs``, ``tab3``, ``paper_fit``, ``fits``, ``ct_bytes``, ``backend``, ``params``, ``hegmm``)."""
    s, runs, t3, t4, t7, sp, t8, t6 = (r[k] for k in ("summary", "runs", "tab3", "tab4", "tab7", "speed", "tab8",
                                                        "tab6"))
    meas = s[s.status == "measured"]
    mc = runs[runs.method == "cssc"]
    per_ct = pd.concat([mc[f"bytes_{side}_to_cloud"] / (mc.n_ct * r["ct_bytes"]) for side in ("a", "b")])
    rot = t3[t3.op == "rotate"].set_index("matrix")
    depth3 = t3[t3.op == "depth"].measured
    mults = t3[t3.op.isin(["mul_ct", "mul_pt"])]
    same = [m for m in t7.matrix if CSSC_TABLE5_TIME_S.get(m, {}).get("nnz") == t7.set_index("matrix").nnz.get(m)]
    n_ct7 = t7.set_index("matrix").loc[same, ["n_ct", "paper_n_ct"]]
    dense = sp[sp.kind_dense.notna()]
    head = sp[sp.matrix.isin(["arc130", "M80PI_n1", "cca"])]
    t5 = s.xs("diagonal-dense", level="method").floor_s, s.xs("diagonal", level="method").floor_s
    closer = pd.DataFrame({"paper_s": pd.Series({m: v["diagonal"] for m, v in CSSC_TABLE5_TIME_S.items()}),
                           "dense_floor_s": t5[0], "nonzero_floor_s": t5[1]}).dropna()
    closer = closer.assign(dense_ratio=closer.paper_s / closer.dense_floor_s,
                           nonzero_ratio=closer.paper_s / closer.nonzero_floor_s)
    mem = t6.pivot(index="matrix", columns="method", values="ours") if len(t6) else pd.DataFrame()
    rng = t6.set_index(["matrix", "method"])[["rss_min_mib", "rss_max_mib"]] if len(t6) else None
    fit = r["paper_fit"]
    fits = r["fits"].set_index(["x", "kind"]).slope

    def mem_vs(other):
        if mem.empty or other not in mem or "cssc" not in mem:
            return None, f"no matrix with CSSC and {other} memory measured"
        both = mem[["cssc", other]].dropna()
        if both.empty:
            return None, f"no matrix with CSSC and {other} memory measured"
        verdicts = ["less" if rng.loc[(m, "cssc"), "rss_max_mib"] < rng.loc[(m, other), "rss_min_mib"] else
                    "greater" if rng.loc[(m, "cssc"), "rss_min_mib"] > rng.loc[(m, other), "rss_max_mib"] else
                    "inconclusive" for m in both.index]
        return (_all_or_inconclusive(verdicts, "less"),
                {m: f"{a:.1f} vs {b:.1f} MiB ({v})" for (m, (a, b)), v in zip(both.iterrows(), verdicts)})

    def beats(col_speed, col_kind, col_verdict, what):
        d = sp.dropna(subset=[col_speed])
        m, e = d[d[col_kind] == "measured"], d[d[col_kind] == "modelled"]
        status = _all_or_inconclusive(list(m[col_verdict]) + ["cssc faster" if x > 1 else "cssc slower"
                                                            for x in e[col_speed]], "cssc faster")
        worst = d.loc[d[col_speed].idxmin()]
        return status, (f"measured side by side on {len(m)} matrices (verdicts {m[col_verdict].value_counts().to_dict()}),"
                        f" modelled on {len(e)}; least {worst[col_speed]:.2f}x on {worst.matrix} ({worst[col_kind]}) "
                        f"against {what}")

    params = f"{r['backend']} {r['params']}"
    return [
        Claim("spmv.cssc_correct", "every CSSC product decrypts exactly to numpy's", "CSSC Algorithm 1",
              lambda _: (bool(len(mc)), f"{len(mc)} {params} runs, each checked equal to numpy (a wrong product "
                                        f"stops the run), plus {len(t3.matrix.unique())} sim runs")),
        Claim("spmv.counts_exact", "every party's counts equal hepkg's prediction from the pattern, on sim and on "
              f"{r['backend']}", "CSSC Table 3",
              lambda _: (bool((t3.measured == t3.predicted).all() and meas.counts_match.dropna().astype(bool).all()),
                         f"{len(t3)} sim counts; {int(meas.counts_match.notna().sum())} measured (matrix, method) "
                         f"pairs, every repetition")),
        Claim("spmv.mults_are_n_ct", "CSSC performs n_ct HE-Mult and n_ct HE-CMult", "CSSC Table 3",
              lambda _: (bool((mults.measured == mults.n_ct).all()),
                         t3.drop_duplicates("matrix").set_index("matrix").n_ct.to_dict())),
        Claim("spmv.rotations_formula", "restated from the data: the cloud's rotations are exactly "
              "sum over chunks of floor(log2 c) + popcount(c) - 1 (Algorithm 4), which is at most the restated bound "
              "n_ct (2 ceil(log2 C_max) - 1); the paper's n_ct log2 C_max undercounts chunks whose column count is not a "
              "power of two. Key switches (pow2 keys) are reported beside", "CSSC Table 3, Algorithm 4",
              lambda _: (bool((rot.measured == rot.predicted).all() and (rot.measured <= rot.bound).all()),
                         f"{int((rot.measured > rot.paper_formula + 1e-9).sum())} of {len(rot)} matrices above "
                         f"n_ct log2 C_max; key switches: "
                         f"{t3[t3.op == 'keyswitch'].set_index('matrix').measured.to_dict()}")),
        Claim("spmv.depth_two", "the multiplicative depth is two (1M + 1C) whatever the matrix",
              "CSSC Sec. 4.6.3, Table 3",
              lambda _: (bool((depth3 == 2).all() and (t4.depth == 2).all()),
                         f"sim depths {sorted(set(depth3))}, {r['backend']} depths {sorted(set(t4.depth))}")),
        Claim("spmv.noise_margin", "the budget left after the circuit stays well above the decryption threshold "
              "(over 20 bits) on every matrix, so one parameter set serves all", "CSSC Sec. 4.6.3, Table 4",
              lambda _: (None, "no noise budget on this backend") if t4.empty else
              (V.limit(V.exact(t4.result_bits_min.min()), 20, "above")["verdict"],
               f"left {int(t4.result_bits_min.min())}-{int(t4.result_bits_max.max())} of {int(t4.fresh_bits.max())} "
               f"bits ({params}); used up to {int(t4.bits_used.max())} (Table 4 implies {int(t4.paper_bits_used[0])})")),
        Claim("spmv.comm_is_n_ct", "A -> Cloud and B -> Cloud each carry n_ct ciphertexts", "CSSC Table 7",
              lambda _: (bool(len(mc)) and bool(per_ct.between(1, 1.01).all()),
                         f"bytes / (n_ct x {r['ct_bytes']}): {per_ct.min():.4f}-{per_ct.max():.4f}")),
        Claim("spmv.n_ct_as_paper", "n_ct equals the paper's (Table 7 MB / 0.52 MB) on matrices with the paper's NNZ",
              "CSSC Table 7", lambda _: (None, "no matrix with the paper's NNZ") if n_ct7.empty else
              (bool((n_ct7.n_ct == n_ct7.paper_n_ct).all()), n_ct7.astype(int).to_dict("index"))),
        Claim("spmv.beats_diagonal", "CSSC is faster than the paper's diagonal method (every diagonal encrypted) on "
              "every matrix", "CSSC Table 5",
              lambda _: beats("speedup_dense", "kind_dense", "verdict_dense", "the dense diagonal method")),
        Claim("spmv.headline_speedups", "speedups over the paper's diagonal method of 30x (arc130), 359x (M80PI_n1) "
              "and 1188x (cca)", "CSSC Table 5", lambda _: _headline(head)),
        Claim("spmv.speedup_grows", "the speedup over the paper's diagonal method grows with the matrix size",
              "CSSC Sec. 5.2", lambda _: (None, "fewer than 3 matrices") if len(dense) < 3 else
              (bool(_spearman(dense.rows, dense.speedup_dense) > 0),
               f"Spearman rho(rows, speedup) = {_spearman(dense.rows, dense.speedup_dense):.2f} over {len(dense)} "
               f"matrices; rho(density, speedup) = "
               f"{_spearman(dense.nnz / dense.rows ** 2, dense.speedup_dense):.2f}")),
        Claim("spmv.beats_zero_skipping_diagonal", "finding (hepkg's stronger baseline): CSSC is faster than the "
              "diagonal method that encrypts only non-zero diagonals, on every matrix", "hepkg",
              lambda _: beats("speedup_nonzero", "kind_nonzero", "verdict_nonzero", "the zero-skipping diagonal method")),
        Claim("spmv.paper_diagonal_is_dense", "the paper's diagonal times are closer (log ratio) to the diagonal "
              "method on the zero-filled matrix than on its non-zero diagonals (modelled floors of both)",
              "hepkg (explains Table 5)", lambda _: (None, "no Table 5 matrix here") if closer.empty else
              (bool((np.log(closer.dense_ratio).abs() <= np.log(closer.nonzero_ratio).abs()).all()),
               closer.round(2).to_dict("index"))),
        Claim("spmv.beats_hegmm", "CSSC is faster than HEGMM on every matrix (modelled with modelled)", "CSSC Table 5",
              lambda _: (None, "HEGMM unavailable") if "speedup_hegmm" not in sp else
              (bool((sp.speedup_hegmm > 1).all()), f"least {sp.speedup_hegmm.min():.1f}x (op-count floors)")),
        Claim("spmv.beats_rowwise", "CSSC is faster than the Rhombus-style method on every matrix", "CSSC Table 8",
              lambda _: (_all_or_inconclusive([v if k == "measured" else "cssc faster" if x > 1 else "cssc slower"
                                               for v, k, x in zip(t8.verdict, t8.kind, t8.speedup)], "cssc faster"),
                         f"least {t8.speedup.min():.1f}x; measured side by side on "
                         f"{int((t8.kind == 'measured').sum())} of {len(t8)}")),
        Claim("spmv.less_memory_than_diagonal", "CSSC's peak memory is below the diagonal method's (min-max ranges "
              "of repeated runs)", "CSSC Table 6", lambda _: mem_vs("diagonal")),
        Claim("spmv.memory_at_most_rowwise", "CSSC's peak memory is at most the Rhombus-style method's",
              "CSSC Table 8", lambda _: mem_vs("rowwise")),
        Claim("spmv.paper_memory_is_dense_float64", "finding: the paper's CSSC memory (Table A.9) is about a dense "
              "float64 rows x cols matrix (median ratio about 1)", "hepkg (reads Table A.9)",
              lambda _: (V.figure(V.exact(fit.ratio.median()), V.stated(1.0))["verdict"],
                         f"median ratio {fit.ratio.median():.3f} over {len(fit)} matrices; the six largest "
                         f"{fit.ratio.tail(6).min():.3f}-{fit.ratio.tail(6).max():.3f}")),
        Claim("spmv.linear_in_nnz", "cloud time grows linearly with NNZ (Fig. 10: a log-log slope close to 1)",
              "CSSC Fig. 10", lambda _: (None, "fewer than 3 measured matrices") if ("nnz", "measured") not in fits else
              (V.figure(V.once(fits[("nnz", "measured")]), V.stated(CSSC_FIG10_SLOPE))["verdict"],
               f"measured slope {fits[('nnz', 'measured')]:.2f}; against n_ct "
               f"{fits.get(('n_ct', 'measured'), math.nan):.2f}; modelled floors over every matrix "
               f"{fits[('nnz', 'modelled')]:.2f}; paper's Table A.9 {fits[('nnz', 'paper')]:.2f}")),
    ]
