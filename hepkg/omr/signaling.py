"""The private signaling scheme PS of the SophOMR paper (Construction 1, from PerfOMR), in plaintext numpy.

Ring R_q' = Z_q'[X]/(X^n' + 1); Neg^i(v) is the i-th negacyclic vector, so <Neg^i(a), b> is
coefficient i of a(X) b(X) (Sec. 3.1.2).

- KeyGen: sk <- chi_s (ternary, exactly h entries +-1); alpha uniform in Z_q'^n';
  beta = alpha * sk + e in Z_q'^n' (all n' coefficients: Signal needs them); pk = (alpha, beta).
- Signal: e0 <- chi_s, e1 <- chi_e^n', e2 <- chi_e^l; a = alpha * e0 + e1 (n' coefficients),
  b = (beta * e0)[:l] + e2. A clue is (a, b) in Z_q'^n' x Z_q'^l.
- Detect: d = b - (a * sk)[:l] = (e * e0 - e1 * sk)[:l] + e2, centred in (-q'/2, q'/2]; the clue
  is pertinent iff every |d_i| <= bound.

chi_e is the discrete Gaussian D_{Z,sigma} (weights exp(-x^2 / 2 sigma^2)), the sampler of the
authors' OpenFHE code; its variance at sigma = 0.5 is 0.215, below the sigma^2 = 0.25 that the
paper's completeness estimate assumes, so that estimate is conservative.

Range convention: ``convention="paper"`` (the default) accepts d_i in [-r, r] (2r + 1 values), the
rule of Construction 1 and Eq. 4 and the one behind Table 6's rho = l log2(q' / (2r + 1)) and nu.
``convention="code"`` accepts |d_i| <= r - 1 (2r - 1 values), what the authors' range-check
polynomial computes (its zeros are exactly |X| <= r - 1). Use ``dataclasses.replace(params,
convention="code")`` to reproduce their runs; the estimates below follow the convention chosen.

Randomness comes from the caller's ``numpy.random.Generator`` so that experiments replay from a
seed; that generator is not a cryptographic source: this module measures the scheme, it does not
issue keys for real use.

Table 6 (security lambda from the paper's lattice-estimator runs, not recomputed here):

=========  =====  =======  =====  ===  =  ==  ======  =====  ====  ======  ======
set        n'     q'       sigma  h    l  r   lambda  rho    nu    pk KB   sig KB
=========  =====  =======  =====  ===  =  ==  ======  =====  ====  ======  ======
PerfOMR    1024   65537    0.5    32   2  19  94.0    21.4   17.6  2.2     2.2
SophOMR    1024   786433   0.5    80   2  40  128.4   26.5   30.7  2.6     2.6
=========  =====  =======  =====  ===  =  ==  ======  =====  ====  ======  ======
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["PSParams", "PERFOMR", "SOPHOMR", "PARAMS", "CONVENTIONS", "SEED_BYTES", "SecretKey", "PublicKey", "Clue",
           "keygen", "signal", "random_signal", "residual", "detect", "soundness_bits", "completeness_bits",
           "signal_bytes", "public_key_bytes"]

#: Bytes of the hash seed that stands for alpha in the public key (Table 6, footnote 21).
SEED_BYTES = 32
CONVENTIONS = ("paper", "code")
_CHUNK = 4096   # clues generated per BLAS call


@dataclass(frozen=True)
class PSParams:
    """pp = (n', q', l, r, chi_s, chi_e): ring degree ``n``, modulus ``q``, ``l`` repetitions, range ``r``,
    ternary secrets of Hamming weight ``h``, discrete Gaussian errors of parameter ``sigma``."""
    name: str
    q: int
    h: int
    r: int
    n: int = 1024
    l: int = 2
    sigma: float = 0.5
    convention: str = "paper"

    def __post_init__(self):
        for field in ("q", "h", "r", "n", "l"):
            v = getattr(self, field)
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
                raise ValueError(f"PS parameter {field} must be a positive integer, got {v!r}")
        if not 2 <= self.q < 2 ** 31:
            raise ValueError(f"modulus q'={self.q} must lie in [2, 2^31) (exact int64/float64 arithmetic)")
        if self.n > 2 ** 20:
            raise ValueError(f"ring degree n'={self.n} is above 2^20")
        if not self.l <= self.n or not self.h <= self.n:
            raise ValueError(f"need l <= n' and h <= n', got l={self.l}, h={self.h}, n'={self.n}")
        if not (isinstance(self.sigma, (int, float)) and 0 < self.sigma < 2 ** 10):
            raise ValueError(f"error parameter sigma must be a positive number, got {self.sigma!r}")
        if self.convention not in CONVENTIONS:
            raise ValueError(f"range convention must be one of {CONVENTIONS}, got {self.convention!r}")
        if 2 * self.bound + 1 > self.q:
            raise ValueError(f"range r={self.r} accepts every residue mod q'={self.q}: no soundness")

    @property
    def bound(self) -> int:
        """The largest accepted |d_i|: r (paper) or r - 1 (authors' code)."""
        return self.r if self.convention == "paper" else self.r - 1

    @property
    def bits(self) -> int:
        """Bits per Z_q' element, ceil(log2 q')."""
        return (self.q - 1).bit_length()

    def describe(self) -> str:
        """The set's name and values, for error messages."""
        return (f"{self.name} (n'={self.n}, q'={self.q}, l={self.l}, h={self.h}, r={self.r}, "
                f"sigma={self.sigma}, {self.convention} range)")


#: Table 6, PerfOMR's set (94-bit secure, 17.6-bit complete by the paper's count).
PERFOMR = PSParams("perfomr", q=65537, h=32, r=19)
#: Table 6, SophOMR's set (128.4-bit secure, 30.7-bit complete); q' is also the BFV plaintext modulus p.
SOPHOMR = PSParams("sophomr", q=786433, h=80, r=40)
PARAMS = {p.name: p for p in (PERFOMR, SOPHOMR)}


def _check_params(params) -> None:
    _expect(params, PSParams, "params")


def _expect(obj, cls: type, what: str) -> None:
    if not isinstance(obj, cls):
        raise TypeError(f"{what} must be a {cls.__name__}, got {type(obj).__name__}")


def _same(owner: PSParams, params: PSParams, what: str) -> None:
    _check_params(params)
    if owner != params:
        raise ValueError(f"{what} belongs to other parameters: {owner.describe()}, not {params.describe()}")


def _mod_array(x, tail: int, params: PSParams, what: str, batch: bool = True) -> np.ndarray:
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.integer):
        raise ValueError(f"{what} must hold integers mod q'={params.q}, got dtype {x.dtype}")
    if x.shape[-1:] != (tail,) or x.ndim > (2 if batch else 1):
        want = f"({tail},)" + (f" or (count, {tail})" if batch else "")
        raise ValueError(f"{what} has shape {x.shape}, expected {want} for {params.describe()}")
    if x.size and (x.min() < 0 or x.max() >= params.q):
        raise ValueError(f"{what} is not reduced mod q'={params.q}: values in [{x.min()}, {x.max()}]")
    return x.astype(np.int64, copy=False)


