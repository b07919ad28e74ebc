"""gemm bad inputs: every error names the limit it hit."""
import warnings

import numpy as np
import pytest

import hepkg.gemm as gm
import hepkg.he as he
from hepkg.he.errors import SchemeError

pytestmark = pytest.mark.filterwarnings("ignore::hepkg.he.errors.NoPrivacyWarning")  # sim on purpose

T = 65537


@pytest.fixture(scope="module")
def ctx():
    return he.context("sim", "bfv-8192-default", rotations="all")


def test_mismatched_inner_dimensions(ctx):
    with pytest.raises(gm.ShapeMismatch, match="A is 2 x 3, B is 4 x 2"):
        gm.matmul(ctx, np.ones((2, 3), int), np.ones((4, 2), int))
    with pytest.raises(gm.ShapeMismatch, match="2-D"):
        gm.matmul(ctx, np.ones(3, int), np.ones((3, 2), int))
    with pytest.raises(gm.ShapeMismatch, match="non-empty"):
        gm.matmul(ctx, np.ones((0, 3), int), np.ones((3, 2), int))


def test_entries_must_be_integers_that_fit_t(ctx):
    with pytest.raises(gm.PlaintextRangeError, match="non-integer"):
        gm.matmul(ctx, np.full((2, 2), 0.5), np.ones((2, 2), int))
    with pytest.raises(gm.PlaintextRangeError, match="t=65537"):
        gm.matmul(ctx, np.full((2, 2), T), np.ones((2, 2), int))
    with pytest.raises(gm.PlaintextRangeError, match="dtype"):
        gm.matmul(ctx, np.array([["a", "b"]]), np.ones((2, 2), int))
    res = gm.matmul(ctx, np.full((2, 2), 3.0), np.ones((2, 2), int))  # integral floats are integers
    assert np.array_equal(res.C, np.full((2, 2), 6))


def test_product_overflow_raises_or_warns(ctx):
    A, B = np.full((2, 4), 200), np.full((4, 3), 200)  # entries fit t, the sums 160000 do not
    with pytest.raises(gm.ProductOverflow, match="t/2 = 32768"):
        gm.matmul(ctx, A, B)
    with pytest.warns(gm.ProductOverflowWarning, match="mod t"):
        res = gm.matmul(ctx, A, B, on_overflow="warn")
    assert np.array_equal(res.C, gm.centered(A @ B, T)) and not np.array_equal(res.C, A @ B)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gm.ProductOverflowWarning)
        gm.matmul(ctx, A, B, on_overflow="ignore")
    with pytest.raises(ValueError, match="on_overflow"):
        gm.matmul(ctx, A, B, on_overflow="clip")


def test_shape_too_large_names_the_slots(ctx):
    A, B = np.ones((70, 70), int), np.ones((70, 2), int)
    with pytest.raises(gm.ShapeTooLarge, match="4096 slots.*blocking"):
        gm.matmul(ctx, A, B, "e2dm-s")
    with pytest.raises(gm.ShapeTooLarge, match="4096 slots"):
        gm.matmul(ctx, np.ones((70, 70), int), np.ones((70, 70), int), "hegmm")


def test_not_applicable_and_unknown_names(ctx):
    with pytest.raises(gm.NotApplicable):
        gm.matmul(ctx, np.ones((5, 2), int), np.ones((2, 5), int), "e2dm-r")
    with pytest.raises(ValueError, match="unknown method"):
        gm.make_plan("strassen", 2, 2, 2, 4096)
    with pytest.raises(ValueError, match="preprocess"):
        gm.make_plan("hegmm", 2, 2, 2, 4096, preprocess="server")
    with pytest.raises(ValueError, match="order"):
        gm.make_plan("hegmm", 2, 2, 2, 4096, order="K")


def test_ckks_and_public_contexts_are_refused():
    ckks = he.context("sim", "ckks-8192-small", rotations=[1])
    with pytest.raises(SchemeError, match="BFV"):
        gm.matmul(ckks, np.ones((2, 2), int), np.ones((2, 2), int))


def test_plan_for_another_ring_is_refused(ctx):
    plan = gm.make_plan("hegmm", 2, 2, 2, 512)
    with pytest.raises(ValueError, match="512-slot"):
        gm.Cloud(ctx.public()).multiply(plan, {})


def test_the_client_may_drop_primes_and_decryption_refuses_an_exhausted_budget():
    from hepkg.gemm.protocol import Client, Cloud

    pytest.importorskip("Pyfhel")
    A, B = np.arange(12).reshape(3, 4) % 5, np.arange(8).reshape(4, 2) % 3
    ctx = gm.gemm_context("hegmm-en", 3, 4, 2, params="bfv-8192-t20", preprocess="client")  # Pyfhel by default
    assert ctx.backend == "pyfhel"
    low = gm.matmul((Client(ctx, drop_primes=1), Cloud(ctx.public())), A, B, "hegmm-en", preprocess="client")
    top = gm.matmul((Client(ctx, drop_primes=0), Cloud(ctx.public())), A, B, "hegmm-en", preprocess="client")
    assert np.array_equal(low.C, A @ B) and low.upload_bytes < top.upload_bytes
    auto = gm.matmul(ctx, A, B, "hegmm-en", preprocess="client")  # the default drops what the noise allows: 1
    assert np.array_equal(auto.C, A @ B) and (auto.drop_primes, top.drop_primes) == (1, 0)
    assert auto.upload_bytes == low.upload_bytes
    with pytest.raises(he.NoiseBudgetExhausted):
        gm.matmul((Client(ctx, drop_primes=2), Cloud(ctx.public())), A, B, "hegmm-en", preprocess="client")
    with pytest.raises(ValueError, match="drop_primes"):
        Client(gm.gemm_context("hegmm-en", 3, 4, 2, backend="sim"), drop_primes=1)  # sim reports no noise budget
    with pytest.raises(ValueError, match="non-negative integer"):
        Client(ctx, drop_primes=-1)
