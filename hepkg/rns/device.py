"""Array-module selection, the kernel set of each, explicit host/device transfers and memory checks.

The engine is written against ``xp``, one of three:

- ``numpy``: the CPU reference, every operation a vectorized numpy expression (the kernels' twins);
- :data:`COMPILED`: numpy arrays, with the kernels compiled for the CPU (numba, :mod:`hepkg.rns.cpu`): the
  default on the CPU where numba is installed (``HEPKG_RNS_KERNELS=numpy`` or ``kernels="numpy"`` asks for
  the reference);
- CuPy (NVIDIA GPU), with the CUDA kernels of :mod:`hepkg.rns.kernels`.

The compiled path and CuPy share the compound operations (:mod:`hepkg.rns.fused`): only the kernel set
differs (:func:`kernel_set`). CuPy and numba are imported only when asked for, so hepkg.rns imports with
numpy alone.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import types

import numpy as np

#: the kernel paths by name: what :func:`path` reports
PATHS = ("numpy", "numba", "cuda")


class CompiledNumpy(types.ModuleType):
    """numpy for every array operation; as an array module it selects the compiled CPU kernels."""

    def __getattr__(self, name):
        return getattr(np, name)


#: the array module of the compiled CPU path (numpy arrays, numba kernels)
COMPILED = CompiledNumpy("numpy+numba", "numpy arrays with hepkg.rns.cpu's compiled kernels")


def compiled_available() -> bool:
    """Whether numba is installed (the compiled CPU kernels can run)."""
    return importlib.util.find_spec("numba") is not None


def _cpu(kernels) -> object:
    choice = kernels or os.environ.get("HEPKG_RNS_KERNELS") or ("numba" if compiled_available() else "numpy")
    if choice == "numpy":
        return np
    if choice in ("numba", "compiled"):
        if not compiled_available():
            raise ImportError("the compiled CPU kernels need numba (pip install numba); "
                              "kernels='numpy' runs the numpy reference")
        return COMPILED
    raise ValueError(f"unknown CPU kernels {choice!r}: 'numba' or 'numpy'")

#: fraction of the free memory one allocation may take before it is refused
HEADROOM = 0.9


class DeviceMemoryError(MemoryError):
    """An allocation the memory estimate says will not fit."""


def array_module(xp="numpy", kernels: "str | None" = None):
    """The engine's array module from a name or a module. ``"numpy"`` (or None): the CPU, with ``kernels``
    ``"numba"`` (:data:`COMPILED`) or ``"numpy"`` (numpy itself), default ``HEPKG_RNS_KERNELS``, else numba
    where it is installed; ``"cupy"``: the GPU (ImportError without CuPy, RuntimeError when CuPy sees no CUDA
    device). A module given (numpy, COMPILED, cupy) is returned as it is."""
    if xp is np or xp is COMPILED:
        return xp
    if xp in (None, "numpy"):
        return _cpu(kernels)
    if xp == "cupy" or getattr(xp, "__name__", "") == "cupy" or (xp is sys.modules.get("cupy") and xp is not None):
        try:
            import cupy
        except ImportError as exc:
            raise ImportError("the rns engine on a GPU needs CuPy (pip install cupy-cuda12x); "
                              "use xp='numpy' on the CPU") from exc
        if not cupy.cuda.is_available():
            raise RuntimeError("CuPy is installed but no CUDA device is visible; use xp='numpy' on the CPU")
        return cupy
    raise ValueError(f"unknown array module {xp!r}: 'numpy' or 'cupy'")


def on_gpu(xp) -> bool:
    """Whether ``xp`` is CuPy (or its stand-in): arrays on a device, CUDA streams, events and memory pool."""
    return xp is not np and xp is not COMPILED


def kernel_set(xp):
    """The kernels of a non-reference array module: :mod:`hepkg.rns.cpu` (numba) for COMPILED, else the CUDA
    kernels of :mod:`hepkg.rns.kernels` (the same names, arguments and launch interface)."""
    if xp is COMPILED:
        from . import cpu
        return cpu
    from . import kernels
    return kernels


def path(xp) -> str:
    """The kernel path of an array module: 'numpy', 'numba' or 'cuda' (one of :data:`PATHS`)."""
    return "numpy" if xp is np else "numba" if xp is COMPILED else "cuda"


def to_host(a) -> np.ndarray:
    """A numpy copy of a numpy or CuPy array (download)."""
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.array(a, copy=True)


def to_device(a, xp):
    """``a`` as an array of module ``xp`` (upload; a copy)."""
    return xp.array(a, copy=True)


def free_bytes(xp) -> int:
    """Memory free for new arrays: the GPU's free memory plus what CuPy's pool holds unused, or the
    host's available memory."""
    if on_gpu(xp):
        return int(xp.cuda.runtime.memGetInfo()[0]) + int(xp.get_default_memory_pool().free_bytes())
    try:
        with open("/proc/meminfo") as f:
            info = dict(line.split(":", 1) for line in f)
        return int(info["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        import os
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def check_memory(nbytes: int, what: str, xp) -> None:
    """DeviceMemoryError naming ``what`` when ``nbytes`` exceed HEADROOM of the free memory."""
    free = free_bytes(xp)
    if nbytes > HEADROOM * free:
        where = "GPU" if on_gpu(xp) else "host"
        raise DeviceMemoryError(f"{what} needs about {nbytes / 2**30:.2f} GiB but the {where} has "
                                f"{free / 2**30:.2f} GiB free: use fewer rotation keys (free temporary "
                                f"ones), a smaller ring, or fewer steps at once")
