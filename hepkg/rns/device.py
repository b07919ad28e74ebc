"""Array-module selection, explicit host/device transfers and memory checks.

The engine is written against ``xp``: numpy (the CPU reference) or CuPy (NVIDIA GPU).
CuPy is imported only when asked for, so hepkg.rns imports with numpy alone.
"""
from __future__ import annotations

import sys

import numpy as np

#: fraction of the free memory one allocation may take before it is refused
HEADROOM = 0.9


class DeviceMemoryError(MemoryError):
    """An allocation the memory estimate says will not fit."""


def array_module(xp="numpy"):
    """numpy or cupy, from a name or the module itself; ImportError without CuPy, RuntimeError when CuPy
    sees no CUDA device."""
    if xp in (None, "numpy", np):
        return np
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


def to_host(a) -> np.ndarray:
    """A numpy copy of a numpy or CuPy array (download)."""
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.array(a, copy=True)


def to_device(a, xp):
    """``a`` as an array of module ``xp`` (upload; a copy)."""
    return xp.array(a, copy=True)


def free_bytes(xp) -> int:
    """Memory free for new arrays: the GPU's free memory plus what CuPy's pool holds unused, or the
    host's available memory."""
    if xp is not np:
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
        where = "GPU" if xp is not np else "host"
        raise DeviceMemoryError(f"{what} needs about {nbytes / 2**30:.2f} GiB but the {where} has "
                                f"{free / 2**30:.2f} GiB free: use fewer rotation keys (free temporary "
                                f"ones), a smaller ring, or fewer steps at once")
