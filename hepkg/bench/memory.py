"""Peak memory of a block: resident set size sampled in a thread, plus tracemalloc's Python heap."""
from __future__ import annotations

import threading
import tracemalloc


class PeakMemory:
    """``with PeakMemory() as m: ...`` then, in bytes:

    - ``peak_rss``: the largest resident set size of the process seen during the block,
      sampled every ``interval`` seconds by a background thread (and once at each end);
    - ``baseline_rss``: RSS on entry; ``delta_rss = peak_rss - baseline_rss``;
    - ``py_peak``: tracemalloc's peak of memory allocated through Python's allocators during
      the block, above what was traced on entry. Native allocations made outside them, such
      as the polynomials SEAL, OpenFHE or CuPy allocate, are invisible to tracemalloc and
      show only in RSS. numpy arrays are traced.

    RSS sampling misses a spike shorter than ``interval``; tracemalloc slows allocation-heavy
    Python code, so time and measure memory in separate runs.
    """

    def __init__(self, interval: float = 0.005):
        if interval <= 0:
            raise ValueError(f"interval must be positive, got {interval}")
        self.interval = interval
        self.peak_rss = self.baseline_rss = self.delta_rss = self.py_peak = None

    def _sample(self) -> None:
        self.peak_rss = max(self.peak_rss, self._proc.memory_info().rss)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> "PeakMemory":
        import psutil

        self._proc = psutil.Process()
        self._own_trace = not tracemalloc.is_tracing()
        if self._own_trace:
            tracemalloc.start()
        self._py0 = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        self.baseline_rss = self.peak_rss = self._proc.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hepkg-peak-rss", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        self.py_peak = max(0, tracemalloc.get_traced_memory()[1] - self._py0)
        if self._own_trace:
            tracemalloc.stop()
        self.delta_rss = self.peak_rss - self.baseline_rss

    def as_dict(self) -> dict:
        """The measurements as a result-row fragment."""
        return dict(peak_rss=self.peak_rss, delta_rss=self.delta_rss, py_peak=self.py_peak)

    def __repr__(self) -> str:
        if self.py_peak is None:
            return "PeakMemory(running)"
        mib = 2 ** 20
        return (f"PeakMemory(peak_rss={self.peak_rss / mib:.1f} MiB, delta_rss={self.delta_rss / mib:.1f} MiB, "
                f"py_peak={self.py_peak / mib:.1f} MiB)")


def reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark of this process (Linux); False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss() -> int:
    """The process's peak resident set size in bytes since start or the last :func:`reset_peak_rss` (Linux)."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM"))
