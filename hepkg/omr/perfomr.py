"""PerfOMR / PerfOMD [LTW24b] on the backend protocol, the SophOMR paper's baseline (Sec. 3, Alg. 7).

The detector follows the SophOMR authors' benchmark fork of PerfOMR (keewoolee/PerfOMR, read, not copied):

1. Affine transform by the single-key MatMul (Alg. 7: ``b = n'``, rotation key 1 only) and the range check,
   per block of n messages, as SophOMR's detector (:class:`hepkg.omr.detector.Detector`);
2. **Bundling** (Sec. 3.4.4): the nu member blocks of a bundle ciphertext are added, so slot i of bundle
   ciphertext c counts the pertinent messages of bundle j = c n + i, whose members are j + m B (m < nu,
   B = s' n bundles);
3. **PVUnpack** (Sec. 3.4.1, :mod:`hepkg.omr.unpack`): SlotToCoeff at four primes, then oblivious expansion at
   ``expand_limbs`` primes (the authors' 2): one ciphertext per bundle, its count in every slot. Switching primes
   keeps the relative noise, so the expansion's primes do not decide whether a digest decodes: the noise trace
   (:func:`hepkg.omr.experiments.noise_trace`, ``artifacts/omr/noise_trace``) measures the same budget at 2 and
   at 3 primes, and at OpenFHE's own Q = 840 bits SlotToCoeff, the expansion and the bucket products and sums
   spend all the range check leaves. Hence ``bfv-omr-perf`` keeps the authors' modulus
   (at least 857 bits), not OpenFHE's own 840. The expansion's monomial products are pointwise products with
   pre-encoded monomials: OpenFHE keeps ciphertexts in NTT form, where that is the cheap form of SEAL's
   coefficient shift
   (openfhe-python exposes no coefficients to shift). Its rotation keys are the context's, made at the top
   level: OpenFHE switches a lower-level ciphertext with the key's primes it needs, so only the key's size,
   not the time, differs from SEAL's keys made at the level of use. Building and encoding SlotToCoeff's n
   plaintext diagonals is the part PerfOMR excludes as *preprocessing* (Remark 4): it is timed apart;
4. **Compression** (Sec. 3.4.2-3.4.3): every leaf times its bundle's index plaintext (in each of 16
   repetitions, its bucket of 400 gets the two base-p digits of j and a counter 1) and, for PerfOMR, its
   payload plaintext (the bundle's nu t payload slots times a random weight, in each of K = 53 ceil(k / 50)
   buckets), summed into one index and one payload ciphertext, sent at one prime.

The receiver decrypts the buckets and decodes them (:func:`hepkg.omr.decode.perfomr_decode`): pertinent
bundles with their counts, and (PerfOMR) every member's payload, as PerfOMR delivers with nu > 1.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ..linalg.rectangular import tall_counts, tall_steps
from .board import PAYLOAD_BYTES, check_slots, payload_slots
from .compress import INDEX_SLOTS, PerfOMRCode
from .decode import perfomr_decode, perfomr_decode_indices
from .detector import DetectionKey, Detector, Receiver, _phase, check_ring
from .rangecheck import range_check, range_check_counts
from .signaling import Clue, PSParams
from .unpack import expand, slots_to_coeffs, unpack_counts, unpack_steps

__all__ = ["PERF_SCHEMES", "PerfLayout", "perf_layout", "perf_counts", "PerfDigest", "bundle_payloads", "PerfReceiver", "PerfDetector"]

PERF_SCHEMES = ("perfomr", "perfomd")
#: Data primes of the authors' SlotToCoeff and expansion contexts (the default :attr:`PerfLayout.expand_limbs`).
UNPACK_LIMBS, EXPAND_LIMBS = 4, 2
_CHUNK = 32               # leaves per accumulated dot product


@dataclass(frozen=True)
class PerfLayout:
    """What the receiver and the detector agree on: scheme, PS parameters, k, payload slots t per message
    (0 for PerfOMD), slot count n, bundle size nu, SlotToCoeff's baby steps, the hashing seed and the primes
    the oblivious expansion runs at."""
    scheme: str
    ps: PSParams
    k: int
    t: int
    n: int
    nu: int
    b_unpack: int
    repetitions: int = 16
    buckets: int = 400
    seed: int = 0
    expand_limbs: int = EXPAND_LIMBS

    @property
    def b_affine(self) -> int:
        """Alg. 7: the whole n' diagonals as baby steps, one rotation key."""
        return self.ps.n

    @property
    def K(self) -> int:
        """Payload buckets: 53 ceil(k / 50)."""
        return 53 * math.ceil(self.k / 50)

    @property
    def steps(self) -> list[int]:
        """Rotation keys: Alg. 7's 1, SlotToCoeff's 1 and b, the expansion's n/4, ..., 1 (the row swap on top)."""
        return sorted(set(tall_steps(self.ps.n, self.b_affine)) | set(unpack_steps(self.n, self.b_unpack)))

    @property
    def payload_cts(self) -> int:
        """Payload ciphertexts: the K buckets of nu t slots each, over n-slot ciphertexts (0 for PerfOMD)."""
        return math.ceil(self.K * self.nu * self.t / self.n)

    def check_runs(self) -> None:
        """ValueError unless the detector and receiver run this layout: they hold one payload ciphertext (at
        n = 2^15, nu <= 2); a larger nu (8 payload ciphertexts at nu = 16) is counted (:func:`perf_counts`), not run."""
        if self.payload_cts > 1:
            raise ValueError(f"{self.K} payload buckets of nu t = {self.nu} x {self.t} slots need {self.payload_cts} "
                             f"ciphertexts of {self.n} slots; hepkg's PerfOMR runs one (counted only: perf_counts)")

    def bundle_cts(self, N: int) -> int:
        """s': bundle ciphertexts for N messages."""
        return math.ceil(N / (self.nu * self.n))

    def code(self, N: int) -> PerfOMRCode:
        """The seeded hashing of the s' n bundles of a board of N messages."""
        return PerfOMRCode(self.bundle_cts(N) * self.n, self.ps.q, self.k, self.repetitions, self.buckets,
                           self.seed, self.nu)


