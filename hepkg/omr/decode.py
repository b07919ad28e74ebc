"""The receiver's decoding over F_p (python-flint): SophOMR's Alg. 3 and 5, and PerfOMR's bucket decoding.

SophOMR, indices (Alg. 3): Newton's identities turn the power sums w_j = sum_{i in I} i^j
(j = 1..k) into the elementary symmetric polynomials a_0 = 1, a_j = j^-1 sum_{l=1..j} (-1)^(l-1)
a_(j-l) w_l, and f(X) = sum_j (-1)^j a_j X^(k-j) = X^(k-|I|) prod_{i in I} (X - i). The factors X
are stripped ("while X divides f"), the roots of the rest over F_p are the columns i = m + 1 of
the pertinent messages m. Payloads (Alg. 5): the k x |I| submatrix C_I of Eq. 3 has an invertible
top |I| x |I| block (rows i_l^j, j = 1..|I|), which gives the (|I|, t) payload slots X of C_I X = E.

PerfOMR (Sec. 3.4.2-3.4.3): a bucket whose counter is 1 holds one pertinent index in its two
digit slots; the indices found over all repetitions must account for the counters' total.
Payloads: Gaussian elimination on the weights' columns of the pertinent indices.

Every answer is checked by recomputing the compressed digest from it. A digest that no set of at
most k pertinent messages produces raises :class:`DecodeOverflow` when it looks like more than k
(the polynomial does not split into distinct roots in 1..N, or the counters exceed k; a corrupted
digest looks the same) and :class:`DecodeError` otherwise. No decoder can catch every SophOMR
overflow: if I holds a part J whose power sums 1..k vanish mod p (a multiplicative subgroup of
F_p^* of order d > k inside 1..N: sum_{x in J} x^j = 0 unless d | j), C v for I equals C v for
I \\ J. Random index sets meet this with negligible probability.
"""
from __future__ import annotations

import numpy as np

from .compress import (INDEX_SLOTS, PerfOMRCode, _columns, _count, _matmul_mod, _powers, _prime, _residues,
                       perfomr_compress_indices)

__all__ = ["DecodeError", "DecodeOverflow", "decode_indices", "decode_payloads", "decode",
           "perfomr_decode_indices", "perfomr_decode_payloads", "perfomr_decode"]


class DecodeError(ValueError):
    """The compressed digest is not that of any pertinency vector decodable with these parameters."""


class DecodeOverflow(DecodeError):
    """More than ``k`` pertinent messages (or a corrupted digest that looks like it)."""

    def __init__(self, k: int, detail: str):
        self.k, self.detail = k, detail
        super().__init__(f"more than k={k} pertinent messages (at most {k} expected) or a corrupted digest: {detail}")

    def __reduce__(self):
        return type(self), (self.k, self.detail)


def _flint():
    try:
        import flint
    except ImportError as exc:
        raise ImportError("decoding over F_p needs python-flint (pip install python-flint==0.9.0)") from exc
    return flint


def _inverse(flint, a: np.ndarray, p: int) -> np.ndarray:
    """The inverse over F_p of the square int64 matrix a (flint), as int64."""
    inv = flint.nmod_mat(a.tolist(), p).inv()
    return np.fromiter(map(int, inv.entries()), np.int64, a.size).reshape(a.shape)


def _newton(w: list[int], p: int) -> list[int]:
    """a_0..a_k from the power sums w_1..w_k (Newton's identities; needs k < p)."""
    a = [1]
    for j in range(1, len(w) + 1):
        s = sum(a[j - l] * w[l - 1] if l % 2 else -a[j - l] * w[l - 1] for l in range(1, j + 1))
        a.append(s * pow(j, -1, p) % p)
    return a


