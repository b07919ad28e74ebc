"""What each party learns: Client B gets the public key and the sparsity pattern, never a quantity of the
matrix's values; the vector's bound is public; Client A refuses a matrix that could overflow within it."""
import numpy as np
import pytest
import scipy.sparse as sp

import hepkg.he as he
from conftest import pinned
from hepkg.he.errors import EncodingError, MissingKeyError
from hepkg.spmv import (ClientA, ClientB, FixedPoint, capacity, messages, run_cssc, run_diagonal, run_rowwise,
                        vector_bound)

pytestmark = pytest.mark.filterwarnings("ignore::hepkg.he.errors.NoPrivacyWarning")  # sim on purpose

RUNS = {"cssc": run_cssc, "diagonal": run_diagonal, "rowwise": run_rowwise}
BFV = he.get_params("bfv-8192-spmv")


def pattern(seed=0, values=None):
    m = sp.random(90, 70, density=0.08, format="csr", random_state=seed, data_rvs=lambda n: np.ones(n, int))
    if values is not None:
        m.data = values(m.nnz)
    return m.astype(np.int64)


def test_a_to_b_message_depends_on_the_pattern_only():
    """Same pattern, other values (row sums 1x to 9x): byte-identical A -> B messages."""
    ones, heavy = pattern(), pattern(values=lambda n: np.random.default_rng(1).integers(-9, 10, n) | 1)
    assert abs(heavy).sum(axis=1).max() > 3 * ones.sum(axis=1).max()
    a, b = ClientA(ones, backend="sim"), ClientA(heavy, backend="sim")
    assert a.column_index_message() == b.column_index_message()
    meta, arrays, blobs = messages.unpack(a.column_index_message(), "spmv/column-index")
    assert set(meta) == {"plan", "drop_primes", "encoding"} and set(arrays) == {"CI", "CP"} and not blobs
    assert a.vector_bound == b.vector_bound


@pytest.mark.parametrize("longest_row", [1, 2, 3, 10, 31, 1000, 32768])
def test_default_bound_is_public_and_exact(longest_row):
    """The largest b with L b^3 <= t/2, from the parameters and L alone."""
    b = vector_bound(BFV, FixedPoint(), longest_row)
    assert b == max(k for k in range(1, 40) if longest_row * k ** 3 <= capacity(BFV))
    ckks = he.get_params("ckks-8192-small")
    assert vector_bound(ckks, FixedPoint(), longest_row) == pytest.approx((capacity(ckks) / longest_row) ** (1 / 3))
    assert vector_bound(BFV, FixedPoint(vector_scale=4, vector_bound=2.5), longest_row) == 10  # agreed, encoded
    with pytest.raises(EncodingError, match="no public vector bound"):
        vector_bound(BFV, FixedPoint(), capacity(BFV) + 1)


def test_client_b_derives_the_bound_from_what_it_receives():
    m = pattern()
    a = ClientA(m, backend="sim")
    b = ClientB(np.full(70, 3), a.encryption_context(), a.column_index_message(),
                **pinned(a.encryption_context(), "sim"))
    longest = int(m.getnnz(axis=1).max())
    assert b.vector_bound == a.vector_bound == vector_bound(BFV, FixedPoint(), longest)
    with pytest.raises(EncodingError, match=f"exceeds the public bound {a.vector_bound:g}"):
        ClientB(np.full(70, int(a.vector_bound) + 1), a.encryption_context(), a.column_index_message(),
                **pinned(a.encryption_context(), "sim"))


def test_the_papers_wide_matrices_keep_a_bound():
    """More columns than t/2 (cca has 49152): a bound from the shape would admit no vector, L's does."""
    m = sp.random(200, 49152, density=0.0002, format="csr", random_state=3, data_rvs=lambda n: np.ones(n, int))
    v = np.random.default_rng(3).integers(-3, 4, 49152)
    assert np.array_equal(run_cssc(m.astype(np.int64), v, backend="sim").y, m @ v)


@pytest.mark.parametrize("method", RUNS)
def test_client_a_refuses_a_matrix_that_could_overflow(method):
    """Rows of 2 non-zeros: public bound 25; rows summing to 1400 overflow with |v| = 25 though not with
    the vector sent. Every method refuses alike; an agreed smaller bound lets it through."""
    m = sp.csr_matrix(np.array([[700, 700, 0], [0, 1, 1], [1, 0, 0]], dtype=np.int64))
    v = np.array([1, 2, 3])
    with pytest.raises(EncodingError, match=r"1400 \* 25 = 35000 exceeds 32768"):
        RUNS[method](m, v)
    assert np.array_equal(RUNS[method](m, v, encoding=FixedPoint(vector_bound=23)).y, m @ v)
    with pytest.raises(EncodingError, match="exceeds the public bound 23"):
        RUNS[method](m, np.array([1, 24, 3]), encoding=FixedPoint(vector_bound=23))


def test_client_b_cannot_evaluate():
    """B's context (to_bytes(evaluation_keys=False)) encrypts, but holds no relinearization or rotation key."""
    a = ClientA(pattern(), backend="sim")
    b = ClientB(np.ones(70, dtype=np.int64), a.encryption_context(), a.column_index_message(),
                **pinned(a.encryption_context(), "sim"))
    ct = b.ctx.encrypt(np.arange(4))
    assert not b.ctx.has_secret and not b.ctx.keys.steps and len(a.encryption_context()) < len(a.public_context())
    with pytest.raises(MissingKeyError):
        b.ctx.mul(ct, ct)
    with pytest.raises(MissingKeyError):
        b.ctx.rotate(ct, 1)
