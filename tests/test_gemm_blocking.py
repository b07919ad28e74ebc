"""Block products (Sec. 4.4: P1, P2, the planner) and uSCORE-style square blocking (Table 7)."""
import itertools

import numpy as np
import pytest

import hepkg.gemm as gm
import hepkg.he as he

pytestmark = pytest.mark.filterwarnings("ignore::hepkg.he.errors.NoPrivacyWarning")  # sim on purpose

T = 65537
SMALL = he.ParamSet(name="test-gemm-1024", scheme="bfv", n=1024, plain_modulus=T, qi_bits=(30, 30, 30), depth=3,
                    source="hepkg gemm tests")
KEYS = ("mul_ct", "mul_pt", "rotate", "add")


def run(method, m, l, n, blocking, params=SMALL, preprocess="cloud", seed=0):
    A, B = gm.random_operands(m, l, n, T, seed, max_abs=5)
    ctx = gm.gemm_context(method, m, l, n, backend="sim", params=params, policy="exact", blocking=blocking,
                          preprocess=preprocess, insecure=True)
    res = gm.matmul(ctx, A, B, method, blocking=blocking, preprocess=preprocess)
    assert np.array_equal(res.C, A @ B), (method, m, l, n, blocking)
    return res


def test_paper_partitions():
    assert gm.P1 == gm.Blocking((50, 50), (50, 50), (50, 50))
    assert gm.P2 == gm.Blocking((64, 36), (64, 36), (64, 36))
    assert gm.Blocking.uniform(100, 30, 7, 32) == gm.Blocking((32, 32, 32, 4), (30,), (7,))


@pytest.mark.parametrize("method", [m for m in gm.METHODS if m not in ("uscore", "e2dm-r")])
def test_too_large_without_blocking_and_exact_with_auto_blocking(method):
    with pytest.raises(gm.ShapeTooLarge, match="512 slots"):
        gm.make_plan(method, 30, 40, 25, 512)
    res = run(method, 30, 40, 25, "auto")
    plan = res.plan
    for mi, lk, nj in itertools.product(plan.blocking.rows, plan.blocking.inner, plan.blocking.cols):
        assert gm.fits(method, mi, lk, nj, 512)


@pytest.mark.parametrize("preprocess", ["cloud", "client"])
def test_explicit_blocking_shares_preprocessing_and_groups_layouts(preprocess):
    """Unequal inner blocks give HEGMM-En two result layouts per C block: the client adds them."""
    blocking = gm.Blocking((12, 8), (9, 15), (10,))
    res = run("hegmm-en", 20, 24, 10, blocking, preprocess=preprocess)
    plan = res.plan
    assert len(plan.groups) > len(blocking.rows) * len(blocking.cols) == 2
    assert res.download_ciphertexts == len(plan.groups)
    expected = {k: 0 for k in KEYS}
    for name, (sub, op, _, _) in plan.inputs.items():  # each distinct ciphertext preprocessed once
        if preprocess == "cloud":
            parts = gm.counts.count_parts("hegmm-en", *sub.shape, 512)
            for k, v in parts["prep_a" if op.name == "A" else "prep_b"].items():
                expected[k] += v
    for sub in plan.plans.values():
        for k, v in gm.counts.count_parts("hegmm-en", *sub.shape, 512)["loop"].items():
            expected[k] += v
    expected["add"] += sum(len(ts) - 1 for ts in plan.groups.values())
    assert {k: res.ops[k] for k in KEYS} == expected


def test_uscore_is_e2dm_s_on_square_blocks():
    res = run("uscore", 20, 13, 9, 8)
    assert res.plan.blocking == gm.Blocking((8, 8, 4), (8, 5), (8, 1))
    assert {k: res.ops[k] for k in KEYS} == gm.expected_counts("uscore", 20, 13, 9, period=512, block=8)
    assert res.ops["mul_ct"] == 3 * 2 * 2 * 8
    client = run("uscore", 20, 13, 9, 8, preprocess="client")
    assert {k: client.ops[k] for k in KEYS} == gm.expected_counts("uscore", 20, 13, 9, "client", 512, block=8)


def test_uscore_block_planner():
    assert gm.uscore_block(64, 64, 16, 4096) == 64      # one block: uSCORE = E2DM-S (Table 7, size 64)
    b = gm.uscore_block(100, 100, 100, 4096)
    assert b * b <= 4096
    res = run("uscore", 30, 30, 30, None)
    assert res.plan.blocking.rows[0] ** 2 <= 512
    with pytest.raises(ValueError, match="square block"):
        gm.make_plan("uscore", 30, 30, 30, 512, blocking=40)


def test_paper_p2_blocking_at_paper_scale():
    """100 x 100 with P2: HEGMM-En runs (36 x 64 x 64 keeps one copy of A), E2DM-R is N/A (72 x 72)."""
    plan = gm.make_plan("hegmm-en", 100, 100, 100, 4096, blocking="P2")
    assert plan.plans[1, 0, 0].info["t"] == 1 and plan.plans[1, 0, 0].info["M"] == 64
    with pytest.raises(gm.NotApplicable, match="72"):
        gm.make_plan("e2dm-r", 100, 100, 100, 4096, blocking="P2")
    assert gm.make_plan("e2dm-r", 100, 100, 100, 4096, blocking="P1").plans[0, 0, 0].info["d"] == 50


def test_p1_and_p2_products_on_sim():
    for blocking in ("P1", "P2"):
        res = run("hegmm-en", 100, 100, 100, blocking, params="bfv-8192-default")
        assert res.ops["mul_ct"] == 400


def test_planner_objective():
    """The planner's blocking is never worse than P1/P2 under its own cost model."""
    def cost(method, blocking):
        total = 0.0
        for mi, lk, nj in itertools.product(blocking.rows, blocking.inner, blocking.cols):
            c = gm.expected_counts(method, mi, lk, nj, period=4096)
            total += sum(c[k] * gm.PAPER_COSTS_MS[k] for k in KEYS) + 2 * gm.PAPER_COSTS_MS["encrypt"] \
                + gm.PAPER_COSTS_MS["decrypt"]
        return total
    for method in ("hegmm-en", "e2dm-s"):
        best = gm.plan_blocking(method, 100, 100, 100, 4096)
        assert cost(method, best) <= min(cost(method, gm.P1), cost(method, gm.P2))
    with pytest.raises(ValueError, match="sum to"):
        gm.make_plan("hegmm", 10, 10, 10, 512, blocking=((5, 4), (10,), (10,)))
    with pytest.raises(ValueError, match="unknown blocking"):
        gm.make_plan("hegmm", 10, 10, 10, 512, blocking="P3")
