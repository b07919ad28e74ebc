"""gemm transforms: Eqs. 1-5 against numpy, their U matrices, and Theorems 3.1-3.4."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import hepkg.gemm as gm

dims = st.integers(1, 12)
GRID = list(itertools.product(range(1, 10), repeat=3))


@settings(max_examples=40, deadline=None)
@given(m=dims, l=dims, n=dims, seed=st.integers(0, 2 ** 16))
def test_elementwise_product_is_the_matrix_product(m, l, n, seed):
    rng = np.random.default_rng(seed)
    A, B = rng.integers(-9, 10, (m, l)), rng.integers(-9, 10, (l, n))
    assert np.array_equal(gm.elementwise_matmul(A, B), A @ B)


def test_transforms_match_their_definitions():
    A = np.arange(6).reshape(3, 2)           # Fig. 1c: A 3x2, C 3x5
    assert np.array_equal(gm.epsilon(A, 1, 3, 5), A[:, [1, 0, 1, 0, 1]])
    B = np.arange(10).reshape(2, 5)           # Fig. 1d: B 2x5
    assert np.array_equal(gm.omega(B, 1, 3, 5), B[[1, 0, 1], :])
    S = np.arange(12).reshape(3, 4)
    assert np.array_equal(gm.sigma(S)[2], np.roll(S[2], -2))   # row i rotated left by i
    assert np.array_equal(gm.tau(S)[:, 3], np.roll(S[:, 3], -3))  # column j rotated up by j


@pytest.mark.parametrize("order", ["F", "C"])
def test_U_matrices_apply_the_transforms(order):
    rng = np.random.default_rng(0)
    for m, l, n in [(5, 3, 4), (2, 5, 7), (4, 4, 1), (1, 3, 2)]:
        A, B = rng.integers(-9, 10, (m, l)), rng.integers(-9, 10, (l, n))
        flat = lambda X: X.ravel(order=order)  # noqa: E731
        assert np.array_equal(gm.transform_matrix("sigma", m, l, n, order=order) @ flat(A), flat(gm.sigma(A)))
        assert np.array_equal(gm.transform_matrix("tau", m, l, n, order=order) @ flat(B), flat(gm.tau(B)))
        for k in range(l):
            U = gm.transform_matrix("epsilon", m, l, n, k, order)
            assert U.shape == (m * n, m * l) and np.array_equal(U @ flat(A), flat(gm.epsilon(A, k, m, n)))
            U = gm.transform_matrix("omega", m, l, n, k, order)
            assert U.shape == (m * n, l * n) and np.array_equal(U @ flat(B), flat(gm.omega(B, k, m, n)))


def test_fig3_diagonals():
    """Fig. 3a: epsilon^1 of a 5x3 matrix (column-major) has diagonals u_5 and u_-10."""
    d = gm.transform_diagonals("epsilon", 5, 3, 3, k=1)
    assert sorted(d) == [-10, 5]
    assert d[5][:15].sum() == 10 and d[-10][:15].sum() == 5


@pytest.mark.parametrize("order", ["F", "C"])
def test_theorems_3_1_and_3_2_are_exact(order):
    for m, l, n in GRID:
        assert gm.diagonal_counts("sigma", m, l, n, order) == {"exact": 2 * min(m, l) - 1, "theorem": 2 * min(m, l) - 1}
        assert gm.diagonal_counts("tau", m, l, n, order) == {"exact": 2 * min(n, l) - 1, "theorem": 2 * min(n, l) - 1}


def test_theorem_3_3_row_major_and_3_4_column_major_bounds_hold():
    for m, l, n in GRID:
        for name, order in (("epsilon", "C"), ("omega", "F")):
            c = gm.diagonal_counts(name, m, l, n, order)
            assert c["exact"] <= c["theorem"], (name, order, m, l, n, c)


def test_theorem_3_3_column_major_and_3_4_row_major_are_one_short_exactly_where_documented():
    """Exact count floor((n-1+k)/l) + 1 (resp. m): above the theorem iff n mod l >= 2 and k >= l + 1 - n mod l."""
    short = 0
    for m, l, n in GRID:
        for k in range(l):
            for name, order, x in (("epsilon", "F", n), ("omega", "C", m)):
                exact = len(gm.transform_diagonals(name, m, l, n, k, order))
                assert exact == (x - 1 + k) // l + 1 == gm.exact_count(name, m, l, n, order, k)
                bound = gm.theorem_count(name, m, l, n, order)
                exceeds = x % l >= 2 and k >= l + 1 - x % l
                assert (exact > bound) == exceeds and exact <= bound + 1, (name, order, m, l, n, k)
                short += exceeds
    assert short > 0
    assert gm.diagonal_counts("epsilon", 1, 3, 2) == {"exact": 2, "theorem": 1}  # the docstring's example


def test_special_case_two_diagonals_when_n_equals_l_or_m_equals_l():
    for m, l in itertools.product(range(1, 8), repeat=2):
        for order in "FC":
            assert gm.diagonal_counts("epsilon", m, l, l, order)["exact"] <= 2
            assert gm.diagonal_counts("omega", l, l, m, order)["exact"] <= 2


def test_unknown_transform_or_order():
    with pytest.raises(ValueError, match="unknown transform"):
        gm.transform_matrix("rho", 2, 2, 2)
    with pytest.raises(ValueError, match="order"):
        gm.transform_matrix("sigma", 2, 2, 2, order="X")
