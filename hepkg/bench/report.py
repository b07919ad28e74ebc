"""Result tables, figures and the run record under ``artifacts/<section>/``, written atomically."""
from __future__ import annotations

import datetime
import json
import pathlib
from collections.abc import Mapping

from hepkg import atomic, paths
from hepkg.reference.compare import paper_vs_ours  # noqa: F401  (re-exported for notebooks)

FLOAT_FORMAT = ".6g"


def _plain_frame(df):
    """``df`` with a meaningful index moved into columns (a default RangeIndex is dropped)."""
    import pandas as pd

    return df.reset_index(drop=isinstance(df.index, pd.RangeIndex) and df.index.name is None)


def _cell(value):
    """A text cell that cannot break its table's row (``|`` escaped, line breaks as spaces)."""
    return value.replace("|", "\\|").replace("\n", " ") if isinstance(value, str) else value


def to_markdown(df) -> str:
    """A GitHub-style markdown table of ``df``'s columns: pandas' writer, which is tabulate's (pinned)."""
    df = _plain_frame(df)
    return df.map(_cell).rename(columns=lambda c: _cell(str(c))).to_markdown(index=False, floatfmt=FLOAT_FORMAT)


def save_table(df, section: str, name: str, base=None) -> tuple[pathlib.Path, pathlib.Path]:
    """Write ``<name>.csv`` and ``<name>.md`` into ``artifacts/<section>/`` (or ``base``); return both paths."""
    out = paths.artifacts(section, base)
    csv, md = out / f"{name}.csv", out / f"{name}.md"
    atomic.write_text(csv, _plain_frame(df).to_csv(index=False))
    atomic.write_text(md, to_markdown(df) + "\n")
    return csv, md


def save_figure(fig, section: str, name: str, base=None) -> pathlib.Path:
    """Write ``<name>.png`` (150 dpi, tight bounding box) of a Figure, Axes or seaborn grid."""
    fig = getattr(fig, "figure", fig)
    path = paths.artifacts(section, base) / f"{name}.png"
    with atomic.atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=150, bbox_inches="tight")
    return path


def _timestamp(t) -> str | None:
    """ISO-8601 text of a datetime, a POSIX timestamp or a string (passed through)."""
    if t is None or isinstance(t, str):
        return t
    if isinstance(t, (int, float)):
        t = datetime.datetime.fromtimestamp(t, datetime.timezone.utc)
    return t.isoformat(timespec="seconds")


def _setting(params: Mapping, key: str):
    """A notebook setting by name, whatever its case (``SCALE`` or ``scale``)."""
    return next((v for k, v in params.items() if k.lower() == key), None)


def write_run_json(section: str, params: Mapping, base=None, started=None, finished=None,
                   extra: Mapping | None = None) -> pathlib.Path:
    """Write ``artifacts/<section>/run.json``: parameters, scale, backend, system info, start and end,
    ``he_contexts``: every HE context the run built, declared parameters beside the modulus
    the library built (:func:`hepkg.he.built_params`), ``resumed_s``: the seconds of grid work earlier
    sessions did that this one loaded (:func:`hepkg.grid.resumed_seconds`; the computation is the wall
    time plus these), and ``peak_rss_bytes``: the largest resident set of this process and of the
    children it waited for (the measuring processes).

    ``started``/``finished`` are datetimes, POSIX timestamps or ISO strings; ``finished``
    defaults to now. ``extra`` entries are added at the top level. Values JSON cannot encode
    (paths, numpy scalars) are written as text.
    """
    import resource

    from hepkg.bench.sysinfo import system_info
    from hepkg.grid import resumed_seconds
    from hepkg.he import built_params

    peak_kib = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    record = dict(section=section, scale=_setting(params, "scale"), backend=_setting(params, "backend"),
                  parameters=dict(params), started=_timestamp(started),
                  finished=_timestamp(finished or datetime.datetime.now(datetime.timezone.utc)),
                  resumed_s=round(resumed_seconds(), 1), peak_rss_bytes=peak_kib * 1024,
                  system=system_info(), he_contexts=built_params())
    record.update(extra or {})
    path = paths.artifacts(section, base) / "run.json"
    atomic.write_text(path, json.dumps(record, indent=2, default=str) + "\n")
    return path
