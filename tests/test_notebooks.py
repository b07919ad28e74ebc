"""Every notebook executes at `quick` scale, and the values it recorded are checked."""
import json

import numpy as np
import pandas as pd
import pytest

import hepkg.he as he
from hepkg import paths
from hepkg.reproduce import notebooks, run_notebook, section_of
from test_facesearch_gpu import check_pipeline_rows
from test_omr_perfomr import check_noise_trace


def claims_of(folder):
    return {c["claim"]: c for c in json.loads((folder / "claims.json").read_text())}


def check_quickstart(folder):
    tour = pd.read_csv(folder / "tab1_backend_tour.csv")
    assert set(tour.backend) == set(he.available_backends())
    assert (tour.query("scheme == 'bfv'").error == 0).all()
    assert (tour.query("scheme == 'ckks'").error < he.get_params("ckks-16384-small").ckks_tolerance).all()
    assert all(c["status"] == "holds" for c in claims_of(folder).values())
    built = pd.read_csv(folder / "tab3_built_moduli.csv")
    assert set(built.backend) == set(he.available_backends())
    ok = built.query("status == 'built'")
    assert (ok.built_log_pq == ok.built_log_q + ok.built_log_p).all()
    assert (ok.query("declared_security >= 128").built_security >= 128).all()
    if he.availability()["openfhe"]:  # OpenFHE adds P: 256 bits declared, 192 built
        row = ok.query("backend == 'openfhe' and params == 'ckks-16384-small'").iloc[0]
        assert row.declared_security == 256 and row.built_security == 192
    run = json.loads((folder / "run.json").read_text())
    assert {(c["backend"], c["params"]) for c in run["he_contexts"]} >= {(b, "bfv-8192-default") for b in ("sim",)}


def check_primitives(folder):
    tab1 = pd.read_csv(folder / "tab1_op_costs.csv").set_index("op")
    for config in ("pyfhel bfv-8192-default", "openfhe bfv-8192-d2"):
        if he.availability()[config.split()[0]]:
            assert (tab1[config] > 0).all()
    claims = claims_of(folder)
    if he.availability()["pyfhel"]:
        tab4 = pd.read_csv(folder / "tab4_noise_budget.csv")
        for (params, op), rows in tab4.groupby(["params", "op"]):
            bits = rows.sort_values("products").ours.tolist()
            assert bits == sorted(bits, reverse=True) and 100 < bits[0] < 200, (params, op, bits)
        first = tab4.query("products == 0 and op == 'mul_ct'").set_index("params")["ours"]
        assert 100 < first["bfv-8192-spmv"] < 130 and 140 < first["bfv-8192-default"] < 160  # SEAL 4.1
        assert claims["he_primitives.four_ct_products"]["status"] == "holds"
    assert (folder / "run.json").exists()


def check_spmv(folder):
    runs = pd.read_csv(folder / "runs_summary.csv")
    measured = runs.query("status == 'measured'")
    cssc = measured.query("method == 'cssc'")
    assert {"arc130", "M80PI_n1"} <= set(cssc.matrix) and (measured.reps >= 2).all()
    assert measured.counts_match.all() and (measured.q1_s <= measured.time_s).all()
    assert (measured.time_s <= measured.q3_s).all() and (measured.run_overhead > 1).all()
    assert (measured.time_s > 0).all() and (measured.floor_s > 0).all() and (cssc.rss_mib > 0).all()
    assert set(runs.status) == {"measured", "modelled (in-run costs)"}
    tab3 = pd.read_csv(folder / "tab3_op_counts.csv")
    assert (tab3.measured == tab3.predicted).all()
    assert (tab3.query("op in ['mul_ct', 'mul_pt']").measured == tab3.query("op in ['mul_ct', 'mul_pt']").n_ct).all()
    assert (tab3.query("op == 'depth'").measured == 2).all()
    tab7 = pd.read_csv(folder / "tab7_communication.csv")
    assert (tab7[["ours", "b_to_cloud_mb"]] > 0).all().all()
    assert (tab7.query("status == 'measured'")[["a_to_b_mb", "keys_to_cloud_mb", "keys_to_b_mb"]] > 0).all().all()
    assert (tab7.query("status == 'measured'").keys_to_b_mb < tab7.query("status == 'measured'").keys_to_cloud_mb).all()
    speed = pd.read_csv(folder / "tab5_speedup.csv").set_index("matrix")
    assert speed.loc["arc130", ["kind_dense", "kind_nonzero"]].eq("measured").all() and speed.speedup_dense.gt(0).all()
    assert pd.read_csv(folder / "tab2_complexity.csv").query("op != 'simplified'").holds.all()
    if he.availability()["pyfhel"]:
        tab4 = pd.read_csv(folder / "tab4_noise_budget.csv")
        assert len(tab4) == len(cssc) and (tab4.depth == 2).all() and (tab4.result_bits_min > 0).all()
    claims = claims_of(folder)
    for key in ("spmv.cssc_correct", "spmv.counts_exact", "spmv.mults_are_n_ct", "spmv.depth_two", "spmv.comm_is_n_ct",
                "spmv.rotations_formula", "spmv.paper_memory_is_dense_float64"):
        assert claims[key]["status"] == "holds", claims[key]
    for name in ("run.json", "fig10_time_vs_nnz.png", "tabA9_all_matrices.csv", "tab6_memory.csv", "raw/runs.csv"):
        assert (folder / name).exists(), name


