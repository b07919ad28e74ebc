"""Operation accounting: every backend counts what it does, per kind of operation."""
from __future__ import annotations

from collections import Counter
from contextlib import contextmanager

#: The operation kinds every backend counts.
KINDS = ("encode", "encrypt", "decrypt", "add", "add_pt", "sub", "negate", "mul_ct", "mul_pt",
         "relinearize", "rotate", "keyswitch", "hoisted_precompute", "swap", "rescale", "mod_switch")


class OpCounts(Counter):
    """Counts per operation kind plus the largest multiplicative depth reached."""

    depth: int = 0

    def as_dict(self) -> dict:
        d = {k: int(self.get(k, 0)) for k in KINDS}
        d["depth"] = int(self.depth)
        return d

    def __repr__(self) -> str:
        shown = {k: v for k, v in self.as_dict().items() if v}
        return f"OpCounts({shown})"


class OpCounter:
    """Running counts of one context, with scoped regions.

    ``with ctx.counter.region() as ops:`` yields an :class:`OpCounts` that, when the
    block ends, holds only what happened inside it (regions nest).
    """

    def __init__(self):
        self.total = OpCounts()
        self._open: list[OpCounts] = []

    def add(self, kind: str, n: int = 1) -> None:
        self.total[kind] += n
        for region in self._open:
            region[kind] += n

    def reached_depth(self, depth: int) -> None:
        self.total.depth = max(self.total.depth, depth)
        for region in self._open:
            region.depth = max(region.depth, depth)

    @contextmanager
    def region(self):
        ops = OpCounts()
        self._open.append(ops)
        try:
            yield ops
        finally:
            self._open.remove(ops)

    def reset(self) -> None:
        self.total = OpCounts()
