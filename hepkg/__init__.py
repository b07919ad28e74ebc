"""hepkg: a reproducible artifact for four homomorphic-encryption papers.

``import hepkg as hk``; the HE layer is ``hk.he`` (backends, parameter sets, op counts).
"""
from . import he
from .he import availability, context, get_params, load_context, PARAMS

__version__ = "0.1.0"
__all__ = ["he", "context", "load_context", "availability", "get_params", "PARAMS", "__version__"]
