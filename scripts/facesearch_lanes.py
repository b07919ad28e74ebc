"""Face search's membership query with 1 and more lanes per group (Server(lanes=n)), interleaved (docs/benchmarks.md).

    python scripts/facesearch_lanes.py [ROUNDS] [LANES] > lanes.jsonl

LANES: comma-separated lane counts (default 1,2). Each line names the hepkg revision it imported (run it with
PYTHONPATH=CHECKOUT to time another commit).

On OpenFHE at ckks-32768-d11 (128-bit), K = 1024, l = 128 (8 groups), kappa 8, 2 OpenMP threads: in every round,
for HyDia (the authors', every product held) and BSGS-Diagonal, one child process per lane count (1, 2), in an
order rotated round by round, each :func:`hepkg.facesearch.experiments.measure` (keys, enrollment, one warm-up and
two timed membership queries, every count checked against numpy); one JSON line per timed query: the phases
(seconds), the query's wall and CPU seconds, the count's error and the server's peak RSS.
"""
import json
import pathlib
import subprocess
import sys

import hepkg
from hepkg.facesearch.experiments import measure

METHODS = ("hydia", "bsgs-diagonal")


def main(rounds: int, lanes_list: tuple[int, ...]) -> None:
    tree = pathlib.Path(hepkg.__file__).parent
    rev = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    cases = [(m, n) for m in METHODS for n in lanes_list]
    for rnd in range(rounds):
        shift = rnd % len(cases)
        for method, lanes in cases[shift:] + cases[:shift]:
            cfg = dict(backend="openfhe", params="ckks-32768-d11", method=method, K=1024, Km=16, l=128, kappa=8,
                       seed=rnd, reps=2, warmup=1, workers=1, lanes=lanes, omp_threads=2, identify=False,
                       absent=False)
            for r in measure(cfg):
                print(json.dumps({"revision": rev, "round": rnd, "method": method, "lanes": lanes, "status": r["status"],
                                  **{k: round(v, 3) for k, v in r.items()
                                     if k.startswith("phase_") or k in ("membership_s", "membership_cpu_s")},
                                  "count_error": r.get("count_error"),
                                  "server_rss_gb": round(r.get("server_rss_peak_bytes", 0) / 1e9, 2)}), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3,
         tuple(int(x) for x in sys.argv[2].split(",")) if len(sys.argv) > 2 else (1, 2))
