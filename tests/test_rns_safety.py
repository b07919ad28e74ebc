"""hepkg.rns safety (issue 28, and issue 27 item 13's rns part): seeds only when marked insecure, randomness
distinct across threads and forks, one twiddle table per prime counted by the memory check, CuPy without a
device, CuPy's pool counted as free, and the error and key distributions against their exact probabilities."""
import math
import os
import threading
import time

import numpy as np
import pytest

from hepkg.rns import CKKS, DeviceMemoryError, device, standin
from hepkg.rns.sampling import SIGMA, TAIL, Sampler


def test_a_fixed_seed_needs_insecure():
    with pytest.raises(ValueError, match="insecure=True"):
        CKKS("rns-test-4096-d3", seed=5)
    assert CKKS("rns-test-4096-d3", seed=5, insecure=True).sampler.seeded


def test_seed_zero_is_not_an_all_zero_key():
    for seed in (0, 1):
        assert Sampler(16, seed=seed)._key not in (bytes(32), seed.to_bytes(32, "little"))
    with pytest.raises(ValueError, match="seed"):
        Sampler(16, seed=-1)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_samplers_draw_distinct_randomness():
    s = Sampler(4096)
    s.gaussian()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                      # child: send one draw, exit without cleanup
        try:
            os.write(w, s.gaussian().astype(np.int8).tobytes())
        finally:
            os._exit(0)
    os.close(w)
    child = b""
    while len(child) < 4096:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        child += chunk
    os.close(r)
    os.waitpid(pid, 0)
    mine = s.gaussian().astype(np.int8).tobytes()
    assert len(child) == 4096 and child != mine


