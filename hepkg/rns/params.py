"""Parameter sets of the RNS-CKKS engine and the primes they build.

Security bound: the HomomorphicEncryption.org standard (ternary secret, classical, 128 bits)
on log2(QP), special primes counted: N=2^15: 881 bits. For N=2^16 the standard has no row;
OpenFHE uses 1772 bits and hepkg.he.params 1747: hepkg's table (the stricter 1747) is used here,
so every set below passes both.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

from hepkg.security import HE_STANDARD

from .arith import MAX_PRIME_BITS, ntt_prime_near, ntt_primes

#: max log2(QP) for 128-bit classical security (ternary secret), per ring degree (hepkg's HE-standard table)
MAX_LOG_QP_128 = {n: row[128] for n, row in HE_STANDARD.items()}


@dataclass(frozen=True)
class RnsParams:
    """A CKKS parameter set: ring degree, prime sizes, scale, key-switching digits.

    ``q_bits``: the first prime then one prime per level (rescaled away last-first); a level
    prime of ``scale_bits`` bits is chosen as the NTT-friendly prime closest to the running
    scale, so the scale stays near 2^scale_bits. ``special_count`` primes of ``special_bits``
    bits make the key-switching modulus P; with count None, P is the fewest primes of at most
    ``special_bits`` bits, of equal size, whose product exceeds the largest digit (what hybrid
    key switching needs, and no more: P counts against the security bound).
    ``dnum``: hybrid key-switching digits. ``insecure``: below 128 bits, tests only.
    """

    name: str
    n: int
    scale_bits: int
    q_bits: tuple[int, ...]
    dnum: int = 3
    special_bits: int = 60
    special_count: int | None = None
    insecure: bool = False
    note: str = ""
    primes: tuple = field(default=(), compare=False, repr=False)

    def __post_init__(self):
        if self.n not in MAX_LOG_QP_128:
            raise ValueError(f"{self.name}: ring degree {self.n} not in {sorted(MAX_LOG_QP_128)}")
        if not all(2 <= b <= MAX_PRIME_BITS for b in self.q_bits + (self.special_bits,)) or len(self.q_bits) < 1:
            raise ValueError(f"{self.name}: prime sizes must be 2..{MAX_PRIME_BITS} bits")
        if not 1 <= self.dnum <= len(self.q_bits):
            raise ValueError(f"{self.name}: dnum {self.dnum} must be 1..{len(self.q_bits)} (the Q primes)")
        if self.scale_bits >= self.q_bits[0]:
            raise ValueError(f"{self.name}: the first prime must exceed the scale")
        if not self.primes:
            object.__setattr__(self, "primes", _build(self))
        if not self.insecure and self.log_qp > MAX_LOG_QP_128[self.n]:
            raise ValueError(f"{self.name}: log QP = {self.log_qp} exceeds the 128-bit bound "
                             f"{MAX_LOG_QP_128[self.n]} for N={self.n}; mark it insecure=True (tests only)")

    @property
    def depth(self) -> int:
        return len(self.q_bits) - 1

    @property
    def q_primes(self) -> tuple:
        return self.primes[0]

    @property
    def p_primes(self) -> tuple:
        return self.primes[1]

    @property
    def log_q(self) -> int:
        return sum(q.bit_length() for q in self.q_primes)

    @property
    def log_p(self) -> int:
        return sum(p.bit_length() for p in self.p_primes)

    @property
    def log_qp(self) -> int:
        return self.log_q + self.log_p

    @property
    def secure(self) -> bool:
        return self.log_qp <= MAX_LOG_QP_128[self.n]


def _build(p: RnsParams) -> tuple:
    """(Q primes, P primes): the first prime, the level primes (tracking the scale), then P."""
    first = ntt_primes(p.q_bits[0], p.n, 1)[0]
    taken, levels, scale = {first}, [], float(2 ** p.scale_bits)
    for bits in p.q_bits[1:]:                 # consumed last-first: level l rescales by q_{L-l}
        if bits == p.scale_bits:
            q = ntt_prime_near(scale, p.n, taken)
        else:
            q = ntt_primes(bits, p.n, 1, taken)[0]
        taken.add(q)
        levels.append(q)
        scale = scale * scale / q
    q_primes = (first,) + tuple(reversed(levels))
    if p.special_count:
        return q_primes, tuple(ntt_primes(p.special_bits, p.n, p.special_count, taken))
    return q_primes, _special_primes(p, q_primes, taken)


def _special_primes(p: RnsParams, q_primes, taken) -> tuple:
    """The fewest equal-sized primes of at most special_bits bits whose product P exceeds the largest
    key-switching digit of Q (the largest NTT primes below 2^bits: P is just below 2^(count bits), at least 2^(digit bits + 1))."""
    alpha = -(-len(q_primes) // p.dnum)
    digit = max(math.prod(q_primes[i:i + alpha]) for i in range(0, len(q_primes), alpha))
    count = -(-(digit.bit_length() + 1) // p.special_bits)
    bits = -(-(digit.bit_length() + 1) // count)
    while True:
        primes = tuple(ntt_primes(bits, p.n, count, taken))
        if math.prod(primes) > digit:
            return primes
        bits += 1


def _ckks(name, n, depth, *, scale_bits=45, first_bits=60, **kw) -> RnsParams:
    return RnsParams(name=name, n=n, scale_bits=scale_bits, q_bits=(first_bits,) + (scale_bits,) * depth, **kw)


#: named sets; built lazily (prime search) by :func:`get_params`
_SPECS = {
    # face-search sets (paper Sec. 6: N=2^15, scale 2^45, depth 9 and 11) and N=2^16 sets, all 128-bit
    "rns-ckks-32768-d9": dict(n=32768, depth=9, dnum=3, note="face search, kappa=8"),
    "rns-ckks-32768-d11": dict(n=32768, depth=11, dnum=3, note="face search / HyDia, kappa=10"),
    "rns-ckks-65536-d9": dict(n=65536, depth=9, dnum=2),
    "rns-ckks-65536-d11": dict(n=65536, depth=11, dnum=2),
    "rns-ckks-65536-d24": dict(n=65536, depth=24, dnum=3),
    # tests only: small rings, far below 128 bits
    "rns-test-4096-d3": dict(n=4096, depth=3, dnum=2, insecure=True, note="insecure: tests only"),
    "rns-test-8192-d4": dict(n=8192, depth=4, dnum=3, insecure=True, note="insecure: tests only"),
}
_BUILT: dict = {}


def get_params(name: "str | RnsParams") -> RnsParams:
    """A named parameter set (or the RnsParams given)."""
    if isinstance(name, RnsParams):
        return name
    if name not in _SPECS:
        raise KeyError(f"unknown rns parameter set {name!r}; known: {', '.join(_SPECS)}")
    if name not in _BUILT:
        _BUILT[name] = _ckks(name, **_SPECS[name])
    return _BUILT[name]


def names() -> list[str]:
    return list(_SPECS)


@functools.lru_cache(maxsize=64)
def fitted(name: str, n: int, scale_bits: int, q_bits: tuple, dnum: "int | None" = None,
           default_dnum: int = 3) -> RnsParams:
    """A set for prime sizes ``q_bits`` with ``dnum`` digits, or, with dnum None, the fewest digits
    from ``default_dnum`` up whose QP stays within the 128-bit bound (more digits: a smaller P),
    else ``default_dnum``. Marked insecure: the caller judges the security of what is built."""
    def build(d):
        return RnsParams(name=name, n=n, scale_bits=scale_bits, q_bits=q_bits, dnum=min(d, len(q_bits)),
                         insecure=True)

    if dnum:
        return build(dnum)
    first = build(default_dnum)
    tries = (build(d) for d in range(first.dnum + 1, len(q_bits) + 1))
    return first if first.secure else next((p for p in tries if p.secure), first)
