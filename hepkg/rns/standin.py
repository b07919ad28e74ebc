"""A strict CuPy stand-in: the engine's CuPy path run on the CPU (numpy underneath), counting kernel launches.

``install()`` puts it in ``sys.modules["cupy"]`` (``uninstall()`` takes it out); ``counting()`` measures
launches, uploads and downloads of a block. Stricter than CuPy where CuPy would hide a cost or a bug:

- a host (numpy) array entering a device operation, an implicit conversion of a device array to numpy
  (``np.asarray(dev)``), or a host index array raises TypeError; transfers are ``asarray``/``array`` of
  host data (an upload) and ``.get()`` (a download), counted;
- integer operands whose promotion would give floats (uint64 with int64) raise TypeError;
- an ``ElementwiseKernel``'s arguments must carry the declared dtypes exactly (device arrays or numpy
  scalars); a ``RawKernel``'s are checked against the C signature of its source (pointers: device arrays
  of the pointed type; scalars: numpy scalars of the exact C type), and grid and block must be valid;
- every device operation that runs a kernel counts one launch (element-wise ops, reductions, copies,
  gathers and scatters, memsets, ``astype``, FFTs); views (basic slicing, contiguous reshapes) and
  ``empty`` count none.

A kernel runs its numpy twin, registered by kernel name in :data:`hepkg.rns.twins.TWINS` (ElementwiseKernel:
``twin(*inputs) -> output``; RawKernel: ``twin(grid, block, *args)`` writing into its output arrays).
"""
from __future__ import annotations

import builtins
import collections
import contextlib
import re
import sys
import types

import numpy as np

class Counts:
    """Launches by kernel name, uploads and downloads."""

    def __init__(self):
        self.launches = collections.Counter()
        self.uploads = 0
        self.downloads = 0

    @property
    def total(self) -> int:
        return builtins.sum(self.launches.values())


_COUNTS = Counts()
#: device state the tests may set: visible devices, bytes free on the device, bytes cached free in the pool, and
#: the properties the device reports (an H100 SXM's: kHz, bits)
STATE = dict(devices=1, free=16 << 30, pool_free=0,
             properties=dict(name=b"stand-in (H100 SXM properties)", multiProcessorCount=132, clockRate=1980000,
                             memoryClockRate=2619000, memoryBusWidth=5120, totalGlobalMem=80 << 30))
#: a list to record raw-kernel launches in: (name, grid, block, arguments before, arguments after); None: off
RECORD = None


def _launch(name: str) -> None:
    _COUNTS.launches[name] += 1


@contextlib.contextmanager
def counting():
    """Counts of the launches, uploads and downloads made inside the block."""
    global _COUNTS
    outer, _COUNTS = _COUNTS, Counts()
    try:
        yield _COUNTS
    finally:
        inner, _COUNTS = _COUNTS, outer
        outer.launches.update(inner.launches)
        outer.uploads += inner.uploads
        outer.downloads += inner.downloads


def _host_error(what) -> TypeError:
    return TypeError(f"cupy stand-in: a host value ({type(what).__name__}) entered a device operation; "
                     f"upload it with cupy.asarray first")


def _unwrap(x):
    """numpy data of a device operand (device arrays, Python and numpy scalars); host arrays raise."""
    if isinstance(x, ndarray):
        return x._a
    if isinstance(x, (bool, int, float, complex, np.generic)) or x is None:
        return x
    if isinstance(x, (slice, type(Ellipsis))):
        return x
    raise _host_error(x)


def _check_promotion(args, out) -> None:
    kinds = {a.dtype.kind for a in args if isinstance(a, (np.ndarray, np.generic))}
    if {"u", "i"} <= kinds and getattr(out, "dtype", np.dtype(np.uint64)).kind == "f":
        raise TypeError("cupy stand-in: signed and unsigned integer operands promote to float64")


def _wrap(x):
    return ndarray(x) if isinstance(x, np.ndarray) else x


