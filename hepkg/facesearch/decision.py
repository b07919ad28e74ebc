"""Deciding membership (Algorithm 7): the paper's rule on the summed count, with and without the padding.

The paper's server sums the comparison polynomial p over every slot of every group (G x slots values,
padding included) and the client answers "member" iff the count rounds to at least 1
(:func:`paper_member`). p is only approximately 0 below the threshold, so an empty match set leaves the
sum of every entry's residual, not 0: at kappa = 8 p(0) = 1.7e-4, and the G x slots - K empty slots of a
small database (score 0) already sum to 2.6 at K = 1024 and 2^14 slots: a false positive, whatever the
database holds. A negative residual (kappa 7: p(0) = -5e-3) hides a real match instead.

Three aggregations (:data:`~hepkg.facesearch.protocol.AGGREGATES`), each named in the answer, so that a
client deciding by another refuses it:

- ``"count"`` (hepkg's): the server subtracts the padding's contribution, public (the layout and p are),
  before the answer (:func:`~hepkg.facesearch.protocol.padding_count`): the count is the K entries' alone
  and the paper's rule decides it. The client learns one number, as from the paper's answer. It is right
  while the K real non-matches' residuals stay under 0.5 (at kappa 8 and scores near 0: K up to about
  3000); beyond, no polynomial within the paper's depth makes a sum over the entries sound;
- ``"sum"``: the paper's, padding included (reproduced, with its errors);
- ``"slots"``: :class:`SlotRule`. The server adds the G per-group comparison ciphertexts slot by slot (G - 1
  additions, no rotation) and the client decides per slot. Slot s holds p summed over the r(s) database
  entries placed at slot s (one per group that reaches it) and over G - r(s) padding entries whose score is
  exactly 0, so the client subtracts (G - r(s)) p(0). With every non-matching score in [-1, delta - margin]
  (where p lies in [lo, hi]) and every matching score in [delta + margin, 1] (p >= match_lo), no match
  leaves at most r hi and one match or more at least match_lo + (r - 1) lo. The rule answers "member" iff
  some slot exceeds the midpoint of the two bounds, and it is *sound* (never wrong for scores outside the
  margin band, CKKS error at most ``noise`` per value included) iff the gap exceeds twice the error at
  r = G: at kappa 8 and margin 0.05 up to G = 17 groups (K <= 2^18 at 2^14 slots), at kappa 10 up to
  thousands; on the GPU path (degree 13, :meth:`DeviceServer.membership
  <hepkg.facesearch.gpu.DeviceServer.membership>`) up to G = 2. Scores within the margin of delta are
  not covered. **Leakage**: the client learns every slot's sum over the G groups; at K <= slots (one
  group) that is every entry's comparison value, the identification answer, far more than the paper's
  membership answer reveals.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from . import chebyshev
from .packing import Layout

__all__ = ["paper_member", "member_from_indicators", "SlotRule", "sound_margin"]


def paper_member(count: float) -> bool:
    """The paper's rule: slot 0 holds the match count; member iff it rounds to at least 1 (ValueError for a
    count that is not a finite number)."""
    if isinstance(count, bool) or not isinstance(count, (int, float, np.integer, np.floating)) \
            or not np.isfinite(count):
        raise ValueError(f"a membership count must be a finite number, got {count!r}")
    return bool(count >= 0.5)


def member_from_indicators(values: np.ndarray, threshold: float = 0.5) -> bool:
    """Membership from an identification answer: any slot above ``threshold``."""
    return bool((np.asarray(values) > threshold).any())


@functools.lru_cache(maxsize=64)
def _bounds(kappa: int, delta: float, margin: float, path: str) -> tuple[float, float, float, float]:
    """(lo, hi, match_lo, p0): p's range on [-1, delta - margin], its least value on [delta + margin, 1], p(0)."""
    def p(a, b):
        return chebyshev.compare_numpy(np.linspace(a, b, 40001), kappa, delta=delta, path=path)
    below, above = p(-1.0, delta - margin), p(delta + margin, 1.0)
    p0 = float(chebyshev.compare_numpy(np.zeros(1), kappa, delta=delta, path=path)[0])
    return float(below.min()), float(below.max()), float(above.min()), p0


@dataclass(frozen=True)
class SlotRule:
    """The per-slot membership decision on the slot-wise sum of the G comparison ciphertexts.

    ``noise``: the CKKS error bound of one comparison value (the end-to-end tests observe under 2e-5 on
    every backend at depth 11); a slot's error is at most G times that.
    """
    kappa: int
    layout: Layout
    delta: float = chebyshev.DELTA
    margin: float = 0.05
    path: str = "cpu"
    noise: float = 1e-4

    def __post_init__(self):
        if not 0 < self.margin < 1:
            raise ValueError(f"margin must lie in (0, 1), got {self.margin!r}")
        chebyshev.compare_numpy(np.zeros(1), self.kappa, delta=self.delta, path=self.path)  # checks kappa, path

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """(lo, hi, match_lo, p(0)) of the comparison polynomial (see the module docstring)."""
        return _bounds(self.kappa, self.delta, self.margin, self.path)

    @property
    def entries(self) -> np.ndarray:
        """r(s): how many database entries (not padding) sit at slot s across the G groups."""
        lay = self.layout
        full, rest = divmod(lay.K, lay.slots)
        return full + (np.arange(lay.slots) < rest)

    def _gap(self, r):
        lo, hi, match_lo, _ = self.bounds
        return match_lo + (r - 1) * lo, r * hi  # (least value with a match, most without)

    @property
    def thresholds(self) -> np.ndarray:
        """Per slot, the midpoint between the two bounds (after the padding is subtracted)."""
        with_match, without = self._gap(self.entries)
        return (with_match + without) / 2

    @property
    def sound(self) -> bool:
        """Whether the rule is never wrong for scores outside the margin band at this K (and the CKKS error)."""
        with_match, without = self._gap(self.entries.max())
        return bool(with_match - without > 2 * self.noise * self.layout.groups)

    def corrected(self, values) -> np.ndarray:
        """The decrypted slot values (exactly one per slot, finite) less the padding entries' exact
        contribution (G - r(s)) p(0); ValueError for anything else (NaN would read as 'no match', inf as a
        match, values beyond the slots would be ignored)."""
        values = np.real(np.asarray(values))
        if values.shape != (self.layout.slots,) or not np.issubdtype(values.dtype, np.number):
            raise ValueError(f"expected {self.layout.slots} slot values (one per slot), got shape {values.shape}")
        values = values.astype(float)
        if not np.isfinite(values).all():
            raise ValueError(f"slot values must be finite; {int((~np.isfinite(values)).sum())} are NaN or infinite "
                             "(a damaged answer?)")
        return values - (self.layout.groups - self.entries) * self.bounds[3]

    def member(self, values) -> bool:
        """Member iff some slot's corrected value exceeds its threshold."""
        return bool((self.corrected(values) > self.thresholds).any())


def sound_margin(kappa: int, layout: Layout, margins=tuple(round(0.05 * i, 2) for i in range(1, 9)), **kw) -> float | None:
    """The least margin (no score within it of delta) for which :class:`SlotRule` is sound at ``layout``, or None."""
    return next((m for m in margins if SlotRule(kappa, layout, margin=m, **kw).sound), None)
