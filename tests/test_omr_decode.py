"""OMR digest compression (plaintext twins) and the receiver's decoding: SophOMR Alg. 2-5, PerfOMR buckets."""
import pickle
import subprocess
import sys

import numpy as np
import pytest

from hepkg.omr import compress as cp
from hepkg.omr import decode as dc

pytest.importorskip("flint")

PRIMES = (65537, 786433)
N, K = 65536, 50


def pertinency(n, indices):
    v = np.zeros(n, np.int64)
    v[indices] = 1
    return v


def board(p, size, t=4, n=N, seed=0):
    """A pertinency vector with ``size`` random pertinent messages and random payload slots mod p."""
    rng = np.random.default_rng([p, size, seed])
    idx = np.sort(rng.choice(n, size=size, replace=False))
    return idx, pertinency(n, idx), rng.integers(0, p, size=(n, t))


# --- compress.py against naive Python integers ----------------------------------------------------

def naive(v, slots, k, p):
    """w_j = sum_i v_i i^j and e_{s,j} = sum_i i^j PL_s[i] v_i, i = 1..N, with Python ints."""
    n, t = len(slots), len(slots[0])
    w = [sum(int(v[m]) * (m + 1) ** j for m in range(n)) % p for j in range(1, k + 1)]
    e = [[sum((m + 1) ** j * int(slots[m][s]) * int(v[m]) for m in range(n)) % p for j in range(1, k + 1)]
         for s in range(t)]
    return w, e


@pytest.mark.parametrize("p", PRIMES + (2 ** 31 - 1,))
def test_compress_matches_naive_python_ints(p):
    rng = np.random.default_rng(p)
    n, k, t = 40, 7, 3
    v = rng.integers(0, p, size=n)                       # any vector mod p, values up to p - 1
    v[rng.choice(n, 10, replace=False)] = 0
    slots = rng.integers(p - 1000, p, size=(n, t))       # near p: the limb arithmetic must stay exact
    w, e = naive(v, slots.tolist(), k, p)
    assert cp.compress_indices(v, k, p).tolist() == w
    assert cp.compress_payloads(v, slots, k, p).tolist() == e
    c = cp.vandermonde(k, n, p)
    assert c.tolist() == [[pow(i, j, p) for i in range(1, n + 1)] for j in range(1, k + 1)]
    stacked = cp.stacked_matrix(slots, k, p).astype(object)
    assert stacked.shape == ((t + 1) * k, n)
    assert [int(x) % p for x in stacked @ v.astype(object)] == w + [x for row in e for x in row]


