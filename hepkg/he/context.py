"""The backend protocol: one Context interface over every HE library.

A backend subclasses :class:`Context` and implements the small ``_raw`` hooks listed at
the end of the class; everything users see (validation, key policy, depth and level
tracking, operation accounting, serialization framing, roles) lives here once, so an
algorithm written against :class:`Context` runs unchanged on every backend.

Conventions: ``rotate(ct, k)`` is a *left* rotation by k. BFV/BGV slots form two rows of
N/2 that rotate independently (``swap_columns`` exchanges them); CKKS has N/2 slots.
Operations never modify their inputs.
"""
from __future__ import annotations

import contextlib
import functools
import os
import time
from abc import ABC, abstractmethod
from typing import Iterable

import numpy as np

from . import envelope
from .counting import HOOKS, OpCounter, timed_hook
from .envelope import is_hex, is_int
from .errors import (ContextClosed, ContextMismatch, CorruptedData, DepthExhausted, EncodingError, HEError,
                     InsecureParameters, MissingKeyError, MissingRotationKey, NoiseBudgetExhausted, ScaleOverflow,
                     SchemeError, SecretContextRefused, SecretKeyRequired)
from .guard import isolated, probe
from .keys import RotationKeys, as_step
from .params import HE_STANDARD, BuiltModulus, ParamSet, get_params
from .registry import CLEARTEXT, load_context, recorded_insecure
from .subring import descended_slots

#: every (backend, parameter set, insecure, built modulus) this process has built: see built_params()
_BUILT: dict[tuple, dict] = {}
#: Why contexts may not be built now (set while a notebook renders from raw tables), or None.
_FORBIDDEN: list[str] = []


def forbid_contexts(reason: str | None) -> None:
    """From now on, building any context raises :class:`HEError` naming ``reason`` (None: allow again).

    Rendering from committed raw tables sets it, so a render that would compute fails loudly."""
    _FORBIDDEN[:] = [reason] if reason else []


def built_params() -> list[dict]:
    """One record per distinct context this process built: the declared parameter set beside the
    modulus the library actually built (bits of Q and P) and the security that follows."""
    return list(_BUILT.values())


def require_public(ctx: "Context", role: str) -> "Context":
    """``ctx`` if it cannot decrypt; :class:`SecretContextRefused` naming ``role`` otherwise.

    Every server-side party calls this on the context it is given.
    """
    if not isinstance(ctx, Context):
        raise TypeError(f"{role} needs a hepkg context, got {type(ctx).__name__}")
    if ctx.has_secret:
        raise SecretContextRefused(f"{role} must not hold the secret key: give it ctx.public() (or the bytes of "
                                   f"ctx.to_bytes()), not the key holder's context")
    return ctx


class Plaintext:
    """An encoded plaintext bound to one context and one level (``values``: the slots it encodes,
    re-encoded when an operation needs it at another level; ``peak``: CKKS, their largest magnitude)."""

    __slots__ = ("raw", "key_id", "level", "values", "peak")

    def __init__(self, raw, key_id: str, level: int, values: np.ndarray, peak: float | None = None):
        self.raw, self.key_id, self.level, self.values, self.peak = raw, key_id, level, values, peak


class Ciphertext:
    """A ciphertext plus what hepkg tracks about it.

    ``depth``: multiplicative depth consumed; ``level``: moduli dropped (rescale or
    modulus switch); ``size``: 2, or 3 after a product that is not yet relinearized;
    ``pending``: CKKS product whose rescale was deferred; ``bound``: CKKS, an upper bound on
    the magnitude of every slot, carried from the encrypted inputs through every operation
    (None for BFV/BGV, whose slots wrap mod t by design; see :meth:`Context.tighten_bound`).
    """

    __slots__ = ("raw", "ctx", "depth", "level", "size", "pending", "bound")

    def __init__(self, raw, ctx: "Context", depth=0, level=0, size=2, pending=False, bound=None):
        self.raw, self.ctx = raw, ctx
        self.depth, self.level, self.size, self.pending, self.bound = depth, level, size, pending, bound

    @property
    def key_id(self) -> str:
        return self.ctx.key_id

    def __add__(self, other):
        return self.ctx.add(self, other)

    def __sub__(self, other):
        return self.ctx.sub(self, other)

    def __mul__(self, other):
        return self.ctx.mul(self, other)

    def __neg__(self):
        return self.ctx.negate(self)

    def __repr__(self) -> str:
        return (f"Ciphertext({self.ctx.backend}/{self.ctx.scheme}, depth={self.depth}, level={self.level}, "
                f"size={self.size}{', pending rescale' if self.pending else ''}"
                f"{'' if self.bound is None else f', |values| <= {self.bound:.4g}'})")


