"""hepkg.he: one backend protocol over several HE libraries (sim, pyfhel, openfhe, tenseal).

>>> import hepkg.he as he
>>> ctx = he.context("sim", "bfv-8192-default", rotations=[1, 2])
>>> ctx.decrypt(ctx.rotate(ctx.encrypt([1, 2, 3]), 1), 3)
array([2, 3, 0])
"""
from .context import Ciphertext, Context, Plaintext, built_params, forbid_contexts, require_public
from .counting import KINDS, OpCounts
from .envelope import fingerprint
from .errors import (BackendUnavailable, ContextClosed, ContextMismatch, CorruptedData, DepthExhausted, EncodingError, HEError,
                     InsecureParameters, MissingKeyError, MissingRotationKey, NoiseBudgetExhausted,
                     ParameterError, ScaleOverflow, SchemeError, SecretContextRefused, SecretKeyRequired,
                     UnauthenticatedContext)
from .keys import naf, pow2_terms
from .params import PARAMS, BuiltModulus, ParamSet, get_params, params_table, security_bits
from .registry import BACKENDS, availability, available_backends, backend_class, built_table, context, load_context

__all__ = [
    "context", "load_context", "fingerprint", "built_table", "availability", "available_backends", "backend_class",
    "BACKENDS",
    "Context", "Ciphertext", "require_public", "built_params", "forbid_contexts", "Plaintext", "OpCounts", "KINDS",
    "PARAMS", "ParamSet", "BuiltModulus", "get_params", "params_table", "security_bits", "naf", "pow2_terms",
    "HEError", "BackendUnavailable", "ParameterError", "InsecureParameters", "EncodingError", "SchemeError",
    "MissingKeyError", "MissingRotationKey", "SecretKeyRequired", "DepthExhausted", "NoiseBudgetExhausted",
    "ContextMismatch", "CorruptedData", "SecretContextRefused", "ScaleOverflow", "ContextClosed",
    "UnauthenticatedContext",
]
