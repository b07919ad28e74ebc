"""Private signaling (SophOMR paper, Construction 1 and Table 6) and the bulletin-board generator."""
import dataclasses

import numpy as np
import pytest

from hepkg.omr import board as bd
from hepkg.omr import signaling as ps

PERF_CODE = dataclasses.replace(ps.PERFOMR, convention="code")
SOPH_CODE = dataclasses.replace(ps.SOPHOMR, convention="code")
#: Small enough that both failure kinds happen often enough to be measured.
TOY = ps.PSParams("toy", q=101, h=16, r=5, n=64, l=1)


def negacyclic_product(x, y):
    """Reference product in Z[X]/(X^n + 1) by plain convolution."""
    full = np.convolve(x, y)
    n = len(x)
    out = full[:n].copy()
    out[:n - 1] -= full[n:]
    return out


# --- Table 6 -------------------------------------------------------------------------------------

def test_soundness_bits_match_table6():
    assert round(ps.soundness_bits(ps.PERFOMR), 1) == 21.4
    assert round(ps.soundness_bits(ps.SOPHOMR), 1) == 26.5
    # the authors' code accepts 2r - 1 residues, not 2r + 1
    assert round(ps.soundness_bits(PERF_CODE), 1) == 21.6
    assert round(ps.soundness_bits(SOPH_CODE), 1) == 26.6


def test_completeness_bits_match_table6():
    assert round(ps.completeness_bits(ps.PERFOMR), 1) == 17.6
    assert round(ps.completeness_bits(ps.SOPHOMR), 1) == 30.7
    for params in (ps.PERFOMR, ps.SOPHOMR, PERF_CODE, SOPH_CODE):
        # the discrete Gaussian's variance (0.215) is below sigma^2: the paper's estimate is conservative
        assert ps.completeness_bits(params, exact=True) > ps.completeness_bits(params)
    assert ps.completeness_bits(PERF_CODE) < ps.completeness_bits(ps.PERFOMR)


def test_sizes_match_table6():
    assert ps.PERFOMR.bits == 17 and ps.SOPHOMR.bits == 20
    assert (ps.signal_bytes(ps.PERFOMR), ps.public_key_bytes(ps.PERFOMR)) == (2181, 2208)
    assert (ps.signal_bytes(ps.SOPHOMR), ps.public_key_bytes(ps.SOPHOMR)) == (2565, 2592)
    for params, kb in ((ps.PERFOMR, 2.2), (ps.SOPHOMR, 2.6)):
        assert round(ps.signal_bytes(params) / 1000, 1) == round(ps.public_key_bytes(params) / 1000, 1) == kb


# --- the scheme ----------------------------------------------------------------------------------

@pytest.mark.parametrize("params", [ps.PERFOMR, ps.SOPHOMR, SOPH_CODE], ids=lambda p: f"{p.name}-{p.convention}")
def test_detection_at_paper_parameters(params):
    rng = np.random.default_rng(7)
    sk, pk = ps.keygen(params, rng)
    assert ps.detect(sk, ps.signal(pk, params, rng, size=300), params).all()
    assert not ps.detect(sk, ps.random_signal(params, rng, size=300), params).any()
    assert not ps.detect(sk, ps.signal(ps.keygen(params, rng)[1], params, rng, size=300), params).any()
    single = ps.signal(pk, params, rng)
    assert single.a.shape == (params.n,) and single.b.shape == (params.l,)
    assert ps.detect(sk, single, params) is True


