"""Deciding membership from the encrypted sum of approximate step values (Algorithm 7).

The server sums the comparison polynomial p over every slot of every group (n = G * slots
values, padding included). p is only approximately 0 below the threshold, so with no match
the sum is n times a small residual, not 0: the paper's rule (member iff the count rounds to
at least 1) then answers "member" for an empty match set once n * residual > 1/2. The paper
never tests Km = 0.

:class:`MembershipRule` bounds the residual instead of assuming it away: with scores below
delta - margin, p lies in [lo, hi]; above delta + margin, p >= match_lo. With no match the sum
is at most n * hi; with one or more it is at least match_lo + (n - 1) * lo. The rule answers
"member" iff the sum exceeds n * hi + slack, and it is *sound* (no false positive, no false
negative for scores outside the margin band) iff match_lo + (n - 1) * lo > n * hi + slack.
Where it is not sound at the requested kappa, :func:`smallest_sound_kappa` gives the depth
that is, and identification (a per-slot threshold by the client, G ciphertexts instead of
one) decides membership at any n.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import chebyshev

__all__ = ["paper_member", "MembershipRule", "smallest_sound_kappa", "sound_margin", "member_from_indicators"]


def paper_member(count: float) -> bool:
    """The paper's rule: slot 0 holds the match count; member iff it rounds to at least 1."""
    return bool(count >= 0.5)


def member_from_indicators(values: np.ndarray, threshold: float = 0.5) -> bool:
    """Membership from an identification answer: any slot above ``threshold``."""
    return bool((np.asarray(values) > threshold).any())


@dataclass(frozen=True)
class MembershipRule:
    """A residual-aware membership threshold for ``n`` summed slots at comparison depth ``kappa``."""
    kappa: int
    n: int
    delta: float = chebyshev.DELTA
    margin: float = 0.05
    slack: float = 0.05
    path: str = "cpu"

    def _range(self, lo: float, hi: float) -> np.ndarray:
        x = np.linspace(lo, hi, 20001)
        return chebyshev.compare_numpy(x, self.kappa, delta=self.delta, path=self.path)

    @property
    def residual(self) -> tuple[float, float]:
        """(lo, hi): the range of p on non-matching scores [-1, delta - margin]."""
        v = self._range(-1.0, self.delta - self.margin)
        return float(v.min()), float(v.max())

    @property
    def match_lo(self) -> float:
        """The least value of p on matching scores [delta + margin, 1]."""
        return float(self._range(self.delta + self.margin, 1.0).min())

    @property
    def threshold(self) -> float:
        return self.n * max(self.residual[1], 0.0) + self.slack

    @property
    def sound(self) -> bool:
        lo, _ = self.residual
        return self.match_lo + (self.n - 1) * min(lo, 0.0) > self.threshold

    def member(self, count: float) -> bool:
        return bool(count > self.threshold)


def smallest_sound_kappa(n: int, kappas=(7, 8, 9, 10), **kw) -> int | None:
    """The least comparison depth whose :class:`MembershipRule` is sound for ``n`` slots, or None."""
    return next((k for k in kappas if MembershipRule(k, n, **kw).sound), None)


def sound_margin(kappa: int, n: int, margins=tuple(round(0.05 * i, 2) for i in range(1, 9)), **kw) -> float | None:
    """The least margin (no score within it of delta) for which the rule is sound at ``n`` slots, or None."""
    return next((m for m in margins if MembershipRule(kappa, n, margin=m, **kw).sound), None)
