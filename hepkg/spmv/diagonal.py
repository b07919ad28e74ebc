"""Baseline: the diagonal method with matrix and vector both encrypted (CSSC paper Fig. 9, Sec. 4.7).

Client A encrypts every non-zero generalized diagonal of the matrix as its own
ciphertext; Client B encrypts the vector; the cloud multiplies each encrypted diagonal by
the vector rotated by the diagonal's offset and sums the products. A matrix larger than a
slot row (``period`` = N/2 slots) is cut into ``period x period`` square blocks (the last
ones zero-padded, Sec. 4.7); smaller matrices form one ``D x D`` block, D = max(rows, cols).

Generalized diagonals wrap modulo the block side D, as the paper's method (the diagonal
method of its reference [11], Halevi-Shoup: a D x D matrix has D diagonals): ``u_k[i] =
A[i, (i + k) mod D]``, with the vector block replicated (``x || x``) so that
``rotate(x || x, k)[i] = x[(i + k) mod D]``. That needs two copies in a slot row, 2D <= period
(D <= 2048 at N = 8192). A larger block is padded to a ``period x period`` square (Sec. 4.7)
whose diagonals wrap modulo the period, which the rotation does natively: a full block (D =
period) has D diagonals again, an h x w block with period/2 < max(h, w) < period has
min(h + w - 1, period): with two copies no longer in a slot row, the shifts modulo D cannot
all come from rotating one ciphertext, and splitting each diagonal in two would cost as many
ciphertexts.

Diagonals are built lazily from the non-zeros, so the matrix is never densified; ``dense=True``
runs the paper's variant, which encrypts every diagonal of every block, zero or not
(:func:`dense_pattern`; D per D x D block, the paper's count, where 2D <= period). Rotations
of a vector block are shared by all row blocks of its column strip. Client A holds the keys
(Client B gets the public key only) and the vector's bound is public, as in
:mod:`hepkg.spmv.parties` (B learns the longest row's length L through it, here only);
phases and traffic are accounted as there (:class:`~hepkg.spmv.SpmvResult`).
"""
from __future__ import annotations

import math
from itertools import product

import numpy as np
import scipy.sparse as sp

import hepkg.he as he
from hepkg.he.keys import pow2_terms

from .aggregate import decrypt_blocks, send_blocks
from .cssc import as_csr
from .encoding import FixedPoint, check_tracked, decode_result, encode_csr, encode_vector, slot_dtype
from .parties import as_vector
from .result import PhaseClock, SpmvResult, provenance, zero_result
from .transport import Channel

__all__ = ["run_diagonal", "diagonal_block_size", "diagonal_offsets", "diagonal_predicted_ops", "dense_pattern"]


def diagonal_block_size(shape, period: int) -> int:
    """Side of the square blocks: max(rows, cols) if it fits a slot row, else the period."""
    side = max(shape)
    return side if side <= period else period


def _wrap(size: int, period: int) -> int:
    """The modulus of the diagonal offsets: the block side where x || x fits a slot row, else the period."""
    return size if 2 * size <= period else period


def dense_pattern(shape, period: int) -> sp.csr_matrix:
    """One position on each diagonal of each block of a dense ``shape`` matrix (the paper's variant)."""
    size = diagonal_block_size(shape, period)
    wrap = _wrap(size, period)
    rows, cols = [], []
    for r0, c0 in product(range(0, shape[0], size), range(0, shape[1], size)):
        h, w = min(size, shape[0] - r0), min(size, shape[1] - c0)
        if wrap == period:  # offsets j - i in (-h, w): the first row or the first column of each
            d = np.arange(1 - h, w)
            i, j = np.maximum(0, -d), np.maximum(0, d)
        else:  # offsets 0..D-1 wrapping at D = max(h, w): row 0, or the row whose wrapped column is 0
            d = np.arange(size)
            i = np.where(d < w, 0, size - d)
            j = (i + d) % size
        rows.append(r0 + i)
        cols.append(c0 + j)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    return sp.csr_matrix((np.ones(rows.size, dtype=np.int64), (rows, cols)), shape=shape)


