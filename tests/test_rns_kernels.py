"""Every kernel of the engine against its numpy twin (hepkg.rns.twins), without a GPU.

The CUDA sources of hepkg.rns.kernels: compiled by NVRTC (the CUDA wheel on PyPI, nvidia-cuda-nvrtc-cu12) for
compute_90, and compiled as C++ (g++, a 128-bit stand-in for __umul64hi; the blocks of the grid one after
another, a block's threads one after another, or, for the kernels that synchronize (the NTT's), as that many
threads with __syncthreads a barrier and __shared__ memory shared by them).
The compiled CPU kernels of hepkg.rns.cpu (numba), at one thread and at two. Each runs on the launches the
engine makes for a whole circuit (recorded on the CuPy stand-in) and, for the element-wise kernels, on random
and worst-case residues of 60-, 59- and 31-bit primes; every output must equal the twin's bit for bit."""
import ctypes
import pathlib
import re
import shutil
import subprocess

import numpy as np
import pytest

from hepkg.rns import kernels, standin, twins
from hepkg.rns.arith import Modulus, ntt_primes

NAMES = list(kernels.RAW) + list(kernels.ELEMENTWISE)


# ---------------------------------------------------------------------- NVRTC
@pytest.fixture(scope="module")
def nvrtc():
    mod = pytest.importorskip("nvidia.cuda_nvrtc", reason="needs nvidia-cuda-nvrtc-cu12 (pinned in pyproject)")
    libs = sorted(pathlib.Path(list(mod.__path__)[0], "lib").glob("libnvrtc.so.*"))
    lib = ctypes.CDLL(str(libs[0]))
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p
    return lib


def _compile(lib, src: str, name: str) -> str:
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), f"{name}.cu".encode(), 0, None, None) == 0
    opts = [b"--gpu-architecture=compute_90", b"--std=c++17"]
    try:
        rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        assert rc == 0, f"{name}: {lib.nvrtcGetErrorString(rc).decode()}\n{log.value.decode()}"
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        ptx = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetPTX(prog, ptx)
        return ptx.value.decode()
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


@pytest.mark.parametrize("name", NAMES)
def test_kernel_compiles_with_nvrtc(nvrtc, name):
    ptx = _compile(nvrtc, kernels.source(name), name)
    assert re.search(rf"\.entry\s+{name}\s*\(", ptx), f"{name}: no entry point in the PTX"


def test_nvrtc_reports_errors(nvrtc):
    with pytest.raises(AssertionError, match="undefined"):
        _compile(nvrtc, kernels.PRELUDE + 'extern "C" __global__ void k(u64* a) { a[0] = nope; }', "k")


# ---------------------------------------------------------------------- the same sources as C++
_EMULATION = r"""
#include <barrier>
#include <cmath>
#include <cstddef>
#include <thread>
#include <vector>
struct Dim3 { int x, y, z; };
static Dim3 blockIdx, blockDim, gridDim;
static thread_local Dim3 threadIdx;
static std::barrier<>* block_barrier_;
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __syncthreads() block_barrier_->arrive_and_wait()
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
"""
#: threads per block of the synchronizing kernels when run as C++ (any count is valid: the kernels stride)
_THREADS = 4
_CTYPES = {"u64": ctypes.c_uint64, "unsigned long long": ctypes.c_uint64, "long long": ctypes.c_int64,
           "int": ctypes.c_int32, "double": ctypes.c_double}


def _params(src: str, name: str) -> list:
    body = re.search(r"void\s+" + name + r"\s*\(([^)]*)\)", src).group(1)
    out = []
    for p in body.split(","):
        p = " ".join(p.replace("const", " ").split())
        pointer = "*" in p
        ctype, pname = p.replace("*", " ").rsplit(None, 1)
        out.append((" ".join(ctype.split()), pointer, pname))
    return out


