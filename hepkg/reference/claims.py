"""Named claim checks: testable statements from the papers, evaluated on our results.

A claim's ``check`` receives the section's results (a dict of tables or values) and returns
``(status, evidence)`` or ``(status, evidence, subjects)``. ``status`` is True (holds), False (fails), None
(or a missing result: not measured at this scale) or one of :data:`hepkg.reference.verdict.VERDICTS`,
given by the one rule of :mod:`hepkg.reference.verdict` (``fails: above`` / ``fails: below`` for a stated
figure, ``inconclusive`` inside the noise, ``not reproducible here`` for a claim resting on hardware, data or
a library feature this artifact lacks, the measurement in the evidence). ``subjects``: where one statement is
judged on several subjects (the authors' program, hepkg's code, another baseline), the status on each, the
first being the experiment as the authors ran it, whose status is the claim's. Notebooks evaluate their
claims and save them with :func:`save_claims`; the reproduction summary counts statements (:func:`tally`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

from hepkg import paths
from hepkg.atomic import write_text

from .verdict import (ABOVE, BELOW, FAILS, HOLDS, INCONCLUSIVE, NOT_MEASURED, NOT_REPRODUCIBLE, RULE, VERDICTS,
                      combine)

#: the tally's columns: every verdict as claims.json writes it (a failure with its direction apart)
STATUSES = (HOLDS, FAILS, BELOW, ABOVE, INCONCLUSIVE, NOT_MEASURED, NOT_REPRODUCIBLE)


def _status(holds, key: str) -> str:
    if holds is None:
        return NOT_MEASURED
    if isinstance(holds, str):
        if holds not in VERDICTS:
            raise ValueError(f"claim {key}: a check returns True, False, None or one of {VERDICTS}, got {holds!r}")
        return holds
    return HOLDS if holds else FAILS


@dataclass(frozen=True)
class Claim:
    key: str
    statement: str
    source: str  # where the paper says it, e.g. "CSSC Table 4"
    check: Callable[[dict], tuple]

    def evaluate(self, results: dict) -> dict:
        try:
            out = self.check(results)
        except (KeyError, LookupError) as missing:
            out = None, f"no result for {missing}"
        holds, evidence, subjects = (*out, None) if len(out) == 2 else out
        row = dict(claim=self.key, statement=self.statement, source=self.source, status=_status(holds, self.key),
                   evidence=evidence)
        if subjects:
            row["subjects"] = {name: _status(s, self.key) for name, s in subjects.items()}
            if row["subjects"][next(iter(subjects))] != row["status"]:
                raise ValueError(f"claim {self.key}: its status is its first subject's, got {row['status']!r} and "
                                 f"{row['subjects']}")
        return row


def on_subjects(key: str, statement: str, source: str, checks: dict[str, Callable[[dict], tuple]]) -> Claim:
    """One statement judged on several subjects (name -> check, the experiment as the authors ran it first):
    one row, the first subject's status, the others beside it, the evidence per subject."""
    def check(results):
        got = {}
        for name, fn in checks.items():
            try:
                got[name] = fn(results)
            except (KeyError, LookupError) as missing:
                got[name] = None, f"no result for {missing}"
        first = next(iter(got.values()))[0]
        return first, {name: ev for name, (_, ev) in got.items()}, {name: s for name, (s, _) in got.items()}
    return Claim(key, statement, source, check)


def evaluate(claims, results: dict):
    """A pandas table: one row per claim with its status, evidence (and its subjects' statuses)."""
    import pandas as pd
    return pd.DataFrame([c.evaluate(results) for c in claims])


def save_claims(table, section: str, base=None) -> None:
    """Write the evaluated claims as ``artifacts/<section>/claims.json`` (read by the summary)."""
    rows = [{k: v for k, v in r.items() if not (k == "subjects" and not isinstance(v, dict))}
            for r in table.to_dict(orient="records")]
    write_text(paths.artifacts(section, base) / "claims.json", json.dumps(rows, indent=1))


def load_claims(section: str, base=None) -> list[dict]:
    path = paths.artifacts(section, base) / "claims.json"
    return json.loads(path.read_text()) if path.exists() else []


def tally(rows: list[dict]) -> dict[str, int]:
    """Statements per status (one row is one statement, whatever its subjects)."""
    return {s: sum(r["status"] == s for r in rows) for s in STATUSES}


__all__ = ["Claim", "on_subjects", "evaluate", "save_claims", "load_claims", "tally", "STATUSES", "RULE",
           "HOLDS", "FAILS", "INCONCLUSIVE", "NOT_MEASURED", "NOT_REPRODUCIBLE", "combine"]
