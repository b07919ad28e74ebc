"""SophOMR / SophOMD detector on the protocol: range check, digest, retrieval, refusals, overflow."""
import json

import numpy as np
import pytest

import hepkg.he as he
from hepkg.linalg import rectangular as R
from hepkg.he.errors import SecretContextRefused
from hepkg.omr import board as BB, detector as D, rangecheck as RC
from hepkg.omr.decode import DecodeOverflow
from hepkg.omr.signaling import PSParams
from conftest import BFV_BACKENDS

PS = PSParams("toy", q=12289, h=4, r=6, n=16, l=2)       # p = q' = 12289 = 3 * 2^12 + 1, like 786433 = 3 * 2^18 + 1
HP = "toy-bfv-omr"


def _parties(backend, scheme, k=4, **kw):
    lay = D.layout(PS, 1024, scheme=scheme, k=k, payload_bytes=8, **kw)
    ctx = he.context(backend, HP, rotations=lay.steps, policy="exact", swap=True, insecure=True)
    return lay, ctx


@pytest.mark.parametrize("bound", [0, 1, 2, 5, 6, 9, 40])
def test_range_check_matches_numpy_and_counts(bound):
    ctx = he.context("sim", HP, insecure=True)
    p, rng = PS.q, np.random.default_rng(bound)
    d = rng.integers(-bound - 3, bound + 4, (1024, 2))
    d[:200] = rng.integers(0, p, (200, 2))
    with ctx.counting() as ops:
        out = RC.range_check(ctx, [ctx.encrypt(d[:, j] % p) for j in range(2)], bound)
    np.testing.assert_array_equal(ctx.decrypt(out, signed=False) % p, RC.range_check_numpy(d, bound, p))
    assert ops["mul_ct"] == RC.range_check_counts(bound, p, 2)["mul_ct"]


def test_range_check_counts_at_the_papers_parameters():
    # SophOMR (p = 786433, |d| <= r - 1 = 39, l = 2): the authors' 2 x 37 + 1 products, at depth 28 (theirs 29)
    assert RC.range_check_counts(39, 786433, 2) == {"mul_ct": 75, "depth": 28}
    assert RC.range_poly(2, 97) == [(1 * 4) % 97, (-5) % 97, 1]          # (Y - 1)(Y - 4)


@pytest.mark.parametrize("odd", [False, True])
@pytest.mark.parametrize("degree", [1, 2, 3, 7, 8, 9, 16, 33])
def test_eval_poly_matches_numpy_at_the_least_depth(degree, odd):
    ctx = he.context("sim", "toy-bfv-omr-soph", insecure=True)     # depth = ct x ct products, as OpenFHE's
    p, rng = ctx.plain_modulus, np.random.default_rng(degree)
    coeffs = [int(c) for c in rng.integers(1, p, degree + 1)]
    x = rng.integers(0, p, ctx.slots)
    want = sum(c * pow_mod(x, 2 * j + 1 if odd else j, p) for j, c in enumerate(coeffs)) % p
    out = RC.eval_poly(ctx, ctx.encrypt(x), coeffs, odd=odd)
    np.testing.assert_array_equal(ctx.decrypt(out, signed=False) % p, want)
    top = 2 * degree + 1 if odd else degree
    assert out.depth == (top - 1).bit_length()                   # ceil(log2(top)): x^top's least depth


def test_primes_for_depth_is_what_openfhe_builds():
    pytest.importorskip("openfhe")
    ctx = he.context("openfhe", "toy-bfv-omr-soph", insecure=True)
    counts = [ctx.primes_for_depth(d) for d in range(1, ctx.params.depth + 1)]
    assert counts[-1] == ctx.max_level + 1                       # the set's own depth: the primes it has
    assert counts == sorted(counts) and counts[0] == 2 < counts[-1]
    assert ctx.primes_for_depth(0) is None
    assert he.context("sim", "toy-bfv-omr-soph", insecure=True).primes_for_depth(5) is None