class Context(ABC):
    """An HE context: parameters, keys, and the operations of the backend protocol.

    Build one with :func:`hepkg.he.context`. A context made by key generation holds the
    secret key; :meth:`public` returns the evaluation-only context a server gets (public,
    relinearization and Galois keys, no secret key), rebuilt from its bytes.
    """

    backend = "?"
    schemes: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs):
        """Time every raw hook a backend defines (time inside the HE library; see hepkg.he.counting)."""
        super().__init_subclass__(**kwargs)
        for name in HOOKS:
            fn = cls.__dict__.get(f"_{name}")
            if callable(fn):
                setattr(cls, f"_{name}", timed_hook(name, fn))
    #: True where the library reports the BFV noise budget; decryption then checks it,
    #: elsewhere BFV depth is enforced against the parameter set instead.
    has_noise_budget = False
    #: True where the library's parser can crash the interpreter on malformed bytes: public
    #: contexts are then parsed in a forked child first (see hepkg.he.guard)
    fragile_parser = False

    #: True where the backend can hold a BFV secret key at fewer moduli (:meth:`lowered`; hooks below)
    lowers = False
    #: True where :meth:`subring` (ring switching) is available
    subrings = False
    #: seconds this context's key generation took: its secret, public and evaluation keys, without the library's
    #: own set-up of the context (its moduli and tables), the span a C++ program's key-generation timer covers
    #: (FastHE-Search's ``KeyGen`` to ``EvalRotateKeyGen``); NaN in a context made from another's bytes
    keygen_s = float("nan")

    def __init__(self, params: ParamSet | str, *, rotations: Iterable[int] | str = (), policy: str = "pow2",
                 swap: bool = False, insecure: bool = False, _meta: dict | None = None, _payload: bytes = b"",
                 _parent: "Context | None" = None, _relin: bool = True, _descent: int = 1):
        if _FORBIDDEN:
            raise HEError(f"no HE context may be built now: {_FORBIDDEN[0]}")
        self.params = get_params(params)
        if self.params.scheme not in self.schemes:
            raise SchemeError(f"backend '{self.backend}' does not support {self.params.scheme.upper()} "
                              f"(supports {', '.join(s.upper() for s in self.schemes)})")
        self.params.require_secure(insecure)
        self.insecure = recorded_insecure(self.backend, insecure)  # True on sim, whatever the parameters
        self.scheme = self.params.scheme
        self.slots = self.params.slots
        self.period = self.params.n // 2  # rotation period: a BFV row, or all CKKS slots
        self.counter = OpCounter()
        self._closed = False
        self._vetted: set[str] = set()  # tags of ciphertexts vet() parsed in a child (see deserialize)
        if _meta is None:
            self.keys = RotationKeys(policy, rotations, self.period)
            self.swap_key = bool(swap) and self.is_integer
            self.relin_key = bool(_relin)
            self.key_id = os.urandom(16).hex()
            self._session_key = os.urandom(envelope.KEY_BYTES)
            self.__has_secret = True
            self.parent_key_id = None if _parent is None else _parent.key_id
            self.descent = _descent
            if _parent is None:
                self._keygen()
            elif _descent > 1:
                self._keygen_subring(_parent)
            else:
                self._keygen_lowered(_parent)
        else:
            self.keys = RotationKeys("exact", _meta["steps"], self.period)
            self.keys.policy = _meta["policy"]
            self.swap_key = _meta["swap"]
            self.relin_key = _meta["relin"]
            self.key_id = _meta["key_id"]
            self._session_key = bytes.fromhex(_meta["session_key"])
            self.__has_secret = False
            self.parent_key_id = _meta["parent"]
            self.descent = _meta["descent"]
            self._from_payload(_payload)
        self.built = BuiltModulus(**self._modulus())
        self._check_built(_meta, bool(insecure))
        _BUILT[(self.backend, self.params.name, self.insecure, self.built)] = dict(
            backend=self.backend, params=self.params.name, insecure=self.insecure, declared_log_pq=self.params.log_pq,
            declared_security=self.params.security, **self.built.as_dict() | dict(security=self.security))

    def _from_payload(self, payload: bytes) -> None:
        """Load the public keys; whatever the library raises on malformed bytes becomes CorruptedData (a library's
        bad_alloc on them included), but not hepkg's own refusal for want of memory (a MemoryError subclass such
        as :class:`hepkg.rns.DeviceMemoryError`), which is no fault of the bytes."""
        try:
            self._load_public(payload)
            self._modulus()
        except HEError:
            raise
        except Exception as exc:  # noqa: BLE001 - the library's own error, on bytes from elsewhere
            if isinstance(exc, MemoryError) and type(exc) is not MemoryError:
                raise
            raise CorruptedData(f"{self.backend} could not load the public context: "
                                f"{type(exc).__name__}: {exc}") from exc

    def _check_built(self, meta: dict | None, insecure: bool) -> None:
        """What the library built must be what was asked for (and what the sender built), and secure (its modulus,
        on sim too, unless ``insecure``)."""
        built, p = self.built, self.params
        if built.n != p.n:
            self.close()
            raise CorruptedData(f"the context claims {p.name} (N={p.n}) but the {self.backend} payload builds "
                                f"N={built.n}")
        if meta is not None and meta["built"] != dict(q_bits=list(built.q_bits), p_bits=list(built.p_bits)):
            self.close()
            raise CorruptedData(f"the context's metadata records moduli {meta['built']} but the payload builds "
                                f"q_bits={list(built.q_bits)}, p_bits={list(built.p_bits)}")
        if built.security < 128 and not insecure:
            self.close()
            raise InsecureParameters(
                f"{self.backend} built {p.name} with log PQ = {built.log_pq} (Q {built.log_q} bits, P "
                f"{built.log_pq - built.log_q} bits) at N={built.n}: about {built.security:g} bits of security, "
                f"below 128; pass insecure=True for tests or demos only")

    # ------------------------------------------------------------------ lifetime
    @property
    def has_secret(self) -> bool:
        """True for the key holder's context; fixed when the context is made (use :meth:`public`)."""
        return self.__has_secret

    @has_secret.setter
    def has_secret(self, value) -> None:
        raise AttributeError("has_secret is read-only: a context's role is fixed when it is made "
                             "(the key holder's context from hk.context(), evaluation-only from ctx.public())")

    def close(self) -> None:
        """Release the keys now (OpenFHE keeps them in process-wide maps); idempotent.

        A context is also released when it is garbage-collected; ``with hk.context(...) as ctx:``
        closes it at the end of the block. Operations on a closed context raise ContextClosed.
        """
        if not self._closed:
            self._closed = True
            self._release()

    def __enter__(self) -> "Context":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ properties
    @property
    def security(self) -> float:
        """Bits of security this context gives: its built modulus's (:attr:`built`), 0 on a backend that encrypts
        nothing (sim)."""
        return 0.0 if self.backend in CLEARTEXT else self.built.security

    @property
    def is_integer(self) -> bool:
        return self.scheme in ("bfv", "bgv")

    @property
    def plain_modulus(self) -> int | None:
        return self.params.plain_modulus

    @property
    def counts(self):
        """Running operation counts of this context (see :class:`OpCounts`)."""
        return self.counter.total

    def counting(self):
        """Context manager scoping counts: ``with ctx.counting() as ops: ...``."""
        return self.counter.region()

    def __repr__(self) -> str:
        role = "secret" if self.has_secret else "public"
        return (f"<{type(self).__name__} {self.params.name} {self.scheme.upper()} N={self.params.n} "
                f"{role}, {len(self.keys)} rotation keys ({self.keys.policy})>")

    # ------------------------------------------------------------------ encoding
    def _values(self, values, allow_scalar: bool) -> np.ndarray:
        """Validate user values and return them padded to the slot count."""
        arr = np.asarray(values)
        if arr.ndim == 0:
            if not allow_scalar:
                raise EncodingError("expected a 1-D vector of values, got a scalar")
            arr = np.full(self.slots, arr.item())
        if arr.ndim != 1:
            raise EncodingError(f"expected a 1-D vector, got shape {arr.shape}")
        if arr.size == 0:
            raise EncodingError("the vector is empty: nothing to encode")
        if arr.size > self.slots:
            raise EncodingError(f"vector of length {arr.size} exceeds the {self.slots} slots of "
                                f"{self.params.name} (N={self.params.n})")
        return self._check_integer(arr) if self.is_integer else self._check_real(arr)

    def _check_integer(self, arr: np.ndarray) -> np.ndarray:
        t = self.plain_modulus
        if arr.dtype == object:
            if not all(isinstance(v, (int, np.integer)) for v in arr):
                raise EncodingError(f"{self.scheme.upper()} encodes integers; got non-integer objects")
            lo, hi = min(arr), max(arr)
        elif arr.dtype.kind in "iub":
            lo, hi = int(arr.min()), int(arr.max())
        else:
            raise EncodingError(f"{self.scheme.upper()} encodes integers; got dtype {arr.dtype}. "
                                f"Round explicitly or use a fixed-point encoding with a scale")
        if lo < -(t // 2) or hi >= t:
            raise EncodingError(f"values in [{lo}, {hi}] are outside the plaintext range "
                                f"[-{t // 2}, {t - 1}] of t={t}")
        out = np.zeros(self.slots, dtype=np.int64)
        if arr.dtype == object:
            out[:arr.size] = [int(v) % t for v in arr]
        else:                       # in [-t/2, t): negatives lifted by t, no division (0.2 ms at 2^16 slots)
            out[:arr.size] = arr
            if lo < 0:
                out[out < 0] += t
        return out

    def _check_real(self, arr: np.ndarray) -> np.ndarray:
        if arr.dtype.kind not in "iubfc":
            raise EncodingError(f"CKKS encodes real or complex numbers; got dtype {arr.dtype}")
        if not np.all(np.isfinite(arr)):
            raise EncodingError("CKKS cannot encode NaN or infinite values")
        bound = self.ckks_capacity
        if np.max(np.abs(arr)) >= bound:
            raise EncodingError(f"|value| up to {np.max(np.abs(arr)):g} overflows CKKS: must stay below "
                                f"2^{self.params.qi_bits[0] - self.params.scale_bits - 1} for scale "
                                f"2^{self.params.scale_bits} and a {self.params.qi_bits[0]}-bit first prime")
        out = np.zeros(self.slots, dtype=np.complex128 if arr.dtype.kind == "c" else np.float64)
        out[:arr.size] = arr
        return out

    @property
    def ckks_capacity(self) -> float:
        """CKKS: the magnitude a value must stay below, 2^(q0 - scale_bits - 1) (what the first
        prime holds at the scale once every other prime is rescaled away): the capacity of the
        last level, and the bound fresh encryptions must respect."""
        return self.ckks_capacity_at(self.max_level)

    def ckks_capacity_at(self, level: int) -> float:
        """CKKS: the magnitude a value at scale 2^scale_bits must stay below in a ciphertext at
        ``level`` (moduli dropped), 2^(bits of the data primes left - scale_bits - 1): what the
        modulus at that level holds, centered. The one definition every overflow check uses."""
        return self._capacities[level]

    @functools.cached_property
    def _capacities(self) -> tuple[float, ...]:
        return tuple(2.0 ** self._capacity_bits(level) for level in range(self.max_level + 1))

    def _capacity_bits(self, level: int) -> int:
        return sum(self.params.qi_bits[:self.max_level - level + 1]) - self.params.scale_bits - 1

    def _fits(self, bound, level: int, what: str):
        """``bound()`` (CKKS: the largest magnitude the result of ``what`` can hold) if a ciphertext at
        ``level`` holds it, checked before the operation runs; ScaleOverflow naming the bound, the
        capacity and the level otherwise. None for BFV/BGV (not computed)."""
        if self.is_integer:
            return None
        bound = float(bound())
        if not bound < self._capacities[level]:  # NaN included
            bits = self._capacity_bits(level)
            raise ScaleOverflow(
                f"{what} can hold |values| up to {bound:.6g} (the bound carried from the encrypted inputs), beyond the "
                f"{2.0 ** bits:g} = 2^{bits} that a ciphertext at level {level} of {self.max_level} holds at scale "
                f"2^{self.params.scale_bits} ({self.params.name}): it would wrap modulo q and decrypt to garbage; "
                f"scale the inputs down, or stay at a higher level")
        return bound

    def tighten_bound(self, ct: Ciphertext, bound: float) -> Ciphertext:
        """CKKS: ``ct`` (the same ciphertext, no HE operation) with its magnitude bound lowered to ``bound``.

        The tracked bound follows interval arithmetic (sums add, products multiply), which is sound but
        grows fast through polynomials: T_8(y) with |y| <= 1 is bounded by 723 that way, by 1 in truth.
        An algorithm that can *prove* a tighter bound from its mathematics (|T_k(y)| <= 1 on [-1, 1], a
        polynomial's maximum on its input interval, a cosine similarity of unit vectors) asserts it here.
        Only ever tightens: a larger ``bound`` leaves the tracked one. Never assert a bound you cannot justify:
        it is what keeps a wrapped result from decrypting as a plausible wrong answer."""
        self._check(ct)
        if self.is_integer:
            raise SchemeError("magnitude bounds are tracked for CKKS only (BFV/BGV slots wrap mod t by design)")
        if isinstance(bound, (bool, np.bool_)) or not isinstance(bound, (int, float, np.integer, np.floating)) \
                or not bound >= 0:
            raise ValueError(f"a magnitude bound is a non-negative number (inf: no information), got {bound!r}")
        if bound >= ct.bound:
            return ct
        return Ciphertext(ct.raw, self, depth=ct.depth, level=ct.level, size=ct.size, pending=ct.pending,
                          bound=float(bound))

    @property
    def max_level(self) -> int:
        """The deepest level (moduli dropped) a ciphertext or plaintext can be at."""
        return len(self.params.qi_bits) - 2

    def _valid_level(self, level) -> int:
        if isinstance(level, (bool, np.bool_)) or not isinstance(level, (int, np.integer)):
            raise TypeError(f"level must be an integer, got {level!r} ({type(level).__name__})")
        if not 0 <= level <= self.max_level:
            raise EncodingError(f"level {level} does not exist: {self.params.name} on {self.backend} has levels "
                                f"0..{self.max_level}")
        return int(level)

    def encode(self, values, *, level: int = 0) -> Plaintext:
        """Encode a vector (at most ``slots`` values; padded with zeros) as a plaintext at ``level``."""
        self._alive()
        level = self._valid_level(level)
        return self._encoded(self._values(values, allow_scalar=True), level)

    def _encoded(self, values: np.ndarray, level: int) -> Plaintext:
        self.counter.add("encode")
        peak = None if self.is_integer else float(np.max(np.abs(values)))
        return Plaintext(self._encode(values, level), self.key_id, level, values, peak)

    # ------------------------------------------------------------------ encrypt/decrypt
    def encrypt(self, values) -> Ciphertext:
        """Encrypt a vector (or a :class:`Plaintext` of this context)."""
        self._alive()
        pt = values if isinstance(values, Plaintext) else None
        if pt is None:
            pt = self._encoded(self._values(values, allow_scalar=False), 0)
        else:
            self._check_plain(pt)
        self.counter.add("encrypt")
        return Ciphertext(self._encrypt(pt.raw), self, level=pt.level, bound=pt.peak)

    def decrypt(self, ct: Ciphertext, n: int | None = None, *, signed: bool = True,
                complex: bool = False) -> np.ndarray:
        """Decrypt to a numpy vector of the first ``n`` slots (all by default).

        BFV/BGV: integers mod t, centered in (-t/2, t/2] when ``signed`` else in [0, t).
        CKKS: float64 (complex128 with ``complex=True``).
        """
        self._check(ct)
        if not self.has_secret:
            raise SecretKeyRequired("this is a public (evaluation) context: it holds no secret key and cannot decrypt")
        if n is not None and (isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer))
                              or not 0 <= n <= self.slots):
            raise ValueError(f"n must be None or an integer in 0..{self.slots} (slots to return), got {n!r}")
        if self.is_integer and self.has_noise_budget and self._noise_budget(ct.raw) <= 0:
            raise NoiseBudgetExhausted(f"noise budget exhausted (depth {ct.depth}): decryption would be wrong; "
                                       f"use a larger modulus or fewer multiplications")
        self.counter.add("decrypt")
        out = self._decrypt(ct.raw)
        if self.is_integer:
            t = self.plain_modulus
            out = np.asarray(out[: self.slots if n is None else n], dtype=np.int64) % t
            if signed:
                out[out > t // 2] -= t
            return out
        out = np.asarray(out, dtype=np.complex128)
        self._check_magnitude(out, ct)
        out = out[: self.slots if n is None else n]
        return out if complex else out.real.copy()

    def _check_magnitude(self, values: np.ndarray, ct: Ciphertext) -> None:
        """ScaleOverflow when a CKKS result is beyond the capacity of its level, by its tracked bound
        (a wrapped value lands back inside the capacity, so the decrypted magnitude alone cannot tell)
        or by the decrypted magnitude (what ``sim``, which never wraps, shows). Every slot counts: a
        wrapped result is garbage everywhere."""
        peak = float(np.max(np.abs(values))) if values.size else 0.0
        peak = peak if np.isfinite(peak) else float("inf")
        self._fits(lambda: max(ct.bound, peak), ct.level + ct.pending, f"the ciphertext (depth {ct.depth})")

    # ------------------------------------------------------------------ checks
    def _alive(self) -> None:
        if self._closed:
            raise ContextClosed(f"this {self.backend} context ({self.params.name}) was closed: its keys are released")

    def _check(self, ct) -> None:
        self._alive()
        if not isinstance(ct, Ciphertext):
            raise TypeError(f"expected a Ciphertext, got {type(ct).__name__}")
        if ct.ctx is not self and ct.ctx.key_id != self.key_id:
            raise ContextMismatch(f"ciphertext belongs to another context (keys {ct.ctx.key_id[:8]}, "
                                  f"{ct.ctx.backend}/{ct.ctx.params.name}); this one is keys {self.key_id[:8]}, "
                                  f"{self.backend}/{self.params.name}")
        if ct.ctx.backend != self.backend:
            raise ContextMismatch(f"ciphertext from backend '{ct.ctx.backend}' used on backend '{self.backend}'")
        if ct.bound is None and not self.is_integer:
            raise ScaleOverflow("this CKKS ciphertext carries no magnitude bound (it was built outside the context's "
                                "operations): give Ciphertext(..., bound=) one you can justify")

    def _check_plain(self, pt: Plaintext) -> None:
        if pt.key_id != self.key_id:
            raise ContextMismatch("plaintext was encoded by another context")

    def _linear(self, ct: Ciphertext, what: str) -> None:
        if ct.size != 2:
            raise SchemeError(f"{what} needs a relinearized ciphertext (this one has {ct.size} components): "
                              f"call relinearize() first")

    def _ready(self, ct: Ciphertext) -> Ciphertext:
        """A CKKS operand with its deferred rescale applied (counted), else ``ct``."""
        return self.rescale(ct) if ct.pending else ct

    def _derive(self, raw, *srcs, depth=None, level=None, size=2, pending=False, bound=None) -> Ciphertext:
        """The result ciphertext; ``bound`` (from :meth:`_fits`) defaults to the first source's (an operation
        that keeps the magnitudes: rotation, relinearization, rescale)."""
        depth = max(s.depth for s in srcs) if depth is None else depth
        level = max(s.level for s in srcs) if level is None else level
        self.counter.reached_depth(depth)
        return Ciphertext(raw, self, depth=depth, level=level, size=size, pending=pending,
                          bound=srcs[0].bound if bound is None else bound)

    def _plain_for(self, ct: Ciphertext, p) -> Plaintext:
        """``p`` as a plaintext at ``ct``'s level (a plaintext at another level is re-encoded)."""
        if isinstance(p, Plaintext):
            self._check_plain(p)
            return p if p.level == ct.level else self._encoded(p.values, ct.level)
        return self.encode(p, level=ct.level)

    # ------------------------------------------------------------------ arithmetic
    def add(self, a: Ciphertext, b) -> Ciphertext:
        """a + b for a ciphertext and a ciphertext, plaintext, vector or scalar."""
        return self._linear_op(a, b, "add", self._add, self._add_plain)

    def sub(self, a: Ciphertext, b) -> Ciphertext:
        """a - b for a ciphertext and a ciphertext, plaintext, vector or scalar."""
        return self._linear_op(a, b, "sub", self._sub, self._sub_plain)

    def _linear_op(self, a: Ciphertext, b, kind: str, ct_op, pt_op) -> Ciphertext:
        self._check(a)
        if isinstance(b, Ciphertext):
            self._check(b)
            if a.pending != b.pending:
                a, b = self._ready(a), self._ready(b)
            bound = self._fits(lambda: a.bound + b.bound, max(a.level, b.level) + a.pending, f"the {kind}")
            self.counter.add(kind)
            return self._derive(ct_op(a.raw, b.raw), a, b, size=max(a.size, b.size), pending=a.pending,
                                bound=bound)
        a = self._ready(a)
        pt = self._plain_for(a, b)
        bound = self._fits(lambda: a.bound + pt.peak, a.level, f"the plaintext {kind}")
        self.counter.add("add_pt")
        return self._derive(pt_op(a.raw, pt.raw), a, size=a.size, bound=bound)

    def negate(self, a: Ciphertext) -> Ciphertext:
        self._check(a)
        self.counter.add("negate")
        return self._derive(self._negate(a.raw), a, size=a.size, pending=a.pending)

    def _next_depth(self, *cts: Ciphertext, plain: bool = False) -> tuple[int, int]:
        """(depth, level) after one more multiplication, or DepthExhausted.

        ``plain``: a ciphertext-plaintext product, which adds no BFV/BGV depth where the
        parameter set counts ciphertext products only (``ParamSet.plain_depth``).
        """
        if plain and self.scheme != "ckks" and not self.params.plain_depth:
            return max(c.depth for c in cts), max(c.level for c in cts)
        depth = max(c.depth for c in cts) + 1
        level = max(c.level for c in cts)
        if self.scheme == "ckks":
            if level + 1 > self.params.depth:
                raise DepthExhausted(f"multiplication needs a level but the ciphertext is at level {level} of "
                                     f"{self.params.depth} ({self.params.name}): multiplicative depth exhausted")
        elif not self.has_noise_budget and depth > self.params.depth:
            raise DepthExhausted(f"multiplication would reach depth {depth}, beyond the {self.params.depth} "
                                 f"that {self.params.name} supports on backend '{self.backend}'")
        return depth, level

    def mul(self, a: Ciphertext, b, *, relin: bool = True, rescale: bool = True) -> Ciphertext:
        """a * b. Ciphertext x ciphertext; relinearize now or defer (``relin=False``).

        A plaintext, vector or scalar ``b`` gives a ciphertext-plaintext product. CKKS
        products are rescaled at once unless ``rescale=False`` or ``relin=False`` (rescaling
        before relinearizing adds error); a pending rescale is applied before the next
        operation that needs it, or explicitly by :meth:`rescale`.
        """
        self._check(a)
        if not isinstance(b, Ciphertext):
            return self.mul_plain(a, b, rescale=rescale)
        self._check(b)
        a, b = self._ready(a), self._ready(b)
        self._linear(a, "multiplication")
        self._linear(b, "multiplication")
        depth, level = self._next_depth(a, b)
        bound = self._fits(lambda: a.bound * b.bound, level + 1, "the product")
        self.counter.add("mul_ct")
        out = self._derive(self._mul(a.raw, b.raw), a, b, depth=depth, level=level, size=3,
                           pending=self.scheme == "ckks", bound=bound)
        return self.relinearize(out, rescale=rescale) if relin else out

    def mul_plain(self, a: Ciphertext, p, *, rescale: bool = True) -> Ciphertext:
        """a * p for a plaintext, vector or scalar p."""
        self._check(a)
        a = self._ready(a)
        depth, level = self._next_depth(a, plain=True)
        pt = self._plain_for(a, p)
        bound = self._fits(lambda: a.bound * pt.peak, level + 1, "the plaintext product")
        self.counter.add("mul_pt")
        out = self._derive(self._mul_plain(a.raw, pt.raw), a, depth=depth, level=level, size=a.size,
                           pending=self.scheme == "ckks", bound=bound)
        return self.rescale(out) if rescale and out.pending else out

    def dot_plain(self, cts: list, plains: list) -> Ciphertext:
        """sum_i cts[i] * plains[i] (plaintexts, vectors or scalars): the products accumulated in place
        where the backend can (one ciphertext less allocated per term), CKKS rescaled once at the end.
        Counted as the products and additions it is."""
        if not isinstance(cts, (list, tuple)) or not isinstance(plains, (list, tuple)) or not cts \
                or len(cts) != len(plains):
            raise ValueError("dot_plain needs a non-empty list of ciphertexts and a list of as many plaintexts, got "
                             f"{type(cts).__name__} and {type(plains).__name__}")
        acc = None
        for a, p in zip(cts, plains):
            term = self.mul_plain(a, p, rescale=False)
            if acc is None:
                acc = term                                 # a fresh ciphertext of ours: safe to add into
                continue
            if (acc.level, acc.pending) != (term.level, term.pending):
                raise ContextMismatch("dot_plain needs its ciphertexts at one level")
            bound = self._fits(lambda: acc.bound + term.bound, acc.level + acc.pending, "the sum of products")
            self.counter.add("add")
            acc = self._derive(self._add_into(acc.raw, term.raw), acc, term, size=acc.size, pending=acc.pending,
                               bound=bound)
        return self.rescale(acc) if acc.pending else acc

    def _add_into(self, x, y):
        """x + y, where the backend may reuse x's storage (x is a ciphertext nobody else holds)."""
        return self._add(x, y)

    def relinearize(self, a: Ciphertext, *, rescale: bool = False) -> Ciphertext:
        """A size-3 ciphertext back to size 2; with ``rescale``, a pending CKKS rescale too, folded into the
        key switch where the backend can (one ModDown divides by P and the last prime: the rns engine)."""
        self._check(a)
        if a.size == 2:
            return self.rescale(a) if rescale and a.pending else a
        if not self.relin_key:
            raise MissingKeyError("no relinearization key: this context was sent without evaluation keys "
                                  "(to_bytes(evaluation_keys=False)), for encryption only, or lowered without one "
                                  "(lowered(relin=False))")
        self.counter.add("relinearize")
        self.counter.add("keyswitch")
        if rescale and a.pending:
            self.counter.add("rescale")
            return self._derive(self._relin_rescale(a.raw), a, level=a.level + 1, size=2)
        return self._derive(self._relin(a.raw), a, size=2, pending=a.pending)

    def rescale(self, a: Ciphertext) -> Ciphertext:
        """CKKS: divide by the last prime after a product (consumes one level)."""
        self._check(a)
        if self.scheme != "ckks":
            raise SchemeError(f"{self.scheme.upper()} has no rescale; use mod_switch() to drop a modulus")
        if not a.pending:
            return a
        self.counter.add("rescale")
        return self._derive(self._rescale(a.raw), a, level=a.level + 1, size=a.size)

    def mod_switch(self, a: Ciphertext) -> Ciphertext:
        """Drop the last prime without scaling the message (BFV modulus switch, CKKS level drop)."""
        return self.drop_level(a, 1)

    def drop_level(self, a: Ciphertext, levels: int = 1) -> Ciphertext:
        """``levels`` primes dropped (none for 0), counted as as many :meth:`mod_switch`; a backend may drop them
        in one step (OpenFHE's BFV ``Compress``: 17 at 2^16 in 100 ms, not 115; scripts/omr_encode_paths.py)."""
        if levels <= 0:
            return a
        self._check(a)
        a = self._ready(a)
        if a.level + levels > self.max_level:  # keep at least one data prime
            raise DepthExhausted(f"no modulus left to drop: ciphertext at level {a.level} of {self.max_level}, "
                                 f"{levels} to drop")
        self._fits(lambda: a.bound, a.level + levels, "the level drop")
        self.counter.add("mod_switch", levels)
        return self._derive(self._mod_switch_many(a.raw, levels), a, level=a.level + levels, size=a.size)

    def keep_primes(self, a: Ciphertext, primes: int) -> Ciphertext:
        """``a`` with at most ``primes`` data primes: :meth:`drop_level` of the others (``a`` where it has no more)."""
        return self.drop_level(a, self.max_level + 1 - primes - a.level)

    def primes_for_depth(self, depth: int) -> int | None:
        """BFV: the data primes this backend's parameter generation gives a circuit of ``depth`` ciphertext products
        on this ring and plaintext modulus, which a ciphertext with ``depth`` products still to come keeps
        (:func:`hepkg.omr.rangecheck.range_check` drops the others); None where the backend does not say."""
        return None

    def _mod_switch_many(self, x, levels: int):
        """``levels`` backend mod switches (a backend that drops several primes at once overrides it)."""
        for _ in range(levels):
            x = self._mod_switch(x)
        return x

    # ------------------------------------------------------------------ rotations
    def rotate(self, a: Ciphertext, k: int) -> Ciphertext:
        """Left rotation by k slots (each BFV row rotates on its own)."""
        self._check(a)
        k = as_step(k)
        a = self._ready(a)
        self._linear(a, "rotation")
        plan = self.keys.plan(k)
        if not plan:
            return a
        raw = a.raw
        for step in plan:
            raw = self._rotate(raw, step)
        self.counter.add("rotate")
        self.counter.add("keyswitch", len(plan))
        return self._derive(raw, a)

    def rotate_many(self, a: Ciphertext, steps: Iterable[int]) -> dict[int, Ciphertext]:
        """Rotations of one ciphertext by several steps, sharing one hoisted decomposition.

        Steps with a key of their own go through the backend's hoisted path (native on
        OpenFHE, a loop elsewhere); composed ``pow2`` rotations are made by :meth:`rotate_from`
        (from the original or an earlier step, whichever needs fewer key switches).
        """
        self._check(a)
        steps = list(dict.fromkeys(as_step(s) for s in steps))
        a = self._ready(a)
        self._linear(a, "rotation")
        direct = [s for s in steps if s % self.period and s % self.period in self.keys.steps]
        out = {s: a for s in steps if s % self.period == 0}
        if direct:
            raws = self._rotate_hoisted(a.raw, [s % self.period for s in direct])
            self.counter.add("hoisted_precompute")
            self.counter.add("rotate", len(direct))
            self.counter.add("keyswitch", len(direct))
            out.update({s: self._derive(r, a) for s, r in zip(direct, raws)})
        have = {0: a} | out
        for s in steps:
            if s not in out:
                out[s] = have[s] = self.rotate_from(have, s)
        return {s: out[s] for s in steps}

    def rotate_from(self, rotated: dict[int, Ciphertext], k: int) -> Ciphertext:
        """The rotation by ``k`` of the ciphertext whose rotations by the keys of ``rotated`` are its
        values (0 -> itself), made from whichever of them needs the fewest key switches: with
        power-of-two keys, stepping on from the last rotation costs one key switch where rotating the
        original by k costs several."""
        k = as_step(k)
        best, cost = None, None
        for base in rotated:
            try:
                n = len(self.keys.plan(k - base))
            except MissingRotationKey:
                continue
            if cost is None or n < cost:
                best, cost = base, n
        if best is None:
            raise MissingRotationKey(self.keys._missing(k))
        return self.rotate(rotated[best], k - best)

    def swap_columns(self, a: Ciphertext) -> Ciphertext:
        """BFV/BGV: exchange the two rows of N/2 slots."""
        self._check(a)
        if not self.is_integer:
            raise SchemeError("column swap exists only for BFV/BGV (CKKS has one row of slots)")
        if not self.swap_key:
            raise MissingKeyError("no Galois key for the column swap: build the context with swap=True")
        self._linear(a, "column swap")
        self.counter.add("swap")
        self.counter.add("keyswitch")
        return self._derive(self._swap(a.raw), a)

    def sum_slots(self, a: Ciphertext) -> Ciphertext:
        """Every slot receives the sum of all slots (BFV: both rows, needs the swap key)."""
        from hepkg.linalg.rotsum import rotate_and_sum
        out = rotate_and_sum(self, a, self.period)
        return self.add(out, self.swap_columns(out)) if self.is_integer else out

    # ------------------------------------------------------------------ noise, sizes
    def noise_budget(self, a: Ciphertext) -> int | None:
        """Remaining BFV noise budget in bits (None where the library does not expose it)."""
        self._check(a)
        if not (self.is_integer and self.has_noise_budget):
            return None
        if not self.has_secret:
            raise SecretKeyRequired("the noise budget is measured with the secret key")
        return int(self._noise_budget(a.raw))

    def nbytes(self, obj: Ciphertext) -> int:
        """Serialized size in bytes."""
        return len(self.serialize(obj))

    def key_sizes(self) -> dict[str, int]:
        """Bytes of the key material: public, relinearization, Galois (rotation + swap) keys, and a subring
        context's switching key (:meth:`subring`; 0 elsewhere)."""
        sizes = self._key_sizes()
        sizes.setdefault("switch_key", 0)
        sizes["rotation_keys"] = len(self.keys) + int(self.swap_key)
        return sizes

    # ------------------------------------------------------------------ serialization & roles
    def serialize(self, ct: Ciphertext) -> bytes:
        """Bytes of a ciphertext: the library's own format in an envelope authenticated with
        this session's key (see :mod:`hepkg.he.envelope`)."""
        self._check(ct)
        self._linear(ct, "serialization")
        meta = dict(backend=self.backend, params=self.params.name, key_id=self.key_id, depth=ct.depth,
                    level=ct.level, pending=ct.pending, bound=ct.bound)
        return envelope.pack("ciphertext", meta, self._ser(ct.raw), key=self._session_key)

    def deserialize(self, data: bytes, *, guard: bool = False) -> Ciphertext:
        """The ciphertext of :meth:`serialize`, made in this session; CorruptedData or ContextMismatch
        (naming the reason) for anything else.

        The session's MAC keeps out bytes altered or forged outside the session. A party that holds
        the session key could still send a malformed payload: every party parses what crossed a trust
        boundary with ``guard=True``, which parses it in a forked child first where the library's parser can
        crash (:attr:`fragile_ciphertexts`), unless :meth:`vet` has parsed these very bytes so.
        """
        meta, payload = self._unpacked(data)
        if guard and self.fragile_ciphertexts and envelope.fingerprint(data) not in self._vetted:
            probe(self._parse, payload, meta, what=f"{self.backend} ciphertext", size=len(payload))
        return Ciphertext(self._parse(payload, meta), self, depth=meta["depth"], level=meta["level"],
                          pending=meta["pending"], bound=None if self.is_integer else float(meta["bound"]))

    def vet(self, source, *, what: str, sizes=None) -> None:
        """Parse many serialized ciphertexts in one forked child (:attr:`fragile_ciphertexts`; nothing elsewhere)
        and remember their tags, so that :meth:`deserialize` with ``guard=True`` parses them without a child of
        its own: one fork for a whole encrypted database instead of one per ciphertext. ``source``: a list of
        bytes, or a callable that yields them, called in the child (it may read them from disk: nothing large
        enters this process), then with ``sizes``, their sizes in bytes (the child's time and memory limits
        follow them). CorruptedData naming ``what`` if any of them is refused or crashes the parser; bytes
        changed since they were vetted carry another tag, and are guarded again."""
        if not self.fragile_ciphertexts:
            return
        self._alive()
        sizes = list(map(len, source)) if sizes is None else list(sizes)

        def parse_all() -> set:
            tags = set()
            for data in (source() if callable(source) else source):
                meta, payload = self._unpacked(data)
                self._parse(payload, meta)
                tags.add(envelope.fingerprint(data))
            return tags

        self._vetted |= isolated(parse_all, what=f"{self.backend} ciphertexts of {what}", size=sum(sizes),
                                 largest=max(sizes, default=0))

    @property
    def fragile_ciphertexts(self) -> bool:
        """True where reading a received ciphertext runs a parser that can crash the interpreter on malformed
        bytes: :meth:`deserialize` then parses it in a forked child first (by default ``fragile_parser``)."""
        return self.fragile_parser

    def _unpacked(self, data) -> tuple[dict, memoryview]:
        """(meta, payload) of a ciphertext of this session, its MAC and metadata checked."""
        self._alive()
        try:
            meta, payload = envelope.unpack(data, "ciphertext", key=self._session_key)
        except CorruptedData:
            meta = self._foreign_meta(data)
            if meta is None:
                raise
            raise ContextMismatch(f"ciphertext was made under another context ({meta.get('backend')}/"
                                  f"{meta.get('params')}, keys {str(meta.get('key_id'))[:8]}); this is "
                                  f"{self.backend}/{self.params.name}, keys {self.key_id[:8]}") from None
        envelope.require(meta, {"backend": lambda v: v == self.backend, "params": lambda v: v == self.params.name,
                                "key_id": lambda v: v == self.key_id, "depth": is_int(0),
                                "level": is_int(0, self.max_level), "pending": lambda v: isinstance(v, bool),
                                "bound": lambda v: self._valid_bound(v, meta)},
                         "ciphertext")
        return meta, payload

    def _valid_bound(self, v, meta: dict) -> bool:
        """A serialized magnitude bound: null for BFV/BGV; for CKKS a finite non-negative number that
        the ciphertext's level holds (no hepkg context makes anything else)."""
        if self.is_integer:
            return v is None
        if type(v) not in (int, float) or not 0 <= v < float("inf"):
            return False
        level = meta.get("level")
        return type(level) is int and 0 <= level <= self.max_level and \
            v < self.ckks_capacity_at(min(level + bool(meta.get("pending")), self.max_level))

    def _parse(self, payload: bytes, meta: dict):
        """The library's ciphertext from ``payload``, checked against ``meta``."""
        try:
            return self._load(bytes(payload), meta)
        except HEError:
            raise
        except Exception as exc:  # noqa: BLE001 - the library's own parse error
            raise CorruptedData(f"{self.backend} could not parse the ciphertext: {type(exc).__name__}: {exc}") from exc

    def _foreign_meta(self, data) -> dict | None:
        """The (unverified) metadata of a ciphertext of another session, to name it in the error."""
        meta = envelope.peek(data)
        ok = meta is not None and meta.get("kind") == "ciphertext" and meta.get("key_id") != self.key_id
        return meta if ok else None

    def to_bytes(self, *, evaluation_keys: bool = True) -> bytes:
        """The public part: parameters, public key, evaluation keys, the built moduli and the session
        key the parties authenticate their messages with (never the secret key). Send it to the
        session's parties only. ``evaluation_keys=False`` leaves out the relinearization and
        rotation keys: what a party that only encrypts needs (it then cannot multiply or rotate).
        Publish ``hk.he.fingerprint(data)`` of what you send over an authenticated channel: the receiving
        party pins it (:func:`hepkg.he.load_context`)."""
        self._alive()
        meta = dict(backend=self.backend, params=self.params.to_dict(), policy=self.keys.policy,
                    steps=sorted(self.keys.steps) if evaluation_keys else [], swap=self.swap_key and evaluation_keys,
                    relin=self.relin_key and bool(evaluation_keys), key_id=self.key_id, parent=self.parent_key_id,
                    descent=self.descent,
                    insecure=self.insecure,
                    session_key=self._session_key.hex(),
                    built=dict(q_bits=list(self.built.q_bits), p_bits=list(self.built.p_bits)))
        return envelope.pack("context", meta, self._public_payload(bool(evaluation_keys)))

    def public(self) -> "Context":
        """The evaluation-only context a server gets: rebuilt from :meth:`to_bytes`, in this process."""
        data = self.to_bytes()
        return load_context(data, fingerprint=envelope.fingerprint(data), backend=self.backend, guard=False)

    # ------------------------------------------------------------------ the same secret at fewer moduli
    def lowered(self, limbs: int, *, rotations: Iterable[int] | str = (), policy: str = "exact",
                swap: bool = False, relin: bool = True) -> "Context":
        """A secret BFV context over this one's first ``limbs`` data primes holding the same secret key, with rotation
        keys of its own at that modulus (smaller and cheaper than this context's, which span every prime): a
        ciphertext of this context modulus-switched to ``limbs`` primes continues there (:meth:`adopt`).
        ``relin=False``: no relinearization key (linear work: plaintext products, rotations, the swap).
        SchemeError where the backend cannot (:attr:`lowers`), ParameterError where it cannot build that modulus."""
        self._alive()
        if not self.has_secret:
            raise SecretKeyRequired("only the key holder's context can make a lowered one (it holds the secret)")
        if not self.lowers or self.scheme != "bfv":
            raise SchemeError(f"backend '{self.backend}' cannot hold a {self.scheme.upper()} secret key at fewer "
                              f"moduli (lowered contexts: BFV, on backends that set Context.lowers)")
        if not isinstance(limbs, (int, np.integer)) or isinstance(limbs, bool) or not 1 <= limbs <= self.max_level:
            raise ValueError(f"limbs must be an integer in [1, {self.max_level}] (fewer primes than the "
                             f"{self.max_level + 1} of {self.params.name}), got {limbs!r}")
        low = type(self)(self._lowered_params(int(limbs)), rotations=rotations, policy=policy, swap=swap,
                         insecure=self.insecure, _parent=self, _relin=relin)
        values = np.arange(self.slots, dtype=np.int64) % self.plain_modulus
        moved = low.adopt(self.drop_level(self.encrypt(values), self.max_level - low.max_level))
        if not np.array_equal(low.decrypt(moved, signed=False) % self.plain_modulus, values):
            low.close()
            raise ParameterError(f"{self.backend} built {low.params.name} on the first primes of {self.params.name}, "
                                 f"but a ciphertext moved there does not decrypt (other NTT tables at those primes)")
        return low

    def adopt(self, ct: Ciphertext) -> Ciphertext:
        """``ct``, a ciphertext of the context this one was lowered from, modulus-switched to this context's primes,
        as a ciphertext of this context (its coefficients copied; nothing secret needed). It keeps the product
        budget it had left (at most this context's)."""
        self._alive()
        if self.parent_key_id is None:
            raise ContextMismatch(f"this context ({self.params.name}) was not lowered from another: it adopts nothing")
        self._from_parent(ct, "adoption", " was lowered from")
        primes = ct.ctx.max_level + 1 - ct.level
        if primes != self.max_level + 1:
            raise ValueError(f"the ciphertext has {primes} primes left; {self.params.name} has {self.max_level + 1}: "
                             f"drop it to that level of {ct.ctx.params.name} first (drop_level)")
        left = min(ct.ctx.params.depth - ct.depth, self.params.depth)
        return Ciphertext(self._adopted(ct.ctx, ct.raw), self, depth=self.params.depth - left, level=0)

    def subring(self, d: int) -> "Context":
        """A secret BFV context of ring degree n/d (two primes of 60 bits, the same plaintext modulus, no
        evaluation keys) with a secret key s' of its own, holding the key that switches a ciphertext of this context
        at one prime from this context's secret to s'(X^d): :meth:`descend` takes such a ciphertext there (ring
        switching). Its slot (r, j) receives d^-1 times the sum of this context's slots (r, j + k n/(2d)), k < d
        (:func:`hepkg.he.subring.descended_slots`). SchemeError where the backend cannot (:attr:`subrings`)."""
        self._alive()
        if not self.has_secret:
            raise SecretKeyRequired("only the key holder's context can make a subring context (it holds the secret)")
        if not self.subrings or self.scheme != "bfv":
            raise SchemeError(f"backend '{self.backend}' cannot switch {self.scheme.upper()} ciphertexts to a subring "
                              f"(subring contexts: BFV, on backends that set Context.subrings)")
        n, least = self.params.n, min(HE_STANDARD)
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 2 or d & (d - 1) or n // d < least:
            raise ValueError(f"d must be a power of two in [2, {n // least}] (the subring of degree n/d, at least "
                             f"{least}), got {d!r}")
        if (self.plain_modulus - 1) % (2 * n):
            raise ParameterError(f"ring switching needs full packing, t = 1 mod 2n; {self.params.name} has "
                                 f"t = {self.plain_modulus}")
        small = type(self)(self._subring_params(int(d)), insecure=self.insecure, _parent=self, _relin=False,
                           _descent=int(d))
        values = np.arange(self.slots, dtype=np.int64) % self.plain_modulus
        top = self.drop_level(self.encrypt(values), self.max_level)
        if not np.array_equal(small.decrypt(small.descend(top), signed=False),
                              descended_slots(values, int(d), self.plain_modulus)):
            small.close()
            raise ParameterError(f"{self.backend}: a ciphertext of {self.params.name} switched to its subring of "
                                 f"degree {n // d} does not decrypt there")
        return small

    def descend(self, ct: Ciphertext) -> Ciphertext:
        """``ct``, a ciphertext of the context this one is a subring of, at its last prime, switched to this ring
        (nothing secret needed; see :meth:`subring`). It keeps no product budget."""
        self._alive()
        if self.descent == 1:
            raise ContextMismatch(f"this context ({self.params.name}) is no subring of another: it descends nothing")
        self._from_parent(ct, "ring switching", "'s switching key is from")
        if ct.level != ct.ctx.max_level:
            raise ValueError(f"the ciphertext has {ct.ctx.max_level + 1 - ct.level} primes left; ring switching "
                             f"takes it at one: drop it to level {ct.ctx.max_level} first (drop_level)")
        self.counter.add("keyswitch")
        return Ciphertext(self._descended(ct.ctx, ct.raw), self, depth=self.params.depth, level=self.max_level)

    def _from_parent(self, ct: Ciphertext, what: str, made: str) -> None:
        """TypeError or ContextMismatch unless ``ct`` is a valid, relinearized (``what`` needs it) ciphertext of the
        keys this context was made from (``made``: how, for the message)."""
        if not isinstance(ct, Ciphertext):
            raise TypeError(f"expected a Ciphertext, got {type(ct).__name__}")
        if ct.key_id != self.parent_key_id or ct.ctx.backend != self.backend:
            raise ContextMismatch(f"the ciphertext belongs to keys {ct.key_id[:8]} ({ct.ctx.backend}/"
                                  f"{ct.ctx.params.name}); this context{made} keys {self.parent_key_id[:8]}")
        ct.ctx._check(ct)
        self._linear(ct, what)

    @property
    def session_key(self) -> bytes:
        """The key that authenticates this session's serialized objects (shared with the parties)."""
        return self._session_key

    @contextlib.contextmanager
    def _generating_keys(self):
        """Time the block as this context's key generation (:attr:`keygen_s`): a backend's hook wraps its key
        generation in it, the library's context set-up outside."""
        start = time.perf_counter()
        yield
        self.keygen_s = time.perf_counter() - start

    # ------------------------------------------------------------------ backend hooks
    # Raw objects are the library's own. Steps passed to _rotate are normalized to
    # [1, period) and always have a key. No hook may modify its inputs.
    @abstractmethod
    def _keygen(self): ...

    # A backend that sets `subrings` defines _keygen_subring(parent) (its own secret and the parent's switching key to
    # its lift) and _descended(parent, raw) (a raw ciphertext of the parent at one prime as this context's own,
    # switched there); it may refine _subring_params.
    def _subring_params(self, d: int) -> ParamSet:
        """The subring of degree n/d: two primes of 60 bits (the digest travels at one; log Q = 120, 128-bit secure
        from n/d = 2^13), no key switching of its own, this plaintext modulus."""
        p = self.params
        return ParamSet(name=f"{p.name}/{d}", scheme="bfv", n=p.n // d, qi_bits=(60, 60, 60), depth=1,
                        plain_modulus=p.plain_modulus, plain_depth=False,
                        source=f"the subring of degree n/{d} of {p.name}, holding a secret of its own "
                               f"(Context.subring)")

    # A backend that sets `lowers` also defines _keygen_lowered(parent) (this context's keys from the parent's
    # secret key at its primes) and _adopted(parent, raw) (a raw ciphertext of the parent at this context's primes
    # as this context's own); it may refine _lowered_params.
    def _lowered_params(self, limbs: int) -> ParamSet:
        """This parameter set over its first ``limbs`` data primes, with one key-switching digit (P as large as
        Q): the least depth that has them."""
        p = self.params
        return p.replace(name=f"{p.name}@{limbs}", qi_bits=p.qi_bits[:limbs] + p.qi_bits[-1:], depth=limbs - 1,
                         ks_digits=1, special_bits=sum(p.qi_bits[1:limbs]), tags=(), note="",
                         source=f"the first {limbs} data primes of {p.name}, holding its secret key (Context.lowered)")

    @abstractmethod
    def _load_public(self, payload: bytes): ...

    @abstractmethod
    def _public_payload(self, evaluation_keys: bool) -> "bytes | list": ...

    @abstractmethod
    def _encode(self, values: np.ndarray, level: int): ...

    @abstractmethod
    def _encrypt(self, pt): ...

    @abstractmethod
    def _decrypt(self, ct) -> np.ndarray: ...

    @abstractmethod
    def _add(self, x, y): ...

    @abstractmethod
    def _sub(self, x, y): ...

    @abstractmethod
    def _add_plain(self, x, p): ...

    @abstractmethod
    def _sub_plain(self, x, p): ...

    @abstractmethod
    def _negate(self, x): ...

    @abstractmethod
    def _mul(self, x, y): ...

    @abstractmethod
    def _relin(self, x): ...

    @abstractmethod
    def _mul_plain(self, x, p): ...

    @abstractmethod
    def _rotate(self, x, step: int): ...

    @abstractmethod
    def _swap(self, x): ...

    @abstractmethod
    def _rescale(self, x): ...

    def _relin_rescale(self, x):
        """Relinearize then rescale (a backend that folds the rescale into the key switch overrides this)."""
        return self._rescale(self._relin(x))

    @abstractmethod
    def _mod_switch(self, x): ...

    @abstractmethod
    def _noise_budget(self, x) -> int: ...

    @abstractmethod
    def _ser(self, x) -> bytes: ...

    @abstractmethod
    def _deser(self, data: bytes): ...

    @abstractmethod
    def _key_sizes(self) -> dict[str, int]: ...

    @abstractmethod
    def _modulus(self) -> dict:
        """n, q_bits, p_bits and source of the modulus the library built (see BuiltModulus)."""

    def _release(self) -> None:
        """Free what the library keeps beyond this object's lifetime (nothing by default)."""

    def _load(self, payload: bytes, meta: dict):
        """The library's ciphertext from ``payload`` (already authenticated), checked against ``meta``: parsed, then
        :meth:`_checked`."""
        return self._checked(self._deser(payload), meta, payload)

    def _checked(self, raw, meta: dict, payload: bytes):
        """The ciphertext to use for ``raw``, parsed from ``payload``; CorruptedData when it contradicts its
        metadata (by default ``raw``, unchecked)."""
        return raw

    def _rotate_hoisted(self, x, steps: list[int]) -> list:
        """Several rotations of one ciphertext; a plain loop unless the backend hoists."""
        return [self._rotate(x, s) for s in steps]
