"""The encrypted comparison: Chebyshev coefficients, Paterson-Stockmeyer depth and accuracy, f4, Algorithm 2."""
import numpy as np
import pytest
from numpy.polynomial import chebyshev as C

from hepkg import he
from hepkg.facesearch import chebyshev as ch

OPENFHE = he.availability()["openfhe"]
DEEP = "toy-ckks-4096-d11"  # the face-search depth on an insecure 4096 ring: tests only
#: OpenFHE's EvalChebyshevSeries depth per degree (its documentation's table).
OPENFHE_DEPTH = {5: 3, 13: 4, 27: 5, 59: 6}
X = np.linspace(-1, 1, 2048)


def test_coefficients_interpolate_and_match_openfhe_convention():
    for degree in ch.DEGREE_FOR_KAPPA.values():
        c = ch.step_coefficients(degree)
        theta = np.pi * (np.arange(degree + 1) + 0.5) / (degree + 1)
        nodes = np.cos(theta)
        assert np.allclose(C.chebval(nodes, c), (nodes >= ch.DELTA).astype(float))  # exact at the nodes
    if OPENFHE:
        import openfhe
        ours = ch.step_coefficients(13)
        theirs = np.array(openfhe.EvalChebyshevCoefficients(lambda x: 1.0 if x >= ch.DELTA else 0.0, -1, 1, 13))
        assert np.allclose(theirs[1:], ours[1:]) and np.isclose(theirs[0], 2 * ours[0])  # OpenFHE doubles c_0


def test_ps_parameters_and_depths():
    assert ch.ps_parameters(13) == (2, 4)  # the paper's example
    for degree, depth in OPENFHE_DEPTH.items():
        assert ch.series_depth(ch.step_coefficients(degree)) == depth
        assert ch.series_depth(ch.sign_coefficients(degree)) == depth


def test_printed_algorithm2_is_not_the_series():
    c = ch.sign_coefficients(13)
    assert C.chebval(0.5, c) + 1 == pytest.approx(1.717, abs=1e-3)
    assert ch.printed_algorithm2_numpy(c, 0.5, 2, 4, all_chunks=True) == pytest.approx(0.946, abs=1e-3)
    assert ch.printed_algorithm2_numpy(c, 0.5, 2, 4) == pytest.approx(0.961, abs=1e-3)
    series = ch.effective_threshold(lambda x: C.chebval(x, c) + 1, level=1.0)
    printed = ch.effective_threshold(lambda x: ch.printed_algorithm2_numpy(c, x, 2, 4, all_chunks=True), level=1.0)
    assert abs(series - ch.DELTA) < 0.01 and printed == pytest.approx(0.518, abs=2e-3)


@pytest.mark.parametrize("backend", ["sim"] + (["openfhe"] if OPENFHE else []))
def test_encrypted_series_depth_and_error(backend):
    ctx = he.context(backend, DEEP, rotations=[1], policy="exact", insecure=True)
    tol = 1e-12 if backend == "sim" else 1e-4
    for degree, depth in OPENFHE_DEPTH.items():
        if backend != "sim" and degree not in (13, 59):
            continue
        c = ch.step_coefficients(degree)
        out = ch.evaluate_chebyshev(ctx, ctx.encrypt(X), c)
        assert out.level == depth
        assert np.abs(ctx.decrypt(out).real - C.chebval(X, c)).max() < tol
    for kappa in (7, 8):
        for path, depth in (("cpu", kappa), ("gpu", kappa - 4)):
            out = ch.compare(ctx, ctx.encrypt(X), kappa, path=path)
            assert out.level == depth
            assert np.abs(ctx.decrypt(out).real - ch.compare_numpy(X, kappa, path=path)).max() < tol
    y = ctx.encrypt(X)
    out = ch.f4(ctx, y)
    assert out.level == 4 and np.abs(ctx.decrypt(out).real - ch.f4_numpy(X)).max() < tol


def test_comparison_separates_far_from_delta():
    x = np.concatenate([np.linspace(-1, ch.DELTA - 0.1, 500), np.linspace(ch.DELTA + 0.1, 1, 500)])
    for kappa in (8, 10):
        v = ch.compare_numpy(x, kappa)
        assert np.all(np.abs(v - (x >= ch.DELTA)) < 0.1)
    with pytest.raises(ValueError, match="kappa"):
        ch.compare_numpy(x, 6)
    with pytest.raises(ValueError, match="path"):
        ch.compare_numpy(x, 8, path="tpu")


@pytest.mark.skipif(not OPENFHE, reason="needs openfhe")
def test_native_openfhe_chebyshev_agrees():
    ctx = he.context("openfhe", DEEP, rotations=[1], policy="exact", insecure=True)
    ct = ctx.encrypt(X)
    native = ch.openfhe_native_chebyshev(ctx, ct, lambda v: 1.0 if v >= ch.DELTA else 0.0, -1.0, 1.0, 13)
    ours = ch.evaluate_chebyshev(ctx, ct, ch.step_coefficients(13))
    want = C.chebval(X, ch.step_coefficients(13))
    assert native.level == ours.level == 4
    assert np.abs(ctx.decrypt(native).real - want).max() < 1e-4 and np.abs(ctx.decrypt(ours).real - want).max() < 1e-4
    with pytest.raises(ValueError, match="openfhe backend"):
        ch.openfhe_native_chebyshev(he.context("sim", DEEP, insecure=True), ct, abs, -1, 1, 5)
