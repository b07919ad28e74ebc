"""Ciphertexts sent between parties through bytes, with the bytes counted per direction."""
from __future__ import annotations

from collections import Counter

__all__ = ["Channel"]


class Channel:
    """``channel.send("b_to_cloud", cts, cloud_ctx)`` serializes on the sender, counts the
    bytes, and returns the ciphertexts deserialized on the receiver's context."""

    def __init__(self):
        self.bytes: Counter = Counter()
        self.ciphertexts: Counter = Counter()

    def send(self, direction: str, cts, receiver) -> list:
        out = []
        for ct in cts:
            data = ct.ctx.serialize(ct)
            self.bytes[direction] += len(data)
            self.ciphertexts[direction] += 1
            out.append(receiver.deserialize(data))
        return out
