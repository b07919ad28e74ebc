"""Random inputs for the gemm experiments: shapes as the paper draws them (Sec. 4.3) and integer
operands whose exact product fits the plaintext modulus."""
from __future__ import annotations

import math

import numpy as np


def random_shapes(n_pairs: int, low: int = 1, high: int = 64, seed: int = 0) -> list[tuple[int, int, int]]:
    """``n_pairs`` shapes (m, l, n), each dimension uniform in [low, high] (Sec. 4.3: [1, 64])."""
    rng = np.random.default_rng(seed)
    return [tuple(int(x) for x in row) for row in rng.integers(low, high + 1, size=(n_pairs, 3))]


def random_operands(m: int, l: int, n: int, t: int, seed: int = 0, max_abs: int | None = None):
    """Random integer A (m x l), B (l x n) whose exact product fits t (|entries| <= sqrt(t/2 / l))."""
    v = max_abs if max_abs is not None else max(1, math.isqrt(t // 2 // l))
    rng = np.random.default_rng(seed)
    return rng.integers(-v, v + 1, size=(m, l)), rng.integers(-v, v + 1, size=(l, n))
