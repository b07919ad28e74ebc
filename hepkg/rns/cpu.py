"""The engine's kernels compiled for the CPU (numba): one per CUDA kernel of :mod:`hepkg.rns.kernels`, with the
same name and arguments, so the CPU and the GPU run the same compound operations (:mod:`hepkg.rns.fused`).

Where the CUDA source indexes flat device memory, these index the same arrays flattened (every array argument
must be C-contiguous); the grid and block of a launch are ignored: rows (or coefficient blocks) run as a
``prange`` over the threads given to :func:`set_threads`. The 64 x 64 -> 128-bit product is LLVM's (``mulhi``),
so a modular product costs a few instructions where numpy needs 32-bit halves. The NTT keeps its values
lazily reduced (Harvey's butterflies: forward in [0, 4q), inverse in [0, 2q)) and returns canonical residues;
every kernel's output is canonical and bit-identical to its numpy twin (:data:`hepkg.rns.twins.TWINS`).

Compiled on first use and cached on disk (numba's cache: ``__pycache__`` beside this file, or
``NUMBA_CACHE_DIR``), so a second process does not recompile. Imported only on the compiled path
(:func:`hepkg.rns.device.kernel_set`); hepkg runs on numpy alone without numba.

Threads: numba's ``workqueue`` layer (unless ``NUMBA_THREADING_LAYER`` says otherwise), which survives a fork
(GNU OpenMP's does not: the crash guard and process pools fork), with one lock so that parallel kernels
called from several Python threads run one after another, each on every thread given.
"""
from __future__ import annotations

import os
import threading

import numba
import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic

__all__ = ["launch", "elementwise", "grid", "set_threads", "threads"]

#: the CUDA geometry the orchestration computes (ignored here, kept so one code path serves both)
BLOCK = 256
#: coefficients per parallel chunk of the coefficient-wise kernels
CHUNK = 2048

if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "workqueue"
_LOCK = threading.Lock()


# ---------------------------------------------------------------------- word arithmetic
@intrinsic
def mulhi(typingctx, a, b):
    """The high word of the 128-bit product of two uint64 (``__umul64hi``)."""
    if a != types.uint64 or b != types.uint64:
        return None

    def codegen(context, builder, sig, args):
        wide = ir.IntType(128)
        p = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        return builder.trunc(builder.lshr(p, ir.Constant(wide, 64)), ir.IntType(64))
    return types.uint64(types.uint64, types.uint64), codegen


@njit(cache=True)
def _add(a, b, q):
    s = a + b
    return s - q if s >= q else s


@njit(cache=True)
def _sub(a, b, q):
    d = a + (q - b)
    return d - q if d >= q else d


@njit(cache=True)
def _shoup(a, w, ws, q):
    """a w mod q, canonical, for any a < 2^64 (w < q, ws = floor(w 2^64 / q))."""
    t = a * w - mulhi(a, ws) * q
    return t - q if t >= q else t


@njit(cache=True)
def _barrett(a, b, q, mu, lsh, osh):
    """a b mod q for a, b < q (the constants of :class:`hepkg.rns.arith.Modulus`)."""
    lo = a * b
    hi = mulhi(a, b)
    x1 = (hi << (np.uint64(64) - lsh)) | (lo >> lsh)
    qh = (mulhi(x1, mu) << (np.uint64(64) - osh)) | ((x1 * mu) >> osh)
    t = lo - qh * q
    if t >= q:
        t -= q
    if t >= q:
        t -= q
    return t


# ---------------------------------------------------------------------- element-wise (broadcasting ufuncs)
def _ufuncs() -> dict:
    sig = {2: "uint64(uint64, uint64)", 3: "uint64(uint64, uint64, uint64)",
           4: "uint64(uint64, uint64, uint64, uint64)", 6: "uint64(uint64, uint64, uint64, uint64, uint64, uint64)"}

    def mul_mod(a, b, q, mu, lsh, osh):
        return _barrett(a, b, q, mu, lsh, osh)

    def mul_shoup(a, w, ws, q):
        return _shoup(a, w, ws, q)

    def add_mod(a, b, q):
        return _add(a, b, q)

    def sub_mod(a, b, q):
        return _sub(a, b, q)

    def neg_mod(a, q):
        return _sub(np.uint64(0), a, q)

    return {f"hepkg_rns_{f.__name__}": numba.vectorize([sig[f.__code__.co_argcount]], cache=True)(f)
            for f in (mul_mod, mul_shoup, add_mod, sub_mod, neg_mod)}


