"""The face-search paper's device pipelines (hepkg.facesearch.gpu) on the rns engine, numpy path, toy ring.

Every pipeline runs end to end (keys, enrollment, setup, membership, identification) at N = 4096, l = 32 and
is checked against numpy; the GPU itself is exercised only where CuPy and a device exist (not here)."""
import os

import numpy as np
import pandas as pd
import pytest

import hepkg.he as he
from conftest import cupy_or_skip
from hepkg.facesearch import Client, Enroller, SlotRule, chebyshev, gpu, gpu_report
from hepkg.facesearch.packing import Layout
from hepkg.reference import FACESEARCH as PAPER
from hepkg.reference import evaluate
from hepkg.rns import DeviceMemoryError
from hepkg.rns import device as rdev

PARAMS, L = "toy-ckks-4096-d11", 32
SLOTS = he.get_params(PARAMS).n // 2


def _server(ctx, database, variant, **kw):
    """The device server of ``ctx``'s public context, pinned to the fingerprint the client published."""
    public = ctx.to_bytes()
    return gpu.DeviceServer(public, database, variant, fingerprint=he.fingerprint(public), **kw)


@pytest.fixture(autouse=True)
def _numpy_engine(monkeypatch):
    monkeypatch.setenv("HEPKG_RNS_XP", "numpy")


def test_key_plans_match_table2_at_the_papers_sizes():
    plans = {v: gpu.key_plan(v, PAPER.DIM, PAPER.SLOTS, PAPER.N1) for v in gpu.VARIANTS}
    counts = {v: (len(p["generated"]), len(p["device"])) for v, p in plans.items()}
    assert counts == {"hydia-dg": (516, 516), "bsgs-tbs": (75, 36), "bsgs-tbe": (53, 36)}
    tbs = plans["bsgs-tbs"]
    assert tbs["host"] == list(range(1, 23)) and not set(tbs["host"]) & set(tbs["device"]) - {1, 2, 4, 8, 16}
    assert tbs["temporary"] == sorted(PAPER.SLOTS - 23 * j for j in range(1, 23))
    assert plans["bsgs-tbe"]["temporary"] == [] and plans["hydia-dg"]["host"] == []
    with pytest.raises(ValueError, match="unknown GPU pipeline"):
        gpu.key_plan("bsgs-gpu", 64, SLOTS)


def test_stream_pool_size_is_eq6():
    assert gpu.stream_pool_size(132, int(127e9), 5_000_000) == 32           # H200: 33 clipped to 32
    assert gpu.stream_pool_size(72, int(43e9), 5_000_000) == 18             # RTX 8000: 72 / 4
    assert gpu.stream_pool_size(132, int(4e9), 5_000_000) == 4              # memory-bound: 0.2 F / (40 C)
    assert gpu.stream_pool_size(4, 10 ** 6, 5_000_000) == 2                 # S >= 2
    with pytest.raises(ValueError, match="positive"):
        gpu.stream_pool_size(0, 10 ** 9, 10)


def test_cpu_stand_in_device():
    dev = gpu.device_info(np)
    assert dev.kind == "cpu stand-in" and dev.sms == 4 * (os.cpu_count() or 1) and 0 < dev.free_bytes <= dev.total_bytes


def test_memory_estimate_counts_diagonals_keys_and_temporaries():
    lay = Layout(4100, 64, 2048)   # three groups
    tbs = gpu.memory_estimate("bsgs-tbs", lay, None, 10, 1000, streams=2)
    tbe = gpu.memory_estimate("bsgs-tbe", lay, None, 10, 1000, streams=2)
    assert tbs["diagonals"] == 3 * 64 * 10 and tbs["temporaries"] == 2 * 40 * 10
    assert tbs["temporary_keys"] == 7 * 1000 and tbe["temporary_keys"] == 0 and tbe["setup"] < tbs["setup"]
    hydia = gpu.memory_estimate("hydia-dg", lay, None, 10, 1000, streams=2)
    assert hydia["keys"] == (63 + 5 + 1) * 1000 and hydia["query_table"] == 64 * 10   # 1..63, 64..1024, relin


@pytest.fixture(scope="module")
def rows():
    os.environ.setdefault("HEPKG_RNS_XP", "numpy")
    return pd.DataFrame(gpu.measure(dict(params=PARAMS, K=2100, Km=1, l=L, kappa=8, reps=1, seed=3, insecure=True)))


