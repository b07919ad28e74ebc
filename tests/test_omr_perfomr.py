"""PerfOMR / PerfOMD on the protocol: PVUnpack (SlotToCoeff + expansion), bundles, buckets, retrieval, counts."""
import numpy as np
import pandas as pd
import pytest

import hepkg.he as he
from hepkg.he.errors import SecretContextRefused
from hepkg.omr import board as BB, detector as D, perfomr as PF, unpack as U
from hepkg.omr.signaling import PSParams

PS = PSParams("toy", q=65537, h=4, r=6, n=16, l=2)       # p = q' = 65537, PerfOMR's plaintext modulus
HP, N_SLOTS = "toy-bfv-omr-perf", 4096
BACKENDS = [b for b in U.BACKENDS if he.availability()[b]]


def _context(backend, steps):
    return he.context(backend, HP, rotations=steps, policy="exact", swap=True, insecure=True)


def test_encoding_root_is_the_smallest_primitive_root():
    assert U.encoding_root(16, 65537) == 2 and U.encoding_root(4096, 65537) == 13 and U.encoding_root(64, 786433) == 44647
    e = U.slot_exponents(16)
    assert e[:4].tolist() == [1, 5, 25, 29] and e[8:12].tolist() == [31, 27, 7, 3]
    with pytest.raises(ValueError, match="= 1 mod 2n"):
        U.encoding_root(4096, 12289)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unpack_puts_each_slot_in_its_own_ciphertext(backend):
    """SlotToCoeff at 4 primes, expansion at 2 (the authors' contexts): leaf i is v_i in every slot."""
    b = 32
    ctx = _context(backend, U.unpack_steps(N_SLOTS, b))
    pub = ctx.public()
    v = np.random.default_rng(1).integers(0, 3, N_SLOTS)
    ct = pub.drop_level(pub.deserialize(ctx.serialize(ctx.encrypt(v))), pub.max_level - 3)
    with pub.counting() as s2c:
        coeffs = U.slots_to_coeffs(pub, ct, b=b)
    got, constant = np.zeros(N_SLOTS, np.int64), True
    with pub.counting() as exp:
        for i, leaf in U.expand(pub, pub.drop_level(coeffs, 2)):
            slots = ctx.decrypt(ctx.deserialize(pub.serialize(leaf)), signed=False) % PS.q
            got[i], constant = slots[0], constant and bool((slots == slots[0]).all())
    np.testing.assert_array_equal(got, v)
    assert constant
    want = U.unpack_counts(N_SLOTS, b)
    for ops, phase in ((s2c, "slot_to_coeff"), (exp, "expansion")):
        assert {k: ops[k] for k in want[phase]} == want[phase]


def test_unpack_refuses_a_backend_with_another_slot_order():
    if not he.availability()["pyfhel"]:
        pytest.skip("Pyfhel not installed")
    ctx = he.context("pyfhel", "toy-bfv-1024", rotations=[1], policy="exact", swap=True, insecure=True)
    with pytest.raises(ValueError, match="OpenFHE's slot order"):
        U.slots_to_coeffs(ctx, ctx.encrypt([1, 2]))


def _run(backend, scheme, N, k=4):
    lay = PF.perf_layout(PS, N_SLOTS, scheme=scheme, k=k, payload_bytes=32, nu=2, repetitions=4, buckets=64, seed=1)
    board = BB.bulletin_board(N, k, PS, payload_bytes=32, others=0, seed=N)
    ctx = _context(backend, lay.steps)
    receiver = PF.PerfReceiver(ctx, board.sk, lay)
    digest = PF.PerfDetector(receiver.detection_key()).digest(board.clues, board.slots if scheme == "perfomr" else None)
    return lay, board, receiver, digest


@pytest.mark.parametrize("backend,scheme,N", [("sim", "perfomr", 8192), ("sim", "perfomd", 6000),
                                              ("sim", "perfomr", 12000)]
                         + [(b, "perfomr", 8192) for b in BACKENDS if b != "sim"])
def test_perf_digest_retrieves_the_pertinent_bundles(backend, scheme, N):
    lay, board, receiver, digest = _run(backend, scheme, N)
    bundles, counts, payloads = receiver.retrieve(digest)
    B = lay.code(N).N
    want = np.unique(board.pertinent % B)
    assert bundles.tolist() == want.tolist()
    assert counts.tolist() == np.bincount(board.pertinent % B, minlength=B)[want].tolist()
    if scheme == "perfomr":
        np.testing.assert_array_equal(payloads, PF.bundle_payloads(board.slots, lay, N)[want])
    else:
        assert payloads is None and digest.payload is None
    formula = PF.perf_counts(lay, N)
    for phase, want_ops in formula.items():
        assert {k: digest.phases[phase][k] for k in want_ops} == want_ops, phase
    assert digest.phases["preprocess"]["encode"] == lay.bundle_cts(N) * N_SLOTS
    assert all(ph["wall_s"] >= 0 for ph in digest.phases.values())


