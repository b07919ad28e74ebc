"""The rns engine's CuPy path on the strict CuPy stand-in (hepkg.rns.standin, numpy underneath): the
stand-in's strictness, bit-identical results with the numpy engine, and kernel launches counted.

Launch counts at N = 2^15, depth 9 (rns-ckks-32768-d9), before issue 28 -> issue 28 -> issue 54:
NTT of a ciphertext 151 -> 1 -> 2, product + relinearize + rescale 1673 -> 13 -> 13, rotation 1351 -> 9 -> 13,
each further hoisted step 361 -> 5 -> 7; host-to-device uploads per op 9 / 6 / 3 per step -> 0. Issue 54 made
every NTT two launches on shared-memory tiles (one block per row before: a launch took about 0.18 ms whatever
its size), ModUp skip each digit's own rows and the relinearization fold its rescale into ModDown: a product
with its relinearization and rescale transforms 70 limbs instead of 100, in 6 launches fewer.
Issue 28's targets (4, 60, 40, 15) are the ceilings asserted; the exact counts are asserted too, so
that a change to them is a decision, not an accident.
"""
import numpy as np
import pytest

from conftest import RNS_CIRCUIT
from hepkg.rns import CKKS, standin
from hepkg.rns.ckks import Plaintext

#: launches per op at rns-ckks-32768-d9 (after issue 54) and issue 28's ceilings
LAUNCHES = {"ntt": 2, "mul_relin_rescale": 13, "rotate": 13, "hoist_step": 7}
TARGETS = {"ntt": 4, "mul_relin_rescale": 60, "rotate": 40, "hoist_step": 15}


@pytest.fixture(scope="module")
def cp():
    mod = standin.install()
    yield mod
    standin.uninstall()


# ---------------------------------------------------------------------- the stand-in is strict
def test_standin_refuses_host_device_mixing_and_implicit_conversion(cp):
    a = cp.asarray(np.arange(4, dtype=np.uint64))
    with pytest.raises(TypeError, match="host value"):
        a + np.arange(4, dtype=np.uint64)
    with pytest.raises(TypeError, match="host value"):
        np.arange(4, dtype=np.uint64) + a
    with pytest.raises(TypeError, match="implicit conversion"):
        np.asarray(a)
    with pytest.raises(TypeError, match="host value"):
        a[np.array([0, 1])]
    with pytest.raises(TypeError, match="promote to float64"):
        a + cp.asarray(np.arange(4, dtype=np.int64))
    with pytest.raises(TypeError, match="host value"):
        cp.minimum(a, np.arange(4, dtype=np.uint64))


def test_standin_checks_kernel_arguments_and_counts(cp):
    from hepkg.rns import kernels
    add = kernels.elementwise("hepkg_rns_add_mod")
    q = cp.asarray(np.array([[17]], dtype=np.uint64))
    a = cp.asarray(np.array([[3, 16]], dtype=np.uint64))
    with standin.counting() as c:
        assert (add(a, a, q).get() == [[6, 15]]).all()
    assert c.total == 1 and c.launches["hepkg_rns_add_mod"] == 1 and c.downloads == 1
    with pytest.raises(TypeError, match="declared uint64"):
        add(a, a.astype(np.int64), q)
    with pytest.raises(TypeError, match="device array or numpy scalar"):
        add(a, 3, q)
    x = cp.zeros((1, 4), dtype=np.uint64)
    rows = cp.asarray(np.zeros(1, np.int32))
    args = (x, rows, rows, x, x, q, np.int32(2), np.int32(1))
    with pytest.raises(TypeError, match="numpy scalar"):
        kernels.launch("hepkg_rns_ntt_fwd_rows", (2,), (1,), args[:6] + (2,) + args[7:])
    with pytest.raises(TypeError, match="takes int32"):
        kernels.launch("hepkg_rns_ntt_fwd_rows", (2,), (1,), args[:6] + (np.int64(2),) + args[7:])
    with pytest.raises(TypeError, match="device array"):
        kernels.launch("hepkg_rns_ntt_fwd_rows", (2,), (1,), (x.get(),) + args[1:])
    with pytest.raises(ValueError, match="launch configuration"):
        kernels.launch("hepkg_rns_ntt_fwd_rows", (2,), (2048,), args)


# ---------------------------------------------------------------------- the CuPy path equals numpy
@pytest.mark.parametrize("name", ["rns-test-4096-d3", "rns-test-8192-d4"])
def test_cupy_path_is_bit_identical_to_numpy(cp, name):
    """Same seed and plaintext: keys, encryption, product, relinearization, rescale, rotation and hoisted
    rotations (at levels 0 and 1, so every table of a lower level is used) agree bit for bit."""
    host, dev = (CKKS(name, xp=xp, seed=11, insecure=True, rotations=[1, 5]) for xp in ("numpy", "cupy"))
    assert all((x.get() == y).all() for x, y in zip(dev.keys.pk, host.keys.pk))
    values = np.random.default_rng(3).uniform(-1, 1, host.slots)
    pt = host.encode(values)
    a_h, a_d = host.encrypt(pt), dev.encrypt(Plaintext(cp.asarray(pt.data), pt.level, pt.scale))
    for op, run in RNS_CIRCUIT.items():
        want, got = run(host, a_h), dev.download(run(dev, a_d))
        assert (got.level, got.scale) == (want.level, want.scale), op
        assert (got.data == want.data).all(), op
    np.testing.assert_allclose(dev.decrypt(a_d), values, atol=1e-6)


def test_encode_takes_device_arrays(cp):
    eng = CKKS("rns-test-4096-d3", xp="cupy", seed=2, insecure=True)
    values = np.linspace(-1, 1, eng.slots)
    got = eng.encode(cp.asarray(values))
    want = eng.encode(values)
    assert (got.data.get() == want.data.get()).all()
    np.testing.assert_allclose(eng.decrypt(eng.encrypt(got)).real, values, atol=1e-6)


# ---------------------------------------------------------------------- launch counts at the face-search size
@pytest.fixture(scope="module")
def counts(cp):
    from hepkg.bench.rns_ops import launch_counts
    return launch_counts("rns-ckks-32768-d9", hoist=3)


@pytest.mark.parametrize("op", list(LAUNCHES))
def test_launches_per_op_at_32768_d9(counts, op):
    if op == "hoist_step":
        got = (counts["hoist_3"].total - counts["hoist_1"].total) / 2
    else:
        got = counts[op].total
    assert got <= TARGETS[op]
    assert got == LAUNCHES[op], dict(counts.get(op, counts["hoist_3"]).launches)


def test_no_uploads_or_downloads_after_the_first_call(counts):
    """Constants, twiddles and automorphism indices stay on the device, built once per context."""
    assert all(c.uploads == 0 and c.downloads == 0 for c in counts.values()), \
        {op: (c.uploads, c.downloads) for op, c in counts.items()}


def test_gpu_tests_and_the_backend_pass_on_the_standin():
    """The engine's CuPy tests (marker gpu) and the rns backend with HEPKG_RNS_XP=cupy, run in a fresh
    interpreter whose ``cupy`` is the stand-in: every operation of the CuPy path under its strictness."""
    import os
    import subprocess
    import sys

    code = ("from hepkg.rns import standin; standin.install(); import pytest, sys; "
            "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '-m', 'gpu or not gpu', "
            "'tests/test_rns_ckks.py', 'tests/test_rns_device.py', 'tests/test_rns_backend.py', "
            "'-k', 'cupy or backend']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "HEPKG_RNS_XP": "cupy"}, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and "skipped" not in out.stdout, out.stdout[-1000:]
