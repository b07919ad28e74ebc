"""baseline='authors': the methods as the authors' code evaluates them, exact and with closed-form counts."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import hepkg.gemm as gm
import hepkg.he as he

KEYS = ("mul_ct", "mul_pt", "rotate", "add")
AUTHORS = ("hegmm-en", "hegmm-ext", "e2dm-s", "e2dm-r", "huang")
#: 2048 slots per row (the authors' layouts need max(l, n) x R slots); depth 4 as bfv-8192-default
SMALL = he.ParamSet(name="test-gemm-authors", scheme="bfv", n=4096, plain_modulus=65537,
                    qi_bits=(40, 40, 40, 40, 40), depth=4, source="hepkg gemm tests")


def run(method, A, B, params=SMALL, preprocess="client", backend="sim", policy="exact"):
    (m, l), n = A.shape, B.shape[1]
    ctx = gm.gemm_context(method, m, l, n, backend=backend, params=params, policy=policy, preprocess=preprocess,
                          baseline="authors", insecure=True)
    return gm.matmul(ctx, A, B, method, preprocess=preprocess, baseline="authors")


def check(method, m, l, n, preprocess, params=SMALL, **kw):
    params = he.get_params(params)
    A, B = gm.random_operands(m, l, n, params.plain_modulus, seed=m * l + n, max_abs=8)
    res = run(method, A, B, params, preprocess, **kw)
    assert np.array_equal(res.C, A @ B), (method, m, l, n, preprocess)
    assert {k: res.ops[k] for k in KEYS} == gm.expected_counts(method, m, l, n, preprocess, params.n // 2,
                                                               baseline="authors"), (method, m, l, n, preprocess)
    return res


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 20), l=st.integers(1, 20), n=st.integers(1, 20))
def test_authors_methods_are_exact_with_their_closed_form_counts(m, l, n):
    for method, pre in itertools.product(AUTHORS, ("client", "cloud")):
        if not gm.fits(method, m, l, n, 2048, baseline="authors"):
            with pytest.raises((gm.NotApplicable, gm.ShapeTooLarge)):
                gm.make_plan(method, m, l, n, 2048, baseline="authors")
            continue
        check(method, m, l, n, pre)


@pytest.mark.parametrize("shape", [(16, 64, 64), (64, 16, 64), (64, 64, 16), (30, 50, 20)])
def test_table7_shapes_on_sim_at_n8192(shape):
    for method in AUTHORS:
        if gm.fits(method, *shape, 4096, baseline="authors"):
            check(method, *shape, "client", params="bfv-8192-t20")


def test_e2dm_r_runs_where_the_authors_script_runs_it():
    """r = m, d = m ceil(max(l, n)/m), only when m <= l and d <= 64; no transposition."""
    plan = gm.make_plan("e2dm-r", 30, 50, 20, 4096, baseline="authors")
    assert (plan.info["r"], plan.info["d"], plan.transposed) == (30, 60, False)
    assert gm.make_plan("e2dm-r", 64, 64, 16, 4096, baseline="authors").info["r"] == 64   # hepkg: r = 16
    assert gm.make_plan("e2dm-r", 64, 64, 16, 4096).info["r"] == 16
    for shape in [(64, 16, 64), (40, 70, 70), (20, 16, 60)]:
        with pytest.raises(gm.NotApplicable, match="m <= l"):
            gm.make_plan("e2dm-r", *shape, 16384, baseline="authors")


def test_authors_evaluation_rules():
    """No BSGS, psi^k two masked rotations (one when d^2 fills the row), one relinearization, linear block sums."""
    res = check("e2dm-s", 20, 20, 20, "client")
    assert res.ops["rotate"] == 4 * 19 and res.ops["mul_pt"] == 4 * 19 and res.ops["relinearize"] == 1
    assert check("e2dm-s", 64, 64, 64, "client", params="bfv-8192-t20").ops["rotate"] == 3 * 63
    en = check("hegmm-en", 4, 16, 16, "client")                      # t = 4 copies of A: 3 blocks added
    assert en.ops["relinearize"] == 1 and en.ops["mul_ct"] == 4
    assert en.ops["rotate"] == 3 * (2 + 2) + 2 * 3                    # eps + omega per k >= 1, block sums
    hepkg_sig = gm.expected_counts("e2dm-s", 32, 32, 32, "cloud", 2048)["rotate"]
    assert gm.expected_counts("e2dm-s", 32, 32, 32, "cloud", 2048, baseline="authors")["rotate"] > hepkg_sig


def test_methods_the_authors_do_not_have_are_refused():
    for method in ("hegmm", "hegmm-en-bsgs"):
        with pytest.raises(ValueError, match="authors' code has no"):
            gm.make_plan(method, 4, 4, 4, 2048, baseline="authors")
    with pytest.raises(ValueError, match="baseline must be one of"):
        gm.make_plan("hegmm-en", 4, 4, 4, 2048, baseline="theirs")


def test_authors_parameter_set_is_what_pyfhel_builds():
    """Pyfhel's contextGen(t=65537, t_bits=20) builds t = 1032193 (N = 8192) and 786433 (N = 2^15)."""
    assert he.get_params("bfv-8192-t20").plain_modulus == 1032193 == 63 * 16384 + 1
    assert he.get_params("bfv-32768-t20").plain_modulus == 786433 == 12 * 65536 + 1
    pytest.importorskip("Pyfhel")
    from Pyfhel import Pyfhel

    for n, name in ((8192, "bfv-8192-t20"), (32768, "bfv-32768-t20")):
        HE = Pyfhel()
        HE.contextGen(scheme="bfv", n=n, t=65537, t_bits=20)
        assert HE.t == he.get_params(name).plain_modulus


def test_authors_baseline_on_pyfhel():
    pytest.importorskip("Pyfhel")
    for method in ("hegmm-en", "e2dm-r", "huang"):
        res = check(method, 8, 16, 12, "client", params="bfv-8192-t20", backend="pyfhel", policy="pow2")
        assert res.backend == "pyfhel" and res.baseline == "authors"


def test_rotation_counts_are_those_of_the_authors_code():
    """Counted by instrumenting EchizenG/HEGMM; their Huang also rotates omega^0 (by 0 and by -R with a zero mask)."""
    from hepkg.reference import HEGMM_AUTHORS_CODE_ROTATIONS

    for (method, shape), rotations in HEGMM_AUTHORS_CODE_ROTATIONS.items():
        ours = gm.expected_counts(method, *shape, "client", 4096, baseline="authors")["rotate"]
        assert ours + (method == "huang") == rotations, (method, shape)
