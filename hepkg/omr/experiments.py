"""OMR experiments (grid functions): digests measured on a real backend, op counts on ``sim``, decoding times.

A measured digest runs as the authors' benchmark does: the receiver's keys first (detection key =
public context with its evaluation keys + Enc(sk)), then the detector digests a board of N
messages, k of them pertinent (the others carry uniformly random clues, RLWE making them
indistinguishable from clues to other receivers), and the receiver decrypts and decodes. Every
run checks the retrieved indices (and payloads) against the board's ground truth.
"""
from __future__ import annotations

import time

import numpy as np

from hepkg import he
from hepkg.bench.child import in_child
from hepkg.bench.memory import peak_rss, reset_peak_rss
from hepkg.he.noise import probed_budget

from . import detector as D
from . import perfomr as PF
from .board import bulletin_board
from .compress import perfomr_compress_indices
from .decode import DecodeError
from .unpack import expand_path
from .signaling import PARAMS as PS_PARAMS

__all__ = ["measure", "measure_here", "noise_trace", "noise_trace_here", "counts", "estimated_peak_bytes", "peak_bytes",
           "decode_times", "sizes"]

_DEFAULTS = dict(k=50, payload_bytes=612, seed=0, reps=1, insecure=False, b_affine=None, b_compress=None, nu=2,
                 b_unpack=None, drops=True)


def _layout(cfg: dict):
    ps = PS_PARAMS[cfg["ps"]]
    n = he.get_params(cfg["params"]).n
    if cfg["scheme"] in PF.PERF_SCHEMES:
        return PF.perf_layout(ps, n, scheme=cfg["scheme"], k=cfg["k"], payload_bytes=cfg["payload_bytes"], nu=cfg["nu"],
                              b_unpack=cfg["b_unpack"], **{k: cfg[k] for k in ("repetitions", "buckets", "expand_limbs")
                                                           if k in cfg})
    return D.layout(ps, n, scheme=cfg["scheme"], k=cfg["k"], payload_bytes=cfg["payload_bytes"],
                    b_affine=cfg["b_affine"], b_compress=cfg["b_compress"], N=cfg["N"])


def _receiver(ctx, board, lay):
    """The receiver of the layout's scheme (its keys made)."""
    return (PF.PerfReceiver if isinstance(lay, PF.PerfLayout) else D.Receiver)(ctx, board.sk, lay)


def _detector(key, lay, drops: bool = True):
    """The detector of the layout's scheme on a detection key (SophOMR's range check dropping primes unless ``drops``
    is off)."""
    return PF.PerfDetector(key) if isinstance(lay, PF.PerfLayout) else D.Detector(key, drops=drops)


def _parties(ctx, board, lay, drops: bool = True):
    """(receiver, detector) of the layout's scheme."""
    receiver = _receiver(ctx, board, lay)
    return receiver, _detector(receiver.detection_key(), lay, drops)


def _setup(cfg: dict):
    """(layout, board) of a config: ``params`` (BFV set), ``ps`` (PS set name), ``scheme``, ``N``, ``k``, ..."""
    ps = PS_PARAMS[cfg["ps"]]
    lay = _layout(cfg)
    board = bulletin_board(cfg["N"], cfg.get("pertinent", cfg["k"]), ps, payload_bytes=cfg["payload_bytes"],
                           others=0, seed=cfg["seed"])
    return lay, board


def _context(backend: str, cfg: dict, lay: D.Layout):
    if isinstance(lay, PF.PerfLayout):
        return he.context(backend, cfg["params"], rotations=lay.steps, policy="exact", swap=True,
                          insecure=cfg["insecure"])
    return D.receiver_context(backend, cfg["params"], lay, insecure=cfg["insecure"])