def test_primes_for_depth_answers_again_from_disk_for_the_same_openfhe_only(tmp_path, monkeypatch):
    """A new process (the in-memory answers gone) reads the counts from hepkg's cache without building a context;
    another OpenFHE, or a damaged file, builds them again."""
    pytest.importorskip("openfhe")
    from hepkg.he.backends import openfhe as O

    monkeypatch.setenv("HEPKG_CACHE", str(tmp_path))
    monkeypatch.setattr(O, "_PRIMES_FOR_DEPTH", {})
    ctx = he.context("openfhe", "toy-bfv-omr-soph", insecure=True)
    first = [ctx.primes_for_depth(d) for d in range(1, 6)]
    built = O.ofhe.GenCryptoContext

    def refuse(cp):
        raise AssertionError("a context was built")

    monkeypatch.setattr(O, "_PRIMES_FOR_DEPTH", {})
    monkeypatch.setattr(O.ofhe, "GenCryptoContext", refuse)
    assert [ctx.primes_for_depth(d) for d in range(1, 6)] == first
    monkeypatch.setattr(O, "_PRIMES_FOR_DEPTH", {})
    monkeypatch.setattr(O, "_library_key", lambda: "another OpenFHE")
    with pytest.raises(AssertionError, match="a context was built"):
        ctx.primes_for_depth(1)
    monkeypatch.undo()
    monkeypatch.setenv("HEPKG_CACHE", str(tmp_path))
    monkeypatch.setattr(O, "_PRIMES_FOR_DEPTH", {})
    (tmp_path / "openfhe" / "primes_for_depth.json").write_text('{"half-written')
    assert ctx.primes_for_depth(3) == first[2] and O.ofhe.GenCryptoContext is built
    assert list(json.loads((tmp_path / "openfhe" / "primes_for_depth.json").read_text()).values()) == [first[2]]


@pytest.mark.parametrize("hp", ["toy-bfv-omr", "toy-bfv-omr-soph"])
def test_range_check_dropping_primes_matches_numpy(hp):
    """The plan's products run at fewer primes (every product still counted once) and PV is numpy's, with the
    budget the compression needs left at its two primes (toy-bfv-omr counts plaintext products as depth)."""
    pytest.importorskip("openfhe")
    from hepkg.he.noise import probed_budget
    ctx = he.context("openfhe", hp, insecure=True)
    p, bound, rng = ctx.plain_modulus, 5, np.random.default_rng(3)
    d = rng.integers(-bound - 3, bound + 4, (ctx.slots, 2))
    d[:100] = rng.integers(0, p, (100, 2))
    cts = [ctx.encrypt(d[:, j] % p) for j in range(2)]
    plan = RC.drop_plan(ctx, bound, 2, D.COMPRESSION_DEPTH + D.DROP_MARGIN)
    assert plan == sorted(plan, reverse=True) and plan[-1] < plan[0] <= ctx.max_level + 2
    with ctx.counting() as ops:
        out = RC.range_check(ctx, cts, bound, plan)
    np.testing.assert_array_equal(ctx.decrypt(out, signed=False) % p, RC.range_check_numpy(d, bound, p))
    assert ops["mul_ct"] == RC.range_check_counts(bound, p, 2)["mul_ct"] and ops["mod_switch"] > 0
    assert ctx.max_level + 1 - out.level == plan[-1]
    if not ctx.params.plain_depth:
        full = RC.range_check(ctx, cts, bound)
        kept = [probed_budget(ctx, ctx.keep_primes(x, D.COMPRESSION_LIMBS)) for x in (out, full)]
        assert kept[0] >= kept[1] - 30, kept


def test_the_detector_plans_drops_where_the_backend_says():
    lay = D.layout(PS, 1024, scheme="sophomd", k=4, payload_bytes=8)
    board = BB.bulletin_board(100, 1, PS, payload_bytes=8, seed=1)
    plans = {}
    for backend in BFV_BACKENDS:
        ctx = he.context(backend, HP, rotations=lay.steps, policy="exact", swap=True, insecure=True)
        key = D.Receiver(ctx, board.sk, lay).detection_key()
        plans[backend] = D.Detector(key).plan, D.Detector(key, drops=False).plan
    for backend, (plan, off) in plans.items():          # only OpenFHE says how many primes a depth takes
        assert off is None
        if backend == "openfhe":
            assert len(plan) == RC.range_check_counts(PS.bound, PS.q, 2, True)["depth"]
        else:
            assert plan is None


