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
``2^(q0 - scale_bits - 1)`` for CKKS (what the first prime holds at the last level). On CKKS the
cloud's ciphertexts also carry a bound from their encrypted inputs (hepkg.he refuses one beyond what
its level holds), which a method's layout can make larger than the row sums: each method predicts
it per result block and :func:`check_tracked` refuses, before anything is sent, what the cloud would.

The vector's bound is public: Client B checks its vector against it and Client A refuses a
matrix that could overflow with any vector within it, so neither learns anything about the
other's values from it. It is ``FixedPoint.vector_bound`` where given (agreed in advance), else
:func:`vector_bound`'s default from the parameter set and L, the longest row's non-zero count,
which the sparsity pattern Client B receives anyway reveals (L = len(CP) - 1): the largest b
(in encoded units) with ``L * b^2 * b <= capacity``, so that any matrix with this pattern whose
encoded entries are within b^2, times any vector within b, cannot overflow (the matrix keeps
two thirds of the plaintext bits, the vector one third: at t = 65537 and L = 1, entries up to
1024 and |v_j| <= 32). A matrix exceeding that entry bound is still accepted where its actual
row sums allow b. A bound from the shape alone (``n_cols`` for L) would admit no vector at all
for the paper's matrices with more than t/2 columns, such as cca. Earlier versions sent B
``floor((t/2) / max row L1)``, which told it the matrix's largest absolute row sum.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hepkg.he.errors import EncodingError

__all__ = ["FixedPoint", "capacity", "slot_dtype", "value_range", "encode_values", "vector_bound", "encode_matrix",
           "check_tracked", "encode_csr", "encode_vector", "decode_result"]


