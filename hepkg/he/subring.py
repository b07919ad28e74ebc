"""Ring switching (BGV12 / GHPS13): a BFV ciphertext of degree n taken to the subring of degree n/d.

With s'(X) a secret of the small ring and its lift s(X) = s'(X^d), a ciphertext (c0, c1) under the lift
decrypts coefficient by coefficient: keeping every d-th coefficient of c0 and c1 gives a ciphertext of the
small ring under s' whose plaintext is every d-th coefficient of the big one. With t = 1 mod 2n (full packing on
both rings), that plaintext's slot over a root beta = alpha^d is d^-1 times the sum of the big slots over the d
roots alpha with that power: in the BFV slot layout (2 rows of n/2, slot j of a row over the root of exponent
+-5^j), the slots (r, j + k n'/2), k < d, of the big ring (n' = n/d). So a big ciphertext whose slots are zero
outside j < n'/2 of each row, and multiplied by d, arrives whole, slot (r, j) to slot (r, j).

The steps after the key switch to the lift are plain arithmetic on coefficients: this module holds them, for any
backend that can read and write its ciphertexts' residues (:mod:`hepkg.he.backends.openfhe`).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..rns.arith import root_of_unity
from ..rns.basis import Bases
from ..rns.keys import SwitchKey, ntt_signed, switch_key
from ..rns.keyswitch import switch
from ..rns.sampling import Sampler

__all__ = ["minimal_root", "slot_map", "descended_slots", "lift", "make_key", "descend"]


@lru_cache(maxsize=64)
def minimal_root(q: int, order: int) -> int:
    """The least primitive ``order``-th root of unity mod q: the one OpenFHE takes for its NTTs (ciphertext primes)
    and for its packed encoding (the plaintext modulus)."""
    first = root_of_unity(q, order)
    step, x, least = first * first % q, first, q
    for _ in range(order // 2):          # the primitive roots are first^k, k odd
        least = min(least, x)
        x = x * step % q
    return least


@lru_cache(maxsize=64)
def slot_map(t: int, n: int, d: int) -> tuple[int, int]:
    """(flip, shift): where a packed encoder that evaluates over the least primitive roots mod t (OpenFHE's) puts
    big slot (r, j) after the descent: small slot (r xor flip, (j + shift) mod n'/2). The small ring's root is
    (big root)^(d c) for some odd c; the big slot of exponent e lands on the small slot of exponent c^-1 e mod 2n'."""
    ns, m = n // d, 2 * n // d
    g, target = pow(minimal_root(t, 2 * n), d, t), minimal_root(t, m)
    x, c = g, 1
    while x != target:
        x, c = x * g % t, c + 1
    e, cur = pow(c, -1, m), 1
    for j in range(ns // 2):
        if cur == e:
            return 0, j
        if m - cur == e:
            return 1, j
        cur = cur * 5 % m
    raise ValueError(f"no slot of the ring of degree {ns} has exponent {e}")       # t, n, d not a packing


def descended_slots(values: np.ndarray, d: int, t: int) -> np.ndarray:
    """The slots of the descended plaintext: small (r, j) = d^-1 sum_k big (r, j + k n'/2) mod t."""
    values = np.asarray(values, dtype=np.int64) % t
    rows = values.reshape(2, d, -1)
    total = rows.sum(axis=1) % t                      # at most d * t < 2^63
    return (total * pow(d, -1, t) % t).reshape(-1)


def lift(small: np.ndarray, d: int) -> np.ndarray:
    """s(X) = s'(X^d): the coefficients of a small-ring polynomial spread every d-th."""
    out = np.zeros(len(small) * d, dtype=np.int64)
    out[::d] = small
    return out


def make_key(secret: np.ndarray, small_secret: np.ndarray, primes: tuple[int, int], seed: int | None = None) \
        -> SwitchKey:
    """The key that switches a ciphertext modulo primes[0] under ``secret`` (signed coefficients, ring n) to the
    lift of ``small_secret`` (ring n/d): one digit, primes[1] as the special prime P. Its RLWE samples are d of the
    small ring under ``small_secret`` at modulus q0 P."""
    n = len(secret)
    d = n // len(small_secret)
    bases = _bases(n, *primes)
    target, lifted = (ntt_signed(bases, x, range(2)) for x in (secret, lift(small_secret, d)))
    return switch_key(bases, Sampler(n, seed), lifted, target, dnum=1)


def descend(c0: np.ndarray, c1: np.ndarray, key: SwitchKey, primes: tuple[int, int], d: int, small_prime: int) \
        -> tuple[np.ndarray, np.ndarray]:
    """A ciphertext (c0, c1) modulo primes[0] (coefficients, uint64, ring n) under the key ``key`` switches from:
    its key switch to the lift, every d-th coefficient, then modulus-switched to ``small_prime``: (c0', c1')
    (coefficients, uint64, ring n/d) under the small secret."""
    n = len(c0)
    bases, q0 = _bases(n, *primes), primes[0]
    ntt = bases.ntt((0,))
    e = ntt.forward(np.stack([c0, c1])[:, None, :])                       # (2, 1, n)
    out = switch(bases, e[1], 0, key, 1, add=e, add_polys=1)             # under the lift
    coeffs = ntt.inverse(out)[:, 0, ::d]
    return tuple(_mod_switch(x, q0, small_prime) for x in coeffs)


def _mod_switch(x: np.ndarray, q: int, q_new: int) -> np.ndarray:
    """round(q_new x / q) mod q_new of residues x mod q: x + round(x (q_new - q) / q), the correction in floating
    point (its error below 2^-10 while |q_new - q| < 2^40: exact but for ties, which either way add a rounding
    error of one, as the modulus switch's own)."""
    if abs(q_new - q) >= 1 << 40:
        raise ValueError(f"primes {q} and {q_new} are too far apart for this modulus switch")
    fix = np.rint(x.astype(np.float64) * ((q_new - q) / q)).astype(np.int64)
    return ((x.astype(np.int64) + fix) % q_new).astype(np.uint64)


@lru_cache(maxsize=8)
def _bases(n: int, q0: int, p: int) -> Bases:
    return Bases(n, (q0,), (p,))
