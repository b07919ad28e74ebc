"""Encrypted threshold comparison (face-search paper, Sec. 5.1.4): Chebyshev series evaluated by
Paterson-Stockmeyer, Cheon et al.'s f4, and the paper's Algorithm 2 as printed.

The server replaces each similarity score x by f(x) = (sign(x - delta) + 1) / 2 (Eq. 7),
approximately: 1 for a match, 0 otherwise (:func:`compare`).

Coefficient convention: :func:`coefficients` returns c_0..c_n with f ~ sum_i c_i T_i (c_0 *not*
halved: ``numpy.polynomial.chebyshev.chebval`` evaluates it as is). OpenFHE's
``EvalChebyshevCoefficients`` returns the same list with c_0 doubled (its series adds c_0 / 2).

Depth: :func:`evaluate_chebyshev` reaches ceil(log2(degree + 1)) levels on [-1, 1] (degree
5/13/27/59/119 -> 3/4/5/6/7), as OpenFHE's EvalChebyshevSeries, whose documented table
(4/5/6/7/8) counts one level more for the affine map of a general [a, b]; here too an interval
other than [-1, 1] costs that one level.

Everything speaks only to the backend protocol (``mul``, ``mul_plain``, ``add``, ``sub``,
``drop_level``), so it runs on every backend; operands are brought to one level before each
addition and product (the upper one is dropped, and the drop is counted). The backends would
align on their own (SEAL through Pyfhel and TenSEAL also equalizes the scales that rescaling by
primes near 2^scale_bits leaves a rounding drift apart); doing it here makes every level visible,
as FIDESlib's explicit MatchLevel does. Only :func:`openfhe_native_chebyshev` leaves the protocol.

Magnitude bounds: the backend protocol carries an upper bound on every CKKS ciphertext's values by
interval arithmetic, which through a series grows far beyond the truth (T_8 on [-1, 1]: 723 instead
of 1). Where the mathematics proves a tighter one, it is asserted with ``ctx.tighten_bound``: each
power T_i(y) by 1 (or T_i(r) for |y| <= r > 1), a series' or f4's output by the polynomial's maximum
on the input interval (:func:`poly_max_abs`), the comparison's input by 1 (cosine similarities of unit
vectors). The context then refuses what cannot fit (``ScaleOverflow``) before it wraps.
"""
from __future__ import annotations

import functools
import math
import numbers

import numpy as np
from numpy.polynomial import chebyshev as C

__all__ = ["DEGREE_FOR_KAPPA", "DELTA", "coefficients", "step_coefficients", "sign_coefficients", "chebyshev_numpy",
           "ps_parameters", "baby_size", "series_depth", "paterson_stockmeyer_numpy", "evaluate_chebyshev", "f4",
           "f4_numpy", "compare", "compare_numpy", "printed_algorithm2_numpy", "effective_threshold",
           "openfhe_native_chebyshev", "poly_max_abs", "chebyshev_t_max"]

#: Chebyshev degree per comparison depth kappa (the paper's Paterson-Stockmeyer-aware lookup).
DEGREE_FOR_KAPPA = {7: 5, 8: 13, 9: 27, 10: 59}
#: The threshold on cosine similarity used by the authors' code.
DELTA = 0.44
#: f4 = sum F4[i] y^i (Cheon et al.), odd powers 1..9.
F4 = {1: 315 / 128, 3: -420 / 128, 5: 378 / 128, 7: -180 / 128, 9: 35 / 128}
_ZERO = 1e-14  # coefficients below this are dropped: far under CKKS precision


# ---------------------------------------------------------------------------- coefficients

def coefficients(fn, degree: int, a: float = -1.0, b: float = 1.0) -> np.ndarray:
    """c_0..c_degree with fn(x) ~ sum_i c_i T_i(y), y = (2x - a - b) / (b - a), by interpolation at
    the degree + 1 Chebyshev nodes (a DCT), as OpenFHE's EvalChebyshevCoefficients (whose c_0 is 2 c_0)."""
    if degree < 1:
        raise ValueError(f"degree must be >= 1, got {degree}")
    if not a < b:
        raise ValueError(f"the interval needs a < b, got [{a}, {b}]")
    n = degree + 1
    theta = np.pi * (np.arange(n) + 0.5) / n
    y = np.asarray([fn(v) for v in (np.cos(theta) * (b - a) + (b + a)) / 2], dtype=float)
    c = 2.0 / n * np.cos(np.outer(np.arange(n), theta)) @ y
    c[0] /= 2
    return c


