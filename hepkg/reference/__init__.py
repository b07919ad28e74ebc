"""The papers' published numbers, as data; claim checks judged by one rule (:mod:`.verdict`); ``paper_vs_ours``
joins the papers' numbers with our results."""
from . import verdict
from .claims import (FAILS, HOLDS, INCONCLUSIVE, NOT_MEASURED, NOT_REPRODUCIBLE, Claim, evaluate, load_claims,
                     on_subjects, save_claims, tally)
from .verdict import ABOVE, BELOW, RULE
from .compare import paper_vs_ours
from .cssc import TABLE1_OPS_MS as CSSC_TABLE1_OPS_MS
from .cssc import TABLE4_NOISE_BITS as CSSC_TABLE4_NOISE_BITS
from .cssc import TABLE3_FORMULA as CSSC_TABLE3_FORMULA
from .cssc import CIPHERTEXT_MB as CSSC_CIPHERTEXT_MB
from .cssc import TABLE5_TIME_S as CSSC_TABLE5_TIME_S
from .cssc import TABLE6_MEMORY_MB as CSSC_TABLE6_MEMORY_MB
from .cssc import TABLE6_APPROXIMATE as CSSC_TABLE6_APPROXIMATE
from .cssc import TABLE7_COMMUNICATION as CSSC_TABLE7_COMMUNICATION
from .cssc import TABLE8_RHOMBUS as CSSC_TABLE8_RHOMBUS
from .cssc import TABLEA9_ALL as CSSC_TABLEA9_ALL
from .cssc import PAPER_NAMES as CSSC_PAPER_NAMES
from .cssc import FIG10_SLOPE as CSSC_FIG10_SLOPE
from .hegmm import TABLE1_OPS_MS as HEGMM_TABLE1_OPS_MS
from .hegmm import RANDOM_PAIRS as HEGMM_RANDOM_PAIRS
from .hegmm import RANDOM_DIMS as HEGMM_RANDOM_DIMS
from .hegmm import TABLE5_SPEEDUP as HEGMM_TABLE5_SPEEDUP
from .hegmm import TABLE6_SPEEDUP as HEGMM_TABLE6_SPEEDUP
from .hegmm import FIG67_FASTER_THAN_E2DM as HEGMM_FIG67_FASTER_THAN_E2DM
from .hegmm import TABLE7_TIME_S as HEGMM_TABLE7_TIME_S
from .hegmm import TABLE7_RING as HEGMM_TABLE7_RING
from .hegmm import TABLE8_TIME_S as HEGMM_TABLE8_TIME_S
from .hegmm import FIG8_MEMORY_COUNTS as HEGMM_FIG8_MEMORY_COUNTS
from .hegmm import AUTHORS_CODE_ROTATIONS as HEGMM_AUTHORS_CODE_ROTATIONS
from .hegmm import TABLE10_COLUMNS as HEGMM_TABLE10_COLUMNS
from .hegmm import TABLE10_MS as HEGMM_TABLE10_MS
from .hegmm import SEC42_EXAMPLE as HEGMM_SEC42_EXAMPLE
from . import facesearch as FACESEARCH
from . import omr as OMR

__all__ = ["paper_vs_ours", "Claim", "on_subjects", "verdict", "RULE", "ABOVE", "BELOW", "evaluate", "save_claims", "load_claims", "tally", "HOLDS", "FAILS", "NOT_MEASURED", "INCONCLUSIVE", "NOT_REPRODUCIBLE",
           "CSSC_TABLE1_OPS_MS", "CSSC_TABLE4_NOISE_BITS",
           "CSSC_TABLE3_FORMULA", "CSSC_CIPHERTEXT_MB", "CSSC_TABLE5_TIME_S", "CSSC_TABLE6_MEMORY_MB", "CSSC_TABLE6_APPROXIMATE",
           "CSSC_TABLE7_COMMUNICATION", "CSSC_TABLE8_RHOMBUS", "CSSC_TABLEA9_ALL", "CSSC_PAPER_NAMES", "CSSC_FIG10_SLOPE",
           "HEGMM_TABLE1_OPS_MS", "HEGMM_RANDOM_PAIRS", "HEGMM_RANDOM_DIMS", "HEGMM_TABLE5_SPEEDUP",
           "HEGMM_TABLE6_SPEEDUP", "HEGMM_FIG67_FASTER_THAN_E2DM", "HEGMM_TABLE7_TIME_S", "HEGMM_TABLE7_RING",
           "HEGMM_TABLE8_TIME_S", "HEGMM_FIG8_MEMORY_COUNTS", "HEGMM_AUTHORS_CODE_ROTATIONS", "HEGMM_TABLE10_COLUMNS", "HEGMM_TABLE10_MS",
           "HEGMM_SEC42_EXAMPLE", "FACESEARCH", "OMR"]
