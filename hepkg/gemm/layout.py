"""Matrices in ciphertext slots, and the linear maps between such layouts.

A :class:`Layout` places an r x c matrix in the first ``r * c`` slots of one BFV row,
column-major ('F') or row-major ('C'); ``copies=2`` stores the vector twice so that a left
rotation by ``k < r c`` reads it cyclically (E2DM's row shift). A :class:`SlotMap` is a
0/1 map between layouts given by the input slot each output slot reads (or -1 for zero):
it is compiled to generalized diagonals (:func:`hepkg.linalg.diagonals`) and classified

* ``identity``: every output slot reads the same slot of the input: no operation (the
  input's extra slots, if any, are left in place);
* ``window``: every output slot reads the slot k further on: one rotation, no mask;
* ``general``: one rotation (or BSGS) and one plaintext product per diagonal.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hepkg.linalg import transform_steps
from hepkg.linalg.diagonal import best_n1, fold_diagonals

from .errors import ShapeTooLarge


@dataclass(frozen=True)
class Layout:
    """An r x c matrix flattened column-major ('F') or row-major ('C'), stored ``copies`` times."""

    rows: int
    cols: int
    order: str = "F"
    copies: int = 1

    @property
    def size(self) -> int:
        return self.rows * self.cols

    def index(self, i, j):
        """Slot of entry (i, j)."""
        return i + j * self.rows if self.order == "F" else i * self.cols + j

    def grid(self) -> tuple[np.ndarray, np.ndarray]:
        """(row, column) of every slot, in slot order."""
        s = np.arange(self.size)
        if self.order == "F":
            return s % self.rows, s // self.rows
        return s // self.cols, s % self.cols

    def read(self, vec: np.ndarray) -> np.ndarray:
        """The matrix held in the first ``size`` slots of a decrypted vector."""
        return np.asarray(vec[: self.size]).reshape((self.rows, self.cols), order=self.order)

    def check(self, period: int, what: str) -> None:
        """Raise :class:`ShapeTooLarge` unless the layout fits one row of ``period`` slots."""
        need = self.size * self.copies
        if need > period:
            raise ShapeTooLarge(f"{what} needs {self.rows} x {self.cols}"
                                f"{' x 2 copies' if self.copies > 1 else ''} = {need} slots, more than the "
                                f"{period} slots of one ciphertext row; use blocking='auto' or an explicit blocking")


def wrap(x: np.ndarray, l: int, extent: int) -> np.ndarray:
    """The index congruent to x mod l within ``[0, extent)``: x itself if it is below extent,
    else the largest such index (inputs hold a cyclic extension of l rows or columns)."""
    x = np.asarray(x)
    return x - l * np.maximum(0, -((extent - 1 - x) // l))


def every(i: np.ndarray) -> np.ndarray:
    """The ``keep`` of a rule under which every output entry has a source."""
    return np.ones_like(i, dtype=bool)


def gather(out: Layout, shape: tuple[int, int], rule) -> np.ndarray:
    """For each slot of ``out``: the row-major index into a matrix of ``shape`` it holds, or -1.

    ``rule(i, j) -> (si, sj, keep)`` gives the source entry of output entry (i, j).
    """
    i, j = out.grid()
    si, sj, keep = rule(i, j)
    return np.where(keep, np.asarray(si) * shape[1] + np.asarray(sj), -1)


class SlotMap:
    """A 0/1 linear map between slot layouts: output slot s reads input slot ``src[s]`` (-1: zero).

    ``cyclic``: the input repeats with period ``din`` over the slots read (stored twice, or
    ``din`` is the rotation period), so offsets are taken mod ``din``. ``n1``: baby steps of
    a BSGS evaluation (None: one rotation per diagonal).
    """

    def __init__(self, src: np.ndarray, din: int, *, cyclic: bool = False):
        self.src = np.asarray(src, dtype=np.int64)
        self.din, self.dout, self.cyclic, self.n1 = int(din), self.src.size, cyclic, None
        if cyclic and self.dout > self.din:
            raise ValueError(f"a cyclic map reads at most its {self.din} input slots again, not {self.dout}")
        valid = self.src >= 0
        off = self.src[valid] - np.flatnonzero(valid)
        self.offsets = np.unique(off % self.din if cyclic else off)
        if len(self.offsets) == 1 and valid.all():
            self.kind = "identity" if self.offsets[0] == 0 else "window"
        else:
            self.kind = "general"

    @classmethod
    def between(cls, out: Layout, inp: Layout, rule, period: int) -> "SlotMap":
        """The map with ``out[i, j] = inp[rule(i, j)]``; ``rule -> (si, sj, keep)``.

        The input is cyclic when stored twice or when it fills the ``period`` slots of a row.
        """
        i, j = out.grid()
        si, sj, keep = rule(i, j)
        return cls(np.where(keep, inp.index(np.asarray(si), np.asarray(sj)), -1), inp.size,
                   cyclic=inp.copies > 1 or inp.size == period)

    @property
    def shift(self) -> int:
        """The rotation of a ``window`` map."""
        return int(self.offsets[0])

    def bsgs(self, period: int) -> "SlotMap":
        """Evaluate with the baby-step giant-step split that needs the fewest rotations."""
        if self.kind == "general":
            self.n1 = best_n1(self.offsets, period)
        return self

    def matrix(self) -> sp.csr_matrix:
        """U (dout x din) with ``y = U x``."""
        import scipy.sparse as sp

        rows = np.flatnonzero(self.src >= 0)
        return sp.csr_matrix((np.ones(rows.size, dtype=np.int64), (rows, self.src[rows])),
                             shape=(self.dout, self.din))

    def diagonals(self, period: int) -> dict[int, np.ndarray]:
        """Non-zero generalized diagonals (folded mod din when cyclic), vectors of ``period`` slots: those of
        :meth:`matrix` (:func:`hepkg.linalg.diagonals`), read off ``src`` directly (no scipy on the cloud's path)."""
        if max(self.dout, self.din) > period:
            raise ValueError(f"a {self.dout} x {self.din} map does not fit a rotation period of {period} slots")
        rows = np.flatnonzero(self.src >= 0)
        off = self.src[rows] - rows
        diags = {}
        for k in np.unique(off):
            u = np.zeros(period, dtype=np.int64)
            u[rows[off == k]] = 1
            diags[int(k)] = u
        return fold_diagonals(diags, self.din) if self.cyclic else diags

    def steps(self, period: int) -> list[int]:
        """Rotation steps the evaluation uses."""
        if self.kind == "identity":
            return []
        if self.kind == "window":
            return [self.shift % period]
        return transform_steps(self.offsets.tolist(), period, self.n1)

    def compose(self, gathered: np.ndarray) -> np.ndarray:
        """The gather of ``U x`` given the gather of x: preprocessing done by the client in plaintext."""
        return np.where(self.src >= 0, gathered[np.maximum(self.src, 0)], -1)
