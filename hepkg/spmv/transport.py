"""Ciphertexts sent between parties as bytes, counted per direction (for the baselines)."""
from __future__ import annotations

from collections import Counter

__all__ = ["Channel"]


class Channel:
    """``channel.send("b_to_cloud", ct)`` serializes on the sender and counts the bytes; the
    receiver deserializes them in its own phase."""

    def __init__(self):
        self.bytes: Counter = Counter()

    def send(self, direction: str, ct) -> bytes:
        data = ct.ctx.serialize(ct)
        self.bytes[direction] += len(data)
        return data