# ---------------------------------------------------------------------- raw kernels
# Each parallel kernel hands contiguous row slices to a serial loop that indexes them from 0: LLVM then keeps the
# inner loops free of index arithmetic (a butterfly in about 1 ns, against 2.6 ns with flat offsets).

@njit(cache=True)
def _fwd_stages(x, w, ws, q, first, last):
    """Forward NTT stages first..last-1 of one row in place: Harvey's butterflies, values in [0, 4q), canonical
    at the end."""
    n, q2 = x.size, q + q
    for st in range(first, last):
        m, t = 1 << st, n >> (st + 1)
        for i in range(m):
            wi, wsi = w[m + i], ws[m + i]
            a, b = x[2 * i * t:2 * i * t + t], x[2 * i * t + t:2 * i * t + 2 * t]
            for j in range(t):
                u = a[j]
                u = u - q2 if u >= q2 else u
                y = b[j]
                v = y * wi - mulhi(y, wsi) * q                   # [0, 2q)
                a[j] = u + v                                      # [0, 4q)
                b[j] = u - v + q2                                 # (0, 4q)
    for j in range(n):
        y = x[j]
        y = y - q2 if y >= q2 else y
        x[j] = y - q if y >= q else y


@njit(cache=True)
def _inv_stages(x, w, ws, q, first, last):
    """Inverse NTT stages last-1 down to first of one row in place: values in [0, 2q) (not made canonical)."""
    n, q2 = x.size, q + q
    for st in range(last - 1, first - 1, -1):
        m, t = 1 << st, n >> (st + 1)
        for i in range(m):
            wi, wsi = w[m + i], ws[m + i]
            a, b = x[2 * i * t:2 * i * t + t], x[2 * i * t + t:2 * i * t + 2 * t]
            for j in range(t):
                u, v = a[j], b[j]                                 # [0, 2q)
                s = u + v
                a[j] = s - q2 if s >= q2 else s
                d = u - v + q2
                b[j] = d * wi - mulhi(d, wsi) * q                 # [0, 2q)


@njit(cache=True, parallel=True)
def ntt_fwd_cols(inp, out, src_row, dst_row, prime, w, ws, q, logn, log1):
    """The forward NTT's strided stages (0..log N1 - 1) of the table's rows, src rows of inp into dst rows of out
    (a whole row at a time: on the CPU a row fits the cache)."""
    n = 1 << logn
    for j in prange(dst_row.size):
        p = prime[j]
        x = out[dst_row[j] * n:(dst_row[j] + 1) * n]
        x[:] = inp[src_row[j] * n:(src_row[j] + 1) * n]
        _fwd_stages(x, w[p * n:(p + 1) * n], ws[p * n:(p + 1) * n], q[p], 0, log1)


@njit(cache=True, parallel=True)
def ntt_fwd_rows(x, dst_row, prime, w, ws, q, logn, log1):
    """The forward NTT's contiguous stages (log N1..log N - 1) of the table's rows of x, in place."""
    n = 1 << logn
    for j in prange(dst_row.size):
        p = prime[j]
        _fwd_stages(x[dst_row[j] * n:(dst_row[j] + 1) * n], w[p * n:(p + 1) * n], ws[p * n:(p + 1) * n], q[p],
                    log1, logn)


@njit(cache=True, parallel=True)
def ntt_inv_rows(inp, out, src_row, dst_row, prime, iw, iws, q, logn, log1):
    """The inverse NTT's contiguous stages (log N - 1 down to log N1), src rows of inp into dst rows of out."""
    n = 1 << logn
    for j in prange(dst_row.size):
        p = prime[j]
        qq = q[p]
        x = out[dst_row[j] * n:(dst_row[j] + 1) * n]
        x[:] = inp[src_row[j] * n:(src_row[j] + 1) * n]
        _inv_stages(x, iw[p * n:(p + 1) * n], iws[p * n:(p + 1) * n], qq, log1, logn)
        for c in range(n):
            x[c] = x[c] - qq if x[c] >= qq else x[c]


