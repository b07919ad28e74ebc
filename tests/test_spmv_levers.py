"""CSSC's cost levers (exact rotation keys, dropped primes, compressed keys) change the cost, never the product."""
import numpy as np
import pytest
import scipy.sparse as sp

import hepkg.he as he
from conftest import pinned
from hepkg.he.errors import NoPrivacyWarning
from hepkg.he.levels import affordable_drop
from hepkg.spmv import ClientA, ClientB, messages, run_cssc

pytest.importorskip("Pyfhel")


def operands(rows=300, cols=200, seed=3):
    rng = np.random.default_rng(seed)
    m = sp.random(rows, cols, density=0.03, format="csr", random_state=seed,
                  data_rvs=lambda n: rng.integers(-9, 10, n)).astype(np.int64)
    return m, rng.integers(-5, 6, cols)


@pytest.mark.parametrize("policy, drop", [("exact", 1), ("pow2", 1), ("exact", 0)])
def test_levers_keep_the_product_exact_and_shrink_the_work(policy, drop):
    m, v = operands()
    base = run_cssc(m, v, backend="pyfhel", params="bfv-8192-default", policy="pow2", drop_primes=0)  # the paper's
    res = run_cssc(m, v, backend="pyfhel", params="bfv-8192-default", policy=policy, drop_primes=drop)
    np.testing.assert_array_equal(res.y, m @ v)
    assert res.ops["cloud"]["rotate"] == base.ops["cloud"]["rotate"]
    assert res.ops["cloud"]["keyswitch"] <= base.ops["cloud"]["keyswitch"]
    if policy == "exact":
        assert res.ops["cloud"]["keyswitch"] == res.ops["cloud"]["rotate"] + res.ops["cloud"]["relinearize"]
    if drop:  # one of SEAL's four 43-44-bit data primes fewer: about 3/4 of the bytes
        assert res.traffic["a_to_cloud"] < 0.8 * base.traffic["a_to_cloud"]
        assert res.traffic["b_to_cloud"] < 0.8 * base.traffic["b_to_cloud"]


def test_the_defaults_are_pyfhel_exact_keys_the_affordable_drop_and_compressed_keys():
    m, v = operands()
    res = run_cssc(m, v, params="bfv-8192-default")
    paper = run_cssc(m, v, params="bfv-8192-default", policy="pow2", drop_primes=0, compress_keys=False)
    np.testing.assert_array_equal(res.y, m @ v)
    assert (res.backend, res.info["policy"], res.info["drop_primes"]) == ("pyfhel", "exact", 2)
    assert res.traffic["keys_to_cloud"] < 0.9 * paper.traffic["keys_to_cloud"]  # fewer keys, compressed
    assert res.traffic["keys_to_b"] < 0.9 * paper.traffic["keys_to_b"]  # B gets the public key alone, compressed
    assert res.traffic["keys_to_b"] < res.info["key_bytes"] / 10
    assert res.info["key_seconds"].keys() == {"client_a", "cloud", "client_b"}
    assert sum(res.info["key_seconds"].values()) == pytest.approx(res.timings["key_transfer"], rel=0.05)
    assert run_cssc(m, v).info["drop_primes"] == 1  # bfv-8192-spmv: 60 + 40 bits left of 60 + 40 + 40
    with pytest.warns(NoPrivacyWarning, match="encrypts nothing"):
        run_cssc(m, v, backend="sim")


def test_affordable_drop_follows_the_noise_the_path_spends():
    p = he.get_params("bfv-8192-default")
    assert affordable_drop(p, "pyfhel", ct_products=1, pt_products=1, summands=30) == 2  # CSSC: spends about 51
    assert affordable_drop(p, "pyfhel", ct_products=2, pt_products=1) == 1
    assert affordable_drop(p, "pyfhel", ct_products=4) == 0
    assert affordable_drop(p, "openfhe", ct_products=1) == 0  # no noise budget to check
    assert affordable_drop(he.get_params("bfv-8192-t20"), "pyfhel", ct_products=1, pt_products=1, summands=64) == 1


def test_dropping_too_many_primes_is_refused_never_a_wrong_product():
    m, v = operands()
    with pytest.raises((he.NoiseBudgetExhausted, he.DepthExhausted)):
        run_cssc(m, v, backend="pyfhel", params="bfv-8192-default", drop_primes=3)


def test_drop_primes_needs_a_noise_budget_and_a_count():
    m, v = operands()
    with pytest.raises(ValueError, match="noise budget"):
        run_cssc(m, v, backend="sim", params="bfv-8192-default", drop_primes=1)
    for bad in (-1, 1.0, True):
        with pytest.raises(ValueError, match="drop_primes"):
            ClientA(m, backend="pyfhel", params="bfv-8192-default", drop_primes=bad)


def test_client_b_takes_the_drop_from_a_and_refuses_a_forged_one():
    m, v = operands()
    a = ClientA(m, backend="pyfhel", params="bfv-8192-default", drop_primes=1)
    msg = a.column_index_message()
    sent = a.encryption_context()
    assert ClientB(v, sent, msg, **pinned(sent)).drop_primes == 1
    meta, arrays, _ = messages.unpack(msg, "spmv/column-index")
    forged = messages.pack("spmv/column-index", dict(meta, drop_primes=-2), arrays)
    with pytest.raises(ValueError, match="drop_primes"):
        ClientB(v, sent, forged, **pinned(sent))