def test_threads_draw_distinct_randomness():
    """Two threads drawing at once from one (seeded: no nonce, the counter alone separates draws) sampler: a
    counter whose increment yields the interpreter in between (as any thread switch may) made both read the
    same value, hence the same draw; the lock keeps them apart."""
    class SlowInt(int):
        def __add__(self, other):
            time.sleep(0.05)
            return SlowInt(int(self) + other)

    s, out, barrier = Sampler(1024, seed=3), [], threading.Barrier(2)
    s._calls = SlowInt(0)

    def draw():
        barrier.wait()
        out.append(s.ternary().tobytes())
    threads = [threading.Thread(target=draw) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 2 and out[0] != out[1]


def _owned_bytes(obj) -> int:
    """Bytes of the arrays an NTT holds that are not views of its basis's full tables."""
    full = obj.full if hasattr(obj, "full") else None
    total = 0
    for name in ("w", "iw", "ws", "iws"):
        a = getattr(obj, name, None)
        if a is not None and not (full is not None and full is not obj and np.shares_memory(a, getattr(full, name))):
            total += a.nbytes
    return total


@pytest.mark.parametrize("kernels", ["numpy", "numba"])
def test_one_twiddle_table_per_prime(kernels):
    """Today's engine copied the tables of every subset of primes it transformed (35 copies after a
    depth-9 circuit at 2^15); now every subset reads the full tables."""
    if kernels == "numba" and not device.compiled_available():
        pytest.skip("needs numba")
    eng = CKKS("rns-test-8192-d4", kernels=kernels, rotations=[1])
    ct = eng.encrypt(np.linspace(-1, 1, eng.slots))
    for _ in range(3):
        ct = eng.rotate(eng.rescale(eng.relinearize(eng.mul(ct, ct))), 1)
    ntts = [v for k, v in eng.bases._cache.items() if k[0] == "ntt"]
    assert len(ntts) > (10 if kernels == "numpy" else 5)
    full = eng.bases._ntt_full
    assert sum(_owned_bytes(t) for t in ntts if t is not full) == 0
    assert _owned_bytes(full) == 4 * len(eng.bases.full) * eng.n * 8


def test_memory_check_counts_the_twiddle_tables(monkeypatch):
    monkeypatch.setattr(device, "free_bytes", lambda xp: 1 << 20)
    with pytest.raises(DeviceMemoryError, match="NTT tables"):
        CKKS("rns-test-8192-d4")


@pytest.fixture
def cp():
    mod = standin.install()
    saved = dict(standin.STATE)
    yield mod
    standin.STATE.update(saved)
    standin.uninstall()


def test_cupy_without_a_device_skips_and_falls_back(cp):
    from conftest import cupy_or_skip
    from hepkg.bench.rns_ops import array_modules

    cpu = ["numpy", "numba"] if device.compiled_available() else ["numpy"]
    assert cupy_or_skip() is cp and array_modules() == cpu + ["cupy"]
    standin.STATE["devices"] = 0
    with pytest.raises(pytest.skip.Exception):
        cupy_or_skip()
    assert array_modules() == cpu
    with pytest.raises(RuntimeError, match="no CUDA device"):
        device.array_module("cupy")


def test_free_bytes_count_the_pool(cp):
    standin.STATE.update(free=1 << 30, pool_free=3 << 30)
    assert device.free_bytes(cp) == 4 << 30
    device.check_memory(3 << 30, "a test allocation", cp)      # refused when the pool is ignored


# ---------------------------------------------------------------------- distributions (exact probabilities)
def _chi2_ok(observed, expected, alpha=1e-4) -> tuple:
    """(statistic, critical value) of a chi-square goodness-of-fit test; bins with expected counts under 5
    are merged into their neighbour first. Critical value: Wilson-Hilferty at 1 - alpha."""
    obs, exp = list(observed), list(expected)
    i = 0
    while i < len(exp):
        if exp[i] < 5 and len(exp) > 1:
            e, o = exp.pop(i), obs.pop(i)              # pop first: the neighbour's index shifts with it
            j = i if i < len(exp) else i - 1
            exp[j] += e
            obs[j] += o
            i = 0
            continue
        i += 1
    obs, exp = np.asarray(obs, float), np.asarray(exp, float)
    stat = float(((obs - exp) ** 2 / exp).sum())
    k = len(exp) - 1
    z = 3.719                                          # the 1 - 1e-4 quantile of the standard normal
    crit = k * (1 - 2 / (9 * k) + z * math.sqrt(2 / (9 * k))) ** 3
    return stat, crit


def _phi(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def test_chi2_merging_keeps_the_bins_aligned():
    """A lone draw in a sparse tail bin is merged with its neighbours, not scored against a wrong bin
    (the merge once shifted the bins and failed CI on a fair sample, statistic 64 or 458,000)."""
    expected = np.array([0.001, 0.005, 0.03, 0.13, 6.0, 20.0, 50.0, 20.0, 6.0, 0.13, 0.03, 0.005, 0.001])
    observed = np.array([0, 1, 0, 0, 6, 20, 50, 20, 6, 0, 0, 0, 0])
    stat, crit = _chi2_ok(observed, expected)
    assert stat < 1 < crit
    stat, _ = _chi2_ok(np.array([0, 0, 0, 0, 6, 20, 10, 20, 6, 0, 0, 0, 0]), expected)
    assert stat > crit                                  # and a real departure is still caught


def test_error_distribution_is_the_rounded_gaussian():
    """P(e = k) = Phi((k + 1/2)/sigma) - Phi((k - 1/2)/sigma) for |k| < cut; the cut at TAIL sigma moves
    the tails beyond into the outermost values."""
    e = Sampler(4096).gaussian(64).ravel()                 # 262144 draws
    cut = int(TAIL * SIGMA)
    assert np.abs(e).max() <= cut
    ks = np.arange(-cut, cut + 1)
    p = np.array([_phi((k + 0.5) / SIGMA) - _phi((k - 0.5) / SIGMA) for k in ks])
    p[0], p[-1] = _phi((-cut + 0.5) / SIGMA), 1 - _phi((cut - 0.5) / SIGMA)
    stat, crit = _chi2_ok(np.bincount(e + cut, minlength=len(ks)), p * e.size)
    assert stat < crit, (stat, crit)


def test_key_distribution_is_uniform_ternary():
    t = Sampler(4096).ternary(32).ravel()
    stat, crit = _chi2_ok(np.bincount(t + 1, minlength=3), np.full(3, t.size / 3))
    assert stat < crit, (stat, crit)
    pairs = (t[:-1:2] + 1) * 3 + (t[1::2] + 1)               # neighbours independent: 9 equally likely pairs
    stat, crit = _chi2_ok(np.bincount(pairs, minlength=9), np.full(9, pairs.size / 9))
    assert stat < crit, (stat, crit)
