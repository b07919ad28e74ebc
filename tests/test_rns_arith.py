"""hepkg.rns.arith and ntt: word-sized modular arithmetic and the negacyclic NTT, against Python ints."""
import random

import numpy as np
import pytest

from hepkg.rns.arith import (MAX_PRIME_BITS, Modulus, add_mod, is_prime, mul_mod, mul_shoup, mul_wide, neg_mod,
                             ntt_prime_near, ntt_primes, shoup_table, signed_to_rns, sub_mod)
from hepkg.rns.ntt import NTT, automorphism_coeffs, automorphism_index

RNG = random.Random(20240614)


def _edge_values(q):
    """Residues that stress carries: 0, 1, q-1, q-2, q//2 and values around 2^32."""
    return [0, 1, q - 1, q - 2, q // 2, (1 << 32) - 1 if q > 1 << 32 else q - 3, (1 << 32) % q, ((1 << 32) + 1) % q]


def _operands(primes, count=3000):
    cols = [[RNG.randrange(q) for _ in range(count)] + _edge_values(q) for q in primes]
    a = np.array(cols, dtype=np.uint64)
    b = np.array([RNG.sample(c, len(c)) for c in cols], dtype=np.uint64)
    return a, b


def test_is_prime_matches_trial_division():
    small = [n for n in range(2000) if n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))]
    assert [n for n in range(2000) if is_prime(n)] == small
    assert is_prime(2 ** 61 - 1) and not is_prime(2 ** 61 + 1) and not is_prime(3215031751)  # strong pseudoprime


@pytest.mark.parametrize("bits", [30, 45, 59, 60])
def test_ntt_primes_are_ntt_friendly(bits):
    ps = ntt_primes(bits, 8192, 4)
    assert len(set(ps)) == 4
    assert all(q.bit_length() == bits and q % 16384 == 1 and is_prime(q) for q in ps)
    near = ntt_prime_near(2.0 ** bits * 0.75, 8192, exclude=ps)
    assert near % 16384 == 1 and is_prime(near) and abs(near / 2.0 ** bits - 0.75) < 1e-3


def test_mul_wide_is_the_128_bit_product():
    a = np.array([RNG.getrandbits(64) for _ in range(2000)] + [2 ** 64 - 1, 0, 2 ** 32], dtype=np.uint64)
    b = np.array([RNG.getrandbits(64) for _ in range(2000)] + [2 ** 64 - 1, 7, 2 ** 32], dtype=np.uint64)
    hi, lo = mul_wide(a, b)
    assert all((int(h) << 64 | int(w)) == int(x) * int(y) for h, w, x, y in zip(hi, lo, a, b))


@pytest.mark.parametrize("bits", [20, 31, 33, 45, 52, 59, MAX_PRIME_BITS])
def test_mul_mod_matches_python_ints(bits):
    primes = ntt_primes(bits, 1024, 3)
    m = Modulus(primes)
    a, b = _operands(primes)
    got = mul_mod(a, b, m)
    for i, q in enumerate(primes):
        assert [int(v) for v in got[i]] == [int(x) * int(y) % q for x, y in zip(a[i], b[i])]