def test_both_members_of_a_bundle_count_two():
    lay = PF.perf_layout(PS, N_SLOTS, scheme="perfomd", k=4, nu=2, repetitions=4, buckets=64)
    board = BB.bulletin_board(8192, 4, PS, others=0, seed=5)
    B = lay.code(8192).N
    m = next(int(i) for i in board.pertinent if (i + B) % (2 * B) not in board.pertinent)
    twin = (m + B) % (2 * B)                                 # the other member of m's bundle
    ctx = _context("sim", lay.steps)
    receiver = PF.PerfReceiver(ctx, board.sk, lay)
    clues = board.clues
    a, b = clues.a.copy(), clues.b.copy()
    a[twin], b[twin] = a[m], b[m]
    digest = PF.PerfDetector(receiver.detection_key()).digest(type(clues)(a, b, PS))
    bundles, counts, _ = receiver.retrieve(digest)
    assert counts[bundles.tolist().index(m % B)] == 2


def test_perf_refusals():
    lay = PF.perf_layout(PS, N_SLOTS, scheme="perfomd", k=4, nu=2, repetitions=4, buckets=64)
    board = BB.bulletin_board(4096, 2, PS, others=0, seed=1)
    ctx = _context("sim", lay.steps)
    receiver = PF.PerfReceiver(ctx, board.sk, lay)
    with pytest.raises(SecretContextRefused):
        PF.PerfDetector(D.DetectionKey(ctx, receiver.detection_key().sk, lay))
    soph = D.layout(PS, N_SLOTS, scheme="sophomd", k=4)
    with pytest.raises(TypeError, match="PerfLayout"):
        PF.PerfDetector(D.Receiver(_context("sim", soph.steps), board.sk, soph).detection_key())
    with pytest.raises(ValueError, match="bundle size nu"):
        PF.perf_layout(PS, N_SLOTS, nu=0)
    for limbs in (0, 5, 2.0):
        with pytest.raises(ValueError, match="expand_limbs must be an integer in \\[1, 4\\]"):
            PF.perf_layout(PS, N_SLOTS, scheme="perfomd", k=4, repetitions=4, buckets=64, expand_limbs=limbs)
    with pytest.raises(ValueError, match="index buckets"):
        PF.perf_layout(PS, N_SLOTS, scheme="perfomd", k=4)                  # 16 x 400 x 3 > 4096 slots
    wide = PF.perf_layout(PS, N_SLOTS, k=4, repetitions=4, buckets=64)  # 53 x 2 x 306 > 4096 slots: counted only
    with pytest.raises(ValueError, match="payload buckets"):
        PF.PerfDetector(PF.PerfReceiver(_context("sim", wide.steps), board.sk, wide).detection_key())
    omr = PF.perf_layout(PS, N_SLOTS, k=4, payload_bytes=32, repetitions=4, buckets=64)
    key = PF.PerfReceiver(_context("sim", omr.steps), board.sk, omr).detection_key()
    with pytest.raises(ValueError, match="payload slots"):
        PF.PerfDetector(key).digest(board.clues)


def test_a_digest_that_does_not_decode_is_recorded(monkeypatch):
    """experiments.measure_here: a DecodeError (a digest too noisy, e.g. the expansion at too few primes) is a
    row with correct False and the error, not a crash; the layout carries the expansion's primes."""
    from hepkg.omr import experiments as ex
    from hepkg.omr.decode import DecodeError
    config = dict(backend="sim", params="toy-bfv-omr-perf", ps="perfomr", scheme="perfomd", N=8192, k=4,
                  insecure=True, payload_bytes=32, repetitions=4, buckets=64, expand_limbs=2)
    assert ex._layout(ex._DEFAULTS | config).expand_limbs == 2
    row, = ex.measure_here(config)
    assert row["correct"] and row["decode_error"] is None and row["wrong_index_slots"] == 0   # sim: no noise

    def noisy(self, digest, **kw):
        raise DecodeError("repetitions disagree on the number of pertinent messages: [3, 7]")
    monkeypatch.setattr(PF.PerfReceiver, "retrieve", noisy)
    row, = ex.measure_here(config)
    assert not row["correct"] and row["decode_error"].startswith("DecodeError: repetitions disagree")


