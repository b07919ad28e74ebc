"""spmv and gemm: inputs beyond the plaintext range raise (no wrap-around), server-side parties
refuse secret contexts, and every result records what ran."""
import numpy as np
import pytest
import scipy.sparse as sp

import hepkg.gemm as gm
import hepkg.he as he
from hepkg.he.errors import EncodingError, SecretContextRefused
from hepkg.spmv import ClientA, ClientB, Cloud, FixedPoint, run_cssc, run_diagonal, run_rowwise

BACKENDS = [b for b in ("sim", "pyfhel", "openfhe") if he.availability()[b]]
#: depth 2, t = 65537: CSSC and both baselines, accepted at 128 bits by every backend
SPMV_PARAMS = "bfv-8192-d2"
#: depth 3 for HEGMM-En (OpenFHE refuses N = 8192 with depth 4 at 128 bits)
GEMM_PARAMS = he.ParamSet(name="test-gemm-inputs", scheme="bfv", n=4096, plain_modulus=65537, qi_bits=(60,) * 5,
                          depth=3, source="hepkg tests (HEStd_NotSet)")
RUNS = {"cssc": run_cssc, "diagonal": run_diagonal, "rowwise": run_rowwise}
M = sp.csr_matrix(np.array([[1, 0, 2], [0, 3, 0], [4, 0, -5]]))
T_RANGE = r"outside the range \[-32768, 32768\] that plaintext modulus t=65537 holds"
BAD_VECTORS = {  # each value alone is far outside t; the first wrapped to -5 in int64
    "uint64 near 2^64": (np.array([2 ** 64 - 5, 1, 1], dtype=np.uint64), r"\[1, 18446744073709551611\]"),
    "uint64 2^63": (np.array([2 ** 63, 1, 1], dtype=np.uint64), r"\[1, 9223372036854775808\]"),
    "int64 min": (np.array([-2 ** 63, 1, 1], dtype=np.int64), r"\[-9223372036854775808, 1\]"),
    "float beyond int64": (np.array([1e300, 1.0, 1.0]), r"\[1.0, 1e\+300\]"),
}
BAD_OPERANDS = {
    "uint64 2^64-1": (np.array([[2 ** 64 - 1, 1], [1, 1]], dtype=np.uint64), r"\[1, 18446744073709551615\]"),
    "uint64 2^63": (np.array([[2 ** 63, 1], [1, 1]], dtype=np.uint64), r"\[1, 9223372036854775808\]"),
    "int64 min": (np.array([[-2 ** 63, 1], [1, 1]], dtype=np.int64), r"\[-9223372036854775808, 1\]"),
    "object 2^80": (np.array([[2 ** 80, 1], [1, 1]], dtype=object), r"\[1, 1208925819614629174706176\]"),
    "object -2^80": (np.array([[-2 ** 80, 1], [1, 1]], dtype=object), r"\[-1208925819614629174706176, 1\]"),
    "float beyond int64": (np.array([[1e30, 1.0], [1.0, 1.0]]), r"\[1, 1000000000000000019884624838656\]"),
}


@pytest.fixture(scope="module", params=BACKENDS)
def gemm_ctx(request):
    return gm.gemm_context("hegmm-en", 2, 2, 2, backend=request.param, params=GEMM_PARAMS, insecure=True)