def _phase_columns(digest: D.Digest) -> dict:
    out = {}
    for name, ph in digest.phases.items():
        out |= {f"{name}_{k}": v for k, v in ph.items()
                if k in ("wall_s", "he_s", "encode_s", "depth", "ring_switch_s")}
        out |= {f"{name}_op_{k}": v for k, v in ph.items() if k in ("mul_pt", "mul_ct", "rotate", "swap", "keyswitch",
                                                                      "encode", "add")}
        out |= {f"{name}_cost_{k}": v for k, v in ph["costs"].items()}
    return out


def _check(lay, board, found) -> bool:
    """Retrieved = planted: indices and payloads; for PerfOMR, bundles, their counts and every member's payload."""
    if isinstance(lay, PF.PerfLayout):
        bundles, counts, payloads = found
        B = lay.code(board.N).N
        want = np.unique(board.pertinent % B)
        ok = np.array_equal(bundles, want) and np.array_equal(counts, np.bincount(board.pertinent % B)[want])
        return bool(ok and (payloads is None or np.array_equal(
            payloads, PF.bundle_payloads(board.slots, lay, board.N)[want])))
    idx, payloads = found
    ok = np.array_equal(idx, board.pertinent)
    return bool(ok and (payloads is None or np.array_equal(payloads, board.slots[board.pertinent])))


def _wanted_buckets(receiver, board, N: int) -> np.ndarray:
    """The index buckets the board's bundles give in plaintext, (repetitions, buckets, 3)."""
    code = receiver.layout.code(N)
    return perfomr_compress_indices(np.bincount(board.pertinent % code.N, minlength=code.N), code)


def _wrong_index_slots(receiver, digest, board) -> int:
    """PerfOMR's measured noise figure: index bucket slots (of repetitions x buckets x 3) that decrypt to another
    value than the plaintext buckets of the board's bundles (0 while the noise stays below q / 2t)."""
    return int((receiver.index_buckets(digest) != _wanted_buckets(receiver, board, digest.N)).sum())


def _payloads(lay, board):
    return board.slots if lay.scheme in ("sophomr", "perfomr") else None


