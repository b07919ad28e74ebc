"""hepkg.facesearch: encrypted 1:many face matching (CKKS), the face-search paper's CPU algorithms.

HyDia's packing and protocol (:mod:`.packing`, :mod:`.protocol`), the similarity (the authors' HyDia
and BSGS-Diagonal as they ran them, hepkg's leaner variant of each, the textbook BSGS:
:mod:`.similarity`), the threshold comparison by Paterson-Stockmeyer Chebyshev series and f4
(:mod:`.chebyshev`), the paper's membership rule and one that is right (:mod:`.decision`), experiments
and tables (:mod:`.experiments`, :mod:`.report`); the device-resident pipelines of Sec. 5 on the rns engine
(:mod:`.gpu`, :mod:`.gpu_report`).

>>> import numpy as np, hepkg as hk
>>> from hepkg.facesearch import Client, Enroller, Server, key_steps
>>> ctx = hk.context("sim", "toy-ckks-4096-d11", rotations=key_steps("bsgs-diagonal", 128, 2048),
...                  policy="exact", insecure=True)
"""
from .chebyshev import DEGREE_FOR_KAPPA, DELTA, compare, compare_numpy, evaluate_chebyshev
from .gpu import DeviceServer, key_plan, stream_pool_size
from .decision import SlotRule, member_from_indicators, paper_member, sound_margin
from .packing import Layout, bsgs_shape, group_diagonals, normalize, replicate_query
from .protocol import Client, EncryptedDatabase, Enroller, Server, key_steps
from .similarity import AUTHORS, METHODS, VARIANT_OF, expected_counts, group_scores, query_table, rotation_steps

__all__ = ["DEGREE_FOR_KAPPA", "DELTA", "compare", "compare_numpy", "evaluate_chebyshev", "SlotRule",
           "member_from_indicators", "paper_member", "sound_margin", "Layout", "bsgs_shape",
           "group_diagonals", "normalize", "replicate_query", "Client", "EncryptedDatabase", "Enroller", "Server",
           "key_steps", "DeviceServer", "key_plan", "stream_pool_size", "AUTHORS", "METHODS",
           "VARIANT_OF", "expected_counts", "group_scores", "query_table", "rotation_steps"]
