"""Rectangular matrix x vector products on BFV/BGV slots: tall and wide MatMul (Horner BSGS).

The SophOMR paper's Algorithms 1, 7 and 8 (PEGASUS-style, adapted to BFV's two rows of n/2
slots that rotate on their own; ``n`` is the slot count). A matrix is given by its entries,
``entries(rows, cols) -> values mod t`` for index arrays that broadcast to each other (rows of
shape (n,), cols of shape (b, n): b diagonals at once; the result has their broadcast shape), or a
dense array, so a matrix too large to hold (the OMR compression matrix is 16,384 x 2^16) is
generated diagonal by diagonal, and what depends on the row alone is computed once per slot.

- **Tall** (Alg. 8; Alg. 7 is ``b = k``): ``M`` is ``N x k`` with ``k | n/2`` and ``N = s n``
  (zero rows pad N). ``v`` (length k) is *sparse-packed*: slot t holds ``v[t mod k]``, so a row
  rotation by j is a cyclic rotation of v. Block i's generalized diagonal j is
  ``d_j[t] = M[i n + t, (t + j) mod k]`` and ``(M v)_block i = sum_j d_j * Rot^j(v)``. With
  ``j = g b + beta`` the baby steps ``Rot^beta(v)`` are successive rotations by 1 and the giant
  steps a Horner loop of rotations by b: two rotation keys, ``b - 1 + s (ceil(k/b) - 1)`` rotations,
  ``s k`` plaintext products. b need not divide k: the last giant step skips the diagonals j >= k
  (the authors' b = ceil(sqrt(l s k)), e.g. 46 for k = 1024, s = 1, l = 2: 45 + 2 x 22 = 89 rotations).
- **Wide** (Alg. 1): ``M`` is ``K x N`` with ``K | n/2``, ``v`` spread over s ciphertexts in
  natural order. ``d_j[t] = M[t mod K, i n + col(t, j)]`` with ``col(t, j)`` the slot that a row
  rotation by j brings to t; ``sum_j d_j * Rot^j(v_i)`` summed over the blocks holds partial
  sums that a block summation (rotations by K, 2K, ..., n/4, then the row swap) completes:
  slot r < K holds ``(M v)[r]``. ``s (b - 1) + ceil(K/b) - 1 + log2(n / 2K)`` rotations and one swap,
  ``s K`` plaintext products (diagonals j >= K skipped); keys for 1, b, K, 2K, ..., n/4 and the swap.
- **Square** (a dense n x n map of all n slots, both rows: PerfOMR's SlotToCoeff): baby steps of v
  and of its row swap, ``d_j^h[t] = M[t, col_h(t, j)]`` with ``col_h`` the slot that a row rotation
  by j of v (h = 0) or of swap(v) (h = 1) brings to t, giant steps by Horner. ``2 (b - 1) + n/(2b) - 1``
  rotations and one swap, n plaintext products; keys for 1, b and the swap.

Every product is checked against :func:`tall_numpy` / :func:`wide_numpy` in the tests.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .rotsum import rotate_and_sum, rotation_steps_for_sum

__all__ = ["sparse_pack", "row_rotate", "tall_steps", "wide_steps", "cheapest_b", "tall_matvec", "wide_matvec",
           "wide_plains", "square_matvec", "tall_numpy", "wide_numpy", "square_numpy", "tall_counts", "wide_counts",
           "square_counts"]

Entries = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _pow2_divisor(name: str, value: int, of: int, what: str) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if of % value:
        raise ValueError(f"{name} = {value} must divide {what} = {of}")
    return int(value)


def _baby_count(b, of: int, what: str) -> int:
    """A baby-step count: an integer in [1, of] (it need not divide ``of``)."""
    if not isinstance(b, (int, np.integer)) or isinstance(b, bool) or not 1 <= b <= of:
        raise ValueError(f"b must be an integer in [1, {what} = {of}], got {b!r}")
    return int(b)


def _entries(matrix) -> tuple[Entries, tuple[int, int] | None]:
    """(entries function, shape or None) for a dense array or an entries function."""
    if callable(matrix):
        return matrix, None
    m = np.asarray(matrix)
    if m.ndim != 2 or m.dtype.kind not in "iu":
        raise ValueError(f"the matrix must be a 2-D integer array or an entries(rows, cols) function, "
                         f"got {m.dtype} of shape {m.shape}")
    return (lambda r, c: m[r, c]), m.shape


def row_rotate(values: np.ndarray, k: int, n: int) -> np.ndarray:
    """What ``ctx.rotate(ct, k)`` does to BFV slots: each row of n/2 rotates left by k (along the last axis)."""
    values = np.asarray(values)
    rows = values.reshape(*values.shape[:-1], 2, n // 2)
    return np.roll(rows, -k, axis=-1).reshape(values.shape)


def sparse_pack(v, n: int) -> np.ndarray:
    """v (length k, ``k | n/2``) repeated over n slots: slot t holds ``v[t mod k]``."""
    v = np.asarray(v)
    _pow2_divisor("len(v)", v.size, n // 2, "n/2")
    return np.tile(v, n // v.size)


def tall_steps(k: int, b: int) -> list[int]:
    """Rotation keys of the tall MatMul: 1 (baby steps) and b (giant steps); Alg. 7 (b = k) needs 1 only."""
    return sorted(({1} if b > 1 else set()) | ({b} if -(-k // b) > 1 else set()))


def wide_steps(K: int, b: int, n: int) -> list[int]:
    """Rotation keys of the wide MatMul: 1, b, then K, 2K, ..., n/4 (the row swap comes on top)."""
    return sorted(set(tall_steps(K, b)) | set(rotation_steps_for_sum(n // (2 * K), K)))


def _default_b(k: int, target: float) -> int:
    """The power-of-two divisor of k nearest ``target`` (in log scale): the square MatMul's baby-step count."""
    divisors = [2 ** e for e in range(int(math.log2(k)) + 1) if k % 2 ** e == 0]
    return min(divisors, key=lambda d: abs(math.log2(d) - math.log2(max(target, 1.0))))


