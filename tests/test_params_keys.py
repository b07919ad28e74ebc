"""Parameter sets, security levels, rotation-key policies and backend availability."""
import importlib.util

import pytest
from hypothesis import given, strategies as st

import hepkg.he as he
from hepkg.he.keys import RotationKeys


def test_security_levels_from_the_standard_table():
    assert he.security_bits(8192, 218) == 128 and he.security_bits(8192, 219) < 128
    assert he.security_bits(8192, 152) == 192 and he.security_bits(32768, 476) == 256
    assert he.get_params("bfv-8192-spmv").security == 128  # log Q = 200
    assert he.get_params("bfv-omr-soph").security == 128  # log PQ = 1740 <= 1747
    perf = he.get_params("bfv-omr-perf")
    assert perf.log_q == 870 and perf.log_pq == 990  # 15 x 58 bits, what OpenFHE builds (the paper: 857, 917)
    assert 110 < perf.security < 128  # the HE standard's table at log PQ 990; the paper's estimator: 120.9
    for name in ("ckks-32768-d9", "ckks-32768-d11", "bfv-8192-default", "bfv-32768-gemm"):
        assert he.get_params(name).secure, name


def test_insecure_sets_refuse_without_flag():
    with pytest.raises(he.InsecureParameters, match="below 128"):
        he.context("sim", "bfv-omr-perf")
    assert he.context("sim", "toy-bfv-1024", insecure=True).insecure


@pytest.mark.parametrize("kw, match", [
    (dict(scheme="bfv", n=8192, plain_modulus=65536), "not 1 mod 2N"),
    (dict(scheme="bfv", n=1000, plain_modulus=65537), "power of two"),
    (dict(scheme="ckks", n=8192), "scale_bits"),
    (dict(scheme="tfhe", n=8192), "unknown scheme"),
    (dict(scheme="bfv", n=8192, plain_modulus=65537, tower_bits=61), "tower_bits 61 must be None or an integer"),
    (dict(scheme="bfv", n=8192, plain_modulus=65537, tower_bits=58.0), "tower_bits 58.0 must be None or an integer"),
    (dict(scheme="ckks", n=8192, scale_bits=40, tower_bits=58), "CKKS sizes its primes with qi_bits"),
])
def test_inconsistent_param_sets(kw, match):
    with pytest.raises(he.ParameterError, match=match):
        he.ParamSet(name="bad", qi_bits=(60, 40, 60), depth=1, **kw)


def test_unknown_names():
    with pytest.raises(he.ParameterError, match="unknown parameter set"):
        he.get_params("nope")
    with pytest.raises(he.ParameterError, match="unknown backend"):
        he.context("seal-gpu")


def test_missing_library_reports_install_hint(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "openfhe" else real(name, *a))
    assert he.availability()["openfhe"] is False
    with pytest.raises(he.BackendUnavailable, match="pip install openfhe"):
        he.context("openfhe", "bfv-8192-default")


@given(st.integers(-10 ** 6, 10 ** 6))
def test_naf_is_minimal_signed_binary(k):
    terms = he.naf(k)
    assert sum(terms) == k
    assert all(abs(t) & (abs(t) - 1) == 0 for t in terms)
    assert len(terms) <= bin(abs(k)).count("1")
    positions = sorted(abs(t).bit_length() for t in terms)
    assert all(b - a >= 2 for a, b in zip(positions, positions[1:]))


@given(st.integers(1, 4095))
def test_pow2_plan_uses_only_held_keys(k):
    keys = RotationKeys("pow2", [k], 4096)
    plan = keys.plan(k)
    assert sum(plan) % 4096 == k and set(plan) <= keys.steps
    assert len(plan) <= bin(k).count("1")


def test_exact_policy_holds_exactly_the_steps():
    keys = RotationKeys("exact", [3, -1, 4096 + 5], 4096)
    assert keys.steps == {3, 4095, 5}
    with pytest.raises(he.MissingRotationKey, match="rotation by 2"):
        keys.plan(2)
