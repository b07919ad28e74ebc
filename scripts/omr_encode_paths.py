"""Where a packed plaintext's time goes on one ``openfhe`` module, and BFV's level drop in one step or many.

    OMP_NUM_THREADS=1 python scripts/omr_encode_paths.py FOLDER OUT.jsonl

FOLDER holds the ``openfhe`` package first on the module path (the bench's: ``hepkg.bench.builds.hepkg_python``'s
folder, with ``hepkg_openfhe_encode`` beside it). On SophOMR's compression context (2^16 slots, t = 786433, depth
1), 65,536 random slots: numpy's ``tolist``, ``MakePackedPlaintext`` from that list, from a one-value list (the
encoding alone), and ``hepkg_openfhe_encode.packed`` from the int64 array where FOLDER has it; then, at hepkg's
``bfv-omr-soph-d2``, a ciphertext dropped from 20 to 2 towers by 18 ``mod_switch`` against one ``drop_level``
(both decrypted and compared). Medians of 7 interleaved repetitions after one warm-up, in ms; one JSON line appended
to OUT.jsonl with every repetition.
"""
import json
import sys
import time

sys.path.insert(0, sys.argv[1])
import numpy as np  # noqa: E402
import openfhe as ofhe  # noqa: E402

import hepkg.he as he  # noqa: E402
from hepkg.bench.sysinfo import system_info  # noqa: E402

REPS = 7


def rounds(cases: dict) -> dict:
    """Each case once as a warm-up, then REPS interleaved rounds: seconds per case."""
    for f in cases.values():
        f()
    times = {name: [] for name in cases}
    for _ in range(REPS):
        for name, f in cases.items():
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
    return times


def encodings() -> dict:
    p = ofhe.CCParamsBFVRNS()
    p.SetPlaintextModulus(786433)
    p.SetMultiplicativeDepth(1)
    p.SetRingDim(1 << 16)
    p.SetScalingModSize(60)
    p.SetSecurityLevel(ofhe.HEStd_NotSet)      # the ring and primes only: nothing is encrypted
    cc = ofhe.GenCryptoContext(p)
    cc.Enable(ofhe.PKE)
    values = np.random.default_rng(0).integers(0, 786433, 1 << 16)
    listed = values.tolist()
    cases = {"tolist": values.tolist, "encode_from_list": lambda: cc.MakePackedPlaintext(listed),
             "encode_one_value": lambda: cc.MakePackedPlaintext([1])}
    try:
        import hepkg_openfhe_encode as native
    except ImportError:
        native = None
    if native is not None:
        cases["encode_from_buffer"] = lambda: native.packed(cc, values, 1, 0)
    return rounds(cases)


def drops() -> tuple[dict, bool]:
    ctx = he.context("openfhe", "bfv-omr-soph-d2")
    x = ctx.encrypt(np.random.default_rng(1).integers(0, 1000, ctx.slots))
    levels = ctx.max_level + 1 - 2

    def single():
        a = x
        for _ in range(levels):
            a = ctx.mod_switch(a)
        return a
    same = bool(np.array_equal(ctx.decrypt(single()), ctx.decrypt(ctx.drop_level(x, levels))))
    return rounds({f"drop_{levels}_one_by_one": single, f"drop_{levels}_at_once": lambda: ctx.drop_level(x, levels)}), same


def main(out: str) -> None:
    times = encodings()
    more, same = drops()
    times |= more
    system = system_info()
    row = dict(folder=sys.argv[1], openfhe=ofhe.__file__, revision=system["git"]["revision"][:7],
               dirty=system["git"]["dirty"], page_reporting_order=system["page_reporting_order"],
               drops_decrypt_alike=same, median_ms={k: round(float(np.median(v)) * 1e3, 3) for k, v in times.items()},
               ms={k: [round(t * 1e3, 3) for t in v] for k, v in times.items()})
    with open(out, "a") as fh:
        fh.write(json.dumps(row) + "\n")
    print(json.dumps(row["median_ms"]), same)


if __name__ == "__main__":
    main(sys.argv[2])