def step_coefficients(degree: int, delta: float = DELTA, a: float = -1.0, b: float = 1.0) -> np.ndarray:
    """Chebyshev coefficients on [a, b] of the step f(x) = (sign(x - delta) + 1) / 2 (Eq. 7; f(delta) = 1)."""
    return coefficients(lambda x: 1.0 if x >= delta else 0.0, degree, a, b)


def sign_coefficients(degree: int, delta: float = DELTA, a: float = -1.0, b: float = 1.0) -> np.ndarray:
    """Chebyshev coefficients on [a, b] of sign(x - delta), i.e. 2 * step - 1 (what Algorithm 2 and f4 take)."""
    return coefficients(lambda x: 1.0 if x >= delta else -1.0, degree, a, b)


def _unit(x, a: float, b: float):
    """x mapped from [a, b] onto [-1, 1]."""
    return x if (a, b) == (-1.0, 1.0) else (2 * np.asarray(x, dtype=float) - a - b) / (b - a)


def chebyshev_numpy(c, x, a: float = -1.0, b: float = 1.0) -> np.ndarray:
    """sum_i c_i T_i(y) on plaintext x (y: x mapped from [a, b] onto [-1, 1]): ``chebval``, c_0 as is."""
    return C.chebval(_unit(np.asarray(x, dtype=float), a, b), np.asarray(c, dtype=float))


# ---------------------------------------------------------------------------- proven magnitude bounds

@functools.lru_cache(maxsize=256)
def poly_max_abs(basis: str, coef: tuple, r: float) -> float:
    """A proven upper bound on |p(y)| for |y| <= r, p of degree n given by ``coef`` in ``basis``
    ('chebyshev': sum c_i T_i(y); 'power': sum c_i y^i): the largest |p| on 64 n^2 + 1 even points of
    [-r, r], raised by Markov's inequality (|p'| <= n^2 / r max|p| there, so p moves by at most max|p| / 64
    between a point and its nearest grid point): max|p| <= grid max / (1 - 1/64)."""
    n = max(len(coef) - 1, 1)
    y = np.linspace(-r, r, 64 * n * n + 1)
    with np.errstate(over="ignore", invalid="ignore"):
        p = C.chebval(y, coef) if basis == "chebyshev" else np.polynomial.polynomial.polyval(y, coef)
        top = float(np.max(np.abs(p))) / (1 - 1 / 64)
    return top if np.isfinite(top) else math.inf


def chebyshev_t_max(i: int, r: float) -> float:
    """max |T_i(y)| for |y| <= r: 1 for r <= 1, T_i(r) = cosh(i acosh r) beyond (T_i grows monotonically
    there); inf where that overflows a float."""
    if r <= 1:
        return 1.0
    t = i * math.acosh(r)
    return math.cosh(t) if t < 700 else math.inf


# ---------------------------------------------------------------------------- Paterson-Stockmeyer plan

def ps_parameters(degree: int) -> tuple[int, int]:
    """The paper's (d1, d2): least d1 + d2 with d1 * 2^(d2 - 1) >= degree, ties to the larger d1 (13 -> (2, 4);
    (1, 5) ties with it). Reported as the paper states it; :func:`evaluate_chebyshev` plans by :func:`baby_size`."""
    if degree < 1:
        raise ValueError(f"degree must be >= 1, got {degree}")
    return min(((d1, d2) for d1 in range(1, degree + 1) for d2 in range(1, degree.bit_length() + 2)
                if d1 * 2 ** (d2 - 1) >= degree), key=lambda p: (p[0] + p[1], -p[0]))


def _trim(c: np.ndarray) -> np.ndarray:
    nz = np.flatnonzero(np.abs(c) > _ZERO)
    return c[:nz[-1] + 1] if len(nz) else c[:1]