def _diagonals(csr: sp.csr_matrix, period: int, dense: bool):
    """Each entry's (row block, column strip, diagonal offset, row in its block, value); ``dense`` adds a
    zero at each position of :func:`dense_pattern`, so that every diagonal of every block is there."""
    coo = csr.tocoo()
    row, col, data = coo.row, coo.col, coo.data
    if dense:
        pat = dense_pattern(csr.shape, period).tocoo()
        row, col, data = np.r_[row, pat.row], np.r_[col, pat.col], np.r_[data, np.zeros(pat.nnz, dtype=data.dtype)]
    size = diagonal_block_size(csr.shape, period)
    return row // size, col // size, (col % size - row % size) % _wrap(size, period), row % size, data


def diagonal_offsets(matrix, period: int, dense: bool = False) -> dict[tuple[int, int], np.ndarray]:
    """Diagonal offsets per (row block, column block) that the method encrypts (cheap: no ciphertexts)."""
    csr = as_csr(matrix, allow_zero=True)
    bi, bj, k, _, _ = _diagonals(csr, period, dense)
    n_cb = math.ceil(csr.shape[1] / diagonal_block_size(csr.shape, period))
    keys = np.unique((bi * n_cb + bj) * period + k)
    if keys.size == 0:
        return {}
    blocks, offsets = np.divmod(keys, period)
    starts = np.flatnonzero(np.r_[True, np.diff(blocks) != 0])
    return {divmod(int(blocks[s]), n_cb): offsets[s:e] for s, e in zip(starts, np.r_[starts[1:], keys.size])}


def diagonal_predicted_ops(matrix, period: int, policy: str = "pow2", dense: bool = False) -> dict[str, int]:
    """The cloud's exact op counts in :func:`run_diagonal`, from the sparsity pattern alone."""
    offsets = diagonal_offsets(matrix, period, dense)
    n_diag = sum(ks.size for ks in offsets.values())
    strips: dict[int, set] = {}
    for (_, bj), ks in offsets.items():
        strips.setdefault(bj, set()).update(int(k) for k in ks if k)
    steps = [k for ks in strips.values() for k in ks]
    ks = sum(len(pow2_terms(k, period)) for k in steps) if policy == "pow2" else len(steps)
    row_blocks = len({bi for bi, _ in offsets})
    return {"mul_ct": n_diag, "relinearize": n_diag, "mul_pt": 0, "rotate": len(steps), "swap": 0,
            "add": n_diag - row_blocks, "keyswitch": ks + n_diag, "depth": 1}


def _vector_block(vq: np.ndarray, j: int, size: int, wrap: int) -> np.ndarray:
    """Column strip j of the vector, zero-padded to the block side, twice when the offsets wrap at it."""
    block = np.zeros(size, dtype=vq.dtype)
    part = vq[j * size:(j + 1) * size]
    block[:part.size] = part
    return np.concatenate([block, block]) if wrap == size else block


def _runs(csr: sp.csr_matrix, period: int, dense: bool) -> list[tuple]:
    """Client A's diagonals, one per ciphertext, by column strip, then offset, then row block:
    (strip, offset, row block, rows in the block, values)."""
    bi, bj, k, rows, vals = _diagonals(csr, period, dense)
    order = np.lexsort((bi, k, bj))
    bi, bj, k, rows, vals = bi[order], bj[order], k[order], rows[order], vals[order]
    starts = np.flatnonzero(np.r_[True, (np.diff(bj) != 0) | (np.diff(k) != 0) | (np.diff(bi) != 0)])
    return [(int(bj[s]), int(k[s]), int(bi[s]), rows[s:e], vals[s:e])
            for s, e in zip(starts, np.r_[starts[1:], bj.size])]


def _tracked_bounds(runs: list[tuple], n_rb: int, vector_bound: float) -> np.ndarray:
    """CKKS: per row block, the bound the cloud's result carries (each diagonal's peak times the vector's, added
    over the block's diagonals), for a vector at ``vector_bound`` (see :func:`~hepkg.spmv.encoding.check_tracked`)."""
    out = np.zeros(n_rb)
    for _, _, block, _, vals in runs:
        out[block] += float(np.max(np.abs(vals))) * vector_bound
    return out


