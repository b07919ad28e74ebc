"""The outcome of one encrypted SpMV run, shared by CSSC and the baselines."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["SpmvResult", "provenance"]


def provenance(ctx) -> dict:
    """What a run ran on: ``backend``, ``params`` (the parameter set's name) and ``insecure``."""
    return dict(backend=ctx.backend, params=ctx.params.name, insecure=ctx.insecure)


@dataclass
class SpmvResult:
    """``y``: the decrypted product; ``traffic``: bytes per direction (e.g. ``a_to_cloud``);
    ``ops``: operation counts per party (``OpCounts.as_dict()``); ``timings``: seconds per
    phase; ``info``: method-specific facts (ciphertext counts, layout, ...).

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
