"""hepkg.rns device discipline: numpy-only import, array-module selection, CuPy kernels equal to their numpy twins."""
import subprocess
import sys

import numpy as np
import pytest

from conftest import cupy_or_skip
from hepkg.rns import array_module
from hepkg.rns.arith import Modulus, _mul_mod_xp, _mul_shoup_xp, mul_mod, mul_shoup, ntt_primes


def test_imports_with_numpy_alone():
    code = ("import sys; import hepkg.rns; from hepkg.rns import CKKS; "
            "bad = [m for m in ('cupy', 'scipy', 'numba') if m in sys.modules]; print(bad); sys.exit(bool(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_array_module_selection():
    assert array_module("numpy", "numpy") is np and array_module(None, "numpy") is np
    with pytest.raises(ValueError, match="numpy"):
        array_module("torch")


@pytest.mark.gpu
def test_cupy_kernels_equal_numpy_twins():
    cp = cupy_or_skip()
    primes = ntt_primes(60, 4096, 2) + ntt_primes(31, 4096, 1)
    host, dev = Modulus(primes), Modulus(primes, cp)
    rng = np.random.default_rng(0)
    a = np.stack([rng.integers(0, q, 4096, dtype=np.uint64) for q in primes])
    b = np.stack([rng.integers(0, q, 4096, dtype=np.uint64) for q in primes])
    a[:, :3], b[:, :3] = 0, np.array(primes, dtype=np.uint64)[:, None] - 1
    assert (mul_mod(cp.asarray(a), cp.asarray(b), dev).get() == _mul_mod_xp(a, b, host)).all()
    w, ws = host.constants([q - 2 for q in primes])
    got = mul_shoup(cp.asarray(a), cp.asarray(w), cp.asarray(ws), dev.q, cp).get()
    assert (got == _mul_shoup_xp(a, w, ws, host.q, np)).all()


@pytest.mark.gpu
def test_numpy_and_cupy_engines_give_bit_identical_ciphertexts():
    """Same seed, same plaintext (encoded once on the host: cuFFT and numpy's FFT may round the last bit
    differently): keys, encryption, product, relinearization,
    rescale, rotation and hoisted rotations agree bit for bit between the two array modules."""
    cp = cupy_or_skip()
    from hepkg.rns import CKKS
    from hepkg.rns.ckks import Plaintext

    host, dev = (CKKS("rns-test-4096-d3", xp=xp, seed=11, insecure=True, rotations=[1, 5]) for xp in ("numpy", "cupy"))
    values = np.random.default_rng(3).uniform(-1, 1, host.slots)
    pt = host.encode(values)
    a_h, a_d = host.encrypt(pt), dev.encrypt(Plaintext(cp.asarray(pt.data), pt.level, pt.scale))
    for name, run in {"encrypt": lambda e, a: a,
                      "mul_relin_rescale": lambda e, a: e.rescale(e.relinearize(e.mul(a, a))),
                      "rotate": lambda e, a: e.rotate(a, 5),
                      "hoisted": lambda e, a: e.rotate_hoisted(a, [1, 5])[5]}.items():
        want, got = run(host, a_h), dev.download(run(dev, a_d))
        assert (got.level, got.scale) == (want.level, want.scale), name
        assert (got.data == want.data).all(), name
    np.testing.assert_allclose(dev.decrypt(a_d), values, atol=1e-6)
