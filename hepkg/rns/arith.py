"""Word-sized modular arithmetic for RNS limbs, written once against an array module ``xp``.

Residues are uint64 arrays; moduli are primes of at most 60 bits (``MAX_PRIME_BITS``).
uint64 array products wrap modulo 2^64, so a 128-bit product is built from 32-bit halves
(``mul_wide``) and reduced by Barrett reduction with a per-prime shift (``mul_mod``):
every intermediate fits 64 bits (see ``Modulus`` for the bounds). Products by a fixed
operand (NTT twiddles, CRT constants) use Shoup's method (``mul_shoup``); on numpy its
quotient comes from three 32-bit partial products (at most 2 low, corrected after). On the compiled CPU
path and on CuPy, ``mul_mod``, ``mul_shoup``, ``add_mod``, ``sub_mod`` and ``neg_mod`` run as one kernel each
(:mod:`hepkg.rns.cpu`, :mod:`hepkg.rns.kernels`: a true 128-bit product), and the numpy code here is their twin.
"""
from __future__ import annotations

import numpy as np

MASK32 = 0xFFFFFFFF
#: the largest prime size supported: Barrett needs 2q^2 < 2^128 and 3q < 2^64; 60 keeps sums of two residues far below
MAX_PRIME_BITS = 60
#: Miller-Rabin bases that decide primality exactly for every n < 3.3 * 10^24 (> 2^64)
_MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)


# ---------------------------------------------------------------------- primes (Python ints)
def is_prime(n: int) -> bool:
    """Deterministic Miller-Rabin for n < 3.3e24 (every word-sized prime)."""
    if n < 2:
        return False
    for p in _MR_BASES:
        if n % p == 0:
            return n == p
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for a in _MR_BASES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def ntt_primes(bits: int, n: int, count: int, exclude=()) -> list[int]:
    """The ``count`` largest primes q < 2^bits with q = 1 mod 2n (NTT-friendly), not in ``exclude``."""
    if not 2 <= bits <= MAX_PRIME_BITS:
        raise ValueError(f"prime size {bits} outside 2..{MAX_PRIME_BITS} bits")
    step, out = 2 * n, []
    q = ((1 << bits) - 1) // step * step + 1
    while len(out) < count:
        if q < (1 << (bits - 1)):
            raise ValueError(f"fewer than {count} NTT-friendly {bits}-bit primes for N={n}")
        if q not in exclude and is_prime(q):
            out.append(q)
        q -= step
    return out


def ntt_prime_near(target: float, n: int, exclude=()) -> int:
    """The NTT-friendly prime (q = 1 mod 2n) closest to ``target``, not in ``exclude``."""
    step = 2 * n
    base = int(round(target)) // step * step + 1
    for k in range(1 << 20):
        for q in (base + k * step, base - k * step, base + (k + 1) * step):
            if q > 2 and q not in exclude and q.bit_length() <= MAX_PRIME_BITS and is_prime(q):
                return q
    raise ValueError(f"no NTT-friendly prime near {target:g} for N={n}")


