"""Negacyclic NTT over Z_q[X]/(X^N + 1), batched over limbs: arrays of shape (..., k, N).

Forward: Cooley-Tukey with the powers of a primitive 2N-th root psi in bit-reversed order;
the output is in bit-reversed order, slot j holding a(psi^(2 brv(j) + 1)). Inverse:
Gentleman-Sande with psi^-1, then a multiplication by N^-1. On numpy, one Python iteration per
stage (log N), each one vectorized butterfly over every limb and block; on the compiled CPU path and on
CuPy, two kernel launches for every limb and polynomial (:func:`launch_ntt`: the first log N1 stages, then the
rest; :mod:`hepkg.rns.cpu`, :mod:`hepkg.rns.kernels`).
"""
from __future__ import annotations

import numpy as np

from .arith import Modulus, add_mod, mul_mod, mul_shoup, root_of_unity, shoup_table, sub_mod


def bit_reverse(n: int) -> np.ndarray:
    """The bit-reversal permutation of 0..n-1 (n a power of two)."""
    bits = n.bit_length() - 1
    idx = np.arange(n)
    out = np.zeros(n, dtype=np.int64)
    for b in range(bits):
        out |= ((idx >> b) & 1) << (bits - 1 - b)
    return out


def _powers(base, n: int, m: Modulus):
    """(k, n) array of base^i mod q per limb, i < n (log n vectorized doublings)."""
    xp = m.xp
    out = xp.ones((len(m), n), dtype=np.uint64)
    step = xp.asarray(np.asarray([int(b) for b in base], dtype=np.uint64).reshape(-1, 1))
    size = 1
    while size < n:
        out[:, size:2 * size] = mul_mod(out[:, :size], step, m)
        step = mul_mod(step, step, m)
        size *= 2
    return out


def stages(x, tw, q, inverse: bool, first: int = 0, last: int | None = None):
    """The radix-2 stages first..last-1 (default all, log N) of the NTT on (..., k, N) arrays x, in place
    (numpy): forward Cooley-Tukey in stage order, or inverse Gentleman-Sande in reverse stage order without the
    factor N^-1. Stage s has m = 2^s blocks of 2t = N / 2^s. ``tw(m)``: the (k, m) twiddles of the stage with
    m blocks and their Shoup values; ``q``: (k, 1) moduli. One vectorized butterfly per stage."""
    n = x.shape[-1]
    k, lead = x.shape[-2], x.shape[:-2]
    q = q.reshape(k, 1, 1)
    logn = n.bit_length() - 1
    last = logn if last is None else last
    for s in (range(last - 1, first - 1, -1) if inverse else range(first, last)):
        m, t = 1 << s, n >> (s + 1)
        v = x.reshape(*lead, k, m, 2, t)
        w, ws = (a[:, :, None] for a in tw(m))
        u = v[..., 0, :]
        if inverse:
            y = v[..., 1, :]
            v[..., 0, :], v[..., 1, :] = add_mod(u, y, q), mul_shoup(sub_mod(u, y, q), w, ws, q)
        else:
            y = mul_shoup(v[..., 1, :], w, ws, q)
            v[..., 0, :], v[..., 1, :] = add_mod(u, y, q), sub_mod(u, y, q)
    return x


def split(logn: int) -> int:
    """log N1 of the kernels' two-phase NTT: the strided stages 0..log N1 - 1 (N1 = 2^floor(log N / 2))."""
    if not 2 <= logn <= 18:
        raise ValueError(f"the NTT kernels take 2^2 <= N <= 2^18, not 2^{logn}")
    return logn // 2