def check_gemm(folder):
    measured = pd.read_csv(folder / "measured_products.csv").query("status == 'measured'")
    assert len(measured) and measured.correct.astype(bool).all() and (measured.wall_s > 0).all()
    assert (measured.q1_s <= measured.wall_s).all() and (measured.wall_s <= measured.q3_s).all()
    assert set(measured.baseline) == {"authors", "hepkg"} and (measured.trace_peak_bytes > 0).all()
    pairs = pd.read_csv(folder / "runs_pairs.csv")
    ok = pairs.query("status == 'ok'")
    assert ok.correct.astype(bool).all() and (ok.modelled_s > 0).all() and ok.counts_match.astype(bool).all()
    assert set(ok.baseline) == {"authors", "hepkg"}
    tab4 = pd.read_csv(folder / "tab4_op_counts.csv").dropna(subset=["expected"])
    assert len(tab4) and (tab4.counted == tab4.expected).all() and set(tab4.baseline) == {"authors", "hepkg"}
    tab7 = pd.read_csv(folder / "tab7_products.csv").dropna(subset=["time_s"])
    assert len(tab7) and (tab7.modelled_s > 0).all() and tab7.correct.astype(bool).all()
    assert set(tab7.timing) <= {"measured", "modelled"}
    faster = pd.read_csv(folder / "fig67_faster_than_e2dm.csv")
    assert set(zip(faster.baseline, faster.preprocess)) == {(b, p) for b in ("authors", "hepkg")
                                                            for p in ("client", "cloud")}
    reproduced = pd.read_csv(folder / "reproduced.csv")
    assert len(reproduced) >= 10 and reproduced["vs the authors' baselines"].notna().all()
    claims = claims_of(folder)
    for key in ("gemm.products_correct", "gemm.counts_exact", "gemm.mult_formula", "gemm.depth",
                "gemm.exact_keys_fewer_keyswitches", "gemm.en_mults_at_most_p"):
        assert claims[key]["status"] == "holds", claims[key]
    assert claims["gemm.table7_uscore_slower"]["status"] == "not measured"
    assert claims["gemm.en_faster_997"]["subjects"].keys() == {"the authors' baselines", "hepkg's baselines"}
    for name in ("run.json", "fig6_speedup_cloud.png", "fig7_speedup_client.png", "fig8_memory_ratio.png",
                 "tab5_speedup_cloud.csv", "tab6_speedup_client.csv", "tab8_blocking.csv", "tab10_shapes.csv",
                 "key_policy.csv", "hegmm_en_bsgs_speedups.csv", "measured_pairs.csv", "raw/pairs_measured.csv"):
        assert (folder / name).exists(), name