def decode_indices(w, N: int, p: int) -> np.ndarray:
    """Alg. 3: the sorted 0-based indices m of the pertinent messages from w = C v (length k)."""
    flint = _flint()
    N, p = _count("N", N), _prime(p)
    _columns(N, p)
    w = _residues(w, 1, p, "compressed indices w")
    k = len(w)
    if k == 0 or k >= p:
        raise ValueError(f"compressed indices must have length k in [1, p={p}), got {k}")
    a = _newton([int(x) for x in w], p)
    s = max(j for j in range(k + 1) if a[j])        # strip X^(k - s): a_(s+1) = ... = a_k = 0
    f = flint.nmod_poly([(-1) ** j * a[j] for j in range(s, -1, -1)], p)   # coefficients, X^0 first
    roots = f.roots()
    if sum(m for _, m in roots) != s:
        raise DecodeOverflow(k, f"the degree-{s} polynomial from Newton's identities does not split over F_{p}")
    if any(m > 1 for _, m in roots):
        raise DecodeOverflow(k, f"the degree-{s} polynomial from Newton's identities has repeated roots")
    cols = np.sort(np.array([int(r) for r, _ in roots], np.int64))
    if cols.size and not (1 <= cols[0] and cols[-1] <= N):
        raise DecodeOverflow(k, f"roots {cols[(cols < 1) | (cols > N)].tolist()} are not columns 1..N={N}")
    if not np.array_equal(_powers(cols, k, p).sum(axis=1) % p, w):
        raise DecodeError(f"the power sums of the decoded indices do not reproduce w (k={k}, p={p})")
    return cols - 1


def _index_array(indices, N: int, what: str) -> np.ndarray:
    idx = np.asarray(indices)
    if idx.ndim != 1 or (idx.size and not np.issubdtype(idx.dtype, np.integer)):
        raise ValueError(f"{what} must be a 1-D integer array, got shape {idx.shape}, dtype {idx.dtype}")
    idx = idx.astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= N or np.unique(idx).size != idx.size):
        raise ValueError(f"{what} must be distinct message indices in [0, {N}), got {idx.tolist()}")
    return idx


def decode_payloads(e, indices, p: int) -> np.ndarray:
    """Alg. 5: the (|I|, t) payload slots of the pertinent ``indices`` (0-based) from e, shape (t, k).

    Solves C_I x = e_s over F_p for every slot s and checks all k rows, so a corrupted e is
    caught whenever |I| < k (at |I| = k every e is consistent with some payloads).
    """
    flint = _flint()
    p = _prime(p)
    e = _residues(e, 2, p, "compressed payloads e")
    t, k = e.shape
    idx = _index_array(indices, p - 1, "pertinent indices")
    s = len(idx)
    if s > k:
        raise DecodeOverflow(k, f"{s} pertinent indices given")
    if s == 0:
        if e.any():
            raise DecodeError("compressed payloads are nonzero but no message is pertinent")
        return np.zeros((0, t), np.int64)
    c_i = _powers(idx + 1, k, p)                                        # (k, s)
    x = _matmul_mod(_inverse(flint, c_i[:s], p), e.T[:s], p)           # rows 1..s: i_l^j, an invertible block
    if not np.array_equal(_matmul_mod(c_i, x, p), e.T):
        raise DecodeError(f"compressed payloads are inconsistent with the {s} decoded indices (corrupted digest)")
    return x


