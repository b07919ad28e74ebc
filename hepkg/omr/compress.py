"""The digest compressions in plaintext: the numpy twins that the detector's encrypted results are checked against.

Message m of a board of N (0-based, as in :mod:`hepkg.omr.board`) is column i = m + 1 below.
Everything is exact integer arithmetic mod a prime p < 2^31 (the BFV plaintext modulus).

SophOMR (Sec. 2.4 after [CLPY24], Sec. 4.1):

- C is the k x N Vandermonde-like matrix of Eq. 3, C[j][i] = i^j mod p for j = 1..k, i = 1..N;
  it needs p > N, so that any k distinct columns are linearly independent.
- Index compression (Alg. 2): w = C v for the binary pertinency vector v = PV.
- Payload compression (Alg. 4 with the stacking of Sec. 4.1): with PL_s the length-N vector of
  payload slot s (s = 1..t) and D_s = C diag(PL_s), e_s = D_s v = C (PL_s (.) v). The detector
  computes [C; D_1; ...; D_t] v with one ((t + 1) k) x N MatMul.

PerfOMR (Sec. 3.4.2-3.4.3, [LTW24b]):

- Index buckets: in each of ``repetitions`` independent rounds every message is hashed into one
  of ``buckets`` buckets; a bucket holds 3 slots, Acc as two base-p digits of m (so N <= p^2)
  and Ctr: ``[..., 0] = sum v_m floor(m / p)``, ``[..., 1] = sum v_m (m mod p)``,
  ``[..., 2] = sum v_m`` (the slot layout of the authors' code; 16 x 400 x 3 is PerfOMR's size).
- Payloads: a random linear code, ``payload_buckets`` x N nonzero weights (K = 53 ceil(k / 50)),
  E = W (PL (.) v): every message enters every payload bucket (the paper's "random K x N matrix";
  the authors' code sets its per-message repetition equal to the bucket count).
- The hashing and the weights come from ``numpy.random.default_rng(seed)``: the detector sends
  the seed, the receiver rebuilds the same :class:`PerfOMRCode`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from hepkg.rns.arith import is_prime

__all__ = ["vandermonde", "compress_indices", "compress_payloads", "stacked_matrix", "PerfOMRCode",
           "perfomr_compress_indices", "perfomr_compress_payloads", "INDEX_SLOTS"]

#: Slots per PerfOMR index bucket: two base-p digits of the index, then the counter.
INDEX_SLOTS = 3
_LIMB = 16            # (A @ B) mod p: 16-bit limbs, products < 2^32 ...
_MASK = (1 << _LIMB) - 1
_CHUNK = 1 << 20      # ... and sums of 2^20 of them < 2^52, exact in float64


def _prime(p) -> int:
    if not isinstance(p, (int, np.integer)) or isinstance(p, bool) or not 2 < p < 2 ** 31 or not is_prime(int(p)):
        raise ValueError(f"modulus p must be an odd prime below 2^31 (arithmetic over F_p), got {p!r}")
    return int(p)


def _count(name: str, v, minimum: int = 1) -> int:
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {v!r}")
    return int(v)


def _residues(x, ndim: int, p: int, what: str) -> np.ndarray:
    """x as an int64 array of ``ndim`` dimensions with every entry in [0, p)."""
    x = np.asarray(x)
    if x.dtype == bool:
        x = x.astype(np.int64)
    if not np.issubdtype(x.dtype, np.integer) or x.ndim != ndim:
        raise ValueError(f"{what} must be a {ndim}-D integer array, got shape {x.shape}, dtype {x.dtype}")
    if x.size and (x.min() < 0 or x.max() >= p):
        raise ValueError(f"{what} is not reduced mod p={p}: values in [{x.min()}, {x.max()}]")
    return x.astype(np.int64, copy=False)


def _columns(N: int, p: int) -> None:
    if N >= p:
        raise ValueError(f"SophOMR's C needs p > N (distinct nonzero columns 1..N), got N={N}, p={p}")


def _powers(x: np.ndarray, k: int, p: int) -> np.ndarray:
    """The k x len(x) matrix x^j mod p, j = 1..k (x in [0, p))."""
    out = np.empty((k, len(x)), np.int64)
    row = np.asarray(x, np.int64) % p
    for j in range(k):
        out[j] = row
        row = row * x % p
    return out


def _matmul_mod(a: np.ndarray, b: np.ndarray, p: int) -> np.ndarray:
    """(a @ b) mod p, exact, for int64 matrices with entries in [0, p), p < 2^31.

    Both sides are split into 16-bit limbs, so every product is below 2^32 and a float64 (BLAS)
    sum of up to 2^20 of them is exact; longer inner dimensions go in chunks.
    """
    out = np.zeros((a.shape[0], b.shape[1]), np.int64)
    shift = [pow(2, _LIMB * n, p) for n in range(3)]
    for start in range(0, a.shape[1], _CHUNK):
        ac, bc = a[:, start:start + _CHUNK], b[start:start + _CHUNK]
        al, bl = [(x & _MASK).astype(np.float64) for x in (ac, bc)], [(x >> _LIMB).astype(np.float64) for x in (ac, bc)]
        lo = (al[0] @ al[1]).astype(np.int64) % p
        mid = ((al[0] @ bl[1]).astype(np.int64) + (bl[0] @ al[1]).astype(np.int64)) % p
        hi = (bl[0] @ bl[1]).astype(np.int64) % p
        out = (out + lo + mid * shift[1] % p + hi * shift[2] % p) % p
    return out


def vandermonde(k: int, N: int, p: int) -> np.ndarray:
    """Eq. 3: the k x N matrix C[j - 1][i - 1] = i^j mod p, i = 1..N, j = 1..k (int64)."""
    k, N, p = _count("k", k), _count("N", N), _prime(p)
    _columns(N, p)
    return _powers(np.arange(1, N + 1, dtype=np.int64), k, p)


def compress_indices(v, k: int, p: int) -> np.ndarray:
    """Alg. 2 in plaintext: w = C v mod p, length k (w_j = sum_i v_i i^j)."""
    k, p = _count("k", k), _prime(p)
    v = _residues(v, 1, p, "pertinency vector v")
    _columns(len(v), p)
    nz = np.flatnonzero(v)
    return _matmul_mod(_powers(nz + 1, k, p), v[nz, None], p)[:, 0]


def _payload_slots(payload_slots, N: int, p: int) -> np.ndarray:
    pl = _residues(payload_slots, 2, p, "payload slots")
    if pl.shape[0] != N or pl.shape[1] == 0:
        raise ValueError(f"payload slots must have shape (N={N}, t >= 1) (messages x slots), got {pl.shape}")
    return pl


def compress_payloads(v, payload_slots, k: int, p: int) -> np.ndarray:
    """Sec. 4.1 in plaintext: row s - 1 of the (t, k) result is e_s = D_s v = C (PL_s (.) v).

    ``payload_slots`` is (N, t) (message m's slots in row m, as ``Board.slots``). The stacked
    product [C; D_1; ...; D_t] v is ``np.concatenate([compress_indices(v, k, p), e.ravel()])``.
    """
    k, p = _count("k", k), _prime(p)
    v = _residues(v, 1, p, "pertinency vector v")
    _columns(len(v), p)
    pl = _payload_slots(payload_slots, len(v), p)
    nz = np.flatnonzero(v)
    d = pl[nz] * v[nz, None] % p
    return _matmul_mod(_powers(nz + 1, k, p), d, p).T.copy()


def stacked_matrix(payload_slots, k: int, p: int) -> np.ndarray:
    """Sec. 4.1: the ((t + 1) k) x N matrix [C; D_1; ...; D_t], D_s = C diag(PL_s) (int64: 8 (t + 1) k N bytes)."""
    k, p = _count("k", k), _prime(p)
    pl = _residues(payload_slots, 2, p, "payload slots")
    if pl.shape[1] == 0:
        raise ValueError(f"payload slots must have shape (N, t >= 1), got {pl.shape}")
    c = vandermonde(k, pl.shape[0], p)
    return np.concatenate([c] + [c * pl[:, s] % p for s in range(pl.shape[1])])


@dataclass(frozen=True)
class PerfOMRCode:
    """PerfOMR's seeded hashing for N messages (or bundles of ``nu`` messages, Sec. 3.4.4: v counts a
    bundle's pertinent members, 0..nu) mod p with at most k pertinent: ``repetitions`` x ``buckets``
    index buckets of 3 slots and K = 53 ceil(k / 50) weighted payload buckets."""
    N: int
    p: int
    k: int = 50
    repetitions: int = 16
    buckets: int = 400
    seed: int = 0
    nu: int = 1

    def __post_init__(self):
        for name in ("N", "k", "repetitions", "buckets", "nu"):
            _count(name, getattr(self, name))
        _count("seed", self.seed, 0)
        _prime(self.p)
        if self.N > min(self.p ** 2, 2 ** 31):
            raise ValueError(f"N={self.N} messages exceed two base-p digits (p^2 = {self.p ** 2}) or 2^31")
        if self.k >= self.p:
            raise ValueError(f"k={self.k} must be below p={self.p} (counters mod p)")

    @property
    def payload_buckets(self) -> int:
        """K = 53 ceil(k / 50): PerfOMR's payload equations."""
        return 53 * math.ceil(self.k / 50)

    @cached_property
    def _rng_draws(self) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(self.seed)
        assignment = rng.integers(self.buckets, size=(self.repetitions, self.N))
        weights = rng.integers(1, self.p, size=(self.payload_buckets, self.N))
        return assignment, weights

    @property
    def assignment(self) -> np.ndarray:
        """(repetitions, N): the index bucket of each message in each repetition."""
        return self._rng_draws[0]

    @property
    def weights(self) -> np.ndarray:
        """(K, N): the nonzero random weights W of the payload code."""
        return self._rng_draws[1]


def perfomr_compress_indices(v, code: PerfOMRCode) -> np.ndarray:
    """PerfOMR's index buckets in plaintext: (repetitions, buckets, 3) = (digit floor(m / p), digit m mod p, Ctr)."""
    if not isinstance(code, PerfOMRCode):
        raise TypeError(f"code must be a PerfOMRCode, got {type(code).__name__}")
    p = code.p
    v = _residues(v, 1, p, "pertinency vector v")
    if len(v) != code.N:
        raise ValueError(f"pertinency vector has length {len(v)}, the code is for N={code.N}")
    if v.size and v.max() > code.nu:
        raise ValueError(f"pertinency counts must be in [0, nu={code.nu}], got {int(v.max())}")
    nz = np.flatnonzero(v)
    terms = np.stack([v[nz] * (nz // p) % p, v[nz] * (nz % p) % p, v[nz]], axis=1)   # (m, 3), each < p
    flat = (np.arange(code.repetitions)[:, None] * code.buckets + code.assignment[:, nz]).ravel()
    out = np.zeros((code.repetitions * code.buckets, INDEX_SLOTS), np.int64)
    np.add.at(out, flat, np.tile(terms, (code.repetitions, 1)))
    return (out % p).reshape(code.repetitions, code.buckets, INDEX_SLOTS)


def perfomr_compress_payloads(v, payload_slots, code: PerfOMRCode) -> np.ndarray:
    """PerfOMR's payload buckets in plaintext: the (K, t) matrix E = W (PL (.) v) mod p."""
    if not isinstance(code, PerfOMRCode):
        raise TypeError(f"code must be a PerfOMRCode, got {type(code).__name__}")
    v = _residues(v, 1, code.p, "pertinency vector v")
    if len(v) != code.N:
        raise ValueError(f"pertinency vector has length {len(v)}, the code is for N={code.N}")
    pl = _payload_slots(payload_slots, code.N, code.p)
    nz = np.flatnonzero(v)
    return _matmul_mod(code.weights[:, nz], pl[nz] * v[nz, None] % code.p, code.p)
