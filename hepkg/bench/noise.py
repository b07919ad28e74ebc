"""Noise-budget decay under repeated products (CSSC paper, Table 4)."""
from __future__ import annotations

import numpy as np


def noise_decay(ctx, op: str = "mul_ct", steps: int = 6, seed: int = 0) -> list[int]:
    """Noise budget (bits) after 0..steps repeated products on a random ciphertext.

    ``mul_ct`` multiplies the running ciphertext by a fresh encryption (relinearized);
    ``mul_pt`` by a random plaintext. Needs a backend that reports the BFV noise budget.
    """
    if op not in ("mul_ct", "mul_pt"):
        raise ValueError(f"op must be 'mul_ct' or 'mul_pt', got {op!r}")
    if not (ctx.is_integer and ctx.has_noise_budget):
        raise ValueError(f"backend '{ctx.backend}' does not report a BFV noise budget")
    rng = np.random.default_rng(seed)
    t = ctx.plain_modulus
    ct = ctx.encrypt(rng.integers(0, t, ctx.slots))
    budgets = [ctx.noise_budget(ct)]
    for _ in range(steps):
        other = rng.integers(0, t, ctx.slots)
        ct = ctx.mul(ct, ctx.encrypt(other)) if op == "mul_ct" else ctx.mul_plain(ct, other)
        budgets.append(ctx.noise_budget(ct))
    return budgets