def test_set_up_is_timed_in_four_spans(monkeypatch):
    """experiments.measure_here: ``keygen_s`` holds the receiver's keys, ``keysave_s`` the detection key written as
    bytes, ``keyload_s`` the server's contexts made, ``server_setup_s`` the detector: each step, slowed here by its
    own delay, lands in its own span only."""
    import time
    from collections import Counter
    from hepkg.he.context import Context
    from hepkg.omr import experiments as ex

    calls = Counter()

    def slowed(name, step, delay):
        def run(*a, **kw):
            calls[name] += 1
            time.sleep(delay)
            return step(*a, **kw)
        return run
    monkeypatch.setattr(ex, "_receiver", slowed("keygen_s", ex._receiver, 4.0))
    monkeypatch.setattr(Context, "to_bytes", slowed("keysave_s", Context.to_bytes, 0.1))
    monkeypatch.setattr(Context, "public", slowed("keyload_s", Context.public, 0.4))      # its own to_bytes inside
    monkeypatch.setattr(ex, "_detector", slowed("server_setup_s", ex._detector, 2.0))
    row, = ex.measure_here(dict(backend="sim", params="toy-bfv-omr-soph", ps="sophomr", scheme="sophomd", N=4096, k=4,
                                insecure=True))
    # the top-level, lowered and digest contexts: each written, then made for the server (writing its bytes again)
    assert row["correct"] and calls == dict(keygen_s=1, keysave_s=6, keyload_s=3, server_setup_s=1)
    assert 0.3 <= row["keysave_s"] < 1.5 <= row["keyload_s"] < 2.0 <= row["server_setup_s"] < 4.0 <= row["keygen_s"]
    assert row["detection_key_written_bytes"] > 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_leaf_along_its_path_is_the_leaf_of_the_whole_expansion(backend):
    ctx = _context(backend, U.unpack_steps(N_SLOTS, 32))
    ct = ctx.drop_level(ctx.encrypt(np.arange(N_SLOTS) % 7), ctx.max_level - 1)
    leaves = dict(U.expand(ctx, ct)) if backend == "sim" else None
    for i in (0, 5, N_SLOTS - 1):
        path = U.expand_path(ctx, ct, i)
        assert len(path) == 12
        got = ctx.decrypt(path[-1], signed=False)
        if leaves is not None:
            np.testing.assert_array_equal(got, ctx.decrypt(leaves[i], signed=False))
    with pytest.raises(ValueError, match="leaf index"):
        U.expand_path(ctx, ct, N_SLOTS)


def check_noise_trace(rows: pd.DataFrame, leaves: int):
    """PerfOMD's noise trace (experiments.noise_trace) on the toy set, ``leaves`` probed at 2 and at 3 primes: every
    stage checked where its slots are known, the budget never rising along the pipeline, the expansion at 2 primes
    as much as at 3 (switching keeps the relative noise). 40_omr's trace is checked so too."""
    assert rows.stage.tolist() == ["range_check", "bundle", "slot_to_coeff"] + (["expansion"] + ["leaf"] * leaves) * 2 \
        + ["index_sum", "index"]
    assert rows.correct.astype(bool).all() and rows.wrong_index_slots.eq(0).all()
    assert (rows.checked.astype(bool) == ~rows.stage.isin(["slot_to_coeff", "expansion"])).all()
    got = rows.groupby(["stage", "limbs"]).budget_bits.max()
    chain = [got["range_check", 13], got["slot_to_coeff", 4], got["expansion", 2], got["leaf", 2], got["index_sum", 2]]
    assert all(b > 0 for b in chain) and chain == sorted(chain, reverse=True) and chain[0] > chain[-1] + 40
    assert abs(got["expansion", 2] - got["expansion", 3]) <= 2


def test_the_noise_trace_falls_stage_by_stage():
    """experiments.noise_trace_here on OpenFHE at two leaves (make test-long; make test checks 40_omr's trace)."""
    if not he.availability()["openfhe"]:
        pytest.skip("OpenFHE not installed")
    from hepkg.omr import experiments as ex
    rows = ex.noise_trace_here(dict(backend="openfhe", params=HP, ps="perfomr", scheme="perfomd", N=N_SLOTS, k=4,
                                    insecure=True, payload_bytes=32, repetitions=4, buckets=64, expand_limbs=2,
                                    leaves=(0, N_SLOTS - 1)))
    check_noise_trace(pd.DataFrame(rows), leaves=2)
