"""Exceptions raised by hepkg's HE layer. Each names the problem it reports."""


class HEError(Exception):
    """Base class of every hepkg HE error."""


class BackendUnavailable(HEError, ImportError):
    """The backend's HE library is not installed (the message carries the install hint)."""


class ParameterError(HEError, ValueError):
    """A parameter set is unknown, inconsistent, or unsupported by a backend."""


class InsecureParameters(ParameterError):
    """A parameter set below 128-bit security was requested without insecure=True."""


class EncodingError(HEError, ValueError):
    """Values cannot be encoded: wrong shape or length, dtype, range, NaN/inf."""


class SchemeError(HEError, TypeError):
    """The operation does not exist for this scheme (e.g. column swap on CKKS)."""


class MissingKeyError(HEError, LookupError):
    """An evaluation key (relinearization, rotation, column swap) was not generated."""


class MissingRotationKey(MissingKeyError):
    """A rotation needs a Galois key that the context does not hold."""


class SecretKeyRequired(HEError, PermissionError):
    """Decryption was attempted on a public (evaluation-only) context."""


class SecretContextRefused(HEError, PermissionError):
    """A server-side party was given a context that holds the secret key (give it ``ctx.public()``)."""


class DepthExhausted(HEError, ArithmeticError):
    """A multiplication would exceed the multiplicative depth of the parameter set."""


class NoiseBudgetExhausted(HEError, ArithmeticError):
    """A BFV ciphertext's noise budget reached zero: decryption would be wrong."""


class ContextMismatch(HEError, ValueError):
    """Objects from different contexts (keys, backends or parameter sets) were mixed."""


class CorruptedData(HEError, ValueError):
    """Serialized bytes are truncated, altered, or not hepkg data."""


class UnauthenticatedContext(HEError, PermissionError):
    """A context's bytes were loaded without the fingerprint its maker published (:func:`hepkg.he.fingerprint`)."""


class ScaleOverflow(HEError, ArithmeticError):
    """A CKKS result outgrew what the modulus holds at its scale: the decrypted values wrapped."""


class ContextClosed(HEError, RuntimeError):
    """The context was closed (its keys released); build a new one."""


class NoPrivacyWarning(UserWarning):
    """An entry point runs on the ``sim`` backend, which encrypts nothing (cleartext slots)."""


def warn_if_sim(backend: str, stacklevel: int = 3) -> None:
    """Warn (:class:`NoPrivacyWarning`) where ``backend`` is 'sim'; an entry point calls it with its backend."""
    if backend == "sim":
        import warnings

        warnings.warn("backend='sim' encrypts nothing (cleartext slots, for op counts and tests); use "
                      "backend='pyfhel' or 'openfhe' to encrypt", NoPrivacyWarning, stacklevel=stacklevel)
