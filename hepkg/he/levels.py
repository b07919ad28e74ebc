"""Ciphertexts sent below the top level: a client drops data primes after encrypting.

Modulus switching down by ``drop_primes`` primes gives smaller ciphertexts and cheaper products and key
switches on the receiving side, at the cost of noise budget. It is offered only where decryption can
tell that the budget ran out (BFV on a backend that reports it), so it can cost a refusal, never a
wrong product.
"""
from __future__ import annotations

import numpy as np

__all__ = ["check_drop", "encrypt_low"]


def check_drop(drop_primes, params, backend: str) -> int:
    """``drop_primes`` as an int, checked: a non-negative integer, and 0 unless BFV on a backend that
    reports the noise budget (pyfhel)."""
    from .registry import backend_class

    if isinstance(drop_primes, (bool, np.bool_)) or not isinstance(drop_primes, (int, np.integer)) or drop_primes < 0:
        raise ValueError(f"drop_primes must be a non-negative integer, got {drop_primes!r}")
    if drop_primes and (params.scheme == "ckks" or not backend_class(backend).has_noise_budget):
        raise ValueError(f"drop_primes needs BFV on a backend that reports the noise budget (pyfhel); "
                         f"got {params.scheme} on {backend!r}")
    return int(drop_primes)


def encrypt_low(ctx, values, drop_primes: int):
    """``values`` encrypted, then ``drop_primes`` data primes dropped."""
    return ctx.drop_level(ctx.encrypt(values), drop_primes) if drop_primes else ctx.encrypt(values)
