"""The three parties of the CSSC protocol (Fig. 3, Algorithm 1), exchanging bytes.

Key generation. Algorithm 1 returns the encrypted result to Client A ("send ct_res to
Client A") and lets the secret-key holder decrypt. hepkg makes Client A the key holder: it
alone knows the chunk shapes, hence the rotation steps the aggregation needs, so it
generates the keys (one Galois key per step by default; ``policy='pow2'``: power-of-two keys,
as the paper's Pyfhel setup) and decrypts the result. The cloud receives the public context
with the evaluation keys (relinearization and rotation keys); Client B, who only encrypts,
receives the public key alone (``to_bytes(evaluation_keys=False)``); on pyfhel the keys travel
zstd-compressed, the smallest form Pyfhel writes. Nobody but A holds the secret key. As in
the paper's semi-honest model, A must not see B's ciphertexts (they go to the cloud only) and
nobody colludes.

Messages and what each party learns (Sec. 3.3):

- A -> B: the column indices CI and column pointers CP (the sparsity pattern by columns, as
  in the paper), hence the shape and the chunk plan, and the encoding (scales; the vector
  bound where one was agreed). B learns the pattern, nothing about the values: the public
  vector bound it checks its vector against comes from the parameters and the pattern
  (:func:`~hepkg.spmv.encoding.vector_bound`), so identical patterns give identical
  messages whatever the values. (Sending B the largest vector the matrix allows would
  tell it the matrix's largest absolute row sum.)
- A -> cloud: the encrypted chunks and the chunk plan (row and column counts per chunk and
  row block, which Algorithm 4 needs): the cloud learns those shapes and nothing else.
- B -> cloud: the encrypted reorganized vector chunks.
- cloud -> A: one result ciphertext per row block; A learns the product only. The row map
  RM never leaves A.

Defaults (:func:`run_cssc`, :class:`ClientA`): Pyfhel at the 128-bit ``bfv-8192-spmv``, one Galois
key per rotation step the cloud uses (``policy='exact'``: fewer keys than the power-of-two set on
every matrix measured, and one key switch per rotation), and the clients drop the data primes the
noise budget leaves room for (``drop_primes='auto'``, :func:`hepkg.he.levels.affordable_drop`;
decryption still refuses an exhausted budget). ``backend='sim'`` offers no privacy (its
"ciphertexts" hold the slots in the clear, for op counts and fast tests) and warns
(:class:`hepkg.he.errors.NoPrivacyWarning`). Every :class:`SpmvResult` records the backend and
parameter set that ran.
"""
from __future__ import annotations

import functools
import time
from functools import cached_property

import numpy as np

import hepkg.he as he
from hepkg.he.errors import warn_if_sim
from hepkg.he.levels import affordable_drop, check_drop, encrypt_low

from . import messages
from .aggregate import aggregate, multiply, tracked_bounds, unpermute
from .chunks import ChunkPlan, chunk_column_index, chunk_values, generate_chunks, reorg_vector
from .cssc import CSSC, as_csr
from .encoding import FixedPoint, check_tracked, decode_result, encode_matrix, encode_vector, vector_bound
from .result import PhaseClock, SpmvResult, provenance, zero_result

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


def cssc_drop(params, backend: str, plan: ChunkPlan) -> int:
    """The primes the clients can drop for CSSC: the cloud's path is one ciphertext product, one mask
    (plaintext) product and a sum over the chunk columns (:func:`hepkg.he.levels.spent_bits`)."""
    return affordable_drop(params, backend, ct_products=1, pt_products=1, summands=plan.c_max)


def _loaded(context, fingerprint: str | None, backend: str | None):
    """A context received as bytes, loaded against the fingerprint Client A published (``backend``: the one
    expected; 'sim' must be named); a context object passes through."""
    if isinstance(context, he.Context):
        return context
    return he.load_context(context, fingerprint=fingerprint, backend=backend)


