"""HyDia's packing (face-search paper Sec. 3.3.1, Algorithm 5), in plaintext.

The K database vectors (length l) are cut into l x l squares (rows = vectors); square S gives
its l generalized diagonals diag_i(S)[r] = S[r, (r + i) mod l]; ``slots / l`` squares side by
side make one matrix group M_k, so group k holds vectors k*slots .. (k+1)*slots - 1 and
diagonal i of the group is one ciphertext: G = ceil(K / slots) groups of l ciphertexts. The
query is replicated slots / l times. Then sum_i rot_i(q) * diag_i(M_k) holds, in slot
s*l + r, the inner product of vector k*slots + s*l + r with the query (Eq. 1 and 5).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Layout", "normalize", "group_diagonals", "replicate_query", "scores_from_slots", "bsgs_shape"]


@dataclass(frozen=True)
class Layout:
    """Where K vectors of dimension l sit in ciphertexts of ``slots`` slots."""
    K: int
    l: int
    slots: int

    def __post_init__(self):
        for name in ("K", "l", "slots"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.slots % self.l:
            raise ValueError(f"the vector dimension l={self.l} must divide the {self.slots} slots "
                             f"(pad the embeddings to a power of two)")

    @property
    def groups(self) -> int:
        """G = ceil(K / slots) matrix groups of l diagonal ciphertexts."""
        return math.ceil(self.K / self.slots)

    @property
    def squares_per_group(self) -> int:
        return self.slots // self.l


def bsgs_shape(l: int, n1: int | None = None) -> tuple[int, int]:
    """(n1, n2) with n2 = ceil(l / n1); n1 defaults to ceil(sqrt(l)) (23 for l = 512, as the paper)."""
    n1 = math.isqrt(l - 1) + 1 if n1 is None else n1
    if not isinstance(n1, (int, np.integer)) or not 1 <= n1 <= l:
        raise ValueError(f"baby step n1 must be an integer in [1, l={l}], got {n1!r}")
    return int(n1), math.ceil(l / n1)


def normalize(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (the scores are then cosine similarities in [-1, 1])."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim not in (1, 2) or not np.isfinite(x).all():
        raise ValueError(f"expected finite vectors (1-D or 2-D), got shape {x.shape}")
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    if (norms == 0).any():
        raise ValueError(f"{int((norms == 0).sum())} zero vector(s) cannot be normalized")
    return x / norms


def group_diagonals(db: np.ndarray, layout: Layout, group: int, *, prerotate_n1: int | None = None) -> np.ndarray:
    """The l diagonals (l x slots) of matrix group ``group`` of the (normalized) database.

    ``prerotate_n1``: store Rot_{-j n1}(diag_{j n1 + i}) instead, the plaintext pre-rotation that
    lets the textbook BSGS of Eq. 3-4 apply its giant steps to encrypted diagonals (the paper's
    TBE variant, Sec. 5.3.3).
    """
    db = np.asarray(db, dtype=np.float64)
    if db.shape != (layout.K, layout.l):
        raise ValueError(f"database has shape {db.shape}, layout expects ({layout.K}, {layout.l})")
    if not 0 <= group < layout.groups:
        raise IndexError(f"group {group} out of range: the layout has {layout.groups}")
    l, slots = layout.l, layout.slots
    block = np.zeros((slots, l))
    rows = db[group * slots:(group + 1) * slots]
    block[:len(rows)] = rows
    squares = block.reshape(layout.squares_per_group, l, l)           # [s, r, c]
    r = np.arange(l)
    cols = (r[None, :] + np.arange(l)[:, None]) % l                    # [i, r] -> (r + i) mod l
    diags = squares[:, r[None, :], cols]                               # [s, i, r]
    out = diags.transpose(1, 0, 2).reshape(l, slots)                   # [i, s*l + r]
    if prerotate_n1:
        for i in range(l):
            out[i] = np.roll(out[i], (i // prerotate_n1) * prerotate_n1)
    return out


def replicate_query(q: np.ndarray, slots: int) -> np.ndarray:
    """The (normalized) query repeated slots / l times."""
    q = np.asarray(q, dtype=np.float64)
    if q.ndim != 1 or slots % len(q):
        raise ValueError(f"query of shape {q.shape} cannot fill {slots} slots")
    return np.tile(q, slots // len(q))


def scores_from_slots(groups: list[np.ndarray], layout: Layout) -> np.ndarray:
    """The K per-vector values from the per-group slot vectors (slot s*l + r of group k is vector k*slots + s*l + r)."""
    return np.concatenate([np.asarray(g)[:layout.slots] for g in groups])[:layout.K]
