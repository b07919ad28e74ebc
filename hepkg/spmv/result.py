"""The outcome of one encrypted SpMV run, shared by CSSC and the baselines."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["SpmvResult", "provenance", "zero_result"]


def provenance(ctx) -> dict:
    """What a run ran on: ``backend``, ``params`` (the parameter set's name) and ``insecure``."""
    return dict(backend=ctx.backend, params=ctx.params.name, insecure=ctx.insecure)


def zero_result(method: str, rows: int, params, backend: str, insecure: bool) -> "SpmvResult":
    """The product of an all-zero matrix: a zero vector, found by the matrix owner without any HE work."""
    dtype = np.float64 if params.scheme == "ckks" else np.int64
    return SpmvResult(method, np.zeros(rows, dtype=dtype), info=dict(n_ct=0, note="all-zero matrix: no HE work"),
                      backend=backend, params=params.name, insecure=insecure)


@dataclass
class SpmvResult:
    """``y``: the decrypted product; ``traffic``: bytes per direction (e.g. ``a_to_cloud``);
    ``ops``: operation counts per party (``OpCounts.as_dict()``); ``timings``: seconds per
    phase; ``info``: method-specific facts (ciphertext counts, layout, ...).

    Every method times the same phases: ``keygen`` (key generation, serializing the public
    contexts, and each party loading what it receives: left out when the methods' work is
    compared), ``client_a``, ``client_b``, ``cloud`` and ``decrypt``; ``total`` is their sum. ``traffic`` counts key material per recipient (``keys_to_cloud``, ``keys_to_b``)
    beside the ciphertext messages.

    ``backend``, ``params``, ``insecure``: what ran (:func:`provenance`). ``backend == 'sim'``
    means nothing was encrypted: the run gives op counts, not privacy."""

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