def _divide(c: np.ndarray, g: int) -> tuple[np.ndarray, np.ndarray]:
    """(q, r) with sum c_i T_i = (sum q_j T_j) T_g + sum r_i T_i and deg r < g, for g <= deg c <= 2g:
    T_j T_g = (T_{g+j} + T_{g-j}) / 2, so q_0 = c_g, q_j = 2 c_{g+j}, and r_{g-j} = c_{g-j} - c_{g+j}."""
    deg = len(c) - 1
    q = np.concatenate([[c[g]], 2 * c[g + 1:]])
    r = c[:g].copy()
    r[g - np.arange(1, deg - g + 1)] -= c[g + 1:]
    return q, r


class _Slots:
    """A plaintext stand-in for a ciphertext: the slot values and the level CKKS would reach."""

    __slots__ = ("values", "level")

    def __init__(self, values, level: int):
        self.values, self.level = values, level

    @property
    def bound(self) -> float:
        return float(np.max(np.abs(self.values)))


def _val(v):
    return v.values if isinstance(v, _Slots) else v


class _Shadow:
    """The protocol calls :func:`evaluate_chebyshev` makes, in float64 on :class:`_Slots`, with CKKS's
    level rule (a product lands one level below its deeper operand) and a count of ct x ct products."""

    def __init__(self):
        self.products = 0

    def rescale(self, x):
        return x

    def drop_level(self, x, levels: int = 1):
        return _Slots(x.values, x.level + levels)

    def add(self, x, y):
        return _Slots(x.values + _val(y), max(x.level, getattr(y, "level", 0)))

    def sub(self, x, y):
        return _Slots(x.values - _val(y), max(x.level, getattr(y, "level", 0)))

    def mul(self, x, y):
        self.products += 1
        return _Slots(x.values * y.values, max(x.level, y.level) + 1)

    def mul_plain(self, x, s):
        return _Slots(x.values * s, x.level + 1)

    def tighten_bound(self, x, bound):
        return x


def _shadow_run(c: np.ndarray, k: int, x=0.0, a: float = -1.0, b: float = 1.0) -> tuple[_Slots, int]:
    shadow = _Shadow()
    out = _evaluate(shadow, _Slots(np.asarray(x, dtype=float), 0), c, k, a, b)
    return out, shadow.products


def baby_size(c) -> int:
    """The baby-step size k: a power of two, the one giving the least depth, then the fewest ct x ct products.

    Powers of two keep every giant power T_k, T_2k, ... a doubling of the last; with the split at the
    largest giant power below the degree, k = 2 already reaches ceil(log2(degree + 1)) and larger k trade
    giant-step products for baby ones (degree 5/13/27/59 -> k = 2/4/4/8)."""
    c = _trim(np.asarray(c, dtype=float))
    deg = len(c) - 1
    cands = [2 ** i for i in range(1, max(1, math.ceil(math.log2(deg + 1))) + 1)]
    runs = {k: _shadow_run(c, k) for k in cands}
    return min(cands, key=lambda k: (runs[k][0].level, runs[k][1]))


def series_depth(c) -> int:
    """Multiplicative depth :func:`evaluate_chebyshev` reaches on coefficients ``c`` over [-1, 1]."""
    c = _trim(np.asarray(c, dtype=float))
    return _shadow_run(c, baby_size(c))[0].level


def paterson_stockmeyer_numpy(c, x, a: float = -1.0, b: float = 1.0) -> np.ndarray:
    """The numpy twin of :func:`evaluate_chebyshev`: the same powers, divisions and chunks, in float64."""
    c = _trim(np.asarray(c, dtype=float))
    out = _shadow_run(c, baby_size(c), x, a, b)[0] if len(c) > 1 else None
    return np.broadcast_to(c[0], np.shape(x)).astype(float) if out is None else out.values


# ---------------------------------------------------------------------------- evaluation on the protocol

def _level(ctx, ct, level: int):
    return ctx.drop_level(ct, level - ct.level) if ct.level < level else ct


def _aligned(ctx, *cts):
    top = max(c.level for c in cts)
    return [_level(ctx, c, top) for c in cts]


def _add(ctx, x, y):
    """x + y for ciphertexts or numbers (at least one a ciphertext), at one level."""
    if not hasattr(x, "level"):
        x, y = y, x
    if not hasattr(y, "level"):
        return ctx.add(x, float(y)) if y else x
    return ctx.add(*_aligned(ctx, x, y))


