"""The encrypted comparison: Chebyshev coefficients, Paterson-Stockmeyer depth and accuracy, f4, Algorithm 2.

Tolerances: on ``sim`` (exact float64) 1e-12; on OpenFHE, Pyfhel, TenSEAL and rns 1e-4 (scale 2^40,
N = 4096; measured at degree 13 / f4 / kappa = 8: OpenFHE <= 2e-6, SEAL <= 1.6e-5).
"""
import numpy as np
import pytest
from numpy.polynomial import chebyshev as C

from hepkg import he
from hepkg.facesearch import chebyshev as ch

AVAILABLE = he.availability()
OPENFHE = AVAILABLE["openfhe"]
needs_openfhe = pytest.mark.skipif(not OPENFHE, reason="needs openfhe")
DEEP = "toy-ckks-4096-d11"  # the face-search depth (11 >= kappa = 10) on an insecure 4096 ring: tests only
#: OpenFHE's EvalChebyshevSeries depth per degree on [-1, 1] (its documented table, minus the level it
#: counts for the affine map of a general interval).
OPENFHE_DEPTH = {5: 3, 13: 4, 27: 5, 59: 6, 119: 7}
TOL = {"sim": 1e-12, "openfhe": 1e-4, "pyfhel": 1e-4, "tenseal": 1e-4, "rns": 1e-4}
BACKENDS = [b for b in ("sim", "openfhe", "pyfhel", "tenseal", "rns") if AVAILABLE[b]]
X = np.linspace(-1, 1, 2048)
STEP = lambda v: 1.0 if v >= ch.DELTA else 0.0  # noqa: E731


@pytest.fixture(scope="module")
def contexts():
    made = {}

    def get(backend):
        if backend not in made:
            made[backend] = he.context(backend, DEEP, insecure=True)
        return made[backend]
    yield get
    for ctx in made.values():
        ctx.close()


def error(ctx, ct, want) -> float:
    return float(np.abs(ctx.decrypt(ct, len(want)) - want).max())


def test_coefficients_interpolate_the_step():
    for degree in (*ch.DEGREE_FOR_KAPPA.values(), 119):
        c = ch.step_coefficients(degree)
        nodes = np.cos(np.pi * (np.arange(degree + 1) + 0.5) / (degree + 1))
        assert np.allclose(ch.chebyshev_numpy(c, nodes), nodes >= ch.DELTA)  # exact at the nodes
        assert np.allclose(ch.sign_coefficients(degree), 2 * c - np.eye(degree + 1)[0])
    c = ch.step_coefficients(13, a=0.0, b=2.0)
    nodes = np.cos(np.pi * (np.arange(14) + 0.5) / 14) + 1
    assert np.allclose(ch.chebyshev_numpy(c, nodes, 0.0, 2.0), nodes >= ch.DELTA)
    with pytest.raises(ValueError, match="degree"):
        ch.step_coefficients(0)


@needs_openfhe
def test_coefficients_are_openfhes_with_c0_halved():
    import openfhe
    for degree, (a, b) in [(5, (-1, 1)), (13, (-1, 1)), (27, (-1, 1)), (59, (-1, 1)), (13, (0, 2))]:
        ours = ch.step_coefficients(degree, a=a, b=b)
        theirs = np.array(openfhe.EvalChebyshevCoefficients(STEP, a, b, degree))
        assert np.allclose(theirs[1:], ours[1:], atol=1e-12) and np.isclose(theirs[0], 2 * ours[0])


def test_ps_parameters_and_plan():
    assert ch.ps_parameters(13) == (2, 4)  # the paper's example; (1, 5) ties, the larger d1 wins
    assert [ch.ps_parameters(d) for d in (5, 27, 59)] == [(3, 2), (2, 5), (2, 6)]
    assert [ch.baby_size(ch.step_coefficients(d)) for d in (5, 13, 27, 59)] == [2, 4, 4, 8]
    for degree, depth in OPENFHE_DEPTH.items():
        assert ch.series_depth(ch.step_coefficients(degree)) == depth
        assert ch.series_depth(ch.sign_coefficients(degree)) == depth
    rng = np.random.default_rng(1)
    for degree in range(3, 120):  # dense series: ceil(log2(degree + 1)), never above OpenFHE's table
        depth = ch.series_depth(rng.standard_normal(degree + 1))
        assert depth == int(np.ceil(np.log2(degree + 1)))
        assert depth <= next(d for top, d in OPENFHE_DEPTH.items() if degree <= top)


def test_numpy_twin_of_paterson_stockmeyer_is_the_series():
    rng = np.random.default_rng(2)
    for degree in (*OPENFHE_DEPTH, 1, 2, 8, 16, 64):
        for c in (ch.step_coefficients(degree), rng.standard_normal(degree + 1)):
            assert np.abs(ch.paterson_stockmeyer_numpy(c, X) - C.chebval(X, c)).max() < 1e-12 * np.abs(c).sum()
    c = ch.step_coefficients(27, a=0.0, b=2.0)
    assert np.allclose(ch.paterson_stockmeyer_numpy(c, X + 1, 0.0, 2.0), ch.chebyshev_numpy(c, X + 1, 0.0, 2.0))