def decode(w, e, N: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    """Alg. 5 with Alg. 3: (sorted 0-based pertinent indices, their (|I|, t) payload slots)."""
    indices = decode_indices(w, N, p)
    e = np.asarray(e)
    if e.ndim != 2 or e.shape[1] != len(np.asarray(w)):
        raise ValueError(f"compressed payloads must have shape (t, k={len(np.asarray(w))}), got {e.shape}")
    return indices, decode_payloads(e, indices, p)


def _code(code) -> PerfOMRCode:
    if not isinstance(code, PerfOMRCode):
        raise TypeError(f"code must be a PerfOMRCode, got {type(code).__name__}")
    return code


def perfomr_decode_indices(buckets, code: PerfOMRCode, *, counts: bool = False):
    """PerfOMR's index decoding: sorted 0-based indices (and, with ``counts``, each one's count 1..nu)
    from the (repetitions, buckets, 3) buckets.

    A bucket whose counter c is in 1..nu names index (Acc_hi / c) p + Acc_lo / c; a candidate is kept if
    its bucket in every repetition holds a counter >= c, and kept candidates are peeled off until the
    counters' total is reached. The result must re-compress to exactly the buckets.
    """
    code = _code(code)
    p = code.p
    b = _residues(buckets, 3, p, "index buckets")
    if b.shape != (code.repetitions, code.buckets, INDEX_SLOTS):
        raise ValueError(f"index buckets have shape {b.shape}, the code's is "
                         f"({code.repetitions}, {code.buckets}, {INDEX_SLOTS})")
    totals = b[..., 2].sum(axis=1) % p
    if (totals != totals[0]).any():
        raise DecodeError(f"repetitions disagree on the number of pertinent messages: {sorted(set(totals.tolist()))}")
    total = int(totals[0])
    if total > code.k * code.nu:
        raise DecodeOverflow(code.k, f"the counters add up to {total}")
    inverse = np.array([0] + [pow(c, -1, p) for c in range(1, code.nu + 1)], np.int64)
    v = np.zeros(code.N, np.int64)
    residual = b.copy()
    while int(v.sum()) < total:
        ctr = residual[..., 2]
        hit = (ctr >= 1) & (ctr <= code.nu)
        c = ctr[hit]
        idx = residual[..., 0][hit] * inverse[c] % p * p + residual[..., 1][hit] * inverse[c] % p
        ok = idx < code.N
        idx, c = idx[ok], c[ok]
        rows = np.arange(code.repetitions)[:, None]
        ok = (residual[rows, code.assignment[:, np.minimum(idx, code.N - 1)], 2] >= c).all(axis=0) & (v[idx] == 0)
        fresh = np.zeros(code.N, np.int64)
        fresh[idx[ok]] = c[ok]
        if not fresh.any():
            raise DecodeError(f"{total - int(v.sum())} of {total} pertinent messages collided in all "
                              f"{code.repetitions} repetitions (PerfOMR's decoding failure)")
        v += fresh
        residual = (residual - perfomr_compress_indices(np.minimum(fresh, code.nu), code)) % p
    found = np.flatnonzero(v)
    if found.size > code.k:
        raise DecodeOverflow(code.k, f"{found.size} pertinent messages decoded")
    if int(v.sum()) != total or not np.array_equal(perfomr_compress_indices(v, code), b):
        raise DecodeError(f"index buckets are inconsistent with the {found.size} indices they name (corrupted digest)")
    return (found, v[found]) if counts else found


def perfomr_decode_payloads(e, indices, code: PerfOMRCode) -> np.ndarray:
    """PerfOMR's payload decoding: Gaussian elimination over F_p on W's pertinent columns; e is (K, t)."""
    flint = _flint()
    code = _code(code)
    p, K = code.p, code.payload_buckets
    e = _residues(e, 2, p, "payload buckets")
    if e.shape[0] != K or e.shape[1] == 0:
        raise ValueError(f"payload buckets must have shape (K={K}, t >= 1), got {e.shape}")
    idx = _index_array(indices, code.N, "pertinent indices")
    s, t = len(idx), e.shape[1]
    if s > code.k:
        raise DecodeOverflow(code.k, f"{s} pertinent indices given")
    a = code.weights[:, idx]
    x = np.zeros((0, t), np.int64)
    if s:
        rref, rank = flint.nmod_mat(a.T.tolist(), p).rref()
        if rank < s:
            raise DecodeError(f"the random weights of the {s} pertinent messages are linearly dependent "
                              f"(PerfOMR's decoding failure; another seed avoids it)")
        r = np.fromiter(map(int, rref.entries()), np.int64, s * K).reshape(s, K)
        rows = (r != 0).argmax(axis=1)                                  # pivots of a^T: s independent rows of a
        x = _matmul_mod(_inverse(flint, a[rows], p), e[rows], p)
    if not np.array_equal(_matmul_mod(a, x, p), e):
        raise DecodeError(f"payload buckets are inconsistent with the {s} decoded indices (corrupted digest)")
    return x


def perfomr_decode(index_buckets, payload_buckets, code: PerfOMRCode):
    """PerfOMR's receiver: (sorted 0-based pertinent indices, their counts, their (|I|, t) payload slots);
    the payload buckets hold each index's payload times its count, divided out here."""
    indices, counts = perfomr_decode_indices(index_buckets, code, counts=True)
    x = perfomr_decode_payloads(payload_buckets, indices, code)
    inverse = np.array([pow(int(c), -1, code.p) for c in counts], np.int64)
    return indices, counts, x * inverse[:, None] % code.p
