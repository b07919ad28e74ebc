"""The CUDA kernels of the engine's CuPy path (their numpy twins: :data:`hepkg.rns.twins.TWINS`, by kernel name).

Element-wise kernels (CuPy ``ElementwiseKernel``, broadcasting): ``mul_mod``, ``mul_shoup``, ``add_mod``,
``sub_mod``, ``neg_mod``. Raw kernels (one launch each, every limb and polynomial of the call):

- the NTT in two launches over a table of rows (source row, destination row, prime), N = N1 N2 with
  N1 = 2^floor(log N / 2): forward, ``ntt_fwd_cols`` runs the first log N1 stages (stride N2 and more) on
  tiles of columns in shared memory, then ``ntt_fwd_rows`` the last log N2 stages on contiguous chunks of
  N2 in shared memory; inverse, ``ntt_inv_rows`` then ``ntt_inv_cols`` (with the factor N^-1). Harvey's lazy
  butterflies (forward in [0, 4q), inverse in [0, 2q)), every launch's output canonical; twiddles read once
  per tile (the strided stages' into shared memory);
- ``convert``: fast basis conversion of several groups at once (ModUp: every digit; ModDown: P -> Q),
  rows of a group's own basis copied from a second input (ModUp: the NTT form, so they are not transformed
  again);
- ``key_inner``: the key-switching inner product of the ModUp digits with a key's (b, a), accumulated in
  128 bits and reduced every four products, optionally through an automorphism (hoisted rotations), plus
  P times an addend on the rows of Q (a relinearization with its rescale folded into ModDown);
- ``finish``: (c - t) * P^-1 (ModDown's and rescale's last step), plus an optional addend (permuted);
- ``rescale_prep``: the rounded top limb of a rescale carried to every other limb;
- ``tensor``: the three products of a ciphertext multiplication.

A twin computes exactly what its kernel computes (every residue canonical, float sums in the same
order), so the CuPy path is bit-identical to numpy; tests compile every source (NVRTC) and run it
as C++ against its twin (a block's threads as threads, ``__syncthreads`` a barrier).
"""
from __future__ import annotations

PRELUDE = r"""
typedef unsigned long long u64;
__device__ __forceinline__ u64 umin(u64 a, u64 b) { return a < b ? a : b; }
__device__ __forceinline__ u64 add_mod(u64 a, u64 b, u64 q) { u64 s = a + b; return umin(s, s - q); }
__device__ __forceinline__ u64 sub_mod(u64 a, u64 b, u64 q) { u64 d = a + (q - b); return umin(d, d - q); }
__device__ __forceinline__ u64 mul_shoup(u64 a, u64 w, u64 ws, u64 q) {
  u64 t = a * w - __umul64hi(a, ws) * q;
  return t >= q ? t - q : t;
}
__device__ __forceinline__ u64 canon4(u64 x, u64 q) {  // [0, 4q) -> [0, q)
  u64 q2 = q + q;
  x = x >= q2 ? x - q2 : x;
  return x >= q ? x - q : x;
}
#define HEPKG_NTT_SHARED 4096
#define HEPKG_NTT_MAX_N1 512
// columns a block of the NTT's strided stages holds: n2 at most, HEPKG_NTT_SHARED words in all
__device__ __forceinline__ int ntt_cols(int logn, int log1) {
  int a = 1 << (logn - log1), b = HEPKG_NTT_SHARED >> log1;
  return a < b ? a : b;
}
// load a block's tile of the NTT's strided stages: ``cols`` columns of a row from col0 (element e of column c at
// e n2 + col0 + c, held at sh[e cols + c]) and the twiddles w[0..n1), ws[0..n1) of the prime (tw, tw + n1)
__device__ __forceinline__ void ntt_tile_load(u64* sh, u64* tw, const u64* row, const u64* W, const u64* WS,
                                              int n1, int n2, int cols, int col0) {
  for (int i = threadIdx.x; i < n1; i += blockDim.x) { tw[i] = W[i]; tw[n1 + i] = WS[i]; }
  for (int i = threadIdx.x; i < cols * n1; i += blockDim.x) sh[i] = row[(size_t)(i / cols) * n2 + col0 + i % cols];
}
__device__ __forceinline__ u64 reduce128(u64 hi, u64 lo, u64 q, u64 mu, u64 lsh, u64 osh) {
  // Barrett for x = hi 2^64 + lo < 2^(2k+2) (k = bits of q): the quotient estimate is at most 6 low
  u64 x1 = (hi << (64 - lsh)) | (lo >> lsh);
  u64 qh = (__umul64hi(x1, mu) << (64 - osh)) | ((x1 * mu) >> osh);
  u64 t = lo - qh * q;
  while (t >= q) t -= q;
  return t;
}
__device__ __forceinline__ u64 mul_mod(u64 a, u64 b, u64 q, u64 mu, u64 lsh, u64 osh) {
  u64 lo = a * b, hi = __umul64hi(a, b);
  u64 x1 = (hi << (64 - lsh)) | (lo >> lsh);
  u64 qh = (__umul64hi(x1, mu) << (64 - osh)) | ((x1 * mu) >> osh);
  u64 t = lo - qh * q;
  if (t >= q) t -= q;
  if (t >= q) t -= q;
  return t;
}
"""

