"""Encrypted similarity of one query with every matrix group (face-search paper): the authors' two
methods as they ran them, hepkg's leaner variants of each, and the textbook BSGS.

The authors' methods (FastHE-Search V1.0.0, approaches 5 and 8), which every claim is judged on:

- ``hydia``: HyDia's diagonal method (Algorithm 6) as the authors' ``DiagonalSender``: l - 1 hoisted
  rotations of the query (the table of l rotated queries serves every group); per group all l products
  are kept unrelinearized (size 3) and summed after the last one, then relinearized and rescaled once.
  The client generates keys for 1..l-1, the positive powers of two from l to slots/2 and the negative
  powers of two -1..-slots/2 (530 rotation factors at l = 512, slots = 2^14, 529 keys: -8192 and +8192
  are one automorphism), whether or not they are used.
- ``bsgs-diagonal``: BSGS-Diagonal (Algorithm 1, the authors' approach 8): n1 - 1 hoisted baby steps,
  then each baby step rotated by the giant steps it needs (double hoisting: one decomposition per baby
  step), rotQ[j n1 + b] = Rot_{j n1}(rotQ[b]); the table of l rotated queries is held, each group's
  products go into one running accumulator; keys only for 1..n1-1 and n1, 2 n1, ...

hepkg's variants, measured beside them as findings of their own:

- ``hydia-lean``: HyDia's rotations with one running accumulator per group (l - 1 + 5 sum keys).
- ``bsgs-streamed``: BSGS-Diagonal with its table streamed (:func:`streamed_scores`): the giant
  rotations of one baby step are multiplied into every group's accumulator and let go, so n1 + n2
  rotated queries and one accumulator per group are held instead of l rotated queries. The rotations
  (with the same double hoisting), products and additions are the same; only their order differs.

And ``bsgs-textbook``, single-hoisted grouped BSGS (Eq. 3-4, Table 5's comparison): the n1 baby steps
only; per group and giant step j, P_j = sum_b rotQ[b] * diag'_{j n1 + b} over diagonals pre-rotated by
the enroller (:func:`~hepkg.facesearch.packing.group_diagonals` with ``prerotate_n1``), then relinearized
and rotated by j n1: n1 stored rotated queries, (n1 - 1) + G (n2 - 1) rotations.
"""
from __future__ import annotations

from contextlib import nullcontext
from functools import partial, reduce

from .packing import bsgs_shape

__all__ = ["METHODS", "AUTHORS", "VARIANT_OF", "rotation_steps", "extra_key_steps", "query_table", "group_scores",
           "expected_counts", "stored_queries", "streams", "held_ciphertexts", "streamed_scores"]

METHODS = ("hydia", "hydia-lean", "bsgs-diagonal", "bsgs-streamed", "bsgs-textbook")
#: The authors' methods and the name of their approach in FastHE-Search V1.0.0 (``main <data> <approach>``).
AUTHORS = {"hydia": "HyDia-CPU-DG (approach 5)", "bsgs-diagonal": "BSGS-CPU-DG (approach 8)"}
#: hepkg's variants and the authors' method each one leans out.
VARIANT_OF = {"hydia-lean": "hydia", "bsgs-streamed": "bsgs-diagonal"}
_DIAGONAL = ("hydia", "hydia-lean")


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"unknown similarity method {method!r}; choose one of {METHODS}")


def _giants(l: int, n1: int) -> list[int]:
    return [j * n1 for j in range(1, bsgs_shape(l, n1)[1])]


def rotation_steps(method: str, l: int, n1: int | None = None) -> list[int]:
    """The left-rotation steps the method needs keys for (HyDia: 1..l-1; BSGS: baby and giant steps)."""
    _check_method(method)
    if method in _DIAGONAL:
        return list(range(1, l))
    n1, _ = bsgs_shape(l, n1)
    return sorted(set(range(1, n1)) | set(_giants(l, n1)))


def extra_key_steps(method: str, l: int, slots: int) -> list[int]:
    """Keys the authors' client generates beyond the similarity's and the sum's: for ``hydia`` the positive
    powers of two from l to slots/2 and the negative powers of two -1..-slots/2 (their standard key set);
    none for the other methods."""
    _check_method(method)
    if method != "hydia":
        return []
    pos = [1 << i for i in range(slots.bit_length()) if l <= 1 << i < slots]
    neg = [-(1 << i) for i in range(slots.bit_length()) if 1 << i < slots]
    return pos + neg