def check_facesearch(folder):
    measured = pd.read_csv(folder / "tab6_measured.csv").query("status == 'measured'")
    assert len(measured) and measured.correct.astype(bool).all() and (measured.membership_s > 0).all()
    assert set(measured.method) == {"hydia", "hydia-lean", "bsgs-diagonal", "bsgs-streamed"}
    assert (measured.ram_status == "measured").all() and (measured.ram_gb > 0).all()
    t5 = pd.read_csv(folder / "tab5_rotations.csv")
    assert (t5.rotations_textbook == t5.paper_rotations_textbook).all() and (t5.rotations_diagonal == 511).all()
    cheb = pd.read_csv(folder / "chebyshev.csv")
    assert (cheb.hepkg_depth == [3, 4, 5, 6]).all() and (cheb.cpu_path_depth == cheb.kappa).all()
    acc = pd.read_csv(folder / "tab3_accuracy.csv")
    assert (acc.comparisons == 25 * 93).all() and (acc.agree_with_plaintext > 0.95).all()
    errors = pd.read_csv(folder / "decision_errors.csv")
    for rule in ("slot rule (leaks per-slot sums)", "hepkg count (padding removed) >= 0.5"):
        got = errors[errors.rule == rule]
        assert len(got) and (got.false_positives == 0).all() and (got.false_negatives == 0).all(), rule
    assert set(errors.held_out.fillna("")) >= {"", "ben_afflek,elton_john"}  # real non-members decided too
    trials = pd.read_csv(folder / "raw" / "trials.csv")      # decided on OpenFHE: a member and a no-match query
    assert set(zip(trials["query"], trials.truth_member.astype(bool))) == {("planted", True), ("absent", False)}
    assert trials.slot_member.astype(bool).eq(trials.truth_member.astype(bool)).all()
    assert trials.count_member.astype(bool).eq(trials.truth_member.astype(bool)).all()
    absent = trials[trials["query"] == "absent"]
    assert absent.query_id.nunique() == absent.rep.nunique()  # another no-match query in every round
    claims = claims_of(folder)
    for key in ("facesearch.table5_rotations", "facesearch.correct", "facesearch.membership_slot_rule"):
        assert claims[key]["status"] == "holds", claims[key]
    assert claims["facesearch.km0_paper_rule"]["status"] == "fails"  # kappa = 8: an empty database is a 'member'
    assert claims["facesearch.keys_91pct_fewer"]["status"] == "holds"  # 44 vs 511 keys, counted at l = 512
    # quick runs l = 128, not the paper's 512: no row where the paper states a speedup or a ratio
    for key in ("facesearch.bsgs_membership_faster", "facesearch.bsgs_ram_lower", "facesearch.bsgs_disk_5x"):
        assert claims[key]["status"] == "not measured", claims[key]
    for name in ("run.json", "fig3_time_ram.png", "decision_km0.csv", "algorithm2.csv", "raw/trials.csv",
                 "raw/memory.csv"):
        assert (folder / name).exists(), name
    threads = pd.read_csv(folder / "threads.csv")
    assert set(zip(threads.omp_threads, threads.workers)) == {(1, 1), (2, 2)}      # quick's two settings
    assert threads.correct.astype(bool).all() and (threads.groups == 2).all()
    fastest = threads.loc[threads.membership_s.idxmin()]
    chosen = json.loads((folder / "run.json").read_text())["threads"]["chosen"]
    assert chosen == dict(omp_threads=int(fastest.omp_threads), workers=int(fastest.workers))
    # the fastest OpenMP setting, the groups one after another as the authors process them
    assert (measured.omp_threads == chosen["omp_threads"]).all() and (measured.workers == 1).all()
    assert (measured.ram_workers == 1).all()


