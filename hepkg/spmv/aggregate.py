"""The cloud's work (Algorithm 1 lines 8-12, Algorithm 4) and the final un-permutation (lines 14-19).

Step 1: one ciphertext-ciphertext product per chunk. Step 2 (Algorithm 4): within each
chunk, the c columns (r slots apart) are summed with a rotate-and-add total sum by
multiples of r; :func:`hepkg.linalg.rotate_and_sum` does this correctly for every c in
``floor(log2 c) + popcount(c) - 1`` rotations, the same count as HElib's totalSums.
(Algorithm 4 as printed adds ``Rot(w, r)`` to ``w`` for a set bit, which counts the
columns already in ``w`` twice; HElib adds the rotated partial sum to the *original*
ciphertext instead.) A two-row chunk adds its rows with one column swap. Each chunk is
then masked to its first r slots (one ct x pt product) and the chunks of a row block are
added, giving one result ciphertext per block with sorted row p0+i in slot i.
"""
from __future__ import annotations

import numpy as np

from hepkg.linalg import rotate_and_sum

from .chunks import ChunkPlan

__all__ = ["multiply", "aggregate", "tracked_bounds", "unpermute", "send_blocks", "decrypt_blocks"]


def multiply(ctx, matrix_cts, vector_cts):
    """Step 1, one pair at a time: ``ct_value[i] * ct_reorg_vector[i]`` (HE-Mult, relinearized).

    A generator: with lazily deserialized inputs, each product is made when it is aggregated."""
    for a, b in zip(matrix_cts, vector_cts, strict=True):
        yield ctx.mul(a, b)


def aggregate(ctx, products, plan: ChunkPlan) -> list:
    """Step 2, Algorithm 4: one result ciphertext per row block of ``plan``.

    ``products`` (one per chunk, ValueError otherwise) may be a generator (:func:`multiply`): each is
    aggregated and let go before the next."""
    masks, results = {}, [None] * len(plan.blocks)
    for chunk, ct in zip(plan.chunks, products, strict=True):
        w = rotate_and_sum(ctx, ct, chunk.split, chunk.rows)
        if chunk.two_rows:
            w = ctx.add(w, ctx.swap_columns(w))
        key = (chunk.rows, w.level)
        if key not in masks:
            mask = np.zeros(plan.slots, dtype=np.int64 if ctx.is_integer else np.float64)
            mask[:chunk.rows] = 1
            masks[key] = ctx.encode(mask, level=w.level)
        term = ctx.mul_plain(w, masks[key])
        b = chunk.block
        results[b] = term if results[b] is None else ctx.add(results[b], term)
    return results


def tracked_bounds(plan: ChunkPlan, chunk_peaks, vector_bound: float) -> np.ndarray:
    """CKKS: per row block, the magnitude bound the cloud's result ciphertext carries after :func:`aggregate`, as
    hepkg.he tracks it from the encrypted inputs (a chunk's peak times the vector's, times the ``split`` columns
    :func:`~hepkg.linalg.rotate_and_sum` adds, twice where the column swap adds a second row, times the mask's
    1, added over the block's chunks), for a vector at ``vector_bound``: what Client A checks before anything
    is sent (:func:`~hepkg.spmv.encoding.check_tracked`). Every bound on the way is at most its block's."""
    out = np.zeros(len(plan.blocks))
    for chunk, peak in zip(plan.chunks, chunk_peaks, strict=True):
        out[chunk.block] += chunk.split * (2 if chunk.two_rows else 1) * float(peak) * vector_bound
    return out


def unpermute(block_values, plan: ChunkPlan, row_map: np.ndarray) -> np.ndarray:
    """Algorithm 1 lines 14-19: ``Res[RM[p]] = mid_res[p]``; rows without non-zeros get 0."""
    first = np.asarray(block_values[0])
    out = np.zeros(plan.shape[0], dtype=first.dtype)
    for (p0, p1), vals in zip(plan.blocks, block_values):
        out[row_map[p0:p1]] = np.asarray(vals)[:p1 - p0]
    return out


def send_blocks(channel, direction: str, acc: list) -> dict[int, bytes]:
    """The cloud's serialized result per row block ``b`` (blocks without any entry send nothing)."""
    return {b: channel.send(direction, ct) for b, ct in enumerate(acc) if ct is not None}


def decrypt_blocks(ctx, blobs: dict[int, bytes], n_rows: int, size: int, dtype) -> np.ndarray:
    """The key holder's vector from :func:`send_blocks`: block ``b`` holds rows ``[b*size, (b+1)*size)``."""
    y = np.zeros(n_rows, dtype=dtype)
    for b, blob in blobs.items():
        n = min(size, n_rows - b * size)
        y[b * size:b * size + n] = ctx.decrypt(ctx.deserialize(blob, guard=True), n)
    return y
