"""A seeded bulletin board BB = ((x_1, sig_1), ..., (x_N, sig_N)) (Sec. 2.5.1) with its ground truth.

Payloads are 612 bytes, the Zcash transaction size the OMR papers assume (Sec. 4.1), and travel
in BFV slots mod the plaintext modulus p, which equals the PS modulus q' (Table 4 beside Table 6:
Detect computes the clues' affine part in the slots). A payload of B bytes is the big-endian
integer X < 256^B written in base p, least significant digit in slot 0, over the fewest slots t
with p^t >= 256^B: t = 250 for p = 786433 (SophOMR; the authors' code takes ceil(8B / log2 p)) and
306 for p = 65537 (PerfOMR; the paper's "t = 300"). This is a bijection between payloads and the
slot vectors encoding X < 256^B. (The authors' benchmark draws slots uniformly mod p instead.)

A board of N messages holds N x n' clue entries: 0.5 GiB of int64 at N = 2^16.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .signaling import SOPHOMR, Clue, PSParams, PublicKey, SecretKey, keygen, random_signal, signal

__all__ = ["PAYLOAD_BYTES", "Board", "bulletin_board", "payload_slots", "bytes_to_slots", "slots_to_bytes", "check_slots"]

#: A Zcash transaction (Sec. 4.1).
PAYLOAD_BYTES = 612
_LIMB = 32           # bits per limb of the base conversions; p < 2^31 keeps every step below 2^63
_MASK = (1 << _LIMB) - 1


def _positive(name: str, v, minimum: int = 1) -> int:
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {v!r}")
    return int(v)


def _modulus(p) -> int:
    if not isinstance(p, (int, np.integer)) or isinstance(p, bool) or not 2 <= p < 2 ** 31:
        raise ValueError(f"plaintext modulus p must be an integer in [2, 2^31), got {p!r}")
    return int(p)


def payload_slots(nbytes: int, p: int) -> int:
    """t = the fewest base-p digits that hold any nbytes-byte payload (p^t >= 256^nbytes)."""
    nbytes, p = _positive("nbytes", nbytes), _modulus(p)
    bits = 8 * nbytes
    t = max(1, math.ceil(bits / math.log2(p)))      # the float guess, then exact integer checks
    while p ** t < 1 << bits:
        t += 1
    while t > 1 and p ** (t - 1) >= 1 << bits:
        t -= 1
    return t


def check_slots(slots, N: int, t: int, p: int, scheme: str) -> np.ndarray:
    """The detector's input ``slots`` as int64 digits, if it is an integer array of shape (N, t) with every
    value in [0, p); ValueError otherwise, naming the first value outside (reduced mod p, it would reach the
    receiver as another payload). Checked in the input's own dtype, before any cast."""
    s = np.asarray(slots) if slots is not None else None
    if s is None or s.shape != (N, t) or s.dtype.kind not in "iu":
        raise ValueError(f"{scheme} needs the payload slots as an integer array of shape (N, t) = ({N}, {t})")
    outside = (s < 0) | (s >= p)
    if outside.any():
        m, j = np.argwhere(outside)[0]
        raise ValueError(f"{scheme}: payload slot {j} of message {m} is {int(s[m, j])}, outside [0, p) for p = {p}: "
                         f"slots are base-p digits (see bytes_to_slots), never reduced")
    return s.astype(np.int64)


