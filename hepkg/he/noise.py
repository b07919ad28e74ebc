"""The BFV noise budget measured by probing, on a backend that does not report it (OpenFHE).

A BFV ciphertext of m with invariant noise e decrypts to m while |e| < q / 2t. Multiplying it by the
constant 2^k multiplies m by 2^k mod t and e by 2^k (plus a term below t 2^k from q mod t, negligible
against the noise of any evaluated ciphertext), so 2^k ct still decrypts to 2^k m mod t exactly while
k is below the budget log2(q / 2t |e|), and wrong once past it. :func:`probed_budget` finds the largest
such k by bisection: the budget in bits, to within one bit. Each probe multiplies by constants below t
(a scalar plaintext product leaves the noise otherwise unchanged) and decrypts once.
"""
from __future__ import annotations

import math

import numpy as np

from .context import Ciphertext, Context
from .errors import SchemeError, SecretKeyRequired

__all__ = ["probed_budget"]


def _doubled(ctx: Context, ct: Ciphertext, k: int, chunk: int) -> Ciphertext:
    """2^k ct, by products with the constants 2^chunk (and the remainder) below t."""
    while k > 0:
        step = min(k, chunk)
        ct = ctx.mul_plain(ct, 1 << step)
        k -= step
    return ct


def probed_budget(ctx: Context, ct: Ciphertext, expected=None) -> int:
    """Noise budget of BFV ``ct`` in bits: the largest k with 2^k ct decrypting to 2^k ``expected`` mod t
    (``expected``: the slots ``ct`` should hold, zeros after them, or one value in every slot; by default
    what it decrypts to now, so a ciphertext already wrong is measured against its wrong value). -1 when
    ``ct`` itself decrypts to something else than ``expected``. ``ctx`` must hold the secret key."""
    if not ctx.is_integer:
        raise SchemeError(f"the noise budget is a BFV/BGV notion; this context is {ctx.scheme.upper()}")
    if not ctx.has_secret:
        raise SecretKeyRequired("the noise budget is probed by decrypting: this context holds no secret key")
    t = ctx.plain_modulus
    now = ctx.decrypt(ct, signed=False)
    want = now
    if expected is not None:
        given = np.asarray(expected, dtype=np.int64) % t
        want = np.full_like(now, given) if given.ndim == 0 else np.pad(given, (0, now.size - given.size))
    if not np.array_equal(now, want):
        return -1
    chunk = int(math.log2(t - 1))
    lo, hi = 0, int(sum(ctx.built.q_bits[:ctx.max_level + 1 - ct.level]) - math.log2(t))

    def holds(k: int) -> bool:
        scaled = want * pow(2, k, t) % t
        return np.array_equal(ctx.decrypt(_doubled(ctx, ct, k, chunk), signed=False), scaled)

    while lo < hi:                                  # holds(lo); the budget lies in [lo, hi)
        mid = (lo + hi + 1) // 2
        if holds(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo
