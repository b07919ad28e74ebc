"""The gemm notebook's claims, evaluated on the frames it shapes from its raw tables (no HE calls).

``notebooks/20_gemm.ipynb`` keeps every computed result (the grids of :func:`hepkg.gemm.run_config`
rows, the per-op costs, the ciphertext and key sizes) as raw tables (:mod:`hepkg.bench.raw`), and
shapes its tables from them with :mod:`hepkg.gemm.experiments`; :func:`claims` states the paper's
claims (and hepkg's) on those tables.
"""
from __future__ import annotations

import pandas as pd

from hepkg.reference import Claim

OK = "status == 'ok'"


def frac(s) -> str:
    """``k/n (p%)`` of a boolean Series."""
    return f"{int(s.sum())}/{len(s)} ({s.mean():.1%})"


def claims(r: dict) -> list[Claim]:
    """The section's claims. ``r``: the notebook's frames ``pairs`` (random pairs, measured and
    estimated), ``t4_runs``, ``t7``, ``t8``, ``t10`` (priced runs), ``tab4``, ``tab5``, ``tab6``,
    ``tab7``, ``tab8``, ``sp`` and ``sp_bsgs`` (speedups per pair), ``mem`` (Fig. 8's ratios),
    ``keys`` (the key-policy table); ``basis`` (the column speedups compare) and ``backend``."""
    basis, backend = r["basis"], r["backend"]
    p, t4, tab7, tab8, t5, t6, sp, mem, keys = (r[k] for k in ("pairs", "tab4", "tab7", "tab8", "tab5", "tab6", "sp",
                                                               "mem", "keys"))
    every = pd.concat([p, r["t4_runs"], r["t7"], r["t8"], r["t10"]], ignore_index=True).query(OK)
    measured = every.query("timing == 'measured' or backend == 'sim'")
    counted = every.dropna(subset=["counts_match"])
    single = every[every.blocking.isna()]
    en = single.query("method == 'hegmm-en'")
    p_min = en[["m", "l", "n"]].min(axis=1)
    en_over = en[en.mul_ct > p_min][["m", "l", "n", "mul_ct"]].drop_duplicates()
    cloud = single.query("preprocess == 'cloud'")
    depth_ok = cloud.depth <= cloud.method.map({"huang": 2}).fillna(3)
    mul = t4.query("op == 'mul_ct' and paper_formula == paper_formula")
    mul_diff = mul[mul.measured != mul.paper_formula]
    ex42 = t4.query("op == 'mul_ct' and preprocess == 'cloud' and m == 50 and l == 30 and n == 10").set_index(
        "method").measured
    g5 = t5.query("stat == 'average'").set_index(["group", "speedup"]).ours
    g6 = t6.query("stat == 'average'").set_index(["group", "speedup"]).ours
    rect = ["m=min", "l=min", "n=min"]
    wide_p = p.query(OK + " and policy == 'pow2'").pivot_table(index=["m", "l", "n", "method"], columns="preprocess",
                                                               values=basis).dropna()
    wide_p = wide_p[wide_p.index.get_level_values("method").isin(["hegmm-en", "hegmm-ext", "e2dm-s", "e2dm-r"])]
    t7ok = tab7.dropna(subset=["time_s"]).query("method not in ('hegmm', 'hegmm-en-bsgs')")
    best7 = t7ok.groupby("shape").time_s.transform("min")
    en7 = t7ok.query("method == 'hegmm-en'").assign(best=best7)
    us7 = t7ok.pivot(index="shape", columns="method", values="time_s")
    t8w = tab8.dropna(subset=["time_s"]).pivot(index="method", columns="blocking", values="time_s")
    p12 = t8w.reindex(index=["hegmm-ext", "hegmm-en", "huang"], columns=["P1", "P2"]).dropna()
    fast = sp.query("preprocess == 'cloud'")["HEGMM-En vs E2DM"].dropna()
    fast_c = sp.query("preprocess == 'client'")["HEGMM-En vs E2DM"].dropna()
    memp = mem.query("policy == 'pow2'")
    kt = keys.set_index(["method", "preprocess"])
    fast_b = r["sp_bsgs"]["HEGMM-En BSGS vs E2DM"].dropna()
    return [
        Claim("gemm.products_correct", "every product computed (sim and backend) equals numpy's, mod t", "hepkg",
              lambda _: (bool(measured.correct.all()), f"{frac(measured.correct.astype(bool))} correct; "
                         f"{int((measured.backend != 'sim').sum())} on {backend}")),
        Claim("gemm.counts_exact", "measured op counts equal hepkg's closed forms (gm.expected_counts) and the sim "
              "counts", "hepkg", lambda _: (bool(counted.counts_match.all()), frac(counted.counts_match.astype(bool)))),
        Claim("gemm.mult_formula", "HE-Mult counts are Table 4's (d, p, l, l, p) for each method", "Table 4",
              lambda _: (mul_diff.empty, "all equal" if mul_diff.empty else
                         mul_diff[["shape", "method", "preprocess", "measured", "paper_formula"]].to_dict("records"))),
        Claim("gemm.en_mults_at_most_p", "HEGMM-En needs at most min(m, l, n) HE-Mult", "Sec. 3.3, Theorems 3.5-3.6",
              lambda _: (bool((en.mul_ct <= p_min).all()), f"{frac(en.mul_ct <= p_min)} of HEGMM-En products; "
                         f"exceptions: {en_over.head(5).to_dict('records')}")),
        Claim("gemm.depth", "depth 1M+2C (HEGMM, HEGMM-En, E2DM), 1M+1C (Huang et al.)", "Tables 2-4",
              lambda _: (bool(depth_ok.all()), f"{frac(depth_ok)} within; depths seen: "
                         f"{cloud.groupby('method').depth.agg(lambda d: sorted(set(d))).to_dict()}")),
        Claim("gemm.sec42_example", "A_50x30 B_30x10: HEGMM-En 10 HE-Mult, E2DM and Huang et al. 30", "Sec. 4.2",
              lambda _: (bool(ex42["hegmm-en"] == 10 and ex42["huang"] == 30
                              and min(ex42["e2dm-s"], ex42["e2dm-r"]) == 30),
                         f"ours: {ex42.astype(int).to_dict()} (E2DM-S pads to d = 50, E2DM-R iterates r = p = 10)")),
        Claim("gemm.en_beats_huang_groups", "HEGMM-En is faster than Huang et al. on average in every group "
              "(sigma, tau on ciphertext)", "Table 5, Sec. 4.3.1",
              lambda _: (bool((g5.xs("HEGMM-En vs Huang", level="speedup") > 1).all()),
                         g5.xs("HEGMM-En vs Huang", level="speedup").round(2).to_dict())),
        Claim("gemm.en_beats_e2dm_rectangular", "HEGMM-En is faster than E2DM on average when m, l or n is the "
              "smallest dimension (sigma, tau on ciphertext)", "Table 5, Sec. 4.3.1",
              lambda _: (bool((g5.xs("HEGMM-En vs E2DM", level="speedup").reindex(rect).dropna() > 1).all()),
                         g5.xs("HEGMM-En vs E2DM", level="speedup").round(2).to_dict())),
        Claim("gemm.en_faster_997", "HEGMM-En beats the better E2DM on 99.7% of the pairs (1994/2000), sigma, tau "
              "on ciphertext; holds here from 95%", "Sec. 4.3.1",
              lambda _: (bool((fast > 1).mean() >= 0.95), frac(fast > 1))),
        Claim("gemm.en_faster_902_client", "HEGMM-En beats the better E2DM on 90.2% of the pairs (1805/2000), sigma, "
              "tau on plaintext; holds here from 85%", "Sec. 4.3.2",
              lambda _: (bool((fast_c > 1).mean() >= 0.85), frac(fast_c > 1))),
        Claim("gemm.en_beats_all_client", "with sigma, tau on plaintext HEGMM-En is faster than E2DM (4.13x) and Huang "
              "et al. (4.50x) on average", "Table 6, Sec. 4.3.2",
              lambda _: (bool((g6.xs("overall")[["HEGMM-En vs E2DM", "HEGMM-En vs Huang"]] > 1).all()),
                         g6.xs("overall").round(2).to_dict())),
        Claim("gemm.client_preprocessing_faster", "sigma and tau on plaintext make E2DM, HEGMM and HEGMM-En faster",
              "Sec. 4.3.2", lambda _: (bool((wide_p.client <= wide_p.cloud).all()),
                                       f"client <= cloud in {frac(wide_p.client <= wide_p.cloud)} products")),
        Claim("gemm.table7_en_best", "HEGMM-En achieves or comes very close (within 10%) to the best time on every "
              "Table 7 shape", "Sec. 4.3.3, Table 7",
              lambda _: (bool((en7.time_s <= 1.1 * en7.best).all()),
                         dict(zip(en7["shape"], (en7.time_s / en7.best).round(2))))),
        Claim("gemm.table7_uscore_slower", "uSCORE is slower than E2DM-S and HEGMM-En when the matrices fit one "
              "ciphertext", "Sec. 4.3.3, Table 7",
              lambda _: (bool((us7.uscore > us7[["e2dm-s", "hegmm-en"]].max(axis=1)).all()),
                         us7[["uscore", "e2dm-s", "hegmm-en"]].round(2).to_dict("index"))),
        Claim("gemm.p2_beats_p1", "HEGMM, HEGMM-En and Huang et al. run faster with P2 than with P1",
              "Sec. 4.4, Table 8",
              lambda _: (bool((p12.P2 < p12.P1).all()) if len(p12) else None, p12.round(2).to_dict("index"))),
        Claim("gemm.e2dm_r_no_p2", "E2DM-R cannot run P2 (72 x 72 exceeds a ciphertext)", "Sec. 4.4, Table 8",
              lambda _: (None, "E2DM-R is not in Table 8 at this scale") if "e2dm-r" not in set(tab8.method) else
              (bool((tab8.query("method == 'e2dm-r' and blocking == 'P2'").timing == "N/A").all()),
               dict(zip(tab8.query("method == 'e2dm-r'").blocking, tab8.query("method == 'e2dm-r'").timing)))),
        Claim("gemm.p1_huang_slowest", "with P1, Huang et al. is much slower than E2DM and HEGMM(-En)",
              "Sec. 4.4, Table 8",
              lambda _: (bool(t8w.P1["huang"] > t8w.P1.drop("huang").max()) if "huang" in t8w.index else None,
                         t8w.P1.round(2).to_dict())),
        Claim("gemm.memory_below_e2dm", "HEGMM and HEGMM-En use less memory than E2DM on all but 17 / 30 of 2000 pairs",
              "Sec. 4.5, Fig. 8", lambda _: (bool((memp.query("method != 'huang'").groupby("method").ratio.apply(
                  lambda x: (x < 1).mean()) >= 0.985).all()), memp.groupby("method").ratio.apply(
                  lambda x: f"below E2DM: {frac(x < 1)}, equal: {int((x == 1).sum())}").to_dict())),
        Claim("gemm.en_bsgs_faster", "with sigma, tau evaluated baby-step giant-step, as E2DM's are, HEGMM-En beats "
              "the better E2DM on at least 85% of the pairs (sigma, tau on ciphertext)", "hepkg",
              lambda _: (bool((fast_b > 1).mean() >= 0.85), frac(fast_b > 1))),
        Claim("gemm.exact_keys_fewer_keyswitches", "exact rotation keys need fewer key switches than the paper's pow2 "
              "keys, for more key bytes", "hepkg",
              lambda _: (bool((kt.keyswitch_exact <= kt.keyswitch_pow2).all()),
                         {f"{m} {p}": round(v, 2) for (m, p), v in
                          (kt.keyswitch_pow2 / kt.keyswitch_exact).items()})),
    ]
