"""Chunk generation (Algorithm 2), horizontal partitioning (Sec. 4.7) and Client B's
vector reorganization (Algorithm 3).

Slot layout. A BFV ciphertext of ring degree N has two rows of N/2 slots and a rotation
moves slots only within a row (``ctx.period`` = N/2); CKKS has one row of N/2 slots. The
aggregation rotates by multiples of a chunk's row count, so a chunk column must never
straddle a slot row. hepkg offers two layouts:

- ``"row"`` (default): a chunk fills one slot row (``period`` slots): an ``r x c`` chunk
  needs ``r * c <= period``, and aggregation is Algorithm 4 (total sum as corrected in
  :mod:`hepkg.spmv.aggregate`). Although the paper
  speaks of "8192 slots", this is what its numbers show: its Table 7 traffic divided by
  its 0.52 MB per ciphertext gives 2, 4, 352, 34 and 41 ciphertexts for arc130, M80PI_n1,
  mycielskian13, cca and p2p-Gnutella31, exactly this layout's chunk counts at N = 8192.
- ``"both"`` (BFV/BGV only): a chunk fills both rows, ``ceil(c/2)`` columns in row 0 and
  the rest in row 1 (each ``<= period // r`` columns). Aggregation sums each row with the
  same rotations and adds one column swap (``w + swap(w)``) per two-row chunk: about half
  the ciphertexts, products, masks and traffic, for one extra key switch per chunk.

The paper's Algorithm 2 grows a chunk while the *unpadded* non-zero count fits
(``count + NNZ[i] <= s``) but then pads every column to the first column's height, so a
chunk can overflow a ciphertext (heights 10, 3, 3, 3, 2 fit s = 21 unpadded, 50 padded).
hepkg grows a chunk while its *padded* rectangle fits, which is also what the paper's
Figs. 4, 6 and 7 show (chunks 10x2, 7x3, 3x5 for s = 21).

Sec. 4.7: rows are partitioned into blocks of at most ``period`` rows so that every chunk
column fits a slot row. hepkg cuts the *sorted* rows (CSSC order) into consecutive blocks,
which groups rows of similar length and minimises padding; each block's chunks are
aggregated into one result ciphertext.
"""
from __future__ import annotations

from dataclasses import astuple, dataclass

import numpy as np

from hepkg.linalg import rotation_steps_for_sum

from .cssc import CSSC

__all__ = ["LAYOUTS", "Chunk", "ChunkPlan", "generate_chunks", "chunk_layout", "chunk_values",
           "chunk_column_index", "reorg_vector"]

LAYOUTS = ("row", "both")


@dataclass(frozen=True)
class Chunk:
    """One ciphertext's worth of CSSC columns ``start .. start+cols-1`` of one row block.

    ``rows`` is the chunk height r (its first column's non-zeros in the block), ``split``
    the number of its columns in slot row 0 (the others are in row 1).
    """

    block: int
    start: int
    cols: int
    rows: int
    split: int

    @property
    def two_rows(self) -> bool:
        return self.cols > self.split

    def column_base(self, k: np.ndarray, period: int) -> np.ndarray:
        """First slot of the chunk's local column(s) ``k``."""
        k = np.asarray(k)
        return np.where(k < self.split, k * self.rows, period + (k - self.split) * self.rows)


@dataclass(frozen=True)
class ChunkPlan:
    """How a CSSC matrix is cut into ciphertexts: row blocks and chunks (public metadata)."""

    shape: tuple[int, int]
    period: int
    layout: str
    blocks: tuple[tuple[int, int], ...]  # sorted-row ranges [p0, p1)
    chunks: tuple[Chunk, ...]

    @property
    def n_ct(self) -> int:
        """Number of matrix ciphertexts (= vector ciphertexts)."""
        return len(self.chunks)

    @property
    def slots(self) -> int:
        """Slots a chunk may use: one row, or both rows."""
        return self.period * (2 if self.layout == "both" else 1)

    @property
    def c_max(self) -> int:
        """C_max of Table 3: the most columns in any chunk."""
        return max(c.cols for c in self.chunks)

    @property
    def needs_swap(self) -> bool:
        return any(c.two_rows for c in self.chunks)

    def rotation_steps(self) -> list[int]:
        """Left-rotation steps the aggregation uses (for key generation)."""
        return sorted({s for c in self.chunks for s in rotation_steps_for_sum(c.split, c.rows)})

    def to_dict(self) -> dict:
        return dict(shape=list(self.shape), period=self.period, layout=self.layout,
                    blocks=[list(b) for b in self.blocks], chunks=[list(astuple(c)) for c in self.chunks])

    @classmethod
    def from_dict(cls, d: dict) -> "ChunkPlan":
        return cls(tuple(d["shape"]), int(d["period"]), d["layout"], tuple(tuple(b) for b in d["blocks"]),
                   tuple(Chunk(*map(int, c)) for c in d["chunks"]))


