"""Baselines (diagonal method, Rhombus-style rows) and the experiment helpers, on sim."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from hepkg.he.errors import EncodingError
from hepkg.he.params import ParamSet
from hepkg.spmv import (METHODS, FixedPoint, diagonal_block_size, diagonal_predicted_ops, predict_ops,
                        rowwise_predicted_ops, run_config, run_diagonal, run_rowwise)

#: period 512: blocking with small matrices (sim only: insecure)
TINY = ParamSet(name="test-bfv-1024-d2", scheme="bfv", n=1024, plain_modulus=65537, qi_bits=(30, 30, 30), depth=2)
TINY_CKKS = ParamSet(name="test-ckks-1024-d2", scheme="ckks", n=1024, scale_bits=30, qi_bits=(50, 30, 30, 50),
                     depth=2)


def int_matrix(rows, cols, density, seed):
    rng = np.random.default_rng(seed)
    m = sp.random(rows, cols, density=density, format="csr", random_state=seed,
                  data_rvs=lambda n: rng.integers(1, 6, n) * rng.choice([-1, 1], n)).astype(np.int64)
    return m


@pytest.mark.parametrize("run, predict", [(run_diagonal, diagonal_predicted_ops), (run_rowwise, rowwise_predicted_ops)])
@pytest.mark.parametrize("shape, policy", [((1, 1), "pow2"), ((40, 30), "exact"), ((30, 50), "pow2"),
                                           ((512, 512), "exact"), ((1100, 700), "pow2"), ((300, 1200), "exact")])
def test_baselines_exact_and_predicted(run, predict, shape, policy):
    m = int_matrix(*shape, density=min(0.08, 1500 / (shape[0] * shape[1])), seed=sum(shape))
    if m.nnz == 0:
        m = sp.csr_matrix(([3], ([0], [0])), shape=shape, dtype=np.int64)
    v = np.random.default_rng(1).integers(-4, 5, shape[1])
    res = run(m, v, params=TINY, policy=policy, insecure=True)
    np.testing.assert_array_equal(res.y, m @ v)
    expected = predict(m, TINY.n // 2, policy)
    assert {k: res.cloud_ops[k] for k in expected} == expected


def test_diagonal_blocks_and_traffic():
    assert diagonal_block_size((40, 30), 512) == 40 and diagonal_block_size((1500, 10), 512) == 512
    m = int_matrix(1100, 600, 0.002, seed=2)
    res = run_diagonal(m, np.ones(600, dtype=np.int64), params=TINY, insecure=True)
    assert res.info["blocks"] == (3, 2)
    n_diag = res.info["n_ct"]
    assert res.cloud_ops["mul_ct"] == n_diag and res.ops["client_a"]["encrypt"] == n_diag
    per_ct = res.traffic["a_to_cloud"] / n_diag
    assert res.traffic["b_to_cloud"] == pytest.approx(2 * per_ct, rel=0.01)


def test_rowwise_costs_per_row():
    m = int_matrix(100, 50, 0.1, seed=3)
    res = run_rowwise(m, np.ones(50, dtype=np.int64), params=TINY, insecure=True)
    nonempty = int(np.count_nonzero(m.getnnz(axis=1)))
    assert res.cloud_ops["rotate"] == nonempty * 9  # log2(512) per row
    assert res.cloud_ops["mul_ct"] == 0 and "a_to_cloud" not in res.traffic


@pytest.mark.parametrize("run", [run_diagonal, run_rowwise])
def test_baselines_on_ckks_and_bad_input(run):
    rng = np.random.default_rng(4)
    m = sp.random(90, 70, density=0.1, format="csr", random_state=4, data_rvs=lambda n: rng.uniform(-1, 1, n))
    v = rng.uniform(-1, 1, 70)
    agreed = FixedPoint(vector_bound=1.0)  # the row-wise sum over all slots tracks 512 x the row's bound
    np.testing.assert_allclose(run(m, v, params=TINY_CKKS, insecure=True, encoding=agreed).y, m @ v, atol=1e-6)
    with pytest.raises(ValueError, match="dimension mismatch"):
        run(m, v[:-1], params=TINY_CKKS, insecure=True)
    with pytest.raises(EncodingError, match="non-integer"):
        run(m, v, params=TINY, insecure=True)


# ------------------------------------------------------------------ experiments
def test_run_config_rows_and_predictions():
    m = int_matrix(200, 150, 0.03, seed=5)
    rows = [run_config(m, method, name="rand", seed=1) for method in METHODS]
    for row in rows:
        assert row["correct"] and row["matrix"] == "rand" and row["nnz"] == m.nnz
        assert row["time_total"] > 0 and row["bytes_b_to_cloud"] > 0
        predicted = predict_ops(m, row["method"])
        assert all(row[f"cloud_{k}"] == v for k, v in predicted.items() if f"cloud_{k}" in row), row["method"]
    cssc, diag, rowwise = rows
    assert cssc["n_ct"] < diag["n_ct"] and cssc["cloud_rotate"] < rowwise["cloud_rotate"]
    assert pickle.loads(pickle.dumps(run_config)) is run_config


def test_run_config_values_and_memory():
    real = sp.random(50, 40, density=0.1, format="csr", random_state=6)
    row = run_config(real, "cssc", memory=True)
    assert row["values"] == "pattern" and row["correct"] and row["peak_rss"] > 0 and row["py_peak"] >= 0
    row = run_config(real, "cssc", params="ckks-8192-small")
    assert row["values"] == "original" and row["correct"] and row["max_abs_err"] < 1e-6
    with pytest.raises(ValueError, match="unknown method"):
        run_config(real, "hetal")


def test_run_config_by_dataset_name():
    datasets = pytest.importorskip("hepkg.datasets")
    try:
        datasets.load_matrix("arc130", download=False)
    except datasets.MatrixNotFound:
        pytest.skip("arc130 not available offline")
    row = run_config("arc130", "cssc")
    assert row["matrix"] == "arc130" and row["n_ct"] == 2 and row["correct"]
