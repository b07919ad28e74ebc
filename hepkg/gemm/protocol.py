"""The uniform entry point: plans by method, the client and cloud roles, and :func:`matmul`.

Roles are kept honest: the :class:`Client` holds the secret context, encodes and encrypts
the operands and decrypts the result; the :class:`Cloud` holds only the public evaluation
context (it refuses one that can decrypt) and sees serialized ciphertexts. Both derive the
same public plan from the shapes. Defaults: :func:`gemm_context` builds a Pyfhel context at the
128-bit ``bfv-8192-default`` with one Galois key per rotation step the plan uses where that is fewer
keys or fewer key switches than SEAL's power-of-two set (:func:`key_policy`), and the
:class:`Client` drops the data primes the product's noise leaves room for (``drop_primes='auto'``).
A context on the ``sim`` backend offers no privacy (its "ciphertexts" are cleartext slots, for op
counts and tests): the client warns; results record the backend.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from functools import partial

import numpy as np

import hepkg.he as he
from hepkg.he.errors import MissingRotationKey, SchemeError, SecretKeyRequired, warn_if_sim
from hepkg.he.keys import RotationKeys
from hepkg.he.levels import affordable_drop, check_drop, encrypt_low
from hepkg.he.registry import recorded_insecure

from .blocking import PARTITIONS, Blocking, blocked_plan, plan_blocking, uscore_block
from .counts import METHODS
from .e2dm import e2dm_r_plan, e2dm_s_plan
from .errors import PlaintextRangeError, ProductOverflow, ProductOverflowWarning, ShapeMismatch
from .hegmm import hegmm_en_plan, hegmm_plan
from .huang import huang_plan
from .plan import BASELINES, PREPROCESS

_BUILDERS = {"hegmm-en": hegmm_en_plan, "hegmm-ext": partial(hegmm_en_plan, duplicate=False),
             "hegmm-en-bsgs": partial(hegmm_en_plan, bsgs=True), "e2dm-s": e2dm_s_plan, "e2dm-r": e2dm_r_plan,
             "huang": huang_plan}
#: The methods of the authors' code (EchizenG/HEGMM; uSCORE as their E2DM-S on square blocks).
AUTHORS_METHODS = ("hegmm-en", "hegmm-ext", "e2dm-s", "e2dm-r", "huang", "uscore")


def check_baseline(method: str, baseline: str) -> None:
    """Raise ValueError for an unknown baseline or a method the authors' code does not have."""
    if baseline not in BASELINES:
        raise ValueError(f"baseline must be one of {BASELINES}, got {baseline!r}")
    if baseline == "authors" and method not in AUTHORS_METHODS:
        raise ValueError(f"the authors' code has no {method!r} (their HEGMM is 'hegmm-ext'; "
                         f"'hegmm-en-bsgs' is hepkg's); baseline='authors' takes {AUTHORS_METHODS}")


def _single(method: str, m: int, l: int, n: int, period: int, preprocess: str, order: str,
            baseline: str = "hepkg"):
    if method == "hegmm":
        return hegmm_plan(m, l, n, period, preprocess, order)
    if baseline == "authors":
        return _BUILDERS[method](m, l, n, period, preprocess, authors=True)
    return _BUILDERS[method](m, l, n, period, preprocess)


