"""The papers' published numbers, as data, and claim checks against our results."""
from .claims import FAILS, HOLDS, NOT_MEASURED, Claim, evaluate, load_claims, save_claims, tally
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

__all__ = ["Claim", "evaluate", "save_claims", "load_claims", "tally", "HOLDS", "FAILS", "NOT_MEASURED",
           "CSSC_TABLE1_OPS_MS", "CSSC_TABLE4_NOISE_BITS",
           "CSSC_TABLE3_FORMULA", "CSSC_CIPHERTEXT_MB", "CSSC_TABLE5_TIME_S", "CSSC_TABLE6_MEMORY_MB", "CSSC_TABLE6_APPROXIMATE",
           "CSSC_TABLE7_COMMUNICATION", "CSSC_TABLE8_RHOMBUS", "CSSC_TABLEA9_ALL", "CSSC_PAPER_NAMES", "CSSC_FIG10_SLOPE"]