def perf_layout(ps: PSParams, n: int, *, scheme: str = "perfomr", k: int = 50, payload_bytes: int = PAYLOAD_BYTES,
                nu: int = 2, b_unpack: int | None = None, repetitions: int = 16, buckets: int = 400,
                seed: int = 0, expand_limbs: int = EXPAND_LIMBS) -> PerfLayout:
    """The layout for slot count n (baby steps default to the authors' 2^ceil(log2 sqrt(n/4)): 128 at 2^15); one
    whose payload needs more than one ciphertext is counted, not run (:meth:`PerfLayout.check_runs`)."""
    if scheme not in PERF_SCHEMES:
        raise ValueError(f"scheme must be one of {PERF_SCHEMES}, got {scheme!r}")
    check_ring(ps, n)
    if not isinstance(nu, (int, np.integer)) or isinstance(nu, bool) or not 1 <= nu < ps.q:
        raise ValueError(f"the bundle size nu must be an integer in [1, p), got {nu!r}")
    t = payload_slots(payload_bytes, ps.q) if scheme == "perfomr" else 0
    b = b_unpack or 1 << math.ceil(math.log2(math.sqrt(n / 4)))
    if not isinstance(b, (int, np.integer)) or b < 1 or (n // 2) % b:
        raise ValueError(f"b_unpack={b!r} must be a positive divisor of n/2 = {n // 2}")
    if not isinstance(expand_limbs, (int, np.integer)) or isinstance(expand_limbs, bool) \
            or not 1 <= expand_limbs <= UNPACK_LIMBS:
        raise ValueError(f"expand_limbs must be an integer in [1, {UNPACK_LIMBS}], got {expand_limbs!r}")
    lay = PerfLayout(scheme, ps, int(k), t, n, int(nu), int(b), int(repetitions), int(buckets), int(seed),
                     int(expand_limbs))
    if lay.repetitions * lay.buckets * INDEX_SLOTS > n:
        raise ValueError(f"{lay.repetitions} x {lay.buckets} index buckets of {INDEX_SLOTS} slots exceed {n} slots")
    return lay


def perf_counts(lay: PerfLayout, N: int) -> dict[str, dict[str, int]]:
    """Per phase, the counted ops of :meth:`PerfDetector.digest` for N messages, by formula (SlotToCoeff's
    encodings are the preprocessing)."""
    s, s2 = math.ceil(N / lay.n), lay.bundle_cts(N)
    affine = tall_counts(N, lay.ps.n, lay.n, lay.b_affine, matrices=lay.ps.l)
    unpack = unpack_counts(lay.n, lay.b_unpack)
    leaves = s2 * lay.n * (1 + lay.payload_cts)   # each leaf times the index and each payload plaintext
    return {"affine": {k: affine[k] for k in ("mul_pt", "rotate")} | dict(
                keyswitch=affine["rotate"], encode=affine["mul_pt"] + s * lay.ps.l, add_pt=s * lay.ps.l),
            "range_check": {"mul_ct": s * range_check_counts(lay.ps.bound, lay.ps.q, lay.ps.l)["mul_ct"]},
            "compression": dict(
                mul_pt=s2 * (unpack["slot_to_coeff"]["mul_pt"] + unpack["expansion"]["mul_pt"]) + leaves,
                rotate=s2 * (unpack["slot_to_coeff"]["rotate"] + unpack["expansion"]["rotate"]),
                swap=s2 * (unpack["slot_to_coeff"]["swap"] + unpack["expansion"]["swap"]),
                keyswitch=s2 * (unpack["slot_to_coeff"]["keyswitch"] + unpack["expansion"]["keyswitch"]),
                encode=s2 * unpack["expansion"]["encode"] + leaves),
            "preprocess": {"encode": s2 * unpack["slot_to_coeff"]["encode"]}}


@dataclass
class PerfDigest:
    """The index (and, for PerfOMR, payload) ciphertexts of a board of N messages, with each phase's costs."""
    index: object
    payload: object | None
    N: int
    layout: PerfLayout
    phases: dict

    @property
    def ciphertexts(self) -> list:
        return [c for c in (self.index, self.payload) if c is not None]


def bundle_payloads(slots: np.ndarray, lay: PerfLayout, N: int) -> np.ndarray:
    """(B, nu t): bundle j's members' payload slots side by side (zeros beyond N)."""
    B = lay.bundle_cts(N) * lay.n
    pad = np.zeros((lay.nu * B, lay.t), np.int64)
    pad[:N] = slots
    return pad.reshape(lay.nu, B, lay.t).transpose(1, 0, 2).reshape(B, lay.nu * lay.t)


class PerfReceiver(Receiver):
    """The PerfOMR receiver: the same detection key as SophOMR's, its compression (PVUnpack) at the top-level
    keys; decodes bundle buckets."""

    def __init__(self, ctx, sk, lay: PerfLayout):
        super().__init__(ctx, sk, lay, lowered=False)

    def _decrypted(self, digest: PerfDigest, timings: dict | None = None) -> list[np.ndarray]:
        if not isinstance(digest, PerfDigest) or digest.layout != self.layout:
            raise ValueError("the digest was made for another layout (scheme, PS parameters, k, nu or seed)")
        self.layout.check_runs()
        own = self._received(digest.ciphertexts, timings)
        return [self.ctx.decrypt(c, signed=False) % self.layout.ps.q for c in own]

    @staticmethod
    def _buckets(index: np.ndarray, code: PerfOMRCode) -> np.ndarray:
        return index[:code.repetitions * INDEX_SLOTS * code.buckets].reshape(
            code.repetitions, INDEX_SLOTS, code.buckets).transpose(0, 2, 1)

    @staticmethod
    def bucket_slots(buckets: np.ndarray, n: int) -> np.ndarray:
        """The n slots of the index ciphertext holding ``buckets`` (repetitions, buckets, 3): :meth:`_buckets`' inverse."""
        flat = np.asarray(buckets).transpose(0, 2, 1).ravel()
        return np.pad(flat, (0, n - flat.size))

    def index_buckets(self, digest: PerfDigest) -> np.ndarray:
        """The decrypted index buckets, (repetitions, buckets, 3) as
        :func:`~hepkg.omr.compress.perfomr_compress_indices` computes them in plaintext."""
        return self._buckets(self._decrypted(digest)[0], self.layout.code(digest.N))

    def retrieve(self, digest: PerfDigest, *, timings: dict | None = None):
        """(sorted pertinent bundles, their counts, their (|I|, nu t) payload slots or None for PerfOMD); ``timings``:
        see :meth:`Receiver._received`."""
        lay = self.layout
        code = lay.code(digest.N)
        own = self._decrypted(digest, timings)
        buckets = self._buckets(own[0], code)
        if lay.scheme == "perfomd":
            bundles, counts = perfomr_decode_indices(buckets, code, counts=True)
            return bundles, counts, None
        e = own[1][:lay.K * lay.nu * lay.t].reshape(lay.K, lay.nu * lay.t)
        return perfomr_decode(buckets, e, code)


class PerfDetector(Detector):
    """The PerfOMR server: digests a board with the receiver's detection key (no secret key). Its compression
    multiplies PV by ciphertexts at every prime: its range check keeps them (``drops`` off)."""

    def __init__(self, key: DetectionKey):
        if not isinstance(key, DetectionKey) or not isinstance(key.layout, PerfLayout):
            raise TypeError("the PerfOMR detector needs a DetectionKey made for a PerfLayout")
        key.layout.check_runs()
        super().__init__(key, drops=False)

    def digest(self, clues: Clue, slots: np.ndarray | None = None, *, trace=None) -> PerfDigest:
        """The digest of N messages: clues (a batch of N) and, for PerfOMR, their (N, t) payload slots (digits in [0, p): others raise).

        ``trace(stage, ct)``, if given, sees the ciphertexts between stages (diagnostics such as
        :func:`hepkg.omr.experiments.noise_trace`, never in a timed run): ``range_check`` (block 0), ``bundle``,
        ``slot_to_coeff`` (at four primes), ``index_sum`` (before the switch to one prime) and ``index``."""
        trace = trace or (lambda stage, ct: None)
        lay, ctx = self.layout, self.ctx
        if not isinstance(clues, Clue) or clues.params != lay.ps or not clues.batched:
            raise ValueError(f"clues must be a batch of Clue for {lay.ps.describe()}")
        N = len(clues.a)
        code = lay.code(N)
        if lay.scheme == "perfomr":
            bundle_slots = bundle_payloads(check_slots(slots, N, lay.t, lay.ps.q, "PerfOMR"), lay, N)
        phases: dict = {}
        with _phase(ctx, phases, "affine"):
            d = self._affine(clues)
        with _phase(ctx, phases, "range_check"):
            pv = [range_check(ctx, block, lay.ps.bound) for block in d]
            if N % lay.n:                                     # messages beyond N would read as pertinent
                pv[-1] = ctx.mul_plain(pv[-1], (np.arange(lay.n) < N % lay.n).astype(np.int64))
        trace("range_check", pv[0])
        with _phase(ctx, phases, "compression"):
            index, payload = self._compress(pv, code, bundle_slots if lay.scheme == "perfomr" else None, phases,
                                            trace)
        s2c, comp = phases.pop("slot_to_coeff"), phases["compression"]
        pre = s2c["wall_s"] - (s2c["he_s"] - s2c["encode_s"])     # SlotToCoeff less its homomorphic operations
        phases["preprocess"] = dict(wall_s=pre, he_s=s2c["encode_s"], encode_s=s2c["encode_s"], costs={},
                                    encode=s2c["encode"])
        comp.update(wall_s=comp["wall_s"] - pre, he_s=comp["he_s"] - s2c["encode_s"],
                    encode_s=comp["encode_s"] - s2c["encode_s"], encode=comp["encode"] - s2c["encode"])
        return PerfDigest(index, payload, N, lay, phases)

    def _compress(self, pv: list, code: PerfOMRCode, bundle_slots, phases: dict, trace):
        """PVUnpack of each bundle ciphertext, each leaf into the index (and payload) buckets; the sums at one prime."""
        lay, ctx = self.layout, self.ctx
        s2 = code.N // lay.n
        acc: list = [None, None]
        for c in range(s2):
            members = [pv[m * s2 + c] for m in range(lay.nu) if m * s2 + c < len(pv)]
            bundle = members[0]
            for x in members[1:]:
                bundle = ctx.add(bundle, x)
            if c == 0:
                trace("bundle", bundle)
            one: dict = {}
            with _phase(ctx, one, "slot_to_coeff"):
                coeffs = slots_to_coeffs(ctx, ctx.keep_primes(bundle, UNPACK_LIMBS), b=lay.b_unpack)
            total = phases.setdefault("slot_to_coeff", dict.fromkeys(("wall_s", "he_s", "encode_s", "encode"), 0))
            for key in total:
                total[key] += one["slot_to_coeff"][key]
            low = ctx.keep_primes(coeffs, lay.expand_limbs)
            if c == 0:
                trace("slot_to_coeff", coeffs)
            leaves = expand(ctx, low)
            while chunk := list(itertools.islice(leaves, _CHUNK)):
                js = c * lay.n + np.array([i for i, _ in chunk])
                cts = [leaf for _, leaf in chunk]
                plains = [self._index_plaintexts(js, code)]
                if bundle_slots is not None:
                    plains.append(self._payload_plaintexts(js, code, bundle_slots))
                for a, pts in enumerate(plains):
                    term = ctx.dot_plain(cts, list(pts))
                    acc[a] = term if acc[a] is None else ctx.add(acc[a], term)
        trace("index_sum", acc[0])
        out = tuple(ctx.keep_primes(a, 1) if a is not None else None for a in acc)
        trace("index", out[0])
        return out

    def _index_plaintexts(self, js: np.ndarray, code: PerfOMRCode) -> np.ndarray:
        """(len(js), n): in repetition r, bucket h(r, j) gets (j // p, j % p, 1) in its three slot groups."""
        p, reps, nb = code.p, code.repetitions, code.buckets
        out = np.zeros((len(js), self.layout.n), np.int64)
        pos = (np.arange(reps)[:, None] * INDEX_SLOTS + np.arange(INDEX_SLOTS)) * nb        # (reps, 3)
        pos = pos[None] + code.assignment[:, js].T[:, :, None]                              # (C, reps, 3)
        vals = np.stack([js // p, js % p, np.ones_like(js)], axis=1)                         # (C, 3)
        np.put_along_axis(out, pos.reshape(len(js), -1), np.repeat(vals[:, None], reps, 1).reshape(len(js), -1), 1)
        return out

    def _payload_plaintexts(self, js: np.ndarray, code: PerfOMRCode, bundle_slots: np.ndarray) -> np.ndarray:
        """(len(js), n): payload bucket c holds W[c, j] times bundle j's nu t payload slots."""
        lay, p = self.layout, code.p
        out = np.zeros((len(js), lay.n), np.int64)
        vals = code.weights[:, js].T[:, :, None] * bundle_slots[js][:, None, :] % p         # (C, K, nu t)
        out[:, :vals.shape[1] * vals.shape[2]] = vals.reshape(len(js), -1)
        return out
