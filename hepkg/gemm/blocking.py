"""Block matrix products (Sec. 4.4) and uSCORE-style square blocking (Table 7).

A :class:`Blocking` splits the rows of A, the inner dimension and the columns of B; block
``C_ij = sum_k A_ik B_kj`` runs one plan per (i, k, j). The cloud preprocesses each distinct
encrypted block once, adds the partial products of ``C_ij`` that share a result layout
(HEGMM-En's and E2DM's layouts depend on the block shape, so unequal inner blocks can give
several), and returns one ciphertext per group; the client adds the decrypted groups.

``P1`` and ``P2`` are the paper's two partitions of a 100 x 100 product. uSCORE (Huang et
al., TDSC 2023) is modelled as E2DM-S on square b x b blocks, every block padded to b.
:func:`plan_blocking` picks a blocking (or uSCORE's b) that fits and minimizes the op
counts priced with per-op latencies (the paper's Table 1 by default).
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from itertools import product

import numpy as np

from hepkg.reference.hegmm import TABLE1_OPS_MS

from .counts import METHODS, expected_counts, fits
from .errors import NotApplicable
from .plan import execute

#: The paper's Table 1 latencies (ms) used to price op counts (HE-Add, -Mult, -CMult, -Rot, encryption, decryption).
PAPER_COSTS_MS = {k: TABLE1_OPS_MS[k]["he"] for k in ("add", "mul_ct", "mul_pt", "rotate", "encrypt", "decrypt")}


@dataclass(frozen=True)
class Blocking:
    """Block sizes: ``rows`` of A (and C), ``inner`` (A's columns, B's rows), ``cols`` of B (and C)."""

    rows: tuple[int, ...]
    inner: tuple[int, ...]
    cols: tuple[int, ...]

    @classmethod
    def uniform(cls, m: int, l: int, n: int, b: int) -> "Blocking":
        """Blocks of b (the last one of each dimension smaller when b does not divide it)."""
        return cls(*(split(x, b) for x in (m, l, n)))

    def check(self, m: int, l: int, n: int) -> None:
        for name, parts, total in (("rows", self.rows, m), ("inner", self.inner, l), ("cols", self.cols, n)):
            if not parts or sum(parts) != total or min(parts) < 1:
                raise ValueError(f"blocking {name} sizes {parts} must be positive and sum to {total}")

    def ranges(self) -> list[list[slice]]:
        out = []
        for parts in (self.rows, self.inner, self.cols):
            ends = np.cumsum((0,) + tuple(parts))
            out.append([slice(int(a), int(b)) for a, b in zip(ends[:-1], ends[1:])])
        return out


def split(x: int, b: int) -> tuple[int, ...]:
    """x as blocks of b, the remainder last."""
    return (b,) * (x // b) + ((x % b,) if x % b else ())


#: Sec. 4.4's partitions of a 100 x 100 by 100 x 100 product.
P1 = Blocking((50, 50), (50, 50), (50, 50))
P2 = Blocking((64, 36), (64, 36), (64, 36))
PARTITIONS = {"P1": P1, "P2": P2}


class BlockedPlan:
    """One plan per block triple, with shared preprocessing and encrypted partial sums."""

    def __init__(self, method: str, shape, period: int, preprocess: str, blocking: Blocking, plans: dict):
        self.method, self.shape, self.period, self.preprocess = method, tuple(shape), period, preprocess
        self.blocking, self.plans = blocking, plans
        self.inputs: dict[str, tuple] = {}   # ciphertext name -> (plan, operand, user matrix, block index)
        self.names: dict[tuple, str] = {}    # (triple, operand name) -> ciphertext name
        seen: dict[tuple, str] = {}
        for (i, k, j), plan in plans.items():
            for op in plan.operands:
                user = "A" if (op.source == "A") != plan.transposed else "B"
                blk = (i, k) if user == "A" else (k, j)
                key = (user, blk, plan.transposed, op.key(preprocess))
                if key not in seen:
                    seen[key] = f"{user}{blk[0]}_{blk[1]}#{len(seen)}"
                    self.inputs[seen[key]] = (plan, op, user, blk)
                self.names[(i, k, j), op.name] = seen[key]
        self.groups: dict[str, list] = {}   # result ciphertext -> the block triples added in it
        by_layout: dict[tuple, str] = {}
        for (i, k, j), plan in plans.items():
            name = by_layout.setdefault((i, j, plan.out, plan.transposed, plan.region), f"C{i}_{j}#{len(by_layout)}")
            self.groups.setdefault(name, []).append((i, k, j))

    def result_sizes(self) -> dict[str, int]:
        """Slots to decrypt per result ciphertext."""
        return {g: self.plans[ts[0]].out.size for g, ts in self.groups.items()}

    def encode(self, A: np.ndarray, B: np.ndarray) -> dict[str, np.ndarray]:
        """The vectors to encrypt: each distinct encoding of each block once."""
        rows, inner, cols = self.blocking.ranges()
        out = {}
        for name, (plan, op, user, (b0, b1)) in self.inputs.items():
            block = A[rows[b0], inner[b1]] if user == "A" else B[inner[b0], cols[b1]]
            out[name] = op.encode(block.T if plan.transposed else block, self.preprocess)
        return out

    def run(self, ctx, cts: dict) -> dict:
        """One ciphertext per result group; each input is preprocessed once."""
        regs = {name: plan.prepare(ctx, op, cts[name]) for name, (plan, op, _, _) in self.inputs.items()}
        out = {}
        for group, triples in self.groups.items():
            for t in triples:
                plan = self.plans[t]
                local = {op.name: regs[self.names[t, op.name]] for op in plan.operands}
                c = execute(ctx, plan.steps, local, plan.baseline == "authors")["C"].ct
                out[group] = ctx.add(out[group], c) if group in out else c
        return {g: ctx.relinearize(c) if c.size > 2 else c for g, c in out.items()}

    def assemble(self, vecs: dict) -> np.ndarray:
        """C from the decrypted groups (the client adds groups of the same block)."""
        rows, _, cols = self.blocking.ranges()
        C = np.zeros(self.shape[::2], dtype=np.int64)
        for group, triples in self.groups.items():
            i, _, j = triples[0]
            C[rows[i], cols[j]] += self.plans[triples[0]].decode(vecs[group])
        return C

    def rotation_steps(self) -> list[int]:
        """Every rotation step the cloud performs."""
        return sorted(set().union(*(p.rotation_steps() for p in self.plans.values())))


def blocked_plan(method: str, m: int, l: int, n: int, period: int, preprocess: str, blocking: Blocking,
                 build) -> BlockedPlan:
    """A blocked product with ``build(mi, lk, nj)`` giving the plan of each block triple."""
    blocking.check(m, l, n)
    plans = {}
    for (i, mi), (k, lk), (j, nj) in product(*(enumerate(p) for p in (blocking.rows, blocking.inner,
                                                                         blocking.cols))):
        plans[i, k, j] = build(mi, lk, nj)
    return BlockedPlan(method, (m, l, n), period, preprocess, blocking, plans)


def _price(counts: dict, costs: dict) -> float:
    return sum(counts[k] * costs[k] for k in ("add", "mul_ct", "mul_pt", "rotate"))


def uscore_block(m: int, l: int, n: int, period: int, preprocess: str = "cloud", costs: dict | None = None,
                 baseline: str = "hepkg") -> int:
    """uSCORE's square block size b (b^2 <= period) of least priced cost (see :func:`plan_blocking`)."""
    costs = dict(PAPER_COSTS_MS, **(costs or {}))

    def cost(b):
        qm, ql, qn = (math.ceil(x / b) for x in (m, l, n))
        return (_price(expected_counts("uscore", m, l, n, preprocess, period, block=b, baseline=baseline), costs)
                + (qm * ql + ql * qn) * costs["encrypt"] + qm * qn * costs["decrypt"])

    return min(range(1, min(math.isqrt(period), max(m, l, n)) + 1), key=lambda b: (cost(b), -b))


