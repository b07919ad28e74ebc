"""Rotate-and-sum: add n rotated copies of a ciphertext with O(log n) rotations."""
from __future__ import annotations


def rotation_steps_for_sum(n: int, stride: int = 1) -> list[int]:
    """The rotation steps :func:`rotate_and_sum` uses (for generating exactly those keys)."""
    steps, width, offset = [], 1, 0
    while n:
        if n & 1:
            if offset:
                steps.append(offset * stride)
            offset += width
        n >>= 1
        if n:
            steps.append(width * stride)
        width <<= 1
    return sorted(set(steps))


def rotate_and_sum(ctx, ct, n: int, stride: int = 1):
    """sum_{j<n} rotate(ct, j*stride), for any n >= 1 (not only powers of two).

    Doubling builds partial sums of 1, 2, 4, ... blocks; the set bits of n pick which of
    them are added, at their offsets. Costs floor(log2 n) + popcount(n) - 1 rotations.
    """
    if n < 1:
        raise ValueError(f"rotate_and_sum needs n >= 1, got {n}")
    acc, width, offset, out = ct, 1, 0, None
    while n:
        if n & 1:
            part = ctx.rotate(acc, offset * stride) if offset else acc
            out = part if out is None else ctx.add(out, part)
            offset += width
        n >>= 1
        if n:
            acc = ctx.add(acc, ctx.rotate(acc, width * stride))
        width <<= 1
    return out
