"""hepkg.rns.encoding and basis: canonical embedding, exact rounding into limbs, CRT, conversion, rescale."""
import random

import numpy as np
import pytest

from hepkg.rns.arith import Modulus, mul_shoup, ntt_primes
from hepkg.rns.basis import Bases, Converter, mod_down, mod_up, rescale, to_centered_float
from hepkg.rns.encoding import Encoder, float_to_rns, galois_element
from hepkg.rns.ntt import automorphism_coeffs

N = 4096
RNG = random.Random(7)


def _int_rows(x):
    return [[int(v) for v in row] for row in x]


def test_encode_decode_round_trip():
    enc = Encoder(N)
    rng = np.random.default_rng(0)
    z = rng.uniform(-4, 4, N // 2) + 1j * rng.uniform(-4, 4, N // 2)
    back = enc.embed(enc.embed_inverse(z))
    assert np.max(np.abs(back - z)) / np.max(np.abs(z)) < 2.0 ** -40     # float64 FFT: ~2^-50
    scale = 2.0 ** 45
    coeffs = np.rint(enc.embed_inverse(z) * scale)
    # rounding error per coefficient <= 1/2, so per slot <= N/2 / scale = 2^-34 here; asked: < 2^-20 relative
    assert np.max(np.abs(enc.decode(coeffs, scale) - z)) / np.max(np.abs(z)) < 2.0 ** -20


def test_rotation_is_the_galois_automorphism():
    enc = Encoder(N)
    primes = ntt_primes(60, N, 1)
    m = Modulus(primes)
    z = np.random.default_rng(1).uniform(-1, 1, N // 2)
    scale = 2.0 ** 40
    res = enc.encode(z, scale, m)
    for step in (1, 3, N // 2 - 1):
        rot = automorphism_coeffs(res, galois_element(N, step), m.q)
        got = enc.decode(to_centered_float(rot, m), scale).real
        assert np.max(np.abs(got - np.roll(z, -step))) < N / scale      # rounding only


@pytest.mark.parametrize("magnitude", [2.0 ** 45, 2.0 ** 61, 2.0 ** 90, 2.0 ** 200])
def test_float_to_rns_is_exact(magnitude):
    primes = ntt_primes(60, N, 2) + ntt_primes(45, N, 1)
    m = Modulus(primes)
    rng = np.random.default_rng(3)
    x = np.rint(rng.uniform(-1, 1, 512) * magnitude)
    x[:3] = [magnitude, -magnitude, 0.0]
    got = float_to_rns(x, m)
    assert _int_rows(got) == [[int(v) % q for v in x] for q in primes]   # int(float) is the exact integer


def test_to_centered_float_matches_python_crt():
    primes = ntt_primes(60, N, 1) + ntt_primes(45, N, 2)
    m = Modulus(primes)
    big = m.product()
    vals = [RNG.randrange(-(big // 2), big // 2) for _ in range(300)] + [0, -1, 1, big // 2, -(big // 2)]
    x = np.array([[v % q for v in vals] for q in primes], dtype=np.uint64)
    got = to_centered_float(x, m)
    assert np.allclose(got, [float(v) for v in vals], rtol=2.0 ** -50, atol=0)


def test_converter_gives_the_centered_value():
    src, dst = ntt_primes(60, N, 3), ntt_primes(45, N, 2)
    conv = Converter(Modulus(src), Modulus(dst))
    big = Modulus(src).product()
    margin = big >> 40                                   # float64 decides the half exactly beyond ~2^-50
    vals = [RNG.randrange(big) for _ in range(400)] + [0, 1, big - 1, big // 2 - margin, big // 2 + margin]
    x = np.array([[v % b for v in vals] for b in src], dtype=np.uint64)
    centered = [v - big if v >= big // 2 else v for v in vals]
    assert _int_rows(conv(x)) == [[c % d for c in centered] for d in dst]
    tie = np.array([[(big // 2 + 1) % b] for b in src], dtype=np.uint64)   # at the half: either representative
    assert int(conv(tie)[0, 0]) in {(big // 2 + 1) % dst[0], (big // 2 + 1 - big) % dst[0]}


def _bases():
    return Bases(N, ntt_primes(60, N, 1) + ntt_primes(45, N, 3), ntt_primes(59, N, 2))


def test_rescale_divides_with_rounding():
    bases = _bases()
    q = bases.q_primes
    qtot = Modulus(q).product()
    vals = [RNG.randrange(qtot) for _ in range(N)]
    x = np.array([[v % p for v in vals] for p in q], dtype=np.uint64)
    ntt = bases.ntt(range(4))
    got = bases.ntt(range(3)).inverse(rescale(bases, ntt.forward(x)))
    want = [(v + q[3] // 2) // q[3] for v in vals]                   # round(x / q_last), x in [0, Q)
    assert _int_rows(got) == [[w % p for w in want] for p in q[:3]]


def test_mod_up_then_mod_down_recovers_the_input():
    bases = _bases()
    rng = np.random.default_rng(5)
    level, dnum = 1, 2
    rows = bases.q_rows(level)
    d = bases.ntt(rows).forward(np.stack([rng.integers(0, p, N, dtype=np.uint64)
                                          for p in bases.mod(rows).primes]))
    ext = mod_up(bases, d, level, dnum)
    assert ext.shape == (2, 3 + 2, N)
    for j, digit in enumerate(bases.digits(level, dnum)):
        assert (ext[j, list(digit)] == d[list(digit)]).all()
    # P * d over Q_l and P, divided by P, is d exactly (its P residues are 0)
    m = bases.mod(rows + bases.p_rows)
    p_prod = bases.mod(bases.p_rows).product()
    w, ws = m.constants([p_prod] * len(m))
    up = np.concatenate([d, np.zeros((2, N), dtype=np.uint64)])
    assert (mod_down(bases, mul_shoup(up, w, ws, m.q), level) == d).all()
