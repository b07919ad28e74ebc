"""gemm: encrypted general matrix products of any shape (HEGMM paper, BFV).

>>> import numpy as np, hepkg.gemm as gm
>>> ctx = gm.gemm_context("hegmm-en", 2, 5, 7)          # Pyfhel, the cheaper rotation keys
>>> A, B = np.arange(10).reshape(2, 5), np.ones((5, 7), dtype=int)
>>> res = gm.matmul(ctx, A, B, "hegmm-en")
>>> bool((res.C == A @ B).all()), res.ops["mul_ct"]
(True, 2)

Methods (``METHODS``): 'hegmm-en', 'hegmm' (the paper's Algorithms 2 and 1), 'hegmm-ext'
(Algorithm 1 on Algorithm 2's extended layouts, which the paper's HEGMM timings match),
'hegmm-en-bsgs' (HEGMM-En with sigma and tau baby-step giant-step, as E2DM's are), 'e2dm-s',
'e2dm-r' (Jiang et al. 2018), 'huang' (Huang and Zong 2022 as the paper describes it),
'uscore' (E2DM-S on square blocks). Modules: ``transforms`` (Eqs. 1-5, Theorems 3.1-3.4),
``layout``/``plan`` (slot layouts, linear maps, plan execution), ``hegmm``, ``e2dm``,
``huang``, ``blocking`` (Sec. 4.4, uSCORE), ``counts`` (Tables 2-4 vs. exact counts),
``protocol`` (client/cloud roles, :func:`matmul`), ``experiments`` (notebook helpers),
``report`` (the notebook's tables and claims, from its raw tables), ``bench`` (products side by
side: interleaved repetitions, ``python -m hepkg.gemm.bench``).

``baseline='authors'`` (``BASELINES``) runs the methods of ``AUTHORS_METHODS`` as the authors'
code (EchizenG/HEGMM) evaluates them (one masked rotation per diagonal, no BSGS, E2DM-R only where
their script runs it, products relinearized once); 'hepkg' (the default) is hepkg's own evaluation.

``gemm_context`` and :class:`Client` default to the fast, safe settings: Pyfhel at the 128-bit
``bfv-8192-default``, one Galois key per rotation step where that is fewer keys or fewer key switches
than the power-of-two set (``key_policy``), and the data primes the noise budget leaves
room for dropped after encryption (``drop_primes='auto'``; decryption refuses an exhausted budget).
``backend="sim"`` offers no privacy: its "ciphertexts" are cleartext slots, there for op counts and
fast tests, and the client warns (:class:`hepkg.he.errors.NoPrivacyWarning`). Each :class:`GemmResult`
records ``backend``, ``params``, ``insecure`` and ``drop_primes``, and the :class:`Cloud` refuses a
context that can decrypt.
"""
from .blocking import P1, P2, PAPER_COSTS_MS, PARTITIONS, Blocking, BlockedPlan, plan_blocking, uscore_block
from .counts import METHODS, expected_counts, fits, formula_counts
from .e2dm import e2dm_r_plan, e2dm_r_shape, e2dm_s_plan
from .errors import (GemmError, NotApplicable, PlaintextRangeError, ProductOverflow, ProductOverflowWarning,
                     ShapeMismatch, ShapeTooLarge)
from .experiments import GROUPS, run_config, shape_group
from .hegmm import hegmm_en_plan, hegmm_plan
from .huang import huang_plan
from .layout import Layout, SlotMap
from .operands import random_operands, random_shapes
from .plan import Plan
from .plan import BASELINES
from .protocol import (AUTHORS_METHODS, Client, Cloud, GemmResult, centered, check_operands, check_overflow,
                       gemm_context, key_policy, make_plan, matmul, parties, rotation_steps)
from .transforms import (diagonal_counts, elementwise_matmul, epsilon, exact_count, omega, sigma, tau,
                         theorem_count, transform_diagonals, transform_matrix)

__all__ = [
    # entry points
    "matmul", "make_plan", "rotation_steps", "gemm_context", "key_policy", "parties", "Client", "Cloud", "GemmResult",
    "METHODS", "BASELINES", "AUTHORS_METHODS", "check_operands", "check_overflow", "centered",
    # transforms and theorems
    "sigma", "tau", "epsilon", "omega", "elementwise_matmul", "transform_matrix", "transform_diagonals",
    "diagonal_counts", "theorem_count", "exact_count",
    # plans
    "Plan", "Layout", "SlotMap", "hegmm_plan", "hegmm_en_plan", "e2dm_s_plan", "e2dm_r_plan", "e2dm_r_shape",
    "huang_plan",
    # blocking
    "Blocking", "BlockedPlan", "P1", "P2", "PARTITIONS", "plan_blocking", "uscore_block", "PAPER_COSTS_MS",
    # counts
    "formula_counts", "expected_counts", "fits",
    # experiments
    "random_shapes", "random_operands", "shape_group", "run_config", "GROUPS",
    # errors
    "GemmError", "ShapeMismatch", "PlaintextRangeError", "ProductOverflow", "ProductOverflowWarning",
    "ShapeTooLarge", "NotApplicable",
]
