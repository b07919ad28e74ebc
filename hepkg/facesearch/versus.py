"""BSGS-Diagonal beside HyDia's method (the paper's baseline), for ``python -m hepkg.bench.versus facesearch``.

No checkout is needed: both methods are hepkg's, on OpenFHE at the paper's ring (``ckks-32768-d11``,
128-bit). Each side is measured by :func:`hepkg.facesearch.experiments.measure` in its own spawned
child (keys, enrollment, one warm-up query and ``reps`` membership queries; the child's peak RSS is
the side's memory), the children alternating HyDia, BSGS-Diagonal, HyDia, ... for :data:`ROUNDS`
rounds. ``e2e_s`` is one membership query (Algorithm 7: rotations, similarity with the diagonals
read from disk, comparison, aggregation), ``he_s`` its seconds inside OpenFHE, ``rss_gb`` the peak
resident memory of the side's child from the end of enrollment on (the server: its keys, the
queries; ``child_rss_gb`` includes the enrollment, which the protocol's enroller does apart); ``correct``: the decrypted membership count is within 0.5 of
numpy's (the count of matches stays exact when rounded; identification is not run here, the
section's notebook checks it).
"""
from __future__ import annotations

import os
import re

__all__ = ["REFERENCE", "versus_cases", "versus_run"]

REPO = ENV = None
FILES = ()
REFERENCE = "hydia"
QUANTITIES = ("e2e_s", "rss_gb")
PARAMS = "ckks-32768-d11"
#: Children per side (alternating), and membership queries per child after its warm-up query.
ROUNDS, REPS = 2, 2


def versus_cases(scale: str) -> list[str]:
    """``'l<l> K<K> kappa<kappa>'``: the largest K both methods run here at l = 512 (HyDia's 511 keys take
    16 GB); quick: l = 128."""
    return ["l128 K1024 kappa8"] if scale == "quick" else ["l512 K1024 kappa10"]


def versus_run(case: str, checkout=None, *, reps: int, seed: int = 0):
    """One row per kept membership query of HyDia and BSGS-Diagonal on ``case`` (see the module docstring);
    ``checkout`` is unused (both sides are hepkg's). OpenMP threads: ``$OMP_NUM_THREADS``, else 2."""
    import pandas as pd

    from .experiments import measure

    l, K, kappa = (int(x) for x in re.fullmatch(r"l(\d+) K(\d+) kappa(\d+)", case).groups())
    threads = int(os.environ.get("OMP_NUM_THREADS", 2))
    rows = []
    for rnd in range(ROUNDS):
        for method in (REFERENCE, "bsgs-diagonal"):
            cfg = dict(backend="openfhe", params=PARAMS, method=method, K=K, Km=16, l=l, kappa=kappa, seed=seed,
                       reps=reps, warmup=1, workers=1, omp_threads=threads, identify=False)
            for r in measure(cfg):
                ok = r["status"] == "measured"
                rows.append(dict(side=method, round=rnd, rep=rnd * reps + r.get("rep", 0), status=r["status"],
                                 e2e_s=r.get("membership_s"), he_s=r.get("membership_he_s"),
                                 rss_gb=r.get("server_rss_peak_bytes", float("nan")) / 1e9,
                                 child_rss_gb=r.get("rss_peak_bytes", float("nan")) / 1e9, omp_threads=threads,
                                 correct=ok and r["count_error"] < 0.5, count_error=r.get("count_error"),
                                 rotate=r.get("op_rotate"), keyswitch=r.get("op_keyswitch"),
                                 mul_ct=r.get("op_mul_ct"), hoisted_precompute=r.get("op_hoisted_precompute"),
                                 rotation_keys=r.get("rotation_keys"), keygen_s=r.get("keygen_s")))
    out = pd.DataFrame(rows)
    out["overhead"] = out.e2e_s / out.he_s
    return out.assign(case=case, params=PARAMS)
