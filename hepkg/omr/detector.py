"""SophOMR / SophOMD on the backend protocol: the receiver's detection key, the detector's digest, retrieval.

Parties (Sec. 2.5): the :class:`Receiver` holds the PS secret key and the BFV secret context; its
detection key is the public context (evaluation keys only) plus sk encrypted *sparse-packed*
(slot t holds sk[t mod n'], Sec. 2.2.2). The :class:`Detector` gets that key (it refuses a
context that can decrypt) and turns a bulletin board into one digest ciphertext:

1. Affine transform (Alg. 6, Step 1): d_j = B_j - A_j sk for the l repetitions, A_j's rows the
   negacyclic rotations Neg^j(a_i) of the clues, by the tall MatMul (Alg. 8: two rotation keys;
   ``b_affine = n'`` is PerfOMR's Alg. 7 with one) sharing the baby steps across j;
2. Range check (Step 2, :mod:`hepkg.omr.rangecheck`): PV, 1 at the pertinent messages;
3. Compression by the wide MatMul (Alg. 1): SophOMR multiplies the stacked ((t + 1) k) x N matrix
   [C; D_1; ...; D_t] (Sec. 4.1: D_s = C diag(PL_s) precomputed in plaintext), SophOMD C alone.
   Rows are padded to K, a power of two; slot r < K of the digest holds row r's product. PV is first
   modulus-switched down to two primes (the authors' compression modulus) and the digest to one. Where the
   backend can (:meth:`~hepkg.he.context.Context.lowered`), PV then moves to a context over those two primes
   holding the same secret key, whose rotation keys span only them (and one key-switching digit), as the
   authors' compression context; elsewhere it rotates with the top-level keys (a key switch at two primes with
   them measured 0.063 s against 0.48 s at every prime: 0.13, not the 2/19 the primes alone suggest).

4. Ring switching (Sec. 4.2), where the backend can (:meth:`~hepkg.he.context.Context.subring`): the digest's K
   slots are folded into the first n'/2 of each row (masks times d, one row swap), and at one prime the digest
   descends to the ring of degree n' = n/d that holds them (:meth:`Layout.descent`: 2^14 for SophOMR, 2^13 for
   SophOMD at n = 2^16, the authors' Table 5), one key switch to the lifted subring secret.

The receiver decrypts w = slots 0..k-1 (and e, t rows of k) and decodes them over F_p
(:mod:`hepkg.omr.decode`).
"""
from __future__ import annotations

import contextlib
import functools
import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..bench.costmodel import observed_costs
from ..he.context import Ciphertext, Context, require_public
from ..he.counting import OpCounts
from ..he.params import HE_STANDARD
from ..he.registry import backend_class, context
from ..linalg.rectangular import (cheapest_b, sparse_pack, tall_counts, tall_matvec, tall_steps, wide_counts,
                                  wide_matvec, wide_plains, wide_steps)
from .board import PAYLOAD_BYTES, check_slots, payload_slots
from .decode import _flint, decode, decode_indices
from .rangecheck import drop_plan, range_check, range_check_counts
from .signaling import Clue, PSParams, SecretKey

__all__ = ["SCHEMES", "PHASES", "Layout", "layout", "digest_counts", "DetectionKey", "Digest", "receiver_context",
           "Receiver", "Detector"]

SCHEMES = ("sophomr", "sophomd")
PHASES = ("affine", "range_check", "compression")
#: Towers PV keeps for the compression (the authors' compression context: Q = 2 x 60 bits); the digest is sent
#: at one.
COMPRESSION_LIMBS = 2
#: Ciphertext products after the range check that PV's primes must leave room for (the authors' compression
#: context: MultiplicativeDepth_comp 1, two primes)
COMPRESSION_DEPTH = 1
#: Products of margin the range check's drop plan keeps beyond OpenFHE's estimate for the compression. Measured
#: (PV's noise budget at two primes, SophOMD, the range check alone: scripts/omr_drop_plan.py, docs/benchmarks.md):
#: none leaves 56 of 80 bits at 2^16 and 17 of 100 on toy-bfv-omr, where the compression then fails; one, 77 and 39
DROP_MARGIN = 1
#: The least ring the digest descends to (Sec. 4.2, ring switching): its two 60-bit primes and special prime (log PQ
#: 180) are 128-bit secure from 2^13 on (the HE standard allows 218 bits), the authors' SophOMD ring (Table 5).
SUBRING_MIN = 1 << 13