@dataclass(frozen=True, eq=False)
class SecretKey:
    """sk in {-1, 0, 1}^n'."""
    s: np.ndarray
    params: PSParams

    def __post_init__(self):
        _check_params(self.params)
        s = np.asarray(self.s)
        if s.shape != (self.params.n,) or not np.issubdtype(s.dtype, np.integer) or np.abs(s).max(initial=0) > 1:
            raise ValueError(f"secret key must be a ternary integer vector of length n'={self.params.n}, "
                             f"got shape {s.shape}, dtype {s.dtype}")
        object.__setattr__(self, "s", s.astype(np.int64, copy=False))


@dataclass(frozen=True, eq=False)
class PublicKey:
    """pk = (alpha, beta) in Z_q'^n' x Z_q'^n'."""
    alpha: np.ndarray
    beta: np.ndarray
    params: PSParams

    def __post_init__(self):
        _check_params(self.params)
        for field in ("alpha", "beta"):
            object.__setattr__(self, field, _mod_array(getattr(self, field), self.params.n, self.params,
                                                       f"public key {field}", batch=False))


@dataclass(frozen=True, eq=False)
class Clue:
    """One clue (a: (n',), b: (l,)) or a batch (a: (count, n'), b: (count, l)), entries in [0, q')."""
    a: np.ndarray
    b: np.ndarray
    params: PSParams

    def __post_init__(self):
        _check_params(self.params)
        a = _mod_array(self.a, self.params.n, self.params, "clue part a")
        b = _mod_array(self.b, self.params.l, self.params, "clue part b")
        if a.shape[:-1] != b.shape[:-1]:
            raise ValueError(f"clue parts disagree on the batch: a has shape {a.shape}, b {b.shape}")
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)

    @property
    def batched(self) -> bool:
        return self.a.ndim == 2

    def __getitem__(self, index) -> Clue:
        if not self.batched:
            raise TypeError("a single clue cannot be indexed")
        return Clue(self.a[index], self.b[index], self.params)


