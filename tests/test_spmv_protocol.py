"""The three-party CSSC protocol on sim: exact results, roles, messages, op counts (Table 3), encodings, bad input."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import hepkg.he as he
from conftest import pinned
from hepkg.he.params import ParamSet
from hepkg.he.errors import CorruptedData, EncodingError, SecretKeyRequired
from hepkg.spmv import messages
from hepkg.spmv import (CSSC, ClientA, ClientB, Cloud, FixedPoint, generate_chunks, predicted_ops, run_cssc,
                        table3_formula, table3_rows)

pytestmark = pytest.mark.filterwarnings("ignore::hepkg.he.errors.NoPrivacyWarning")  # sim on purpose

SETTINGS = settings(max_examples=15, deadline=None)
#: period 512: row blocks and many chunks with small matrices (sim only: insecure)
TOY = ParamSet(name="test-bfv-1024-d2", scheme="bfv", n=1024, plain_modulus=65537, qi_bits=(30, 30, 30), depth=2)


def int_matrix(rows, cols, density, seed, low=-9, high=10):
    rng = np.random.default_rng(seed)
    m = sp.random(rows, cols, density=density, format="csr", random_state=seed,
                  data_rvs=lambda n: rng.integers(low, high, n)).astype(np.int64)
    m.eliminate_zeros()
    if m.nnz == 0:
        m = sp.csr_matrix(([1], ([0], [0])), shape=(rows, cols), dtype=np.int64)
    return m


@SETTINGS
@given(rows=st.integers(1, 1100), cols=st.integers(1, 300), density=st.floats(0.001, 0.05),
       seed=st.integers(0, 10 ** 6), layout=st.sampled_from(["row", "both"]), policy=st.sampled_from(["pow2", "exact"]))
def test_exact_integer_results_and_predicted_counts(rows, cols, density, seed, layout, policy):
    m = int_matrix(rows, cols, density, seed)
    v = np.random.default_rng(seed + 1).integers(-5, 6, cols)
    res = run_cssc(m, v, params=TOY, layout=layout, policy=policy, insecure=True, backend="sim")
    np.testing.assert_array_equal(res.y, m @ v)
    assert res.y.dtype == np.int64
    plan = generate_chunks(CSSC.from_sparse(m), 512, layout)
    expected = predicted_ops(plan, policy)
    assert {k: res.cloud_ops[k] for k in expected} == expected


def test_paper_parameters_both_layouts_agree():
    m = int_matrix(300, 200, 0.05, seed=4)
    v, agreed = np.arange(-100, 100), FixedPoint(vector_bound=100)  # beyond the default public bound
    rows = run_cssc(m, v, layout="row", encoding=agreed, backend="sim")
    both = run_cssc(m, v, layout="both", encoding=agreed, backend="sim")
    np.testing.assert_array_equal(rows.y, m @ v)
    np.testing.assert_array_equal(both.y, m @ v)
    assert both.info["n_ct"] < rows.info["n_ct"] or rows.info["n_ct"] == 1
    assert both.cloud_ops["swap"] == sum(c.cols > c.split for c in ClientA(m, layout="both", backend="sim").plan.chunks)


# ------------------------------------------------------------------ Table 3
@pytest.mark.parametrize("row_nnz, rows, n_cols", [(16, 512, 8), (32, 256, 16), (4, 1024, 4), (6, 2048, 2),
                                                    (2, 8192, 1)])
def test_table3_counts_for_power_of_two_chunks(row_nnz, rows, n_cols):
    """Every chunk is rows x n_cols with n_cols a power of two: Table 3 holds exactly per chunk."""
    r = np.repeat(np.arange(rows), row_nnz)
    c = np.tile(np.arange(row_nnz), rows)
    m = sp.csr_matrix((np.ones(r.size, dtype=np.int64), (r, c)), shape=(rows, 64))
    a = ClientA(m, backend="sim")
    res = run_cssc(m, np.ones(64, dtype=np.int64), backend="sim")
    n_ct, c_max = a.plan.n_ct, a.plan.c_max
    assert c_max == n_cols and all(ch.cols == n_cols for ch in a.plan.chunks)
    paper = table3_formula(n_ct, c_max)
    ops = res.cloud_ops
    assert ops["mul_ct"] == paper["mul_ct"] == n_ct
    assert ops["mul_pt"] == paper["mul_pt"] == n_ct
    assert ops["rotate"] == paper["rotate"] == n_ct * math.log2(n_cols)
    assert ops["add"] == paper["add"] + n_ct - len(a.plan.blocks)  # + adding the chunks into the result
    assert ops["depth"] == 2
    table = {r["op"]: r for r in table3_rows(a.plan, ops)}
    assert all(r["measured"] == r["predicted"] for r in table.values())


def test_table3_rotations_for_any_column_count():
    """Non powers of two: floor(log2 c) + popcount(c) - 1 rotations per chunk, never more than 2 log2 c."""
    for cols in range(1, 40):
        m = sp.csr_matrix(np.ones((4, cols), dtype=np.int64))
        res = run_cssc(m, np.arange(cols), encoding=FixedPoint(vector_bound=cols), backend="sim")
        np.testing.assert_array_equal(res.y, m @ np.arange(cols))
        expected = int(math.floor(math.log2(cols))) + bin(cols).count("1") - 1
        assert res.cloud_ops["rotate"] == expected <= 2 * math.log2(cols) + 1e-9


# ------------------------------------------------------------------ roles and messages
def test_parties_exchange_bytes_and_cloud_cannot_decrypt():
    m = int_matrix(80, 60, 0.1, seed=5)
    v = np.arange(60) % 9 - 4
    a = ClientA(m, backend="sim")
    ctx_bytes, ci_msg, a_msg = a.public_context(), a.column_index_message(), a.matrix_message()
    assert all(isinstance(x, bytes) for x in (ctx_bytes, ci_msg, a_msg))
    b = ClientB(v, ctx_bytes, ci_msg, **pinned(ctx_bytes, "sim"))
    cloud = Cloud(ctx_bytes, **pinned(ctx_bytes, "sim"))
    assert not cloud.ctx.has_secret and not b.ctx.has_secret
    res = cloud.evaluate(a_msg, b.vector_message())
    np.testing.assert_array_equal(a.decrypt_result(res), m @ v)
    ct = cloud.ctx.deserialize(cloud.ctx.serialize(cloud.ctx.encrypt([1, 2])))
    with pytest.raises(SecretKeyRequired):
        cloud.ctx.decrypt(ct)
    # the row map stays with A: B's message carries CI and CP only, the cloud's no indices at all
    meta, arrays, _ = messages.unpack(ci_msg, "spmv/column-index")
    assert set(arrays) == {"CI", "CP"} and "RM" not in meta
    meta, arrays, blobs = messages.unpack(a_msg, "spmv/matrix")
    assert not arrays and set(meta) == {"plan"} and len(blobs) == a.plan.n_ct
    with pytest.raises(CorruptedData):
        cloud.evaluate(a_msg[:-10], b.vector_message())
    with pytest.raises(CorruptedData):
        cloud.evaluate(b.vector_message(), a_msg)


def test_traffic_is_ciphertext_counts_times_sizes():
    m = int_matrix(400, 300, 0.05, seed=6)
    res = run_cssc(m, np.ones(300, dtype=np.int64), backend="sim")
    ctx = he.context("sim", "bfv-8192-spmv")
    ct_bytes = ctx.nbytes(ctx.encrypt([0]))
    n = res.info["n_ct"]
    assert n * ct_bytes < res.traffic["a_to_cloud"] < n * ct_bytes + 2000 + 40 * n
    assert n * ct_bytes < res.traffic["b_to_cloud"] < n * ct_bytes + 2000
    assert res.traffic["a_to_b"] < 4 * m.nnz + 8 * (m.getnnz(axis=1).max() + 1) + 2000 + 40 * n
    assert res.traffic["cloud_to_a"] > res.info["result_ciphertexts"] * ct_bytes


def test_paper_ciphertext_counts_match_table7():
    """Table 7's traffic / 0.52 MB per ciphertext = the one-row layout's chunk counts at N = 8192."""
    datasets = pytest.importorskip("hepkg.datasets")
    paper_mb = {"arc130": 1.04, "M80PI_n1": 2.08, "mycielskian13": 183.04, "cca": 17.68, "p2p-Gnutella31": 21.32}
    for name, mb in paper_mb.items():
        try:
            m = datasets.load_matrix(name, download=False)
        except datasets.MatrixNotFound:
            continue
        plan = generate_chunks(CSSC.from_sparse(m), 4096, "row")
        assert plan.n_ct == round(mb / 0.52), name


# ------------------------------------------------------------------ values
def test_fixed_point_real_values():
    rng = np.random.default_rng(7)
    m = sp.random(60, 50, density=0.1, format="csr", random_state=7, data_rvs=lambda n: rng.uniform(-1, 1, n))
    v = rng.uniform(-1, 1, 50)
    enc = FixedPoint(matrix_scale=2 ** 5, vector_scale=2 ** 5, vector_bound=1.0)
    res = run_cssc(m, v, encoding=enc, backend="sim")
    assert res.y.dtype == np.float64
    # |a v - round(a s) round(v s) / s^2| <= (|a| + |v|) / (2 s) + 1 / (4 s^2) per product
    s = 2 ** 5
    bound = (abs(m) @ np.full(50, 1 / (2 * s)) + m.getnnz(axis=1) * (1 / (2 * s) + 1 / (4 * s * s)))
    assert np.all(np.abs(res.y - m @ v) <= bound + 1e-12)


def test_fixed_point_overflow_is_a_clear_error():
    m = sp.random(60, 50, density=0.5, format="csr", random_state=8)
    with pytest.raises(EncodingError, match=r"t=65537 is too small for the precision asked.*worst-case"):
        ClientA(m, encoding=FixedPoint(2 ** 8, 2 ** 8, vector_bound=1.0), backend="sim")
    with pytest.raises(EncodingError, match=r"t=65537 is too small for this matrix"):
        ClientA(m, encoding=FixedPoint(2 ** 14, 2 ** 8), backend="sim")


def test_real_matrix_is_never_truncated():
    m = sp.csr_matrix(np.array([[0.5, 0.0], [0.0, 2.0]]))
    with pytest.raises(EncodingError, match="non-integer.*never truncates"):
        run_cssc(m, np.ones(2, dtype=np.int64), backend="sim")
    with pytest.raises(EncodingError, match="non-integer"):
        run_cssc(sp.csr_matrix(np.eye(2, dtype=np.int64)), np.array([0.5, 1.0]), backend="sim")


def test_integer_overflow_of_t():
    """The vector's bound is public (rows of L = 3 non-zeros: 22, as 3 * 22^3 <= 32768), or agreed; A refuses
    a matrix that could overflow with a vector within it. (It was the largest vector this matrix allows,
    109 = 32768 // 300, which told Client B the matrix's largest row sum.)"""
    m = sp.csr_matrix(np.full((3, 3), 20000, dtype=np.int64))
    with pytest.raises(EncodingError, match="t=65537"):
        run_cssc(m, np.ones(3, dtype=np.int64), backend="sim")
    m = sp.csr_matrix(np.full((3, 3), 100, dtype=np.int64))
    np.testing.assert_array_equal(run_cssc(m, np.full(3, 22), backend="sim").y, np.full(3, 6600))
    with pytest.raises(EncodingError, match=r"exceeds the public bound 22"):
        run_cssc(m, np.full(3, 23), backend="sim")
    agreed = FixedPoint(vector_bound=109)  # 300 |v| <= 32768: |v| <= 109
    np.testing.assert_array_equal(run_cssc(m, np.full(3, 109), encoding=agreed, backend="sim").y, np.full(3, 32700))
    with pytest.raises(EncodingError, match=r"300 \* 110 = 33000 exceeds 32768"):
        run_cssc(m, np.ones(3, dtype=np.int64), encoding=FixedPoint(vector_bound=110), backend="sim")


def test_ckks_pipeline_on_sim():
    rng = np.random.default_rng(9)
    m = sp.random(300, 200, density=0.05, format="csr", random_state=9, data_rvs=lambda n: rng.uniform(-1, 1, n))
    v = rng.uniform(-1, 1, 200)
    res = run_cssc(m, v, params="ckks-8192-small", backend="sim")
    np.testing.assert_allclose(res.y, m @ v, atol=1e-9)
    assert res.cloud_ops["depth"] == 2
    with pytest.raises(ValueError, match="layout 'both'"):
        run_cssc(m, v, params="ckks-8192-small", layout="both", backend="sim")
    with pytest.raises(ValueError, match="CKKS encodes real values directly"):
        run_cssc(m, v, params="ckks-8192-small", encoding=FixedPoint(4, 4), backend="sim")
    with pytest.raises(EncodingError, match="CKKS"):
        run_cssc(m * 1e6, v, params="ckks-8192-small", backend="sim")


# ------------------------------------------------------------------ bad input
def test_bad_input_is_named():
    m = int_matrix(10, 8, 0.3, seed=10)
    with pytest.raises(ValueError, match="dimension mismatch: the matrix has 8 columns but the vector has 7"):
        run_cssc(m, np.ones(7, dtype=np.int64), backend="sim")
    with pytest.raises(ValueError, match="1-D"):
        run_cssc(m, np.ones((8, 1), dtype=np.int64), backend="sim")
    with pytest.raises(EncodingError, match="NaN/inf"):
        run_cssc(m, np.array([1, 2, np.nan, 0, 0, 0, 0, 0]), params="ckks-8192-small", backend="sim")
    with pytest.raises(EncodingError, match="NaN/inf"):
        run_cssc(sp.csr_matrix(np.array([[np.inf, 1.0]])), np.ones(2), params="ckks-8192-small", backend="sim")
    with pytest.raises(ValueError, match="empty"):
        run_cssc(sp.csr_matrix((0, 0)), np.ones(0, dtype=np.int64), backend="sim")