def measure_here(config: dict) -> list[dict]:
    """One digest configuration in this process: keys once, then ``reps`` digests, each retrieved and checked.

    ``config``: ``backend, params, ps, scheme, N``; optional ``k`` (50), ``payload_bytes`` (612),
    ``seed``, ``reps`` (1), ``insecure``, ``b_affine``, ``b_compress``, ``pertinent`` (default k); PerfOMR:
    ``nu``, ``b_unpack``, ``repetitions``, ``buckets``, ``expand_limbs``. A digest that does not decode is a row
    with ``correct`` False and its ``decode_error``. ``retrieve_s`` is the receiver's whole retrieval: ``parse_s``
    (the digest serialized and parsed under the guard) + ``decode_s`` (decryption and decoding, the authors' span).
    Set-up in four spans, as the authors' program splits it (:meth:`Receiver.detection_key`): ``keygen_s`` (the
    receiver's contexts and keys and Enc(sk), their setup), ``keysave_s`` (the detection key written as bytes, their
    ``saveKeys``; ``detection_key_written_bytes``), then, with no counterpart in theirs, ``keyload_s`` (the server's
    contexts made) and ``server_setup_s`` (the detector built on them); ``precompute_s``: SophOMD's compression
    plaintexts for N.
    """
    cfg = _DEFAULTS | dict(config)
    lay, board = _setup(cfg)
    rss_ok = reset_peak_rss()
    t0 = time.perf_counter()
    ctx = _context(cfg["backend"], cfg, lay)
    receiver = _receiver(ctx, board, lay)
    t1 = time.perf_counter()
    handed: dict = {}
    key = receiver.detection_key(timings=handed)
    t2 = time.perf_counter()
    detector = _detector(key, lay, cfg["drops"])
    server_setup_s = time.perf_counter() - t2
    keygen_s, keysave_s, keyload_s = t1 - t0 + handed["encrypt_s"], handed["written_s"], handed["read_s"]
    t0 = time.perf_counter()
    detector.precompute(cfg["N"])                 # SophOMD's compression plaintexts, once per N (not per digest)
    precompute_s = time.perf_counter() - t0
    sizes = receiver.key_sizes()
    ps_secret = ctx.nbytes(detector.key.sk)
    # the detection key: evaluation keys (relinearization, rotations and swap, ring switching's) and the encrypted PS
    # secret, as the authors' saveKeys; the receiver's public key and the sample ciphertext key_sizes() reports are not
    # in it
    setup = dict(keygen_s=keygen_s, keysave_s=keysave_s, keyload_s=keyload_s, server_setup_s=server_setup_s,
                 precompute_s=precompute_s, detection_key_written_bytes=handed["written_bytes"],
                 n=ctx.params.n, ks_digits=ctx.params.ks_digits, rotation_keys=len(lay.steps) + 1,
                 compression_keys="top" if receiver.low is None else receiver.low.params.name,
                 b_affine=lay.b_affine, b_compress=getattr(lay, "b_compress", getattr(lay, "b_unpack", None)),
                 K=lay.K, descent=_descent(receiver),
                 range_check_primes="all" if detector.plan is None else ",".join(map(str, detector.plan)),
                 detection_key_bytes=sizes["relin_key"] + sizes["galois_keys"] + sizes["switch_key"] + ps_secret,
                 ps_secret_bytes=ps_secret, **{f"{k}_bytes": v for k, v in sizes.items() if k != "rotation_keys"})
    rows = []
    for rep in range(cfg["reps"]):
        t0 = time.perf_counter()
        digest = detector.digest(board.clues, _payloads(lay, board))
        digest_s = time.perf_counter() - t0
        timings = {}
        t0 = time.perf_counter()
        try:
            found, error = receiver.retrieve(digest, timings=timings), None
        except DecodeError as exc:                  # a digest too noisy to decode: recorded, not raised
            found, error = None, f"{type(exc).__name__}: {exc}"
        retrieve_s = time.perf_counter() - t0
        cts = digest.ciphertexts if isinstance(digest, PF.PerfDigest) else [digest.ciphertext]
        noise = dict(wrong_index_slots=_wrong_index_slots(receiver, digest, board)) if isinstance(lay, PF.PerfLayout) \
            else {}
        pre = digest.phases.get("preprocess", {}).get("wall_s", 0.0)     # PerfOMR's, excluded (Remark 4)
        rows.append(setup | _phase_columns(digest) | dict(
            rep=rep, digest_s=digest_s - pre, preprocess_s=pre, retrieve_s=retrieve_s,
            parse_s=timings.get("parse_s", np.nan), decode_s=retrieve_s - timings.get("parse_s", np.nan),
            digest_bytes=sum(c.ctx.nbytes(c) for c in cts),
            digest_he_s=sum(p["he_s"] for name, p in digest.phases.items() if name != "preprocess"),
            correct=error is None and _check(lay, board, found), decode_error=error, **noise))
    for public in (detector.key.context, detector.key.compression):
        if public is not None:
            public.close()
    receiver.close()
    peak = peak_rss() if rss_ok else float("nan")
    return [r | dict(rss_peak_bytes=peak) for r in rows]


