"""Backend registry: which backends exist, which are installed, and how to build a context."""
from __future__ import annotations

import functools
import hmac
import importlib
import importlib.util

from . import envelope
from .envelope import is_hex, is_int
from .errors import (BackendUnavailable, ContextMismatch, CorruptedData, HEError, ParameterError,
                     UnauthenticatedContext)
from .guard import probe
from .keys import POLICIES
from .params import PARAMS, ParamSet

#: backend -> (module, class, the library it needs or None, install hint)
BACKENDS = {
    "sim": ("hepkg.he.backends.sim", "SimContext", None, ""),
    "pyfhel": ("hepkg.he.backends.pyfhel", "PyfhelContext", "Pyfhel",
               "make setup (builds Pyfhel 3.5.0 offline), or: pip install Pyfhel==3.5.0"),
    "openfhe": ("hepkg.he.backends.openfhe", "OpenFHEContext", "openfhe",
                "pip install openfhe==1.6.1.0.22.4 (CPython 3.10 wheel)"),
    "tenseal": ("hepkg.he.backends.tenseal", "TenSEALContext", "tenseal",
                "pip install tenseal==0.3.16 (Python <= 3.10)"),
    "rns": ("hepkg.he.backends.rns", "RnsContext", None, ""),
}
#: backends that encrypt nothing (slots in the clear: op counts, no privacy)
CLEARTEXT = ("sim",)


def _installed(library: str | None) -> bool:
    return library is None or importlib.util.find_spec(library) is not None


def availability() -> dict[str, bool]:
    """Which backends can be used here (their HE library is importable)."""
    return {name: _installed(spec[2]) for name, spec in BACKENDS.items()}


def available_backends() -> list[str]:
    return [name for name, ok in availability().items() if ok]


def recorded_insecure(backend: str, insecure: bool) -> bool:
    """What a result records as ``insecure``: True below 128 bits (``insecure=True``) and on a backend
    that encrypts nothing (``sim``), whatever its parameters."""
    return bool(insecure) or backend in CLEARTEXT


def backend_class(name: str):
    """The Context subclass of a backend; BackendUnavailable (with the hint) if absent."""
    if name not in BACKENDS:
        raise ParameterError(f"unknown backend {name!r}; known: {', '.join(BACKENDS)}")
    module, cls, library, hint = BACKENDS[name]
    if not _installed(library):
        raise BackendUnavailable(f"backend '{name}' needs the {library} library, which is not installed: {hint}")
    return getattr(importlib.import_module(module), cls)


def context(backend: str = "sim", params: "str | ParamSet" = "bfv-8192-default", *, rotations=(),
            policy: str = "pow2", swap: bool = False, insecure: bool = False):
    """Generate keys and return a secret context.

    ``rotations``: the left-rotation steps to support (or 'all' power-of-two keys);
    ``policy``: 'pow2' (power-of-two Galois keys, rotations composed) or 'exact' (a key
    per step); ``swap``: also generate the BFV column-swap key; ``insecure``: allow a
    parameter set below 128-bit security (tests and demos only).
    """
    return backend_class(backend)(params, rotations=rotations, policy=policy, swap=swap, insecure=insecure)


def _is_bits(v) -> bool:
    return isinstance(v, list) and all(type(b) is int and b > 0 for b in v)


_CONTEXT_META = {
    "backend": lambda v: v in BACKENDS, "params": lambda v: isinstance(v, dict),
    "policy": lambda v: v in POLICIES, "steps": lambda v: isinstance(v, list) and all(type(s) is int for s in v),
    "swap": lambda v: isinstance(v, bool), "insecure": lambda v: isinstance(v, bool), "key_id": is_hex(16),
    "parent": lambda v: v is None or is_hex(16)(v),
    "relin": lambda v: isinstance(v, bool), "descent": is_int(1),
    "session_key": is_hex(envelope.KEY_BYTES),
    "built": lambda v: isinstance(v, dict) and set(v) == {"q_bits", "p_bits"} and all(map(_is_bits, v.values())),
}


def _params(fields: dict) -> ParamSet:
    """The ParamSet a context's metadata describes; CorruptedData naming what is wrong."""
    names = ParamSet.__dataclass_fields__
    missing = [k for k in ("name", "scheme", "n", "qi_bits", "depth") if k not in fields]
    if missing:
        raise CorruptedData(f"context metadata: the parameter set lacks {missing}")
    try:
        return ParamSet(**{k: tuple(v) if k in ("qi_bits", "tags") else v for k, v in fields.items() if k in names})
    except (ParameterError, TypeError) as exc:
        raise CorruptedData(f"context metadata: invalid parameter set ({exc})") from None


