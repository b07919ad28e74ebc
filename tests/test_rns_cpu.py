"""The rns engine's compiled CPU path (hepkg.rns.cpu, numba): chosen by default where numba is installed, the
numpy reference on request or without numba (the engine says which path it took), bit-identical to the
reference at every operation, threads, fork and concurrent callers. The kernels one by one against their
twins: tests/test_rns_kernels.py."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from conftest import RNS_CIRCUIT
from hepkg.rns import CKKS, device
from hepkg.rns.arith import Modulus, ntt_primes
from hepkg.rns.device import COMPILED, array_module
from hepkg.rns.ntt import NTT

cpu = pytest.importorskip("hepkg.rns.cpu", reason="needs numba (pinned in pyproject)")


def test_path_selection(monkeypatch):
    monkeypatch.delenv("HEPKG_RNS_KERNELS", raising=False)
    assert array_module("numpy") is COMPILED and array_module(None) is COMPILED
    assert array_module("numpy", "numpy") is np and array_module("numpy", "numba") is COMPILED
    assert array_module(np) is np and array_module(COMPILED) is COMPILED
    monkeypatch.setenv("HEPKG_RNS_KERNELS", "numpy")
    assert array_module("numpy") is np
    assert CKKS("rns-test-4096-d3", seed=1, insecure=True).path == "numpy"
    assert CKKS("rns-test-4096-d3", kernels="numba", seed=1, insecure=True).path == "numba"
    with pytest.raises(ValueError, match="'numba' or 'numpy'"):
        array_module("numpy", "fortran")
    monkeypatch.setattr(device, "compiled_available", lambda: False)
    monkeypatch.delenv("HEPKG_RNS_KERNELS")
    assert array_module("numpy") is np
    with pytest.raises(ImportError, match="numba"):
        array_module("numpy", "numba")
    assert not device.on_gpu(COMPILED) and not device.on_gpu(np)


def test_runs_on_numpy_alone_without_numba():
    """numba unimportable: the engine takes the numpy path and says so."""
    code = ("import sys; sys.modules['numba'] = None; import numpy as np; from hepkg.rns import CKKS; "
            "e = CKKS('rns-test-4096-d3', rotations=[1], seed=1, insecure=True); "
            "a = e.encrypt(np.ones(4)); r = e.decrypt(e.rotate(a, 1))[:3].real; "
            "print(e.path, 'numba' in sys.modules and sys.modules['numba'] is not None, abs(r - 1).max() < 1e-6)")
    env = {k: v for k, v in os.environ.items() if k != "HEPKG_RNS_KERNELS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["numpy", "False", "True"]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", ["rns-test-4096-d3", "rns-test-8192-d4"])
def test_compiled_path_is_bit_identical_to_numpy(name, threads):
    before = cpu.threads()
    cpu.set_threads(threads)
    try:
        ref, fast = (CKKS(name, kernels=k, seed=11, insecure=True, rotations=[1, 5]) for k in ("numpy", "numba"))
        assert (ref.path, fast.path) == ("numpy", "numba")
        assert all((x == y).all() for x, y in zip(ref.keys.pk, fast.keys.pk))
        assert (ref.keys.relin.b == fast.keys.relin.b).all() and (ref.keys.galois[5].a == fast.keys.galois[5].a).all()
        values = np.random.default_rng(3).uniform(-1, 1, ref.slots)
        a_r, a_f = ref.encrypt(values), fast.encrypt(values)
        for op, run in RNS_CIRCUIT.items():
            want, got = run(ref, a_r), run(fast, a_f)
            assert (got.level, got.scale) == (want.level, want.scale), op
            assert (got.data == want.data).all(), op
        np.testing.assert_allclose(fast.decrypt(a_f).real, values, atol=1e-6)
    finally:
        cpu.set_threads(before)


def _worst_rows(primes, n, rng):
    """Per prime: every residue q - 1, alternating 0 / q - 1, q / 2, random."""
    out = []
    for q in primes:
        rows = [np.full(n, q - 1), np.tile([0, q - 1], n // 2), np.full(n, q // 2), rng.integers(0, q, n)]
        out.append(np.stack(rows).astype(np.uint64))
    return np.stack(out, axis=1)          # (4, k, n)


def test_ntt_on_worst_case_rows():
    """Lazy reduction (forward in [0, 4q), inverse in [0, 2q)) at the largest primes allowed (60 bits) returns
    what the numpy stages return, and the inverse undoes the forward."""
    n = 1024
    primes = ntt_primes(60, n, 2) + ntt_primes(59, n, 1) + ntt_primes(40, n, 1)
    ref, fast = NTT(n, Modulus(primes)), NTT(n, Modulus(primes, COMPILED))
    x = _worst_rows(primes, n, np.random.default_rng(5))
    f = fast.forward(x)
    assert (f == ref.forward(x)).all()
    assert (f < np.asarray(primes, dtype=np.uint64)[:, None]).all()
    assert (fast.inverse(f) == x).all() and (fast.inverse(x) == ref.inverse(x)).all()


def test_threads_follow_the_environment():
    code = "from hepkg.rns import cpu; print(cpu.threads())"
    for env, want in ({"HEPKG_RNS_THREADS": "1"}, "1"), ({"OMP_NUM_THREADS": "1"}, "1"), \
                     ({"HEPKG_RNS_THREADS": "2", "OMP_NUM_THREADS": "1"}, "2"):
        base = {k: v for k, v in os.environ.items() if k not in ("HEPKG_RNS_THREADS", "OMP_NUM_THREADS")}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**base, **env})
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip() == str(min(int(want), os.cpu_count())), env
    before = cpu.threads()
    try:
        assert cpu.set_threads(1) == 1 and cpu.threads() == 1
        assert cpu.set_threads(10 ** 6) == cpu.threads() >= 1
    finally:
        cpu.set_threads(before)


def test_concurrent_callers_and_fork():
    """Parallel kernels from several Python threads, and in a forked child after the parent used them."""
    before = cpu.threads()
    cpu.set_threads(2)
    try:
        eng = CKKS("rns-test-4096-d3", kernels="numba", seed=2, insecure=True, rotations=[1])
        a = eng.encrypt(np.linspace(-1, 1, 8))
        want = eng.rotate(a, 1).data
        out = []
        workers = [threading.Thread(target=lambda: out.extend(eng.rotate(a, 1).data for _ in range(5)))
                   for _ in range(3)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert len(out) == 15 and all((o == want).all() for o in out)
        pid = os.fork()
        if pid == 0:
            os._exit(0 if (eng.rotate(a, 1).data == want).all() else 1)
        assert os.waitpid(pid, 0)[1] == 0
    finally:
        cpu.set_threads(before)


def _peak(op) -> int:
    """Peak bytes numpy allocated during op() (called once before, to size the workspaces)."""
    import tracemalloc
    op()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        op()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_an_op_allocates_its_result_alone():
    """Fixed workspaces (hepkg.rns.workspace): after a first call, a relinearization and a hoisted rotation allocate
    their result and none of their intermediates (ModUp's extensions alone are 1.5x the result here, dnum 3); a
    rotation its result and the automorphism's gather of its input."""
    eng = CKKS("rns-test-4096-d3", kernels="numba", seed=4, insecure=True, rotations=[1])
    a = eng.encrypt(np.linspace(-1, 1, 8))
    prod = eng.mul(a, a)
    size = a.data.nbytes
    assert _peak(lambda: eng.relinearize(prod, rescale=True)) < 1.1 * size * 3 / 4   # one level down
    assert _peak(lambda: eng.rotate_hoisted(a, [1])) < 1.1 * size
    assert _peak(lambda: eng.rotate(a, 1)) < 2.1 * size


def test_workspace_bytes_is_what_a_thread_keeps_after_the_top_levels_ops():
    """hepkg.rns.fused.workspace_bytes (the GPU memory estimate counts it per stream) against the buffers a fresh
    thread holds after a rotation, a hoisted rotation, a relinearization with its rescale and a rescale, all at the
    top level."""
    from hepkg.rns.fused import workspace_bytes
    eng = CKKS("rns-test-8192-d4", kernels="numba", seed=6, insecure=True, rotations=[1, 5])
    a = eng.encrypt(np.linspace(-1, 1, 16))
    held = []

    def ops():
        eng.rotate(a, 1)
        eng.rotate_hoisted(a, [1, 5])
        eng.relinearize(eng.mul(a, a), rescale=True)
        eng.rescale(eng.mul_plain(a, eng.encode(np.full(16, 0.5), a.level)))
        held.append(sum(b.nbytes for b in eng.bases.fused.work._local.bufs.values()))
    t = threading.Thread(target=ops)
    t.start()
    t.join()
    b = eng.bases
    assert held == [workspace_bytes(b.n, b.nq, len(b.p_rows), len(b.digits(0, eng.dnum)))]


def test_workspaces_grow_and_stay_apart_between_threads():
    """A workspace first sized at a lower level grows at the top level; threads rotating different ciphertexts at
    different levels at once each get their own buffers: every result bit-identical to the numpy reference."""
    ref, fast = (CKKS("rns-test-8192-d4", kernels=k, seed=6, insecure=True, rotations=[1, 5]) for k in ("numpy", "numba"))
    values = [np.linspace(-1, 1, 16) * (i + 1) / 4 for i in range(4)]
    cts = {}
    for name, eng in (("ref", ref), ("fast", fast)):
        top = [eng.encrypt(v) for v in values]
        cts[name] = [eng.relinearize(eng.mul(c, c), rescale=True) if i % 2 else c for i, c in enumerate(top)]
    want = [ref.rotate(c, 5).data for c in cts["ref"]]
    assert (fast.rotate(cts["fast"][1], 5).data == want[1]).all()       # the workspace sized at level 1 first
    assert (fast.rotate(cts["fast"][0], 5).data == want[0]).all()       # then grown to the top level
    got = {}

    def work(i):
        got[i] = [fast.rotate(cts["fast"][i], 5).data for _ in range(4)]
    workers = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert all((g == want[i]).all() for i in range(4) for g in got[i])
