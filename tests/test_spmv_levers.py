"""CSSC's cost levers (exact rotation keys, clients dropping primes) change the cost, never the product."""
import numpy as np
import pytest
import scipy.sparse as sp

import hepkg.he as he
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
    base = run_cssc(m, v, backend="pyfhel", params="bfv-8192-default")
    res = run_cssc(m, v, backend="pyfhel", params="bfv-8192-default", policy=policy, drop_primes=drop)
    np.testing.assert_array_equal(res.y, m @ v)
    assert res.ops["cloud"]["rotate"] == base.ops["cloud"]["rotate"]
    assert res.ops["cloud"]["keyswitch"] <= base.ops["cloud"]["keyswitch"]
    if policy == "exact":
        assert res.ops["cloud"]["keyswitch"] == res.ops["cloud"]["rotate"] + res.ops["cloud"]["relinearize"]
    if drop:  # one of SEAL's four 43-44-bit data primes fewer: about 3/4 of the bytes
        assert res.traffic["a_to_cloud"] < 0.8 * base.traffic["a_to_cloud"]
        assert res.traffic["b_to_cloud"] < 0.8 * base.traffic["b_to_cloud"]


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
    assert ClientB(v, a.encryption_context(), msg).drop_primes == 1
    meta, arrays, _ = messages.unpack(msg, "spmv/column-index")
    forged = messages.pack("spmv/column-index", dict(meta, drop_primes=-2), arrays)
    with pytest.raises(ValueError, match="drop_primes"):
        ClientB(v, a.encryption_context(), forged)
