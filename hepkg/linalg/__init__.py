"""Encrypted linear algebra shared by the paper sections (runs on any backend)."""
from .diagonal import bsgs_split, default_n1, diagonals, linear_transform, transform_steps
from .rectangular import sparse_pack, tall_matvec, wide_matvec
from .rotsum import rotate_and_sum, rotation_steps_for_sum

__all__ = ["diagonals", "linear_transform", "transform_steps", "bsgs_split", "default_n1",
           "rotate_and_sum", "rotation_steps_for_sum", "sparse_pack", "tall_matvec", "wide_matvec"]
