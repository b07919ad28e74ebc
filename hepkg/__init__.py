"""hepkg: a reproducible artifact for four homomorphic-encryption papers.

``import hepkg as hk``: the HE layer is ``hk.he`` (backends, parameter sets, op counts);
the sections ``hk.spmv``, ``hk.gemm``, ``hk.facesearch``, ``hk.omr``, shared ``hk.linalg``, ``hk.datasets``, ``hk.bench``,
``hk.reference`` and ``hk.grid`` load on first use, so importing hepkg needs numpy alone.
"""
import importlib

from . import he
from .he import PARAMS, availability, context, get_params, load_context

__version__ = "0.1.0"
SUBMODULES = ("spmv", "gemm", "facesearch", "omr", "linalg", "datasets", "bench", "reference", "grid", "reproduce")
__all__ = ["he", "context", "load_context", "availability", "get_params", "PARAMS", "__version__", *SUBMODULES]


def __getattr__(name):
    if name in SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'hepkg' has no attribute {name!r}")
