"""What the guard's fork costs against the memory of the process that forks: one ``guard.isolated`` call (fork, the
child's trivial work, its exit) and ``os.fork`` alone, medians of 20, with the process holding nothing, numpy arrays
(touched) of 0.25-2 GB, then (the arrays freed) one OpenFHE BFV context at 2^16 (bfv-omr-soph-d2, rotation keys 1, 2, 4, 8).
``python scripts/fork_cost.py`` prints one JSON line per case; run it on an idle machine.
"""
import json
import os
import statistics
import time

import numpy as np

from hepkg import he
from hepkg.he import guard


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS")) / 1024


def fork_alone() -> float:
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    elapsed = time.perf_counter() - t0
    os.waitpid(pid, 0)
    return elapsed


def measure(case: str) -> None:
    isolated = []
    for _ in range(20):
        t0 = time.perf_counter()
        guard.isolated(int, 1, what="nothing")
        isolated.append(time.perf_counter() - t0)
    alone = [fork_alone() for _ in range(20)]
    print(json.dumps(dict(case=case, rss_mb=round(rss_mb()), isolated_ms=round(1e3 * statistics.median(isolated), 2),
                          fork_ms=round(1e3 * statistics.median(alone), 2))), flush=True)


measure("nothing")
held = []
for gb in (0.25, 0.5, 1, 2):
    while sum(b.nbytes for b in held) < gb * 2**30:
        held.append(np.ones(2**24, np.uint8))
    measure(f"{gb} GB of numpy arrays")
held.clear()
ctx = he.context("openfhe", "bfv-omr-soph-d2", rotations=[1, 2, 4, 8], insecure=True)
measure("one OpenFHE context, bfv-omr-soph-d2")
