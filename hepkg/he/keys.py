"""Rotation-key policies: which Galois keys a context holds and how a rotation uses them.

``pow2``: keys for +-2^i only (as SEAL's default Galois keys and the Pyfhel setups of the
CSSC and HEGMM papers); a rotation by k is composed of key switches along the non-adjacent
form (NAF) of k, which is also what SEAL does internally, so it costs NAF-weight(k) <=
popcount(k) key switches. ``exact``: one key per requested step, one key switch per
rotation; any other step raises :class:`MissingRotationKey`.
"""
from __future__ import annotations

import numpy as np

from .errors import MissingRotationKey, ParameterError

POLICIES = ("pow2", "exact")


def as_step(k) -> int:
    """``k`` as a rotation step: a Python or numpy integer, not a bool; TypeError otherwise."""
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"rotation steps are integers; got {k!r} ({type(k).__name__})")
    return int(k)


def naf(k: int) -> list[int]:
    """Signed power-of-two terms of k's non-adjacent form (their sum is k)."""
    terms, bit = [], 1
    while k:
        if k & 1:
            digit = 2 - (k & 3)  # +1 or -1
            terms.append(digit * bit)
            k -= digit
        k >>= 1
        bit <<= 1
    return terms


def pow2_terms(k: int, period: int) -> list[int]:
    """Cheapest signed power-of-two decomposition of a left rotation by k (mod period)."""
    k %= period
    if k == 0:
        return []
    a, b = naf(k), naf(k - period)
    return a if len(a) <= len(b) else b


class RotationKeys:
    """The Galois keys of a context: the set of steps held, and how a rotation is planned."""

    def __init__(self, policy: str, steps, period: int):
        if policy not in POLICIES:
            raise ParameterError(f"unknown rotation-key policy {policy!r}; use one of {POLICIES}")
        self.policy, self.period = policy, period
        if isinstance(steps, str):
            if steps != "all":
                raise ParameterError(f"rotations must be a list of steps or 'all', got {steps!r}")
            if policy != "pow2":
                raise ParameterError("rotations='all' is only meaningful with policy='pow2'")
            self.steps = self._all_pow2(period)
        else:
            wanted = {as_step(s) % period for s in (steps or ())} - {0}
            if policy == "exact":
                self.steps = frozenset(wanted)
            else:
                self.steps = frozenset(t % period for s in wanted for t in pow2_terms(s, period))

    @staticmethod
    def _all_pow2(period: int) -> frozenset:
        out, p = set(), 1
        while p < period:
            out |= {p, (-p) % period}
            p <<= 1
        return frozenset(out)

    def plan(self, k: int) -> list[int]:
        """Key steps (normalized mod period) whose key switches realize a rotation by k."""
        k = as_step(k) % self.period
        if k == 0:
            return []
        if self.policy == "exact" or k in self.steps:
            if k not in self.steps:
                raise MissingRotationKey(self._missing(k))
            return [k]
        terms = [t % self.period for t in pow2_terms(k, self.period)]
        missing = [t for t in terms if t not in self.steps]
        if missing:
            raise MissingRotationKey(self._missing(k, missing))
        return terms

    def _missing(self, k: int, parts=None) -> str:
        held = sorted(self.steps)
        shown = held if len(held) <= 12 else held[:12] + ["..."]
        what = f"rotation by {k}" + (f" (needs power-of-two keys {parts})" if parts else "")
        return (f"no Galois key for {what} under policy '{self.policy}'; keys held for steps {shown}. "
                f"Generate the context with this step in `rotations`.")

    def __len__(self) -> int:
        return len(self.steps)