def geometry(logn: int, inverse: bool) -> dict:
    """Blocks per row and threads per block of each NTT kernel ({name: (blocks per row, threads)})."""
    from .kernels import NTT_SHARED, NTT_THREADS

    log1 = split(logn)
    n1, n2 = 1 << log1, 1 << (logn - log1)
    cols = min(n2, NTT_SHARED >> log1)
    geo = {"cols": (n2 // cols, min(NTT_THREADS, cols * n1 // 2)), "rows": (n1, min(NTT_THREADS, n2 // 2))}
    kind = "inv" if inverse else "fwd"
    order = ("rows", "cols") if inverse else ("cols", "rows")
    return {f"hepkg_rns_ntt_{kind}_{part}": geo[part] for part in order}


def launch_ntt(full: "NTT", inverse: bool, inp, out, src, dst, prime) -> None:
    """The kernels' NTT (two launches) of the rows ``src`` of ``inp`` (flattened (rows, N) indices, int32 device
    arrays) into the rows ``dst`` of ``out`` (``out`` may be ``inp``: in place), row j over the prime ``prime[j]``
    of the full basis ``full``."""
    from .device import kernel_set

    xp = full.mod.xp
    kern = kernel_set(xp)
    logn = full.n.bit_length() - 1
    log1, jobs = split(logn), int(src.shape[0])
    if not jobs:
        return
    first, second = geometry(logn, inverse).items()
    scal = (np.int32(logn), np.int32(log1))
    if inverse:
        kern.launch(first[0], (jobs * first[1][0],), (first[1][1],),
                    (inp, out, src, dst, prime, full.iw, full.iws, full.mod.q, *scal))
        kern.launch(second[0], (jobs * second[1][0],), (second[1][1],),
                    (out, dst, prime, full.iw, full.iws, full.mod.q, *scal, *full.n_inv))
    else:
        kern.launch(first[0], (jobs * first[1][0],), (first[1][1],),
                    (inp, out, src, dst, prime, full.w, full.ws, full.mod.q, *scal))
        kern.launch(second[0], (jobs * second[1][0],), (second[1][1],),
                    (out, dst, prime, full.w, full.ws, full.mod.q, *scal))


class NTT:
    """The transforms of some limbs (``rows``) of an RNS basis whose every prime is 1 mod 2N.

    Twiddle tables exist once per prime, in the basis's full NTT (``full``); the NTT of a subset of
    rows reads them through its rows (a slice view for consecutive rows, else a per-stage gather on
    numpy; a row -> prime map on CuPy), so no subset copies a table."""

    def __init__(self, n: int, m: Modulus, psi=None):
        """``psi``: the primitive 2N-th root of each prime (default: :func:`root_of_unity`'s); another library's
        evaluation form is read with its roots."""
        self.n, self.mod, xp = n, m, m.xp
        psi = [root_of_unity(q, 2 * n) for q in m.primes] if psi is None else [int(r) for r in psi]
        if len(psi) != len(m.primes) or any(pow(r, n, q) != q - 1 for r, q in zip(psi, m.primes)):
            raise ValueError("psi must hold a primitive 2N-th root of unity for each prime")
        rev = xp.asarray(bit_reverse(n))
        self.w = _powers(psi, n, m)[:, rev]
        self.iw = _powers([pow(p, -1, q) for p, q in zip(psi, m.primes)], n, m)[:, rev]
        self.ws, self.iws = shoup_table(self.w, m.q, xp), shoup_table(self.iw, m.q, xp)
        self.n_inv = m.constants([pow(n, -1, q) for q in m.primes])
        # C-ordered tables: a subset's rows are contiguous (numpy's stages read row slices; the kernels index rows)
        self.w, self.iw, self.ws, self.iws = (xp.ascontiguousarray(t) for t in (self.w, self.iw, self.ws, self.iws))
        self.full, self.rows, self._sel = self, tuple(range(len(m))), slice(None)
        self._jobs: dict = {}

    @staticmethod
    def table_bytes(n: int, primes: int) -> int:
        """Bytes of the twiddle tables (forward, inverse and their Shoup values) of ``primes`` primes."""
        return 4 * primes * n * 8

    def take(self, rows) -> "NTT":
        """The transforms of the limbs ``rows`` (indices into this basis), reading this basis's tables."""
        out = object.__new__(NTT)
        out.n, out.mod, out.full = self.n, self.mod.take(rows), self.full
        out.rows = tuple(self.rows[int(r)] for r in rows)
        lo = out.rows[0] if out.rows else 0
        out._sel = slice(lo, lo + len(out.rows)) if out.rows == tuple(range(lo, lo + len(out.rows))) \
            else np.asarray(out.rows, dtype=np.int64)
        xp = self.mod.xp
        out.n_inv = out.mod.constants([pow(self.n, -1, q) for q in out.mod.primes])
        out._jobs = {}
        return out

    def _twiddles(self, tables):
        f, sel = self.full, self._sel
        return lambda m: tuple(t[sel, m:2 * m] for t in tables)

    def forward(self, a):
        """NTT of coefficient arrays (..., k, N); returns a new array."""
        if self.mod.xp is not np:
            return self.launch(a, inverse=False)
        a = np.array(a, dtype=np.uint64, copy=True)
        return stages(a, self._twiddles((self.full.w, self.full.ws)), self.mod.q, inverse=False)

    def inverse(self, a):
        """Inverse NTT of (..., k, N) evaluation arrays; returns a new array of coefficients."""
        if self.mod.xp is not np:
            return self.launch(a, inverse=True)
        a = np.array(a, dtype=np.uint64, copy=True)
        stages(a, self._twiddles((self.full.iw, self.full.iws)), self.mod.q, inverse=True)
        return mul_shoup(a, *self.n_inv, self.mod.q)

    def jobs(self, polys: int, kin: int, r0: int = 0) -> tuple:
        """The kernels' row table of this NTT on ``polys`` polynomials of ``kin`` rows (its limbs at r0..): (source
        rows, destination rows, primes), int32 device arrays made once per shape."""
        key = (polys, kin, r0)
        if key not in self._jobs:
            k = len(self.rows)
            s, r = np.divmod(np.arange(polys * k), k)
            table = (s * kin + r0 + r, s * k + r, np.asarray(self.rows)[r])
            self._jobs[key] = tuple(self.mod.xp.asarray(t.astype(np.int32)) for t in table)
        return self._jobs[key]

    def launch(self, a, inverse: bool, r0: int = 0, out=None):
        """Compiled CPU or CuPy: the (inverse) NTT of rows r0.. of the (..., kin, N) array a (its rows r0..r0+k
        are this NTT's limbs), two kernel launches for every limb and polynomial: a new (..., k, N) array, or
        ``out`` (C-contiguous, that shape; ``a`` itself transforms in place)."""
        xp = self.mod.xp
        if not a.flags.c_contiguous:
            a = a.copy()
        shape = a.shape[:-2] + (len(self.rows), self.n)
        if out is None:
            out = xp.empty(shape, dtype=np.uint64)
        elif out.shape != shape or not out.flags.c_contiguous:
            raise ValueError(f"the NTT's output must be a C-contiguous {shape} array, not {out.shape}")
        polys = int(np.prod(a.shape[:-2], dtype=np.int64))
        launch_ntt(self.full, inverse, a, out, *self.jobs(polys, a.shape[-2], r0))
        return out

    def multiply(self, a, b):
        """Element-wise product of two NTT-form arrays (the negacyclic product of the polynomials)."""
        return mul_mod(a, b, self.mod)


def automorphism_index(n: int, g: int) -> np.ndarray:
    """Index map of X -> X^g on NTT-form arrays (bit-reversed order): out[..., j] = in[..., idx[j]].

    Slot j holds a(psi^e) with e = 2 brv(j) + 1; a(X^g) there is a(psi^(e g)), which is slot
    brv((e g mod 2N - 1) / 2)."""
    if g % 2 == 0:
        raise ValueError(f"Galois element {g} must be odd")
    rev = bit_reverse(n)
    e = (2 * rev + 1) * g % (2 * n)
    return rev[(e - 1) // 2]


def automorphism_coeffs(a, g: int, q):
    """X -> X^g on coefficient arrays (..., k, N) with moduli q of shape (k, 1) (reference for tests)."""
    n = a.shape[-1]
    pos = np.arange(n) * g % (2 * n)
    out = np.zeros_like(a)
    flip = pos >= n
    out[..., pos % n] = np.where(flip, (q - a) % q, a)
    return out