def test_printed_algorithm2_is_not_the_series():
    c = ch.sign_coefficients(13)
    d1, d2 = ch.ps_parameters(13)
    assert C.chebval(0.5, c) + 1 == pytest.approx(1.7169, abs=1e-4)
    assert ch.printed_algorithm2_numpy(c, 0.5, d1, d2) == pytest.approx(0.9610, abs=1e-4)  # lines 33-40 literally
    assert ch.printed_algorithm2_numpy(c, 0.5, d1, d2, all_chunks=True) == pytest.approx(0.9458, abs=1e-4)
    series = ch.effective_threshold(lambda x: C.chebval(x, c) + 1, level=1.0)
    printed = ch.effective_threshold(lambda x: ch.printed_algorithm2_numpy(c, x, d1, d2), level=1.0)
    every = ch.effective_threshold(lambda x: ch.printed_algorithm2_numpy(c, x, d1, d2, all_chunks=True), level=1.0)
    assert series == pytest.approx(0.4354, abs=1e-4)  # the series itself: near delta = 0.44
    assert printed == pytest.approx(0.5136, abs=1e-4) and every == pytest.approx(0.5183, abs=1e-4)
    # every chunk, at x = 1 where T_d1^j = T_{j d1} = 1: the two agree there only
    assert ch.printed_algorithm2_numpy(c, 1.0, d1, d2, all_chunks=True) == pytest.approx(C.chebval(1.0, c) + 1)
    assert ch.effective_threshold(lambda x: ch.compare_numpy(x, 8, path="gpu")) == pytest.approx(series)
    assert np.isnan(ch.effective_threshold(lambda x: np.zeros_like(x)))


def test_comparison_separates_far_from_delta():
    x = np.concatenate([np.linspace(-1, ch.DELTA - 0.1, 500), np.linspace(ch.DELTA + 0.1, 1, 500)])
    for kappa in (8, 10):
        assert np.all(np.abs(ch.compare_numpy(x, kappa) - (x >= ch.DELTA)) < 0.1)
    assert np.allclose(ch.compare_numpy(x, 8), ch.f4_numpy(2 * ch.compare_numpy(x, 8, path="gpu") - 1, 0.5, 0.5))
    with pytest.raises(ValueError, match="kappa"):
        ch.compare_numpy(x, 6)
    with pytest.raises(ValueError, match="path"):
        ch.compare_numpy(x, 8, path="tpu")


def test_encrypted_series_on_sim_reaches_openfhes_depth(contexts):
    ctx = contexts("sim")
    for degree, depth in OPENFHE_DEPTH.items():
        c = ch.step_coefficients(degree)
        with ctx.counting() as ops:
            out = ch.evaluate_chebyshev(ctx, ctx.encrypt(X), c)
        assert out.level == out.depth == ops.depth == depth
        assert error(ctx, out, C.chebval(X, c)) < TOL["sim"]
    c = ch.step_coefficients(13, a=0.0, b=2.0)  # another interval: one level more, as OpenFHE
    out = ch.evaluate_chebyshev(ctx, ctx.encrypt(X + 1), c, 0.0, 2.0)
    assert out.level == 5 and error(ctx, out, ch.chebyshev_numpy(c, X + 1, 0.0, 2.0)) < TOL["sim"]
    with pytest.raises(ValueError, match="constant"):
        ch.evaluate_chebyshev(ctx, ctx.encrypt(X), [0.5])


@pytest.mark.parametrize("backend", BACKENDS)
def test_encrypted_series_f4_and_compare(backend, contexts):
    ctx, tol = contexts(backend), TOL[backend]
    c = ch.step_coefficients(13)
    out = ch.evaluate_chebyshev(ctx, ctx.encrypt(X), c)
    assert out.level == 4 and error(ctx, out, C.chebval(X, c)) < tol
    with ctx.counting() as ops:
        out = ch.f4(ctx, ctx.encrypt(X))
    assert out.level == ops.depth == 4 and error(ctx, out, ch.f4_numpy(X)) < tol
    for kappa in ((7, 8) if backend == "sim" else (8,)):
        for path, depth in (("cpu", kappa), ("gpu", kappa - 4)):
            with ctx.counting() as ops:
                out = ch.compare(ctx, ctx.encrypt(X), kappa, path=path)
            assert out.level == ops.depth == depth
            assert error(ctx, out, ch.compare_numpy(X, kappa, path=path)) < tol


@needs_openfhe
def test_native_openfhe_chebyshev_agrees(contexts):
    ctx = contexts("openfhe")
    ct = ctx.encrypt(X)
    c = ch.step_coefficients(13)
    native = ch.openfhe_native_chebyshev(ctx, ct, STEP, -1.0, 1.0, 13)
    ours = ch.evaluate_chebyshev(ctx, ct, c)
    assert native.level == native.depth == ours.level == 4
    assert error(ctx, native, C.chebval(X, c)) < TOL["openfhe"] and error(ctx, ours, C.chebval(X, c)) < TOL["openfhe"]
    with pytest.raises(ValueError, match="openfhe backend"):
        ch.openfhe_native_chebyshev(contexts("sim"), contexts("sim").encrypt(X), STEP, -1.0, 1.0, 5)
