"""Where SophOMR's affine transform spends its time: one JSON line per repetition.

    OMP_NUM_THREADS=1 python scripts/omr_affine_profile.py CHECKOUT FOLDER TAG [SCHEME] [REPS] [PATH]

CHECKOUT is the hepkg tree to import. FOLDER goes first on the module path: the bench's
(``hepkg.bench.builds.hepkg_python``'s folder, openfhe-python on the bench's OpenFHE with ``hepkg_openfhe_encode``
beside it), or ``-`` for the installed wheel. The detector's affine
phase alone (``Detector._affine``: d_j = B_j - A_j sk for every clue) at N = 2^16, k = 50, on the set the bench runs
there (their dnum 2, ``bfv-omr-soph-d2``, where the module builds it at 128 bits, else ``bfv-omr-soph``), the
parties made as ``hepkg.omr.experiments.measure_here`` makes them. Per repetition: wall seconds; seconds inside the
library per hook (``he_s_<hook>``) and the operation counts; ``entries_s``: the clue matrices' entries (the
detector's entries functions: numpy gathers, or the compiled kernel where the checkout has it); ``outside_s``: what is left (diagonals shaped, reduced and rotated, Python). Every slot is
decrypted and checked against ``hepkg.omr.signaling.residual``. Lines are appended to PATH (default
``artifacts/bench/omr_affine/<TAG>.jsonl``).
"""
import json
import os
import pathlib
import sys
import time

checkout, folder, tag = pathlib.Path(sys.argv[1]).resolve(), sys.argv[2], sys.argv[3]
scheme = sys.argv[4] if len(sys.argv) > 4 else "sophomr"
reps = int(sys.argv[5]) if len(sys.argv) > 5 else 3
path = pathlib.Path(sys.argv[6] if len(sys.argv) > 6 else f"artifacts/bench/omr_affine/{tag}.jsonl")
sys.path[:0] = [folder, str(checkout)] if folder != "-" else [str(checkout)]

import numpy as np  # noqa: E402

from hepkg.bench.sysinfo import git_state  # noqa: E402
from hepkg.he.counting import library_seconds  # noqa: E402
from hepkg.he.errors import ParameterError  # noqa: E402
from hepkg.omr import detector as D, experiments as E  # noqa: E402
from hepkg.omr.authors import THEIR_SET, WHEEL_SET  # noqa: E402
from hepkg.omr.signaling import residual  # noqa: E402
from hepkg.he.backends.openfhe import CALL_PATH, ENCODE_PATH  # noqa: E402

N = 1 << 16
entries_s = [0.0]
tall_matvec = D.tall_matvec


def timed_tall_matvec(ctx, ct, matrices, *args, **kwargs):
    """The detector's tall MatMul with each matrix's entries timed into ``entries_s``."""
    def timed(entries):
        def wrapper(rows, cols):
            t0 = time.perf_counter()
            try:
                return entries(rows, cols)
            finally:
                entries_s[0] += time.perf_counter() - t0
        return wrapper
    return tall_matvec(ctx, ct, [timed(m) for m in matrices], *args, **kwargs)


D.tall_matvec = timed_tall_matvec
for params in (THEIR_SET, WHEEL_SET):
    cfg = E._DEFAULTS | dict(backend="openfhe", params=params, ps="sophomr", scheme=scheme, N=N)
    lay, board = E._setup(cfg)
    try:
        ctx = E._context("openfhe", cfg, lay)
        break
    except ParameterError as exc:                # the wheel refuses their dnum 2 at 128 bits
        print(f"{params}: {exc}", file=sys.stderr)
receiver, detector = E._parties(ctx, board, lay)
want = residual(board.sk, board.clues, lay.ps) % lay.ps.q
path.parent.mkdir(parents=True, exist_ok=True)
git = git_state()
for rep in range(reps):
    entries_s[0] = 0.0
    lib0 = library_seconds().copy()
    t0 = time.perf_counter()
    with detector.ctx.counting() as ops:
        d = detector._affine(board.clues)
    wall = time.perf_counter() - t0
    lib = library_seconds() - lib0
    got = np.stack([np.concatenate([ctx.decrypt(block[j], signed=False) for block in d])[:N] for j in range(lay.ps.l)],
                   axis=1) % lay.ps.q
    row = dict(tag=tag, scheme=scheme, params=params, N=N, n=lay.n, b_affine=lay.b_affine, rep=rep, wall_s=wall,
               he_s=float(sum(lib.values())), **{f"he_s_{k}": float(s) for k, s in sorted(lib.items())},
               **{f"op_{k}": v for k, v in ops.as_dict().items() if isinstance(v, int)}, entries_s=entries_s[0],
               outside_s=wall - float(sum(lib.values())) - entries_s[0], encode_path=ENCODE_PATH, call_path=CALL_PATH,
               threads=os.environ.get("OMP_NUM_THREADS"), revision=git["revision"], dirty=git["dirty"],
               correct=bool(np.array_equal(got, want)))
    print(json.dumps(row), flush=True)
    with path.open("a") as f:
        f.write(json.dumps(row) + "\n")
