"""Join the papers' numbers with ours: ``paper``, ``ours`` and ``ratio`` columns."""
from __future__ import annotations

from collections.abc import Mapping


def paper_vs_ours(ours, paper, on, value: str, paper_value: str | None = None):
    """``ours`` with the paper's number beside each row: columns ``paper``, ``ours``, ``ratio`` = ours / paper.

    ``on``: the key column(s) both sides share; ``value``: our measured column (it becomes
    ``ours``). ``paper`` is a DataFrame with the ``on`` columns and ``paper_value`` (default:
    ``value``), or a dict from key (a tuple for several ``on`` columns) to the paper's number.
    Rows the paper has no number for keep NaN ``paper`` and ``ratio``.
    """
    import pandas as pd

    keys = [on] if isinstance(on, str) else list(on)
    if isinstance(paper, Mapping):
        rows = [(*(k if isinstance(k, tuple) else (k,)), v) for k, v in paper.items()]
        paper = pd.DataFrame(rows, columns=keys + ["paper"])
    else:
        paper = paper[keys + [paper_value or value]].rename(columns={paper_value or value: "paper"})
    if paper.duplicated(keys).any():
        raise ValueError(f"the paper's numbers have duplicate keys on {keys}")
    out = ours.merge(paper, on=keys, how="left")
    out["ours"] = out.pop(value)
    out["ratio"] = out["ours"] / out["paper"]
    return out