def _mul(ctx, x, y):
    return ctx.mul(*_aligned(ctx, ctx.rescale(x), ctx.rescale(y)))


def _double_minus(ctx, prod, minus):
    """2 * prod - minus (minus: a ciphertext or a number); the doubling is an addition (no level)."""
    two = ctx.add(prod, prod)
    return ctx.sub(*_aligned(ctx, two, minus)) if hasattr(minus, "level") else ctx.add(two, -float(minus))


def _powers(ctx, t1, k: int, top: int) -> dict:
    """Baby powers T_1..T_k (T_2j = 2 T_j^2 - 1, T_{a+b} = 2 T_a T_b - T_{a-b}) and giant powers
    T_2k, T_4k, ..., T_top by doubling; T_i in depth ceil(log2 i), its bound tightened to max |T_i| on the
    input's interval."""
    r = t1.bound
    T = {1: t1}
    for i in range(2, k + 1):
        hi, lo = (i + 1) // 2, i // 2
        T[i] = ctx.tighten_bound(_double_minus(ctx, _mul(ctx, T[hi], T[lo]), T[hi - lo] if hi != lo else 1.0),
                                 chebyshev_t_max(i, r))
    g = k
    while g < top:
        T[2 * g] = ctx.tighten_bound(_double_minus(ctx, _mul(ctx, T[g], T[g]), 1.0), chebyshev_t_max(2 * g, r))
        g *= 2
    return T


def _combine(ctx, c: np.ndarray, T: dict, k: int):
    """The series with coefficients ``c`` (a ciphertext, or a number if constant): below degree k a
    linear combination of baby powers; else c = q T_g + r at the largest giant power g <= deg c."""
    c = _trim(c)
    deg = len(c) - 1
    if deg < k:
        terms = [ctx.mul_plain(T[j], float(c[j])) for j in range(1, deg + 1) if abs(c[j]) > _ZERO]
        if not terms:
            return float(c[0])
        out = terms[0]
        for t in terms[1:]:
            out = _add(ctx, out, t)
        return _add(ctx, out, float(c[0]))
    g = k
    while 2 * g <= deg:
        g *= 2
    q, r = _divide(c, g)
    qv = _combine(ctx, q, T, k)
    high = _mul(ctx, qv, T[g]) if hasattr(qv, "level") else ctx.mul_plain(T[g], qv)
    return _add(ctx, high, _combine(ctx, r, T, k))


def _evaluate(ctx, ct, c: np.ndarray, k: int, a: float, b: float):
    if (a, b) != (-1.0, 1.0):
        ct = ctx.add(ctx.mul_plain(ct, 2.0 / (b - a)), -(a + b) / (b - a))
    deg = len(c) - 1
    top = k
    while 2 * top <= deg:
        top *= 2
    T = _powers(ctx, ct, min(k, deg), top if deg >= k else 0)
    return ctx.tighten_bound(_combine(ctx, c, T, k), poly_max_abs("chebyshev", tuple(c), ct.bound))


def evaluate_chebyshev(ctx, ct, c, a: float = -1.0, b: float = 1.0):
    """sum_i c_i T_i(y) on a CKKS ciphertext, y = (2x - a - b) / (b - a), by Paterson-Stockmeyer with
    Chebyshev division (baby size :func:`baby_size`), in depth :func:`series_depth` (+ 1 if [a, b] is not
    [-1, 1]). Backend protocol only: runs on every backend."""
    c = _trim(np.asarray(c, dtype=float))
    if len(c) < 2:
        raise ValueError("a constant series needs no ciphertext evaluation")
    if not a < b:
        raise ValueError(f"the interval needs a < b, got [{a}, {b}]")
    return _evaluate(ctx, ct, c, baby_size(c), float(a), float(b))


# ---------------------------------------------------------------------------- f4 and the comparison

def f4_numpy(y, scale: float = 1.0, shift: float = 0.0) -> np.ndarray:
    """scale * f4(y) + shift in numpy, f4(y) = (315y - 420y^3 + 378y^5 - 180y^7 + 35y^9) / 128."""
    y = np.asarray(y, dtype=float)
    return scale * sum(v * y ** p for p, v in F4.items()) + shift


