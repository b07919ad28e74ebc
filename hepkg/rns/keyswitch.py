"""Hybrid key switching (dnum digits, special primes P) and hoisted rotations.

switch(d) = ModDown(sum_j ModUp_j(d) * key_j): the digits' extensions to Q_l and P are
multiplied by the key pairs and summed (the inner-product kernel), then divided by P.
A rotation applies X -> X^g (a permutation of NTT slots) first; since the permutation
commutes with ModUp up to an equally small extension error, several rotations of one
ciphertext share one ModUp (hoisting).
"""
from __future__ import annotations

import numpy as np

from .arith import add_mod, mul_shoup
from .basis import Bases, dot_mod, mod_down, mod_up
from .keys import SwitchKey


def key_rows(bases: Bases, key: SwitchKey, level: int, digits: int) -> tuple:
    """The (b, a) key digits restricted to the rows of Q_l and P."""
    k = bases.nq - level
    if level == 0:
        return key.b[:digits], key.a[:digits]
    xp = bases.xp
    return tuple(xp.concatenate([t[:digits, :k], t[:digits, bases.nq:]], axis=1) for t in (key.b, key.a))


def apply_key(bases: Bases, ext, level: int, key: SwitchKey, addend=None):
    """(c0, c1) over Q_l, stacked (2, k, N), of the ModUp extensions ``ext`` (digits, k+|P|, N); with ``addend``
    (2, k, N), (P addend + the inner product) divided by P q_last instead: the key switch and the rescale of
    (addend + switched) at once, over Q_(l+1) (2, k - 1, N)."""
    b, a = key_rows(bases, key, level, ext.shape[0])
    q_rows = bases.q_rows(level)
    m = bases.mod(q_rows + bases.p_rows)
    acc = bases.xp.stack([dot_mod(ext, b, m), dot_mod(ext, a, m)])
    if addend is None:
        return mod_down(bases, acc, level)
    mq = bases.mod(q_rows)
    p_mod = mq.constants([bases.mod(bases.p_rows).product()] * len(mq))
    acc[:, :len(q_rows)] = add_mod(acc[:, :len(q_rows)], mul_shoup(addend, *p_mod, mq.q, mq.xp), mq.q, mq.xp)
    return mod_down(bases, acc, level, rescale=True)


def switch(bases: Bases, d, level: int, key: SwitchKey, dnum: int, add=None, add_polys: int = 0,
           rescale: bool = False):
    """Key-switch the NTT-form polynomial d (k, N) at ``level``: (2, k, N), plus the first ``add_polys``
    polynomials of ``add`` (a relinearization adds the ciphertext's first two, a rotation its first). With
    ``rescale`` (a relinearization: ``add_polys`` 2), the sum is also rescaled, in the key switch's ModDown:
    (2, k - 1, N)."""
    if rescale and add_polys != 2:
        raise ValueError("a key switch rescales only with both addend polynomials (a relinearization)")
    if bases.xp is not np:
        ext = bases.fused.mod_up(d, level, dnum)
        return bases.fused.switch_tail(ext, level, key, add=add, add_polys=add_polys, rescale=rescale)
    ext = mod_up(bases, d, level, dnum)
    if rescale:
        return apply_key(bases, ext, level, key, addend=add[:2])
    out = apply_key(bases, ext, level, key)
    if add_polys:
        out[:add_polys] = add_mod(add[:add_polys], out[:add_polys], bases.mod(bases.q_rows(level)).q)
    return out


def rotate_hoisted(bases: Bases, c, level: int, keys: dict, dnum: int, indices: dict) -> dict:
    """Rotations of the size-2 ciphertext c (2, k, N): {step: (2, k, N)}, one ModUp for all.

    ``keys[step]``: the Galois key; ``indices[step]``: the NTT-order index map of its automorphism (an
    array of the engine's module)."""
    xp = bases.xp
    if xp is not np:
        ext = bases.fused.mod_up(c[1], level, dnum)
        return {step: bases.fused.switch_tail(ext, level, key, add=c, add_polys=1, perm=indices[step])
                for step, key in keys.items()}
    ext = mod_up(bases, c[1], level, dnum)
    m = bases.mod(bases.q_rows(level))
    out = {}
    for step, key in keys.items():
        idx = indices[step]
        r = apply_key(bases, ext[..., idx], level, key)
        r[0] = add_mod(r[0], c[0][..., idx], m.q, xp)
        out[step] = r
    return out