def _reduction(name):
    """A reduction method (one launch)."""
    def method(self, axis=None, keepdims=False):
        _launch(name)
        return ndarray(np.asarray(getattr(self._a, name)(axis=axis, keepdims=keepdims)))
    return method


class ndarray:  # noqa: N801 - the name CuPy uses
    """A device array: a numpy array no numpy function may see implicitly."""

    __slots__ = ("_a",)
    __array_ufunc__ = None        # numpy operators with a device operand defer here, and raise

    def __init__(self, a: np.ndarray):
        self._a = a

    # ---- metadata (no launch)
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: self._a.flags)

    real = property(lambda self: ndarray(self._a.real))
    imag = property(lambda self: ndarray(self._a.imag))

    @property
    def base(self):
        return None if self._a.base is None else ndarray(self._a.base)

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self):
        return (ndarray(v) for v in self._a)

    def __repr__(self) -> str:
        return f"standin.ndarray(shape={self.shape}, dtype={self.dtype})"

    # ---- transfers
    def get(self) -> np.ndarray:
        _COUNTS.downloads += 1
        return self._a.copy()

    def __array__(self, *args, **kwargs):
        raise TypeError("cupy stand-in: implicit conversion to a NumPy array is not allowed; use .get()")

    def _scalar(self):
        if self._a.size != 1:
            raise TypeError("cupy stand-in: only size-1 arrays convert to Python scalars")
        _COUNTS.downloads += 1
        return self._a.reshape(()).item()

    def __float__(self):
        return float(self._scalar())

    def __int__(self):
        return int(self._scalar())

    def __bool__(self):
        return bool(self._scalar())

    def __index__(self):
        raise TypeError("cupy stand-in: a device array is not a host index")

    # ---- views and copies
    def reshape(self, *shape):
        out = self._a.reshape(*shape)
        if not np.shares_memory(out, self._a):
            _launch("copy")
        return ndarray(out)

    def astype(self, dtype, copy=True):
        _launch("astype")
        return ndarray(self._a.astype(dtype))

    def copy(self):
        _launch("copy")
        return ndarray(self._a.copy())

    all, any, sum, max, min = (_reduction(n) for n in ("all", "any", "sum", "max", "min"))

    def ravel(self):
        return self.reshape(-1)

    def view(self, dtype):
        return ndarray(self._a.view(dtype))

    @staticmethod
    def _key(key):
        parts = key if isinstance(key, tuple) else (key,)
        fancy = False
        out = []
        for p in parts:
            if isinstance(p, ndarray):
                if p.dtype.kind not in "iub":
                    raise TypeError(f"cupy stand-in: index array of dtype {p.dtype}")
                fancy = True
                out.append(p._a)
            elif isinstance(p, np.ndarray) or isinstance(p, (list, tuple)):
                raise _host_error(p)
            else:
                out.append(p)
        return (tuple(out) if isinstance(key, tuple) else out[0]), fancy

    def __getitem__(self, key):
        k, fancy = self._key(key)
        out = self._a[k]
        if fancy:                                   # CuPy's take gives a new C-ordered array
            _launch("take")
            out = np.ascontiguousarray(out)
        return ndarray(out) if isinstance(out, np.ndarray) else ndarray(np.asarray(out))

    def __setitem__(self, key, value):
        k, fancy = self._key(key)
        v = _unwrap(value)
        if isinstance(v, np.ndarray) and v.dtype != self.dtype and (v.dtype.kind, self.dtype.kind) != ("u", "u"):
            _check_promotion([v, self._a], np.empty(0, self.dtype))
        _launch("scatter" if fancy else "copy")
        self._a[k] = v

    # ---- operators: one launch each
    def _bin(self, other, op, name, reflect=False):
        o = _unwrap(other)
        args = (o, self._a) if reflect else (self._a, o)
        out = op(*args)
        _check_promotion(args, out)
        _launch(name)
        return _wrap(out)

    def _inplace(self, other, op, name):
        o = _unwrap(other)
        _launch(name)
        op(self._a, o, out=self._a)
        return self


