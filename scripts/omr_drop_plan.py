"""SophOMD's range check with and without dropping primes: seconds, and PV's noise budget at the compression's primes.

    OMP_NUM_THREADS=2 python scripts/omr_drop_plan.py PARAMS N OUT.jsonl      (e.g. bfv-omr-soph 4096)

The receiver and detector of SophOMD (SophOMR's PS parameters, k = 50) on OpenFHE at PARAMS; one block's affine
transform, then the range check in rounds, interleaved: every product at all primes (``none``), and the drop plans
of :func:`hepkg.omr.rangecheck.drop_plan` with margins 0 and 1 (:data:`hepkg.omr.detector.DROP_MARGIN`). The first
round also probes PV's noise budget (:func:`hepkg.he.noise.probed_budget`) at two primes against the undropped PV
(checked against the board's pertinency for the N messages). One JSON line appended to OUT.jsonl.
"""
import json
import sys
import time

import numpy as np

from hepkg.bench.sysinfo import system_info
from hepkg.he import get_params
from hepkg.he.noise import probed_budget
from hepkg.omr import board as BB, detector as D, rangecheck as RC
from hepkg.omr.signaling import PARAMS as PS_PARAMS

ROUNDS = 2


def main(params: str, N: int, out: str) -> None:
    ps = PS_PARAMS["sophomr"]
    lay = D.layout(ps, get_params(params).n, scheme="sophomd", k=50, N=N)
    ctx = D.receiver_context("openfhe", params, lay, insecure=params.startswith("toy"))
    board = BB.bulletin_board(N, 50, ps, others=0, seed=0)
    det = D.Detector(D.Receiver(ctx, board.sk, lay).detection_key())
    d = [ctx.deserialize(x.ctx.serialize(x), guard=True) for x in det._affine(board.clues)[0]]   # the secret's own
    plans = {"none": None} | {f"margin {m}": RC.drop_plan(ctx, ps.bound, ps.l, D.COMPRESSION_DEPTH + m) for m in (0, 1)}
    seconds, budget, want = {k: [] for k in plans}, {}, None
    for rnd in range(ROUNDS):
        for name, plan in plans.items():
            t0 = time.perf_counter()
            pv = ctx.keep_primes(RC.range_check(ctx, d, ps.bound, plan), D.COMPRESSION_LIMBS)
            seconds[name].append(time.perf_counter() - t0)
            if want is None:
                want = ctx.decrypt(pv, signed=False)
                if not np.array_equal(want[:N], board.pertinency[:N]):
                    raise SystemExit("the undropped PV is not the board's pertinency")
            if rnd == 0:
                budget[name] = probed_budget(ctx, pv, want)
            print(rnd, name, round(seconds[name][-1], 2), budget[name], flush=True)
    system = system_info()
    row = dict(params=params, N=N, primes=ctx.max_level + 1, plans=plans, range_check_s=seconds,
               budget_bits_at_2_primes=budget, revision=system["git"]["revision"][:7], dirty=system["git"]["dirty"],
               page_reporting_order=system["page_reporting_order"])
    with open(out, "a") as fh:
        fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