def check_facesearch_gpu(folder):
    run = json.loads((folder / "run.json").read_text())
    t2 = pd.read_csv(folder / "tab2_operations_transfers.csv")
    counted = t2.dropna(subset=["expected"])
    assert len(counted) and counted.matches_expected.astype(bool).all()
    assert set(t2.approach) == {"HyDia-GPU-DG", "BSGS-GPU-TBS", "BSGS-GPU-TBE", "BSGS-GPU-TBS-KU"}
    up = pd.to_numeric(t2[t2.resource == "up_cts"].set_index("approach").ours)
    assert up["HyDia-GPU-DG"] == up["BSGS-GPU-TBS-KU"] == 1 and up["BSGS-GPU-TBS"] == up["BSGS-GPU-TBE"] > 1
    t78 = pd.read_csv(folder / "tab7_8_gpu_rows.csv")
    assert t78.correct.astype(bool).all() and (t78.membership_s > 0).all()
    assert set(t78.approach) == {"HyDia-GPU-DG", "BSGS-GPU-TBS", "BSGS-GPU-TBE", "BSGS-GPU-TBS-KU"}
    assert (pd.to_numeric(t2[t2.resource == "down_membership_slots"].ours) == 1).all()   # the slot rule's answer
    summary = pd.read_csv(folder / "runs_summary.csv")   # the slot rule decides where sound (kappa 8: two groups)
    assert (summary.member_rule == np.where(summary.groups <= 2, "slot rule", "identification")).all()
    assert summary.member.astype(str).eq(str(True)).all() and summary.truth_member.astype(bool).all()   # Km >= 1
    streams = pd.read_csv(folder / "streams_overlap.csv")
    assert streams.equal_to_one_stream.astype(bool).all() and streams.correct.astype(bool).all()
    assert set(streams.streams) >= {1, 2}
    claims = claims_of(folder)
    for key in ("keys_table2", "table2_counts", "upload_small", "correct"):
        assert claims[f"facesearch_gpu.{key}"]["status"] == "holds", claims[f"facesearch_gpu.{key}"]
    gpu_claims = ("tbs_h200_times", "tbe_h200_times", "hydia_h200_times", "baby_steps_73ms", "tbs_speedup_cpu",
                  "hydia_speedup_cpu", "tbs_faster_than_hydia_gpu", "tbe_less_memory", "memory_estimate",
                  "streams_overlap", "eq6_best")
    device_rows = pd.read_csv(folder / "raw" / "device_runs.csv") if (folder / "raw" / "device_runs.csv").read_text(
        ).strip() else pd.DataFrame()
    if not run["on_gpu"] and device_rows.empty:   # the numpy path: CPU rows, labelled so, and no GPU claim decided
        assert t78.source.str.startswith("CPU").all() and not t78.comparable.astype(bool).any()
        assert all(claims[f"facesearch_gpu.{k}"]["status"] == "not measured" for k in gpu_claims)
        runs = pd.read_csv(folder / "raw" / "runs.csv")        # N 4096, l 32, K 4096: two groups
        check_pipeline_rows(runs, l=32)
    for name in ("fig4_gpu_over_cpu.png", "fig5_rtx_vs_h200.png", "eq6_streams.csv", "membership_phases.csv",
                 "memory_estimate.csv", "fig4_gpu_over_cpu.csv", "raw/runs.csv", "raw/streams.csv",
                 "raw/cpu_openfhe.csv", "raw/device.json"):
        assert (folder / name).exists(), name


