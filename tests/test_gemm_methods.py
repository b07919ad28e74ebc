"""gemm methods on ``sim``: exact products, op counts against closed forms and Tables 2-4, roles and keys."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import hepkg.gemm as gm
import hepkg.he as he
from hepkg.he.errors import MissingRotationKey, SecretKeyRequired

pytestmark = pytest.mark.filterwarnings("ignore::hepkg.he.errors.NoPrivacyWarning")  # sim on purpose

T = 65537
#: a small ring (512 slots per row) keeps sim fast and makes the slot limits bite at small shapes
SMALL = he.ParamSet(name="test-gemm-1024", scheme="bfv", n=1024, plain_modulus=T, qi_bits=(30, 30, 30), depth=3,
                    source="hepkg gemm tests")
KEYS = ("mul_ct", "mul_pt", "rotate", "add")
SINGLE = [m for m in gm.METHODS if m != "uscore"]


def run(method, A, B, params=SMALL, preprocess="cloud", policy="exact", **kw):
    (m, l), n = A.shape, B.shape[1]
    ctx = gm.gemm_context(method, m, l, n, backend="sim", params=params, policy=policy, preprocess=preprocess,
                          insecure=True, **kw)
    return gm.matmul(ctx, A, B, method, preprocess=preprocess, **kw)


def check(method, m, l, n, params=SMALL, preprocess="cloud", seed=0):
    """Exact product and op counts equal to expected_counts; returns the result."""
    params = he.get_params(params)
    A, B = gm.random_operands(m, l, n, T, seed, max_abs=20)
    res = run(method, A, B, params, preprocess)
    assert np.array_equal(res.C, A @ B), (method, m, l, n, preprocess)
    got = {k: res.ops[k] for k in KEYS}
    assert got == gm.expected_counts(method, m, l, n, preprocess, params.n // 2), (method, m, l, n, preprocess)
    assert res.depth <= (2 if method == "huang" else 3)
    return res


@settings(max_examples=60, deadline=None)
@given(m=st.integers(1, 16), l=st.integers(1, 16), n=st.integers(1, 16))
def test_every_method_is_exact_with_the_expected_counts(m, l, n):
    for method, pre in itertools.product(SINGLE, ("cloud", "client")):
        if method == "e2dm-r" and not gm.fits(method, m, l, n, 512):
            with pytest.raises(gm.NotApplicable):
                gm.make_plan(method, m, l, n, 512)
            continue
        check(method, m, l, n, preprocess=pre)


@pytest.mark.parametrize("shape", sorted(set(itertools.permutations((2, 5, 9)))) + [(4, 4, 4), (1, 1, 1), (1, 7, 1)])
def test_dimensions_in_every_order(shape):
    for method in SINGLE:
        if gm.fits(method, *shape, 512):
            check(method, *shape)


@pytest.mark.parametrize("method,shape,what", [
    ("hegmm-en", (9, 20, 24), "partial duplication: 3 copies of A would need 27 x 24 slots"),
    ("hegmm-en", (24, 20, 9), "the same for B (n smallest: C^T = B^T A^T)"),
    ("hegmm-en", (2, 30, 17), "no duplicated layout fits: Algorithm 1"),
    ("huang", (29, 7, 17), "B's rows repeated 4 times instead of 5"),
    ("huang", (12, 32, 16), "B fills the row: row shifts fold to one rotation"),
    ("hegmm", (16, 32, 8), "A fills the row"),
    ("e2dm-s", (17, 3, 2), "2 d^2 > slots: psi^k needs two masked rotations"),
])
def test_slot_limits_at_small_rings(method, shape, what):
    res = check(method, *shape)
    if "Algorithm 1" in what:
        assert res.plan.info["fallback"] == "hegmm"
    if "partial" in what:
        assert res.plan.info["t"] == 2


@pytest.mark.parametrize("method,shape", [("e2dm-s", (64, 64, 16)), ("e2dm-r", (16, 64, 64)), ("hegmm-en", (64, 16, 64)),
                                          ("huang", (40, 2, 64))])
def test_paper_sized_shapes(method, shape):
    """N = 8192 (4096 slots per row): Table 7's shapes; d^2 = 4096 makes E2DM's row shift one rotation."""
    check(method, *shape, params="bfv-8192-default")


def test_hegmm_row_major_mirrors_column_major():
    A, B = gm.random_operands(3, 5, 7, T, 1, max_abs=20)
    res = run("hegmm", A, B, order="C")
    assert np.array_equal(res.C, A @ B)
    assert {k: res.ops[k] for k in KEYS} == gm.expected_counts("hegmm", 3, 5, 7, order="C", period=512) \
        == gm.expected_counts("hegmm", 7, 5, 3, period=512)


@pytest.mark.parametrize("shape", [(50, 30, 10), (10, 30, 50), (30, 10, 50), (20, 20, 20), (2, 5, 7), (5, 4, 2),
                                   (16, 64, 64), (64, 64, 16)])
def test_multiplication_counts_match_table_4(shape):
    """HE-Mult: HEGMM-En p, HEGMM and Huang l, E2DM-S d, E2DM-R p (the other columns differ, see counts.py)."""
    m, l, n = shape
    for method in SINGLE:
        if not gm.fits(method, m, l, n, 4096):
            continue
        ours = gm.expected_counts(method, m, l, n, period=4096)["mul_ct"]
        paper_row = "hegmm-en" if method == "hegmm-en-bsgs" else method
        assert ours == gm.formula_counts(paper_row, m, l, n)["mul_ct"], method
    assert gm.expected_counts("hegmm-en", 50, 30, 10, period=4096)["mul_ct"] == 10  # Sec. 4.2's example


@pytest.mark.parametrize("shape", [(16, 64, 64), (64, 16, 64), (50, 30, 10), (20, 60, 30), (40, 40, 40)])
def test_bsgs_variant_keeps_the_products_and_saves_key_switches(shape):
    m, l, n = shape
    plain, bsgs = (check(meth, m, l, n, params="bfv-8192-default") for meth in ("hegmm-en", "hegmm-en-bsgs"))
    assert bsgs.ops["mul_ct"] == plain.ops["mul_ct"]
    assert bsgs.ops["rotate"] < plain.ops["rotate"]
    client = gm.expected_counts("hegmm-en-bsgs", m, l, n, "client") == gm.expected_counts("hegmm-en", m, l, n, "client")
    assert client  # sigma and tau by the client: nothing left to evaluate on the cloud


def test_measured_counts_against_the_formulas_on_a_few_shapes():
    """Measured on sim vs Table 4 (the notebook prints the full comparison)."""
    res = check("hegmm-en", 5, 4, 2, params="bfv-8192-default")       # Fig. 5
    assert {k: res.ops[k] for k in KEYS} == dict(mul_ct=2, mul_pt=18, rotate=17, add=16)
    assert {k: gm.formula_counts("hegmm-en", 5, 4, 2)[k] for k in KEYS} == dict(mul_ct=2, mul_pt=27, rotate=27, add=29)
    res = check("e2dm-s", 64, 64, 16, params="bfv-8192-default", preprocess="client")
    assert {k: res.ops[k] for k in KEYS} == dict(mul_ct=64, mul_pt=126, rotate=189, add=126)
    assert gm.formula_counts("e2dm-s", 64, 64, 16, preprocess="client")["rotate"] == 3 * 64


def test_depth_is_1M_2C_with_cloud_preprocessing():
    for method in ("hegmm-en", "hegmm", "e2dm-s", "e2dm-r"):
        assert check(method, 5, 7, 6 if method != "e2dm-r" else 5).depth == 3
        assert check(method, 5, 7, 6 if method != "e2dm-r" else 5, preprocess="client").depth == 2
    assert check("huang", 5, 7, 6).depth == 2  # 1M + 1C


def test_theorem_3_5_each_partial_product_once():
    """2 x 5 x 7 (Fig. 4): t = 3 copies, product 0 appears twice and must be counted once."""
    plan = gm.make_plan("hegmm-en", 2, 5, 7, 512)
    assert plan.info["t"] == 3 and plan.info["M"] == 6 and not plan.transposed
    A, B = np.zeros((2, 5), int), np.eye(5, 7, dtype=int)
    A[0, 0] = 1
    res = run("hegmm-en", A, B)
    assert res.C[0, 0] == 1 and res.ops["mul_ct"] == 2


def test_roles_client_encrypts_cloud_computes_on_public_context():
    ctx = gm.gemm_context("hegmm-en", 3, 4, 5, params=SMALL, insecure=True, backend="sim")
    client, cloud = gm.parties(ctx)
    assert client.ctx.has_secret and not cloud.ctx.has_secret
    A, B = gm.random_operands(3, 4, 5, T, 2)
    plan = gm.make_plan("hegmm-en", 3, 4, 5, ctx.period)
    message = client.encrypt(plan, A, B)
    assert all(isinstance(v, bytes) for v in message.values())
    reply, ops = cloud.multiply(plan, message)
    with pytest.raises(SecretKeyRequired):
        cloud.ctx.decrypt(cloud.ctx.deserialize(reply["C"]))
    assert np.array_equal(client.decrypt(plan, reply), A @ B) and ops["mul_ct"] == 3
    with pytest.raises(SecretKeyRequired):
        gm.Client(cloud.ctx)
    res = gm.matmul((ctx, cloud.ctx), A, B)
    assert res.upload_ciphertexts == 2 and res.download_ciphertexts == 1 and res.upload_bytes > 0


def test_missing_rotation_keys_are_named():
    ctx = he.context("sim", SMALL, rotations=[1], policy="exact", insecure=True)
    A, B = gm.random_operands(3, 4, 5, T, 2)
    with pytest.raises(MissingRotationKey, match="gemm_context"):
        gm.matmul(ctx, A, B, "hegmm-en")


def test_pow2_keys_compose_rotations():
    A, B = gm.random_operands(6, 9, 4, T, 3)
    exact, pow2 = run("hegmm-en", A, B), run("hegmm-en", A, B, policy="pow2")
    assert np.array_equal(pow2.C, A @ B) and pow2.ops["rotate"] == exact.ops["rotate"]
    assert pow2.ops["keyswitch"] >= exact.ops["keyswitch"]
    steps = gm.rotation_steps("hegmm-en", 6, 9, 4, params=SMALL)
    ctx = he.context("sim", SMALL, rotations=steps, policy="pow2", insecure=True)
    assert all(math.log2(s if s < 256 else 512 - s).is_integer() for s in ctx.keys.steps)


def test_e2dm_r_applicability():
    assert gm.e2dm_r_shape(16, 64, 64, 4096) == (False, 16, 64)
    assert gm.e2dm_r_shape(64, 64, 16, 4096) == (True, 16, 64)       # C^T = B^T A^T
    assert gm.e2dm_r_shape(3, 5, 7, 4096) == (False, 3, 9)            # d rounded up to a multiple of r
    with pytest.raises(gm.NotApplicable, match="inner dimension"):
        gm.e2dm_r_shape(64, 16, 64, 4096)                             # Table 7: N/A
    with pytest.raises(gm.NotApplicable, match="5184"):
        gm.e2dm_r_shape(36, 64, 64, 4096)                             # Sec. 4.4: 36 x 64 -> 72 x 72


def test_the_default_keys_are_exact_only_where_fewer_or_cheaper():
    # HEGMM-En: 47 exact keys against 17 power-of-two ones, but 48 key switches against 72
    assert gm.key_policy(gm.make_plan("hegmm-en", 16, 64, 64, 4096, preprocess="client"), "bfv-8192-t20") == "exact"
    # Huang: 69 exact keys against 17, and the same 448 key switches: the power-of-two set
    huang = gm.make_plan("huang", 16, 64, 64, 4096, preprocess="client")
    assert gm.key_policy(huang, "bfv-8192-t20") == "pow2"
    assert gm.gemm_context("huang", 16, 64, 64, backend="sim", preprocess="client").keys.policy == "pow2"
    assert gm.key_policy(gm.make_plan("hegmm-en", 4, 6, 3, 4096), "bfv-8192-t20") == "exact"  # 7 keys, not 8
