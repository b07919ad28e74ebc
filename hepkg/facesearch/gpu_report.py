"""Tables, figures and claims of the GPU section (face-search paper Sec. 5-6.4, 6.6; Tables 2, 7, 8; Figs. 4-5).

Shaped from the raw table of :func:`hepkg.facesearch.gpu.measure` rows. Membership is decided by the slot rule
(:class:`~hepkg.facesearch.decision.SlotRule`, GPU path) where it is sound, else from the identification answer;
the summary says which, and the paper's rule on the summed count beside it. Rows measured without a GPU
(``device_kind`` 'cpu stand-in': the rns engine on numpy) are CPU measurements at the ring they ran at and
are labelled so; every claim about GPU time or GPU memory then reads ``not measured``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from hepkg.reference import FACESEARCH as PAPER
from hepkg.reference.claims import Claim

from . import gpu
from .packing import bsgs_shape

__all__ = ["build", "claims", "summary", "table2", "tables78", "keys_at_paper", "eq6_table", "figures"]

_CT = PAPER.CT_MB * 1e6  # the paper's ciphertext size (bytes), for Eq. 6 on its GPUs


def _q(s, p):
    return float(np.nanquantile(s.astype(float), p)) if s.notna().any() else np.nan


def _all(g, column):
    """The rows' common decision in ``column`` (None if absent, 'mixed' if they differ)."""
    if column not in g or g[column].isna().all():
        return None
    values = set(g[column].astype(bool))
    return values.pop() if len(values) == 1 else "mixed"


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per K and approach: median [quartiles] of membership and identification time, setup, memory, keys; the
    membership decisions (the deciding rule, the slot rule's and the paper's, the truth)."""
    def one(g):
        first = g.iloc[0]
        return pd.Series(dict(
            device=first.device, device_kind=first.device_kind, N=first.N, l=first.l, Km=first.Km, groups=first.groups,
            reps=len(g), membership_s=g.membership_s.median(), membership_q1=_q(g.membership_s, .25),
            membership_q3=_q(g.membership_s, .75), identify_s=g.identify_s.median(), setup_s=_q(g.setup_s, .5),
            enroll_s=first.enroll_s, rss_gb=g.rss_peak_bytes.max() / 1e9,
            device_peak_gb=g.device_peak_bytes.max() / 1e9 if "device_peak_bytes" in g else np.nan,
            estimate_gb=g.estimate_bytes.max() / 1e9 if "estimate_bytes" in g else np.nan,
            keys_generated=first.get("keys_generated"), keys_device=first.get("keys_device"),
            streams=first.get("streams"), member_rule=first.get("member_rule"), truth_member=first.get("truth_member"),
            in_band=first.get("in_band"), member=_all(g, "member"), slot_member=_all(g, "slot_member"),
            paper_member=_all(g, "paper_member"), correct=bool(g.correct.astype(bool).all()),
            planted_found=bool(g.planted_found.astype(bool).all())))
    runs = runs[runs.status == "measured"]
    out = pd.DataFrame([dict(K=K, approach=a, **one(g)) for (K, a), g in runs.groupby(["K", "approach"], sort=False)])
    cpu = out[out.approach == "BSGS-CPU-DG"].set_index("K").membership_s
    hydia = out[out.approach == "HyDia-GPU-DG"].set_index("K").membership_s
    out["speedup_vs_cpu_bsgs"] = out.K.map(cpu) / out.membership_s
    out["speedup_vs_hydia_gpu"] = out.K.map(hydia) / out.membership_s
    out["status"] = np.where(out.device_kind == "cuda", "measured (GPU)",
                             "measured on the CPU (rns on numpy), N=" + out.N.astype(int).astype(str))
    return out


def table2(runs: pd.DataFrame) -> pd.DataFrame:
    """Table 2 as measured: per variant, the counted per-query operations and transfers at this run's l, n1, G
    beside the closed forms at the same sizes and the paper's column (l = 512, n1 = 23); the slot rule's
    membership answer (no slot sum) is counted beside the paper's."""
    dev = runs[(runs.status == "measured") & runs.approach.isin(gpu.PAPER_NAME.values())]
    rows = []
    for variant, name in gpu.PAPER_NAME.items():
        g = dev[dev.variant == variant]
        if not len(g):
            continue
        r = g.sort_values("K").iloc[-1]
        l, G = int(r.l), int(r.groups)
        exp = gpu.expected_table2(variant, l, G)
        paper = PAPER.TABLE2[name]
        n1p, n2p = PAPER.N1, -(-PAPER.DIM // PAPER.N1)
        baby = r.get("baby_rotations_device") if variant == "hydia-dg" else r.get("baby_rotations_host")
        ours = dict(baby_rotations=baby, giant_rotations=r.giant_rotations, mul_per_group=r.similarity_mul_ct / G,
                    up_cts=r.membership_up_cts, down_membership=r.membership_down_cts,
                    down_membership_slots=r.membership_slots_down_cts, down_identification=r.identify_down_cts)
        ours["online_rotations"] = ours["baby_rotations"] + ours["giant_rotations"]
        paper_forms = dict(baby_rotations=PAPER.DIM - 1 if variant == "hydia-dg" else n1p - 1,
                           giant_rotations=0 if variant == "hydia-dg" else f"(n2-1)G = {n2p - 1}G",
                           online_rotations=PAPER.DIM - 1 if variant == "hydia-dg" else f"{n1p - 1} + {n2p - 1}G",
                           mul_per_group=PAPER.DIM, up_cts=paper["up_cts"], down_membership=1,
                           down_membership_slots="(hepkg's slot rule)", down_identification="G")
        for what in ("baby_rotations", "giant_rotations", "online_rotations", "mul_per_group", "up_cts",
                     "down_membership", "down_membership_slots", "down_identification"):
            rows.append(dict(resource=what, approach=name, l=l, n1=bsgs_shape(l)[0] if variant != "hydia-dg" else l,
                             groups=G, ours=float(ours[what]), expected=exp[what], paper=paper_forms[what]))
        plan = gpu.key_plan(variant, PAPER.DIM, PAPER.SLOTS, PAPER.N1)
        rows += [dict(resource="keys_generated", approach=name, l=l, groups=G, ours=float(r.keys_generated),
                      expected=len(gpu.key_plan(variant, l, int(r.N) // 2)["generated"]), paper=paper["keys_total"],
                      at_paper_sizes=len(plan["generated"])),
                 dict(resource="keys_on_device", approach=name, l=l, groups=G, ours=float(r.keys_device),
                      expected=len(gpu.key_plan(variant, l, int(r.N) // 2)["device"]), paper=paper["keys_device"],
                      at_paper_sizes=len(plan["device"])),
                 dict(resource="up_bytes_per_query", approach=name, l=l, groups=G, ours=float(r.membership_up_bytes),
                      paper=f"{PAPER.CT_MB if variant == 'hydia-dg' else PAPER.BABY_UPLOAD_MB} MB"),
                 dict(resource="down_bytes_membership", approach=name, l=l, groups=G,
                      ours=float(r.membership_down_bytes), paper=f"{PAPER.CT_MB} MB"),
                 dict(resource="down_bytes_membership_slots", approach=name, l=l, groups=G,
                      ours=float(r.membership_slots_down_bytes), paper="(hepkg's slot rule)"),
                 dict(resource="down_bytes_identification", approach=name, l=l, groups=G,
                      ours=float(r.identify_down_bytes), paper=f"G x {PAPER.CT_MB} MB"),
                 dict(resource="device_memory_estimate_gb", approach=name, l=l, groups=G, ours=r.estimate_bytes / 1e9,
                      paper=paper["peak_gpu_gb"], note="paper: measured peak at K = 8192"),
                 dict(resource="prerotated_diagonals", approach=name, ours={"hydia-dg": "no", "bsgs-tbs": "server (HE)",
                                                                             "bsgs-tbe": "enroller (PT)"}[variant],
                      paper={"hydia-dg": "No", "bsgs-tbs": "Server (HE)", "bsgs-tbe": "Enroller (PT)"}[variant]),
                 dict(resource="negative_keys", approach=name, ours=f"{int(r.keys_temporary)} (freed)" if
                      r.keys_temporary else "no", paper="Yes (freed)" if variant == "bsgs-tbs" else "No")]
    out = pd.DataFrame(rows)
    num = pd.to_numeric(out.ours, errors="coerce")
    out["matches_expected"] = np.where(out.expected.notna(), num == pd.to_numeric(out.expected, errors="coerce"), None)
    return out


def tables78(S: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """Tables 7-8's GPU rows: ours per K and approach, the paper's RTX 8000 and H200 values at that K beside;
    a variant refused by the memory estimate appears with that status (the paper's out-of-memory cells)."""
    paper = PAPER.gpu_table()
    refused = runs[runs.status != "measured"].assign(device_kind="", membership_s=np.nan)
    S = pd.concat([S, refused.reindex(columns=[c for c in S.columns if c in refused.columns])], ignore_index=True)
    rows = []
    for _, r in S.iterrows():
        row = dict(K=r.K, approach=r.approach, status=r.status, membership_s=r.membership_s,
                   membership_q1=r.membership_q1, membership_q3=r.membership_q3, identify_s=r.identify_s,
                   setup_s=r.setup_s, ram_gb=r.rss_gb, device_peak_gb=r.device_peak_gb, estimate_gb=r.estimate_gb,
                   keys_device=r.keys_device, speedup_vs_cpu_bsgs=r.speedup_vs_cpu_bsgs,
                   member_rule=r.get("member_rule"), correct=r.correct)
        for g in ("RTX", "H200"):
            hit = paper[(paper.K == r.K) & (paper.variant == r.approach) & (paper.gpu == g)]
            row[f"paper_{g}_membership_s"] = hit.membership_s.iloc[0] if len(hit) else np.nan
            row[f"paper_{g}_index_s"] = hit.index_s.iloc[0] if len(hit) else np.nan
            row[f"paper_{g}_rtt_s"] = hit.rtt_s.iloc[0] if len(hit) else np.nan
        row["comparable"] = bool(r.device_kind == "cuda" and r.N == PAPER.RING and r.l == PAPER.DIM)
        rows.append(row)
    return pd.DataFrame(rows)


def keys_at_paper() -> pd.DataFrame:
    """The key plans at the paper's sizes (l = 512, 16384 slots, n1 = 23) beside Table 2's counts."""
    rows = []
    for variant, name in gpu.PAPER_NAME.items():
        plan = gpu.key_plan(variant, PAPER.DIM, PAPER.SLOTS, PAPER.N1)
        rows.append(dict(approach=name, generated=len(plan["generated"]), device=len(plan["device"]),
                         host=len(plan["host"]), temporary=len(plan["temporary"]),
                         paper_generated=PAPER.TABLE2[name]["keys_total"], paper_device=PAPER.TABLE2[name]["keys_device"]))
    return pd.DataFrame(rows)


def eq6_table(device: dict, ct_bytes: int) -> pd.DataFrame:
    """Eq. 6 on the paper's GPUs (its 5 MB ciphertext, 90% of the memory free) and on this run's device."""
    rows = [dict(device=v["name"], sms=v["sms"], free_gb=0.9 * v["memory_gb"], ct_mb=PAPER.CT_MB,
                 S=gpu.stream_pool_size(v["sms"], int(0.9 * v["memory_gb"] * 1e9), int(_CT)), source="paper's GPU")
            for v in PAPER.GPUS.values()]
    rows.append(dict(device=device["name"], sms=device["sms"], free_gb=device["free_bytes"] / 1e9,
                     ct_mb=ct_bytes / 1e6, S=gpu.stream_pool_size(device["sms"], device["free_bytes"], ct_bytes),
                     source=device["kind"]))
    return pd.DataFrame(rows)


def build(raw: dict) -> dict:
    """Every table of the section from the raw tables (``runs``, ``device``)."""
    runs, device = raw["runs"], raw["device"]
    S = summary(runs)
    ct = int(runs.membership_down_bytes.dropna().iloc[0]) if "membership_down_bytes" in runs else int(_CT)
    return dict(runs=runs, device=device, summary=S, table2=table2(runs), tables78=tables78(S, runs),
                keys=keys_at_paper(), eq6=eq6_table(device, ct), paper=PAPER.gpu_table())


def figures(R: dict):
    """Figures 4-5 analogues: membership and identification time per K (ours, with the paper's RTX 8000 and
    H200 rows dashed), and the paper's RTX 8000 vs H200."""
    import matplotlib.pyplot as plt
    S, paper = R["summary"], R["paper"]
    fig4, axes = plt.subplots(1, 3, figsize=(14, 3.6))
    for approach, g in S.groupby("approach", sort=False):
        axes[0].plot(g.K, g.membership_s, "o-", label=f"{approach} (ours)")
        axes[1].plot(g.K, g.identify_s, "o-", label=f"{approach} (ours)")
        axes[2].plot(g.K, g.rss_gb, "o-", label=f"{approach} (ours)")
    rtx = paper[paper.gpu == "RTX"]
    for variant, g in rtx.groupby("variant", sort=False):
        axes[0].plot(g.K, g.membership_s, "x--", alpha=.6, label=f"{variant} (paper, RTX 8000)")
        axes[1].plot(g.K, g.index_s, "x--", alpha=.6, label=f"{variant} (paper, RTX 8000)")
        axes[2].plot(g.K, g.ram_gb, "x--", alpha=.6, label=f"{variant} (paper, RTX 8000)")
    kind = "GPU" if (S.device_kind == "cuda").any() else "CPU: rns on numpy"
    for ax, t, y in zip(axes, ("membership", "identification", "host RAM"), ("seconds", "seconds", "GB")):
        ax.set(xscale="log", yscale="log", title=f"{t} ({kind})", xlabel="K", ylabel=y)
    axes[0].legend(fontsize=6)
    fig4.tight_layout()
    fig5, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for (variant, g_), g in paper.groupby(["variant", "gpu"], sort=False):
        axes[0].plot(g.K, g.membership_s, "o-" if g_ == "H200" else "x--", label=f"{variant} {g_} (paper)")
        axes[1].plot(g.K, g.index_s, "o-" if g_ == "H200" else "x--", label=f"{variant} {g_} (paper)")
    for approach, g in S[S.device_kind == "cuda"].groupby("approach", sort=False):
        axes[0].plot(g.K, g.membership_s, "s:", label=f"{approach} (ours)")
        axes[1].plot(g.K, g.identify_s, "s:", label=f"{approach} (ours)")
    for ax, t in zip(axes, ("membership", "identification")):
        ax.set(xscale="log", yscale="log", title=f"{t}: RTX 8000 vs H200", xlabel="K", ylabel="seconds")
    axes[0].legend(fontsize=6)
    fig5.tight_layout()
    return fig4, fig5


def _gpu_rows(R: dict, approach: str, max_K=None, K=None):
    """Our rows of ``approach`` measured on a GPU at the paper's ring and l (empty without one)."""
    t = R["tables78"]
    t = t[(t.approach == approach) & t.comparable]
    if max_K is not None:
        t = t[t.K <= max_K]
    return t[t.K == K] if K is not None else t


def _no_gpu(R: dict) -> str:
    S = R["summary"]
    dev = S[S.approach != "BSGS-CPU-DG"]
    return ("no GPU measurement at the paper's ring and l: " + "; ".join(
        f"{r.approach} K={int(r.K)}: {r.membership_s:.2f} s ({r.status})" for r in dev.itertuples()))


def claims(R: dict) -> list[Claim]:
    """The paper's GPU statements, tested on this run's tables ``R``; GPU time and memory need a GPU."""
    keys, t2, S, eq6 = R["keys"], R["table2"], R["summary"], R["eq6"]
    counted = t2[t2.matches_expected.notna()]
    h200 = eq6[eq6.device == PAPER.GPUS["H200"]["name"]].S.iloc[0]
    dev = S[S.approach != "BSGS-CPU-DG"]

    def time_claim(approach, K_max, target):
        def check(_):
            rows = _gpu_rows(R, approach, max_K=K_max)
            if not len(rows):
                return None, _no_gpu(R)
            return bool((rows.membership_s <= target).all()), rows[["K", "membership_s"]].to_dict("records")
        return check

    def speedup_claim(column, at_least, K_max):
        def check(_):
            rows = _gpu_rows(R, "BSGS-GPU-TBS", max_K=K_max)
            if not len(rows):
                return None, _no_gpu(R) + "; CPU/numpy speedups (not a GPU's): " + str(
                    dev[["K", "approach", column]].round(2).to_dict("records"))
            return bool((rows[column] >= at_least).all()), rows[["K", column]].to_dict("records")
        return check

    def tbe_memory(_):
        rows = S[(S.device_kind == "cuda") & S.approach.isin(["BSGS-GPU-TBS", "BSGS-GPU-TBE"])]
        if not len(rows):
            return None, "peak device memory is measured on a GPU only; estimates (GB): " + str(
                dev[["K", "approach", "estimate_gb"]].round(3).to_dict("records"))
        p = rows.pivot_table(index="K", columns="approach", values="device_peak_gb")
        return bool((p["BSGS-GPU-TBE"] < p["BSGS-GPU-TBS"]).all()), p.reset_index().to_dict("records")

    return [
        Claim("facesearch_gpu.keys_table2", "Table 2: HyDia-GPU-DG 516 keys (all on the GPU); BSGS-GPU-TBS ~75 generated, "
              "36 on the GPU; BSGS-GPU-TBE ~53 generated, 36 on the GPU (l = 512, n1 = 23)", "Table 2, Sec. 5.3.2",
              lambda _: (bool((keys.generated == keys.paper_generated).all() and (keys.device == keys.paper_device).all()),
                         keys.to_dict("records"))),
        Claim("facesearch_gpu.eq6_h200", "Eq. 6 on the H200 (132 SMs): floor(132 / 4) = 33, clipped to 32 streams",
              "Sec. 5.1.2", lambda _: (bool(h200 == 32), eq6.to_dict("records"))),
        Claim("facesearch_gpu.table2_counts", "Table 2's per-query counts: baby-step rotations l-1 (HyDia, device) or "
              "n1-1 (BSGS, host), (n2-1)G on-demand giant rotations, l products per group, 1 or n1 ciphertexts up, 1 or "
              "G down (counted at this run's l, n1, G)", "Table 2, Algorithms 3-4",
              lambda _: (bool(len(counted) and counted.matches_expected.astype(bool).all()),
                         counted[["approach", "resource", "ours", "expected"]].to_dict("records"))),
        Claim("facesearch_gpu.upload_small", "the per-query upload (1 ciphertext for HyDia, n1 for BSGS) is far less than "
              "the l rotated queries (2.5 GB vs 115 MB at l = 512)", "Sec. 5.5, 6.4",
              lambda _: (bool((t2[t2.resource == "up_cts"].ours < t2[t2.resource == "up_cts"].l / 4).all()),
                         t2[t2.resource.isin(["up_cts", "up_bytes_per_query"])][["approach", "resource", "ours", "l"]]
                         .to_dict("records"))),
        Claim("facesearch_gpu.correct", "every query: identified indices and membership decisions (the slot rule's, "
              "deciding where sound, else the identification's; the paper's rule on the count) equal numpy's on the "
              "plaintext scores (Sec. 6.2's correctness validation)", "Sec. 6.2",
              lambda _: (bool(S.correct.all()), S[["K", "approach", "member_rule", "member", "paper_member", "correct",
                                                    "planted_found"]].to_dict("records"))),
        Claim("facesearch_gpu.tbs_membership_2p14", "BSGS-H200-TBS answers membership in 0.20 s at K <= 2^14 (tested: "
              "within 2x, 0.40 s, on the GPU here)", "Table 7", time_claim("BSGS-GPU-TBS", 2 ** 14, 0.40)),
        Claim("facesearch_gpu.tbs_membership_2p16", "BSGS-H200-TBS answers membership in 2.58 s at K = 2^16", "Table 8",
              time_claim("BSGS-GPU-TBS", 2 ** 16, 2.58)),
        Claim("facesearch_gpu.tbs_speedup_cpu", "BSGS-GPU-TBS is 17-21x faster than the CPU (tested: >= 15x over hepkg's "
              "BSGS-Diagonal on the same machine's CPU, K <= 2^14)", "Sec. 6.4, Table 7",
              speedup_claim("speedup_vs_cpu_bsgs", 15.0, 2 ** 14)),
        Claim("facesearch_gpu.tbs_faster_than_hydia_gpu", "BSGS-GPU-TBS's membership is 2.5x faster than HyDia-GPU-DG's "
              "at K = 1024 (tested: faster at every K <= 2^14)", "Sec. 6.4",
              speedup_claim("speedup_vs_hydia_gpu", 1.0, 2 ** 14)),
        Claim("facesearch_gpu.tbe_less_memory", "BSGS-GPU-TBE needs less GPU memory than BSGS-GPU-TBS (7 vs 9 GB at "
              "K = 8192)", "Table 2, Sec. 5.3.3", tbe_memory),
    ]
