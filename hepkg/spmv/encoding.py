"""Value encoding for encrypted SpMV: exact integers, fixed point on BFV, reals on CKKS.

The original CSSC implementation cast real matrices to integers silently. hepkg never
does: on BFV/BGV a matrix or vector with non-integer values needs an explicit
:class:`FixedPoint` scale (``x -> round(x * scale)``), and results are divided by
``matrix_scale * vector_scale``. Integer inputs with scale 1 stay exact.

Every value is range-checked exactly, in the input's own dtype (no cast, no ``abs``, so
uint64 values near 2^64 or int64's minimum cannot wrap around), against :func:`capacity`
before it is cast to int64 or float64.

Overflow is checked before anything is encrypted, from the worst-case accumulated
magnitude of a result slot, ``max_i sum_j |A_ij| * max_j |v_j|`` (in encoded units), against
the scheme's capacity: ``t // 2`` for BFV/BGV (decryption is centered mod t), and
``2^(q0 - scale_bits - 1)`` for CKKS (what the first prime holds at the last level). Client A
knows only the matrix, so it computes the largest vector magnitude the matrix allows (or
checks an agreed ``vector_bound``) and Client B checks its vector against that limit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hepkg.he.errors import EncodingError

__all__ = ["FixedPoint", "capacity", "value_range", "encode_values", "vector_limit", "check_vector",
           "encode_operands", "decode_result"]


@dataclass(frozen=True)
class FixedPoint:
    """Fixed-point encoding: ``round(A * matrix_scale)``, ``round(v * vector_scale)``.

    ``vector_bound``: the largest |v_j| Client B may send (public, agreed in advance);
    None lets Client A derive the largest bound the plaintext modulus allows.
    """

    matrix_scale: float = 1
    vector_scale: float = 1
    vector_bound: float | None = None

    def __post_init__(self):
        for name in ("matrix_scale", "vector_scale"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive finite number, got {value!r}")
        if self.vector_bound is not None and not (math.isfinite(self.vector_bound) and self.vector_bound > 0):
            raise ValueError(f"vector_bound must be a positive finite number, got {self.vector_bound!r}")

    @property
    def exact(self) -> bool:
        """True for the integer encoding (both scales 1)."""
        return self.matrix_scale == 1 and self.vector_scale == 1

    @property
    def result_scale(self) -> float:
        return float(self.matrix_scale) * float(self.vector_scale)


def capacity(params) -> int | float:
    """Largest |result| the parameter set decrypts correctly (see the module docstring)."""
    if params.scheme in ("bfv", "bgv"):
        return params.plain_modulus // 2
    return 2.0 ** (params.qi_bits[0] - params.scale_bits - 1)


def _plaintext(params) -> str:
    """The plaintext space, as error messages name it."""
    if params.scheme == "ckks":
        return f"CKKS {params.name} (first prime {params.qi_bits[0]} bits, scale 2^{params.scale_bits})"
    return f"plaintext modulus t={params.plain_modulus}"


def value_range(arr: np.ndarray) -> tuple:
    """(min, max) of a non-empty array as exact Python numbers, taken in its own dtype."""
    exact = float if arr.dtype.kind == "f" else int
    return exact(arr.min()), exact(arr.max())


def _check_scheme(params, enc: FixedPoint) -> None:
    if params.scheme == "ckks" and not enc.exact:
        raise ValueError("CKKS encodes real values directly: fixed-point scales apply to BFV/BGV only")


def encode_values(values, params, enc: FixedPoint, scale: float, what: str) -> np.ndarray:
    """``values`` as the scheme encodes them: int64 (BFV/BGV) or float64 (CKKS).

    EncodingError for complex, non-numeric, NaN/inf or (BFV/BGV at scale 1) non-integer
    values, and for any value whose magnitude (times ``scale``) exceeds :func:`capacity`.
    """
    _check_scheme(params, enc)
    arr = np.asarray(values)
    if arr.dtype.kind == "c":
        raise EncodingError(f"{what} has complex values")
    if arr.dtype.kind not in "biuf":
        raise EncodingError(f"{what} has dtype {arr.dtype}; expected real or integer values")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise EncodingError(f"{what} has {int(np.count_nonzero(~np.isfinite(arr)))} NaN/inf value(s), "
                            f"the first at index {int(np.flatnonzero(~np.isfinite(arr))[0])}")
    if params.scheme != "ckks" and scale == 1 and arr.dtype.kind == "f":
        frac = np.flatnonzero(arr != np.round(arr))
        if frac.size:
            raise EncodingError(
                f"{what} has {frac.size} non-integer value(s) (e.g. {float(arr[frac[0]]):g}); "
                f"{params.scheme.upper()} is exact on integers and hepkg never truncates: pass a fixed-point scale "
                f"(FixedPoint(matrix_scale=..., vector_scale=...)) or use CKKS")
    if scale != 1:
        with np.errstate(over="ignore"):
            arr = np.rint(arr * float(scale))
        what = f"{what} (times scale {scale:g})"
    cap = capacity(params)
    lo, hi = value_range(arr)
    if lo < -cap or hi > cap:
        raise EncodingError(f"{what} has values in [{lo}, {hi}], outside the range [-{cap:.15g}, {cap:.15g}] "
                            f"that {_plaintext(params)} holds")
    return arr.astype(np.float64 if params.scheme == "ckks" else np.int64)


def vector_limit(row_l1_max: float, params, enc: FixedPoint) -> float:
    """Largest encoded |v_j| keeping every result within :func:`capacity` (EncodingError if none).

    ``row_l1_max`` is ``max_i sum_j |A_ij|`` of the *encoded* matrix.
    """
    _check_scheme(params, enc)
    cap, what = capacity(params), _plaintext(params)
    scales = "" if enc.exact else f" at matrix_scale={enc.matrix_scale:g}, vector_scale={enc.vector_scale:g}"
    if enc.vector_bound is not None:
        limit = float(enc.vector_bound) * float(enc.vector_scale)
        limit = math.floor(limit + 0.5) if params.scheme != "ckks" else limit
        worst = row_l1_max * limit
        if worst > cap:
            raise EncodingError(
                f"{what} is too small for the precision asked{scales}: the worst-case accumulated magnitude "
                f"max_i sum_j |A_ij| * max|v| = {row_l1_max:g} * {limit:g} = {worst:g} exceeds {cap:g}; "
                f"use smaller scales, a smaller vector bound, a larger plaintext modulus, or CKKS")
        return limit
    limit = cap / row_l1_max
    if params.scheme != "ckks":
        limit = math.floor(limit)
        if limit < 1:
            raise EncodingError(
                f"{what} is too small for this matrix{scales}: its largest encoded row sum "
                f"max_i sum_j |A_ij| = {row_l1_max:g} already exceeds t/2 = {cap:g}, so no non-zero vector "
                f"fits; use a smaller matrix_scale, a larger plaintext modulus, or CKKS")
    return limit


def check_vector(encoded: np.ndarray, limit: float, params, what: str = "vector") -> None:
    """Raise EncodingError when an encoded vector exceeds the limit Client A announced."""
    peak = float(np.max(np.abs(encoded))) if encoded.size else 0.0
    if peak > limit:
        raise EncodingError(f"{what} value of magnitude {peak:g} (encoded) exceeds the bound {limit:g} that "
                            f"{_plaintext(params)} allows for this matrix (worst-case row sum); the result would "
                            f"overflow")


def encode_operands(csr, vector, params, enc: FixedPoint):
    """Both operands encoded and checked together (for the baselines, where one party sees both).

    Returns the CSR matrix with encoded values and the encoded vector.
    """
    values = encode_values(csr.data, params, enc, enc.matrix_scale, "matrix")
    encoded = csr.copy()
    encoded.data = values
    row_l1 = float(np.max(abs(encoded).sum(axis=1)))
    vec = encode_values(vector, params, enc, enc.vector_scale, "vector")
    check_vector(vec, vector_limit(row_l1, params, enc), params)
    return encoded, vec


def decode_result(values: np.ndarray, params, enc: FixedPoint) -> np.ndarray:
    """Decrypted result slots back to numbers: exact int64, fixed point /scale, or CKKS float64."""
    if params.scheme == "ckks":
        return np.asarray(values, dtype=np.float64)
    if enc.exact:
        return np.asarray(values, dtype=np.int64)
    return np.asarray(values, dtype=np.float64) / enc.result_scale