def run_diagonal(matrix, vector, *, backend: str = "sim", params="bfv-8192-spmv", encoding: FixedPoint | None = None,
                 policy: str = "pow2", insecure: bool = False, dense: bool = False) -> SpmvResult:
    """A x v by the diagonal method; bytes per direction, op counts per party, phase times.

    ``dense=True``: the paper's variant, every diagonal encrypted (zero ones too).
    ``backend='sim'`` (the default) offers no privacy (cleartext slots, for op counts and
    tests); the result records ``backend``, ``params`` and ``insecure``.
    """
    params, enc = he.get_params(params), encoding or FixedPoint()
    csr = as_csr(matrix, allow_zero=True)
    v = as_vector(vector, csr.shape[1])
    method = "diagonal-dense" if dense else "diagonal"
    if csr.nnz == 0:
        return zero_result(method, csr.shape[0], params, backend, insecure)
    period = params.n // 2
    size = diagonal_block_size(csr.shape, period)
    wrap, n_rb, n_cb = _wrap(size, period), math.ceil(csr.shape[0] / size), math.ceil(csr.shape[1] / size)
    dtype = slot_dtype(params)
    clock, channel = PhaseClock(), Channel()
    with clock("client_a"):
        aq, bound = encode_csr(csr, params, enc)
        runs = _runs(aq, period, dense)
        check_tracked(_tracked_bounds(runs, n_rb, bound), params, "the diagonal method", levels=1)  # a product
    with clock("keygen"):
        ctx = he.context(backend, params, rotations=sorted({r[1] for r in runs}), policy=policy, insecure=insecure)
    with clock("key_transfer"):
        public, b_keys = ctx.to_bytes(), ctx.to_bytes(evaluation_keys=False)
        cloud = he.require_public(he.load_context(public, fingerprint=he.fingerprint(public), backend=backend),
                                  "the diagonal method's cloud")
        client_b = he.require_public(he.load_context(b_keys, fingerprint=he.fingerprint(b_keys), backend=backend),
                                     "Client B")
    with clock("client_b"):
        vq = encode_vector(v, params, enc, bound)
        v_msgs = [channel.send("b_to_cloud", client_b.encrypt(_vector_block(vq, j, size, wrap))) for j in range(n_cb)]
    acc, current = [None] * n_rb, None
    with clock("cloud"), cloud.counting() as cloud_ops:
        v_cts = [cloud.deserialize(m, guard=True) for m in v_msgs]
        for strip, offset, block, rows, vals in runs:
            if (strip, offset) != current:
                current, rotated = (strip, offset), cloud.rotate(v_cts[strip], offset)
            with clock("client_a"):  # A encrypts each diagonal as the cloud asks for it
                u = np.zeros(period, dtype=dtype)
                np.add.at(u, rows, vals)  # a dense run's zero at a non-zero's position adds nothing
                msg = channel.send("a_to_cloud", ctx.encrypt(u))
            term = cloud.mul(cloud.deserialize(msg, guard=True), rotated)
            acc[block] = term if acc[block] is None else cloud.add(acc[block], term)
        results = send_blocks(channel, "cloud_to_a", acc)
    with clock("decrypt"):
        y = decode_result(decrypt_blocks(ctx, results, csr.shape[0], size, dtype), params, enc)
    return SpmvResult(
        method, y, **provenance(ctx),
        traffic=dict(channel.bytes, keys_to_cloud=len(public), keys_to_b=len(b_keys)),
        ops=dict(client_a=ctx.counts.as_dict(), client_b=client_b.counts.as_dict(), cloud=cloud_ops.as_dict()),
        timings=clock.timings(),
        info=dict(n_ct=len(runs), block_size=size, blocks=(n_rb, n_cb), vector_ciphertexts=n_cb,
                  result_ciphertexts=len(results), rotation_keys=len(ctx.keys)),
    )