def _operator(op, name):
    return (lambda self, other: self._bin(other, op, name),
            lambda self, other: self._bin(other, op, name, reflect=True),
            lambda self, other: self._inplace(other, op, name))


for _dunder, _op in {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
                     "floordiv": np.floor_divide, "mod": np.remainder, "and": np.bitwise_and,
                     "or": np.bitwise_or, "xor": np.bitwise_xor, "lshift": np.left_shift,
                     "rshift": np.right_shift}.items():
    _f, _r, _i = _operator(_op, _dunder)
    setattr(ndarray, f"__{_dunder}__", _f)
    setattr(ndarray, f"__r{_dunder}__", _r)
    setattr(ndarray, f"__i{_dunder}__", _i)
for _dunder, _op in {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
                     "eq": np.equal, "ne": np.not_equal}.items():
    setattr(ndarray, f"__{_dunder}__", (lambda op, name: lambda self, other: self._bin(other, op, name))(_op, _dunder))
ndarray.__neg__ = lambda self: (_launch("negative"), ndarray(-self._a))[1]
ndarray.__abs__ = lambda self: (_launch("absolute"), ndarray(np.abs(self._a)))[1]
ndarray.__hash__ = None


# ---------------------------------------------------------------------- module functions
def _device_fn(np_fn, name):
    def fn(*args, out=None, **kwargs):
        raw = [_unwrap(a) for a in args]
        if out is not None:
            if not isinstance(out, ndarray):
                raise _host_error(out)
            kwargs["out"] = out._a
        res = np_fn(*raw, **kwargs)
        _check_promotion(raw, res)
        _launch(name)
        return out if out is not None else _wrap(res)
    fn.__name__ = name
    return fn


for _name in ("minimum", "maximum", "subtract", "add", "multiply", "rint", "floor", "abs", "absolute", "conj",
              "where", "sum", "max", "min", "exp", "sqrt", "log", "cos", "sin", "remainder", "right_shift",
              "left_shift", "bitwise_and", "bitwise_or", "less", "greater_equal", "all", "any", "prod"):
    globals()[_name] = _device_fn(getattr(np, _name), _name)

for _t in ("uint64", "int64", "uint32", "int32", "uint8", "float64", "complex128", "bool_", "int8"):
    globals()[_t] = getattr(np, _t)
float32 = np.float32


def _from_host(a, dtype=None, copy=True):
    if isinstance(a, ndarray):
        if dtype is not None and np.dtype(dtype) != a.dtype:
            _launch("astype")
            return ndarray(a._a.astype(dtype))
        if copy:
            _launch("copy")
            return ndarray(a._a.copy())
        return a
    if isinstance(a, (list, tuple)) and builtins.any(isinstance(x, ndarray) for x in a):
        raise TypeError("cupy stand-in: a list of device arrays is not an array; use stack")
    _COUNTS.uploads += 1
    return ndarray(np.array(a, dtype=dtype, copy=True))


def asarray(a, dtype=None):
    return _from_host(a, dtype, copy=False)


def array(a, dtype=None, copy=True):
    return _from_host(a, dtype, copy=copy)


def empty(shape, dtype=np.float64):
    return ndarray(np.empty(shape, dtype=dtype))


def zeros(shape, dtype=np.float64):
    _launch("memset")
    return ndarray(np.zeros(shape, dtype=dtype))


def ones(shape, dtype=np.float64):
    _launch("fill")
    return ndarray(np.ones(shape, dtype=dtype))


def empty_like(a, dtype=None):
    return ndarray(np.empty_like(_unwrap(a), dtype=dtype))


def zeros_like(a, dtype=None):
    _launch("memset")
    return ndarray(np.zeros_like(_unwrap(a), dtype=dtype))