def bytes_to_slots(payloads, p: int) -> np.ndarray:
    """(N, B) uint8 payloads -> (N, t) int64 base-p digits, least significant first."""
    x = np.asarray(payloads)
    if x.ndim != 2 or x.dtype != np.uint8 or x.shape[1] == 0:
        raise ValueError(f"payloads must be a 2-D uint8 array (messages x bytes), got shape {x.shape}, dtype {x.dtype}")
    p = _modulus(p)
    count, nbytes = x.shape
    t = payload_slots(nbytes, p)
    padded = np.zeros((count, -(-nbytes // 4) * 4), np.uint8)
    padded[:, padded.shape[1] - nbytes:] = x
    limbs = padded.view(">u4").astype(np.int64).T.copy()     # (L, N), most significant limb first
    out = np.empty((count, t), np.int64)
    top = 0
    for k in range(t):                                        # long division by p, limb by limb
        rem = np.zeros(count, np.int64)
        for j in range(top, len(limbs)):
            limbs[j], rem = np.divmod((rem << _LIMB) | limbs[j], p)
        out[:, k] = rem
        while top < len(limbs) and not limbs[top].any():
            top += 1
    return out


def slots_to_bytes(slots, p: int, nbytes: int = PAYLOAD_BYTES) -> np.ndarray:
    """The inverse of :func:`bytes_to_slots`: (N, t) digits mod p -> (N, nbytes) uint8."""
    s = np.asarray(slots)
    p, nbytes = _modulus(p), _positive("nbytes", nbytes)
    t = payload_slots(nbytes, p)
    if s.ndim != 2 or s.shape[1] != t or not np.issubdtype(s.dtype, np.integer):
        raise ValueError(f"slots must be an integer array of shape (N, {t}) for {nbytes}-byte payloads mod {p}, "
                         f"got shape {s.shape}, dtype {s.dtype}")
    if s.size and (s.min() < 0 or s.max() >= p):
        raise ValueError(f"slot values must lie in [0, p={p}), got [{s.min()}, {s.max()}]")
    count, nlimbs = len(s), -(-nbytes // 4)
    limbs = np.zeros((nlimbs, count), np.int64)              # least significant limb first
    for m, k in enumerate(range(t - 1, -1, -1), start=1):     # Horner: X <- X p + digit
        carry = s[:, k].astype(np.int64)
        for j in range(min(nlimbs, -(-m * p.bit_length() // _LIMB))):
            cur = limbs[j] * p + carry
            limbs[j], carry = cur & _MASK, cur >> _LIMB
        if carry.any():
            break
    top_bits = 8 * nbytes - _LIMB * (nlimbs - 1)
    if carry.any() or (limbs[-1] >> top_bits).any():
        bad = int(np.flatnonzero(carry | (limbs[-1] >> top_bits))[0])
        raise ValueError(f"slots of message {bad} encode an integer >= 256^{nbytes}: not a {nbytes}-byte payload")
    out = limbs[::-1].T.astype(">u4", order="C").view(np.uint8)
    return np.ascontiguousarray(out[:, out.shape[1] - nbytes:])


@dataclass(frozen=True, eq=False)
class Board:
    """N messages: ``clues`` (a batch of PS clues), ``payloads`` (N, B) bytes and their ``slots`` (N, t) mod p,
    the ``pertinent`` indices (sorted) addressed to the receiver who holds ``sk`` / ``pk``."""
    clues: Clue
    payloads: np.ndarray
    slots: np.ndarray
    pertinent: np.ndarray
    sk: SecretKey
    pk: PublicKey

    @property
    def params(self) -> PSParams:
        return self.sk.params

    @property
    def p(self) -> int:
        """The BFV plaintext modulus, = q'."""
        return self.params.q

    @property
    def N(self) -> int:
        return len(self.payloads)

    @property
    def pertinency(self) -> np.ndarray:
        """The pertinency vector PV: 1 at the receiver's messages, 0 elsewhere."""
        pv = np.zeros(self.N, np.int64)
        pv[self.pertinent] = 1
        return pv


def bulletin_board(N: int, k: int, params: PSParams = SOPHOMR, *, payload_bytes: int = PAYLOAD_BYTES,
                   others: int = 8, seed: int | np.random.Generator = 0) -> Board:
    """A board of N uniformly random payloads, k of them (at random positions) signalled to one receiver.

    The other N - k messages go to ``others`` further receivers (keys made here, one drawn
    uniformly per message); ``others=0`` gives them uniformly random clues instead, as the
    authors' benchmark does (RLWE makes the two indistinguishable).
    """
    N = _positive("N", N)
    k = _positive("k", k, 0)
    if k > N:
        raise ValueError(f"k={k} pertinent messages do not fit on a board of N={N}")
    payload_bytes, others = _positive("payload_bytes", payload_bytes), _positive("others", others, 0)
    if not isinstance(params, PSParams):
        raise TypeError(f"params must be PSParams, got {type(params).__name__}")
    rng = np.random.default_rng(seed)
    sk, pk = keygen(params, rng)
    pertinent = np.sort(rng.choice(N, size=k, replace=False)).astype(np.int64)
    rest = np.setdiff1d(np.arange(N), pertinent)
    a = np.empty((N, params.n), np.int64)
    b = np.empty((N, params.l), np.int64)

    def post(idx: np.ndarray, clue: Clue) -> None:
        a[idx], b[idx] = clue.a, clue.b

    post(pertinent, signal(pk, params, rng, size=k))
    if others == 0:
        post(rest, random_signal(params, rng, size=len(rest)))
    else:
        to = rng.integers(others, size=len(rest))
        for o in range(others):
            idx = rest[to == o]
            post(idx, signal(keygen(params, rng)[1], params, rng, size=len(idx)))
    payloads = rng.integers(0, 256, size=(N, payload_bytes), dtype=np.uint8)
    return Board(Clue(a, b, params), payloads, bytes_to_slots(payloads, params.q), pertinent, sk, pk)