def _negacyclic(v: np.ndarray, rows: int) -> np.ndarray:
    """Rows Neg^0(v) .. Neg^{rows-1}(v), so that (v * x)[:rows] = _negacyclic(v, rows) @ x in Z[X]/(X^n + 1)."""
    n = len(v)
    # Row i = (v_i, ..., v_0, -v_{n-1}, ..., -v_{i+1}) is the window at n - 1 - i of (reversed v, -reversed v).
    windows = np.lib.stride_tricks.sliding_window_view(np.concatenate([v[::-1], -v[::-1]]), n)
    return windows[n - 1::-1][:rows]


def _exact_matmul(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x @ y for a ternary x through float64 BLAS (numpy multiplies int64 matrices without it): exact,
    as every partial sum stays below n' q' < 2^51."""
    return np.rint(x.astype(np.float64) @ y.astype(np.float64)).astype(np.int64)


def _gaussian_pmf(sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """Support [-12 sigma, 12 sigma] and probabilities of D_{Z,sigma}, weights exp(-x^2 / 2 sigma^2)."""
    x = np.arange(-math.ceil(12 * sigma), math.ceil(12 * sigma) + 1)
    w = np.exp(-x.astype(np.float64) ** 2 / (2 * sigma ** 2))
    return x, w / w.sum()


def _gaussian(params: PSParams, rng: np.random.Generator, shape) -> np.ndarray:
    x, p = _gaussian_pmf(params.sigma)
    return rng.choice(x, size=shape, p=p)


def _sparse_ternary(params: PSParams, rng: np.random.Generator, rows: int) -> np.ndarray:
    """``rows`` draws of chi_s: h entries +-1 (uniform signs) at uniformly random positions, the rest 0."""
    x = np.zeros((rows, params.n), np.int64)
    x[:, :params.h] = rng.choice(np.array([-1, 1]), size=(rows, params.h))
    return rng.permuted(x, axis=1, out=x)


def _check_rng(rng) -> None:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (numpy.random.default_rng(seed)), "
                        f"got {type(rng).__name__}")


def _count(size) -> int:
    if size is None:
        return 1
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 0:
        raise ValueError(f"size must be None or a non-negative integer, got {size!r}")
    return int(size)


def keygen(params: PSParams, rng: np.random.Generator) -> tuple[SecretKey, PublicKey]:
    """PS.KeyGen: (sk, pk) with beta = alpha * sk + e over R_q'."""
    _check_params(params)
    _check_rng(rng)
    s = _sparse_ternary(params, rng, 1)[0]
    alpha = rng.integers(0, params.q, params.n)
    beta = (_negacyclic(alpha, params.n) @ s + _gaussian(params, rng, params.n)) % params.q
    return SecretKey(s, params), PublicKey(alpha, beta, params)


def signal(pk: PublicKey, params: PSParams, rng: np.random.Generator, size: int | None = None) -> Clue:
    """PS.Signal: a clue that ``pk``'s owner detects; ``size`` clues (a batch) unless None."""
    _expect(pk, PublicKey, "pk")
    _same(pk.params, params, "public key")
    _check_rng(rng)
    count, n, q = _count(size), params.n, params.q
    # One matrix for both parts: e0 @ w = (alpha * e0, (beta * e0)[:l]).
    w = np.concatenate([_negacyclic(pk.alpha, n), _negacyclic(pk.beta, params.l)]).T
    out = np.empty((count, n + params.l), np.int64)
    for start in range(0, count, _CHUNK):
        rows = min(_CHUNK, count - start)
        e0 = _sparse_ternary(params, rng, rows)
        out[start:start + rows] = (_exact_matmul(e0, w) + _gaussian(params, rng, (rows, n + params.l))) % q
    if size is None:
        out = out[0]
    return Clue(out[..., :n], out[..., n:], params)


def random_signal(params: PSParams, rng: np.random.Generator, size: int | None = None) -> Clue:
    """A uniformly random clue, the authors' benchmark stand-in for a clue to someone else."""
    _check_params(params)
    _check_rng(rng)
    shape = (params.n + params.l,) if size is None else (_count(size), params.n + params.l)
    out = rng.integers(0, params.q, shape)
    return Clue(out[..., :params.n], out[..., params.n:], params)


def residual(sk: SecretKey, clue: Clue, params: PSParams) -> np.ndarray:
    """d = b - (<Neg^i(a), sk>)_{i<l}, centred in (-q'/2, q'/2]: shape (l,) or (count, l)."""
    _expect(sk, SecretKey, "sk")
    _expect(clue, Clue, "clue (Clue(a, b, params) wraps raw arrays)")
    _same(sk.params, params, "secret key")
    _same(clue.params, params, "clue")
    # (a * sk)_i = <Neg^i(a), sk> = <a, Neg^i(sk)>.
    d = (clue.b - clue.a @ _negacyclic(sk.s, params.l).T) % params.q
    return np.where(d > params.q // 2, d - params.q, d)


def detect(sk: SecretKey, clue: Clue, params: PSParams):
    """PS.Detect: True iff every |d_i| <= params.bound; a bool for one clue, a bool array for a batch."""
    ok = (np.abs(residual(sk, clue, params)) <= params.bound).all(axis=-1)
    return bool(ok) if not clue.batched else ok


def soundness_bits(params: PSParams) -> float:
    """rho = l log2(q' / (2 bound + 1)): a uniform clue passes with probability exactly 2^-rho (Rmk. 2)."""
    return params.l * math.log2(params.q / (2 * params.bound + 1))


def completeness_bits(params: PSParams, *, exact: bool = False) -> float:
    """nu = -log2(l Pr[|d_i| > bound]) (union bound over the l coefficients).

    Each d_i is a sum of 2h + 1 independent errors. The paper's model (default) takes it Gaussian
    of variance (2h + 1) sigma^2; ``exact=True`` convolves the sampler's D_{Z,sigma} 2h + 1 times.
    """
    terms = 2 * params.h + 1
    if not exact:
        tail = math.erfc(params.bound / math.sqrt(2 * terms * params.sigma ** 2))
    else:
        x, p = _gaussian_pmf(params.sigma)
        pmf = np.ones(1)
        for _ in range(terms):
            pmf = np.convolve(pmf, p)
        support = np.arange(len(pmf)) - terms * x[-1]
        tail = float(pmf[np.abs(support) > params.bound].sum())
    return -math.log2(params.l * tail) if tail > 0 else math.inf


def signal_bytes(params: PSParams) -> int:
    """A clue as Table 6 counts it: n' + l elements of ceil(log2 q') bits."""
    return math.ceil((params.n + params.l) * params.bits / 8)


def public_key_bytes(params: PSParams) -> int:
    """pk as Table 6 counts it: alpha compressed to a seed (footnote 21) and beta at ceil(log2 q') bits."""
    return SEED_BYTES + math.ceil(params.n * params.bits / 8)
