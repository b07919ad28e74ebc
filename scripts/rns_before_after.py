"""One process's timings of the rns engine at one commit, for a before/after comparison (docs/benchmarks.md).

    python scripts/rns_before_after.py CHECKOUT TAG [K] [PATH]

imports hepkg from the checkout CHECKOUT (a git worktree of the commit), builds rns-ckks-32768-d9 on kernel path
PATH (numpy, the default, or numba at one thread) with Galois keys for steps 1..K (default 22), times each op
(NTT of a ciphertext, product + relinearization + rescale, rotation, hoisted rotations by 1 and by 1..K) once
untimed then the median of 5 calls (11 on numba), and prints one JSON line: medians in ms, the hoisted step
(t(K) - t(1)) / (K - 1), and minor page faults (getrusage) per op. Interleave processes of the commits compared.
"""
import inspect
import json
import os
import resource
import statistics
import sys
import time

sys.path.insert(0, sys.argv[1])
PATH = sys.argv[4] if len(sys.argv) > 4 else "numpy"
os.environ["HEPKG_RNS_KERNELS"] = PATH

from hepkg.bench import rns_ops  # noqa: E402
from hepkg.rns import CKKS  # noqa: E402

REPS = 5 if PATH == "numpy" else 11
K = int(sys.argv[3]) if len(sys.argv) > 3 else 22
if PATH == "numba":
    from hepkg.rns import cpu
    cpu.set_threads(1)
if "kernels" in inspect.signature(CKKS).parameters:
    eng = CKKS("rns-ckks-32768-d9", kernels=PATH, rotations=range(1, K + 1))
    assert eng.path == PATH
else:                                                                   # before the compiled path: numpy alone
    assert PATH == "numpy", "this commit has the numpy path alone"
    eng = CKKS("rns-ckks-32768-d9", xp="numpy", rotations=range(1, K + 1))
a, b = (eng.encrypt(v) for v in rns_ops._inputs(eng.slots, 0))
ntt = eng.bases.ntt(eng.bases.q_rows(0))
coeffs = ntt.inverse(a.data)
folded = "rescale" in inspect.signature(eng.relinearize).parameters      # issue 54's fold, where the commit has it
steps = list(range(1, K + 1))
calls = {"ntt": lambda: ntt.forward(coeffs),
         "mul_relin_rescale": (lambda: eng.relinearize(eng.mul(a, b), rescale=True)) if folded
         else (lambda: eng.rescale(eng.relinearize(eng.mul(a, b)))),
         "rotate": lambda: eng.rotate(a, 1),
         "hoist_1": lambda: eng.rotate_hoisted(a, steps[:1]),
         "hoist_k": lambda: eng.rotate_hoisted(a, steps)}
res = {}
for name, call in calls.items():
    call()
    times, faults = [], []
    for _ in range(REPS):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
    res[name] = (statistics.median(times) * 1e3, statistics.median(faults))
print(json.dumps({"tag": sys.argv[2], "path": PATH, "k": K, **{op: round(v[0], 1) for op, v in res.items()},
                  "step": round((res["hoist_k"][0] - res["hoist_1"][0]) / (K - 1), 1),
                  "step_faults": round((res["hoist_k"][1] - res["hoist_1"][1]) / (K - 1)),
                  "rot_faults": res["rotate"][1], "mul_faults": res["mul_relin_rescale"][1]}))