def root_of_unity(q: int, order: int) -> int:
    """A primitive ``order``-th root of unity mod prime q (``order`` a power of two dividing q - 1)."""
    if (q - 1) % order:
        raise ValueError(f"{order} does not divide q - 1 for q = {q}")
    for g in range(2, q):
        w = pow(g, (q - 1) // order, q)
        if pow(w, order // 2, q) == q - 1:
            return w
    raise ValueError(f"no primitive {order}-th root of unity mod {q}")


# ---------------------------------------------------------------------- moduli
class Modulus:
    """Per-limb constants of an RNS basis, as (k, 1) arrays that broadcast over (k, N) residues.

    Barrett: for q with k bits, mu = floor(2^(2k) / q) < 2^(k+1). For x = a*b < q^2 < 2^(2k),
    x1 = x >> (k-1) < 2^(k+1) and qhat = (x1 * mu) >> (k+1) (a product below 2^(2k+2) <= 2^122)
    is the true quotient minus 0, 1 or 2, so x - qhat*q < 3q < 2^62 is exact in 64-bit words.
    """

    def __init__(self, primes, xp=np):
        self.primes = tuple(int(q) for q in primes)
        for q in self.primes:
            if not (q > 2 and q.bit_length() <= MAX_PRIME_BITS):
                raise ValueError(f"modulus {q} must be an odd prime of at most {MAX_PRIME_BITS} bits")
        bits = [q.bit_length() for q in self.primes]
        self.xp = xp
        self.q = self._col([*self.primes])
        self.mu = self._col([(1 << (2 * b)) // q for q, b in zip(self.primes, bits)])
        self.lo_shift = self._col([b - 1 for b in bits])        # x >> (k-1): low word part
        self.hi_shift = self._col([65 - b for b in bits])       # ... and the high word's part
        self.out_lo = self._col([b + 1 for b in bits])          # (x1*mu) >> (k+1)
        self.out_hi = self._col([63 - b for b in bits])

    def _col(self, values) -> "np.ndarray":
        return self.xp.asarray(np.asarray(values, dtype=np.uint64).reshape(-1, 1))

    def __len__(self) -> int:
        return len(self.primes)

    def take(self, rows) -> "Modulus":
        """The sub-basis of the limbs ``rows`` (indices into this basis)."""
        return Modulus([self.primes[i] for i in rows], self.xp)

    def product(self) -> int:
        out = 1
        for q in self.primes:
            out *= q
        return out

    def constants(self, values) -> tuple:
        """(w, w_shoup) column arrays for one constant per limb (Python ints, reduced here)."""
        w = [int(v) % q for v, q in zip(values, self.primes)]
        return self._col(w), self._col([(x << 64) // q for x, q in zip(w, self.primes)])


# ---------------------------------------------------------------------- kernels (numpy twins)
def mul_wide(a, b):
    """(hi, lo) words of the 128-bit products a*b of uint64 arrays (32-bit halves, no overflow;
    the temporaries are updated in place)."""
    a0, a1 = a & MASK32, a >> 32
    b0, b1 = b & MASK32, b >> 32
    mid, p01, p10, hi = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid >>= 32
    mid += p01 & MASK32
    mid += p10 & MASK32                                           # < 3 * 2^32
    p01 >>= 32
    p10 >>= 32
    mid >>= 32
    hi += p01
    hi += p10
    hi += mid
    return hi, a * b                                              # low word: the wrapping product


def _mul_mod_xp(a, b, m: Modulus):
    hi, lo = mul_wide(a, b)
    x1 = (hi << m.hi_shift) | (lo >> m.lo_shift)
    h2, l2 = mul_wide(x1, m.mu)
    qhat = (h2 << m.out_hi) | (l2 >> m.out_lo)
    r = lo - qhat * m.q                                           # exact: 0 <= r < 3q
    r = m.xp.minimum(r, r - m.q)
    return m.xp.minimum(r, r - m.q)


def _mul_shoup_xp(a, w, w_shoup, q, xp):
    # the quotient hi(a * w_shoup) less the dropped low-by-low product and carries: 0 to 2 below the
    # exact one, so r = a*w - quotient*q lies in [0, 4q) (< 2^62), then two conditional subtractions
    a0, a1 = a & MASK32, a >> 32
    s0, s1 = w_shoup & MASK32, w_shoup >> 32
    t, cross = a1 * s1, a1 * s0
    cross >>= 32
    t += cross
    cross = a0 * s1
    cross >>= 32
    t += cross
    t *= q
    r = a * w
    r -= t
    xp.subtract(r, 2 * q, out=t)
    xp.minimum(r, t, out=r)
    xp.subtract(r, q, out=t)
    return xp.minimum(r, t, out=r)


def mul_mod(a, b, m: Modulus):
    """a*b mod q per limb, for residues a, b < q (broadcast against m's (k, 1) constants)."""
    if m.xp is not np:
        return _kernel("hepkg_rns_mul_mod", m.xp)(a, b, m.q, m.mu, m.lo_shift, m.out_lo)
    return _mul_mod_xp(a, b, m)


def mul_shoup(a, w, w_shoup, q, xp=np):
    """a*w mod q for a fixed w < q with w_shoup = floor(w * 2^64 / q); any a < 2^64, q < 2^62."""
    if xp is not np:
        return _kernel("hepkg_rns_mul_shoup", xp)(a, w, w_shoup, q)
    return _mul_shoup_xp(a, w, w_shoup, q, xp)


def add_mod(a, b, q, xp=np):
    """a + b mod q for residues < q (the wrapped a+b-q is larger than a+b exactly when a+b < q)."""
    if xp is not np:
        return _kernel("hepkg_rns_add_mod", xp)(a, b, q)
    s = a + b
    return xp.minimum(s, s - q)


def sub_mod(a, b, q, xp=np):
    """a - b mod q for residues < q."""
    if xp is not np:
        return _kernel("hepkg_rns_sub_mod", xp)(a, b, q)
    d = a + (q - b)
    return xp.minimum(d, d - q)


def neg_mod(a, q, xp=np):
    """-a mod q for residues < q."""
    if xp is not np:
        return _kernel("hepkg_rns_neg_mod", xp)(a, q)
    d = q - a
    return xp.minimum(d, d - q)


def shoup_table(w, q, xp=np):
    """floor(w * 2^64 / q) element-wise for w < q (binary long division, 64 vectorized steps)."""
    r = xp.array(w, dtype=np.uint64, copy=True)
    out = xp.zeros_like(r)
    for _ in range(64):
        r = r << 1
        bit = (r >= q).astype(np.uint64)
        r = r - bit * q
        out = (out << 1) | bit
    return out


def signed_to_rns(x, m: Modulus):
    """Residues (..., k, N) of signed integers x (int64, shape (..., N)), each limb's in [0, q)."""
    q = m.xp.asarray(np.asarray(m.primes, dtype=np.int64).reshape(-1, 1))
    return (x[..., None, :] % q).astype(np.uint64)


def _kernel(name: str, xp):
    """The element-wise kernel ``name`` of ``xp``'s kernel set (compiled CPU or CUDA)."""
    from .device import kernel_set
    return kernel_set(xp).elementwise(name)
