"""Baseline: the diagonal method with matrix and vector both encrypted (CSSC paper Fig. 9, Sec. 4.7).

Client A encrypts every non-zero generalized diagonal of the matrix as its own
ciphertext; Client B encrypts the vector; the cloud multiplies each encrypted diagonal by
the vector rotated by the diagonal's offset and sums the products. A matrix larger than a
slot row (``period`` = N/2 slots) is cut into ``period x period`` square blocks (the last
ones zero-padded, Sec. 4.7); smaller matrices form one ``D x D`` block, D = max(rows, cols).

Diagonals are cyclic in the rotation period: ``u_k[i] = A[i, j]`` for ``k = (j - i) mod
period``, so that ``sum_k u_k * rotate(x, k)`` is ``A x`` whether or not D fills the period
(the slots of x beyond D are zero). They are built lazily from the non-zeros, one at a time,
so the matrix is never densified. Rotations of a vector block are shared by all row blocks
of its column strip. Client A holds the keys, as in :mod:`hepkg.spmv.parties`.
"""
from __future__ import annotations

import math
import time

import numpy as np

import hepkg.he as he
from hepkg.he.keys import pow2_terms

from .aggregate import return_blocks
from .cssc import as_csr
from .encoding import FixedPoint, decode_result, encode_operands
from .parties import as_vector
from .result import SpmvResult, provenance
from .transport import Channel

__all__ = ["run_diagonal", "diagonal_block_size", "diagonal_offsets", "diagonal_predicted_ops"]


def diagonal_block_size(shape, period: int) -> int:
    """Side of the square blocks: max(rows, cols) if it fits a slot row, else the period."""
    side = max(shape)
    return side if side <= period else period


def diagonal_offsets(matrix, period: int) -> dict[tuple[int, int], np.ndarray]:
    """Non-zero cyclic diagonal offsets per (row block, column block) (cheap: no ciphertexts)."""
    coo = as_csr(matrix).tocoo()
    size = diagonal_block_size(coo.shape, period)
    n_cb = math.ceil(coo.shape[1] / size)
    keys = np.unique(((coo.row // size) * n_cb + coo.col // size) * period + (coo.col % size - coo.row % size) % period)
    blocks, offsets = np.divmod(keys, period)
    starts = np.flatnonzero(np.r_[True, np.diff(blocks) != 0])
    return {divmod(int(blocks[s]), n_cb): offsets[s:e] for s, e in zip(starts, np.r_[starts[1:], keys.size])}


def diagonal_predicted_ops(matrix, period: int, policy: str = "pow2") -> dict[str, int]:
    """The cloud's exact op counts in :func:`run_diagonal`, from the sparsity pattern alone."""
    offsets = diagonal_offsets(matrix, period)
    n_diag = sum(ks.size for ks in offsets.values())
    strips: dict[int, set] = {}
    for (_, bj), ks in offsets.items():
        strips.setdefault(bj, set()).update(int(k) for k in ks if k)
    steps = [k for ks in strips.values() for k in ks]
    ks = sum(len(pow2_terms(k, period)) for k in steps) if policy == "pow2" else len(steps)
    row_blocks = len({bi for bi, _ in offsets})
    return {"mul_ct": n_diag, "relinearize": n_diag, "mul_pt": 0, "rotate": len(steps), "swap": 0,
            "add": n_diag - row_blocks, "keyswitch": ks + n_diag, "depth": 1}


def run_diagonal(matrix, vector, *, backend: str = "sim", params="bfv-8192-spmv", encoding: FixedPoint | None = None,
                 policy: str = "pow2", insecure: bool = False) -> SpmvResult:
    """A x v by the diagonal method; bytes per direction, op counts per party, phase times.

    ``backend='sim'`` (the default) offers no privacy (cleartext slots, for op counts and
    tests); the result records ``backend``, ``params`` and ``insecure``.
    """
    params, enc = he.get_params(params), encoding or FixedPoint()
    csr = as_csr(matrix)
    v = as_vector(vector, csr.shape[1])
    aq, vq = encode_operands(csr, v, params, enc)
    period = params.n // 2
    size = diagonal_block_size(csr.shape, period)
    coo = aq.tocoo()
    bi, bj = coo.row // size, coo.col // size
    k = (coo.col % size - coo.row % size) % period
    order = np.lexsort((bi, k, bj))  # by column strip, then offset, then row block
    bi, bj, k, rows, vals = bi[order], bj[order], k[order], coo.row[order] % size, coo.data[order]
    starts = np.flatnonzero(np.r_[True, (np.diff(bj) != 0) | (np.diff(k) != 0) | (np.diff(bi) != 0)])
    ends = np.r_[starts[1:], bj.size]
    n_rb, n_cb = math.ceil(csr.shape[0] / size), math.ceil(csr.shape[1] / size)
    dtype = np.int64 if params.scheme != "ckks" else np.float64

    clock, spent_a = time.perf_counter, 0.0
    t0 = clock()
    ctx = he.context(backend, params, rotations=np.unique(k).tolist(), policy=policy, insecure=insecure)
    public = ctx.to_bytes()
    client_b, channel = he.load_context(public), Channel()
    cloud = he.require_public(he.load_context(public), "the diagonal method's cloud")
    t1 = clock()
    v_cts = channel.send("b_to_cloud", [client_b.encrypt(vq[j * size:(j + 1) * size]) for j in range(n_cb)], cloud)
    t2 = clock()
    acc = [None] * n_rb
    rotated, current = None, None
    with cloud.counting() as cloud_ops:
        for s, e in zip(starts, ends):
            strip, offset, block = int(bj[s]), int(k[s]), int(bi[s])
            if (strip, offset) != current:
                current, rotated = (strip, offset), cloud.rotate(v_cts[strip], offset)
            ta = clock()
            u = np.zeros(period, dtype=dtype)
            u[rows[s:e]] = vals[s:e]
            d = channel.send("a_to_cloud", [ctx.encrypt(u)], cloud)[0]
            spent_a += clock() - ta
            term = cloud.mul(d, rotated)
            acc[block] = term if acc[block] is None else cloud.add(acc[block], term)
    t3 = clock()
    y = return_blocks(channel, "cloud_to_a", acc, ctx, csr.shape[0], size, dtype)
    t4 = clock()
    return SpmvResult(
        "diagonal", decode_result(y, params, enc), **provenance(ctx),
        traffic=dict(channel.bytes, keys=len(public)),
        ops=dict(client_a=ctx.counts.as_dict(), client_b=client_b.counts.as_dict(), cloud=cloud_ops.as_dict()),
        timings=dict(keygen=t1 - t0, client_b=t2 - t1, client_a=spent_a, cloud=t3 - t2 - spent_a, decrypt=t4 - t3,
                     total=t4 - t0),
        info=dict(n_ct=int(starts.size), block_size=size, blocks=(n_rb, n_cb), vector_ciphertexts=n_cb,
                  result_ciphertexts=sum(a is not None for a in acc), rotation_keys=len(ctx.keys)),
    )