@pytest.mark.parametrize("bits", [31, 45, MAX_PRIME_BITS])
def test_shoup_add_sub_neg_match_python_ints(bits):
    primes = ntt_primes(bits, 1024, 2)
    m = Modulus(primes)
    a, b = _operands(primes, 1000)
    consts = [RNG.randrange(q) for q in primes]
    w, ws = m.constants(consts)
    big = np.array([[RNG.getrandbits(64) for _ in range(a.shape[1])] for _ in primes], dtype=np.uint64)
    table = shoup_table(b, m.q)
    for i, q in enumerate(primes):
        ai, bi = [int(v) for v in a[i]], [int(v) for v in b[i]]
        assert [int(v) for v in mul_shoup(a, w, ws, m.q)[i]] == [x * consts[i] % q for x in ai]
        assert [int(v) for v in mul_shoup(big, w, ws, m.q)[i]] == [int(x) * consts[i] % q for x in big[i]]
        assert [int(v) for v in add_mod(a, b, m.q)[i]] == [(x + y) % q for x, y in zip(ai, bi)]
        assert [int(v) for v in sub_mod(a, b, m.q)[i]] == [(x - y) % q for x, y in zip(ai, bi)]
        assert [int(v) for v in neg_mod(a, m.q)[i]] == [-x % q for x in ai]
        assert [int(v) for v in table[i]] == [(y << 64) // q for y in bi]


def test_shoup_worst_case_quotients():
    """The largest operands (a near 2^64, w = q - 1) maximize the dropped carries of numpy's quotient."""
    primes = ntt_primes(MAX_PRIME_BITS, 1024, 3)
    m = Modulus(primes)
    consts = [q - 1 for q in primes]
    a = np.array([[2 ** 64 - 1, 2 ** 64 - 2, 2 ** 63, 2 ** 32 - 1, 2 ** 32, q - 1, 0] for q in primes], dtype=np.uint64)
    got = mul_shoup(a, *m.constants(consts), m.q)
    assert [[int(v) for v in row] for row in got] == [[int(x) * c % q for x in row] for row, c, q in zip(a, consts, primes)]


def test_signed_to_rns():
    primes = ntt_primes(50, 1024, 2)
    x = np.array([[-(2 ** 62), -1, 0, 1, 2 ** 62 - 1]], dtype=np.int64)
    got = signed_to_rns(x, Modulus(primes))
    assert got.shape == (1, 2, 5)
    assert [[int(v) for v in row] for row in got[0]] == [[int(v) % q for v in x[0]] for q in primes]


def _schoolbook(a, b, q):
    n = len(a)
    out = [0] * n
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            k = i + j
            out[k % n] += x * y if k < n else -x * y
    return [v % q for v in out]


def test_ntt_round_trip_and_negacyclic_convolution():
    n = 128
    primes = ntt_primes(60, n, 2) + ntt_primes(40, n, 1)
    t = NTT(n, Modulus(primes))
    a = np.array([[RNG.randrange(q) for _ in range(n)] for q in primes], dtype=np.uint64)
    b = np.array([[RNG.randrange(q) for _ in range(n)] for q in primes], dtype=np.uint64)
    assert (t.inverse(t.forward(a)) == a).all()
    prod = t.inverse(t.multiply(t.forward(a), t.forward(b)))
    for i, q in enumerate(primes):
        assert [int(v) for v in prod[i]] == _schoolbook([int(v) for v in a[i]], [int(v) for v in b[i]], q)


def test_ntt_batched_and_sub_tables():
    n = 4096
    primes = ntt_primes(45, n, 3)
    t = NTT(n, Modulus(primes))
    rng = np.random.default_rng(1)
    a = np.stack([np.stack([rng.integers(0, q, n, dtype=np.uint64) for q in primes]) for _ in range(2)])
    fa = t.forward(a)
    assert (fa[1] == t.forward(a[1])).all() and (t.inverse(fa) == a).all()
    assert (t.take([2, 0]).forward(a[0, [2, 0]]) == fa[0, [2, 0]]).all()
    x = np.zeros((3, n), dtype=np.uint64)
    x[:, 1] = 1                                                   # X evaluates to psi^(2 brv(j) + 1)
    assert len({int(v) for v in t.forward(x)[0]}) == n


@pytest.mark.parametrize("g", [5, 25, 3, 2 * 4096 - 1])
def test_automorphism_is_a_permutation_of_ntt_slots(g):
    n = 4096
    primes = ntt_primes(50, n, 2)
    m = Modulus(primes)
    t = NTT(n, m)
    rng = np.random.default_rng(g)
    a = np.stack([rng.integers(0, q, n, dtype=np.uint64) for q in primes])
    assert (t.forward(automorphism_coeffs(a, g, m.q)) == t.forward(a)[..., automorphism_index(n, g)]).all()