def check_pipeline_rows(rows: pd.DataFrame, l: int):
    """gpu.measure's rows of the three device pipelines at two groups, dimension ``l``: checked against numpy,
    and their operations and transfers against Table 2 (31_facesearch_gpu's rows are checked so too)."""
    assert list(rows.variant) == list(gpu.VARIANTS) and (rows.groups == 2).all()
    assert rows.correct.astype(bool).all() and rows.planted_found.astype(bool).all()
    # the count is the weighted sum scaled back by the 2048 slots (protocol.sum_weight): 2048 times a slot's error
    assert (rows.count_error < 2048 * 1e-6).all() and (rows.ids_error < 1e-4).all() and (rows.slot_error < 1e-4).all()
    assert rows.slot_sound.astype(bool).all() and (rows.member_rule == "slot rule").all()  # sound at degree 13
    assert rows[["member", "slot_member", "truth_member"]].astype(bool).all(axis=None)
    for r in rows.itertuples():
        exp = gpu.expected_table2(r.variant, l, 2)
        baby = r.baby_rotations_device if r.variant == "hydia-dg" else r.baby_rotations_host
        assert (baby, r.giant_rotations, r.similarity_mul_ct / 2) == (exp["baby_rotations"], exp["giant_rotations"],
                                                                      exp["mul_per_group"])
        assert (r.membership_up_cts, r.membership_down_cts, r.identify_down_cts) == (exp["up_cts"], 1, 2)
        # one ciphertext each, the membership answer in its authenticated envelope (its aggregation and shape)
        assert r.membership_up_bytes > 0 and 0 < r.membership_down_bytes - r.identify_down_bytes / 2 < 512
        assert r.aggregation_rotations == 11                                  # rotate-and-sum over 2048 slots
        assert (r.membership_slots_down_cts, r.membership_slots_aggregation_rotations) == (1, 0)   # no slot sum
        assert abs(r.membership_slots_down_bytes - r.membership_down_bytes) <= 8     # the aggregation's name apart
    tbs = rows.set_index("variant").loc["bsgs-tbs"]
    assert tbs.prerotations == 2 * (l - 6) and tbs.keys_temporary == 5 and tbs.keys_device == 5 + 11


def test_pipelines_agree_with_numpy_and_count_table2(rows):
    check_pipeline_rows(rows, L)


def test_report_without_gpu(rows):
    R = gpu_report.build(dict(runs=rows, device=gpu.device_info(np).__dict__))
    assert R["table2"].matches_expected.dropna().astype(bool).all()
    claims = evaluate(gpu_report.claims(R), R).set_index("claim").status
    for key in ("keys_table2", "eq6_h200", "table2_counts", "upload_small", "correct"):
        assert claims[f"facesearch_gpu.{key}"] == "holds", key
    for key in ("tbs_membership_2p14", "tbs_membership_2p16", "tbs_speedup_cpu", "tbs_faster_than_hydia_gpu",
                "tbe_less_memory"):
        assert claims[f"facesearch_gpu.{key}"] == "not measured", key
    assert not R["tables78"].comparable.any() and R["tables78"].status.str.contains("CPU").all()
    refused = dict(rows.iloc[0]) | dict(K=8192, groups=4, status="refused: HyDia-GPU-DG at K=8192 needs ...")
    R2 = gpu_report.build(dict(runs=pd.concat([rows, pd.DataFrame([refused])], ignore_index=True),
                               device=gpu.device_info(np).__dict__))
    assert 8192 not in set(R2["summary"].K) and R2["table2"].equals(R["table2"])
    cell = R2["tables78"].query("K == 8192")
    assert len(cell) == 1 and cell.status.iloc[0].startswith("refused") and cell.membership_s.isna().all()


def _clean_database(rng, q, K):
    """K random vectors whose scores with ``q`` all lie below delta - 0.15 (outside the slot rule's margin band)."""
    qn = q / np.linalg.norm(q)
    db = rng.integers(-99, 100, (K, L)).astype(float)
    while True:
        bad = (db / np.linalg.norm(db, axis=1, keepdims=True)) @ qn >= chebyshev.DELTA - 0.15
        if not bad.any():
            return db
        db[bad] = rng.integers(-99, 100, (int(bad.sum()), L))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """K = 2100 (two groups, where the slot rule is sound on the GPU path) with Km = 0 and 2 planted matches (one
    in each group)."""
    os.environ.setdefault("HEPKG_RNS_XP", "numpy")
    ctx = he.context("rns", PARAMS, rotations=gpu.key_plan("bsgs-tbs", L, SLOTS)["generated"], policy="exact",
                     insecure=True)
    rng = np.random.default_rng(5)
    q = rng.integers(-99, 100, L).astype(float)
    db = _clean_database(rng, q, 2100)
    folder, dbs = tmp_path_factory.mktemp("tiny"), {}
    for Km, rows in ((0, []), (2, [7, 2099])):                # slot 7 of group 0 and slot 51 of group 1
        planted = db.copy()
        planted[rows] = q + rng.integers(-2, 3, (len(rows), L))
        dbs[Km] = Enroller(ctx.public()).enroll(planted, folder / f"km{Km}")
    return ctx, Client(ctx).query(q), dbs