#: element-wise kernels: name -> (input params, output param, body)
ELEMENTWISE = {
    "hepkg_rns_mul_mod": ("uint64 a, uint64 b, uint64 q, uint64 mu, uint64 lsh, uint64 osh", "uint64 r",
                          "r = mul_mod(a, b, q, mu, lsh, osh);"),
    "hepkg_rns_mul_shoup": ("uint64 a, uint64 w, uint64 ws, uint64 q", "uint64 r", "r = mul_shoup(a, w, ws, q);"),
    "hepkg_rns_add_mod": ("uint64 a, uint64 b, uint64 q", "uint64 r", "r = add_mod(a, b, q);"),
    "hepkg_rns_sub_mod": ("uint64 a, uint64 b, uint64 q", "uint64 r", "r = sub_mod(a, b, q);"),
    "hepkg_rns_neg_mod": ("uint64 a, uint64 q", "uint64 r", "r = sub_mod(0, a, q);"),
}

RAW = {
    "hepkg_rns_ntt_fwd_cols": r"""
extern "C" __global__ void hepkg_rns_ntt_fwd_cols(const u64* in, u64* out, const int* src_row, const int* dst_row,
    const int* prime, const u64* w, const u64* ws, const u64* q, int logn, int log1) {
  __shared__ u64 sh[HEPKG_NTT_SHARED];
  __shared__ u64 tw[2 * HEPKG_NTT_MAX_N1];
  int n = 1 << logn, n1 = 1 << log1, n2 = n >> log1, cols = ntt_cols(logn, log1), per = n2 / cols;
  int job = blockIdx.x / per, col0 = (blockIdx.x % per) * cols, p = prime[job];
  const u64* src = in + (size_t)src_row[job] * n;
  u64* dst = out + (size_t)dst_row[job] * n;
  const u64 *W = w + (size_t)p * n, *WS = ws + (size_t)p * n;
  u64 Q = q[p], Q2 = Q + Q;
  ntt_tile_load(sh, tw, src, W, WS, n1, n2, cols, col0);
  __syncthreads();
  for (int st = 0; st < log1; st++) {             // stride n2 t: element e of a column at e n2 + col
    int m = 1 << st, lt = log1 - st - 1, t = 1 << lt;
    for (int b = threadIdx.x; b < cols * (n1 >> 1); b += blockDim.x) {
      int c = b % cols, k = b / cols, i = k >> lt, e = (i << (lt + 1)) + (k & (t - 1));
      u64 u = sh[e * cols + c], x = sh[(e + t) * cols + c];
      u = u >= Q2 ? u - Q2 : u;
      u64 v = x * tw[m + i] - __umul64hi(x, tw[n1 + m + i]) * Q;
      sh[e * cols + c] = u + v;
      sh[(e + t) * cols + c] = u - v + Q2;
    }
    __syncthreads();
  }
  for (int i = threadIdx.x; i < cols * n1; i += blockDim.x)
    dst[(size_t)(i / cols) * n2 + col0 + i % cols] = canon4(sh[i], Q);
}
""",
    "hepkg_rns_ntt_fwd_rows": r"""
extern "C" __global__ void hepkg_rns_ntt_fwd_rows(u64* x, const int* dst_row, const int* prime, const u64* w,
                                                  const u64* ws, const u64* q, int logn, int log1) {
  __shared__ u64 sh[HEPKG_NTT_SHARED];
  int n = 1 << logn, n1 = 1 << log1, n2 = n >> log1;
  int job = blockIdx.x >> log1, ch = blockIdx.x & (n1 - 1), p = prime[job];
  u64* row = x + (size_t)dst_row[job] * n + (size_t)ch * n2;
  const u64 *W = w + (size_t)p * n, *WS = ws + (size_t)p * n;
  u64 Q = q[p], Q2 = Q + Q;
  for (int i = threadIdx.x; i < n2; i += blockDim.x) sh[i] = row[i];
  __syncthreads();
  for (int st = log1; st < logn; st++) {          // blocks of 2t <= n2 inside the chunk; ch 2^(st - log1) before it
    int m = (1 << st) + (ch << (st - log1)), lt = logn - st - 1, t = 1 << lt;
    for (int b = threadIdx.x; b < (n2 >> 1); b += blockDim.x) {
      int i = b >> lt, e = (i << (lt + 1)) + (b & (t - 1));
      u64 u = sh[e], y = sh[e + t];
      u = u >= Q2 ? u - Q2 : u;
      u64 v = y * W[m + i] - __umul64hi(y, WS[m + i]) * Q;
      sh[e] = u + v;
      sh[e + t] = u - v + Q2;
    }
    __syncthreads();
  }
  for (int i = threadIdx.x; i < n2; i += blockDim.x) row[i] = canon4(sh[i], Q);
}
""",
    "hepkg_rns_ntt_inv_rows": r"""
extern "C" __global__ void hepkg_rns_ntt_inv_rows(const u64* in, u64* out, const int* src_row, const int* dst_row,
    const int* prime, const u64* iw, const u64* iws, const u64* q, int logn, int log1) {
  __shared__ u64 sh[HEPKG_NTT_SHARED];
  int n = 1 << logn, n1 = 1 << log1, n2 = n >> log1;
  int job = blockIdx.x >> log1, ch = blockIdx.x & (n1 - 1), p = prime[job];
  const u64* src = in + (size_t)src_row[job] * n + (size_t)ch * n2;
  u64* row = out + (size_t)dst_row[job] * n + (size_t)ch * n2;
  const u64 *W = iw + (size_t)p * n, *WS = iws + (size_t)p * n;
  u64 Q = q[p], Q2 = Q + Q;
  for (int i = threadIdx.x; i < n2; i += blockDim.x) sh[i] = src[i];
  __syncthreads();
  for (int st = logn - 1; st >= log1; st--) {
    int m = (1 << st) + (ch << (st - log1)), lt = logn - st - 1, t = 1 << lt;
    for (int b = threadIdx.x; b < (n2 >> 1); b += blockDim.x) {
      int i = b >> lt, e = (i << (lt + 1)) + (b & (t - 1));
      u64 u = sh[e], v = sh[e + t], a = u + v, d = u - v + Q2;        // [0, 2q) in and out
      sh[e] = a >= Q2 ? a - Q2 : a;
      sh[e + t] = d * W[m + i] - __umul64hi(d, WS[m + i]) * Q;
    }
    __syncthreads();
  }
  for (int i = threadIdx.x; i < n2; i += blockDim.x) row[i] = canon4(sh[i], Q);
}
""",
    "hepkg_rns_ntt_inv_cols": r"""
extern "C" __global__ void hepkg_rns_ntt_inv_cols(u64* x, const int* dst_row, const int* prime, const u64* iw,
    const u64* iws, const u64* q, int logn, int log1, const u64* ninv, const u64* ninvs) {
  __shared__ u64 sh[HEPKG_NTT_SHARED];
  __shared__ u64 tw[2 * HEPKG_NTT_MAX_N1];
  int n = 1 << logn, n1 = 1 << log1, n2 = n >> log1, cols = ntt_cols(logn, log1), per = n2 / cols;
  int job = blockIdx.x / per, col0 = (blockIdx.x % per) * cols, p = prime[job];
  u64* row = x + (size_t)dst_row[job] * n;
  const u64 *W = iw + (size_t)p * n, *WS = iws + (size_t)p * n;
  u64 Q = q[p], Q2 = Q + Q;
  ntt_tile_load(sh, tw, row, W, WS, n1, n2, cols, col0);
  __syncthreads();
  for (int st = log1 - 1; st >= 0; st--) {
    int m = 1 << st, lt = log1 - st - 1, t = 1 << lt;
    for (int b = threadIdx.x; b < cols * (n1 >> 1); b += blockDim.x) {
      int c = b % cols, k = b / cols, i = k >> lt, e = (i << (lt + 1)) + (k & (t - 1));
      u64 u = sh[e * cols + c], v = sh[(e + t) * cols + c], a = u + v, d = u - v + Q2;
      sh[e * cols + c] = a >= Q2 ? a - Q2 : a;
      sh[(e + t) * cols + c] = d * tw[m + i] - __umul64hi(d, tw[n1 + m + i]) * Q;
    }
    __syncthreads();
  }
  for (int i = threadIdx.x; i < cols * n1; i += blockDim.x)
    row[(size_t)(i / cols) * n2 + col0 + i % cols] = mul_shoup(sh[i], ninv[p], ninvs[p], Q);
}
""",
    "hepkg_rns_convert": r"""
#define HEPKG_MAX_SRC 16
extern "C" __global__ void hepkg_rns_convert(const u64* x, const u64* xn, u64* out, int n, int kin, int groups,
    int kout, int A, const int* nsrc, const int* src_row, const u64* src_q, const u64* ih, const u64* ihs,
    const double* isrc, const int* copy_from, const u64* dst_q, const u64* hat, const u64* hats, const u64* tot,
    const u64* tots) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n) return;
  int sg = blockIdx.y, s = sg / groups, g = sg % groups, ns = nsrc[g];
  const u64* xs = x + (size_t)s * kin * n;
  u64* o = out + (size_t)sg * kout * n;
  u64 y[HEPKG_MAX_SRC];
  double f = 0.0;
  for (int i = 0; i < ns; i++) {
    int gi = g * A + i;
    y[i] = mul_shoup(xs[(size_t)src_row[gi] * n + c], ih[gi], ihs[gi], src_q[gi]);
    f = __dadd_rn(f, __dmul_rn((double)y[i], isrc[gi]));
  }
  u64 v = (u64)rint(f);
  for (int r = 0; r < kout; r++) {
    int cf = copy_from[g * kout + r];
    u64 res;
    if (cf >= 0) {                                  // a row of the group's own basis: xn's (ModUp: NTT form)
      res = xn[((size_t)s * kin + cf) * n + c];
    } else {
      u64 Q = dst_q[r], acc = 0;
      for (int i = 0; i < ns; i++) {
        int h = (g * A + i) * kout + r;
        acc = add_mod(acc, mul_shoup(y[i], hat[h], hats[h], Q), Q);
      }
      res = sub_mod(acc, mul_shoup(v, tot[g * kout + r], tots[g * kout + r], Q), Q);
    }
    o[(size_t)r * n + c] = res;
  }
}
""",
    "hepkg_rns_key_inner": r"""
extern "C" __global__ void hepkg_rns_key_inner(const u64* ext, const u64* kb, const u64* ka, u64* out,
    const long long* perm, int use_perm, int n, int D, int K, int KR, const int* key_row,
    const u64* q, const u64* mu, const u64* lsh, const u64* osh, const u64* add, int add_polys, int KQ,
    const u64* pm) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n) return;
  int r = blockIdx.y, kr = key_row[r];
  long long src = use_perm ? perm[c] : c;
  u64 Q = q[r], M = mu[r], L = lsh[r], O = osh[r], bh = 0, bl = 0, ah = 0, al = 0;
  for (int j = 0; j < D; j++) {                   // 128-bit sums, reduced every 4 products (below 4 q^2 + q)
    u64 e = ext[((size_t)j * K + r) * n + src];
    u64 yb = kb[((size_t)j * KR + kr) * n + c], ya = ka[((size_t)j * KR + kr) * n + c];
    u64 lo = e * yb;
    bl += lo;
    bh += __umul64hi(e, yb) + (bl < lo);
    lo = e * ya;
    al += lo;
    ah += __umul64hi(e, ya) + (al < lo);
    if ((j & 3) == 3) { bl = reduce128(bh, bl, Q, M, L, O); al = reduce128(ah, al, Q, M, L, O); bh = ah = 0; }
  }
  u64 rb = reduce128(bh, bl, Q, M, L, O), ra = reduce128(ah, al, Q, M, L, O);
  if (add_polys && r < KQ) {                      // P times the addend on the rows of Q (a rescale folded in)
    rb = add_mod(rb, mul_mod(add[(size_t)r * n + c], pm[r], Q, M, L, O), Q);
    ra = add_mod(ra, mul_mod(add[((size_t)KQ + r) * n + c], pm[r], Q, M, L, O), Q);
  }
  out[(size_t)r * n + c] = rb;
  out[((size_t)K + r) * n + c] = ra;
}
""",
    "hepkg_rns_finish": r"""
extern "C" __global__ void hepkg_rns_finish(const u64* cc, const u64* t, u64* out, const u64* add,
    const long long* perm, int use_perm, int n, int kc, int k, int add_polys,
    const u64* q, const u64* inv, const u64* invs) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n) return;
  int sr = blockIdx.y, s = sr / k, r = sr % k;
  u64 Q = q[r];
  u64 v = mul_shoup(sub_mod(cc[((size_t)s * kc + r) * n + c], t[(size_t)sr * n + c], Q), inv[r], invs[r], Q);
  if (s < add_polys) v = add_mod(add[(size_t)sr * n + (use_perm ? perm[c] : c)], v, Q);
  out[(size_t)sr * n + c] = v;
}
""",
    "hepkg_rns_rescale_prep": r"""
extern "C" __global__ void hepkg_rns_rescale_prep(const u64* top, u64* t, int n, int k1, u64 ql, u64 half,
                                                  const u64* q, const u64* half_i) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n) return;
  int sr = blockIdx.y, s = sr / k1, r = sr % k1;
  u64 x = top[(size_t)s * n + c] + half;
  x = umin(x, x - ql);
  t[(size_t)sr * n + c] = sub_mod(x % q[r], half_i[r], q[r]);
}
""",
    "hepkg_rns_tensor": r"""
extern "C" __global__ void hepkg_rns_tensor(const u64* a, const u64* b, u64* out, int n, int k,
    const u64* q, const u64* mu, const u64* lsh, const u64* osh) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n) return;
  int r = blockIdx.y;
  size_t i0 = (size_t)r * n + c, i1 = ((size_t)k + r) * n + c;
  u64 Q = q[r], M = mu[r], L = lsh[r], O = osh[r];
  u64 a0 = a[i0], a1 = a[i1], b0 = b[i0], b1 = b[i1];
  out[i0] = mul_mod(a0, b0, Q, M, L, O);
  out[i1] = add_mod(mul_mod(a0, b1, Q, M, L, O), mul_mod(a1, b0, Q, M, L, O), Q);
  out[((size_t)2 * k + r) * n + c] = mul_mod(a1, b1, Q, M, L, O);
}
""",
}

