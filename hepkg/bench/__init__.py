"""Benchmark helpers: timers, peak memory, system info, the op-cost model, result tables and figures.

Per-op latencies on every backend: ``python -m hepkg.bench.ops``. pandas and matplotlib are
imported only by the functions that need them.
"""
from .costmodel import PRICED_AS, breakdown, estimate, floor_ratio, machine_fingerprint, observed_costs, op_costs
from .memory import PeakMemory
from .raw import RawMissing, RawTables
from .repeat import INCONCLUSIVE, compare, interleaved, ratio_range, spread, timed
from .report import paper_vs_ours, save_figure, save_table, to_markdown, write_run_json
from .sysinfo import system_info
from .timing import Timer

__all__ = [
    "Timer", "PeakMemory", "RawTables", "RawMissing", "system_info", "timed", "interleaved", "spread", "compare", "INCONCLUSIVE",
    "ratio_range",
    "op_costs", "observed_costs", "estimate", "floor_ratio", "breakdown", "machine_fingerprint", "PRICED_AS",
    "save_table", "save_figure", "write_run_json", "paper_vs_ours", "to_markdown",
]