def test_tbs_frees_its_temporary_keys_and_decides_membership(tiny):
    """Km = 0, 2: the slot rule (GPU path) on the "slots" answer says member iff Km > 0; the "sum" answer's
    count is the slot values' sum; the temporary keys are gone."""
    ctx, query, dbs = tiny
    plan = gpu.key_plan("bsgs-tbs", L, SLOTS)
    verdicts = []
    for Km, db in dbs.items():
        server = _server(ctx, db, "bsgs-tbs")
        assert sorted(server.ctx.keys.steps) == plan["device"] and sorted(server.host.keys.steps) == plan["host"]
        assert sorted(server.ctx._eng.keys.galois) == plan["device"]      # the engine let the keys go
        with pytest.raises(he.MissingRotationKey):
            server.ctx.rotate(server.diagonals[0][0], -6)                  # a temporary key, freed
        rule = SlotRule(8, db.layout, path="gpu")
        assert db.layout.groups == 2 and rule.sound
        values = Client(ctx).slot_values(server.membership(query, aggregate="slots"))
        assert server.counts["aggregation_rotations"] == 0 and server.transfers["down_cts"] == 1
        count = Client(ctx).count(server.membership(query), "sum")
        assert count == pytest.approx(values.sum(), abs=SLOTS * 1e-5)
        corrected = rule.corrected(values)
        assert (corrected > rule.thresholds).sum() == Km                # each planted match lifts its own slot
        verdicts.append(rule.member(values))
    assert verdicts == [False, True]
    assert not SlotRule(8, Layout(2 * SLOTS + 1, L, SLOTS), path="gpu").sound   # three groups: not at degree 13
    with pytest.raises(ValueError, match="aggregate"):
        server.membership(query, aggregate="max")


def test_refusals(tiny, monkeypatch):
    ctx, _, dbs = tiny
    none = dbs[0]
    with pytest.raises(ValueError, match="pre-rotation by n1=6"):
        _server(ctx, none, "bsgs-tbe")
    with pytest.raises(he.MissingRotationKey, match="HyDia-GPU-DG needs keys"):
        _server(ctx, none, "hydia-dg")
    monkeypatch.setattr(rdev, "free_bytes", lambda xp: 10 ** 6)  # the engine's own tables no longer fit
    with pytest.raises(DeviceMemoryError, match="the NTT tables needs"):
        _server(ctx, none, "bsgs-tbs")
    monkeypatch.setattr(rdev, "free_bytes", lambda xp: 3 * 10 ** 7)  # the context fits, the pipeline does not
    with pytest.raises(DeviceMemoryError, match="BSGS-GPU-TBS at K=2100"):
        _server(ctx, none, "bsgs-tbs", device=gpu.DeviceInfo("x", "cpu stand-in", 8, 10 ** 9,
                                                                                     10 ** 9))


@pytest.mark.gpu
def test_tbs_on_a_gpu_agrees_with_numpy(tiny, monkeypatch):
    """The same pipeline with the rns engine on CuPy: the device's properties size the pool, CUDA events time
    the phases, device memory is measured, and the answer equals the numpy pipeline's."""
    cupy_or_skip()
    ctx, query, dbs = tiny
    planted = dbs[2]
    ref = Client(ctx).slot_values(_server(ctx, planted, "bsgs-tbs").membership(query, "slots"))
    monkeypatch.setenv("HEPKG_RNS_XP", "cupy")
    server = _server(ctx, planted, "bsgs-tbs")
    assert server.device.kind == "cuda" and server.device.sms > 0 and 2 <= server.streams <= 32
    values = Client(ctx).slot_values(server.membership(query, "slots"))
    assert np.abs(values - ref).max() < 1e-4 and SlotRule(8, planted.layout, path="gpu").member(values)
    assert server.timer.seconds["similarity_comparison"] > 0 and server.peak_device > 0
