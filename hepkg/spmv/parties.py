"""The three parties of the CSSC protocol (Fig. 3, Algorithm 1), exchanging bytes.

Key generation. Algorithm 1 returns the encrypted result to Client A ("send ct_res to
Client A") and lets the secret-key holder decrypt. hepkg makes Client A the key holder: it
alone knows the chunk shapes, hence the rotation steps the aggregation needs, so it
generates the keys (power-of-two Galois keys by default, as the paper's Pyfhel setup),
sends the public context (public key and evaluation keys, never the secret key) to the
cloud and to Client B, and decrypts the result. Client B only encrypts; the cloud holds
evaluation keys only and cannot decrypt. As in the paper's semi-honest model, A must not
see B's ciphertexts (they go to the cloud only) and nobody colludes.

Messages and what they reveal (Sec. 3.3): A -> B: the column indices CI and column
pointers CP (the sparsity pattern by columns, as in the paper) with the chunk plan and the
encoding; A -> cloud: the encrypted chunks and the chunk plan (row and column counts per
chunk, which Algorithm 4 needs); B -> cloud: the encrypted reorganized vector chunks;
cloud -> A: one result ciphertext per row block. The row map RM never leaves A.

The default backend ``sim`` offers no privacy: its "ciphertexts" hold the slots in the
clear. It exists for op counts and fast tests; pass a real backend (``pyfhel``, ``openfhe``)
for encryption. Every :class:`SpmvResult` records the backend and parameter set that ran.
"""
from __future__ import annotations

import time

import numpy as np

import hepkg.he as he

from . import messages
from .aggregate import aggregate, multiply, unpermute
from .chunks import ChunkPlan, chunk_column_index, chunk_values, generate_chunks, reorg_vector
from .cssc import CSSC, as_csr
from .encoding import FixedPoint, check_vector, decode_result, encode_values, vector_limit
from .result import SpmvResult, provenance, zero_result

__all__ = ["ClientA", "ClientB", "Cloud", "run_cssc", "check_layout", "as_vector"]


def check_layout(layout: str, scheme: str) -> str:
    """The layout, checked against the scheme (see :mod:`hepkg.spmv.chunks`)."""
    if layout == "both" and scheme == "ckks":
        raise ValueError("layout 'both' needs BFV/BGV's two slot rows; CKKS has one row (use 'row')")
    return layout


def as_vector(vector, n: int) -> np.ndarray:
    """A 1-D array of length ``n`` (ValueError naming the dimension mismatch otherwise)."""
    v = np.asarray(vector)
    if v.ndim != 1:
        raise ValueError(f"the vector must be 1-D, got shape {v.shape}")
    if v.size != n:
        raise ValueError(f"dimension mismatch: the matrix has {n} columns but the vector has {v.size} entries")
    return v


def _loaded(context):
    """A context received as bytes, loaded (a context object passes through)."""
    return context if isinstance(context, he.Context) else he.load_context(context)