def test_perfomr_compress_matches_naive_python_ints():
    p, n = 65537, 70000                                   # two base-p digits per index
    code = cp.PerfOMRCode(n, p, k=5, repetitions=3, buckets=7, seed=4)
    rng = np.random.default_rng(1)
    idx = rng.choice(n, 5, replace=False)
    v = pertinency(n, idx)
    slots = rng.integers(0, p, size=(n, 2))
    want = np.zeros((3, 7, 3), object)
    for r in range(3):
        for m in idx:
            want[r, code.assignment[r, m]] += [m // p, m % p, 1]
    assert (cp.perfomr_compress_indices(v, code) == want % p).all()
    e = [[sum(int(code.weights[b, m]) * int(slots[m, s]) for m in idx) % p for s in range(2)] for b in range(53)]
    assert cp.perfomr_compress_payloads(v, slots, code).tolist() == e
    assert code.payload_buckets == 53 and cp.PerfOMRCode(n, p, k=51).payload_buckets == 106
    assert (cp.PerfOMRCode(n, p, k=5, repetitions=3, buckets=7, seed=4).weights == code.weights).all()


# --- SophOMR decoding (Alg. 3 and 5) --------------------------------------------------------------

@pytest.mark.parametrize("p", PRIMES)
@pytest.mark.parametrize("size", [0, 1, K - 1, K])
def test_round_trip(p, size):
    idx, v, slots = board(p, size)
    w, e = cp.compress_indices(v, K, p), cp.compress_payloads(v, slots, K, p)
    got, payloads = dc.decode(w, e, N, p)
    assert got.tolist() == idx.tolist()
    assert payloads.shape == (size, 4) and (payloads == slots[idx]).all()


def test_round_trip_full_payloads():
    p, t, n = 786433, 250, 4096                          # t = 250 slots: a 612-byte payload mod 786433
    idx, v, slots = board(p, 30, t=t, n=n)
    got, payloads = dc.decode(cp.compress_indices(v, K, p), cp.compress_payloads(v, slots, K, p), n, p)
    assert got.tolist() == idx.tolist() and (payloads == slots[idx]).all()


def test_edge_columns():
    p = 65537
    v = pertinency(N, [0, N - 1])                         # columns 1 and N = p - 1
    assert dc.decode_indices(cp.compress_indices(v, 3, p), N, p).tolist() == [0, N - 1]


@pytest.mark.parametrize("p", PRIMES)
@pytest.mark.parametrize("seed", range(3))
def test_overflow_raises(p, seed):
    _, v, slots = board(p, K + 1, seed=seed)
    with pytest.raises(dc.DecodeOverflow, match=f"at most {K} expected"):
        dc.decode(cp.compress_indices(v, K, p), cp.compress_payloads(v, slots, K, p), N, p)


def test_overflow_is_picklable_and_a_value_error():
    err = pickle.loads(pickle.dumps(dc.DecodeOverflow(K, "detail")))
    assert isinstance(err, ValueError) and err.k == K and "k=50" in str(err)


def test_payloads_for_more_than_k_indices_raise():
    with pytest.raises(dc.DecodeOverflow):
        dc.decode_payloads(np.zeros((2, 3), np.int64), [1, 2, 3, 4], 65537)


def test_undetectable_overflow_by_a_subgroup():
    """The documented limit: a subgroup of order 64 > k has power sums 0 for j = 1..50."""
    p = 65537
    h = pow(3, (p - 1) // 64, p)                          # 3 generates F_65537^*
    subgroup = sorted({pow(h, i, p) for i in range(64)})
    few = pertinency(N, [10, 20, 30])
    many = few.copy()
    many[np.array(subgroup) - 1] = 1
    assert many.sum() == 67 and (cp.compress_indices(many, K, p) == cp.compress_indices(few, K, p)).all()


@pytest.mark.parametrize("p", PRIMES)
@pytest.mark.parametrize("size", [1, 20, K])
def test_corrupted_indices_raise(p, size):
    _, v, _ = board(p, size)
    w = cp.compress_indices(v, K, p)
    rng = np.random.default_rng(size)
    for _ in range(3):
        bad = w.copy()
        j = rng.integers(K)
        bad[j] = (bad[j] + rng.integers(1, p)) % p
        with pytest.raises(dc.DecodeError):
            dc.decode_indices(bad, N, p)


@pytest.mark.parametrize("p", PRIMES)
@pytest.mark.parametrize("size", [0, 1, K - 1])
def test_corrupted_payloads_raise(p, size):
    """With |I| < k the k - |I| spare equations of Alg. 5 expose a corrupted e."""
    idx, v, slots = board(p, size)
    e = cp.compress_payloads(v, slots, K, p)
    e[2, 7] = (e[2, 7] + 1) % p
    with pytest.raises(dc.DecodeError, match="payloads"):
        dc.decode(cp.compress_indices(v, K, p), e, N, p)


def test_bad_inputs():
    p = 65537
    with pytest.raises(ValueError, match="p > N"):
        cp.compress_indices(np.zeros(p, np.int64), 5, p)
    with pytest.raises(ValueError, match="prime"):
        cp.vandermonde(3, 10, 65536)
    with pytest.raises(ValueError, match="not reduced"):
        cp.compress_indices([0, p], 3, p)
    with pytest.raises(ValueError, match="shape"):
        cp.compress_payloads(np.zeros(10, np.int64), np.zeros((9, 2), np.int64), 3, p)
    with pytest.raises(ValueError, match="shape"):
        dc.decode(np.zeros(5, np.int64), np.zeros((2, 4), np.int64), 100, p)
    with pytest.raises(ValueError, match="distinct"):
        dc.decode_payloads(np.zeros((1, 5), np.int64), [3, 3], p)


def test_imports_without_flint_and_names_it():
    code = ("import sys; sys.modules['flint'] = None\n"
            "import hepkg.omr.compress as cp, hepkg.omr.decode as dc\n"
            "w = cp.compress_indices([0, 1, 0], 2, 65537)\n"
            "try:\n    dc.decode_indices(w, 3, 65537)\n"
            "except ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "python-flint" in out


# --- PerfOMR --------------------------------------------------------------------------------------

@pytest.mark.parametrize("size", [0, 1, K - 1, K])
def test_perfomr_round_trip(size):
    p = 65537
    idx, v, slots = board(p, size)
    code = cp.PerfOMRCode(N, p, k=K, seed=size)
    buckets = cp.perfomr_compress_indices(v, code)
    assert buckets.shape == (16, 400, 3)
    got, counts, payloads = dc.perfomr_decode(buckets, cp.perfomr_compress_payloads(v, slots, code), code)
    assert got.tolist() == idx.tolist() and (counts == 1).all() and (payloads == slots[idx]).all()


def test_perfomr_bundles_decode_with_their_counts():
    """Bundles of nu = 2 (Sec. 3.4.4): a bucket counts 0..2 pertinent members; payloads come back divided out."""
    p = 65537
    idx, v, slots = board(p, 40)
    v[idx[::3]] = 2                                        # both members of every third bundle are pertinent
    code = cp.PerfOMRCode(N, p, k=K, seed=3, nu=2)
    got, counts, payloads = dc.perfomr_decode(cp.perfomr_compress_indices(v, code),
                                              cp.perfomr_compress_payloads(v, slots, code), code)
    assert got.tolist() == idx.tolist() and counts.tolist() == v[idx].tolist() and (payloads == slots[idx]).all()
    with pytest.raises(ValueError, match="nu=2"):
        cp.perfomr_compress_indices(v * 2, code)


def test_perfomr_overflow_and_corruption_raise():
    p = 65537
    code = cp.PerfOMRCode(N, p, k=K)
    _, v, slots = board(p, K + 1)
    with pytest.raises(dc.DecodeOverflow, match="add up to 51"):
        dc.perfomr_decode_indices(cp.perfomr_compress_indices(v, code), code)
    idx, v, slots = board(p, 10)
    buckets = cp.perfomr_compress_indices(v, code)
    r, b = np.argwhere(buckets[..., 2] == 1)[0]
    bad = buckets.copy()
    bad[r, b, 1] = (bad[r, b, 1] + 1) % p                  # a single bucket now names the wrong index
    with pytest.raises(dc.DecodeError, match="corrupted"):
        dc.perfomr_decode_indices(bad, code)
    bad = buckets.copy()
    bad[3, :, 2] = 0                                       # one repetition loses its counters
    with pytest.raises(dc.DecodeError, match="disagree"):
        dc.perfomr_decode_indices(bad, code)
    e = cp.perfomr_compress_payloads(v, slots, code)
    e[5, 0] = (e[5, 0] + 1) % p
    with pytest.raises(dc.DecodeError, match="corrupted"):
        dc.perfomr_decode_payloads(e, idx, code)


def test_perfomr_failures_are_reported():
    p, n = 65537, 64
    code = cp.PerfOMRCode(n, p, k=K, repetitions=1, buckets=2)   # 2 buckets: collisions everywhere
    with pytest.raises(dc.DecodeError, match="collided in all 1 repetitions"):
        dc.perfomr_decode_indices(cp.perfomr_compress_indices(pertinency(n, [1, 2, 3, 4, 5]), code), code)
    code = cp.PerfOMRCode(n, p, k=K)
    weights = code.weights.copy()
    weights[:, 9] = weights[:, 8] * 2 % p                   # two proportional weight columns
    code.__dict__["_rng_draws"] = (code.assignment, weights)
    with pytest.raises(dc.DecodeError, match="linearly dependent"):
        dc.perfomr_decode_payloads(np.zeros((53, 2), np.int64), [8, 9], code)
