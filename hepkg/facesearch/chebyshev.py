"""Encrypted threshold comparison: Chebyshev series by Paterson-Stockmeyer, and Cheon's f4.

The server replaces each similarity score x by f(x) = (sign(x - delta) + 1) / 2 (Eq. 7),
approximately: 1 for a match, 0 otherwise.

- ``path='gpu'`` (the paper's GPU pipeline, Sec. 5.1.4): the Chebyshev interpolant of f of
  degree 5/13/27/59 for kappa = 7/8/9/10 (the paper's lookup), evaluated here in depth
  ceil(log2(degree + 1)) = kappa - 4, as OpenFHE's EvalChebyshevSeries.
- ``path='cpu'`` (HyDia's CPU path): the interpolant of sign(x - delta) of that degree, then
  Cheon et al.'s f4(y) = (315y - 420y^3 + 378y^5 - 180y^7 + 35y^9) / 128 (depth 4), mapped to
  [0, 1]: total depth kappa. The map (y + 1)/2 is folded into f4's coefficients (no level).

The evaluation speaks only to the backend protocol (``mul``, ``mul_plain``, ``add``,
``drop_level``), so it runs on every backend and on the GPU engine; operands are brought to
one level before every addition and product. :func:`printed_algorithm2_numpy` computes what
the paper's Algorithm 2 computes as printed (a Horner over T_{d1} only, not the series).

Coefficient convention: :func:`coefficients` returns c with f ~ sum_i c_i T_i; OpenFHE's
``EvalChebyshevCoefficients`` returns the same list with c_0 doubled (its series uses c_0 / 2).
"""
from __future__ import annotations

import math

import numpy as np
from numpy.polynomial import chebyshev as C

__all__ = ["DEGREE_FOR_KAPPA", "DELTA", "coefficients", "step_coefficients", "sign_coefficients", "ps_parameters",
           "baby_size", "series_depth", "evaluate_chebyshev", "f4", "f4_numpy", "compare", "compare_numpy",
           "printed_algorithm2_numpy", "effective_threshold", "openfhe_native_chebyshev"]

#: Chebyshev degree per comparison depth kappa (the paper's Paterson-Stockmeyer-aware lookup).
DEGREE_FOR_KAPPA = {7: 5, 8: 13, 9: 27, 10: 59}
#: The threshold on cosine similarity used by the authors' code.
DELTA = 0.44
#: f4 = sum F4[i] y^i (Cheon et al.), odd powers 1..9.
F4 = {1: 315 / 128, 3: -420 / 128, 5: 378 / 128, 7: -180 / 128, 9: 35 / 128}
_ZERO = 1e-14


def coefficients(fn, degree: int, a: float = -1.0, b: float = 1.0) -> np.ndarray:
    """c_0..c_degree with fn(x) ~ sum_i c_i T_i(y), y the affine map of [a, b] onto [-1, 1], by
    interpolation at the degree + 1 Chebyshev nodes (a DCT)."""
    if degree < 1:
        raise ValueError(f"degree must be >= 1, got {degree}")
    n = degree + 1
    theta = np.pi * (np.arange(n) + 0.5) / n
    y = np.asarray([fn(v) for v in (np.cos(theta) * (b - a) + (b + a)) / 2], dtype=float)
    c = 2.0 / n * np.cos(np.outer(np.arange(n), theta)) @ y
    c[0] /= 2
    return c


def step_coefficients(degree: int, delta: float = DELTA) -> np.ndarray:
    """Chebyshev coefficients on [-1, 1] of the step (sign(x - delta) + 1) / 2."""
    return coefficients(lambda x: 1.0 if x >= delta else 0.0, degree)


def sign_coefficients(degree: int, delta: float = DELTA) -> np.ndarray:
    """Chebyshev coefficients on [-1, 1] of sign(x - delta) (HyDia's CPU path, before f4)."""
    return coefficients(lambda x: 1.0 if x >= delta else -1.0, degree)


def ps_parameters(degree: int) -> tuple[int, int]:
    """The paper's (d1, d2): least d1 + d2 with d1 * 2^(d2 - 1) >= degree, ties to the larger d1 (13 -> (2, 4))."""
    return min(((d1, d2) for d1 in range(1, degree + 1) for d2 in range(1, 12) if d1 * 2 ** (d2 - 1) >= degree),
               key=lambda p: (p[0] + p[1], -p[0]))


def _trim(c: np.ndarray) -> np.ndarray:
    nz = np.flatnonzero(np.abs(c) > _ZERO)
    return c[:nz[-1] + 1] if len(nz) else c[:1]


def _depth_of(i: int) -> int:
    return math.ceil(math.log2(i)) if i > 1 else 0


