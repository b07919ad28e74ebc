"""Operation accounting: every backend counts what it does, per kind of operation, and how
long it spends inside the HE library.

Time inside the library is measured around every raw backend hook (``_mul``, ``_rotate``,
``_ser``, ``_keygen``, ...; see :data:`HOOKS`) with a monotonic clock: a hook called from
inside another hook is covered by the outer one, so nothing is counted twice. It is kept
per context (``ctx.counts.seconds``, scoped by ``ctx.counting()`` like the counts) and for
the whole process (:func:`library_seconds`), so a run that builds several contexts (the
parties of a protocol) is timed as a whole: ``he_s`` of a run is the difference of two
readings, and ``wall_s / he_s`` its overhead.
"""
from __future__ import annotations

import functools
import threading
import time
from collections import Counter
from contextlib import contextmanager

#: The operation kinds every backend counts.
KINDS = ("encode", "encrypt", "decrypt", "add", "add_pt", "sub", "negate", "mul_ct", "mul_pt",
         "relinearize", "rotate", "keyswitch", "hoisted_precompute", "swap", "rescale", "mod_switch")


#: raw backend hooks whose time counts as time inside the HE library (by hook name, no underscore)
HOOKS = ("keygen", "load_public", "public_payload", "encode", "encrypt", "decrypt", "add", "add_into", "sub",
         "add_plain", "sub_plain", "negate", "mul", "relin", "relin_rescale", "mul_plain", "rotate", "rotate_hoisted",
         "swap", "rescale", "mod_switch", "noise_budget", "ser", "deser", "key_sizes", "keygen_lowered", "adopted")
#: hooks that set keys up rather than compute (reports may leave them out of he_s)
SETUP_HOOKS = ("keygen", "load_public", "public_payload", "key_sizes", "keygen_lowered")

_PROCESS = Counter()  # seconds per hook, every context of this process
_INSIDE = threading.local()
_LOCK = threading.Lock()  # counts and clocks are updated from several threads at once


def library_seconds() -> Counter:
    """Seconds spent inside raw backend hooks so far, per hook, all contexts of this process."""
    return Counter(_PROCESS)


def timed_hook(name: str, fn):
    """``fn`` (a backend hook) timed into its context's counter and the process clock."""
    @functools.wraps(fn)
    def hook(self, *args, **kwargs):
        if getattr(_INSIDE, "active", False):  # inside another hook: its clock is running
            return fn(self, *args, **kwargs)
        _INSIDE.active = True
        start = time.perf_counter()
        try:
            return fn(self, *args, **kwargs)
        finally:
            elapsed = time.perf_counter() - start
            _INSIDE.active = False
            with _LOCK:
                _PROCESS[name] += elapsed
            self.counter.add_time(name, elapsed)
    return hook


class OpCounts(Counter):
    """Counts per operation kind plus the largest multiplicative depth reached, and ``seconds``
    inside the library per hook (``he_s``: their sum)."""

    depth: int = 0

    @property
    def seconds(self) -> Counter:
        if "_seconds" not in self.__dict__:
            self.__dict__["_seconds"] = Counter()
        return self.__dict__["_seconds"]

    @property
    def he_s(self) -> float:
        """Seconds inside the HE library (every hook, key setup included)."""
        return float(sum(self.seconds.values()))

    def as_dict(self) -> dict:
        d = {k: int(self.get(k, 0)) for k in KINDS}
        d["depth"] = int(self.depth)
        return d

    def __repr__(self) -> str:
        shown = {k: v for k, v in self.as_dict().items() if v}
        return f"OpCounts({shown})"


class OpCounter:
    """Running counts of one context, with scoped regions.

    ``with ctx.counter.region() as ops:`` yields an :class:`OpCounts` that, when the
    block ends, holds only what happened inside it (regions nest).
    """

    def __init__(self):
        self.total = OpCounts()
        self._open: list[OpCounts] = []

    def add(self, kind: str, n: int = 1) -> None:
        with _LOCK:
            self.total[kind] += n
            for region in self._open:
                region[kind] += n

    def add_time(self, hook: str, seconds: float) -> None:
        """Seconds inside the library; with several threads they add up (thread-seconds, not wall)."""
        with _LOCK:
            self.total.seconds[hook] += seconds
            for region in self._open:
                region.seconds[hook] += seconds

    def reached_depth(self, depth: int) -> None:
        with _LOCK:
            self.total.depth = max(self.total.depth, depth)
            for region in self._open:
                region.depth = max(region.depth, depth)

    @contextmanager
    def region(self):
        ops = OpCounts()
        self._open.append(ops)
        try:
            yield ops
        finally:      # by identity: two regions with equal counts compare equal
            del self._open[next(i for i, r in enumerate(self._open) if r is ops)]

    def reset(self) -> None:
        self.total = OpCounts()
