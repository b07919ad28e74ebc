"""Smoke tests of the CSSC protocol on real HE libraries (few and small; skipped where unusable)."""
import numpy as np
import pytest
import scipy.sparse as sp

import hepkg.he as he
from hepkg.he.errors import ParameterError
from hepkg.spmv import predict_ops, run_config, run_cssc


def usable(backend: str, params: str) -> bool:
    """The backend imports and accepts the parameter set."""
    try:
        he.context(backend, params)
    except (ImportError, ParameterError):
        return False
    return True


def test_pyfhel_bfv_small_real_matrix():
    if not usable("pyfhel", "bfv-8192-spmv"):
        pytest.skip("pyfhel backend unusable here")
    datasets = pytest.importorskip("hepkg.datasets")
    try:
        m = datasets.load_matrix("arc130", download=False)
    except datasets.MatrixNotFound:
        m = sp.random(30, 30, density=0.2, format="csr", random_state=0)
    row = run_config(m, "cssc", "pyfhel", name="arc130")
    assert row["correct"] and row["values"] == "pattern"
    predicted = predict_ops(m, "cssc")
    assert all(row[f"cloud_{k}"] == v for k, v in predicted.items() if f"cloud_{k}" in row)


def test_ckks_on_a_real_backend():
    backend = next((b for b in ("tenseal", "pyfhel", "openfhe") if usable(b, "ckks-8192-small")), None)
    if backend is None:
        pytest.skip("no real CKKS backend usable here")
    rng = np.random.default_rng(1)
    m = sp.random(30, 30, density=0.2, format="csr", random_state=1, data_rvs=lambda n: rng.uniform(-1, 1, n))
    v = rng.uniform(-1, 1, 30)
    res = run_cssc(m, v, backend=backend, params="ckks-8192-small")
    np.testing.assert_allclose(res.y, m @ v, atol=1e-4)
