"""Named HE parameter sets, as data, with their security level per the HE standard.

The security table is the HomomorphicEncryption.org standard's (:mod:`hepkg.security`). Levels
are read off the table; a modulus above the 128-bit bound gets an estimate interpolated from
the table (lambda linear in N / log PQ), which is only indicative: papers that ran the lattice
estimator record their own figure in ``note``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from hepkg.security import HE_STANDARD

from .errors import InsecureParameters, ParameterError

#: SEAL's default coefficient moduli at 128-bit security (what Pyfhel uses with sec=128).
SEAL_DEFAULT_QI = {
    4096: (36, 36, 37),
    8192: (43, 43, 44, 44, 44),
    16384: (48, 48, 48, 49, 49, 49, 49, 49, 49),
    32768: (55,) * 15 + (56,),
}


def security_bits(n: int, log_pq: float) -> float:
    """Security level (bits) of ring degree ``n`` with a ``log_pq``-bit modulus.

    Returns 256, 192 or 128 when the standard's table guarantees that level, otherwise
    an estimate below 128 extrapolated from the table (indicative only; floored at 0,
    where the extrapolation leaves any meaningful range).
    """
    if n not in HE_STANDARD:
        raise ParameterError(f"ring degree {n} is not in the HE standard table (powers of two 1024..131072)")
    if not _is_number(log_pq) or not log_pq > 0:
        raise ParameterError(f"log PQ must be a positive number of bits, got {log_pq!r}")
    row = HE_STANDARD[n]
    for level in (256, 192, 128):
        if log_pq <= row[level]:
            return float(level)
    # lambda ~ a * n / log_pq + b, fitted through the 128- and 192-bit points.
    x128, x192 = n / row[128], n / row[192]
    slope = 64.0 / (x192 - x128)
    return max(0.0, round(128.0 + slope * (n / log_pq - x128), 1))


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_number(v) -> bool:
    return _is_int(v) or isinstance(v, (float, np.floating))


#: bit sizes a coefficient-modulus prime may have (SEAL and OpenFHE use 64-bit words, at most 60-bit primes)
PRIME_BITS = (2, 60)


@dataclass(frozen=True)
class ParamSet:
    """A named HE parameter set.

    ``qi_bits`` are the coefficient-modulus primes' bit sizes, the last one being the
    key-switching special prime (SEAL's convention). ``depth`` is the multiplicative
    depth the set supports (BFV: ciphertext-ciphertext products before the noise budget
    runs out; CKKS: rescalings). ``ks_digits`` is the hybrid key-switching digit count
    (OpenFHE's dnum), None where the library decides. ``tower_bits`` (BFV/BGV on OpenFHE, which
    sizes Q from ``depth``): the bits of each prime of Q (OpenFHE's ScalingModSize), None for its 60.
    ``plain_depth``: whether a BFV/BGV
    ciphertext-plaintext product counts as one level of depth (hepkg's conservative
    default); False follows OpenFHE's ``MultiplicativeDepth``, which counts
    ciphertext-ciphertext products only (the OMR paper's depth 28).
    """

    name: str
    scheme: str  # 'bfv', 'bgv' or 'ckks'
    n: int
    qi_bits: tuple[int, ...]
    depth: int
    plain_modulus: int | None = None
    scale_bits: int | None = None
    ks_digits: int | None = None
    special_bits: int = 0  # extra key-switching modulus bits not listed in qi_bits (OpenFHE's P)
    source: str = ""
    note: str = ""
    seal_default_modulus: bool = False  # Pyfhel must be called with sec=128 (qi_sizes ignored)
    tags: tuple[str, ...] = field(default=())
    plain_depth: bool = True
    tower_bits: int | None = None

    def __post_init__(self):
        for problem in self._problems():
            raise ParameterError(f"parameter set {self.name!r}: {problem}")
        object.__setattr__(self, "qi_bits", tuple(int(b) for b in self.qi_bits))
        object.__setattr__(self, "tags", tuple(self.tags))

    def _problems(self):
        """Every inconsistency of the fields, as sentences (empty when the set is valid)."""
        if not isinstance(self.name, str) or not self.name:
            yield "the name must be a non-empty string"
        if self.scheme not in ("bfv", "bgv", "ckks"):
            yield f"unknown scheme {self.scheme!r} (bfv, bgv, ckks)"
        if not _is_int(self.n) or self.n not in HE_STANDARD:
            yield f"ring degree {self.n!r} must be a power of two in {min(HE_STANDARD)}..{max(HE_STANDARD)}"
        lo, hi = PRIME_BITS
        if (not isinstance(self.qi_bits, (tuple, list)) or len(self.qi_bits) < 2
                or not all(_is_int(b) and lo <= b <= hi for b in self.qi_bits)):
            yield (f"qi_bits {self.qi_bits!r} must list at least two prime sizes (data primes, then the "
                   f"key-switching prime), each an integer of {lo}..{hi} bits")
        if not _is_int(self.depth) or self.depth < 0:
            yield f"depth {self.depth!r} must be a non-negative integer"
        if not _is_int(self.special_bits) or self.special_bits < 0:
            yield f"special_bits {self.special_bits!r} must be a non-negative integer"
        if self.ks_digits is not None and (not _is_int(self.ks_digits) or self.ks_digits < 1):
            yield f"ks_digits {self.ks_digits!r} must be None or a positive integer"
        if not isinstance(self.plain_depth, bool):
            yield f"plain_depth {self.plain_depth!r} must be True or False"
        if self.scheme in ("bfv", "bgv"):
            yield from self._integer_problems()
        elif self.scheme == "ckks":
            yield from self._ckks_problems()

    def _integer_problems(self):
        t = self.plain_modulus
        if not _is_int(t) or t < 2:
            yield f"{self.scheme.upper()} needs an integer plaintext modulus >= 2, got {t!r}"
        elif _is_int(self.n) and (t - 1) % (2 * self.n):
            yield f"t={t} is not 1 mod 2N={2 * self.n}: no SIMD batching"
        elif t.bit_length() >= max(self.qi_bits, default=0) or t.bit_length() > PRIME_BITS[1]:
            yield f"t={t} ({t.bit_length()} bits) must be smaller than the coefficient-modulus primes"
        if self.scale_bits is not None:
            yield f"{self.scheme.upper()} has no scale (scale_bits={self.scale_bits!r})"
        if self.tower_bits is not None and (not _is_int(self.tower_bits) or not 30 <= self.tower_bits <= PRIME_BITS[1]):
            yield f"tower_bits {self.tower_bits!r} must be None or an integer of 30..{PRIME_BITS[1]} bits"

    def _ckks_problems(self):
        s = self.scale_bits
        if not _is_int(s) or not 1 <= s < self.qi_bits[0]:
            yield f"CKKS needs scale_bits, an integer below the first prime's {self.qi_bits[0]} bits, got {s!r}"
        if self.plain_modulus is not None:
            yield f"CKKS has no plaintext modulus (plain_modulus={self.plain_modulus!r})"
        if self.tower_bits is not None:
            yield f"CKKS sizes its primes with qi_bits and scale_bits (tower_bits={self.tower_bits!r})"
        if _is_int(self.depth) and self.depth > len(self.qi_bits) - 2:
            yield (f"depth {self.depth} needs {self.depth} rescaling primes between the first and the "
                   f"key-switching prime; qi_bits lists {len(self.qi_bits) - 2}")

    @property
    def log_q(self) -> int:
        """Bits of the ciphertext modulus (data primes, without the special prime)."""
        return sum(self.qi_bits[:-1]) if len(self.qi_bits) > 1 else sum(self.qi_bits)

    @property
    def log_pq(self) -> int:
        """Bits of the largest modulus used, special primes included (what security depends on)."""
        return sum(self.qi_bits) + self.special_bits

    @property
    def security(self) -> float:
        return security_bits(self.n, self.log_pq)

    @property
    def secure(self) -> bool:
        return self.security >= 128

    @property
    def ckks_tolerance(self) -> float:
        """Absolute error hepkg accepts for CKKS results of magnitude <= 1 after shallow circuits.

        2^-(scale_bits - 24): fresh encryptions are good to about 2^-(scale_bits - 10), but
        SEAL's key switching with one special prime adds up to about 2^-18.5 at N=2^14
        (measured), so rotations after products need the wider bound.
        """
        return 2.0 ** -(self.scale_bits - 24)

    @property
    def slots(self) -> int:
        """SIMD slots: N for BFV/BGV (two rows of N/2), N/2 complex slots for CKKS."""
        return self.n if self.scheme in ("bfv", "bgv") else self.n // 2

    def require_secure(self, insecure: bool) -> None:
        """Raise unless the set reaches 128 bits or the caller accepted ``insecure``."""
        if not self.secure and not insecure:
            raise InsecureParameters(
                f"parameter set {self.name!r} reaches about {self.security:g} bits "
                f"(N={self.n}, log PQ={self.log_pq}), below 128; pass insecure=True for tests or demos only")

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(security=self.security, log_q=self.log_q, log_pq=self.log_pq, slots=self.slots)
        return d

    def replace(self, **changes) -> "ParamSet":
        d = {k: v for k, v in asdict(self).items()}
        d.update(changes)
        return ParamSet(**d)


@dataclass(frozen=True)
class BuiltModulus:
    """The modulus a library actually built for a context, read back from it.

    ``q_bits``: bit sizes of the ciphertext-modulus primes; ``p_bits``: the key-switching
    primes; ``source`` says how they were obtained (read from the library, computed by the
    library's own rule where its bindings do not expose them, or declared on ``sim``).
    Security follows from log2(PQ) as for :class:`ParamSet`.
    """

    n: int
    q_bits: tuple[int, ...]
    p_bits: tuple[int, ...]
    source: str

    @property
    def log_q(self) -> int:
        return sum(self.q_bits)

    @property
    def log_pq(self) -> int:
        return self.log_q + sum(self.p_bits)

    @property
    def security(self) -> float:
        return security_bits(self.n, self.log_pq)

    def as_dict(self) -> dict:
        return dict(n=self.n, q_bits=list(self.q_bits), p_bits=list(self.p_bits), log_q=self.log_q,
                    log_p=sum(self.p_bits), log_pq=self.log_pq, security=self.security, source=self.source)


def _set(**kw) -> ParamSet:
    return ParamSet(**kw)


PARAMS: dict[str, ParamSet] = {p.name: p for p in [
    # --- spmv (CSSC) and gemm (HEGMM): Pyfhel BFV --------------------------------------
    _set(name="bfv-8192-default", scheme="bfv", n=8192, plain_modulus=65537, qi_bits=SEAL_DEFAULT_QI[8192],
         depth=4, seal_default_modulus=True, tags=("spmv", "gemm"),
         source="CSSC/HEGMM papers: Pyfhel contextGen(scheme='bfv', n=8192, t=65537, sec=128)",
         note="Pyfhel with sec=128 ignores qi_sizes for BFV and uses SEAL's 218-bit default modulus."),
    _set(name="bfv-8192-spmv", scheme="bfv", n=8192, plain_modulus=65537, qi_bits=(60, 40, 40, 60), depth=4,
         tags=("spmv",), source="CSSC paper Sec. 5: N=8192, t=65537, qi [60,40,40,60], log Q = 200",
         note="Pyfhel takes these qi_sizes only with sec=0; hepkg checks 128-bit security itself."),
    _set(name="bfv-8192-d2", scheme="bfv", n=8192, plain_modulus=65537, qi_bits=SEAL_DEFAULT_QI[8192],
         depth=2, seal_default_modulus=True, tags=("spmv", "gemm", "demo"),
         source="as bfv-8192-default with depth 2: the N=8192 BFV depth OpenFHE accepts at 128 bits",
         note="OpenFHE adds key-switching primes to its modulus and refuses depth 4 at N=8192 (needs 16384)."),
    _set(name="bfv-32768-gemm", scheme="bfv", n=32768, plain_modulus=65537, qi_bits=SEAL_DEFAULT_QI[32768],
         depth=8, seal_default_modulus=True, tags=("gemm",),
         source="HEGMM paper Table 7: size-128 matrices with N=2^15 (16384 slots per row)"),
    _set(name="bfv-8192-t20", scheme="bfv", n=8192, plain_modulus=1032193, qi_bits=SEAL_DEFAULT_QI[8192],
         depth=4, seal_default_modulus=True, tags=("gemm",),
         source="HEGMM authors' code (EchizenG/HEGMM): Pyfhel contextGen(scheme='bfv', n=8192, t=65537, "
                "t_bits=20), which builds t = 1032193 (t_bits wins over t)"),
    _set(name="bfv-32768-t20", scheme="bfv", n=32768, plain_modulus=786433, qi_bits=SEAL_DEFAULT_QI[32768],
         depth=8, seal_default_modulus=True, tags=("gemm",),
         source="as bfv-8192-t20 at N=2^15 (the authors' contextGen with n=32768 builds t = 786433)"),
    _set(name="bfv-4096-small", scheme="bfv", n=4096, plain_modulus=65537, qi_bits=SEAL_DEFAULT_QI[4096],
         depth=1, seal_default_modulus=True, tags=("gemm", "demo"),
         source="HEGMM paper Sec. 5: N=2^12 (SEAL default modulus, 109 bits)"),
    # --- face search (CKKS, OpenFHE) -----------------------------------------------------
    _set(name="ckks-32768-d9", scheme="ckks", n=32768, scale_bits=45, qi_bits=(60,) + (45,) * 9 + (60,),
         depth=9, tags=("facesearch",),
         source="Face-search paper Sec. 6: N=2^15, 2^14 slots, scale 2^45, depth 9 (kappa=8)"),
    _set(name="ckks-32768-d11", scheme="ckks", n=32768, scale_bits=45, qi_bits=(60,) + (45,) * 11 + (60,),
         depth=11, tags=("facesearch",),
         source="Face-search paper Sec. 6 / HyDia: N=2^15, 2^14 slots, scale 2^45, depth 11 (kappa=10)"),
    _set(name="ckks-8192-small", scheme="ckks", n=8192, scale_bits=40, qi_bits=(60, 40, 40, 60), depth=2,
         tags=("demo",), source="hepkg: smallest 128-bit CKKS set with depth 2, for tests and demos"),
    _set(name="ckks-16384-small", scheme="ckks", n=16384, scale_bits=40, qi_bits=(60, 40, 40, 60), depth=2,
         tags=("demo",), source="hepkg: depth-2 CKKS set every backend accepts at 128 bits (OpenFHE "
                                "refuses N=8192: its key-switching primes exceed the bound)"),
    _set(name="ckks-16384-d6", scheme="ckks", n=16384, scale_bits=40, qi_bits=(60,) + (40,) * 6 + (60,),
         depth=6, tags=("demo",), source="hepkg: 128-bit CKKS set with depth 6 (Chebyshev demos)"),
    # --- OMR -----------------------------------------------------------------------------
    # SophOMR paper Table 4 beside what OpenFHE 1.6.1 builds (BFV, HYBRID key switching; P measured from the key's
    # towers: OpenFHE 1.6.1 BFV takes one 60-bit special prime more than ceil(digit bits / 60)).
    _set(name="bfv-omr-perf", scheme="bfv", n=32768, plain_modulus=65537, qi_bits=(58,) * 15 + (60,), special_bits=60,
         depth=23, ks_digits=15, tower_bits=58, plain_depth=False, tags=("omr",),
         source="SophOMR paper Table 4 (PerfOMR, SEAL): n=2^15, p=65537, log Q=857, log PQ=917 (one 60-bit special "
                "prime), lambda=120.9 by the paper's lattice estimator; the authors' SEAL chain (keewoolee/PerfOMR): "
                "15 data primes of 60, 55, 12 x 60 and 22 bits",
         note="Below 128 bits as in the paper: needs insecure=True (OpenFHE HEStd_NotSet). 15 primes of 58 bits, as many "
              "as the authors', Q = 870 bits: the least Q of equal OpenFHE primes at depth 23 not below their 857. "
              "OpenFHE's own choice at depth 23 (bfv-omr-perf-d23, 14 x 60 = 840 bits) leaves PerfOMR's index buckets "
              "without noise budget (hepkg.omr.experiments.noise_trace). dnum 15 (one limb per digit, as SEAL's "
              "special prime), P = 2 x 60 bits: log PQ = 990 (paper 857 / 917)."),
    _set(name="bfv-omr-perf-d23", scheme="bfv", n=32768, plain_modulus=65537, qi_bits=(60,) * 15, special_bits=60,
         depth=23, ks_digits=14, plain_depth=False, tags=("omr",),
         source="bfv-omr-perf's ring and depth with the modulus OpenFHE 1.6.1 chooses itself",
         note="Below 128 bits: needs insecure=True. Q = 14 x 60 = 840 bits, 17 short of the authors' 857; P = 2 x 60, "
              "log PQ = 960. Measured beside bfv-omr-perf in the noise trace only: PerfOMR's index buckets end there "
              "at the edge of the noise budget and 4 of 15 digests of an earlier run did not decode."),
    _set(name="bgv-omr-perf", scheme="bgv", n=32768, plain_modulus=65537, qi_bits=(60,) * 14 + (17,) + (60,),
         depth=14, tags=("omr",),
         source="SophOMR paper Table 4 (PerfOMR): log Q=857, log PQ=917, split by hepkg as 14 x 60 + 17 bits and "
                "one 60-bit special prime (the paper prints only totals), BGV variant; OpenFHE builds its own BGV "
                "moduli from depth 14",
         note="lambda = 120.9 per the SophOMR paper: below 128 bits."),
    _set(name="bfv-omr-soph", scheme="bfv", n=65536, plain_modulus=786433, qi_bits=(60,) * 20, special_bits=420,
         depth=28, ks_digits=3, plain_depth=False, tags=("omr",),
         source="SophOMR paper Table 4: n=2^16, p=786433, log Q=1140, log PQ=1740, lambda=128.6; the authors' OpenFHE "
                "settings: MultiplicativeDepth 28, ScalingModSize 60, HYBRID, dnum 2",
         note="OpenFHE 1.6.1 builds Q = 19 x 60 = 1140 bits at depth 28. With dnum 2 it takes 11 special primes "
              "(log PQ 1800) and refuses N=2^16 at 128 bits ('Please increase it to 131072'); dnum 3 gives P = 8 x 60 "
              "bits, log PQ = 1620, accepted. qi_bits: the 19 data primes and one special prime; special_bits: the "
              "other 7."),
    _set(name="bfv-omr-soph-d2", scheme="bfv", n=65536, plain_modulus=786433, qi_bits=(60,) * 20, special_bits=540,
         depth=28, ks_digits=2, plain_depth=False, tags=("omr",),
         source="SophOMR paper Table 4 at the authors' own OpenFHE settings (dnum 2): log Q=1140, log PQ=1740",
         note="For OpenFHE 1.4 and 1.5, which take ceil(19 / dnum) = 10 special primes (log PQ 1740) and accept it at "
              "128 bits: hepkg beside the authors' program on one OpenFHE build (hepkg.omr.authors). OpenFHE 1.6.1 "
              "takes 11 (log PQ 1800) and refuses it; bfv-omr-soph is the set that builds there."),
    # --- toy sets: tests only ------------------------------------------------------------
    _set(name="toy-bfv-1024", scheme="bfv", n=1024, plain_modulus=12289, qi_bits=(30, 30, 30), depth=1,
         tags=("test",), source="hepkg tests: tiny insecure BFV ring"),
    _set(name="toy-bfv-omr", scheme="bfv", n=1024, plain_modulus=12289, qi_bits=(60,) * 25, depth=23,
         tags=("test",), source="hepkg tests: the OMR detector on a tiny insecure ring (PS with q' = p = 12289)"),
    _set(name="toy-bfv-omr-perf", scheme="bfv", n=4096, plain_modulus=65537, qi_bits=(60,) * 15, special_bits=60,
         depth=23, ks_digits=3, plain_depth=False, tags=("test",),
         source="hepkg tests and quick runs: bfv-omr-perf's plaintext modulus and depth (3 key-switching digits) on an "
                "insecure 4096 ring (PerfOMR's PS parameters, k <= 4)"),
    _set(name="toy-bfv-omr-soph", scheme="bfv", n=4096, plain_modulus=786433, qi_bits=(60,) * 20, special_bits=420,
         depth=28, ks_digits=3, plain_depth=False, tags=("test",),
         source="hepkg tests and quick runs: bfv-omr-soph's plaintext modulus, depth and key switching on an "
                "insecure 4096 ring (SophOMR's PS parameters, k <= 4)"),
    _set(name="toy-ckks-1024", scheme="ckks", n=1024, scale_bits=30, qi_bits=(40, 30, 40), depth=1,
         tags=("test",), source="hepkg tests: tiny insecure CKKS ring"),
    _set(name="toy-ckks-4096-d11", scheme="ckks", n=4096, scale_bits=40, qi_bits=(50,) + (40,) * 11 + (50,),
         depth=11, tags=("test",), source="hepkg tests and quick demos: the face-search depth (11) on a small insecure "
                                          "ring (2048 slots)"),
]}


def params_table():
    """The named parameter sets as a pandas table, with their security levels."""
    import pandas as pd
    cols = ["name", "scheme", "n", "slots", "plain_modulus", "scale_bits", "log_q", "log_pq", "depth", "security",
            "source"]
    return pd.DataFrame([{c: p.to_dict()[c] for c in cols} for p in PARAMS.values()]).set_index("name")


def get_params(spec: "str | ParamSet") -> ParamSet:
    """Look up a named parameter set (or pass a ParamSet through)."""
    if isinstance(spec, ParamSet):
        return spec
    try:
        return PARAMS[spec]
    except KeyError:
        raise ParameterError(f"unknown parameter set {spec!r}; known: {', '.join(sorted(PARAMS))}") from None