def pow_mod(x, e, p):
    out = np.ones_like(x)
    for _ in range(e):
        out = out * x % p
    return out


@pytest.mark.parametrize("backend", BFV_BACKENDS)
@pytest.mark.parametrize("scheme", D.SCHEMES)
def test_digest_retrieves_the_pertinent_messages(backend, scheme):
    lay, ctx = _parties(backend, scheme)
    board = BB.bulletin_board(2000, 3, PS, payload_bytes=8, seed=7)
    rec = D.Receiver(ctx, board.sk, lay)
    digest = D.Detector(rec.detection_key()).digest(board.clues, board.slots)
    idx, payloads = rec.retrieve(digest)
    np.testing.assert_array_equal(idx, board.pertinent)
    if scheme == "sophomr":
        np.testing.assert_array_equal(payloads, board.slots[board.pertinent])
        np.testing.assert_array_equal(BB.slots_to_bytes(payloads, PS.q, 8), board.payloads[board.pertinent])
    else:
        assert payloads is None
    assert set(digest.phases) == set(D.PHASES)
    assert digest.phases["affine"]["rotate"] == (lay.b_affine - 1) + 2 * 2 * (-(-PS.n // lay.b_affine) - 1)
    assert digest.phases["range_check"]["mul_ct"] == 2 * RC.range_check_counts(PS.bound, PS.q, 2)["mul_ct"]
    for phase, formula in D.digest_counts(lay, 2000).items():       # the formulas that price Table 7
        assert {k: digest.phases[phase].get(k, 0) for k in formula} == formula, phase


@pytest.mark.parametrize("scheme", D.SCHEMES)
def test_sophomd_compression_plaintexts_are_encoded_once_per_board_size(scheme):
    """After precompute(N), a SophOMD digest of N messages encodes none of the wide MatMul's diagonals (its fold
    masks only) and retrieves the same messages; SophOMR's diagonals hold the payloads: encoded in each digest."""
    lay, ctx = _parties("openfhe", scheme)
    board = BB.bulletin_board(2000, 3, PS, payload_bytes=8, seed=7)
    rec = D.Receiver(ctx, board.sk, lay)
    encodes = lambda digest: digest.phases["compression"]["encode"]
    fresh = D.Detector(rec.detection_key())
    every = encodes(fresh.digest(board.clues, board.slots))
    det = D.Detector(rec.detection_key())
    det.precompute(2000)
    for _ in range(2):
        digest = det.digest(board.clues, board.slots)
        np.testing.assert_array_equal(rec.retrieve(digest)[0], board.pertinent)
        assert every - encodes(digest) == (R.wide_counts(lay.K, 2000, lay.n, lay.b_compress)["mul_pt"]
                                           if scheme == "sophomd" else 0)
    other = BB.bulletin_board(1500, 3, PS, payload_bytes=8, seed=7)      # the same key, another N: encoded
    digest = det.digest(other.clues, other.slots)
    np.testing.assert_array_equal(rec.retrieve(digest)[0], other.pertinent)
    assert encodes(digest) == encodes(fresh.digest(other.clues, other.slots))


def test_more_than_k_pertinent_is_reported_not_garbage():
    lay, ctx = _parties("sim", "sophomd", k=4)
    board = BB.bulletin_board(1500, 9, PS, payload_bytes=8, seed=3)
    rec = D.Receiver(ctx, board.sk, lay)
    digest = D.Detector(rec.detection_key()).digest(board.clues)
    with pytest.raises(DecodeOverflow, match="more than k=4"):
        rec.retrieve(digest)


def test_detector_refuses_a_secret_context_and_bad_input():
    lay, ctx = _parties("sim", "sophomr")
    board = BB.bulletin_board(100, 1, PS, payload_bytes=8, seed=1)
    key = D.Receiver(ctx, board.sk, lay).detection_key()
    with pytest.raises(SecretContextRefused):
        D.Detector(D.DetectionKey(ctx, key.sk, lay))
    det = D.Detector(key)
    with pytest.raises(ValueError, match="payload slots"):
        det.digest(board.clues)
    with pytest.raises(ValueError, match="payload slots"):
        det.digest(board.clues, board.slots[:, :2])
    other = PSParams("other", q=12289, h=4, r=5, n=16, l=2)
    with pytest.raises(ValueError, match="clues must be a batch"):
        det.digest(BB.bulletin_board(10, 1, other, payload_bytes=8).clues, board.slots[:10])
    with pytest.raises(ValueError, match="lacks rotation keys"):
        D.Receiver(he.context("sim", HP, rotations=[1], policy="exact", swap=True, insecure=True), board.sk, lay)
    with pytest.raises(ValueError, match="does not match the layout"):
        D.Receiver(he.context("sim", "toy-bfv-omr-soph", rotations=lay.steps, policy="exact", swap=True, insecure=True),
                   board.sk, lay)
    with pytest.raises(ValueError, match="must divide the BFV row"):
        D.layout(PSParams("big", q=12289, h=4, r=5, n=1024, l=2), 1024)
    with pytest.raises(ValueError, match="more than a BFV row"):
        D.layout(PS, 1024, k=200, payload_bytes=8)
    with pytest.raises(ValueError, match="scheme must be"):
        D.layout(PS, 1024, scheme="perfomr")


def test_plaintext_products_add_no_depth_where_the_set_says_so():
    for name, plain_depth in (("toy-bfv-omr-soph", False), ("toy-bfv-omr", True)):
        ctx = he.context("sim", name, insecure=True)
        assert ctx.params.plain_depth is plain_depth
        ct = ctx.mul(ctx.encrypt([3]), [5])
        assert ct.depth == int(plain_depth) and ctx.mul(ct, ct).depth == int(plain_depth) + 1
    with pytest.raises(he.ParameterError, match="plain_depth"):
        he.get_params("toy-bfv-omr").replace(plain_depth="no")


@pytest.mark.parametrize("backend", [b for b in BFV_BACKENDS if he.backend_class(b).lowers])
def test_the_compression_runs_at_its_two_primes_with_keys_there(backend):
    lay = D.layout(PS, 1024, scheme="sophomr", k=4, payload_bytes=8)
    board = BB.bulletin_board(1500, 3, PS, payload_bytes=8, seed=5)
    ctx = D.receiver_context(backend, HP, lay, insecure=True)
    assert sorted(ctx.keys.steps) == lay.affine_steps and not ctx.swap_key      # the top level's keys: affine only
    rec = D.Receiver(ctx, board.sk, lay)
    key = rec.detection_key()
    assert key.compression.parent_key_id == ctx.key_id and not key.compression.has_secret
    assert sorted(key.compression.keys.steps) == lay.compression_steps and key.compression.swap_key
    assert key.compression.max_level + 1 == D.COMPRESSION_LIMBS
    digest = D.Detector(key).digest(board.clues, board.slots)
    assert digest.ciphertext.ctx is not key.context and digest.ciphertext.ctx.key_id == key.compression.key_id
    idx, payloads = rec.retrieve(digest)
    np.testing.assert_array_equal(idx, board.pertinent)
    np.testing.assert_array_equal(payloads, board.slots[board.pertinent])
    # the same digest at the top-level keys: the same counts
    full = he.context(backend, HP, rotations=lay.steps, policy="exact", swap=True, insecure=True)
    top = D.Receiver(full, board.sk, lay, lowered=False)
    assert top.low is None and top.detection_key().compression is None
    plain = D.Detector(top.detection_key()).digest(board.clues, board.slots)
    np.testing.assert_array_equal(top.retrieve(plain)[0], board.pertinent)
    for op in ("rotate", "swap", "mul_pt", "encode", "keyswitch"):
        assert digest.phases["compression"][op] == plain.phases["compression"][op], op
    with pytest.raises(ValueError, match="lacks rotation keys"):
        D.Receiver(ctx, board.sk, lay, lowered=False)              # no compression keys at the top level
    with pytest.raises(ValueError, match="not lowered from its context"):
        D.Detector(D.DetectionKey(key.context, key.sk, lay, top.detection_key().context))
    other = D.Receiver(D.receiver_context(backend, HP, lay, insecure=True), board.sk, lay).detection_key()
    with pytest.raises(ValueError, match="not lowered from its context"):
        D.Detector(D.DetectionKey(key.context, key.sk, lay, other.compression))


@pytest.mark.skipif(D._kernels() is None, reason="numba not installed")
@pytest.mark.parametrize("scheme", D.SCHEMES)
def test_the_compiled_compression_entries_are_numpys(scheme):
    lay = D.layout(PS, 1024, scheme=scheme, k=4, payload_bytes=8)
    N = 1500                                              # two blocks, the second partial
    slots = np.random.default_rng(2).integers(0, PS.q, (N, lay.t)) if lay.t else None
    rows = (np.arange(1024) % 512 - 5) % lay.K
    cols = (np.arange(1024)[None] + np.arange(3)[:, None] * 7) % N
    compiled = D._compression_entries(lay, N, slots, compiled=True)(rows, cols)
    np.testing.assert_array_equal(compiled, D._compression_entries(lay, N, slots, compiled=False)(rows, cols))
    assert compiled.shape == (3, 1024) and 0 <= compiled.min() and compiled.max() < PS.q and compiled.any()
    with pytest.raises(IndexError, match="outside the matrix"):
        D._compression_entries(lay, N, slots, compiled=True)(rows, cols + N)


@pytest.mark.skipif(D._kernels() is None, reason="numba not installed")
@pytest.mark.parametrize("j", [0, 1, PS.n - 1])
def test_the_compiled_affine_entries_are_numpys(j):
    rng = np.random.default_rng(3)
    a = rng.integers(0, PS.q, (1500, PS.n))
    a[:, :4] = 0                                          # a zero clue word: -0 is 0, not p
    rows = np.minimum(np.arange(2048), 1499)
    cols = (np.arange(2048)[None] + np.arange(5)[:, None] * 7) % PS.n
    compiled = D._affine_entries(a, j, PS.q, compiled=True)(rows, cols)
    np.testing.assert_array_equal(compiled, D._affine_entries(a, j, PS.q, compiled=False)(rows, cols))
    assert compiled.shape == (5, 2048) and 0 <= compiled.min() and compiled.max() < PS.q and compiled.any()
    with pytest.raises(IndexError, match="outside the matrix"):
        D._affine_entries(a, j, PS.q, compiled=True)(rows, cols + PS.n)
    with pytest.raises(IndexError, match="outside the matrix"):
        D._affine_entries(a, j, PS.q, compiled=True)(rows + 1, cols)


@pytest.mark.parametrize("backend", [b for b in BFV_BACKENDS if he.backend_class(b).subrings])
@pytest.mark.parametrize("scheme, k", [("sophomd", 4), ("sophomr", 5)])
def test_the_digest_descends_to_the_subring_that_holds_its_rows(backend, scheme, k):
    """Ring switching (Sec. 4.2) at n = 4096: SophOMR's 251 x 5 rows (padded to 2048) fill the subring's two rows
    (one row swap), SophOMD's 4 fit in one; the counts are the formula's with d."""
    ps = PSParams("toy-soph", q=786433, h=4, r=6, n=16, l=2)      # toy-bfv-omr-soph's t
    lay = D.layout(ps, 4096, scheme=scheme, k=k)
    assert lay.descent(insecure=True) == 2 and (lay.K > 1024) == (scheme == "sophomr")
    board = BB.bulletin_board(600, k, ps, payload_bytes=612 if scheme == "sophomr" else 8, seed=11)
    rec = D.Receiver(D.receiver_context(backend, "toy-bfv-omr-soph", lay, insecure=True), board.sk, lay)
    key = rec.detection_key()
    assert key.digest.descent == 2 and key.digest.parent_key_id == key.compression.key_id
    digest = D.Detector(key).digest(board.clues, board.slots)
    assert digest.ciphertext.ctx.slots == 2048
    idx, payloads = rec.retrieve(digest)
    np.testing.assert_array_equal(idx, board.pertinent)
    if scheme == "sophomr":
        np.testing.assert_array_equal(payloads, board.slots[board.pertinent])
    for phase, formula in D.digest_counts(lay, 600, 2).items():
        assert {op: digest.phases[phase].get(op, 0) for op in formula} == formula, phase
    other = D.Receiver(D.receiver_context(backend, "toy-bfv-omr-soph", lay, insecure=True), board.sk, lay)
    with pytest.raises(ValueError, match="not a subring of its compression context"):
        D.Detector(D.DetectionKey(key.context, key.sk, lay, key.compression, other.detection_key().digest))
