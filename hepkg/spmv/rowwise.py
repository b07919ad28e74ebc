"""Baseline: plaintext matrix x encrypted vector, one row at a time (Rhombus-style, CSSC paper Sec. 5.5).

As the CSSC paper describes its Rhombus comparison: the server keeps each matrix row as a
plaintext, multiplies it with the encrypted vector (one ct x pt product per row and column
block the row touches) and adds the slots with a binary-tree rotate-and-sum. The sum runs
over the whole slot row (``log2(period)`` rotations) so every slot holds the row's total; a
one-hot plaintext mask then places it in slot ``i mod period`` of its block's result
ciphertext (one more ct x pt product per row). This is a two-party setting: the vector
owner (Client B) holds the keys and receives the result; the matrix never leaves the
server, which gets the public and evaluation keys (``keys_to_b`` is 0) and whose encoding
of its matrix is timed as ``cloud`` work. Empty rows cost nothing. This is the paper's description, not Rhombus's own
packing (its PackLWEs / split-point optimizations are out of scope). On CKKS the sum over the whole slot row makes
the bound the server's ciphertexts carry ``period`` times a row's: a matrix and public vector bound beyond what
that allows are refused before anything is sent (:func:`~hepkg.spmv.encoding.check_tracked`); agree a smaller
``FixedPoint(vector_bound=...)``.
"""
from __future__ import annotations

import math

import numpy as np

import hepkg.he as he
from hepkg.he.keys import pow2_terms
from hepkg.linalg import rotate_and_sum, rotation_steps_for_sum

from .aggregate import decrypt_blocks, send_blocks
from .cssc import as_csr
from .encoding import FixedPoint, check_tracked, decode_result, encode_csr, encode_vector, slot_dtype
from .parties import as_vector
from .result import PhaseClock, SpmvResult, provenance, zero_result
from .transport import Channel

__all__ = ["run_rowwise", "rowwise_predicted_ops"]


def rowwise_predicted_ops(matrix, period: int, policy: str = "pow2") -> dict[str, int]:
    """The server's exact op counts in :func:`run_rowwise`, from the sparsity pattern alone."""
    csr = as_csr(matrix)
    row = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
    pairs = np.unique(np.stack([row, csr.indices // period], axis=1), axis=0)
    rows = np.unique(pairs[:, 0])
    steps = rotation_steps_for_sum(period)
    ks_per_row = sum(len(pow2_terms(s, period)) for s in steps) if policy == "pow2" else len(steps)
    products = len(pairs) + rows.size
    blocks = np.unique(rows // period).size
    per_row_adds = len(steps)
    return {"mul_ct": 0, "relinearize": 0, "mul_pt": products, "rotate": rows.size * len(steps), "swap": 0,
            "add": rows.size * per_row_adds + (len(pairs) - rows.size) + (rows.size - blocks),
            "keyswitch": rows.size * ks_per_row, "depth": 2}


def _rows_times_vector(server, aq, v_cts: list, n_rb: int, dtype) -> list:
    """The server's work, one result ciphertext per row block: each non-empty row's ct x pt products with the
    vector blocks it touches, summed over the slot row and placed in its slot by a one-hot mask."""
    period, acc = server.period, [None] * n_rb
    for i in np.flatnonzero(np.diff(aq.indptr)):
        cols, vals = aq.indices[aq.indptr[i]:aq.indptr[i + 1]], aq.data[aq.indptr[i]:aq.indptr[i + 1]]
        prod = None
        for j in np.unique(cols // period):
            sel = cols // period == j
            u = np.zeros(period, dtype=dtype)
            u[cols[sel] % period] = vals[sel]
            term = server.mul_plain(v_cts[j], u)
            prod = term if prod is None else server.add(prod, term)
        mask = np.zeros(period, dtype=dtype)
        mask[i % period] = 1
        placed = server.mul_plain(rotate_and_sum(server, prod, period), mask)
        b = i // period
        acc[b] = placed if acc[b] is None else server.add(acc[b], placed)
    return acc


def _tracked_bounds(aq, n_rb: int, period: int, vector_bound: float) -> np.ndarray:
    """CKKS: per row block, the bound the server's result carries: per row, the peak of each column block's
    plaintext times the vector's, summed over the blocks, times the ``period`` slots the rotate-and-sum adds; added
    over the block's rows (see :func:`~hepkg.spmv.encoding.check_tracked`)."""
    out = np.zeros(n_rb)
    for i in np.flatnonzero(np.diff(aq.indptr)):
        cols, vals = aq.indices[aq.indptr[i]:aq.indptr[i + 1]], np.abs(aq.data[aq.indptr[i]:aq.indptr[i + 1]])
        peaks = np.zeros(-(-aq.shape[1] // period))
        np.maximum.at(peaks, cols // period, vals)
        out[i // period] += float(peaks.sum()) * period * vector_bound
    return out


def run_rowwise(matrix, vector, *, backend: str = "sim", params="bfv-8192-spmv", encoding: FixedPoint | None = None,
                policy: str = "pow2", insecure: bool = False) -> SpmvResult:
    """A x v with A in plaintext on the server and v encrypted by its owner.

    ``backend='sim'`` (the default) offers no privacy (cleartext slots, for op counts and
    tests); the result records ``backend``, ``params`` and ``insecure``.
    """
    params, enc = he.get_params(params), encoding or FixedPoint()
    csr = as_csr(matrix, allow_zero=True)
    v = as_vector(vector, csr.shape[1])
    if csr.nnz == 0:
        return zero_result("rowwise", csr.shape[0], params, backend, insecure)
    period = params.n // 2
    n_rb, n_cb = math.ceil(csr.shape[0] / period), math.ceil(csr.shape[1] / period)
    dtype = slot_dtype(params)
    clock, channel = PhaseClock(), Channel()
    with clock("cloud"):  # the server holds the matrix in plaintext
        aq, bound = encode_csr(csr, params, enc)
        check_tracked(_tracked_bounds(aq, n_rb, period, bound), params, "the row-wise method", levels=2)  # two products
    with clock("keygen"):
        ctx = he.context(backend, params, rotations=rotation_steps_for_sum(period), policy=policy, insecure=insecure)
    with clock("key_transfer"):
        public = ctx.to_bytes()
        server = he.require_public(he.load_context(public, fingerprint=he.fingerprint(public), backend=backend),
                                   "the row-wise server")
    with clock("client_b"):
        vq = encode_vector(v, params, enc, bound)
        v_msgs = [channel.send("b_to_cloud", ctx.encrypt(vq[j * period:(j + 1) * period])) for j in range(n_cb)]
    with clock("cloud"), server.counting() as cloud_ops:
        acc = _rows_times_vector(server, aq, [server.deserialize(m, guard=True) for m in v_msgs], n_rb, dtype)
        results = send_blocks(channel, "cloud_to_b", acc)
    with clock("decrypt"):
        y = decode_result(decrypt_blocks(ctx, results, csr.shape[0], period, dtype), params, enc)
    return SpmvResult(
        "rowwise", y, **provenance(ctx),
        traffic=dict(channel.bytes, keys_to_cloud=len(public), keys_to_b=0),
        ops=dict(client_b=ctx.counts.as_dict(), cloud=cloud_ops.as_dict()),
        timings=clock.timings(),
        info=dict(n_ct=0, rows_processed=int(np.count_nonzero(np.diff(aq.indptr))), vector_ciphertexts=n_cb,
                  result_ciphertexts=len(results), rotation_keys=len(ctx.keys)),
    )
