"""A plan: the public, data-independent description of one encrypted matrix product.

Built from the shapes alone, so client and cloud derive the same plan. The client fills
and encrypts the :class:`Operand` vectors (:meth:`Plan.encode`), the cloud runs the program
of steps on ciphertexts (:meth:`Plan.run`), the client reads the result
(:meth:`Plan.decode`). Steps (registers are names):

* ``("map", dst, src, SlotMap)``: a linear map of slots (Eq. 7);
* ``("mul", dst, x, y, size)``: ciphertext product; if both factors may hold non-zero
  slots beyond ``size`` one is masked first (one plaintext product);
* ``("acc", dst, src)``: ``dst += src`` (``dst = src`` the first time);
* ``("rotsum", dst, src, count, stride)``: ``sum_{j<count} rotate(src, j * stride)``;
* ``("mask", dst, src, keep)``: ``src`` times the 0/1 plaintext ``keep`` (one plaintext product).

Before the steps, the cloud applies each operand's preprocessing (and, for E2DM's tau(B),
adds a second copy of the vector with one rotation).

``baseline='authors'`` plans run as the authors' code does (:mod:`hepkg.gemm.authors` runs that code itself):
every rotated copy is masked (a window map costs a rotation and a plaintext product),
products are left unrelinearized and summed as size-3 ciphertexts. In both evaluations one
relinearization comes before the first rotation that follows the products, or at the end (the
cloud serializes its reply; the authors' in-process code decrypts the size-3 sum directly).

The executor tracks, per register, how many leading slots may be non-zero, which is what
lets identity and window maps skip their masks safely.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hepkg.linalg import linear_transform, rotate_and_sum, rotation_steps_for_sum

from .layout import Layout, SlotMap

PREPROCESS = ("cloud", "client")
#: 'hepkg': hepkg's evaluation (BSGS where it pays, transposition, logarithmic sums, products
#: summed unrelinearized and relinearized once, before their first rotation); 'authors': the
#: baselines as EchizenG/HEGMM evaluates them (the rules above).
BASELINES = ("hepkg", "authors")


@dataclass
class Operand:
    """One encrypted input: how the client fills it, and what the cloud does to it first.

    ``gather[s]``: row-major index into the source matrix ('A' or 'B' of the oriented
    product) held by slot s, or -1. ``prep``: sigma/tau, evaluated by the cloud, or composed
    into the gather when the client preprocesses. ``copies``: copies the program needs after
    ``prep`` (E2DM's cyclic tau(B)); ``layout.copies``: copies encrypted for the cloud's prep.
    """

    name: str
    source: str
    layout: Layout
    gather: np.ndarray
    prep: SlotMap | None = None
    copies: int = 1

    def encoding(self, preprocess: str) -> tuple[np.ndarray, int]:
        """(gather, copies) of the vector the client encrypts."""
        if preprocess == "client" and self.prep is not None:
            return self.prep.compose(self.gather), self.copies
        return self.gather, self.layout.copies

    def encode(self, matrix: np.ndarray, preprocess: str) -> np.ndarray:
        g, copies = self.encoding(preprocess)
        flat = np.asarray(matrix, dtype=np.int64).ravel()
        vec = np.where(g >= 0, flat[np.maximum(g, 0)], 0)
        return np.tile(vec, copies)

    def key(self, preprocess: str) -> tuple:
        """Identifies the encrypted vector (equal keys: same ciphertext, same preprocessing)."""
        g, copies = self.encoding(preprocess)
        prep = None if preprocess == "client" or self.prep is None else self.prep.src.tobytes()
        return self.source, g.tobytes(), copies, prep, self.copies


@dataclass
class Reg:
    """A ciphertext register: ``extent`` leading slots may be non-zero; ``cyclic``: stored twice."""

    ct: object
    extent: int
    cyclic: bool = False


def _rot_extent(extent: int, k: int, period: int) -> int:
    """Extent after a left rotation by k: a right rotation keeps the data in place if it fits."""
    right = -k % period
    if right == 0:
        return extent
    return extent + right if extent + right <= period else period


@dataclass
class Plan:
    """One encrypted product ``A B`` (or ``(B^T A^T)^T`` when ``transposed``)."""

    method: str
    shape: tuple[int, int, int]
    period: int
    preprocess: str
    operands: list[Operand]
    steps: list[tuple]
    out: Layout
    region: tuple[int, int]
    transposed: bool = False
    info: dict = field(default_factory=dict)
    baseline: str = "hepkg"

    # ---------------------------------------------------------------- client side
    def encode(self, A: np.ndarray, B: np.ndarray) -> dict[str, np.ndarray]:
        """The vectors to encrypt, by operand name."""
        mats = {"A": B.T, "B": A.T} if self.transposed else {"A": A, "B": B}
        return {op.name: op.encode(mats[op.source], self.preprocess) for op in self.operands}

    def decode(self, vec: np.ndarray) -> np.ndarray:
        """C from the decrypted result vector."""
        r, c = self.region
        C = self.out.read(vec)[:r, :c]
        return C.T.copy() if self.transposed else C.copy()

    # ---------------------------------------------------------------- cloud side
    def prepare(self, ctx, op: Operand, ct) -> Reg:
        """The register of an operand after the cloud's preprocessing (if any)."""
        g, copies = op.encoding(self.preprocess)
        used = int(np.flatnonzero(g >= 0).max(initial=-1)) + 1
        reg = Reg(ct, used + op.layout.size * (copies - 1), copies > 1)
        if self.preprocess == "cloud" and op.prep is not None:
            reg = apply_map(ctx, reg, op.prep, self.baseline == "authors")
            if op.copies > 1:
                reg = replicate(ctx, reg, op.prep.dout)
        return reg

    def run(self, ctx, cts: dict) -> dict:
        """``{'C': ciphertext}`` from the operands' ciphertexts (by name)."""
        regs = {op.name: self.prepare(ctx, op, cts[op.name]) for op in self.operands}
        return {"C": linear(ctx, execute(ctx, self.steps, regs, self.baseline == "authors")["C"]).ct}

    def rotation_steps(self) -> list[int]:
        """Every rotation step the cloud performs (for keys with policy 'exact' or 'pow2')."""
        P, out = self.period, set()
        if self.preprocess == "cloud":
            for op in self.operands:
                if op.prep is not None:
                    out.update(op.prep.steps(P))
                    if op.copies > 1:
                        out.add(-op.prep.dout % P)
        for step in self.steps:
            if step[0] == "map":
                out.update(step[3].steps(P))
            elif step[0] == "rotsum":
                out.update(s % P for s in rotation_steps_for_sum(step[3], step[4]))
        return sorted(out - {0})

    def result_sizes(self) -> dict[str, int]:
        """Slots to decrypt per result ciphertext."""
        return {"C": self.out.size}

    def assemble(self, vecs: dict) -> np.ndarray:
        """C from the decrypted result vectors (by name)."""
        return self.decode(vecs["C"])


def linear(ctx, reg: Reg) -> Reg:
    """The register relinearized if it holds an unrelinearized product (size 3)."""
    return Reg(ctx.relinearize(reg.ct), reg.extent, reg.cyclic) if reg.ct.size > 2 else reg


def apply_map(ctx, reg: Reg, smap: SlotMap, masked: bool = False, rotated: dict | None = None) -> Reg:
    """``U x`` for a register: nothing (identity), one rotation (window) or the diagonal method.

    ``masked``: a window is also multiplied by its 0/1 mask (the authors' code masks every
    rotated copy). ``rotated``: the last window taken of each source ciphertext (updated); a window
    is rotated on from it when that costs fewer key switches (:meth:`Context.rotate_from`)."""
    if smap.cyclic and smap.din < ctx.period and not reg.cyclic:
        raise ValueError("a cyclic map needs its input stored twice")
    if smap.kind == "identity":
        return Reg(reg.ct, reg.extent, reg.cyclic and smap.dout == smap.din)
    if smap.kind == "window" and not masked:
        last = {} if rotated is None else rotated.get(id(reg.ct), {})
        ct = ctx.rotate_from({0: reg.ct} | last, smap.shift)
        if rotated is not None:  # the source and its last window only: one ciphertext more held
            rotated[id(reg.ct)] = {0: reg.ct, smap.shift: ct}
        return Reg(ct, _rot_extent(reg.extent, smap.shift, ctx.period))
    return Reg(linear_transform(ctx, reg.ct, smap.diagonals(ctx.period), n1=smap.n1), smap.dout)


def replicate(ctx, reg: Reg, size: int) -> Reg:
    """A second copy of the first ``size`` slots right after them (the vector becomes cyclic)."""
    return Reg(ctx.add(reg.ct, ctx.rotate(reg.ct, -size)), 2 * size, True)


def execute(ctx, steps: list[tuple], regs: dict[str, Reg], authors: bool = False) -> dict[str, Reg]:
    """Run a program of steps on registers (modified in place and returned).

    Products are relinearized once, before their first rotation (:func:`linear`); ``authors``: masked
    windows."""
    P, rotated = ctx.period, {}
    for step in steps:
        op, dst = step[0], step[1]
        if op in ("map", "rotsum"):
            regs[step[2]] = linear(ctx, regs[step[2]])
        if op == "map":
            regs[dst] = apply_map(ctx, regs[step[2]], step[3], authors, rotated)
        elif op == "mul":
            x, y, size = regs[step[2]], regs[step[3]], step[4]
            if min(x.extent, y.extent) > size:
                x = Reg(ctx.mul_plain(x.ct, np.ones(size, dtype=np.int64)), size)
            regs[dst] = Reg(ctx.mul(x.ct, y.ct, relin=False), min(x.extent, y.extent))
        elif op == "mask":
            keep = step[3]
            regs[dst] = Reg(ctx.mul_plain(regs[step[2]].ct, keep), min(regs[step[2]].extent, keep.size))
        elif op == "acc":
            src = regs[step[2]]
            if dst in regs:
                prev = regs[dst]
                regs[dst] = Reg(ctx.add(prev.ct, src.ct), max(prev.extent, src.extent))
            else:
                regs[dst] = Reg(src.ct, src.extent)
        elif op == "rotsum":
            src, count, stride = regs[step[2]], step[3], step[4]
            extent = src.extent + (count - 1) * -stride if stride < 0 else P
            regs[dst] = Reg(rotate_and_sum(ctx, src.ct, count, stride), min(extent, P))
        else:
            raise ValueError(f"unknown plan step {op!r}")
    return regs