@njit(cache=True, parallel=True)
def ntt_inv_cols(x, dst_row, prime, iw, iws, q, logn, log1, ninv, ninvs):
    """The inverse NTT's strided stages (log N1 - 1 down to 0) of the table's rows of x in place, times N^-1."""
    n = 1 << logn
    for j in prange(dst_row.size):
        p = prime[j]
        qq, a, b = q[p], ninv[p], ninvs[p]
        row = x[dst_row[j] * n:(dst_row[j] + 1) * n]
        _inv_stages(row, iw[p * n:(p + 1) * n], iws[p * n:(p + 1) * n], qq, 0, log1)
        for c in range(n):
            row[c] = _shoup(row[c], a, b, qq)


@njit(cache=True, parallel=True)
def convert(x, xn, out, n, kin, groups, kout, amax, nsrc, src_row, src_q, ih, ihs, isrc, copy_from, dst_q, hat,
            hats, tot, tots, words, floats):
    """Fast basis conversion of several groups of rows at once (ModUp: every digit; ModDown: P -> Q), in chunks
    of coefficients: the digits y_i = x_i (B/b_i)^-1 and v = round(sum y_i / b_i) of a chunk, then each
    destination row's sum_i y_i (B/b_i) - v B; a row of the group's own basis is copied from xn. ``words`` and
    ``floats``: each thread's scratch ((amax + 1) CHUNK words and CHUNK floats, :func:`launch`'s)."""
    chunks = (n + CHUNK - 1) // CHUNK
    for job in prange(x.size // (kin * n) * groups * chunks):
        sg, c0 = job // chunks, (job % chunks) * CHUNK
        width = min(CHUNK, n - c0)
        s, g = sg // groups, sg % groups
        ns, xs, o = nsrc[g], s * kin * n + c0, sg * kout * n + c0
        tid = numba.get_thread_id()
        mine = words[tid * (amax + 1) * CHUNK:(tid + 1) * (amax + 1) * CHUNK]
        v = mine[amax * CHUNK:amax * CHUNK + width]
        f = floats[tid * CHUNK:tid * CHUNK + width]
        f[:] = 0.0
        for i in range(ns):
            gi = g * amax + i
            src, yi = x[xs + src_row[gi] * n:xs + src_row[gi] * n + width], mine[i * width:(i + 1) * width]
            a, b, qq, inv = ih[gi], ihs[gi], src_q[gi], isrc[gi]
            for c in range(width):
                yi[c] = _shoup(src[c], a, b, qq)
                f[c] += float(yi[c]) * inv
        for c in range(width):
            v[c] = np.uint64(np.rint(f[c]))
        for r in range(kout):
            dst = out[o + r * n:o + r * n + width]
            cf = copy_from[g * kout + r]
            if cf >= 0:
                dst[:] = xn[xs + cf * n:xs + cf * n + width]
                continue
            qq = dst_q[r]
            dst[:] = 0
            for i in range(ns):
                h = (g * amax + i) * kout + r
                a, b, yi = hat[h], hats[h], mine[i * width:(i + 1) * width]
                for c in range(width):
                    dst[c] = _add(dst[c], _shoup(yi[c], a, b, qq), qq)
            a, b = tot[g * kout + r], tots[g * kout + r]
            for c in range(width):
                dst[c] = _sub(dst[c], _shoup(v[c], a, b, qq), qq)


@njit(cache=True)
def _reduce128(hi, lo, q, mu, lsh, osh):
    """x = hi 2^64 + lo mod q for x < 2^(2k+2) (k = bits of q): Barrett, the quotient at most 6 low."""
    x1 = (hi << (np.uint64(64) - lsh)) | (lo >> lsh)
    qh = (mulhi(x1, mu) << (np.uint64(64) - osh)) | ((x1 * mu) >> osh)
    t = lo - qh * q
    while t >= q:
        t -= q
    return t


@njit(cache=True, parallel=True)
def key_inner(ext, kb, ka, out, perm, use_perm, n, d, k, kr, key_row, q, mu, lsh, osh, add, add_polys, kq, pm,
              words):
    """The key-switching inner product of the ModUp digits with a key's (b, a), optionally through an
    automorphism of the digits (hoisted rotations): 128-bit sums, reduced every four products; plus P times
    the addend on the rows of Q (``add_polys``: a relinearization with its rescale folded in). ``words``: each
    thread's scratch (5 n words, :func:`launch`'s)."""
    for r in prange(k):
        row = key_row[r]
        qq, m, ls, os_ = q[r], mu[r], lsh[r], osh[r]
        ob, oa = out[r * n:(r + 1) * n], out[(k + r) * n:(k + r + 1) * n]
        tid = numba.get_thread_id()
        mine = words[tid * 5 * n:(tid + 1) * 5 * n]
        bh, bl, ah, al, e = mine[:n], mine[n:2 * n], mine[2 * n:3 * n], mine[3 * n:4 * n], mine[4 * n:]
        bh[:] = 0
        bl[:] = 0
        ah[:] = 0
        al[:] = 0
        for j in range(d):
            src = ext[(j * k + r) * n:(j * k + r + 1) * n]
            if use_perm:                      # gathered apart: the product loop below stays vectorizable
                for c in range(n):
                    e[c] = src[perm[c]]
            else:
                e[:] = src
            yb, ya = kb[(j * kr + row) * n:(j * kr + row + 1) * n], ka[(j * kr + row) * n:(j * kr + row + 1) * n]
            for c in range(n):
                lo = e[c] * yb[c]
                s = bl[c] + lo
                bh[c] += mulhi(e[c], yb[c]) + np.uint64(s < lo)
                bl[c] = s
                lo = e[c] * ya[c]
                s = al[c] + lo
                ah[c] += mulhi(e[c], ya[c]) + np.uint64(s < lo)
                al[c] = s
            if j % 4 == 3 or j == d - 1:
                for c in range(n):
                    bl[c] = _reduce128(bh[c], bl[c], qq, m, ls, os_)
                    al[c] = _reduce128(ah[c], al[c], qq, m, ls, os_)
                bh[:] = 0
                ah[:] = 0
        if add_polys and r < kq:
            xb, xa, f = add[r * n:(r + 1) * n], add[(kq + r) * n:(kq + r + 1) * n], pm[r]
            for c in range(n):
                bl[c] = _add(bl[c], _barrett(xb[c], f, qq, m, ls, os_), qq)
                al[c] = _add(al[c], _barrett(xa[c], f, qq, m, ls, os_), qq)
        ob[:] = bl
        oa[:] = al


@njit(cache=True, parallel=True)
def finish(cc, t, out, add, perm, use_perm, n, kc, k, add_polys, q, inv, invs):
    """(c - t) * P^-1 (ModDown's and rescale's last step), plus an optional (permuted) addend."""
    for sr in prange(out.size // n):
        s, r = sr // k, sr % k
        qq, a, b = q[r], inv[r], invs[r]
        src, sub, o = cc[(s * kc + r) * n:(s * kc + r + 1) * n], t[sr * n:(sr + 1) * n], out[sr * n:(sr + 1) * n]
        for c in range(n):
            o[c] = _shoup(_sub(src[c], sub[c], qq), a, b, qq)
        if s < add_polys:
            extra = add[sr * n:(sr + 1) * n]
            if use_perm:
                for c in range(n):
                    o[c] = _add(extra[perm[c]], o[c], qq)
            else:
                for c in range(n):
                    o[c] = _add(extra[c], o[c], qq)


@njit(cache=True, parallel=True)
def rescale_prep(top, t, n, k1, ql, half, q, half_i):
    """The rounded top limb of a rescale, carried to every other limb."""
    for sr in prange(t.size // n):
        s, r = sr // k1, sr % k1
        qq, h = q[r], half_i[r]
        src, o = top[s * n:(s + 1) * n], t[sr * n:(sr + 1) * n]
        for c in range(n):
            x = src[c] + half
            x = x - ql if x >= ql else x
            o[c] = _sub(x % qq, h, qq)


@njit(cache=True, parallel=True)
def tensor(a, b, out, n, k, q, mu, lsh, osh):
    """The three products of a ciphertext multiplication."""
    for r in prange(k):
        qq, m, ls, os_ = q[r], mu[r], lsh[r], osh[r]
        a0, a1 = a[r * n:(r + 1) * n], a[(k + r) * n:(k + r + 1) * n]
        b0, b1 = b[r * n:(r + 1) * n], b[(k + r) * n:(k + r + 1) * n]
        o0, o1, o2 = out[r * n:(r + 1) * n], out[(k + r) * n:(k + r + 1) * n], out[(2 * k + r) * n:(2 * k + r + 1) * n]
        for c in range(n):
            o0[c] = _barrett(a0[c], b0[c], qq, m, ls, os_)
            o1[c] = _add(_barrett(a0[c], b1[c], qq, m, ls, os_), _barrett(a1[c], b0[c], qq, m, ls, os_), qq)
            o2[c] = _barrett(a1[c], b1[c], qq, m, ls, os_)


RAW = {"hepkg_rns_ntt_fwd_cols": ntt_fwd_cols, "hepkg_rns_ntt_fwd_rows": ntt_fwd_rows,
       "hepkg_rns_ntt_inv_rows": ntt_inv_rows, "hepkg_rns_ntt_inv_cols": ntt_inv_cols, "hepkg_rns_convert": convert,
       "hepkg_rns_key_inner": key_inner, "hepkg_rns_finish": finish, "hepkg_rns_rescale_prep": rescale_prep,
       "hepkg_rns_tensor": tensor}
_ELEMENTWISE: dict = {}


# ---------------------------------------------------------------------- the kernels' interface (as kernels.py)
def elementwise(name: str):
    """The broadcasting ufunc ``name`` (compiled on first use)."""
    if not _ELEMENTWISE:
        _ELEMENTWISE.update(_ufuncs())
    return _ELEMENTWISE[name]


def _scratch(name: str, flat: list) -> tuple:
    """The per-thread scratch ``name`` takes after the CUDA arguments (what CUDA keeps in registers and shared
    memory), as slices of buffers kept for the process and grown once, indexed by numba's thread id: no
    allocation per row or chunk. Called under the launch lock, so no two kernels share them at once."""
    if name not in _SCRATCH_WORDS:
        return ()
    threads_ = numba.config.NUMBA_NUM_THREADS
    words, floats = _SCRATCH_WORDS[name](flat)
    for kind, size, dtype in (("words", threads_ * words, np.uint64), ("floats", threads_ * floats, np.float64)):
        if _SCRATCH[kind].size < size:
            _SCRATCH[kind] = np.empty(size, dtype)
    return (_SCRATCH["words"],) + ((_SCRATCH["floats"],) if floats else ())


#: each kernel's scratch per thread, (words, floats), from its flat arguments
_SCRATCH_WORDS = {"hepkg_rns_convert": lambda a: ((a[7] + 1) * CHUNK, CHUNK),
                  "hepkg_rns_key_inner": lambda a: (5 * a[6], 0)}
_SCRATCH = {"words": np.empty(0, np.uint64), "floats": np.empty(0, np.float64)}


def launch(name: str, grid: tuple, block: tuple, args: tuple) -> None:
    """Run the kernel ``name`` on ``args`` (arrays C-contiguous, flattened as the CUDA source sees them)."""
    flat = []
    for a in args:
        if isinstance(a, np.ndarray):
            if not a.flags.c_contiguous:
                raise ValueError(f"{name}: array arguments must be C-contiguous (shape {a.shape})")
            a = a.reshape(-1)
        elif isinstance(a, np.signedinteger):
            a = int(a)                        # every index scalar an int64 (one specialization per kernel)
        flat.append(a)
    with _LOCK:
        RAW[name](*flat, *_scratch(name, flat))


def grid(n: int, rows: int) -> tuple:
    """The CUDA (grid, block) of an element-wise raw kernel (unused on the CPU; the orchestration is shared)."""
    return (-(-n // BLOCK), rows), (BLOCK,)


def threads() -> int:
    """The threads the kernels run on."""
    return numba.get_num_threads()


def set_threads(count: "int | None" = None) -> int:
    """Run the kernels on ``count`` threads (None: ``HEPKG_RNS_THREADS``, else ``OMP_NUM_THREADS``, else every
    core numba sees); returns the count set."""
    if count is None:
        env = os.environ.get("HEPKG_RNS_THREADS") or os.environ.get("OMP_NUM_THREADS")
        count = int(env) if env else numba.config.NUMBA_NUM_THREADS
    count = max(1, min(int(count), numba.config.NUMBA_NUM_THREADS))
    numba.set_num_threads(count)
    return count


set_threads()