class ClientA:
    """Matrix owner and key holder: CSSC conversion, chunks, keys, encryption, decryption.

    The constructor prepares the matrix (CSSC, chunk plan, encoding, overflow check against
    the public vector bound: on CKKS, also the bound the cloud's ciphertexts will carry,
    :func:`~hepkg.spmv.encoding.check_tracked`); the keys are generated when first needed (:attr:`ctx`), so
    :func:`run_cssc` times the two apart. ``backend``: 'pyfhel' (the default), 'openfhe', or 'sim',
    which encrypts nothing (op counts and tests only; it warns). ``policy``: 'exact' (the default; one
    Galois key per step) or 'pow2' (SEAL's +-2^i, as the paper). ``drop_primes``: 'auto' (the default,
    :func:`cssc_drop`), or how many data primes both clients modulus-switch their ciphertexts down by
    before sending them (:func:`hepkg.he.levels.check_drop`; 0 as the paper). ``compress_keys``: send the
    keys in the smallest form the backend writes (pyfhel: zstd; False: SEAL's raw form).
    """

    def __init__(self, matrix, *, backend: str = "pyfhel", params="bfv-8192-spmv", layout: str = "row",
                 encoding: FixedPoint | None = None, policy: str = "exact", block_rows: int | None = None,
                 insecure: bool = False, drop_primes="auto", compress_keys: bool = True):
        warn_if_sim(backend)
        self.params = he.get_params(params)
        self.encoding = encoding or FixedPoint()
        self.cssc = CSSC.from_sparse(matrix)
        layout = check_layout(layout, self.params.scheme)
        self.plan = generate_chunks(self.cssc, self.params.n // 2, layout, block_rows)
        self._values, self.vector_bound = encode_matrix(self.cssc.VA, self.cssc.entry_rows, self.params,
                                                        self.encoding)
        if self.params.scheme == "ckks":  # what the cloud's tracking reaches, refused before keys or ciphertexts
            peaks = [np.max(np.abs(v)) for v in chunk_values(self.cssc.CP, self._values, self.plan)]
            check_tracked(tracked_bounds(self.plan, peaks, self.vector_bound), self.params, "CSSC",
                          levels=2)  # the product's and the mask's rescales
        self._keys = dict(backend=backend, policy=policy, insecure=insecure)
        self.compress_keys = bool(compress_keys)
        if drop_primes == "auto":
            drop_primes = cssc_drop(self.params, backend, self.plan)
        self.drop_primes = check_drop(drop_primes, self.params, backend)

    @cached_property
    def ctx(self) -> he.Context:
        """The key holder's context, its keys generated on first use."""
        ctx = he.context(self._keys["backend"], self.params, rotations=self.plan.rotation_steps(),
                         policy=self._keys["policy"], swap=self.plan.needs_swap, insecure=self._keys["insecure"])
        if hasattr(ctx, "key_compression"):  # a backend that can write its keys compressed
            ctx.key_compression = "zstd" if self.compress_keys else "none"
        return ctx

    def public_context(self) -> bytes:
        """Public and evaluation keys (to the cloud, with their :func:`hepkg.he.fingerprint` over an authenticated
        channel)."""
        return self.ctx.to_bytes()

    def encryption_context(self) -> bytes:
        """The public key alone (to Client B, who only encrypts; its fingerprint as :meth:`public_context`'s)."""
        return self.ctx.to_bytes(evaluation_keys=False)

    def column_index_message(self) -> bytes:
        """A -> B: CI, CP, the chunk plan and the encoding (nothing that depends on the values)."""
        enc = self.encoding
        meta = dict(plan=self.plan.to_dict(), drop_primes=self.drop_primes,
                    encoding=dict(matrix_scale=enc.matrix_scale, vector_scale=enc.vector_scale,
                                  vector_bound=enc.vector_bound))
        ci_dtype = np.int32 if self.cssc.shape[1] < 2 ** 31 else np.int64
        return messages.pack("spmv/column-index", meta, {"CI": self.cssc.CI.astype(ci_dtype), "CP": self.cssc.CP})

    def matrix_message(self) -> bytes:
        """A -> cloud: the encrypted value chunks (Algorithm 1 lines 1-3) and the chunk plan."""
        blobs = [self.ctx.serialize(encrypt_low(self.ctx, v, self.drop_primes))
                 for v in chunk_values(self.cssc.CP, self._values, self.plan)]
        return messages.pack("spmv/matrix", dict(plan=self.plan.to_dict()), blobs=blobs)

    def decrypt_result(self, data: bytes) -> np.ndarray:
        """Algorithm 1 lines 14-19: decrypt each block's result and undo the row sorting."""
        _, _, blobs = messages.unpack(data, "spmv/result")
        if len(blobs) != len(self.plan.blocks):
            raise he.CorruptedData(f"expected {len(self.plan.blocks)} result ciphertexts, got {len(blobs)}")
        vals = [self.ctx.decrypt(self.ctx.deserialize(b, guard=True), p1 - p0) for b, (p0, p1) in zip(blobs, self.plan.blocks)]
        return decode_result(unpermute(vals, self.plan, self.cssc.RM), self.params, self.encoding)


class ClientB:
    """Vector owner: reorganizes its vector by A's column indices (Algorithm 3) and encrypts it, after
    checking it against the public :attr:`vector_bound`, which it derives itself."""

    def __init__(self, vector, context, column_index: bytes, *, fingerprint: str | None = None,
                 backend: str | None = None):
        """``context``: Client A's :meth:`ClientA.encryption_context` (bytes, or already loaded); for bytes,
        ``fingerprint``: the :func:`hepkg.he.fingerprint` Client A published, ``backend``: the backend B agreed to
        (a sim context, which sends B's vector in the clear, is refused unless ``backend='sim'``)."""
        self.ctx = he.require_public(_loaded(context, fingerprint, backend), "Client B")
        meta, arrays, _ = messages.unpack(column_index, "spmv/column-index")
        self.plan = ChunkPlan.from_dict(meta["plan"])
        self.drop_primes = check_drop(meta.get("drop_primes", 0), self.ctx.params, self.ctx.backend)
        enc = FixedPoint(**meta["encoding"])
        self.vector_bound = vector_bound(self.ctx.params, enc, arrays["CP"].size - 1)  # L = len(CP) - 1
        self._values = encode_vector(as_vector(vector, self.plan.shape[1]), self.ctx.params, enc, self.vector_bound)
        self._index = chunk_column_index(arrays["CP"], arrays["CI"], self.plan)

    def vector_message(self) -> bytes:
        """B -> cloud: the encrypted reorganized vector, one ciphertext per chunk."""
        blobs = [self.ctx.serialize(encrypt_low(self.ctx, v, self.drop_primes))
                 for v in reorg_vector(self._values, self._index)]
        return messages.pack("spmv/vector", {}, blobs=blobs)


class Cloud:
    """Evaluation only: built from the public context bytes, it holds no secret key."""

    def __init__(self, context, *, fingerprint: str | None = None, backend: str | None = None):
        """``context``: Client A's :meth:`ClientA.public_context` (bytes, or already loaded; ``fingerprint`` and
        ``backend`` as for :class:`ClientB`)."""
        self.ctx = he.require_public(_loaded(context, fingerprint, backend), "the spmv cloud")

    def evaluate(self, matrix: bytes, vector: bytes) -> bytes:
        """Algorithm 1 lines 8-13: products, aggregation, one result ciphertext per row block.

        One chunk at a time (deserialize its pair, multiply, aggregate, let go), so the cloud
        holds a few ciphertexts beyond the keys and the messages, however many chunks there are.
        """
        meta, _, a_blobs = messages.unpack(matrix, "spmv/matrix")
        _, _, b_blobs = messages.unpack(vector, "spmv/vector")
        plan = ChunkPlan.from_dict(meta["plan"])
        if not len(a_blobs) == len(b_blobs) == plan.n_ct:
            raise ValueError(f"the plan has {plan.n_ct} chunks; got {len(a_blobs)} matrix and "
                             f"{len(b_blobs)} vector ciphertexts")
        deserialize = functools.partial(self.ctx.deserialize, guard=True)  # bytes from the other parties
        results = aggregate(self.ctx, multiply(self.ctx, map(deserialize, a_blobs), map(deserialize, b_blobs)), plan)
        return messages.pack("spmv/result", {}, blobs=[self.ctx.serialize(r) for r in results])


def run_cssc(matrix, vector, *, backend: str = "pyfhel", params="bfv-8192-spmv", layout: str = "row",
             encoding: FixedPoint | None = None, policy: str = "exact", block_rows: int | None = None,
             insecure: bool = False, drop_primes="auto", compress_keys: bool = True) -> SpmvResult:
    """The whole protocol, party by party, with bytes per direction, op counts and phase times.

    Encrypts with Pyfhel by default; ``backend='sim'`` offers no privacy (cleartext slots, for op
    counts and fast tests) and warns. The result records ``backend``, ``params`` and ``insecure``.
    ``policy``, ``drop_primes`` and ``compress_keys`` (see :class:`ClientA`) change the cost, never the
    product. ``timings['key_transfer']`` is Client A writing the keys and the cloud and Client B loading
    them (``info['key_seconds']`` per party); ``info['preprocess_s']``: Client A's constructor (CSSC
    conversion, chunk plan, encoding), part of ``timings['client_a']``.
    """
    params = he.get_params(params)
    csr = as_csr(matrix, allow_zero=True)
    as_vector(vector, csr.shape[1])  # fail before any work
    if csr.nnz == 0:
        return zero_result("cssc", csr.shape[0], params, backend, insecure)
    clock = PhaseClock()
    with clock("client_a"):
        a = ClientA(csr, backend=backend, params=params, layout=layout, encoding=encoding, policy=policy,
                    block_rows=block_rows, insecure=insecure, drop_primes=drop_primes, compress_keys=compress_keys)
    preprocess_s = clock.seconds["client_a"]
    with clock("keygen"):
        a.ctx
    with clock("key_transfer"):
        ticks = [time.perf_counter()]
        cloud_keys, b_keys = a.public_context(), a.encryption_context()
        pins = he.fingerprint(cloud_keys), he.fingerprint(b_keys)  # A publishes them (an authenticated channel)
        ticks.append(time.perf_counter())
        cloud = Cloud(cloud_keys, fingerprint=pins[0], backend=backend)
        ticks.append(time.perf_counter())
        b_ctx = he.load_context(b_keys, fingerprint=pins[1], backend=backend)
        ticks.append(time.perf_counter())
    with clock("client_a"):
        ci_msg, a_msg = a.column_index_message(), a.matrix_message()
    with clock("client_b"):
        b = ClientB(vector, b_ctx, ci_msg)
        b_msg = b.vector_message()
    with clock("cloud"), cloud.ctx.counting() as cloud_ops:
        res_msg = cloud.evaluate(a_msg, b_msg)
    with clock("decrypt"):
        y = a.decrypt_result(res_msg)
    plan, sizes = a.plan, a.ctx.key_sizes()
    return SpmvResult(
        "cssc", y, **provenance(a.ctx),
        traffic=dict(a_to_cloud=len(a_msg), b_to_cloud=len(b_msg), a_to_b=len(ci_msg), cloud_to_a=len(res_msg),
                     keys_to_cloud=len(cloud_keys), keys_to_b=len(b_keys)),
        ops=dict(client_a=a.ctx.counts.as_dict(), client_b=b.ctx.counts.as_dict(), cloud=cloud_ops.as_dict()),
        timings=clock.timings(),
        info=dict(n_ct=plan.n_ct, blocks=len(plan.blocks), c_max=plan.c_max, layout=plan.layout,
                  cloud_he_s=cloud_ops.he_s, drop_primes=a.drop_primes, policy=a.ctx.keys.policy,
                  preprocess_s=preprocess_s,
                  key_seconds=dict(zip(("client_a", "cloud", "client_b"), np.diff(ticks).tolist())),
                  chunks=[(c.rows, c.cols) for c in plan.chunks], vector_ciphertexts=plan.n_ct,
                  result_ciphertexts=len(plan.blocks), rotation_keys=sizes["rotation_keys"],
                  key_bytes=sizes["public_key"] + sizes["relin_key"] + sizes["galois_keys"],
                  ciphertext_bytes=sizes.get("ciphertext"), sizes_estimated=bool(sizes.get("estimated"))),
    )