class ClientA:
    """Matrix owner and key holder: CSSC conversion, chunks, keys, encryption, decryption.

    ``backend``: 'sim' (the default) encrypts nothing, it offers no privacy (op counts and
    tests only); use a real backend such as 'pyfhel' or 'openfhe' to encrypt.
    """

    def __init__(self, matrix, *, backend: str = "sim", params="bfv-8192-spmv", layout: str = "row",
                 encoding: FixedPoint | None = None, policy: str = "pow2", block_rows: int | None = None,
                 insecure: bool = False):
        self.params = he.get_params(params)
        self.encoding = encoding or FixedPoint()
        self.cssc = CSSC.from_sparse(matrix)
        layout = check_layout(layout, self.params.scheme)
        self.plan = generate_chunks(self.cssc, self.params.n // 2, layout, block_rows)
        self._values = encode_values(self.cssc.VA, self.params, self.encoding, self.encoding.matrix_scale, "matrix")
        row_l1 = np.bincount(self.cssc.entry_rows, weights=np.abs(self._values.astype(np.float64)))
        self.vector_limit = vector_limit(float(row_l1.max()), self.params, self.encoding)
        self.ctx = he.context(backend, self.params, rotations=self.plan.rotation_steps(), policy=policy,
                              swap=self.plan.needs_swap, insecure=insecure)

    def public_context(self) -> bytes:
        """Public and evaluation keys (to the cloud)."""
        return self.ctx.to_bytes()

    def encryption_context(self) -> bytes:
        """The public key alone (to Client B, who only encrypts)."""
        return self.ctx.to_bytes(evaluation_keys=False)

    def column_index_message(self) -> bytes:
        """A -> B: CI, CP, the chunk plan, the encoding and the vector limit."""
        enc = self.encoding
        meta = dict(plan=self.plan.to_dict(), vector_limit=self.vector_limit,
                    encoding=dict(matrix_scale=enc.matrix_scale, vector_scale=enc.vector_scale,
                                  vector_bound=enc.vector_bound))
        ci_dtype = np.int32 if self.cssc.shape[1] < 2 ** 31 else np.int64
        return messages.pack("spmv/column-index", meta, {"CI": self.cssc.CI.astype(ci_dtype), "CP": self.cssc.CP})

    def matrix_message(self) -> bytes:
        """A -> cloud: the encrypted value chunks (Algorithm 1 lines 1-3) and the chunk plan."""
        blobs = [self.ctx.serialize(self.ctx.encrypt(v)) for v in chunk_values(self.cssc.CP, self._values, self.plan)]
        return messages.pack("spmv/matrix", dict(plan=self.plan.to_dict()), blobs=blobs)

    def decrypt_result(self, data: bytes) -> np.ndarray:
        """Algorithm 1 lines 14-19: decrypt each block's result and undo the row sorting."""
        _, _, blobs = messages.unpack(data, "spmv/result")
        if len(blobs) != len(self.plan.blocks):
            raise he.CorruptedData(f"expected {len(self.plan.blocks)} result ciphertexts, got {len(blobs)}")
        vals = [self.ctx.decrypt(self.ctx.deserialize(b), p1 - p0) for b, (p0, p1) in zip(blobs, self.plan.blocks)]
        return decode_result(unpermute(vals, self.plan, self.cssc.RM), self.params, self.encoding)


class ClientB:
    """Vector owner: reorganizes its vector by A's column indices (Algorithm 3) and encrypts it."""

    def __init__(self, vector, context, column_index: bytes):
        """``context``: Client A's :meth:`ClientA.encryption_context` (bytes, or already loaded)."""
        self.ctx = he.require_public(_loaded(context), "Client B")
        meta, arrays, _ = messages.unpack(column_index, "spmv/column-index")
        self.plan = ChunkPlan.from_dict(meta["plan"])
        enc = FixedPoint(**meta["encoding"])
        v = as_vector(vector, self.plan.shape[1])
        self._values = encode_values(v, self.ctx.params, enc, enc.vector_scale, "vector")
        check_vector(self._values, float(meta["vector_limit"]), self.ctx.params)
        self._index = chunk_column_index(arrays["CP"], arrays["CI"], self.plan)

    def vector_message(self) -> bytes:
        """B -> cloud: the encrypted reorganized vector, one ciphertext per chunk."""
        blobs = [self.ctx.serialize(self.ctx.encrypt(v)) for v in reorg_vector(self._values, self._index)]
        return messages.pack("spmv/vector", {}, blobs=blobs)


class Cloud:
    """Evaluation only: built from the public context bytes, it holds no secret key."""

    def __init__(self, context):
        """``context``: Client A's :meth:`ClientA.public_context` (bytes, or already loaded)."""
        self.ctx = he.require_public(_loaded(context), "the spmv cloud")

    def evaluate(self, matrix: bytes, vector: bytes) -> bytes:
        """Algorithm 1 lines 8-13: products, aggregation, one result ciphertext per row block."""
        meta, _, a_blobs = messages.unpack(matrix, "spmv/matrix")
        _, _, b_blobs = messages.unpack(vector, "spmv/vector")
        plan = ChunkPlan.from_dict(meta["plan"])
        if not len(a_blobs) == len(b_blobs) == plan.n_ct:
            raise ValueError(f"the plan has {plan.n_ct} chunks; got {len(a_blobs)} matrix and "
                             f"{len(b_blobs)} vector ciphertexts")
        products = multiply(self.ctx, [self.ctx.deserialize(b) for b in a_blobs],
                            [self.ctx.deserialize(b) for b in b_blobs])
        results = aggregate(self.ctx, products, plan)
        return messages.pack("spmv/result", {}, blobs=[self.ctx.serialize(r) for r in results])


def run_cssc(matrix, vector, *, backend: str = "sim", params="bfv-8192-spmv", layout: str = "row",
             encoding: FixedPoint | None = None, policy: str = "pow2", block_rows: int | None = None,
             insecure: bool = False) -> SpmvResult:
    """The whole protocol, party by party, with bytes per direction, op counts and phase times.

    ``backend='sim'`` (the default) offers no privacy: its "ciphertexts" are cleartext slots,
    for op counts and fast tests. Encrypt with a real backend ('pyfhel', 'openfhe'); the
    result records ``backend``, ``params`` and ``insecure``.
    """
    params = he.get_params(params)
    csr = as_csr(matrix, allow_zero=True)
    as_vector(vector, csr.shape[1])  # fail before key generation
    if csr.nnz == 0:
        return zero_result("cssc", csr.shape[0], params, backend, insecure)
    clock = time.perf_counter
    t0 = clock()
    a = ClientA(csr, backend=backend, params=params, layout=layout, encoding=encoding, policy=policy,
                block_rows=block_rows, insecure=insecure)
    cloud_keys, b_keys = a.public_context(), a.encryption_context()
    cloud, b_ctx = Cloud(cloud_keys), he.load_context(b_keys)
    t1 = clock()
    ci_msg, a_msg = a.column_index_message(), a.matrix_message()
    t2 = clock()
    b = ClientB(vector, b_ctx, ci_msg)
    b_msg = b.vector_message()
    t3 = clock()
    with cloud.ctx.counting() as cloud_ops:
        res_msg = cloud.evaluate(a_msg, b_msg)
    t4 = clock()
    y = a.decrypt_result(res_msg)
    t5 = clock()
    plan, sizes = a.plan, a.ctx.key_sizes()
    return SpmvResult(
        "cssc", y, **provenance(a.ctx),
        traffic=dict(a_to_cloud=len(a_msg), b_to_cloud=len(b_msg), a_to_b=len(ci_msg), cloud_to_a=len(res_msg),
                     keys_to_cloud=len(cloud_keys), keys_to_b=len(b_keys)),
        ops=dict(client_a=a.ctx.counts.as_dict(), client_b=b.ctx.counts.as_dict(), cloud=cloud_ops.as_dict()),
        timings=dict(keygen=t1 - t0, client_a=t2 - t1, client_b=t3 - t2, cloud=t4 - t3, decrypt=t5 - t4,
                     total=t5 - t0),
        info=dict(n_ct=plan.n_ct, blocks=len(plan.blocks), c_max=plan.c_max, layout=plan.layout,
                  chunks=[(c.rows, c.cols) for c in plan.chunks], vector_ciphertexts=plan.n_ct,
                  result_ciphertexts=len(plan.blocks), rotation_keys=sizes["rotation_keys"],
                  key_bytes=sizes["public_key"] + sizes["relin_key"] + sizes["galois_keys"],
                  ciphertext_bytes=sizes.get("ciphertext"), sizes_estimated=bool(sizes.get("estimated"))),
    )
