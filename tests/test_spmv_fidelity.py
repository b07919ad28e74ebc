"""spmv as the paper ran it: zero matrices, equal accounting of keys, the paper's dense diagonal baseline."""
import numpy as np
import pytest
import scipy.sparse as sp

import hepkg.he as he
from hepkg.spmv import run_cssc, run_diagonal, run_rowwise
from hepkg.spmv.diagonal import dense_pattern, diagonal_offsets, diagonal_predicted_ops

pytestmark = pytest.mark.filterwarnings("ignore::hepkg.he.errors.NoPrivacyWarning")  # sim on purpose

RUNS = {"cssc": run_cssc, "diagonal": run_diagonal, "rowwise": run_rowwise}


@pytest.mark.parametrize("method", RUNS)
def test_all_zero_matrix_gives_a_zero_vector(method):
    res = RUNS[method](sp.csr_matrix((5, 4), dtype=np.int64), np.arange(4), backend="sim")
    assert res.y.tolist() == [0] * 5 and res.info["n_ct"] == 0 and res.backend == "sim"
    with pytest.raises(ValueError, match="dimension mismatch"):
        RUNS[method](sp.csr_matrix((5, 4), dtype=np.int64), np.arange(3))


def test_client_b_gets_the_public_key_only_and_keys_are_charged_alike():
    m = sp.random(60, 50, density=0.1, format="csr", random_state=0, data_rvs=lambda n: np.ones(n, int))
    v = np.arange(50) % 9 - 4
    res = run_cssc(m, v, backend="pyfhel" if he.availability()["pyfhel"] else "sim", params="bfv-8192-spmv")
    assert np.array_equal(res.y, m @ v)
    assert res.traffic["keys_to_b"] < res.traffic["keys_to_cloud"] / 2 or res.backend == "sim"
    for method, run in RUNS.items():
        out = run(m, v)
        assert np.array_equal(out.y, m @ v), method
        assert set(out.timings) == {"keygen", "key_transfer", "client_a", "client_b", "cloud", "decrypt", "total"}, method
        assert {"keys_to_cloud", "keys_to_b"} <= set(out.traffic), method
    assert run_diagonal(m, v).traffic["keys_to_b"] > 0
    assert run_rowwise(m, v).traffic["keys_to_b"] == 0  # Client B holds the keys


@pytest.mark.parametrize("shape, count", [((130, 130), 130), ((7, 5), 7), ((5, 9), 9), ((130, 40), 130),
                                          ((2048, 100), 2048), ((4096, 4096), 4096), ((8192, 4096), 2 * 4096),
                                          ((3000, 3000), 4096), ((2049, 10), 2058)])
def test_dense_diagonals_wrap_modulo_the_dimension(shape, count):
    """The paper's variant: D diagonals per D x D block, D = max(rows, cols), the vector replicated (a dense
    130 x 130 matrix has 130, not 259), where two copies fit a slot row (D <= 2048) and for full
    4096-blocks; between, offsets wrap at the slot row: min(rows + cols - 1, 4096)."""
    period = 4096
    one = sp.csr_matrix(([1], ([0], [0])), shape=shape, dtype=np.int64)
    assert diagonal_predicted_ops(one, period, dense=True)["mul_ct"] == count
    assert sum(ks.size for ks in diagonal_offsets(dense_pattern(shape, period), period).values()) == count
    if max(shape) <= 130:
        assert diagonal_predicted_ops(np.ones(shape), period)["mul_ct"] == count  # the zero-skipping variant


@pytest.mark.parametrize("shape, density", [((130, 130), 0.05), ((7, 5), 0.3), ((5, 9), 0.3), ((3000, 3000), 0.001),
                                             ((5000, 300), 0.01), ((9000, 5000), 0.0005)])
@pytest.mark.parametrize("dense", [False, True])
def test_diagonal_method_is_exact_and_counted(shape, density, dense):
    rng = np.random.default_rng(1)
    m = sp.random(*shape, density=density, format="csr", random_state=1,
                  data_rvs=lambda n: rng.integers(-3, 4, n)).astype(np.int64)
    v = rng.integers(-3, 4, shape[1])
    res = run_diagonal(m, v, dense=dense)
    assert np.array_equal(res.y, m @ v)
    predicted = diagonal_predicted_ops(m, 4096, dense=dense)
    assert {k: res.cloud_ops.get(k, 0) for k in predicted} == predicted
    assert res.method == ("diagonal-dense" if dense else "diagonal")


def test_side_by_side_benchmark_on_sim():
    from hepkg.spmv.bench import compare_methods
    table = compare_methods("arc130", reps=2, backend="sim", limit_s=0.02).set_index("method")
    assert table.loc["cssc", "status"] == "measured" and table.loc["cssc", "cssc_speedup"] == 1
    assert (table.median_s > 0).all() and set(table.status) <= {"measured", "modelled (in-run costs)"}
    measured = table.query("status == 'measured' and method != 'cssc'")
    assert measured.verdict.isin(["cssc faster", "cssc slower", "inconclusive"]).all()