def arange(*args, dtype=None):
    _launch("arange")
    return ndarray(np.arange(*args, dtype=dtype))


def stack(arrays, axis=0):
    _launch("concatenate")
    return ndarray(np.stack([_unwrap_array(a) for a in arrays], axis=axis))


def concatenate(arrays, axis=0):
    _launch("concatenate")
    return ndarray(np.concatenate([_unwrap_array(a) for a in arrays], axis=axis))


def _unwrap_array(a):
    if not isinstance(a, ndarray):
        raise _host_error(a)
    return a._a


def take(a, indices, axis=None):
    _launch("take")
    return ndarray(np.take(_unwrap_array(a), _unwrap_array(indices), axis=axis))


def ascontiguousarray(a):
    a = _unwrap_array(a)
    if a.flags.c_contiguous:
        return ndarray(a)
    _launch("copy")
    return ndarray(np.ascontiguousarray(a))


def copyto(dst, src):
    _launch("copy")
    np.copyto(_unwrap_array(dst), _unwrap(src))


def shares_memory(a, b):
    return np.shares_memory(_unwrap_array(a), _unwrap_array(b))


fft = types.SimpleNamespace(fft=_device_fn(np.fft.fft, "cufft"), ifft=_device_fn(np.fft.ifft, "cufft"))


# ---------------------------------------------------------------------- kernels
_C_TYPES = {"unsigned long long": np.uint64, "u64": np.uint64, "long long": np.int64, "int": np.int32,
            "unsigned int": np.uint32, "double": np.float64}


def _twin(name):
    from hepkg.rns.twins import TWINS
    if name not in TWINS:
        raise KeyError(f"cupy stand-in: no numpy twin registered for kernel {name!r}")
    return TWINS[name]


class ElementwiseKernel:
    """Typed element-wise kernel: arguments broadcast; the twin computes the output from the inputs."""

    def __init__(self, in_params: str, out_params: str, operation: str, name: str = "kernel", **kwargs):
        self.inputs = [p.split() for p in in_params.split(",")]
        self.outputs = [p.split() for p in out_params.split(",")]
        if len(self.outputs) != 1:  # every kernel of hepkg.rns.kernels has one output
            raise ValueError(f"{name}: the stand-in's element-wise kernels take exactly one output parameter, "
                             f"got {out_params!r}")
        self.name, self.operation = name, operation

    def __call__(self, *args):
        if len(args) != len(self.inputs):
            raise TypeError(f"{self.name}: {len(self.inputs)} arguments expected, got {len(args)}")
        raw = []
        for (ctype, pname), a in zip(self.inputs, args):
            if not isinstance(a, (ndarray, np.generic)):
                raise TypeError(f"{self.name}: argument {pname} must be a device array or numpy scalar, "
                                f"got {type(a).__name__}")
            if a.dtype != np.dtype(ctype):
                raise TypeError(f"{self.name}: argument {pname} has dtype {a.dtype}, declared {ctype}")
            raw.append(_unwrap(a))
        shape = np.broadcast_shapes(*(np.shape(r) for r in raw))
        out = np.asarray(_twin(self.name)(*raw))
        want = np.dtype(self.outputs[0][0])
        if out.shape != shape or out.dtype != want:
            raise TypeError(f"{self.name}: twin gave {out.dtype}{out.shape}, expected {want}{shape}")
        _launch(self.name)
        return ndarray(out)


def _signature(code: str, name: str) -> list:
    m = re.search(r"__global__\s+void\s+" + re.escape(name) + r"\s*\(([^)]*)\)", code)
    if not m:
        raise ValueError(f"kernel {name!r} not found in its source")
    params = []
    for p in m.group(1).split(","):
        p = " ".join(p.replace("const", " ").replace("__restrict__", " ").split())
        pointer = "*" in p
        ctype = p.replace("*", " ").rsplit(" ", 1)[0].strip()
        params.append((np.dtype(_C_TYPES[ctype]), pointer))
    return params