# ------------------------------------------------------------------ spmv: exact range checks
@pytest.mark.parametrize("method", RUNS)
@pytest.mark.parametrize("case", BAD_VECTORS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_spmv_vector_beyond_t_raises(backend, case, method):
    vector, values = BAD_VECTORS[case]
    with pytest.raises(EncodingError, match=rf"vector has values in {values}, {T_RANGE}"):
        RUNS[method](M, vector, backend=backend, params=SPMV_PARAMS)


@pytest.mark.parametrize("value", [2 ** 64 - 1, -2 ** 63])
@pytest.mark.parametrize("backend", BACKENDS)
def test_spmv_matrix_entry_beyond_t_raises(backend, value):
    m = sp.csr_matrix(np.diag(np.array([value, 1, 1], dtype=np.uint64 if value > 0 else np.int64)))
    with pytest.raises(EncodingError, match=rf"matrix has values in \[{min(value, 1)}, {max(value, 1)}\], {T_RANGE}"):
        run_cssc(m, np.ones(3, dtype=np.int64), backend=backend, params=SPMV_PARAMS)


def test_spmv_fixed_point_checks_scaled_values_exactly():
    huge = np.array([2 ** 64 - 5, 1, 1], dtype=np.uint64)
    with pytest.raises(EncodingError, match=rf"vector \(times scale 2\) has values in \[2.0, 3.68.*\], {T_RANGE}"):
        run_cssc(M, huge, encoding=FixedPoint(vector_scale=2), backend="sim")
    with pytest.raises(EncodingError, match=rf"vector \(times scale 4\) has values in \[4.0, inf\], {T_RANGE}"):
        run_cssc(M, np.array([1e308, 1.0, 1.0]), encoding=FixedPoint(vector_scale=4), backend="sim")
    with pytest.raises(EncodingError, match=r"matrix \(times scale 1e\+06\) has values in \[-5000000.0, 4000000.0\]"):
        ClientA(M, encoding=FixedPoint(matrix_scale=1e6), backend="sim")


def test_spmv_ckks_range_is_checked_before_the_cast():
    with pytest.raises(EncodingError, match=r"\[1, 18446744073709551611\], outside the range \[-524288, 524288\] "
                                            r"that CKKS ckks-8192-small"):
        run_cssc(M, np.array([2 ** 64 - 5, 1, 1], dtype=np.uint64), params="ckks-8192-small", backend="sim")


def test_spmv_duplicate_entries_sum_exactly():
    dup = sp.coo_matrix((np.array([200, 100, 7], dtype=np.uint8), ([0, 0, 1], [0, 0, 1])), shape=(2, 2))
    np.testing.assert_array_equal(run_cssc(dup, np.array([1, 2]), backend="sim").y, [300, 14])  # uint8 summed to 44
    big = sp.coo_matrix((np.full(2, 2 ** 63 - 1), ([0, 0], [0, 0])), shape=(2, 2))
    with pytest.raises(EncodingError, match="duplicate entries.*leave int64"):
        run_cssc(big, np.ones(2, dtype=np.int64), backend="sim")


# ------------------------------------------------------------------ gemm: exact range checks
@pytest.mark.parametrize("case", BAD_OPERANDS)
def test_gemm_operand_beyond_t_raises(gemm_ctx, case):
    bad, values = BAD_OPERANDS[case]
    match = rf"B has entries in {values}, outside \[-32768, 32768\] .*t=65537"
    with pytest.raises(gm.PlaintextRangeError, match=match):
        gm.matmul(gemm_ctx, np.ones((2, 2), int), bad)


def test_gemm_client_checks_what_it_encrypts(gemm_ctx):
    plan = gm.make_plan("hegmm-en", 2, 2, 2, gemm_ctx.period)
    bad, values = BAD_OPERANDS["uint64 2^64-1"]
    with pytest.raises(gm.PlaintextRangeError, match=rf"A has entries in {values}"):
        gm.Client(gemm_ctx).encrypt(plan, bad, np.ones((2, 2), int))  # was cast to int64: -1
    with pytest.raises(gm.PlaintextRangeError, match="non-integer"):
        gm.Client(gemm_ctx).encrypt(plan, np.full((2, 2), 0.5), np.ones((2, 2), int))  # was truncated to 0


# ------------------------------------------------------------------ server-side parties refuse secret contexts
def test_gemm_cloud_refuses_a_secret_context(gemm_ctx):
    with pytest.raises(SecretContextRefused, match="the gemm cloud"):
        gm.Cloud(gemm_ctx)
    A = np.arange(4).reshape(2, 2)
    with pytest.raises(SecretContextRefused, match="the gemm cloud"):
        gm.matmul((gemm_ctx, gemm_ctx), A, A)
    assert np.array_equal(gm.matmul((gemm_ctx, gemm_ctx.public()), A, A).C, A @ A)


@pytest.fixture
def leaky_load_context(monkeypatch):
    """he.load_context handing out the key holder's context (a regression the parties must catch)."""
    secret = he.context("sim", SPMV_PARAMS)
    monkeypatch.setattr(he, "load_context", lambda data, **kw: secret)


def test_spmv_parties_from_public_bytes_hold_no_secret():
    a = ClientA(M, params=SPMV_PARAMS, backend="sim")
    pin = he.fingerprint(a.public_context())
    assert not Cloud(a.public_context(), fingerprint=pin, backend="sim").ctx.has_secret
    assert not ClientB(np.ones(3, dtype=np.int64), a.public_context(), a.column_index_message(), fingerprint=pin,
                       backend="sim").ctx.has_secret


def test_spmv_cloud_and_client_b_refuse_a_secret_context(leaky_load_context):
    a = ClientA(M, params=SPMV_PARAMS, backend="sim")
    with pytest.raises(SecretContextRefused, match="the spmv cloud"):
        Cloud(a.public_context())
    with pytest.raises(SecretContextRefused, match="Client B"):
        ClientB(np.ones(3, dtype=np.int64), a.public_context(), a.column_index_message())


@pytest.mark.parametrize("method,role", [("diagonal", "the diagonal method's cloud"),
                                         ("rowwise", "the row-wise server")])
def test_spmv_baseline_servers_refuse_a_secret_context(leaky_load_context, method, role):
    with pytest.raises(SecretContextRefused, match=role):
        RUNS[method](M, np.ones(3, dtype=np.int64), params=SPMV_PARAMS)


# ------------------------------------------------------------------ results record what ran
@pytest.mark.parametrize("method", RUNS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_spmv_result_records_backend_and_params(backend, method):
    res = RUNS[method](M, np.array([1, 2, 3]), backend=backend, params=SPMV_PARAMS)
    np.testing.assert_array_equal(res.y, M @ np.array([1, 2, 3]))
    assert (res.backend, res.params, res.insecure) == (backend, SPMV_PARAMS, backend == "sim")  # sim encrypts nothing
    res = RUNS[method](M, np.array([1, 2, 3]), backend=backend, params=SPMV_PARAMS, insecure=True)
    assert (res.backend, res.params, res.insecure) == (backend, SPMV_PARAMS, True)


def test_gemm_result_records_backend_and_params(gemm_ctx):
    res = gm.matmul(gemm_ctx, np.ones((2, 2), int), np.ones((2, 2), int))
    assert (res.backend, res.params, res.insecure) == (gemm_ctx.backend, "test-gemm-inputs", True)