#: threads per block of the element-wise raw kernels (grid: (ceil(N / BLOCK), rows))
BLOCK = 256
#: words of shared memory an NTT block holds (HEPKG_NTT_SHARED) and the largest first-phase length (N1)
NTT_SHARED, NTT_MAX_N1 = 4096, 512
#: threads per block of the NTT kernels, at most
NTT_THREADS = 256


def source(name: str) -> str:
    """The full CUDA source of a kernel (prelude included); an element-wise kernel's body is wrapped in a
    one-thread-per-element kernel of contiguous equal-shape arguments (CuPy's own wrapper also broadcasts)."""
    if name in RAW:
        return PRELUDE + RAW[name]
    ins, out, body = ELEMENTWISE[name]
    names = [p.split()[1] for p in ins.split(",")]
    o = out.split()[1]
    params = ", ".join([f"const u64* _{v}" for v in names] + [f"u64* _{o}", "long long n"])
    loads = " ".join(f"u64 {v} = _{v}[i];" for v in names)
    return PRELUDE + (f'extern "C" __global__ void {name}({params}) {{\n'
                      f"  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
                      f"  if (i >= n) return;\n  {loads} u64 {o};\n  {body}\n  _{o}[i] = {o};\n}}\n")


# ---------------------------------------------------------------------- CuPy launch
_CACHE: dict = {}


def reset() -> None:
    """Forget the compiled kernels (a new ``cupy`` module)."""
    _CACHE.clear()


def elementwise(name: str):
    """The CuPy ElementwiseKernel ``name`` (compiled once)."""
    if name not in _CACHE:
        import cupy as cp  # only on the CuPy path
        ins, out, body = ELEMENTWISE[name]
        _CACHE[name] = cp.ElementwiseKernel(ins, out, body, name, preamble=PRELUDE)
    return _CACHE[name]


def launch(name: str, grid: tuple, block: tuple, args: tuple) -> None:
    """Launch the raw kernel ``name`` (compiled once)."""
    if name not in _CACHE:
        import cupy as cp
        _CACHE[name] = cp.RawKernel(source(name), name)
    _CACHE[name](grid, block, args)


def grid(n: int, rows: int) -> tuple:
    """The (grid, block) of an element-wise raw kernel over ``rows`` rows of ``n``."""
    return (-(-n // BLOCK), rows), (BLOCK,)
