"""A description of the machine and software a run used, for ``run.json`` and cache keys."""
from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import os
import platform
import subprocess
import sys

from hepkg.paths import ROOT

#: Distributions whose versions a run records (None where not installed); each a tuple of
#: alternative distribution names (CuPy ships as one wheel per CUDA version).
PACKAGES = {
    "numpy": ("numpy",), "scipy": ("scipy",), "pandas": ("pandas",), "Pyfhel": ("Pyfhel",),
    "openfhe": ("openfhe",), "tenseal": ("tenseal",), "numba": ("numba",),
    "cupy": ("cupy", "cupy-cuda12x", "cupy-cuda11x", "cupy-cuda13x"),
}
#: a virtual machine's free page reporting (virtio-balloon): the least order of the free blocks the guest hands
#: back to its host, which then faults them in afresh on the next touch
PAGE_REPORTING = "/sys/module/page_reporting/parameters/page_reporting_order"
#: the kernel's largest buddy order (MAX_PAGE_ORDER on x86-64): a reporting order above it reports nothing
MAX_PAGE_ORDER = 10


def _run(*cmd: str, cwd=None) -> str | None:
    """stdout of a command, or None when it is missing, fails or hangs."""
    try:
        out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


@functools.lru_cache(maxsize=None)
def cpu_model() -> str:
    """The CPU's marketing name (``/proc/cpuinfo``, ``sysctl`` on macOS), else the architecture."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    if sys.platform == "darwin":
        name = _run("sysctl", "-n", "machdep.cpu.brand_string")
        if name:
            return name
    return platform.processor() or platform.machine() or "unknown"


def cpu_cores() -> tuple[int | None, int | None]:
    """(physical, logical) core counts; physical is None without psutil."""
    try:
        import psutil
    except ImportError:
        return None, os.cpu_count()
    return psutil.cpu_count(logical=False), psutil.cpu_count(logical=True)


def _ram_bytes() -> int | None:
    try:
        import psutil
        return int(psutil.virtual_memory().total)
    except ImportError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def _gpus() -> list[dict] | None:
    """Visible NVIDIA GPUs via nvidia-smi, else via CuPy when importable; None if neither finds one."""
    out = _run("nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader,nounits")
    if out:
        gpus = []
        for line in out.splitlines():
            name, mem, driver = ([part.strip() for part in line.split(",")] + [None, None])[:3]
            try:
                mem = int(float(mem) * 2 ** 20)  # MiB
            except (TypeError, ValueError):
                mem = None
            gpus.append(dict(name=name, memory_bytes=mem, driver=driver))
        return gpus
    if importlib.util.find_spec("cupy") is None:
        return None
    try:
        import cupy
        rt = cupy.cuda.runtime
        props = [rt.getDeviceProperties(i) for i in range(rt.getDeviceCount())]
    except Exception:  # CuPy without a usable CUDA driver or device raises its own error types
        return None
    return [dict(name=p["name"].decode() if isinstance(p["name"], bytes) else p["name"],
                 memory_bytes=int(p["totalGlobalMem"]), driver=None) for p in props] or None


def machine() -> dict:
    """What names this machine: host name, CPU model, core counts and RAM."""
    physical, logical = cpu_cores()
    return dict(node=platform.node(), cpu=cpu_model(), physical_cores=physical, logical_cores=logical,
                ram_bytes=_ram_bytes())


def key_of(described: dict) -> str:
    """12 hex digits naming the machine :func:`machine` describes."""
    import hashlib

    who = [described[k] for k in ("node", "cpu", "physical_cores", "logical_cores", "ram_bytes")]
    return hashlib.sha256(repr(who).encode()).hexdigest()[:12]


def machine_key() -> str:
    """12 hex digits naming this machine (:func:`key_of` :func:`machine`)."""
    return key_of(machine())


def _version(dists: tuple[str, ...]) -> str | None:
    for dist in dists:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def git_state() -> dict:
    """Revision of the checkout hepkg runs from, and whether tracked files differ from it.

    Changes under ``artifacts/`` do not count: a run regenerates them itself. ``changed``
    lists (up to 20 of) the files that make the tree dirty. None where git is unavailable.
    """
    rev = _run("git", "rev-parse", "HEAD", cwd=ROOT)
    status = _run("git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)artifacts",
                  cwd=ROOT) if rev else None
    changed = [line.split(maxsplit=1)[-1] for line in status.splitlines()] if status else []  # "XY path" (stripped)
    return dict(revision=rev, dirty=None if status is None else bool(changed), changed=changed[:20])


def _rns_cpu_kernels() -> str | None:
    """The rns engine's CPU kernel path here ('numba' or 'numpy', :func:`hepkg.rns.device.path`)."""
    from hepkg.rns.device import array_module, path
    try:
        return path(array_module("numpy"))
    except (ImportError, ValueError):
        return None


def page_reporting() -> int | None:
    """The order from which this (virtual) machine reports freed memory to its host, None where it reports none.

    Measured on the bench's 2-vCPU VM: 4 GiB first touched by a fresh process took 3.4-9.4 s with reporting at
    order 9 (the host faults every reported block in again) and 0.25-0.81 s with it off; a process that grows
    inside a timed span pays that (``echo 11 > PAGE_REPORTING`` as root turns it off until reboot)."""
    try:
        with open(PAGE_REPORTING) as f:
            order = int(f.read().strip())
    except (OSError, ValueError):
        return None
    return order if order <= MAX_PAGE_ORDER else None


def system_info() -> dict:
    """CPU, cores, RAM, GPUs, OS, Python, library versions and git revision, JSON-serializable.

    Anything that cannot be determined is None; this never raises for a missing tool.
    """
    import hepkg

    physical, logical = cpu_cores()
    return dict(
        cpu=cpu_model(),
        machine=platform.machine(),
        physical_cores=physical,
        logical_cores=logical,
        ram_bytes=_ram_bytes(),
        gpu=_gpus(),
        os=platform.platform(),
        python=platform.python_version(),
        python_implementation=platform.python_implementation(),
        hepkg=hepkg.__version__,
        versions={name: _version(dists) for name, dists in PACKAGES.items()},
        rns_cpu_kernels=_rns_cpu_kernels(),
        git=git_state(),
        load_average=list(os.getloadavg()) if hasattr(os, "getloadavg") else None,  # timings depend on it
        page_reporting_order=page_reporting(),                                         # and so does this
    )
