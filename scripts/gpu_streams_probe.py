"""Why more streams in flight are slower on the GPU (hand-run; run 5 measured its first six settings, before the
caller's issue existed: artifacts/bench/gpu_check/run5_streams_probe.jsonl).

BSGS-GPU-TBS at the paper's ring and K = 2^10 (one group) takes one query's similarity and comparison over
``G`` virtual groups (the one group repeated, as the streams unit does) with 1, 4 and 16 streams in flight, with
and without the device-memory window the units measure under, and with Python's GIL switch interval at its
default (5 ms) and at 10 us, and launched from one host thread per stream or from the caller alone
(``StreamPool(issue=...)``); per setting the wall time and the process's CPU time (every thread). One warm-up
round (rep -1) and 3 kept, interleaved. Rows go to ``$OUT/probe.jsonl`` and stdout.

    HEPKG_RNS_XP=cupy python scripts/gpu_streams_probe.py        # PROBE_CFG='{"params": ...}' for a toy ring
"""
import contextlib
import json
import os
import pathlib
import shutil
import sys
import time

from hepkg.facesearch import gpu_experiment, gpu_run
from hepkg.facesearch.gpu_device import window
from hepkg.rns import device as rdev

G = 16
#: (streams, memory window, GIL switch interval, how the pool issues: one host thread per stream or the caller)
SETTINGS = [(1, False, .005, "threads"), (16, False, .005, "threads"), (16, True, .005, "threads"),
            (16, False, 1e-5, "threads"), (4, False, .005, "threads"), (1, True, .005, "threads"),
            (4, False, .005, "caller"), (16, False, .005, "caller")]


def main() -> None:
    out = pathlib.Path(os.environ.get("OUT", ".")) / "probe.jsonl"
    cfg = gpu_run.unit_config("K1024", dict(gpu_run.PAPER_RUN, tmp="/tmp"))
    cfg.update(json.loads(os.environ.get("PROBE_CFG", "{}")))
    t = time.perf_counter()
    trial = gpu_experiment._Trial(cfg)
    tmp = gpu_experiment._workdir(cfg)
    server, _ = gpu_experiment._setup(trial, ("bsgs-tbs",), pathlib.Path(tmp))["bsgs-tbs"]
    shutil.rmtree(tmp, ignore_errors=True)
    print("setup", round(time.perf_counter() - t, 1), "s, pool streams", server.streams, flush=True)
    def sync():
        if rdev.on_gpu(server.xp):
            server.xp.cuda.Device().synchronize()

    def run(streams, win, switch, issue):
        sys.setswitchinterval(switch)
        sync()
        t0, c0 = time.perf_counter(), time.process_time()
        with window(server.xp) if win else contextlib.nullcontext():
            server.compared(trial.query, groups=[0] * G, streams=streams, issue=issue)
        sync()
        return time.perf_counter() - t0, time.process_time() - c0

    for rep in range(-1, 3):
        for streams, win, switch, issue in SETTINGS:
            wall, cpu = run(streams, win, switch, issue)
            row = dict(rep=rep, streams=streams, window=win, switch=switch, issue=issue, groups=G, wall_s=wall,
                       cpu_s=cpu)
            print(json.dumps(row), flush=True)
            with out.open("a") as f:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