class RawKernel:
    """A CUDA kernel by name: arguments checked against its C signature, its twin run on launch."""

    def __init__(self, code: str, name: str, options=(), **kwargs):
        self.code, self.name = code, name
        self.params = _signature(code, name)

    def __call__(self, grid, block, args, shared_mem=0):
        grid, block = (tuple(g) if isinstance(g, tuple) else (g,) for g in (grid, block))
        valid = builtins.all(isinstance(x, int) and x >= 1 for x in grid + block)
        if not valid or np.prod(block) > 1024 or len(grid) > 3:
            raise ValueError(f"{self.name}: bad launch configuration grid={grid} block={block}")
        if len(args) != len(self.params):
            raise TypeError(f"{self.name}: {len(self.params)} arguments expected, got {len(args)}")
        raw = []
        for i, ((dtype, pointer), a) in enumerate(zip(self.params, args)):
            if pointer:
                if not isinstance(a, ndarray):
                    raise TypeError(f"{self.name}: argument {i} must be a device array, got {type(a).__name__}")
                if not a.flags.c_contiguous:
                    raise TypeError(f"{self.name}: argument {i} is not C-contiguous")
            elif not isinstance(a, np.generic):
                raise TypeError(f"{self.name}: scalar argument {i} must be a numpy scalar, got {type(a).__name__}")
            if a.dtype != dtype:
                raise TypeError(f"{self.name}: argument {i} has dtype {a.dtype}, the kernel takes {dtype}")
            raw.append(a._a if pointer else a)
        _launch(self.name)
        before = None if RECORD is None else [a.copy() for a in raw]
        _twin(self.name)(grid, block, *raw)
        if RECORD is not None:
            RECORD.append((self.name, grid, block, before, [a.copy() for a in raw]))


# ---------------------------------------------------------------------- cuda namespace
class CUDARuntimeError(RuntimeError):
    pass


class _Pool:
    def free_bytes(self) -> int:
        return STATE["pool_free"]

    def used_bytes(self) -> int:
        return 0

    def total_bytes(self) -> int:
        return STATE["pool_free"]

    def free_all_blocks(self) -> None:
        STATE["pool_free"] = 0


_POOL = _Pool()


def _device_count() -> int:
    if not STATE["devices"]:
        raise CUDARuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")
    return STATE["devices"]


class _Device:
    def __init__(self, i=0):
        self.id = i

    def synchronize(self) -> None:
        pass


#: the null stream (work runs in order on the CPU)
_NULL_STREAM = types.SimpleNamespace(ptr=0, synchronize=lambda: None)

cuda = types.SimpleNamespace(
    is_available=lambda: STATE["devices"] > 0,
    runtime=types.SimpleNamespace(getDeviceCount=_device_count, memGetInfo=lambda: (STATE["free"], 80 << 30),
                                  getDeviceProperties=lambda i: dict(STATE["properties"]),
                                  CUDARuntimeError=CUDARuntimeError),
    Device=_Device, get_default_memory_pool=lambda: _POOL,
    get_current_stream=lambda: _NULL_STREAM)
get_default_memory_pool = cuda.get_default_memory_pool


_PREVIOUS: list = []


def install() -> types.ModuleType:
    """Install this module as ``cupy`` (a fresh kernel cache in hepkg.rns) and return it; ``uninstall`` puts
    back what was there (a real CuPy included)."""
    mod = sys.modules[__name__]
    _PREVIOUS.append(sys.modules.get("cupy"))
    sys.modules["cupy"] = mod
    _reset_kernel_caches()
    return mod


def uninstall() -> None:
    previous = _PREVIOUS.pop() if _PREVIOUS else None
    if previous is None:
        sys.modules.pop("cupy", None)
    else:
        sys.modules["cupy"] = previous
    _reset_kernel_caches()


def _reset_kernel_caches() -> None:
    from hepkg.rns import kernels
    kernels.reset()
