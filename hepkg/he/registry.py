"""Backend registry: which backends exist, which are installed, and how to build a context."""
from __future__ import annotations

import importlib
import importlib.util

from . import envelope
from .errors import BackendUnavailable, ParameterError
from .params import ParamSet

#: backend -> (module, class, the library it needs or None, install hint)
BACKENDS = {
    "sim": ("hepkg.he.backends.sim", "SimContext", None, ""),
    "pyfhel": ("hepkg.he.backends.pyfhel", "PyfhelContext", "Pyfhel",
               "make setup (builds Pyfhel 3.5.0 offline), or: pip install Pyfhel==3.5.0"),
    "openfhe": ("hepkg.he.backends.openfhe", "OpenFHEContext", "openfhe",
                "pip install openfhe==1.6.1.0.22.4 (CPython 3.10 wheel)"),
    "tenseal": ("hepkg.he.backends.tenseal", "TenSEALContext", "tenseal",
                "pip install tenseal==0.3.16 (Python <= 3.10)"),
}


def _installed(library: str | None) -> bool:
    return library is None or importlib.util.find_spec(library) is not None


def availability() -> dict[str, bool]:
    """Which backends can be used here (their HE library is importable)."""
    return {name: _installed(spec[2]) for name, spec in BACKENDS.items()}


def available_backends() -> list[str]:
    return [name for name, ok in availability().items() if ok]


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


def load_context(data: bytes):
    """Rebuild a public (evaluation-only) context from :meth:`Context.to_bytes`."""
    meta, payload = envelope.unpack(data, "context")
    params = meta["params"]
    fields = {k: v for k, v in params.items() if k in ParamSet.__dataclass_fields__}
    fields["qi_bits"], fields["tags"] = tuple(fields["qi_bits"]), tuple(fields["tags"])
    return backend_class(meta["backend"])(ParamSet(**fields), insecure=meta["insecure"], _meta=meta,
                                          _payload=payload)