def stored_queries(method: str, l: int, n1: int | None = None) -> int:
    """Rotated query ciphertexts held at once (Table 5's memory column; the streamed variant: its baby steps
    and one baby step's giant rotations)."""
    _check_method(method)
    n1, n2 = bsgs_shape(l, n1)
    return n1 if method == "bsgs-textbook" else n1 + n2 if method == "bsgs-streamed" else l


def query_table(ctx, q, method: str, l: int, n1: int | None = None) -> list:
    """The rotated queries the method keeps for all groups: l of them (n1 for the textbook BSGS)."""
    _check_method(method)
    if method == "bsgs-streamed":
        raise ValueError("bsgs-streamed holds no table: use streamed_scores")
    if method in _DIAGONAL:
        rot = ctx.rotate_many(q, range(1, l))
        return [q] + [rot[i] for i in range(1, l)]
    n1, _ = bsgs_shape(l, n1)
    baby = ctx.rotate_many(q, range(1, n1))
    table = [q] + [baby[b] for b in range(1, n1)]
    if method == "bsgs-textbook":
        return table
    table += [None] * (l - n1)
    for b in range(n1):
        steps = [g for g in _giants(l, n1) if g + b < l]
        if steps:
            for g, ct in ctx.rotate_many(table[b], steps).items():
                table[g + b] = ct
    return table


def _lane(ctx, pairs, held: bool):
    """One lane's sum of a * load() over its pairs [(a, load)], products left unrelinearized (size 3): one running
    sum, or (``held``, as the authors' HyDia) every product kept, then added."""
    if held:
        return reduce(ctx.add, [ctx.mul(a, load(), relin=False) for a, load in pairs])
    acc = None
    for a, load in pairs:
        prod = ctx.mul(a, load(), relin=False)
        acc = prod if acc is None else ctx.add(acc, prod)
    return acc


