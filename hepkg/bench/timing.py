"""Wall-clock and CPU timing of a block."""
from __future__ import annotations

import time


class Timer:
    """``with Timer() as t: ...`` then ``t.wall`` (perf_counter) and ``t.cpu`` (process_time), in seconds.

    ``cpu`` sums all threads of this process, so it can exceed ``wall`` for multithreaded
    libraries and stays near zero while the process sleeps or waits.
    """

    def __init__(self):
        self.wall = self.cpu = None

    def __enter__(self) -> "Timer":
        self._wall0, self._cpu0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc) -> None:
        self.wall = time.perf_counter() - self._wall0
        self.cpu = time.process_time() - self._cpu0

    def __repr__(self) -> str:
        if self.wall is None:
            return "Timer(running)"
        return f"Timer(wall={self.wall:.6g} s, cpu={self.cpu:.6g} s)"
