"""CSSC format (Algorithm 5), chunks (Algorithm 2, Sec. 4.7) and vector reorganization (Algorithm 3)."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from hepkg.he.errors import EncodingError
from hepkg.spmv import CSSC, chunk_column_index, chunk_layout, chunk_values, generate_chunks, reorg_vector

SETTINGS = settings(max_examples=25, deadline=None)


def random_matrix(rows, cols, density, seed, fmt="csr"):
    rng = np.random.default_rng(seed)
    return sp.random(rows, cols, density=density, format=fmt, random_state=seed,
                     data_rvs=lambda n: rng.integers(1, 10, n) * rng.choice([-1.0, 1.0], n))


def algorithm5_loop(csr):
    """Algorithm 5 as printed (loops), the reference for the vectorized conversion."""
    r = csr.shape[0]
    nnz_row = [csr.indptr[i + 1] - csr.indptr[i] for i in range(r)]
    rm = sorted(range(r), key=lambda i: -nnz_row[i])  # stable: ties keep their order
    va, ci, cp = [], [], []
    for j in range(max(nnz_row)):
        cp.append(len(va))
        for i in rm:
            if j < nnz_row[i]:
                va.append(csr.data[csr.indptr[i] + j])
                ci.append(csr.indices[csr.indptr[i] + j])
    cp.append(len(va))
    return np.array(va), np.array(ci), np.array(rm), np.array(cp)


@SETTINGS
@given(rows=st.integers(1, 40), cols=st.integers(1, 40), density=st.floats(0.02, 1.0), seed=st.integers(0, 10 ** 6),
       fmt=st.sampled_from(["csr", "csc", "coo", "lil", "dok", "bsr", "dia", "dense"]))
def test_roundtrip_and_algorithm5(rows, cols, density, seed, fmt):
    m = random_matrix(rows, cols, density, seed)
    if m.nnz == 0:
        m = sp.csr_matrix(([3.0], ([rows - 1], [cols - 1])), shape=(rows, cols))
    given_m = m.toarray() if fmt == "dense" else m.asformat(fmt)
    c = CSSC.from_sparse(given_m)
    assert (c.to_sparse() != m).nnz == 0 and c.shape == m.shape
    va, ci, rm, cp = algorithm5_loop(sp.csr_matrix(m))
    np.testing.assert_array_equal(c.VA, va)
    np.testing.assert_array_equal(c.CI, ci)
    np.testing.assert_array_equal(c.RM, rm)
    np.testing.assert_array_equal(c.CP, cp)
    assert np.all(np.diff(c.col_nnz) <= 0) and np.all(np.diff(c.row_nnz) <= 0)
    np.testing.assert_array_equal(c.row_nnz, np.diff(sp.csr_matrix(m).indptr)[c.RM])


def test_duplicates_summed_and_explicit_zeros_dropped():
    m = sp.coo_matrix(([1, 2, 0, 5], ([0, 0, 1, 2], [1, 1, 0, 2])), shape=(3, 3))
    c = CSSC.from_sparse(m)
    assert c.nnz == 2
    np.testing.assert_array_equal(c.to_sparse().toarray(), [[0, 3, 0], [0, 0, 0], [0, 0, 5]])


def test_huge_sparse_matrix_is_never_densified():
    n = 10 ** 6  # dense would need 8 TB
    m = sp.csr_matrix((np.arange(1, 6), ([0, 5, 5, 999_999, 42], [7, 1, 999_998, 0, 42])), shape=(n, n))
    c = CSSC.from_sparse(m)
    assert c.n_columns == 2 and (c.to_sparse() != m).nnz == 0


@pytest.mark.parametrize("bad, match", [
    (sp.csr_matrix((0, 5)), "empty"),
    (sp.csr_matrix((4, 4)), "empty"),
    (sp.csr_matrix(([0.0, 0.0], ([0, 1], [0, 1])), shape=(2, 2)), "empty"),
    (np.ones(5), "2-D"),
])
def test_bad_shapes(bad, match):
    with pytest.raises(ValueError, match=match):
        CSSC.from_sparse(bad)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_nan_inf_rejected(value):
    m = sp.csr_matrix(([1.0, value], ([0, 2], [1, 3])), shape=(3, 4))
    with pytest.raises(EncodingError, match=r"NaN/inf.*\(2, 3\)"):
        CSSC.from_sparse(m)


def test_complex_rejected():
    with pytest.raises(EncodingError, match="complex"):
        CSSC.from_sparse(sp.csr_matrix(np.array([[1j, 0], [0, 1]])))


# ------------------------------------------------------------------ chunks
def matrix_with_column_heights(heights):
    """A matrix whose CSSC column j has heights[j] non-zeros (heights non-increasing)."""
    row_nnz = [sum(h > p for h in heights) for p in range(heights[0])]
    rows = np.repeat(np.arange(len(row_nnz)), row_nnz)
    cols = np.concatenate([np.arange(k) for k in row_nnz])
    return sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(len(row_nnz), len(heights)))


def test_paper_figure_chunks_use_padded_capacity():
    # Figs. 4, 6, 7: ciphertext size 21 gives chunks of 10x2, 7x3 and 3x5
    c = CSSC.from_sparse(matrix_with_column_heights([10, 9, 7, 6, 4, 3, 3, 2, 2, 1]))
    plan = generate_chunks(c, period=21)
    assert [(ch.rows, ch.cols) for ch in plan.chunks] == [(10, 2), (7, 3), (3, 5)]
    # Algorithm 2's literal unpadded rule would pack 10+3+3+3+2 = 21 non-zeros into a 10x5 = 50-slot chunk
    c = CSSC.from_sparse(matrix_with_column_heights([10, 3, 3, 3, 2]))
    assert all(ch.rows * ch.cols <= 21 for ch in generate_chunks(c, period=21).chunks)


@SETTINGS
@given(rows=st.integers(1, 120), cols=st.integers(1, 60), density=st.floats(0.01, 0.9), seed=st.integers(0, 10 ** 6),
       period=st.sampled_from([8, 16, 21, 64]), layout=st.sampled_from(["row", "both"]))
def test_chunks_fit_and_cover_every_entry_once(rows, cols, density, seed, period, layout):
    m = random_matrix(rows, cols, density, seed)
    if m.nnz == 0:
        return
    c = CSSC.from_sparse(m)
    plan = generate_chunks(c, period, layout)
    seen = []
    for chunk in plan.chunks:
        p0, p1 = plan.blocks[chunk.block]
        assert p1 - p0 <= period and chunk.rows <= p1 - p0
        assert chunk.split * chunk.rows <= period and chunk.cols - chunk.split <= chunk.split
        assert layout == "both" or not chunk.two_rows
        entries, slots = chunk_layout(c.CP, plan, chunk)
        assert np.unique(slots).size == slots.size and slots.max() < plan.slots
        # slot (column k, row i) holds sorted row p0 + i of CSSC column start + k
        local = slots % period
        np.testing.assert_array_equal(entries - c.CP[np.searchsorted(c.CP, entries, side="right") - 1],
                                      p0 + local % chunk.rows)
        seen.append(entries)
    seen = np.concatenate(seen)
    np.testing.assert_array_equal(np.sort(seen), np.arange(c.nnz))
    assert plan.n_ct == len(chunk_values(c.CP, c.VA, plan))


def test_row_blocks_partition_sorted_rows():
    m = random_matrix(100, 30, 0.2, seed=1)
    c = CSSC.from_sparse(m)
    plan = generate_chunks(c, period=32, layout="row")
    assert plan.blocks == ((0, 32), (32, 64), (64, 96), (96, int(c.col_nnz[0])))
    assert {ch.block for ch in plan.chunks} == {0, 1, 2, 3}
    with pytest.raises(ValueError, match="block_rows"):
        generate_chunks(c, period=32, block_rows=33)
    with pytest.raises(ValueError, match="layout"):
        generate_chunks(c, period=32, layout="diagonal")


def test_plan_dict_roundtrip():
    plan = generate_chunks(CSSC.from_sparse(random_matrix(60, 40, 0.3, seed=2)), 64, "both")
    assert type(plan).from_dict(plan.to_dict()) == plan


def test_reorg_vector_figure5():
    # ReorganizedResult[k] = Vector[ColumnIndex[k]], -1 (padding) gives 0
    v = np.array([1, 2, 3, 4])
    out = reorg_vector(v, [np.array([0, 2, -1, 1, 3, -1])])
    np.testing.assert_array_equal(out[0], [1, 3, 0, 2, 4, 0])


def test_chunk_products_give_row_sums():
    m = random_matrix(40, 25, 0.3, seed=3)
    v = np.arange(1, 26)
    c = CSSC.from_sparse(m)
    plan = generate_chunks(c, 64, "both")
    vals = chunk_values(c.CP, c.VA, plan)
    prods = [a * b for a, b in zip(vals, reorg_vector(v, chunk_column_index(c.CP, c.CI, plan)))]
    sorted_y = np.zeros(m.shape[0])
    for chunk, p in zip(plan.chunks, prods):
        p0 = plan.blocks[chunk.block][0]
        for k in range(chunk.cols):
            base = int(chunk.column_base(k, plan.period))
            sorted_y[p0:p0 + chunk.rows] += p[base:base + chunk.rows]
    np.testing.assert_array_equal(sorted_y[np.argsort(c.RM)], m @ v)