def candidate_splits(x: int, period: int) -> set[tuple[int, ...]]:
    """Splits of a dimension x tried by the planner: near-equal parts, powers of two, sqrt(period)."""
    sizes = {math.ceil(x / q) for q in range(1, min(x, 16) + 1)}
    sizes |= {2 ** i for i in range(x.bit_length()) if 2 ** i <= x} | {min(x, math.isqrt(period))}
    return {split(x, s) for s in sizes}


def plan_blocking(method: str, m: int, l: int, n: int, period: int, preprocess: str = "cloud",
                  costs: dict | None = None, baseline: str = "hepkg") -> Blocking:
    """The blocking of least estimated cost whose every block product fits one ciphertext.

    Candidates: per dimension, blocks of ``ceil(x/q)`` (q <= 16), of powers of two and of
    ``sqrt(period)``, the remainder last. Cost of a block product: its expected cloud op
    counts priced with ``costs`` (ms per 'add', 'mul_ct', 'mul_pt', 'rotate', 'encrypt',
    'decrypt'; the paper's Table 1 by default) plus encrypting its operands and decrypting
    its result; preprocessing shared between block products is counted each time (an upper
    bound). Thin inner blocks can win: they turn the product into rotation-free outer
    products at the price of more ciphertexts. ``baseline``: whose evaluation is priced.
    """
    if method not in METHODS or method == "uscore":
        raise ValueError(f"plan_blocking takes one of {METHODS[:-1]}; uSCORE's block size is uscore_block()")
    costs = dict(PAPER_COSTS_MS, **(costs or {}))

    @lru_cache(maxsize=None)
    def block_cost(mi, lk, nj):
        if not fits(method, mi, lk, nj, period, baseline):
            return math.inf
        inputs = lk + 1 if method == "huang" else 2
        return (_price(expected_counts(method, mi, lk, nj, preprocess, period, baseline=baseline), costs)
                + inputs * costs["encrypt"] + costs["decrypt"])

    best, best_cost = None, math.inf
    splits = [sorted(candidate_splits(x, period)) for x in (m, l, n)]
    for rs, ks, cs in product(*splits):
        cost = sum(block_cost(mi, lk, nj) * a * b * c for (mi, a), (lk, b), (nj, c)
                   in product(*(Counter(p).items() for p in (rs, ks, cs))))
        if cost < best_cost:
            best, best_cost = Blocking(rs, ks, cs), cost
    if best is None:
        raise NotApplicable(f"no blocking of {m} x {l} x {n} makes every {method} block product fit "
                            f"{period} slots")
    return best
