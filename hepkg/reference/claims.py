"""Named claim checks: testable statements from the papers, evaluated on our results.

A claim's ``check`` receives the section's results (a dict of tables or values) and
returns ``(holds, evidence: str)``: True, False, None (or a missing result: the claim was
not measured at this scale), :data:`INCONCLUSIVE`, for a comparison of two measured
quantities whose spreads overlap (:func:`hepkg.bench.compare`), or :data:`NOT_REPRODUCIBLE`, for a
claim resting on hardware or a library feature this artifact lacks (the measurement goes in the evidence).
A claim compares like with like: measured with measured, or modelled with modelled. Notebooks evaluate their claims and save them
with :func:`save_claims`; the reproduction summary counts them.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

from hepkg import paths
from hepkg.atomic import write_text

HOLDS, FAILS, NOT_MEASURED, INCONCLUSIVE = "holds", "fails", "not measured", "inconclusive"
NOT_REPRODUCIBLE = "not reproducible here"
STATUSES = (HOLDS, FAILS, INCONCLUSIVE, NOT_MEASURED, NOT_REPRODUCIBLE)


@dataclass(frozen=True)
class Claim:
    key: str
    statement: str
    source: str  # where the paper says it, e.g. "CSSC Table 4"
    check: Callable[[dict], tuple]

    def evaluate(self, results: dict) -> dict:
        try:
            holds, evidence = self.check(results)
        except (KeyError, LookupError) as missing:
            holds, evidence = None, f"no result for {missing}"
        if isinstance(holds, str) and holds not in (INCONCLUSIVE, NOT_REPRODUCIBLE):
            raise ValueError(f"claim {self.key}: a check returns True, False, None, {INCONCLUSIVE!r} or "
                             f"{NOT_REPRODUCIBLE!r}, got {holds!r}")
        status = NOT_MEASURED if holds is None else holds if isinstance(holds, str) else HOLDS if holds else FAILS
        return dict(claim=self.key, statement=self.statement, source=self.source, status=status, evidence=evidence)


def evaluate(claims, results: dict):
    """A pandas table: one row per claim with its status and evidence."""
    import pandas as pd
    return pd.DataFrame([c.evaluate(results) for c in claims])


def save_claims(table, section: str, base=None) -> None:
    """Write the evaluated claims as ``artifacts/<section>/claims.json`` (read by the summary)."""
    rows = table.to_dict(orient="records")
    write_text(paths.artifacts(section, base) / "claims.json", json.dumps(rows, indent=1))


def load_claims(section: str, base=None) -> list[dict]:
    path = paths.artifacts(section, base) / "claims.json"
    return json.loads(path.read_text()) if path.exists() else []


def tally(rows: list[dict]) -> dict[str, int]:
    return {s: sum(r["status"] == s for r in rows) for s in STATUSES}