def generate_chunks(cssc: CSSC, period: int, layout: str = "row", block_rows: int | None = None) -> ChunkPlan:
    """Algorithm 2 with padded capacity, per row block of at most ``block_rows`` (<= period) rows."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown chunk layout {layout!r}; use one of {LAYOUTS}")
    block_rows = period if block_rows is None else int(block_rows)
    if not 1 <= block_rows <= period:
        raise ValueError(f"block_rows must be in [1, {period}] (a chunk column must fit one slot row), "
                         f"got {block_rows}")
    units = 2 if layout == "both" else 1
    col_nnz = cssc.col_nnz
    filled = int(col_nnz[0])  # sorted rows with at least one non-zero
    blocks = tuple((p0, min(p0 + block_rows, filled)) for p0 in range(0, filled, block_rows))
    chunks = []
    for b, (p0, p1) in enumerate(blocks):
        heights = np.clip(col_nnz - p0, 0, p1 - p0)
        n_cols = int(np.count_nonzero(heights))
        i = 0
        while i < n_cols:
            h = int(heights[i])
            cols = min(units * (period // h), n_cols - i)
            split = -(-cols // units)
            chunks.append(Chunk(b, i, cols, h, split))
            i += cols
    return ChunkPlan(cssc.shape, period, layout, blocks, tuple(chunks))


def chunk_layout(col_ptr: np.ndarray, plan: ChunkPlan, chunk: Chunk) -> tuple[np.ndarray, np.ndarray]:
    """(entries, slots): which CSSC entries (indices into VA/CI) go to which slots of ``chunk``."""
    p0, p1 = plan.blocks[chunk.block]
    j = np.arange(chunk.start, chunk.start + chunk.cols)
    heights = np.clip(col_ptr[j + 1] - col_ptr[j] - p0, 0, p1 - p0)
    local = np.repeat(np.arange(chunk.cols), heights)
    within = np.arange(int(heights.sum())) - np.repeat(np.cumsum(heights) - heights, heights)
    entries = col_ptr[chunk.start + local] + p0 + within
    slots = chunk.column_base(local, plan.period) + within
    return entries, slots


def _scatter(col_ptr: np.ndarray, plan: ChunkPlan, source: np.ndarray, fill) -> list[np.ndarray]:
    out = []
    for chunk in plan.chunks:
        entries, slots = chunk_layout(col_ptr, plan, chunk)
        arr = np.full(plan.slots, fill, dtype=source.dtype)
        arr[slots] = source[entries]
        out.append(arr)
    return out


def chunk_values(col_ptr: np.ndarray, values: np.ndarray, plan: ChunkPlan) -> list[np.ndarray]:
    """Algorithm 2, Client A: each chunk's values flattened column-major, 0-padded (``plan.slots`` long)."""
    return _scatter(col_ptr, plan, np.asarray(values), 0)


def chunk_column_index(col_ptr: np.ndarray, col_index: np.ndarray, plan: ChunkPlan) -> list[np.ndarray]:
    """Algorithm 2's column-index chunks, -1-padded: what Client B reorganizes its vector by."""
    return _scatter(col_ptr, plan, np.asarray(col_index, dtype=np.int64), -1)


def reorg_vector(vector: np.ndarray, column_indices) -> list[np.ndarray]:
    """Algorithm 3: ``out[k] = vector[index[k]]`` where ``index[k] >= 0``, else 0, per chunk."""
    vector = np.asarray(vector)
    out = []
    for index in column_indices:
        index = np.asarray(index)
        vals = np.zeros(index.size, dtype=vector.dtype)
        used = index >= 0
        vals[used] = vector[index[used]]
        out.append(vals)
    return out