@dataclass(frozen=True)
class FixedPoint:
    """Fixed-point encoding: ``round(A * matrix_scale)``, ``round(v * vector_scale)``.

    ``vector_bound``: the largest |v_j| Client B may send (public, agreed in advance); None:
    the public default of :func:`vector_bound` (see the module docstring).
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


def capacity(params, levels: int | None = None) -> int | float:
    """Largest |result| the parameter set decrypts correctly (see the module docstring); CKKS with ``levels``:
    what a ciphertext holds after that many rescales from the top (hepkg.he's ``ckks_capacity_at``), which is
    more than the last level's while data primes are left."""
    if params.scheme in ("bfv", "bgv"):
        return params.plain_modulus // 2
    data = len(params.qi_bits) - 1  # the last prime is the special one
    left = 1 if levels is None else max(1, data - levels)
    return 2.0 ** (sum(params.qi_bits[:left]) - params.scale_bits - 1)


def slot_dtype(params):
    """What the slots hold: int64 on BFV/BGV, float64 on CKKS."""
    return np.float64 if params.scheme == "ckks" else np.int64


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
    return arr.astype(slot_dtype(params))


def vector_bound(params, enc: FixedPoint, longest_row: int) -> float:
    """The public bound on the encoded |v_j|: ``enc.vector_bound`` times the vector scale, or the
    default from the parameters and ``longest_row`` (L) alone (module docstring)."""
    _check_scheme(params, enc)
    if enc.vector_bound is not None:
        bound = float(enc.vector_bound) * float(enc.vector_scale)
        return bound if params.scheme == "ckks" else float(math.floor(bound + 0.5))
    cap = capacity(params)
    if params.scheme == "ckks":
        return (cap / longest_row) ** (1 / 3)
    bound = int((cap / longest_row) ** (1 / 3))
    bound += longest_row * (bound + 1) ** 3 <= cap  # float rounding: the exact largest integer
    bound -= longest_row * bound ** 3 > cap
    if bound < 1:
        raise EncodingError(f"{_plaintext(params)} is too small for rows of {longest_row} non-zeros: no public vector "
                            f"bound b >= 1 has L * b^3 <= t/2; use a larger plaintext modulus or CKKS")
    return float(bound)


def encode_matrix(values, rows, params, enc: FixedPoint) -> tuple[np.ndarray, float]:
    """Client A: the matrix's ``values`` encoded (``rows``: each value's row) and the public vector
    bound, after refusing a matrix that could overflow with a vector within that bound."""
    values = encode_values(values, params, enc, enc.matrix_scale, "matrix")
    rows = np.asarray(rows)
    row_l1 = float(np.bincount(rows, weights=np.abs(values.astype(np.float64))).max())
    bound = vector_bound(params, enc, int(np.bincount(rows).max()))
    cap, what = capacity(params), _plaintext(params)
    scales = "" if enc.exact else f" at matrix_scale={enc.matrix_scale:g}, vector_scale={enc.vector_scale:g}"
    if params.scheme != "ckks" and row_l1 > cap:
        raise EncodingError(
            f"{what} is too small for this matrix{scales}: its largest encoded row sum "
            f"max_i sum_j |A_ij| = {row_l1:g} already exceeds t/2 = {cap:g}, so no non-zero vector "
            f"fits; use a smaller matrix_scale, a larger plaintext modulus, or CKKS")
    if row_l1 * bound > cap:
        raise EncodingError(
            f"{what} is too small for the precision asked{scales}: the worst-case accumulated magnitude "
            f"max_i sum_j |A_ij| * max|v| = {row_l1:g} * {bound:g} = {row_l1 * bound:g} exceeds {cap:g} "
            f"(max|v|: the public vector bound); use smaller scales, a smaller FixedPoint(vector_bound=...), "
            f"a larger plaintext modulus, or CKKS")
    return values, bound


def check_tracked(bounds, params, method: str, levels: int) -> None:
    """CKKS: EncodingError unless every result block's magnitude bound, as the cloud's ciphertexts will carry it
    (``bounds``, per block, for a vector at the public bound: the method's own prediction of hepkg.he's tracking,
    which refuses a value a ciphertext's level cannot hold), stays below the :func:`capacity` of the result's
    level (``levels`` rescales down; the bounds before it are smaller, at levels that hold more). The row-sum
    check of :func:`encode_matrix` admits what the true result allows; this one, what the cloud will compute
    without refusing, before anything is sent. Nothing for BFV/BGV, whose slots wrap mod t (the row-sum check is
    exact)."""
    if params.scheme != "ckks" or not len(bounds):
        return
    worst, cap = float(np.max(bounds)), capacity(params, levels)
    if not worst < cap:
        raise EncodingError(
            f"{_plaintext(params)} is too small for this matrix with {method}: the cloud tracks a bound on its "
            f"ciphertexts' values from the encrypted inputs (products multiply, sums add), and with a vector at the "
            f"public bound one result block reaches {worst:g}, not below the {cap:g} its result's level holds, "
            f"where it would refuse to go on; use a smaller FixedPoint(vector_bound=...), smaller values, or larger "
            f"parameters")


def encode_csr(csr, params, enc: FixedPoint):
    """:func:`encode_matrix` on a CSR matrix: its encoded copy and the public vector bound."""
    values, bound = encode_matrix(csr.data, np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr)), params, enc)
    encoded = csr.copy()
    encoded.data = values
    return encoded, bound


def encode_vector(vector, params, enc: FixedPoint, bound: float) -> np.ndarray:
    """Client B: its vector encoded, EncodingError where it exceeds the public ``bound``."""
    encoded = encode_values(vector, params, enc, enc.vector_scale, "vector")
    peak = float(np.max(np.abs(encoded))) if encoded.size else 0.0
    if peak > bound:
        raise EncodingError(f"vector value of magnitude {peak:g} (encoded) exceeds the public bound {bound:g} agreed "
                            f"for {_plaintext(params)}; the result could overflow (pass a larger "
                            f"FixedPoint(vector_bound=...) if the matrix allows it)")
    return encoded


def decode_result(values: np.ndarray, params, enc: FixedPoint) -> np.ndarray:
    """Decrypted result slots back to numbers: exact int64, fixed point /scale, or CKKS float64."""
    if params.scheme == "ckks":
        return np.asarray(values, dtype=np.float64)
    if enc.exact:
        return np.asarray(values, dtype=np.int64)
    return np.asarray(values, dtype=np.float64) / enc.result_scale