@dataclass(frozen=True)
class Layout:
    """What the receiver and the detector agree on: scheme, PS parameters, k, payload slots t
    (0 for SophOMD), BFV slot count n and the baby-step counts of the two MatMuls."""
    scheme: str
    ps: PSParams
    k: int
    t: int
    n: int
    b_affine: int
    b_compress: int

    @property
    def rows(self) -> int:
        """Rows of the compression matrix: (t + 1) k, or k for SophOMD."""
        return (self.t + 1) * self.k

    @property
    def K(self) -> int:
        """The rows padded to a power of two."""
        return 1 << (self.rows - 1).bit_length()

    def descent(self, insecure: bool = False) -> int:
        """d: the digest descends to the ring of degree n/d that holds its K rows, of at least :data:`SUBRING_MIN`
        (on an insecure ring: n/2, and the least degree a parameter set has); 1: no smaller ring holds them."""
        floor = self.n // 2 if insecure or self.n <= SUBRING_MIN else SUBRING_MIN
        return max(1, self.n // max(self.K, floor, min(HE_STANDARD)))

    @property
    def affine_steps(self) -> list[int]:
        """Rotation keys of the affine (tall) MatMul."""
        return sorted(set(tall_steps(self.ps.n, self.b_affine)))

    @property
    def compression_steps(self) -> list[int]:
        """Rotation keys of the compression (wide) MatMul; it also swaps the rows once."""
        return sorted(set(wide_steps(self.K, self.b_compress, self.n)))

    @property
    def steps(self) -> list[int]:
        """Rotation keys both MatMuls need (the row swap comes on top)."""
        return sorted(set(self.affine_steps) | set(self.compression_steps))


def layout(ps: PSParams, n: int, *, scheme: str = "sophomr", k: int = 50, payload_bytes: int = PAYLOAD_BYTES,
           b_affine: int | None = None, b_compress: int | None = None, N: int | None = None) -> Layout:
    """The layout for BFV slot count n: baby steps default to the fewest rotations for a board of N messages
    (default n; :func:`~hepkg.linalg.rectangular.cheapest_b`: the authors' ceil(sqrt(l s n')), 46 for the affine
    MatMul at N = 2^16, n' = 1024, l = 2, and ceil(sqrt(K / s)) for the compression, 46 at N = 2^19; any b in
    [1, n'] or [1, K] is accepted, the last giant step skipping the diagonals past it)."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    check_ring(ps, n)
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 1 <= k < ps.q:
        raise ValueError(f"k must be an integer in [1, p={ps.q}), got {k!r}")
    t = payload_slots(payload_bytes, ps.q) if scheme == "sophomr" else 0
    rows = (t + 1) * k
    K = 1 << (rows - 1).bit_length()
    if K > n // 2:
        raise ValueError(f"{scheme} compresses {rows} rows (padded to {K}): more than a BFV row of {n // 2} slots")
    s = -(-(N or n) // n)
    b_affine = b_affine or cheapest_b(ps.n, 1, ps.l * s)
    b_compress = b_compress or cheapest_b(K, s, 1)
    for name, b, of in (("b_affine", b_affine, ps.n), ("b_compress", b_compress, K)):
        if not isinstance(b, (int, np.integer)) or isinstance(b, bool) or not 1 <= b <= of:
            raise ValueError(f"{name}={b!r} must be an integer in [1, {of}]")
    return Layout(scheme, ps, int(k), t, n, int(b_affine), int(b_compress))


def digest_counts(lay: Layout, N: int, d: int = 1) -> dict[str, dict[str, int]]:
    """Per phase, the counted ops of :meth:`Detector.digest` for N messages, by formula: the tall MatMul
    (Table 2, both repetitions sharing the baby steps; + b), the range check, the wide MatMul (Table 1), and with
    ``d`` > 1 ring switching to degree n/d (:meth:`Detector._fold`'s one or two masks and row swap, the descent's
    key switch). Every plaintext product encodes a fresh plaintext."""
    s = math.ceil(N / lay.n)
    affine = tall_counts(N, lay.ps.n, lay.n, lay.b_affine, matrices=lay.ps.l)
    comp = wide_counts(lay.K, N, lay.n, lay.b_compress)
    if d > 1:
        swap = int(lay.K > lay.n // d // 2)
        comp = comp | dict(mul_pt=comp["mul_pt"] + 1 + swap, swap=comp["swap"] + swap, descend=1)
    return {"affine": {k: affine[k] for k in ("mul_pt", "rotate")} | dict(
                keyswitch=affine["rotate"], encode=affine["mul_pt"] + s * lay.ps.l, add_pt=s * lay.ps.l),
            "range_check": {"mul_ct": s * range_check_counts(lay.ps.bound, lay.ps.q, lay.ps.l)["mul_ct"]},
            "compression": {k: comp[k] for k in ("mul_pt", "rotate", "swap")} | dict(
                keyswitch=comp["rotate"] + comp["swap"] + comp.get("descend", 0), encode=comp["mul_pt"])}


@dataclass(frozen=True)
class DetectionKey:
    """The receiver's detection key: a public BFV context, sk encrypted sparse-packed, and the public context the
    compression runs in at its primes (None: in ``context``, with keys at every prime)."""
    context: Context
    sk: Ciphertext
    layout: Layout
    compression: Context | None = None
    digest: Context | None = None


@dataclass
class Digest:
    """The digest ciphertext of a board of N messages, with what each phase cost on the detector."""
    ciphertext: Ciphertext
    N: int
    layout: Layout
    phases: dict = field(default_factory=dict)


def receiver_context(backend: str, params, lay: Layout, *, insecure: bool = False) -> Context:
    """The receiver's secret BFV context for ``lay``: on a backend that lowers contexts (:attr:`Context.lowers`) the
    affine MatMul's rotation keys only (the compression's come from :class:`Receiver`'s lowered context), elsewhere
    every step and the row swap."""
    lowers = backend_class(backend).lowers
    return context(backend, params, rotations=lay.affine_steps if lowers else lay.steps, policy="exact",
                      swap=not lowers, insecure=insecure)


class Receiver:
    """Holds the PS secret key and the BFV secret context; issues the detection key, decodes digests.

    ``lowered`` (default: where the backend can): the compression runs in a context lowered to its
    ``COMPRESSION_LIMBS`` primes (:meth:`Context.lowered`), with rotation keys at those primes and no
    relinearization key (it multiplies by plaintexts only), as the authors' compression context; otherwise at the
    top-level keys of ``ctx``."""

    def __init__(self, ctx: Context, sk: SecretKey, lay: Layout, *, lowered: bool | None = None):
        if not isinstance(ctx, Context) or not ctx.has_secret:
            raise TypeError("the receiver needs the secret hepkg context that made the keys")
        if not isinstance(sk, SecretKey) or sk.params != lay.ps:
            raise ValueError(f"the PS secret key must be a SecretKey of {lay.ps.describe()}")
        lowered = ctx.lowers if lowered is None else lowered
        _check_context(ctx, lay, lowered)
        self.ctx, self.sk, self.layout = ctx, sk, lay
        self.low = ctx.lowered(COMPRESSION_LIMBS, rotations=lay.compression_steps, policy="exact", swap=True,
                               relin=False) if lowered else None
        d = lay.descent(ctx.insecure) if self.low is not None and ctx.subrings else 1
        self.small = self.low.subring(d) if d > 1 else None
        with contextlib.suppress(ImportError):   # decoding says what is missing
            _flint()                             # python-flint's import (30 ms) before any digest is decoded

    def detection_key(self, *, timings: dict | None = None) -> DetectionKey:
        """The public contexts (:meth:`Context.public`, as a server in this process receives them) and Enc(sparse-packed
        sk), parsed from its bytes. With ``timings``, each step's seconds as the authors' program splits them:
        ``encrypt_s`` (Enc(sk), in their setup), ``written_s`` (every context with its evaluation keys and Enc(sk)
        written as bytes another process could load, what their ``saveKeys`` writes to files; ``written_bytes``,
        their length) and ``read_s`` (the server's contexts made and Enc(sk) parsed under the guard)."""
        t0 = time.perf_counter()
        enc = self.ctx.encrypt(sparse_pack(self.sk.s, self.layout.n))
        t1 = time.perf_counter()
        sk = self.ctx.serialize(enc)
        if timings is not None:        # one context's bytes at a time: they go where saveKeys' files go, nowhere
            written = len(sk) + sum(len(c.to_bytes()) for c in (self.ctx, self.low, self.small) if c is not None)
        t2 = time.perf_counter()
        pub = self.ctx.public()
        key = DetectionKey(pub, pub.deserialize(sk, guard=True), self.layout,
                           None if self.low is None else self.low.public(),
                           None if self.small is None else self.small.public())
        if timings is not None:
            timings.update(encrypt_s=t1 - t0, written_s=t2 - t1, written_bytes=written,
                           read_s=time.perf_counter() - t2)
        return key

    def key_sizes(self) -> dict[str, int]:
        """Bytes of the keys each context holds (:meth:`Context.key_sizes`), the lowered context's and the digest
        subring's switching key added."""
        sizes = self.ctx.key_sizes()
        for ctx in (self.low, self.small):
            if ctx is not None:
                more = ctx.key_sizes()
                sizes |= {k: sizes[k] + more[k] for k in ("relin_key", "galois_keys", "rotation_keys", "switch_key")}
        return sizes

    def close(self) -> None:
        """Release both contexts' keys."""
        for ctx in (self.small, self.low, self.ctx):
            if ctx is not None:
                ctx.close()

    @property
    def digest_context(self) -> Context:
        """The context digests come back under (the lowered one where the compression runs there)."""
        return self.small or self.low or self.ctx

    def _received(self, cts: list, timings: dict | None) -> list:
        """The digest's ciphertexts as the receiver gets them: serialized, then parsed under the guard into its own
        context; ``timings["parse_s"]`` gets the seconds this took (the authors' decoding timer starts after it)."""
        t0 = time.perf_counter()
        own = [self.digest_context.deserialize(c.ctx.serialize(c), guard=True) for c in cts]
        if timings is not None:
            timings["parse_s"] = time.perf_counter() - t0
        return own

    def retrieve(self, digest: Digest, *, timings: dict | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """(sorted pertinent indices, their (|I|, t) payload slots, or None for SophOMD); ``timings``: see
        :meth:`_received`."""
        lay = self.layout
        if not isinstance(digest, Digest) or digest.layout != lay:
            raise ValueError("the digest was made for another layout (scheme, PS parameters, k or slots)")
        ct, = self._received([digest.ciphertext], timings)
        slots = self.digest_context.decrypt(ct, signed=False)[:lay.rows] % lay.ps.q
        w = slots[:lay.k]
        if lay.scheme == "sophomd":
            return decode_indices(w, digest.N, lay.ps.q), None
        return decode(w, slots[lay.k:].reshape(lay.t, lay.k), digest.N, lay.ps.q)


def _check_context(ctx: Context, lay: Layout, lowered: bool) -> None:
    """ValueError unless ``ctx`` is a BFV/BGV context of the layout's moduli and slots holding the keys it runs
    with: the affine MatMul's where the compression is ``lowered``, else every step and the row swap."""
    if ctx.scheme not in ("bfv", "bgv"):
        raise ValueError(f"OMR runs on BFV/BGV, got a {ctx.scheme.upper()} context")
    if ctx.plain_modulus != lay.ps.q or ctx.slots != lay.n:
        raise ValueError(f"the context ({ctx.params.name}: t={ctx.plain_modulus}, {ctx.slots} slots) does not "
                         f"match the layout (p = q' = {lay.ps.q}, {lay.n} slots)")
    missing = sorted(set(lay.affine_steps if lowered else lay.steps) - set(ctx.keys.steps))
    swap = not lowered and not ctx.swap_key
    if missing or swap:
        raise ValueError(f"the context lacks rotation keys {missing}{' and the row swap' if swap else ''}: build it "
                         f"with hepkg.omr.detector.receiver_context")


class Detector:
    """The server: digests a bulletin board with the receiver's detection key (no secret key).

    ``drops`` (default): the range check's products drop the primes the rest of the circuit does not need
    (:func:`~hepkg.omr.rangecheck.drop_plan`, made once here as ``plan``; None where the backend does not say or
    ``drops`` is off)."""

    def __init__(self, key: DetectionKey, *, drops: bool = True):
        if not isinstance(key, DetectionKey):
            raise TypeError(f"the detector needs a DetectionKey, got {type(key).__name__}")
        self.ctx = require_public(key.context, "the OMR detector")
        _check_context(self.ctx, key.layout, key.compression is not None)
        self.low = self.ctx
        if key.compression is not None:
            self.low = require_public(key.compression, "the OMR detector's compression")
            missing = sorted(set(key.layout.compression_steps) - set(self.low.keys.steps))
            if self.low.parent_key_id != self.ctx.key_id or missing or not self.low.swap_key:
                raise ValueError("the detection key's compression context is not lowered from its context with the "
                                 "compression's rotation keys and the row swap")
        self.small = None
        if key.digest is not None:
            self.small = require_public(key.digest, "the OMR detector's digest ring")
            if self.small.parent_key_id != self.low.key_id or self.low is self.ctx:
                raise ValueError("the detection key's digest ring is not a subring of its compression context")
        self.key, self.layout = key, key.layout
        self._plains: dict[int, list] = {}
        _kernels()                                # numba's import and kernels' load, before any digest
        lay = key.layout
        self.plan = drop_plan(self.ctx, lay.ps.bound, lay.ps.l, COMPRESSION_DEPTH + DROP_MARGIN) if drops else None

    def precompute(self, N: int) -> None:
        """SophOMD's compression diagonals for boards of N messages, encoded once (they depend on N, k and p
        alone): a digest of N messages then encodes none. SophOMR's hold the payloads: nothing to do."""
        lay = self.layout
        if lay.scheme == "sophomd" and N not in self._plains:
            self._plains[N] = wide_plains(self.low, _compression_entries(lay, N, None), lay.K, N,
                                          level=max(0, self.low.max_level + 1 - COMPRESSION_LIMBS), b=lay.b_compress)

    def digest(self, clues: Clue, slots: np.ndarray | None = None) -> Digest:
        """The digest of N messages: clues (a batch of N) and, for SophOMR, their (N, t) payload slots (digits in [0, p): others raise)."""
        lay, ctx = self.layout, self.ctx
        if not isinstance(clues, Clue) or clues.params != lay.ps or not clues.batched:
            raise ValueError(f"clues must be a batch of Clue for {lay.ps.describe()}")
        N = len(clues.a)
        if N >= lay.ps.q:
            raise ValueError(f"a board of N={N} messages needs p > N (Vandermonde columns), p={lay.ps.q}")
        if lay.scheme == "sophomr":
            slots = check_slots(slots, N, lay.t, lay.ps.q, "SophOMR")
        phases: dict = {}
        with _phase(ctx, phases, "affine"):
            d = self._affine(clues)
        with _phase(ctx, phases, "range_check"):
            # PV down to the compression's primes here, as the authors' rangeCheck ends (Compress to 2 towers and
            # a key switch to the compression's key, inside their timer: src/detect.cpp)
            pv = [ctx.keep_primes(range_check(ctx, block, lay.ps.bound, self.plan), COMPRESSION_LIMBS) for block in d]
        with _phase(tuple(c for c in (ctx, self.low, self.small) if c is not None), phases, "compression"):
            out = self._compress(pv, N, slots)
            t0 = time.perf_counter()
            out = self._switch(out)
            switched = time.perf_counter() - t0
        phases["compression"]["ring_switch_s"] = switched if self.small is not None else float("nan")
        return Digest(out, N, lay, phases)

    def _compress(self, pv: list, N: int, slots) -> Ciphertext:
        """The compressed PV blocks (at the compression's primes: moved to its context where there is one), the
        wide MatMul (:meth:`_switch` then makes the digest)."""
        ctx, low = self.ctx, self.low
        if low is not ctx:
            pv = [low.adopt(x) for x in pv]
        plains = self._plains.get(N)                 # SophOMD's, after precompute(N)
        return wide_matvec(low, pv, None if plains else _compression_entries(self.layout, N, slots), self.layout.K, N,
                           b=self.layout.b_compress, plains=plains)

    def _switch(self, out: Ciphertext) -> Ciphertext:
        """The digest: the compression's output at one prime, ring-switched to the digest's subring where there
        is one (:meth:`_fold`, :meth:`Context.descend`)."""
        if self.small is None:
            return self.low.keep_primes(out, 1)
        return self.small.descend(self.low.keep_primes(self._fold(out), 1))

    def _fold(self, out: Ciphertext) -> Ciphertext:
        """The digest's K slots where ring switching keeps them whole (:meth:`Context.subring`): slots j < n'/2 of
        row 0 stay, j in [n'/2, K) move to row 1 (one row swap), everything else is zeroed, and every slot kept is
        multiplied by d (the descent divides by it)."""
        low, lay, d = self.low, self.layout, self.small.descent
        half, K = self.small.slots // 2, lay.K
        mask = np.zeros(lay.n, np.int64)
        mask[:min(K, half)] = d
        folded = low.mul_plain(out, mask)
        if K > half:
            mask = np.zeros(lay.n, np.int64)
            mask[half:K] = d
            folded = low.add(folded, low.swap_columns(low.mul_plain(out, mask)))
        return folded

    def _affine(self, clues: Clue) -> list[list]:
        """Per block of n messages, the l ciphertexts of d_j = B_j - A_j sk."""
        lay, ctx = self.layout, self.ctx
        N, n = len(clues.a), lay.n
        prods = tall_matvec(ctx, self.key.sk, [_affine_entries(clues.a, j, lay.ps.q) for j in range(lay.ps.l)], N,
                            lay.ps.n, b=lay.b_affine)
        s = math.ceil(N / n)
        b = np.zeros((s * n, lay.ps.l), np.int64)
        b[:N] = clues.b
        return [[ctx.add(prods[j][i], b[i * n:(i + 1) * n, j]) for j in range(lay.ps.l)] for i in range(s)]


def check_ring(ps, n: int) -> None:
    """``ps`` is a PSParams whose n' divides the BFV row of n/2 slots (sparse packing)."""
    if not isinstance(ps, PSParams):
        raise TypeError(f"ps must be PSParams, got {type(ps).__name__}")
    if (n // 2) % ps.n:
        raise ValueError(f"n'={ps.n} must divide the BFV row of n/2={n // 2} slots (sparse packing)")


@functools.lru_cache(maxsize=None)
def _kernels() -> dict | None:
    """:mod:`hepkg.omr.kernels`' blocks by name (``compression``, ``affine``) where numba is installed (loaded, or
    compiled, once: one entry each computed), else None."""
    try:
        from .kernels import affine_block, compression_block
    except ImportError:
        return None
    one = np.zeros(1, np.int64)
    compression_block(np.zeros(4, np.int64), np.zeros(2, np.int64), one, one[:, None], 1, 1, 1, 2)
    affine_block(np.zeros((1, 2), np.int64), 0, one, one[:, None], 2)
    return dict(compression=compression_block, affine=affine_block)


def _kernel(name: str, compiled: bool | None):
    """The compiled block ``name`` where ``compiled`` is not False and numba is installed, else None (numpy's path);
    ImportError where ``compiled`` is True and numba is not installed."""
    kernels = _kernels() if compiled is not False else None
    if compiled and kernels is None:
        raise ImportError(f"the compiled {name} entries need numba (pip install numba)")
    return kernels and kernels[name]


def _compression_entries(lay: Layout, N: int, slots, *, compiled: bool | None = None):
    """Entries of [C; D_1; ...; D_t] (rows beyond (t + 1) k are zero): C[j][c] = (c + 1)^(j + 1) mod p.
    ``compiled``: numba's one-pass kernel (default: where numba is installed) or numpy's gathers."""
    p, k = lay.ps.q, lay.k
    kernel = _kernel("compression", compiled)
    power = np.ones((k + 1, N), np.int64)
    base = np.arange(1, N + 1, dtype=np.int64)
    for j in range(1, k + 1):
        power[j] = power[j - 1] * base % p
    weights = np.zeros((lay.t + 2, N), np.int64)       # row t + 1: the zero rows past (t + 1) k
    weights[0] = 1
    if lay.t:
        weights[1:-1] = np.asarray(slots, dtype=np.int64).T % p
    # along a diagonal a slot's row and column both advance by one from the next slot's (its weight row every k
    # slots): power j of column c is stored skewed, at (c - j + k)(k + 1) + j = (c + k)(k + 1) - j k, so that
    # neighbouring slots read neighbouring words
    skew = np.zeros((N + k) * (k + 1), np.int64)
    js, cs = np.arange(k + 1)[:, None], np.arange(N)
    skew[(cs + k) * (k + 1) - js * k] = power
    weights = weights.ravel()

    def entries(rows, cols):
        """Flat gathers at offsets computed once per slot; the product reduced in place."""
        if kernel is not None:
            return kernel(skew, weights, rows, cols, k, lay.t + 1, N, p)
        idx = np.subtract((cols + k) * (k + 1), (rows % k + 1) * k)
        out = np.take(skew, idx)
        np.add(np.minimum(rows // k, lay.t + 1) * N, cols, out=idx)
        out *= np.take(weights, idx, mode="clip")
        return np.remainder(out, p, out=out)
    return entries


def _affine_entries(a: np.ndarray, j: int, p: int, *, compiled: bool | None = None):
    """Entries of the affine transform's j-th matrix -Neg^j(A) (row r: -Neg^j(a_r), ``a`` the (N, n') clue
    vectors), mod p. ``compiled``: numba's kernel, slot by slot (default: where numba is installed), or numpy's
    gathers."""
    kernel, nn = _kernel("affine", compiled), a.shape[1]

    def entries(rows, cols):
        if kernel is not None:
            return kernel(a, j, rows, cols, p)
        v = a[rows, (j - cols) % nn]
        return np.where(cols <= j, p - v, v) % p      # -Neg^j(a_r)[c]
    return entries


class _phase:
    """Wall seconds, seconds inside the library (encoding apart), op counts and in-run seconds per op
    (:func:`hepkg.bench.costmodel.observed_costs`) of one detector phase, over one context or a tuple of them."""

    def __init__(self, ctx, out: dict, name: str):
        self.ctxs = list({id(c): c for c in (ctx if isinstance(ctx, tuple) else (ctx,))}.values())
        self.out, self.name = out, name

    def __enter__(self):
        self.regions = [c.counting() for c in self.ctxs]
        self.counts = [r.__enter__() for r in self.regions]
        self.t0 = time.perf_counter()

    def __exit__(self, *exc):
        wall = time.perf_counter() - self.t0
        for region in reversed(self.regions):
            region.__exit__(*exc)
        if exc[0] is None:
            ops = OpCounts()
            for one in self.counts:
                ops.update(one)
                ops.seconds.update(one.seconds)
                ops.depth = max(ops.depth, one.depth)
            self.out[self.name] = dict(wall_s=wall, he_s=ops.he_s, encode_s=float(ops.seconds.get("encode", 0.0)),
                                       costs=observed_costs(ops), **ops.as_dict())
        return False
