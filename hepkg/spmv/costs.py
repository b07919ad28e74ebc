"""Operation counts of the cloud: the paper's Table 3 formula and hepkg's exact prediction.

Table 3 (per matrix): n_ct HE-Mult, n_ct HE-CMult (masks), n_ct * log2(C_max) rotations
and as many additions, depth 1M + 1C. hepkg's exact count per chunk with c columns in
``split`` columns per slot row is ``floor(log2 split) + popcount(split) - 1`` rotations
(``log2 c`` when c is a power of two and the chunk uses one row), plus one column swap for
a two-row chunk; additions are one per rotation and swap plus one per chunk added into its
block's result (Table 3 leaves those out). Key switches depend on the key policy: one per
rotation with ``exact`` keys, the non-adjacent-form weight of each step with ``pow2`` keys.
"""
from __future__ import annotations

import math

from hepkg.he.keys import pow2_terms

from .chunks import ChunkPlan

__all__ = ["table3_formula", "predicted_ops", "sum_steps", "table3_rows"]


def table3_formula(n_ct: int, c_max: int) -> dict[str, float]:
    """The paper's Table 3 totals for n_ct ciphertexts and C_max columns."""
    log = math.log2(c_max) if c_max > 0 else 0.0
    return {"mul_ct": n_ct, "mul_pt": n_ct, "rotate": n_ct * log, "add": n_ct * log, "depth": 2}


def sum_steps(n: int) -> list[int]:
    """Rotation offsets (in columns, in order) that ``rotate_and_sum`` uses to add n columns."""
    steps, width, offset = [], 1, 0
    while n:
        if n & 1:
            if offset:
                steps.append(offset)
            offset += width
        n >>= 1
        if n:
            steps.append(width)
        width <<= 1
    return steps


def predicted_ops(plan: ChunkPlan, policy: str = "pow2") -> dict[str, int]:
    """The cloud's exact op counts for ``plan`` (what ``Cloud.evaluate`` counts on any backend)."""
    rot = ks = swaps = 0
    for c in plan.chunks:
        steps = [s * c.rows for s in sum_steps(c.split)]
        rot += len(steps)
        ks += sum(len(pow2_terms(s, plan.period)) if policy == "pow2" else 1 for s in steps)
        swaps += c.two_rows
    n = plan.n_ct
    return {"mul_ct": n, "relinearize": n, "mul_pt": n, "rotate": rot, "swap": swaps,
            "add": rot + swaps + n - len(plan.blocks), "keyswitch": ks + swaps + n,
            "encode": len({c.rows for c in plan.chunks}), "depth": 2}


def table3_rows(plan: ChunkPlan, measured: dict, policy: str = "pow2") -> list[dict]:
    """Measured vs hepkg's exact count vs the paper's formula, one row per Table 3 column."""
    paper, exact = table3_formula(plan.n_ct, plan.c_max), predicted_ops(plan, policy)
    return [dict(op=op, measured=int(measured.get(op, 0)), predicted=exact[op], paper_formula=paper[op])
            for op in ("mul_ct", "mul_pt", "rotate", "add", "depth")]
