"""Where SophOMR's / SophOMD's compression spends its time: one JSON line per repetition.

    python scripts/omr_compression_profile.py CHECKOUT TAG [SCHEME] [N] [REPS] [PATH]

Runs the detector's compression phase alone (an encrypted random 0/1 PV at the top level, then what
``Detector.digest`` does after the range check: ``Detector._compress`` where the checkout has it, else the
inline copy below of what older checkouts did) on the openfhe backend at ``bfv-omr-soph``, the parties made as
the checkout makes them (``detector.receiver_context`` where it exists: compression keys at the compression's
primes). Per repetition: wall seconds, seconds inside the library per hook (``he_s_<hook>``), wall seconds
inside ``dot_plain`` (encoding and products), ``rotate`` and ``swap_columns``; ``diagonals_s`` is the rest (the
numpy diagonal builder and Python); ``parse_s``: the digest serialized and parsed under the guard, as the
receiver gets it; ``detection_key_bytes``: the relinearization, rotation and ring-switching keys of every context and
Enc(sk).
The result is decrypted and checked against numpy. Lines are appended to PATH (default
``artifacts/bench/omr_compression/<TAG>.jsonl``). CHECKOUT is the hepkg tree to import.
"""
import json
import os
import pathlib
import sys
import time

checkout, tag = pathlib.Path(sys.argv[1]).resolve(), sys.argv[2]
scheme = sys.argv[3] if len(sys.argv) > 3 else "sophomr"
N = int(sys.argv[4]) if len(sys.argv) > 4 else 1 << 16
reps = int(sys.argv[5]) if len(sys.argv) > 5 else 3
path = pathlib.Path(sys.argv[6] if len(sys.argv) > 6 else f"artifacts/bench/omr_compression/{tag}.jsonl")
sys.path.insert(0, str(checkout))

import numpy as np  # noqa: E402

from hepkg import he  # noqa: E402
from hepkg.he.counting import library_seconds  # noqa: E402
from hepkg.linalg import rectangular  # noqa: E402
from hepkg.omr import compress, detector as D  # noqa: E402
from hepkg.omr.board import bulletin_board  # noqa: E402
from hepkg.omr.signaling import PARAMS  # noqa: E402

spent: dict = {}


def timed(obj, name):
    fn = getattr(obj, name)

    def wrapper(*a, **kw):
        t0 = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - t0
    setattr(obj, name, wrapper)


ps = PARAMS["sophomr"]
params = "bfv-omr-soph"
n = he.get_params(params).n
lay = D.layout(ps, n, scheme=scheme, N=N)
board = bulletin_board(N, lay.k, ps, payload_bytes=612, others=0, seed=0)
slots = board.slots if scheme == "sophomr" else None
t0 = time.perf_counter()
if hasattr(D, "receiver_context"):
    ctx = D.receiver_context("openfhe", params, lay)
else:
    ctx = he.context("openfhe", params, rotations=lay.steps, policy="exact", swap=True)
rec = D.Receiver(ctx, board.sk, lay)
det = D.Detector(rec.detection_key())
keygen_s = time.perf_counter() - t0
sizes = rec.key_sizes() if hasattr(rec, "key_sizes") else ctx.key_sizes()
key_bytes = sizes["relin_key"] + sizes["galois_keys"] + sizes.get("switch_key", 0) + ctx.nbytes(det.key.sk)
pub, low_ctx = det.ctx, getattr(det, "low", det.ctx)
for c in {id(c): c for c in (pub, low_ctx)}.values():
    for name in ("dot_plain", "rotate", "swap_columns"):
        timed(c, name)
rng = np.random.default_rng(1)
path.parent.mkdir(parents=True, exist_ok=True)
for rep in range(reps):
    v = np.zeros(N, np.int64)
    v[rng.choice(N, lay.k, replace=False)] = 1
    pv = [pub.encrypt(v[i:i + n]) for i in range(0, N, n)]
    spent.clear()
    lib0 = library_seconds().copy()
    t0 = time.perf_counter()
    with pub.counting() as ops, low_ctx.counting() as low_ops:
        if hasattr(det, "_compress"):
            out = det._compress(pv, N, slots)
            if hasattr(det, "_switch"):                        # since ring switching: the digest apart
                out = det._switch(out)
        else:
            low = [pub.keep_primes(x, D.COMPRESSION_LIMBS) for x in pv]
            out = rectangular.wide_matvec(pub, low, D._compression_entries(lay, N, slots), lay.K, N,
                                          b=lay.b_compress)
            out = pub.keep_primes(out, 1)
    wall = time.perf_counter() - t0
    lib = library_seconds() - lib0
    if low_ctx is not pub:
        ops.update(low_ops)
    own_ctx = getattr(rec, "digest_context", ctx)
    t0 = time.perf_counter()
    own = own_ctx.deserialize(out.ctx.serialize(out), guard=True)       # what the receiver does before decrypting
    parse_s = time.perf_counter() - t0
    got = own_ctx.decrypt(own, signed=False)[:lay.rows] % ps.q
    want = compress.compress_indices(v, lay.k, ps.q)
    if scheme == "sophomr":
        want = np.concatenate([want, compress.compress_payloads(v, slots, lay.k, ps.q).ravel()])
    row = dict(tag=tag, scheme=scheme, N=N, n=n, K=lay.K, b=lay.b_compress, rep=rep, wall_s=wall,
               **{f"{k}_s": s for k, s in spent.items()}, he_s=float(sum(lib.values())),
               **{f"he_s_{k}": float(s) for k, s in sorted(lib.items())},
               **{f"op_{k}": v for k, v in ops.as_dict().items() if isinstance(v, int)},
               keygen_s=keygen_s, detection_key_bytes=key_bytes, parse_s=parse_s,
               compression_context=out.ctx.params.name, threads=os.environ.get("OMP_NUM_THREADS"),
               correct=bool(np.array_equal(got, want)))
    row["diagonals_s"] = wall - sum(spent.values())
    print(json.dumps(row), flush=True)
    with path.open("a") as f:
        f.write(json.dumps(row) + "\n")