def f4(ctx, ct, scale: float = 1.0, shift: float = 0.0):
    """scale * f4(ct) + shift in depth 4: y2, y4, y8 by squaring, terms (c9 y) y8, ((c7 y) y2) y4, (c5 y) y4,
    (c3 y) y2, c1 y with ``scale`` folded into the c_i (no level), summed at one level, plus ``shift``."""
    r = ct.bound
    y2 = _mul(ctx, ct, ct)
    y4 = _mul(ctx, y2, y2)
    y8 = _mul(ctx, y4, y4)
    cy = {p: ctx.mul_plain(ct, scale * v) for p, v in F4.items()}
    terms = [_mul(ctx, cy[9], y8), _mul(ctx, _mul(ctx, cy[7], y2), y4), _mul(ctx, cy[5], y4), _mul(ctx, cy[3], y2),
             cy[1]]
    out = terms[0]
    for t in terms[1:]:
        out = _add(ctx, out, t)
    out = ctx.add(out, shift) if shift else out
    coef = tuple([shift] + [scale * F4.get(p, 0.0) for p in range(1, 10)])
    return ctx.tighten_bound(out, poly_max_abs("power", coef, r))


def check_kappa(kappa: int, path: str) -> int:
    """The Chebyshev degree of comparison depth ``kappa`` (an integer) on ``path``; ValueError for anything else."""
    if isinstance(kappa, bool) or not isinstance(kappa, numbers.Integral) or kappa not in DEGREE_FOR_KAPPA:
        raise ValueError(f"comparison depth kappa must be an integer, one of {sorted(DEGREE_FOR_KAPPA)}; got {kappa!r}")
    if path not in ("cpu", "gpu"):
        raise ValueError(f"path must be 'cpu' (Chebyshev + f4) or 'gpu' (Chebyshev alone), got {path!r}")
    return DEGREE_FOR_KAPPA[kappa]


def compare(ctx, ct, kappa: int, *, delta: float = DELTA, path: str = "cpu", weight: float = 1.0):
    """About 1 in a slot >= delta, 0 below (Eq. 7), for scores in [-1, 1]; the output ciphertext.

    ``path='cpu'`` (HyDia's CPU comparison): the degree-DEGREE_FOR_KAPPA[kappa] series of
    2 step - 1 = sign(x - delta) (the map g -> 2g - 1 folded into the coefficients), then f4, mapped
    back by (h + 1) / 2 (the 1/2 folded into f4's coefficients, the + 1/2 a plaintext addition): depth
    (kappa - 4) + 4 = kappa. ``path='gpu'`` (the paper's GPU pipeline, Algorithm 2 corrected: the true
    series, and the step's own coefficients instead of sign + 1, which lands on [0, 2]): the series of
    the step alone, depth kappa - 4.

    The scores are cosine similarities of unit vectors (the client and the enroller normalize them), so
    |x| <= 1 by Cauchy-Schwarz: asserted on ``ct`` (``ctx.tighten_bound``), the bound every later one
    follows from (the sum of l products that made the scores carries l).

    ``weight`` multiplies the output, folded into the last polynomial's coefficients (no level): a sum of
    S comparisons (membership) is bounded by S times the output's bound, which at the last level of
    ckks-32768-d9/d11 (2^14) does not fit for S = 16384 slots; ``weight=1/S`` keeps it at about 1."""
    degree = check_kappa(kappa, path)
    weight = _check_weight(weight)
    ct = ctx.tighten_bound(ct, 1.0)
    if path == "gpu":
        return evaluate_chebyshev(ctx, ct, weight * step_coefficients(degree, delta))
    return f4(ctx, evaluate_chebyshev(ctx, ct, sign_coefficients(degree, delta)), scale=0.5 * weight,
              shift=0.5 * weight)


def _check_weight(weight) -> float:
    if isinstance(weight, (bool, np.bool_)) or not isinstance(weight, (int, float, np.integer, np.floating)) \
            or not 0 < weight < math.inf:
        raise ValueError(f"weight must be a positive finite number, got {weight!r}")
    return float(weight)