def check_omr(folder):
    t3 = pd.read_csv(folder / "tab3_digest.csv")
    measured = t3[(t3.status == "measured") & (t3.quantity == "Digest (s)")]
    assert set(measured.scheme) == {"sophomr", "sophomd", "perfomr", "perfomd"}
    assert measured.correct.astype(bool).all() and (measured.ours > 0).all() and (measured.overhead >= 1).all()
    assert (measured.params[measured.scheme.str.startswith("perf")] == "toy-bfv-omr-perf").all()
    # a row per thread count: quick measures every scheme at one thread and SophOMD also at two
    assert measured.groupby("scheme").threads.apply(sorted).to_dict() == {
        "sophomd": [1, 2], "sophomr": [1], "perfomd": [1], "perfomr": [1]}
    raw = pd.read_csv(folder / "raw" / "digests.csv")          # one round: one digest per scheme and thread count
    assert len(raw) == 5 and raw["round"].eq(0).all() and raw.groupby(["scheme", "omp_threads"]).size().eq(1).all()
    noise = pd.read_csv(folder / "noise_trace.csv")           # the toy set traced: budget left at every stage
    assert set(noise.params) == {"toy-bfv-omr-perf"} and noise.correct.astype(bool).all()
    leaf = noise[noise.stage == "leaf"].set_index("limbs").budget_bits
    assert (leaf > 0).all() and abs(leaf[2] - leaf[3]) <= 1        # 2 primes keep what 3 have: the authors' 2 used
    check_noise_trace(pd.read_csv(folder / "raw" / "noise.csv"), leaves=4)   # 0, 1, n/2, n-1
    assert (raw[raw.scheme.str.startswith("perf")].expand_limbs == 2).all()
    counts = pd.read_csv(folder / "tab1_2_counts.csv")
    assert counts.correct.astype(bool).all() and counts.matches_formula.astype(bool).all()
    rc = counts[counts.phase == "range_check"]
    assert (rc.depth == 28).all() and (rc.mul_ct == 77).all()    # the paper's depth; its window |d| <= 40
    alg7 = counts[(counts.affine == "alg7") & (counts.phase == "affine")]
    assert (alg7.rotate == 1023).all()
    alg8 = counts[(counts.affine == "alg8") & (counts.phase == "affine")]
    assert (alg8.b == 46).all() and (alg8.rotate == 89).all()     # the authors' b1 = 46, g1 = 23 at s = 1
    t6 = pd.read_csv(folder / "tab6_ps.csv").set_index(["scheme", "quantity"]).ours
    assert round(t6["sophomr", "rho"], 1) == 26.5 and round(t6["perfomr", "rho"], 1) == 21.4  # the paper's window
    claims = claims_of(folder)
    # decode_ms is a time (under 100 ms): judged by the notebook, not asserted here, where the test runs beside
    # another worker; that decoding was timed and right is what the test checks
    decode = claims.pop("omr.decode_ms")["evidence"]["hepkg_decoding_alone_ms"]
    assert set(decode) == {"sophomr", "sophomd"} and all(v > 0 for v in decode.values())
    holds = {"ps_completeness", "perfomr_errors_2_19", "he_standard", "compression_deterministic", "affine_sqrt_k",
             "rotations_sqrt_n", "perfomr_nu2_free"}
    # not reproducible whatever the scale: the PS security (no Lattice Estimator), the digests' sizes (SEAL's small
    # prime); ring switching's cost is judged where a run at the paper's set has it, so quick's is not measured
    not_reproducible = {"digest_size_remark6", "ps_security", "omr_digest_size_2_19_nu2", "omr_digest_size_2_19_nu16"}
    # quick runs toy rings: nothing at the paper's N = 2^16 and sets, so every comparison with its numbers is
    # not measured (PerfOMR runs at a toy set, no N = 2^19 digest, nothing to price the model with)
    want = {key: "holds" if key.split(".")[1] in holds else "not reproducible here"
            if key.split(".")[1] in not_reproducible else "not measured" for key in claims}
    assert {k: c["status"] for k, c in claims.items()} == want
    assert len(claims) == 34          # every testable statement of the paper but decode_ms, popped above
    for name in ("run.json", "fig2_phases.png", "fig_noise_trace.png", "tab7_modelled.csv", "raw/digests.csv",
                 "raw/noise.csv", "sizes_measured.csv"):
        assert (folder / name).exists(), name


CHECKS = {"quickstart": check_quickstart, "he_primitives": check_primitives, "spmv": check_spmv, "gemm": check_gemm,
          "facesearch": check_facesearch, "facesearch_gpu": check_facesearch_gpu, "omr": check_omr}


QUICK = dict(SCALE="quick", SEED=0, ARTIFACT_DIR=None, EXECUTOR="inline", WORKERS=None, SCHEDULER=None)


@pytest.mark.notebook
@pytest.mark.parametrize("notebook", notebooks(), ids=lambda nb: nb.stem)
def test_notebook_values(notebook):
    """The values each notebook recorded at its default (quick) parameters.

    ``make test`` executes the notebooks first, with nbval (``pytest --nbval-lax notebooks``),
    into this session's $HEPKG_ARTIFACTS (see the root conftest.py); run on its own, this test
    executes the notebook with papermill instead. Either way each notebook runs once.
    """
    section = section_of(notebook)
    assert section in CHECKS, f"add a check of the values {notebook.name} records"
    folder = paths.artifacts(section)
    if not (folder / "run.json").exists():
        row = run_notebook(notebook, QUICK, folder.parent)
        assert row["status"] == "ok", row["error"]
    CHECKS[section](folder)