def load_context(data: bytes, *, fingerprint: str | None = None, backend: str | None = None, guard: bool = True):
    """Rebuild a public (evaluation-only) context from :meth:`Context.to_bytes`.

    ``fingerprint``: what its maker published (:func:`~hepkg.he.envelope.fingerprint` of the bytes it sent, over an
    authenticated channel): bytes that differ by one bit are refused (:class:`CorruptedData`) before their
    payload is parsed, so nothing is ever encrypted under a context altered on the way; without it
    :class:`UnauthenticatedContext`. ``backend``: the backend the caller expects (:class:`ContextMismatch`
    otherwise); a ``sim`` context, which encrypts nothing, loads only where the caller names it
    (``backend="sim"``), whoever made it. The metadata is then checked field by field and against what the
    payload builds (ring degree, moduli). On a backend whose parser can crash the interpreter on malformed
    bytes (``fragile_parser``: OpenFHE), the payload is first parsed in a forked child
    (:func:`hepkg.he.guard.probe`); ``guard=False`` skips that for bytes this process made.
    """
    if backend is not None and backend not in BACKENDS:
        raise ParameterError(f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
    meta, payload = envelope.unpack(data, "context")
    _authenticate(data, fingerprint)
    envelope.require(meta, _CONTEXT_META, "context")
    if meta["backend"] in CLEARTEXT and backend != meta["backend"]:
        raise ContextMismatch(f"this is a {meta['backend']} context, which encrypts nothing (slots in the clear): "
                              f"load it with backend={meta['backend']!r} where that is intended")
    if backend is not None and meta["backend"] != backend:
        raise ContextMismatch(f"expected a {backend} context, got a {meta['backend']} one")
    cls = backend_class(meta["backend"])
    build = functools.partial(cls, _params(meta["params"]), insecure=meta["insecure"], _meta=meta, _payload=payload)
    if guard and cls.fragile_parser:
        probe(build, what=f"{meta['backend']} context", size=len(payload))
    return build()


def _authenticate(data, pinned) -> None:
    """Nothing if ``data`` (whose checksum holds) carries the fingerprint ``pinned``; else why not."""
    if pinned is None:
        raise UnauthenticatedContext(
            "a context's bytes are loaded only with the fingerprint its maker published (the maker: "
            "hk.he.fingerprint(ctx.to_bytes()), sent over an authenticated channel; the receiver: "
            "load_context(data, fingerprint=...)): its checksum alone is no key, anyone on the path can alter it")
    if not (isinstance(pinned, str) and len(pinned) == 2 * envelope.TAG_BYTES):
        raise TypeError(f"fingerprint must be the {2 * envelope.TAG_BYTES} hex digits of hk.he.fingerprint(), "
                        f"got {pinned!r}")
    if not hmac.compare_digest(envelope.fingerprint(data), pinned.lower()):
        raise CorruptedData(f"the context is not the one its maker published: fingerprint "
                            f"{envelope.fingerprint(data)[:16]}..., pinned {pinned[:16]}... (altered or replaced "
                            f"on the way)")


def built_table(names=None, backends=None, max_n: int | None = None):
    """Each named parameter set built on each installed backend of its scheme: the declared
    log PQ and security beside what the library built (bits of Q and P, security), or why it
    refused. Sets the paper itself runs below 128 bits are built with insecure=True. Rows of a
    backend that encrypts nothing (sim) have security 0 and status 'cleartext (encrypts nothing)'."""
    import pandas as pd

    rows = []
    for name in names or PARAMS:
        p = PARAMS[name]
        if max_n and p.n > max_n:
            continue
        for backend in backends or available_backends():
            if p.scheme not in backend_class(backend).schemes:
                continue
            row = dict(params=name, backend=backend, n=p.n, declared_log_pq=p.log_pq, declared_security=p.security)
            try:
                with context(backend, p, insecure=not p.secure) as ctx:
                    built, security = ctx.built.as_dict(), ctx.security
                row.update(built_log_q=built["log_q"], built_log_p=built["log_p"], built_log_pq=built["log_pq"],
                           built_security=security, source=built["source"],
                           status="cleartext (encrypts nothing)" if backend in CLEARTEXT else "built")
            except HEError as exc:
                row.update(status=f"refused: {exc}")
            rows.append(row)
    return pd.DataFrame(rows)