def _tree_sum(ctx, parts: list):
    """The sum of the ciphertexts ``parts``, added pairwise level by level (Algorithm 1's reduction of its threads'
    accumulators)."""
    while len(parts) > 1:
        parts = [ctx.add(*parts[i:i + 2]) if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
    return parts[0]


def _dot(ctx, pairs, lanes: int = 1, mapper=map, held: bool = False, acc=None):
    """``acc`` + sum of a * load() over the pairs [(a, load)], size 3: the pairs cut into ``lanes`` contiguous runs
    of sizes differing by at most one (an OpenMP static schedule), each run a lane with its own accumulator that
    loads its own diagonals, the lanes mapped by ``mapper`` (a thread pool's map runs them at once), then their
    sums added as a tree (Algorithm 1, lines 21-30). The additions are exact, so the result does not depend on
    ``lanes``."""
    pairs = list(pairs)
    n, lanes = len(pairs), max(1, min(lanes, len(pairs)))
    runs = [pairs[i * n // lanes:(i + 1) * n // lanes] for i in range(lanes)]
    parts = list(mapper(lambda run: _lane(ctx, run, held), runs))
    return _tree_sum(ctx, parts + ([] if acc is None else [acc]))


def _accumulate(ctx, pairs, lanes: int = 1, mapper=map, held: bool = False):
    """sum of a * load() over the pairs, relinearized and rescaled once."""
    return ctx.rescale(ctx.relinearize(_dot(ctx, pairs, lanes, mapper, held)))


def group_scores(ctx, table: list, diagonals, method: str, l: int, n1: int | None = None, *, lanes: int = 1,
                 mapper=map):
    """The similarity ciphertext of one matrix group from its l diagonal ciphertexts.

    ``diagonals``: the group's diagonals in order (pre-rotated for ``bsgs-textbook``), a sequence whose items
    may be read when indexed (:meth:`~hepkg.facesearch.protocol.EncryptedDatabase.group`: from disk), so a group
    never sits in memory whole; ``lanes`` lanes mapped by ``mapper`` read and multiply them (:func:`_dot`).
    """
    _check_method(method)
    if method == "bsgs-streamed":
        raise ValueError("bsgs-streamed holds no table: use streamed_scores")
    if len(diagonals) != l:
        raise ValueError(f"a matrix group has l={l} diagonal ciphertexts, got {len(diagonals)}")
    pairs = [(t, partial(diagonals.__getitem__, i)) for i, t in enumerate(table)]
    if method != "bsgs-textbook":
        if len(table) != l:
            raise ValueError(f"{method} needs the table of l={l} rotated queries, got {len(table)}")
        return _accumulate(ctx, pairs, lanes, mapper, held=method == "hydia")
    n1, n2 = bsgs_shape(l, n1)
    if len(table) != n1:
        raise ValueError(f"bsgs-textbook needs the n1={n1} baby steps, got {len(table)}")
    out = None
    for j in range(n2):
        part = _accumulate(ctx, [(t, partial(diagonals.__getitem__, j * n1 + b))
                                 for b, t in enumerate(table[:min(n1, l - j * n1)])], lanes, mapper)
        part = ctx.rotate(part, j * n1) if j else part
        out = part if out is None else ctx.add(out, part)
    return out


def streams(method: str) -> bool:
    """Whether the method streams its table (:func:`streamed_scores`) instead of holding it."""
    _check_method(method)
    return method == "bsgs-streamed"


def held_ciphertexts(method: str, l: int, groups: int, n1: int | None = None, in_flight: int = 1) -> float:
    """Ciphertexts the similarity holds at once beyond the groups' accumulators: the rotated-query table (and,
    for the authors' HyDia, the l size-3 products of each of the ``in_flight`` groups processed at once: 1.5 l
    ciphertexts each), or the streamed schedule's baby steps, one baby step's giant rotations and the groups'
    size-3 accumulators."""
    if streams(method):
        n1, n2 = bsgs_shape(l, n1)
        return n1 + n2 + 1.5 * groups
    return stored_queries(method, l, n1) + (1.5 * l * min(in_flight, groups) if method == "hydia" else 0)


def streamed_scores(ctx, q, diagonal, groups: int, l: int, n1: int | None = None, *, clock=None, mapper=map,
                    lanes: int = 1, lane_mapper=map):
    """BSGS-Diagonal's similarity ciphertexts of every group, the table streamed (see :func:`streams`).

    ``diagonal(k, i)``: diagonal ciphertext i of group k (read when needed); ``clock(phase)``: a context
    manager timing the 'rotations' and 'similarity' phases; ``mapper``: how the groups of one baby step
    are mapped (a thread pool's ``map`` runs them at once); ``lanes``, ``lane_mapper``: the lanes of each
    group's products (:func:`_dot`).
    """
    clock = clock or (lambda phase: nullcontext())
    n1, _ = bsgs_shape(l, n1)
    with clock("rotations"):
        baby = ctx.rotate_many(q, range(1, n1)) if n1 > 1 else {}
    accs = [None] * groups
    for b in range(n1):
        src = baby.pop(b) if b else q
        with clock("rotations"):
            steps = [g for g in _giants(l, n1) if g + b < l]
            rots = {0: src} | (ctx.rotate_many(src, steps) if steps else {})

        def one(k, rots=rots, b=b):
            with clock("similarity"):  # diagonals read from disk as needed (time included)
                return _dot(ctx, [(ct, partial(diagonal, k, g + b)) for g, ct in rots.items()], lanes, lane_mapper,
                            acc=accs[k])
        accs = list(mapper(one, range(groups)))
        del rots, src

    def finish(acc):
        with clock("similarity"):
            return ctx.rescale(ctx.relinearize(acc))
    return list(mapper(finish, accs))


def expected_counts(method: str, l: int, groups: int, n1: int | None = None) -> dict:
    """Closed-form operation counts of the similarity over ``groups`` matrix groups (Table 4-5)."""
    _check_method(method)
    n1, n2 = bsgs_shape(l, n1)
    if method == "bsgs-textbook":
        return dict(rotate=(n1 - 1) + groups * (n2 - 1), mul_ct=groups * l, add=groups * (l - 1),
                    relinearize=groups * n2, rescale=groups * n2, hoisted_precompute=1 if n1 > 1 else 0)
    pre = 1 if method in _DIAGONAL else (1 if n1 > 1 else 0) + sum(1 for b in range(n1) if any(
        g + b < l for g in _giants(l, n1)))
    return dict(rotate=l - 1, mul_ct=groups * l, add=groups * (l - 1), relinearize=groups, rescale=groups,
                hoisted_precompute=pre)
