"""Key material: secret, public, relinearization and Galois (rotation) keys, all in NTT form.

Hybrid key switching keys (one pair per digit j of Q, over every row of QP):
b_j = -a_j s + e_j + F_j s', a_j uniform, where F_j = P mod q_i on the rows of digit j and 0
elsewhere (P rows included). F_j is P (Q/Q_j) [(Q/Q_j)^-1]_{Q_j} reduced mod each prime, the
same at every level, so one key serves all levels.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .arith import add_mod, mul_mod, mul_shoup, neg_mod, signed_to_rns
from .basis import Bases


@dataclass
class SwitchKey:
    """(b, a): (dnum, rows of QP, N) uint64 arrays, NTT form."""

    b: object
    a: object

    @property
    def nbytes(self) -> int:
        return int(self.b.nbytes + self.a.nbytes)


@dataclass
class KeySet:
    """What an engine holds: the secret (None in an evaluation-only engine), the public key,
    the relinearization key (None when not made) and Galois keys by rotation step."""

    pk: tuple
    sk: object = None
    relin: SwitchKey | None = None
    galois: dict = field(default_factory=dict)


def switch_key_bytes(bases: Bases, dnum: int) -> int:
    """Bytes of one switching key (its digits over every row of QP)."""
    return 2 * len(bases.digits(0, dnum)) * len(bases.full) * bases.n * 8


def ntt_signed(bases: Bases, x, rows):
    """NTT-form residues over ``rows`` of signed coefficient vectors x (host int64, (..., N))."""
    m = bases.mod(rows)
    return bases.ntt(rows).forward(signed_to_rns(m.xp.asarray(x), m))


def secret_key(bases: Bases, sampler) -> object:
    """A ternary secret, NTT form over every row of QP."""
    return ntt_signed(bases, sampler.ternary()[0], range(len(bases.full)))


def public_key(bases: Bases, sampler, sk) -> tuple:
    """(b, a) over the Q rows: b = -a s + e."""
    rows = tuple(range(bases.nq))
    m = bases.mod(rows)
    a = m.xp.asarray(sampler.uniform(m.primes))
    e = ntt_signed(bases, sampler.gaussian()[0], rows)
    return add_mod(neg_mod(mul_mod(a, sk[:bases.nq], m), m.q, m.xp), e, m.q, m.xp), a


def switch_key(bases: Bases, sampler, sk, target, dnum: int) -> SwitchKey:
    """The key that switches a polynomial multiplied by ``target`` (NTT, all rows) to ``sk``."""
    m, xp = bases.full, bases.xp
    digits = bases.digits(0, dnum)
    a = xp.asarray(sampler.uniform(m.primes, (len(digits),)))
    e = ntt_signed(bases, sampler.gaussian(len(digits)), range(len(m)))
    b = add_mod(neg_mod(mul_mod(a, sk, m), m.q, xp), e, m.q, xp)
    p_prod = bases.mod(bases.p_rows).product()
    for j, rows in enumerate(digits):
        f = [p_prod if i in rows else 0 for i in range(len(m))]
        b[j] = add_mod(b[j], mul_shoup(target, *m.constants(f), m.q, xp), m.q, xp)
    return SwitchKey(b, a)


def relin_key(bases: Bases, sampler, sk, dnum: int) -> SwitchKey:
    """Switching key for s^2 -> s."""
    return switch_key(bases, sampler, sk, mul_mod(sk, sk, bases.full), dnum)


def galois_key(bases: Bases, sampler, sk, index: np.ndarray, dnum: int) -> SwitchKey:
    """Switching key for s(X^g) -> s; ``index`` is the NTT-order map of X -> X^g."""
    return switch_key(bases, sampler, sk, sk[..., bases.xp.asarray(index)], dnum)