def noise_trace_here(config: dict) -> list[dict]:
    """The noise budget (bits, :func:`hepkg.he.noise.probed_budget`) of one PerfOMR/PerfOMD digest, stage by stage.

    ``config`` as :func:`measure_here`, plus ``probe_limbs`` (expansion primes to probe, default (2, 3)) and
    ``leaves`` (leaf indices, default 0, 1, n/2, n-1). Rows: ``stage`` (``range_check`` .. ``index``, and ``leaf``
    once per probed leaf and prime count, computed along its path from SlotToCoeff's output dropped to ``limbs``
    primes), ``limbs``, ``budget_bits`` (-1: decrypts wrong), ``checked`` (budget against the known slots, else
    against what the ciphertext decrypts to); then the digest's ``correct`` and ``wrong_index_slots`` on every row.
    """
    cfg = _DEFAULTS | dict(config)
    lay, board = _setup(cfg)
    if not isinstance(lay, PF.PerfLayout):
        raise ValueError(f"the noise trace follows PerfOMR's PVUnpack: scheme must be one of {PF.PERF_SCHEMES}")
    ctx = _context(cfg["backend"], cfg, lay)
    receiver, detector = _parties(ctx, board, lay)
    n, N = lay.n, cfg["N"]
    B = lay.code(N).N
    bundle = np.bincount(board.pertinent % B, minlength=B)[:n]
    index_sum = PF.PerfReceiver.bucket_slots(_wanted_buckets(receiver, board, N), n)
    known = dict(range_check=board.pertinency[:n], bundle=bundle, index_sum=index_sum)
    known["index"] = known["index_sum"]
    leaves = cfg.get("leaves") or (0, 1, n // 2, n - 1)
    rows = []

    def probe(stage, ct, expected, **extra):
        rows.append(dict(stage=stage, limbs=ctx.max_level + 1 - ct.level, checked=expected is not None,
                         budget_bits=probed_budget(ctx, ct, expected), **extra))

    def trace(stage, ct):
        own = ctx.deserialize(ct.ctx.serialize(ct), guard=True)
        probe(stage, own, known.get(stage))
        if stage == "slot_to_coeff":
            for limbs in cfg.get("probe_limbs", (2, 3)):
                low = ctx.keep_primes(own, limbs)
                probe("expansion", low, None)
                for i in leaves:
                    probe("leaf", expand_path(ctx, low, int(i))[-1], int(bundle[i]), leaf=int(i))
    digest = detector.digest(board.clues, _payloads(lay, board), trace=trace)
    try:
        found, error = receiver.retrieve(digest), None
    except DecodeError as exc:
        found, error = None, f"{type(exc).__name__}: {exc}"
    outcome = dict(correct=error is None and _check(lay, board, found), decode_error=error,
                   wrong_index_slots=_wrong_index_slots(receiver, digest, board), expand_limbs=lay.expand_limbs,
                   q_bits=sum(ctx.built.q_bits), n=ctx.params.n)
    detector.key.context.close()
    ctx.close()
    return [r | outcome for r in rows]


def noise_trace(config: dict) -> list[dict]:
    """:func:`noise_trace_here` in a fresh child process."""
    return in_child(noise_trace_here, config, estimated_peak_bytes(config), config.get("omp_threads"))


def estimated_peak_bytes(config: dict) -> int:
    """Keys (read from a one-key context) + the affine transform's live ciphertexts (baby steps, l s
    outputs, 8 temporaries) + the compression's s b baby steps at its 2 primes + the board (clues and payload
    slots as int64) + 0.5 GB, times 1.1 (:func:`peak_bytes`)."""
    cfg = _DEFAULTS | dict(config)
    lowers = not isinstance(_layout(cfg), PF.PerfLayout) and he.backend_class(cfg["backend"]).lowers
    with he.context(cfg["backend"], cfg["params"], rotations=[1], policy="exact", insecure=cfg["insecure"]) as ctx:
        sizes = ctx.key_sizes()
        ct, limbs = ctx.nbytes(ctx.encrypt([0])), ctx.max_level + 1
        lowered = None
        if lowers:
            with ctx.lowered(D.COMPRESSION_LIMBS, rotations=[1], relin=False) as low:
                lowered = low.key_sizes()["galois_keys"]
    return peak_bytes(cfg, sizes["galois_keys"], sizes["relin_key"], ct, limbs, lowered)


def peak_bytes(config: dict, rotation_key: int, relin_key: int, ciphertext: int, limbs: int,
               lowered: int | None = None) -> int:
    """:func:`estimated_peak_bytes` from the sizes of one rotation key, the relinearization key and a ciphertext
    at the top level (``limbs`` primes), e.g. those measured at N = 2^16 to size N = 2^19 without a context;
    ``lowered``: one rotation key of the compression's lowered context (which holds no relinearization key), where
    the compression's keys are there (:class:`~hepkg.omr.detector.Receiver`)."""
    cfg = _DEFAULTS | dict(config)
    ps = PS_PARAMS[cfg["ps"]]
    lay = _layout(cfg)
    s = -(-cfg["N"] // lay.n)
    if lowered is None:
        keys = (len(lay.steps) + 1) * rotation_key + relin_key
    else:
        keys = len(lay.affine_steps) * rotation_key + relin_key + (len(lay.compression_steps) + 1) * lowered
    board = cfg["N"] * (ps.n + ps.l + lay.t) * 8
    compress = s * getattr(lay, "b_compress", 0) * ciphertext * D.COMPRESSION_LIMBS / limbs
    return int(1.1 * (keys + (lay.b_affine + ps.l * s + 8) * ciphertext + compress + board + 0.5e9))


def measure(config: dict) -> list[dict]:
    """:func:`measure_here` in a fresh child process (peak RSS its own; see :func:`hepkg.bench.child.in_child`)."""
    return in_child(measure_here, config, estimated_peak_bytes(config), config.get("omp_threads"))


def _descent(receiver) -> int:
    """d of the ring switching the receiver's digest goes through (1: none)."""
    return 1 if getattr(receiver, "small", None) is None else receiver.small.descent


def counts(config: dict) -> list[dict]:
    """Op counts of one digest on ``sim`` at a full-size parameter set (Tables 1-2 checked by the caller), checked retrieval."""
    cfg = _DEFAULTS | dict(config) | dict(backend="sim")
    lay, board = _setup(cfg)
    receiver, detector = _parties(_context("sim", cfg, lay), board, lay)
    digest = detector.digest(board.clues, _payloads(lay, board))
    ok = _check(lay, board, receiver.retrieve(digest))
    phases = [dict(phase=name, **{k: v for k, v in ph.items() if k not in ("wall_s", "he_s", "encode_s", "costs")})
              for name, ph in digest.phases.items()]
    return [p | dict(n=lay.n, payload_bytes=cfg["payload_bytes"], b_affine=lay.b_affine, K=lay.K,
                     b_compress=getattr(lay, "b_compress", getattr(lay, "b_unpack", None)),
                     rotation_keys=len(lay.steps) + 1, correct=ok, descent=_descent(receiver)) for p in phases]


def decode_times(config: dict) -> list[dict]:
    """The receiver's decoding (python-flint) of a plaintext digest: ``N, k, scheme, ps``, ``reps`` timings."""
    from .compress import compress_indices, compress_payloads
    from .decode import decode, decode_indices

    cfg = _DEFAULTS | dict(reps=20) | dict(config)
    ps = PS_PARAMS[cfg["ps"]]
    board = bulletin_board(cfg["N"], cfg["k"], ps, payload_bytes=cfg["payload_bytes"], others=0, seed=cfg["seed"])
    v, p = board.pertinency, ps.q
    w = compress_indices(v, cfg["k"], p)
    e = compress_payloads(v, board.slots, cfg["k"], p) if cfg["scheme"] == "sophomr" else None
    rows = []
    for rep in range(cfg["reps"]):
        t0 = time.perf_counter()
        found = decode(w, e, cfg["N"], p) if e is not None else (decode_indices(w, cfg["N"], p), None)
        rows.append(dict(rep=rep, decode_s=time.perf_counter() - t0, correct=_check(None, board, found)))
    return rows


def sizes(config: dict) -> list[dict]:
    """Key and ciphertext bytes on ``backend`` at ``params`` (:func:`hepkg.omr.params.measured_sizes`)."""
    from .params import measured_sizes

    with he.context(config["backend"], config["params"], rotations=[1], policy="exact",
                    insecure=config.get("insecure", False)) as ctx:
        return measured_sizes(ctx).to_dict("records")