def cheapest_b(k: int, babies: int, giants: int) -> int:
    """The baby-step count with the fewest rotations ``babies (b - 1) + giants (ceil(k/b) - 1)``: the authors'
    ``ceil(sqrt(giants k / babies))`` or the power-of-two divisor of k nearest it, whichever is cheaper (the
    power of two on a tie). Tall MatMul: ``babies = 1, giants = l s``; wide: ``babies = s, giants = 1``."""
    target = math.sqrt(giants * k / babies)

    def rotations(b: int) -> int:
        return babies * (b - 1) + giants * (-(-k // b) - 1)
    return min((_default_b(k, target), min(k, math.ceil(target))), key=rotations)


def _reduced(d: np.ndarray, t: int) -> np.ndarray:
    """``d`` mod t; integer entries already in [0, t) are kept as they are (the check is two fast passes, the
    remainder an integer division per entry: over one giant step of SophOMR's compression, 128 x 2^16 entries,
    5 ms against 0.19 s, measured on a busy machine)."""
    if d.dtype.kind in "iu" and d.size and 0 <= d.min() and d.max() < t:
        return d
    return np.remainder(d, t)


def _horner(ctx, partial: Callable[[int], object], giants: int, b: int):
    """sum_g Rot^(g b)(partial(g)), Horner style: one rotation by b per giant step."""
    out = None
    for g in range(giants - 1, -1, -1):
        part = partial(g)
        out = part if out is None else ctx.add(ctx.rotate(out, b), part)
    return out


def _baby(ctx, ct, b: int) -> list:
    """Rot^beta(ct) for beta = 0..b-1, by successive rotations by 1 (Alg. 1/8's baby steps)."""
    out = [ct]
    for _ in range(1, b):
        out.append(ctx.rotate(out[-1], 1))
    return out


def tall_matvec(ctx, ct, matrices: list, N: int, k: int, *, b: int | None = None) -> list[list]:
    """M v for each ``N x k`` matrix M of ``matrices`` and a sparse-packed encryption ``ct`` of v.

    The matrices share the baby steps (the detector's l repetitions). ``b`` is the baby-step
    count (in [1, k]; default :func:`cheapest_b`, about sqrt(len(matrices) s k));
    ``b = k`` is Alg. 7, one rotation key. Returns, per matrix, s ciphertexts: slot t of the
    i-th holds ``(M v)[i n + t]``.
    """
    n, t = ctx.slots, ctx.plain_modulus
    k = _pow2_divisor("k", k, n // 2, "n/2")
    s = math.ceil(N / n)
    funcs = []
    for m in matrices:
        entries, shape = _entries(m)
        if shape is not None and shape != (N, k):
            raise ValueError(f"a matrix has shape {shape}, expected (N, k) = ({N}, {k})")
        funcs.append(entries)
    b = _baby_count(b or cheapest_b(k, 1, len(funcs) * s), k, "k")
    babies = _baby(ctx, ct, b)
    slot = np.arange(n)

    def partial(entries, rows, valid, g):
        """The diagonals g b .. min(g b + b, k) - 1 of giant step g at once, then their products with the babies."""
        m = min(b, k - g * b)
        cols = (slot + g * b + np.arange(m)[:, None]) % k
        d = np.broadcast_to(entries(np.minimum(rows, N - 1), cols), (m, n))
        if not valid.all():
            d = np.where(valid, d, 0)
        return ctx.dot_plain(babies[:m], list(_reduced(row_rotate(d, -g * b, n), t)))
    out = []
    for entries in funcs:
        blocks = []
        for i in range(s):
            rows = i * n + slot
            blocks.append(_horner(ctx, lambda g, rows=rows: partial(entries, rows, rows < N, g), -(-k // b), b))
        out.append(blocks)
    return out


def _wide_diagonals(ctx, matrix, K: int, N: int, s: int, b: int) -> Callable[[int], list[np.ndarray]]:
    """The s m diagonals of giant step g of the wide product (m = min(b, K - g b): one (m, n) array per
    ciphertext, flattened), each pre-rotated by -g b, reduced mod t."""
    entries, shape = _entries(matrix)
    n, t = ctx.slots, ctx.plain_modulus
    if shape is not None and shape != (K, N):
        raise ValueError(f"the matrix has shape {shape}, expected (K, N) = ({K}, {N})")
    slot = np.arange(n)
    half, pos = n // 2, slot % (n // 2)
    # Diagonal g b + beta pre-rotated by -g b reads row (t - g b) mod K (K divides n/2) and, in block i, column
    # i n + (t - pos) + (pos + beta) mod n/2 at slot t: the columns do not depend on g, the rows not on beta.
    shift = (slot - pos) + (pos + np.arange(b)[:, None]) % half

    def diagonals(g):
        m = min(b, K - g * b)
        rows = (pos - g * b) % K
        out = []
        for i in range(s):
            cols = shift[:m] + i * n if i else shift[:m]
            if (i + 1) * n > N:
                d = np.where(cols < N, entries(rows, np.minimum(cols, N - 1)), 0)
            else:
                d = entries(rows, cols)
            out.extend(_reduced(np.broadcast_to(d, (m, n)), t))
        return out
    return diagonals


def _wide_shape(ctx, K: int, N: int, b: int | None) -> tuple[int, int, int]:
    """(K, s, b) of a wide product: K checked (a power of two dividing n/2), s ciphertexts, b baby steps."""
    n = ctx.slots
    K = _pow2_divisor("K", K, n // 2, "n/2")
    s = math.ceil(N / n)
    return K, s, _baby_count(b or cheapest_b(K, s, 1), K, "K")


def wide_plains(ctx, matrix, K: int, N: int, *, level: int, b: int | None = None) -> list[list]:
    """The diagonals of :func:`wide_matvec`'s product encoded once at ``level`` (one list per giant step), for
    products by one fixed matrix: ``wide_matvec(..., plains=...)`` then encodes nothing."""
    K, s, b = _wide_shape(ctx, K, N, b)
    diagonals = _wide_diagonals(ctx, matrix, K, N, s, b)
    return [[ctx.encode(d, level=level) for d in diagonals(g)] for g in range(-(-K // b))]


def wide_matvec(ctx, cts: list, matrix, K: int, N: int, *, b: int | None = None, plains: list | None = None):
    """M v for a ``K x N`` matrix and v in natural order over ``cts`` (n slots each); slot r < K holds (M v)[r].
    ``plains``: M's diagonals as :func:`wide_plains` encoded them (same K, N and b; ``matrix`` is then unused)."""
    n = ctx.slots
    K, s, b = _wide_shape(ctx, K, N, b)
    if len(cts) != s:
        raise ValueError(f"N = {N} needs {s} ciphertexts of {n} slots, got {len(cts)}")
    if plains is not None and len(plains) != -(-K // b):
        raise ValueError(f"plains holds {len(plains)} giant steps, the product has {-(-K // b)}")
    diagonals = _wide_diagonals(ctx, matrix, K, N, s, b) if plains is None else plains.__getitem__
    babies = [_baby(ctx, ct, b) for ct in cts]

    def partial(g):
        """The products of giant step g (m = min(b, K - g b) diagonals per ciphertext)."""
        m = min(b, K - g * b)
        return ctx.dot_plain([c for row in babies for c in row[:m]], diagonals(g))
    out = _horner(ctx, partial, -(-K // b), b)
    if n // (2 * K) > 1:
        out = rotate_and_sum(ctx, out, n // (2 * K), K)
    return ctx.add(out, ctx.swap_columns(out))


def square_matvec(ctx, ct, matrix, *, b: int | None = None):
    """M v for a dense ``n x n`` map of all n slots (both rows; slot t = row * n/2 + column)."""
    entries, shape = _entries(matrix)
    n, t = ctx.slots, ctx.plain_modulus
    half = n // 2
    if shape is not None and shape != (n, n):
        raise ValueError(f"the matrix has shape {shape}, expected (n, n) = ({n}, {n})")
    b = _pow2_divisor("b", b or _default_b(half, math.sqrt(half / 2)), half, "n/2")
    babies = _baby(ctx, ct, b) + _baby(ctx, ctx.swap_columns(ct), b)
    slot = np.arange(n)
    row, pos = slot // half, slot % half
    source_row = np.concatenate([np.broadcast_to(row, (b, n)), np.broadcast_to(1 - row, (b, n))])

    def partial(g):
        """The 2b diagonals of giant step g (h = 0 babies first), then their products."""
        cols = source_row * half + (pos + g * b + np.tile(np.arange(b), 2)[:, None]) % half
        d = np.broadcast_to(entries(slot, cols), (2 * b, n))
        return ctx.dot_plain(babies, list(row_rotate(d, -g * b, n) % t))
    return _horner(ctx, partial, half // b, b)


def _dense(entries: Entries, rows: int, cols: int) -> np.ndarray:
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    return np.asarray(entries(r.ravel(), c.ravel()), dtype=object).reshape(rows, cols)


def tall_numpy(matrix, v, N: int, k: int, t: int) -> np.ndarray:
    """(M v) mod t, exactly (Python integers), for the tall product's checks."""
    entries, _ = _entries(matrix)
    return (_dense(entries, N, k) @ np.asarray(v, dtype=object)) % t


def wide_numpy(matrix, v, K: int, N: int, t: int) -> np.ndarray:
    """(M v) mod t, exactly, for the wide product's checks."""
    entries, _ = _entries(matrix)
    return (_dense(entries, K, N) @ np.asarray(v, dtype=object)) % t


def square_numpy(matrix, v, n: int, t: int) -> np.ndarray:
    """(M v) mod t, exactly, for the square product's checks."""
    entries, _ = _entries(matrix)
    return (_dense(entries, n, n) @ np.asarray(v, dtype=object)) % t


def tall_counts(N: int, k: int, n: int, b: int, matrices: int = 1) -> dict[str, int]:
    """Table 2's costs of the tall MatMul (Alg. 8; Alg. 7 at b = k), for matrices sharing the baby steps."""
    s = math.ceil(N / n)
    return {"mul_pt": matrices * s * k, "rotate": (b - 1) + matrices * s * (-(-k // b) - 1),
            "rotation_keys": len(tall_steps(k, b))}


def wide_counts(K: int, N: int, n: int, b: int) -> dict[str, int]:
    """Table 1's costs of the wide MatMul (Alg. 1), the row swap counted apart."""
    s = math.ceil(N / n)
    return {"mul_pt": s * K, "rotate": s * (b - 1) + (-(-K // b) - 1) + int(math.log2(n // (2 * K))), "swap": 1,
            "rotation_keys": len(wide_steps(K, b, n)) + 1}


def square_counts(n: int, b: int) -> dict[str, int]:
    """Costs of the square MatMul: baby steps of v and swap(v), Horner giant steps."""
    return {"mul_pt": n, "rotate": 2 * (b - 1) + n // (2 * b) - 1, "swap": 1,
            "rotation_keys": len(tall_steps(n // 2, b)) + 1}