def test_keys_and_clues_follow_construction1():
    rng = np.random.default_rng(3)
    params = ps.SOPHOMR
    sk, pk = ps.keygen(params, rng)
    assert np.count_nonzero(sk.s) == params.h and set(np.unique(sk.s)) <= {-1, 0, 1}
    e = (pk.beta - negacyclic_product(pk.alpha, sk.s)) % params.q
    e = np.where(e > params.q // 2, e - params.q, e)
    assert np.abs(e).max() <= 3 and 0.15 < e.var() < 0.3             # D_{Z,0.5}: variance 0.215
    clue = ps.signal(pk, params, rng, size=200)
    d = ps.residual(sk, clue, params)
    for i in range(5):
        ref = (clue.b[i] - negacyclic_product(clue.a[i], sk.s)[:params.l]) % params.q
        assert np.array_equal(d[i] % params.q, ref)
    predicted = np.sqrt((2 * params.h + 1) * 0.215)
    assert 0.8 * predicted < d.std() < 1.2 * predicted


@pytest.mark.parametrize("params", [ps.PERFOMR, PERF_CODE], ids=["paper", "code"])
def test_range_convention_at_the_edge(params):
    rng = np.random.default_rng(11)
    sk, _ = ps.keygen(params, rng)
    a = rng.integers(0, params.q, params.n)
    inner = negacyclic_product(a, sk.s)[:params.l]
    r = params.r
    for d0, accepted in ((0, True), (r - 1, True), (-(r - 1), True), (r, params.convention == "paper"),
                         (-r, params.convention == "paper"), (r + 1, False), (params.q // 2, False)):
        clue = ps.Clue(a, (inner + np.array([d0, 0])) % params.q, params)
        assert ps.detect(sk, clue, params) is accepted, d0


@pytest.mark.parametrize("convention", ["paper", "code"])
def test_empirical_rates_match_the_estimates(convention):
    params = dataclasses.replace(TOY, convention=convention)
    rng = np.random.default_rng(5)
    hits = []
    for _ in range(40):                                        # many keys: the rate is over keys too
        sk, pk = ps.keygen(params, rng)
        hits.append(ps.detect(sk, ps.signal(pk, params, rng, size=100), params))
    fail = 2.0 ** -ps.completeness_bits(params, exact=True)    # l = 1: no union bound
    hit_rate = np.concatenate(hits).mean()
    assert abs(hit_rate - (1 - fail)) < 5 * np.sqrt(fail * (1 - fail) / 4000)
    false_rate = ps.detect(sk, ps.random_signal(params, rng, size=20000), params).mean()
    expected = 2.0 ** -ps.soundness_bits(params)               # exactly (2 bound + 1) / q'
    assert abs(false_rate - expected) < 5 * np.sqrt(expected * (1 - expected) / 20000)


# --- bad inputs ----------------------------------------------------------------------------------

def test_clue_validation():
    params = ps.PERFOMR
    n, l, q = params.n, params.l, params.q
    with pytest.raises(ValueError, match="shape"):
        ps.Clue(np.zeros(n - 1, np.int64), np.zeros(l, np.int64), params)
    with pytest.raises(ValueError, match="shape"):
        ps.Clue(np.zeros((2, 2, n), np.int64), np.zeros((2, 2, l), np.int64), params)
    with pytest.raises(ValueError, match="not reduced mod q'=65537"):
        ps.Clue(np.full(n, q), np.zeros(l, np.int64), params)
    with pytest.raises(ValueError, match="not reduced"):
        ps.Clue(np.zeros(n, np.int64), np.array([-1, 0]), params)
    with pytest.raises(ValueError, match="integers"):
        ps.Clue(np.zeros(n), np.zeros(l), params)
    with pytest.raises(ValueError, match="disagree"):
        ps.Clue(np.zeros((5, n), np.int64), np.zeros((4, l), np.int64), params)
    with pytest.raises(TypeError, match="single clue"):
        ps.Clue(np.zeros(n, np.int64), np.zeros(l, np.int64), params)[0]


def test_mismatched_parameters_are_refused():
    rng = np.random.default_rng(2)
    sk, pk = ps.keygen(ps.SOPHOMR, rng)
    clue = ps.signal(pk, ps.SOPHOMR, rng, size=3)
    sk_code, _ = ps.keygen(SOPH_CODE, rng)
    with pytest.raises(ValueError, match="clue belongs to other parameters"):
        ps.detect(sk_code, clue, SOPH_CODE)                   # same numbers, other range rule
    with pytest.raises(ValueError, match="secret key belongs to other parameters"):
        ps.detect(sk, clue, ps.PERFOMR)
    with pytest.raises(ValueError, match="not reduced mod q'=65537"):
        ps.Clue(clue.a, clue.b, ps.PERFOMR)                   # SophOMR clue read with PerfOMR's modulus
    with pytest.raises(ValueError, match="public key belongs to other parameters"):
        ps.signal(pk, ps.PERFOMR, rng)
    with pytest.raises(TypeError, match="Clue"):
        ps.detect(sk, (clue.a, clue.b), ps.SOPHOMR)
    with pytest.raises(TypeError, match="Generator"):
        ps.keygen(ps.SOPHOMR, 0)
    with pytest.raises(TypeError, match="PSParams"):
        ps.random_signal("sophomr", rng)
    with pytest.raises(ValueError, match="size"):
        ps.signal(pk, ps.SOPHOMR, rng, size=-1)
    with pytest.raises(ValueError, match="ternary"):
        ps.SecretKey(np.full(ps.SOPHOMR.n, 2), ps.SOPHOMR)
    with pytest.raises(ValueError, match="public key beta"):
        ps.PublicKey(pk.alpha, pk.beta[:-1], ps.SOPHOMR)


@pytest.mark.parametrize("kw, match", [
    (dict(h=2000), "h <= n'"), (dict(r=40000), "no soundness"), (dict(convention="authors"), "convention"),
    (dict(q=2 ** 31), "2\\^31"), (dict(sigma=0), "sigma"), (dict(l=0), "positive integer"),
])
def test_bad_parameters(kw, match):
    with pytest.raises(ValueError, match=match):
        dataclasses.replace(ps.PERFOMR, **kw)


# --- the bulletin board --------------------------------------------------------------------------

def test_payload_slot_counts():
    assert bd.payload_slots(612, 786433) == 250 and bd.payload_slots(612, 65537) == 306
    assert bd.payload_slots(1, 256) == 1 and bd.payload_slots(1, 255) == 2 and bd.payload_slots(3, 2) == 24


@pytest.mark.parametrize("params, others", [(ps.SOPHOMR, 8), (ps.PERFOMR, 0)])
def test_board_ground_truth(params, others):
    b = bd.bulletin_board(300, 20, params, others=others, seed=4)
    t = bd.payload_slots(612, params.q)
    assert b.N == 300 and b.p == params.q and b.clues.a.shape == (300, params.n)
    assert b.payloads.shape == (300, 612) and b.payloads.dtype == np.uint8
    assert b.slots.shape == (300, t) and b.slots.min() >= 0 and b.slots.max() < params.q
    assert len(np.unique(b.pertinent)) == 20 and np.array_equal(b.pertinent, np.sort(b.pertinent))
    assert np.array_equal(ps.detect(b.sk, b.clues, params).astype(np.int64), b.pertinency)
    assert all(ps.detect(b.sk, b.clues[i], params) == (i in b.pertinent) for i in (0, int(b.pertinent[0])))
    assert np.array_equal(bd.slots_to_bytes(b.slots, b.p), b.payloads)
    again = bd.bulletin_board(300, 20, params, others=others, seed=4)
    assert np.array_equal(again.clues.a, b.clues.a) and np.array_equal(again.slots, b.slots)


def test_board_edges():
    assert bd.bulletin_board(5, 0, ps.PERFOMR, seed=1).pertinency.sum() == 0
    full = bd.bulletin_board(5, 5, ps.PERFOMR, payload_bytes=7, seed=1)
    assert ps.detect(full.sk, full.clues, ps.PERFOMR).all() and full.payloads.shape == (5, 7)
    for kw, match in ((dict(N=3, k=4), "do not fit"), (dict(N=0, k=0), "N must"), (dict(N=3, k=1, others=-1), "others"),
                      (dict(N=3, k=1, payload_bytes=0), "payload_bytes")):
        with pytest.raises(ValueError, match=match):
            bd.bulletin_board(**kw)


@pytest.mark.parametrize("p, nbytes", [(786433, 612), (65537, 612), (2 ** 31 - 1, 612), (786433, 5), (3, 5),
                                       (2 ** 31 - 1, 1), (2, 1)])
def test_payload_round_trip(p, nbytes):
    rng = np.random.default_rng(nbytes)
    x = rng.integers(0, 256, size=(20, nbytes), dtype=np.uint8)
    x[0], x[1] = 255, 0
    slots = bd.bytes_to_slots(x, p)
    assert np.array_equal(bd.slots_to_bytes(slots, p, nbytes), x)
    for row in (0, 2):                                         # base-p digits, least significant first
        value = int.from_bytes(x[row].tobytes(), "big")
        assert sum(int(d) * p ** j for j, d in enumerate(slots[row])) == value


def test_payload_bad_inputs():
    p = 786433
    with pytest.raises(ValueError, match="uint8"):
        bd.bytes_to_slots(np.zeros((2, 612), np.int64), p)
    with pytest.raises(ValueError, match="2-D"):
        bd.bytes_to_slots(np.zeros(612, np.uint8), p)
    with pytest.raises(ValueError, match=r"shape \(N, 250\)"):
        bd.slots_to_bytes(np.zeros((2, 249), np.int64), p)
    with pytest.raises(ValueError, match="must lie in"):
        bd.slots_to_bytes(np.full((2, 250), p), p)
    with pytest.raises(ValueError, match="message 1 encode"):
        bd.slots_to_bytes(np.stack([np.zeros(250, np.int64), np.full(250, p - 1)]), p)
    with pytest.raises(ValueError, match="plaintext modulus"):
        bd.payload_slots(612, 2 ** 31)