def _plan_depth(c: np.ndarray, k: int) -> int:
    """Depth :func:`evaluate_chebyshev` reaches on coefficients ``c`` with baby size ``k``."""
    c = _trim(c)
    deg = len(c) - 1
    if deg < k:
        return max((_depth_of(j) + 1 for j in range(1, deg + 1) if abs(c[j]) > _ZERO), default=0)
    g = k
    while 2 * g <= deg:
        g *= 2
    q, r = _divide(c, g)
    return max(max(_plan_depth(q, k), _depth_of(g)) + 1, _plan_depth(r, k))


def baby_size(c: np.ndarray) -> int:
    """The power-of-two baby-step size giving the least depth (then the fewest products)."""
    deg = len(_trim(c)) - 1
    cands = [2 ** i for i in range(1, max(2, math.ceil(math.log2(deg + 1))) + 1)]
    return min(cands, key=lambda k: (_plan_depth(c, k), k + deg // k))


def series_depth(c: np.ndarray) -> int:
    """Multiplicative depth of :func:`evaluate_chebyshev` on ``c``."""
    return _plan_depth(c, baby_size(c))


def _divide(c: np.ndarray, g: int) -> tuple[np.ndarray, np.ndarray]:
    """(q, r) with sum c_i T_i = (sum q_j T_j) T_g + sum r_i T_i, deg r < g (needs deg c <= 2g)."""
    deg = len(c) - 1
    q = np.zeros(deg - g + 1)
    q[0] = c[g]
    q[1:] = 2 * c[g + 1:]
    r = c[:g].copy()
    for j in range(1, deg - g + 1):
        r[g - j] -= c[g + j]
    return q, r


def _level(ctx, ct, level: int):
    return ctx.drop_level(ct, level - ct.level) if ct.level < level else ct


def _aligned(ctx, *cts):
    top = max(c.level for c in cts)
    return [_level(ctx, c, top) for c in cts]


def _add(ctx, x, y):
    if not hasattr(x, "level"):
        x, y = y, x
    if not hasattr(y, "level"):
        return ctx.add(x, float(y)) if y else x
    return ctx.add(*_aligned(ctx, x, y))


def _mul(ctx, x, y):
    return ctx.mul(*_aligned(ctx, ctx.rescale(x), ctx.rescale(y)))


def _double_minus(ctx, prod, minus):
    """2 * prod - minus (minus: a ciphertext or a number)."""
    two = ctx.add(prod, prod)
    return ctx.sub(*_aligned(ctx, two, minus)) if hasattr(minus, "level") else ctx.add(two, -float(minus))


def _powers(ctx, t1, k: int, top: int) -> dict:
    """T_1..T_k (baby steps) and T_k, T_2k, ..., T_top (giant steps), each in depth ceil(log2 i)."""
    T = {1: t1}
    for i in range(2, k + 1):
        a, b = (i + 1) // 2, i // 2
        T[i] = _double_minus(ctx, _mul(ctx, T[a], T[b]), T[a - b] if a != b else 1.0)
    g = k
    while g < top:
        T[2 * g] = _double_minus(ctx, _mul(ctx, T[g], T[g]), 1.0)
        g *= 2
    return T


def _combine(ctx, c: np.ndarray, T: dict, k: int):
    """The series with coefficients ``c`` (a ciphertext, or a number if constant)."""
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
    high = ctx.mul_plain(T[g], qv) if not hasattr(qv, "level") else _mul(ctx, qv, T[g])
    return _add(ctx, high, _combine(ctx, r, T, k))


def evaluate_chebyshev(ctx, ct, c, a: float = -1.0, b: float = 1.0):
    """sum_i c_i T_i(y) on a CKKS ciphertext, y = (2x - a - b) / (b - a), by Paterson-Stockmeyer
    with Chebyshev division, in depth :func:`series_depth` (plus one if [a, b] is not [-1, 1])."""
    c = _trim(np.asarray(c, dtype=float))
    if len(c) < 2:
        raise ValueError("a constant series needs no ciphertext evaluation")
    if (a, b) != (-1.0, 1.0):
        ct = ctx.add(ctx.mul_plain(ct, 2.0 / (b - a)), -(a + b) / (b - a))
    k = baby_size(c)
    deg = len(c) - 1
    top = k
    while 2 * top <= deg:
        top *= 2
    T = _powers(ctx, ct, min(k, deg), top if deg >= k else 0)
    return _combine(ctx, c, T, k)


def f4_numpy(y, scale: float = 1.0, shift: float = 0.0):
    """scale * f4(y) + shift in numpy."""
    y = np.asarray(y, dtype=float)
    return scale * sum(v * y ** p for p, v in F4.items()) + shift


def f4(ctx, ct, scale: float = 1.0, shift: float = 0.0):
    """scale * f4(ct) + shift in depth 4: terms (c9 y) y^8, ((c7 y) y^2) y^4, (c5 y) y^4, (c3 y) y^2, c1 y."""
    y2 = _mul(ctx, ct, ct)
    y4 = _mul(ctx, y2, y2)
    y8 = _mul(ctx, y4, y4)
    cy = {p: ctx.mul_plain(ct, scale * v) for p, v in F4.items()}
    terms = [_mul(ctx, cy[9], y8), _mul(ctx, _mul(ctx, cy[7], y2), y4), _mul(ctx, cy[5], y4), _mul(ctx, cy[3], y2),
             cy[1]]
    out = terms[0]
    for t in terms[1:]:
        out = _add(ctx, out, t)
    return ctx.add(out, shift) if shift else out


def _check_kappa(kappa: int, path: str) -> int:
    if kappa not in DEGREE_FOR_KAPPA:
        raise ValueError(f"comparison depth kappa must be one of {sorted(DEGREE_FOR_KAPPA)}, got {kappa!r}")
    if path not in ("cpu", "gpu"):
        raise ValueError(f"path must be 'cpu' (Chebyshev + f4) or 'gpu' (Chebyshev alone), got {path!r}")
    return DEGREE_FOR_KAPPA[kappa]


def compare(ctx, ct, kappa: int, *, delta: float = DELTA, path: str = "cpu"):
    """About 1 where the slot is >= delta, 0 below (Eq. 7), in depth kappa ('cpu') or kappa - 4 ('gpu')."""
    degree = _check_kappa(kappa, path)
    if path == "gpu":
        return evaluate_chebyshev(ctx, ct, step_coefficients(degree, delta))
    return f4(ctx, evaluate_chebyshev(ctx, ct, sign_coefficients(degree, delta)), scale=0.5, shift=0.5)


def compare_numpy(x, kappa: int, *, delta: float = DELTA, path: str = "cpu") -> np.ndarray:
    """The exact polynomial :func:`compare` evaluates, on plaintext values."""
    degree = _check_kappa(kappa, path)
    x = np.asarray(x, dtype=float)
    if path == "gpu":
        return C.chebval(x, step_coefficients(degree, delta))
    return f4_numpy(C.chebval(x, sign_coefficients(degree, delta)), scale=0.5, shift=0.5)


def printed_algorithm2_numpy(c, x, d1: int, d2: int, *, all_chunks: bool = False) -> np.ndarray:
    """What the paper's Algorithm 2 computes: chunks Q_j = c_{j d1} + sum_{0<i<d1} c_{j d1 + i} T_i for
    j < 2^(d2-1), combined by Horner in T_{d1} (not in the giant powers T_{d1 2^j}), plus 1.

    As printed (lines 33-40) the Horner loop starts from the last chunk and adds Q[d2-2] .. Q[0]
    only; ``all_chunks=True`` gives the evident intent, sum_j Q_j T_{d1}^j. Neither is the series.
    """
    c = np.asarray(c, dtype=float)
    x = np.asarray(x, dtype=float)
    T = [np.ones_like(x), x]
    for i in range(2, d1 + 1):
        T.append(2 * x * T[-1] - T[-2])
    coef = lambda i: c[i] if i < len(c) else 0.0  # noqa: E731
    Q = [coef(j * d1) + sum(coef(j * d1 + i) * T[i] for i in range(1, d1)) for j in range(2 ** (d2 - 1))]
    out = Q[-1]
    for j in (range(len(Q) - 1, 0, -1) if all_chunks else range(d2 - 1, 0, -1)):
        out = out * T[d1] + Q[j - 1]
    return out + 1.0


def effective_threshold(fn, lo: float = -1.0, hi: float = 1.0, level: float | None = None) -> float:
    """Where ``fn`` (increasing through the step) first crosses ``level`` (default: the midpoint of its values)."""
    x = np.linspace(lo, hi, 200001)
    y = np.asarray(fn(x), dtype=float)
    level = (y.min() + y.max()) / 2 if level is None else level
    above = np.flatnonzero(y >= level)
    return float(x[above[0]]) if len(above) else float("nan")


def openfhe_native_chebyshev(ctx, ct, fn, a: float, b: float, degree: int):
    """OpenFHE's own EvalChebyshevFunction(fn, ct, a, b, degree), for cross-checking :func:`evaluate_chebyshev`.

    It reaches into the OpenFHE backend's crypto context (``ctx._cc``) and builds the result with
    ``ctx._derive``: the one place a library routine outside the protocol is called, on purpose.
    """
    if ctx.backend != "openfhe":
        raise ValueError(f"OpenFHE's native Chebyshev evaluation needs the openfhe backend, not {ctx.backend!r}")
    ct = ctx.rescale(ct)
    raw = ctx._cc.EvalChebyshevFunction(fn, ct.raw, a, b, degree)
    level = raw.GetLevel()
    return ctx._derive(raw, ct, depth=ct.depth + level - ct.level, level=level)
