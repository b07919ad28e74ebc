"""Ciphertexts sent below the top level: a client drops data primes after encrypting.

Modulus switching down by ``drop_primes`` primes gives smaller ciphertexts and cheaper products and key
switches on the receiving side, at the cost of noise budget. It is offered only where decryption can
tell that the budget ran out (BFV on a backend that reports it), so it can cost a refusal, never a
wrong product. :func:`affordable_drop` picks the most primes an evaluation's noise leaves room for.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["check_drop", "encrypt_low", "spent_bits", "affordable_drop"]

#: Bits a fresh BFV encryption's noise budget falls short of log2(q / t) (SEAL 4.1, N = 8192: 7-8).
FRESH_BITS = 8
#: Noise budget (bits) :func:`affordable_drop` keeps beyond what the evaluation spends.
MARGIN_BITS = 6


def check_drop(drop_primes, params, backend: str) -> int:
    """``drop_primes`` as an int, checked: a non-negative integer, and 0 unless BFV on a backend that
    reports the noise budget (pyfhel)."""
    from .registry import backend_class

    if isinstance(drop_primes, (bool, np.bool_)) or not isinstance(drop_primes, (int, np.integer)) or drop_primes < 0:
        raise ValueError(f"drop_primes must be a non-negative integer or 'auto', got {drop_primes!r}")
    if drop_primes and (params.scheme == "ckks" or not backend_class(backend).has_noise_budget):
        raise ValueError(f"drop_primes needs BFV on a backend that reports the noise budget (pyfhel); "
                         f"got {params.scheme} on {backend!r}")
    return int(drop_primes)


def spent_bits(params, *, ct_products: int = 1, pt_products: int = 0, summands: int = 1) -> int:
    """Noise budget (bits) a BFV evaluation spends: per ciphertext product on its path log2(t N) - 2, per
    plaintext product log2(t sqrt(N)) - 1, and log2 sqrt(k) for k products summed into one result (their
    noises add in quadrature). Fitted to SEAL 4.1 at N = 8192 (t = 65537, 1032193: 28 and 32 bits per
    ciphertext product, 21 and 25 per plaintext product; CSSC spent 50-51, HEGMM's products 60-91)."""
    t, logn = math.log2(params.plain_modulus), math.log2(params.n)
    return math.ceil(ct_products * (t + logn - 2) + pt_products * (t + logn / 2 - 1) + math.log2(max(summands, 1)) / 2)


def affordable_drop(params, backend: str, **path) -> int:
    """The most data primes a client can drop after encrypting (0 where :func:`check_drop` allows none)
    and keep what an evaluation along ``path`` (:func:`spent_bits`' keywords) spends + :data:`MARGIN_BITS`
    of noise budget: a fresh encryption at the level left has log2(q / t) - :data:`FRESH_BITS`.
    Decryption still checks the budget."""
    from .registry import backend_class

    if params.scheme == "ckks" or not backend_class(backend).has_noise_budget:
        return 0
    spent = spent_bits(params, **path)
    data = list(params.qi_bits[:-1])
    t = math.log2(params.plain_modulus)
    drop = 0
    while drop + 1 < len(data) and sum(data[:len(data) - drop - 1]) - t - FRESH_BITS >= spent + MARGIN_BITS:
        drop += 1
    return drop


def encrypt_low(ctx, values, drop_primes: int):
    """``values`` encrypted, then ``drop_primes`` data primes dropped."""
    return ctx.drop_level(ctx.encrypt(values), drop_primes) if drop_primes else ctx.encrypt(values)