@pytest.fixture(scope="module")
def cpp(tmp_path_factory):
    """{kernel name: a call (grid, block, *args) running the kernel's source compiled as C++}."""
    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    parts = [_EMULATION, kernels.PRELUDE]
    sigs = {}
    for name in NAMES:
        src = kernels.source(name)[len(kernels.PRELUDE):]
        parts.append(src.replace('extern "C" __global__ void', "static void"))
        params = _params(src, name)
        sigs[name] = params
        decl = ", ".join(f"{t}{'*' if ptr else ''} {n}" for t, ptr, n in params)
        args = ", ".join(n for *_, n in params)
        if "__syncthreads" in src:      # a block's threads as threads, a barrier between them
            body = (f"    std::barrier<> bar_(bx_); block_barrier_ = &bar_;\n"
                    f"    std::vector<std::thread> ts_;\n"
                    f"    for (int t_ = 0; t_ < bx_; t_++) ts_.emplace_back([&, t_] {{\n"
                    f"      threadIdx = {{t_, 0, 0}}; {name}({args}); }});\n"
                    f"    for (auto& t_ : ts_) t_.join();\n")
        else:
            body = f"    for (int t_ = 0; t_ < bx_; t_++) {{ threadIdx = {{t_, 0, 0}}; {name}({args}); }}\n"
        parts.append(f'extern "C" void launch_{name}(int gx_, int gy_, int bx_, {decl}) {{\n'
                     f"  gridDim = {{gx_, gy_, 1}}; blockDim = {{bx_, 1, 1}};\n"
                     f"  for (int y_ = 0; y_ < gy_; y_++) for (int x_ = 0; x_ < gx_; x_++) {{\n"
                     f"    blockIdx = {{x_, y_, 0}};\n{body}  }}\n}}\n")
    d = tmp_path_factory.mktemp("rns_kernels_cpp")
    (d / "k.cpp").write_text("\n".join(parts))
    out = subprocess.run(["g++", "-std=c++20", "-O2", "-ffp-contract=off", "-pthread", "-shared", "-fPIC", "-o",
                          str(d / "k.so"), str(d / "k.cpp")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    lib = ctypes.CDLL(str(d / "k.so"))

    def caller(name):
        fn = getattr(lib, f"launch_{name}")
        fn.argtypes = [ctypes.c_int] * 3 + [ctypes.c_void_p if ptr else _CTYPES[t] for t, ptr, _ in sigs[name]]

        def call(grid, block, *args):
            gx, gy = (grid + (1,))[:2]
            bx = min(_THREADS, block[0]) if "__syncthreads" in kernels.source(name) else block[0]
            fn(gx, gy, bx, *[a.ctypes.data if isinstance(a, np.ndarray) else a.item() for a in args])
        return call
    return {name: caller(name) for name in NAMES}


@pytest.fixture(scope="module")
def launches():
    """Every raw-kernel launch of a circuit on the stand-in (arguments before, the twin's after)."""
    from hepkg.rns import CKKS
    standin.install()
    standin.RECORD = []
    try:
        eng = CKKS("rns-test-8192-d4", xp="cupy", rotations=[1, 7])
        ct = eng.encrypt(np.linspace(-1, 1, eng.slots))
        ct = eng.rescale(eng.relinearize(eng.mul(ct, ct)))
        eng.rotate_hoisted(eng.rotate(ct, 7), [1, 7])
        eng.decrypt(eng.rescale(eng.relinearize(eng.mul(ct, ct))))
        return standin.RECORD
    finally:
        standin.RECORD = None
        standin.uninstall()


def _check_launches(run, launches, name):
    mine = [rec for rec in launches if rec[0] == name]
    assert mine, f"the circuit never launched {name}"
    for _, grid, block, before, after in mine[:6]:
        args = [a.copy() for a in before]
        run(grid, block, *args)
        for i, (got, want) in enumerate(zip(args, after)):
            assert got.tobytes() == want.tobytes(), f"{name}: argument {i} differs from the twin"


@pytest.mark.parametrize("name", list(kernels.RAW))
def test_raw_kernel_as_cpp_equals_its_twin(cpp, launches, name):
    _check_launches(cpp[name], launches, name)


@pytest.fixture(scope="module", params=[1, 2], ids=["1thread", "2threads"])
def numba_kernels(request):
    cpu = pytest.importorskip("hepkg.rns.cpu", reason="needs numba (pinned in pyproject)")
    before = cpu.threads()
    cpu.set_threads(request.param)
    yield cpu
    cpu.set_threads(before)


def test_numba_has_every_kernel():
    cpu = pytest.importorskip("hepkg.rns.cpu", reason="needs numba (pinned in pyproject)")
    assert set(cpu.RAW) == set(kernels.RAW)
    assert all(cpu.elementwise(name) is not None for name in kernels.ELEMENTWISE)


@pytest.mark.parametrize("name", list(kernels.RAW))
def test_raw_kernel_compiled_by_numba_equals_its_twin(numba_kernels, launches, name):
    _check_launches(lambda grid, block, *args: numba_kernels.launch(name, grid, block, args), launches, name)


def test_numba_kernels_refuse_non_contiguous_arrays(numba_kernels):
    a = np.zeros((4, 8), dtype=np.uint64)[:, ::2]
    with pytest.raises(ValueError, match="C-contiguous"):
        numba_kernels.launch("hepkg_rns_tensor", None, None, (a, a, a, np.int32(4), np.int32(1), a, a, a, a))


def _residues(primes, n, rng):
    """Random residues with the worst cases first: 0, 1, q-1, q-2, floor(q/2) and 2^k - 1 below q."""
    rows = []
    for q in primes:
        worst = [0, 1, q - 1, q - 2, q // 2, (1 << (q.bit_length() - 1)) - 1]
        rows.append(np.r_[np.array(worst, dtype=np.uint64), rng.integers(0, q, n - len(worst), dtype=np.uint64)])
    return np.stack(rows)


def _elementwise_cases(name, rng):
    """(arguments, their twin's output, moduli broadcast to the output) of an element-wise kernel."""
    primes = ntt_primes(60, 4096, 2) + ntt_primes(59, 4096, 1) + ntt_primes(31, 4096, 1)
    m = Modulus(primes)
    n = 4096
    a, b = _residues(primes, n, rng), _residues(primes, n, rng)[:, ::-1].copy()
    full = lambda col: np.ascontiguousarray(np.broadcast_to(col, a.shape))  # noqa: E731
    w = _residues(primes, n, rng)
    ws = np.stack([np.array([(int(x) << 64) // q for x in row], dtype=np.uint64) for row, q in zip(w, primes)])
    args = {"hepkg_rns_mul_mod": (a, b, full(m.q), full(m.mu), full(m.lo_shift), full(m.out_lo)),
            "hepkg_rns_mul_shoup": (rng.integers(0, 2 ** 64 - 1, a.shape, dtype=np.uint64, endpoint=True), w, ws,
                                    full(m.q)),
            "hepkg_rns_add_mod": (a, b, full(m.q)), "hepkg_rns_sub_mod": (a, b, full(m.q)),
            "hepkg_rns_neg_mod": (a, full(m.q))}[name]
    return args, twins.TWINS[name](*args), full(m.q)


@pytest.mark.parametrize("name", list(kernels.ELEMENTWISE))
def test_elementwise_kernel_as_cpp_equals_its_twin(cpp, name):
    args, want, q = _elementwise_cases(name, np.random.default_rng(7))
    got = np.empty_like(want)
    cpp[name]((-(-got.size // 256),), (256,), *args, got, np.int64(got.size))
    assert (got == want).all()
    assert (got < q).all()


@pytest.mark.parametrize("name", list(kernels.ELEMENTWISE))
def test_elementwise_kernel_compiled_by_numba_equals_its_twin(numba_kernels, name):
    args, want, q = _elementwise_cases(name, np.random.default_rng(7))
    got = numba_kernels.elementwise(name)(*args)
    assert got.dtype == np.uint64 and (got == want).all()
    assert (got < q).all()
    cols = [a[:, :1] if a.ndim == 2 and (a == a[:, :1]).all() else a for a in args]   # broadcast moduli
    assert (numba_kernels.elementwise(name)(*cols) == want).all()