def compare_numpy(x, kappa: int, *, delta: float = DELTA, path: str = "cpu", weight: float = 1.0) -> np.ndarray:
    """The exact polynomial :func:`compare` evaluates, on plaintext values."""
    degree = check_kappa(kappa, path)
    weight = _check_weight(weight)
    if path == "gpu":
        return chebyshev_numpy(weight * step_coefficients(degree, delta), x)
    return f4_numpy(chebyshev_numpy(sign_coefficients(degree, delta), x), scale=0.5 * weight, shift=0.5 * weight)


# ---------------------------------------------------------------------------- Algorithm 2 as printed

def printed_algorithm2_numpy(c, x, d1: int, d2: int, *, all_chunks: bool = False) -> np.ndarray:
    """What the paper's Algorithm 2 computes: chunks Q_j = c_{j d1} + sum_{0<i<d1} c_{j d1 + i} T_i for
    j < 2^(d2-1), combined by Horner in T_{d1} = T2[0] (not in the giant powers T_{d1 2^j}), plus 1.

    As printed (lines 33-40) the Horner loop starts from the last chunk and adds Q[d2-2] .. Q[0] only;
    ``all_chunks=True`` gives the evident intent, sum_j Q_j T_{d1}^j. Neither is the series: T_{d1}^j is
    not T_{j d1}. With sign coefficients of degree 13 (d1, d2 = 2, 4) at x = 0.5: 0.961 as printed, 0.946
    with every chunk, against series + 1 = 1.717.
    """
    c = np.asarray(c, dtype=float)
    x = np.asarray(x, dtype=float)
    T = [np.ones_like(x), x]
    for _ in range(2, d1 + 1):
        T.append(2 * x * T[-1] - T[-2])
    coef = lambda i: c[i] if i < len(c) else 0.0  # noqa: E731
    Q = [coef(j * d1) + sum(coef(j * d1 + i) * T[i] for i in range(1, d1)) for j in range(2 ** (d2 - 1))]
    out = Q[-1]
    for j in (range(len(Q) - 1, 0, -1) if all_chunks else range(d2 - 1, 0, -1)):
        out = out * T[d1] + Q[j - 1]
    return out + 1.0


def effective_threshold(fn, lo: float = -1.0, hi: float = 1.0, level: float = 0.5) -> float:
    """The first x in [lo, hi] where the comparison ``fn`` (vectorized) reaches ``level``: 1/2 for an
    output on [0, 1], 1 for Algorithm 2's [0, 2]. A grid finds the first crossing, bisection refines it;
    NaN if it never does."""
    x = np.linspace(lo, hi, 20001)
    above = np.flatnonzero(np.asarray(fn(x), dtype=float) >= level)
    if not len(above):
        return float("nan")
    if above[0] == 0:
        return float(lo)
    left, right = x[above[0] - 1], x[above[0]]
    while right - left > 1e-12:
        mid = (left + right) / 2
        left, right = (left, mid) if float(fn(np.float64(mid))) >= level else (mid, right)
    return float(right)


# ---------------------------------------------------------------------------- OpenFHE's own evaluation

def openfhe_native_chebyshev(ctx, ct, fn, a: float, b: float, degree: int):
    """OpenFHE's own ``EvalChebyshevFunction(fn, ct, a, b, degree)``, wrapped as a hepkg Ciphertext, to
    cross-check :func:`evaluate_chebyshev` (same coefficients, depth and error).

    The one place that leaves the protocol: it calls the OpenFHE backend's crypto context (``ctx._cc``)
    and builds the result with ``ctx._derive`` (level read back from OpenFHE; depth = levels consumed),
    because the protocol has no native-series operation. Its inner operations are not counted by kind.
    """
    if getattr(ctx, "backend", None) != "openfhe":
        raise ValueError(f"OpenFHE's native Chebyshev evaluation needs a context of the openfhe backend, not "
                         f"{getattr(ctx, 'backend', type(ctx).__name__)!r}")
    ct = ctx.rescale(ct)
    r = (2 * ct.bound + abs(a + b)) / (b - a)
    raw = ctx._cc.EvalChebyshevFunction(fn, ct.raw, a, b, degree)
    level = raw.GetLevel()
    bound = ctx._fits(lambda: poly_max_abs("chebyshev", tuple(coefficients(fn, degree, a, b)), r), level,
                      "OpenFHE's Chebyshev series")
    return ctx._derive(raw, ct, depth=ct.depth + level - ct.level, level=level, bound=bound)
