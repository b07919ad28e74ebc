"""The outcome of one encrypted SpMV run, shared by CSSC and the baselines, and the clock that times its phases."""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from hepkg.he.registry import recorded_insecure

from .encoding import slot_dtype

__all__ = ["SpmvResult", "PHASES", "PhaseClock", "provenance", "zero_result", "paper_seconds"]

#: The phases every method times (see :class:`SpmvResult`).
PHASES = ("keygen", "key_transfer", "client_a", "client_b", "cloud", "decrypt")


class PhaseClock:
    """Wall-clock seconds per phase: ``with clock("cloud"):`` charges its block to that phase; a
    block nested in another (Client A encrypting while the cloud works) pauses the outer one."""

    def __init__(self):
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self._running: list[list] = []  # [phase, since]

    @contextmanager
    def __call__(self, phase: str):
        self._running.append([phase, self._charge()])
        try:
            yield
        finally:
            now = self._charge()
            self._running.pop()
            if self._running:  # the outer phase resumes
                self._running[-1][1] = now

    def _charge(self) -> float:
        """Charge the running phase up to now; return now."""
        now = time.perf_counter()
        if self._running:
            self.seconds[self._running[-1][0]] += now - self._running[-1][1]
        return now

    def timings(self) -> dict[str, float]:
        """Seconds per phase and ``total``, their sum."""
        return dict(self.seconds, total=sum(self.seconds.values()))


def paper_seconds(timings: dict) -> float:
    """Every phase but key generation and key transfer, as the paper timed its methods."""
    return timings["total"] - timings["keygen"] - timings.get("key_transfer", 0.0)


def provenance(ctx) -> dict:
    """What a run ran on: ``backend``, ``params`` (the parameter set's name) and ``insecure``
    (:func:`~hepkg.he.registry.recorded_insecure`: also True on ``sim``)."""
    return dict(backend=ctx.backend, params=ctx.params.name, insecure=recorded_insecure(ctx.backend, ctx.insecure))


def zero_result(method: str, rows: int, params, backend: str, insecure: bool) -> "SpmvResult":
    """The product of an all-zero matrix: a zero vector, found by the matrix owner without any HE work."""
    return SpmvResult(method, np.zeros(rows, dtype=slot_dtype(params)), traffic=dict(keys_to_cloud=0, keys_to_b=0),
                      timings=PhaseClock().timings(), info=dict(n_ct=0, note="all-zero matrix: no HE work"),
                      backend=backend, params=params.name, insecure=recorded_insecure(backend, insecure))


@dataclass
class SpmvResult:
    """``y``: the decrypted product; ``traffic``: bytes per direction; ``ops``: operation counts
    per party (``OpCounts.as_dict()``); ``timings``: seconds per phase; ``info``: method-specific
    facts (ciphertext counts, layout, ...).

    Every method times the same phases (:data:`PHASES`) with the same work in each:

    - ``keygen``: the key holder's key generation.
    - ``key_transfer``: serializing the public context for each recipient and each recipient
      loading it. Both left out when methods are compared as the paper timed them
      (:func:`paper_seconds`); an end-to-end time beside a single-process program counts it.
    - ``client_a``: the matrix owner's preparation (format conversion or diagonal extraction,
      encoding, the overflow check) and encrypting and serializing its ciphertexts. The
      Rhombus-style method has no Client A (its server holds the matrix): 0.
    - ``client_b``: the vector owner's preparation (encoding, the bound check, reorganization)
      and encrypting and serializing its ciphertexts.
    - ``cloud``: deserializing, evaluating, serializing the results (and, for the
      Rhombus-style server, encoding its plaintext matrix).
    - ``decrypt``: the key holder deserializing, decrypting and decoding the result.

    ``total`` is their sum. ``traffic`` has the bytes of each message (``a_to_cloud``,
    ``b_to_cloud``, ``a_to_b``, ``cloud_to_a`` / ``cloud_to_b``) and of the key material each
    party receives: ``keys_to_cloud`` (public and evaluation keys) and ``keys_to_b`` (the public
    key alone; 0 where Client B holds the keys).

    ``backend``, ``params``, ``insecure``: what ran (:func:`provenance`). ``backend == 'sim'``
    means nothing was encrypted: the run gives op counts, not privacy (``insecure`` is True)."""

    method: str
    y: np.ndarray
    traffic: dict[str, int] = field(default_factory=dict)
    ops: dict[str, dict] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    backend: str = field(kw_only=True)
    params: str = field(kw_only=True)
    insecure: bool = field(kw_only=True)

    @property
    def cloud_ops(self) -> dict:
        return self.ops.get("cloud", {})

    def total_ops(self) -> dict:
        """Counts summed over all parties (depth: the largest)."""
        out: dict[str, int] = {}
        for counts in self.ops.values():
            for k, v in counts.items():
                out[k] = max(out.get(k, 0), v) if k == "depth" else out.get(k, 0) + v
        return out