def make_plan(method: str, m: int, l: int, n: int, period: int, *, preprocess: str = "cloud", blocking=None,
              order: str = "F", costs: dict | None = None, baseline: str = "hepkg"):
    """The public plan of an m x l times l x n product (a :class:`BlockedPlan` when blocked).

    ``blocking``: None (one ciphertext per operand, else :class:`ShapeTooLarge`), 'auto'
    (:func:`plan_blocking`), 'P1'/'P2', a :class:`Blocking` or a (rows, inner, cols) tuple of
    block sizes. For 'uscore' it is the square block size b, or None/'auto' for
    :func:`uscore_block`. ``order``: HEGMM's flattening ('F' column-major, 'C' row-major).
    ``costs``: ms per op kind used by the planners. ``baseline``: 'hepkg' (hepkg's evaluation) or
    'authors' (the methods as the authors' code evaluates them, :data:`AUTHORS_METHODS`).
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; one of {METHODS}")
    check_baseline(method, baseline)
    if preprocess not in PREPROCESS:
        raise ValueError(f"preprocess must be one of {PREPROCESS}, got {preprocess!r}")
    if order not in ("F", "C"):
        raise ValueError(f"order must be 'F' (column-major) or 'C' (row-major), got {order!r}")
    if min(m, l, n) < 1:
        raise ShapeMismatch(f"matrix dimensions must be positive, got {m} x {l} times {l} x {n}")
    if method == "uscore":
        if blocking in (None, "auto"):
            blocking = uscore_block(m, l, n, period, preprocess, costs, baseline)
        if not isinstance(blocking, (int, np.integer)) or not 1 <= blocking * blocking <= period:
            raise ValueError(f"uscore takes a square block size b with b^2 <= {period} slots, got {blocking!r}")
        b = int(blocking)
        return blocked_plan("uscore", m, l, n, period, preprocess, Blocking.uniform(m, l, n, b),
                            lambda mi, lk, nj: e2dm_s_plan(mi, lk, nj, period, preprocess, d=b,
                                                           authors=baseline == "authors"))
    if blocking is None:
        return _single(method, m, l, n, period, preprocess, order, baseline)
    if blocking == "auto":
        blocking = plan_blocking(method, m, l, n, period, preprocess, costs, baseline)
        if len(blocking.rows) == len(blocking.inner) == len(blocking.cols) == 1:
            return _single(method, m, l, n, period, preprocess, order, baseline)
    elif isinstance(blocking, str):
        if blocking not in PARTITIONS:
            raise ValueError(f"unknown blocking {blocking!r}; 'auto', {', '.join(PARTITIONS)}, or a Blocking")
        blocking = PARTITIONS[blocking]
    elif not isinstance(blocking, Blocking):
        blocking = Blocking(*(tuple(int(x) for x in parts) for parts in blocking))
    return blocked_plan(method, m, l, n, period, preprocess, blocking,
                        lambda mi, lk, nj: _single(method, mi, lk, nj, period, preprocess, order, baseline))


def rotation_steps(method: str, m: int, l: int, n: int, *, params="bfv-8192-default", preprocess: str = "cloud",
                   blocking=None, order: str = "F", baseline: str = "hepkg") -> list[int]:
    """The rotation steps the cloud performs, to generate keys for (policy 'exact' or 'pow2')."""
    return make_plan(method, m, l, n, he.get_params(params).n // 2, preprocess=preprocess, blocking=blocking,
                     order=order, baseline=baseline).rotation_steps()


def key_policy(plan, params) -> str:
    """'exact' where one key per step is no more keys than the power-of-two set, or costs the plan fewer key
    switches (counted by a dry run on ``sim``); else 'pow2' (e.g. Huang's plan: as many key switches)."""
    steps = plan.rotation_steps()
    params = he.get_params(params)
    if len(RotationKeys("exact", steps, plan.period)) <= len(RotationKeys("pow2", steps, plan.period)):
        return "exact"
    (m, l, n), switches = plan.shape, {}
    for policy in ("pow2", "exact"):
        ctx = he.context("sim", params, rotations=steps, policy=policy, insecure=True)
        cts = {name: ctx.encrypt(v) for name, v in plan.encode(np.zeros((m, l), int), np.zeros((l, n), int)).items()}
        with ctx.counting() as ops:
            plan.run(ctx, cts)
        switches[policy] = ops.as_dict()["keyswitch"]
    return "exact" if switches["exact"] < switches["pow2"] else "pow2"


def gemm_context(method: str, m: int, l: int, n: int, *, backend: str = "pyfhel", params="bfv-8192-default",
                 policy: str = "auto", preprocess: str = "cloud", blocking=None, order: str = "F",
                 insecure: bool = False, baseline: str = "hepkg"):
    """A secret context holding exactly the rotation keys this product needs (or their pow2 parts).

    Pyfhel by default; ``backend='sim'`` offers no privacy (for op counts and tests). ``policy``: 'auto'
    (the default, :func:`key_policy`), 'exact' or 'pow2'.
    """
    plan = make_plan(method, m, l, n, he.get_params(params).n // 2, preprocess=preprocess, blocking=blocking,
                     order=order, baseline=baseline)
    if policy == "auto":
        policy = key_policy(plan, params)
    return he.context(backend, params, rotations=plan.rotation_steps(), policy=policy, insecure=insecure)


# ----------------------------------------------------------------------------- input checks
def check_operands(A, B, t: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer matrices with matching inner dimensions and entries in [-(t//2), t//2]."""
    mats = []
    for name, X in (("A", A), ("B", B)):
        X = np.asarray(X)
        if X.ndim != 2 or 0 in X.shape:
            raise ShapeMismatch(f"{name} must be a non-empty 2-D matrix, got shape {X.shape}")
        if X.dtype.kind == "f":
            if not np.all(np.isfinite(X)) or not np.all(X == np.round(X)):
                raise PlaintextRangeError(f"BFV multiplies integers; {name} has non-integer entries "
                                          f"(scale and round to a fixed-point integer encoding first)")
        elif X.dtype.kind not in "iub" and not (X.dtype == object and all(isinstance(v, (int, np.integer))
                                                                        for v in X.ravel())):
            raise PlaintextRangeError(f"BFV multiplies integers; {name} has dtype {X.dtype}")
        lo, hi = int(X.min()), int(X.max())
        if lo < -(t // 2) or hi > t // 2:
            raise PlaintextRangeError(f"{name} has entries in [{lo}, {hi}], outside [-{t // 2}, {t // 2}] "
                                      f"that the plaintext modulus t={t} represents")
        mats.append(X.astype(np.int64))
    A, B = mats
    if A.shape[1] != B.shape[0]:
        raise ShapeMismatch(f"inner dimensions differ: A is {A.shape[0]} x {A.shape[1]}, "
                            f"B is {B.shape[0]} x {B.shape[1]}")
    return A, B


def check_overflow(A: np.ndarray, B: np.ndarray, t: int, on_overflow: str = "raise") -> None:
    """Raise (or warn) when the true product leaves [-(t//2), t//2]: BFV gives it only mod t."""
    if on_overflow not in ("raise", "warn", "ignore"):
        raise ValueError(f"on_overflow must be 'raise', 'warn' or 'ignore', got {on_overflow!r}")
    exact_in_int64 = A.shape[1] * int(np.abs(A).max()) * int(np.abs(B).max()) < 2 ** 62
    C = A @ B if exact_in_int64 else A.astype(object) @ B.astype(object)
    peak = int(np.max(np.abs(C)))
    if peak > t // 2 and on_overflow != "ignore":
        msg = (f"the integer product reaches |C| = {peak} > t/2 = {t // 2}: BFV returns it only mod t={t}; "
               f"use smaller entries or a larger plaintext modulus")
        if on_overflow == "raise":
            raise ProductOverflow(msg)
        warnings.warn(msg, ProductOverflowWarning, stacklevel=3)


def centered(C: np.ndarray, t: int) -> np.ndarray:
    """C mod t in the centered range [-(t//2), t//2] (what BFV decryption returns)."""
    C = np.asarray(C, dtype=np.int64) % t
    C[C > t // 2] -= t
    return C


# ----------------------------------------------------------------------------- parties
def _check_keys(ctx, steps) -> None:
    missing = []
    for s in steps:
        try:
            ctx.keys.plan(s)
        except MissingRotationKey:
            missing.append(s)
    if missing:
        raise MissingRotationKey(f"the cloud context lacks Galois keys for rotation steps {missing[:12]}"
                                 f"{' ...' if len(missing) > 12 else ''} (policy '{ctx.keys.policy}'); build it "
                                 f"with hepkg.gemm.gemm_context() or rotations=hepkg.gemm.rotation_steps(...)")


class Client:
    """Holds the secret context: encrypts the operands, decrypts the product.

    ``drop_primes``: data primes dropped from the operands after encrypting (cheaper products and key
    switches on the cloud): 'auto' (the default, :func:`product_drop` for each plan) or a number
    (:func:`hepkg.he.levels.check_drop`; 0 as the paper). With sigma and tau by the client, one of SEAL's
    four at N = 8192 leaves about 40 bits of noise budget to every method (measured); decryption
    refuses an exhausted budget (:class:`~hepkg.he.NoiseBudgetExhausted`), never a wrong product."""

    def __init__(self, ctx, drop_primes="auto"):
        warn_if_sim(ctx.backend)
        if not ctx.has_secret:
            raise SecretKeyRequired("the client needs a secret context (the cloud gets ctx.public())")
        if not ctx.is_integer:
            raise SchemeError(f"the gemm section multiplies integer matrices with BFV/BGV, not "
                              f"{ctx.scheme.upper()}")
        self.ctx = ctx
        self.drop_primes = drop_primes if drop_primes == "auto" else check_drop(drop_primes, ctx.params, ctx.backend)

    def drop_for(self, plan) -> int:
        """The data primes dropped from ``plan``'s operands."""
        return product_drop(self.ctx, plan) if self.drop_primes == "auto" else self.drop_primes

    def encrypt(self, plan, A, B) -> dict[str, bytes]:
        """The serialized ciphertexts of ``plan``'s encodings of A and B (checked: :func:`check_operands`)."""
        A, B = check_operands(A, B, self.ctx.plain_modulus)
        drop = self.drop_for(plan)
        return {name: self.ctx.serialize(encrypt_low(self.ctx, vec, drop)) for name, vec in plan.encode(A, B).items()}

    def decrypt(self, plan, reply: dict[str, bytes]) -> np.ndarray:
        sizes = plan.result_sizes()
        return plan.assemble({name: self.ctx.decrypt(self.ctx.deserialize(data, guard=True), sizes[name])
                              for name, data in reply.items()})


def product_drop(ctx, plan) -> int:
    """The primes a client can drop for ``plan``: one ciphertext product on each result's path after one
    masking (plaintext) product per operand with sigma and tau by the client, two by the cloud, summing
    l products (:func:`hepkg.he.levels.spent_bits`; measured on SEAL at N = 8192: every method spends at
    most 62 bits with the client's preprocessing, 91 with the cloud's)."""
    return affordable_drop(ctx.params, ctx.backend, ct_products=1, pt_products=1 if plan.preprocess == "client" else 2,
                           summands=plan.shape[1])


class Cloud:
    """Holds the public evaluation context: runs plans on serialized ciphertexts."""

    def __init__(self, ctx):
        self.ctx = he.require_public(ctx, "the gemm cloud")

    def multiply(self, plan, message: dict[str, bytes]) -> tuple[dict[str, bytes], he.OpCounts]:
        """The serialized result ciphertexts and the op counts of the computation."""
        if plan.period != self.ctx.period:
            raise ValueError(f"the plan is for {plan.period}-slot rows, the context has {self.ctx.period}")
        _check_keys(self.ctx, plan.rotation_steps())
        cts = {name: self.ctx.deserialize(data, guard=True) for name, data in message.items()}
        with self.ctx.counting() as ops:
            out = plan.run(self.ctx, cts)
        return {name: self.ctx.serialize(ct) for name, ct in out.items()}, ops


@dataclass
class GemmResult:
    """The decrypted product with what it cost: cloud op counts, bytes exchanged, seconds per role.

    ``backend``, ``params``, ``insecure``: the client's context (``backend == 'sim'``: nothing
    was encrypted, the run gives op counts, not privacy, and ``insecure`` is True); ``drop_primes``: the primes
    its operands dropped."""

    C: np.ndarray
    method: str
    preprocess: str
    ops: dict
    upload_bytes: int
    download_bytes: int
    upload_ciphertexts: int
    download_ciphertexts: int
    seconds: dict = field(default_factory=dict)
    plan: object = None
    baseline: str = "hepkg"
    backend: str = field(kw_only=True)
    params: str = field(kw_only=True)
    insecure: bool = field(kw_only=True)
    drop_primes: int = field(default=0, kw_only=True)

    @property
    def depth(self) -> int:
        return self.ops["depth"]


def parties(ctx_or_parties) -> tuple[Client, Cloud]:
    """(Client, Cloud) from a secret context, a (secret, public) context pair or a (Client, Cloud) pair."""
    if isinstance(ctx_or_parties, tuple):
        a, b = ctx_or_parties
        return (a if isinstance(a, Client) else Client(a)), (b if isinstance(b, Cloud) else Cloud(b))
    return Client(ctx_or_parties), Cloud(ctx_or_parties.public())


def matmul(ctx_or_parties, A, B, method: str = "hegmm-en", *, preprocess: str = "cloud", blocking=None,
           order: str = "F", on_overflow: str = "raise", costs: dict | None = None,
           baseline: str = "hepkg") -> GemmResult:
    """Encrypted ``A @ B``: the client encrypts, the cloud multiplies, the client decrypts.

    ``ctx_or_parties``: a secret BFV context (the cloud then gets ``ctx.public()``), a
    (secret, public) context pair, or a (:class:`Client`, :class:`Cloud`) pair. ``method``: one
    of ``METHODS``; ``preprocess``: sigma/tau by the 'cloud' on ciphertexts or by the 'client'
    in plaintext (Tables 5 and 6). See :func:`make_plan` for ``blocking``, ``order``, ``costs``.
    ``baseline``: 'hepkg' or 'authors' (:func:`make_plan`).
    ``on_overflow``: 'raise', 'warn' or 'ignore' when the true product does not fit t (the
    result is then exact mod t). The cloud's op counts are ``result.ops``. A cloud context
    that can decrypt raises :class:`~hepkg.he.SecretContextRefused`. A secret context's client drops
    the primes the noise allows (:class:`Client`, ``drop_primes='auto'``). A ``sim`` context offers
    no privacy (cleartext slots, for op counts and tests; it warns); ``result.backend`` records it.
    """
    client, cloud = parties(ctx_or_parties)
    t = client.ctx.plain_modulus
    A, B = check_operands(A, B, t)
    check_overflow(A, B, t, on_overflow)
    (m, l), n = A.shape, B.shape[1]
    plan = make_plan(method, m, l, n, client.ctx.period, preprocess=preprocess, blocking=blocking, order=order,
                     costs=costs, baseline=baseline)
    t0 = time.perf_counter()
    message = client.encrypt(plan, A, B)
    t1 = time.perf_counter()
    reply, ops = cloud.multiply(plan, message)
    t2 = time.perf_counter()
    C = client.decrypt(plan, reply)
    t3 = time.perf_counter()
    return GemmResult(C, method, preprocess, ops.as_dict(), sum(map(len, message.values())),
                      sum(map(len, reply.values())), len(message), len(reply),
                      {"encrypt": t1 - t0, "cloud": t2 - t1, "decrypt": t3 - t2}, plan, baseline,
                      backend=client.ctx.backend, params=client.ctx.params.name,
                      insecure=recorded_insecure(client.ctx.backend, client.ctx.insecure),
                      drop_primes=client.drop_for(plan))
