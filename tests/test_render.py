"""Compute, then render: ``--render-only`` rebuilds a section from its raw tables, identically."""
import json
import shutil

import pandas as pd
import pytest

from hepkg import reproduce
from hepkg.bench import RawMissing, RawTables
from hepkg.bench.raw import RawMismatch
from hepkg.he import HEError, context, forbid_contexts


def cell_outputs(notebook):
    """Per cell but the parameter cells (those differ by design): its printed text, joined (the kernel
    splits it into messages as it likes), and its other outputs; progress bars (widgets, shown only
    while computing) and stderr left out."""
    cells = json.loads(notebook.read_text())["cells"]
    keep = [c for c in cells if c["cell_type"] == "code" and not {"parameters", "injected-parameters"}
            & set(c["metadata"].get("tags", []))]
    return [("".join("".join(out["text"]) for out in c.get("outputs", []) if out.get("name") == "stdout"),
             [{k: v for k, v in out.items() if k in ("data", "ename", "evalue")}
              for out in c.get("outputs", []) if out["output_type"] != "stream"
              and "application/vnd.jupyter.widget-view+json" not in out.get("data", {})]) for c in keep]


@pytest.mark.notebook
@pytest.mark.parametrize("section", ["quickstart", "gemm"])
def test_render_only_rebuilds_a_section_identically(section, tmp_path):
    """Compute at quick scale, render from the raw tables alone: every file and cell output is the same."""
    computed, rendered = tmp_path / "computed", tmp_path / "rendered"
    assert reproduce.main(["--scale", "quick", "--only", section, "--artifacts", str(computed)]) == 0
    shutil.copytree(computed / section / "raw", rendered / section / "raw")
    shutil.copy(computed / section / "run.json", rendered / section / "run.json")
    try:
        assert reproduce.main(["--render-only", "--only", section, "--artifacts", str(rendered)]) == 0
    finally:
        forbid_contexts(None)

    def made(root):  # the summary describes the computation, and the grid store is this machine's cache
        return sorted(p.relative_to(root) for p in (root / section).rglob("*")
                      if p.is_file() and p.suffix != ".ipynb" and "grid" not in p.relative_to(root).parts)

    files = made(computed)
    assert {"claims.json", "run.json", "raw/provenance.json"} <= {str(f.relative_to(section)) for f in files}
    assert files == made(rendered)
    for rel in files:
        assert (computed / rel).read_bytes() == (rendered / rel).read_bytes(), rel
    nb = next((computed / section).glob("*.ipynb")).name
    assert cell_outputs(computed / section / nb) == cell_outputs(rendered / section / nb)


def test_render_only_builds_no_context_and_names_missing_tables(tmp_path):
    with pytest.raises(RawMissing, match="compute them first"):
        RawTables("demo", tmp_path, render_only=True)
    raw = RawTables("demo", tmp_path, scale="quick")
    frame = raw.table("numbers", lambda: pd.DataFrame(dict(a=[1, 2], b=[0.5, float("nan")], status=["N/A", "NA"])))
    assert frame.status.tolist() == ["N/A", "NA"] and frame.b.isna().tolist() == [False, True]
    assert raw.value("facts", lambda: dict(n=3)) == dict(n=3)
    again = RawTables("demo", tmp_path, render_only=True)
    try:
        pd.testing.assert_frame_equal(again.table("numbers", lambda: pytest.fail("render computed")), frame)
        with pytest.raises(HEError, match="render-only"):
            context("sim", "bfv-8192-default")
        with pytest.raises(RawMissing, match="another version"):
            again.table("absent", pd.DataFrame)
    finally:
        forbid_contexts(None)
    context("sim", "bfv-8192-default")


def test_a_compute_run_starts_from_an_empty_raw_folder(tmp_path):
    RawTables("demo", tmp_path).table("old", lambda: pd.DataFrame(dict(a=[1])))
    RawTables("demo", tmp_path)
    assert not (tmp_path / "demo" / "raw" / "old.csv").exists()


def test_render_only_says_a_section_was_never_computed_and_exits_0(tmp_path, capsys):
    assert reproduce.main(["--render-only", "--only", "quickstart", "--artifacts", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "00_quickstart.ipynb: not computed (no raw tables in" in out
    assert "| 00_quickstart.ipynb | None | not computed |" not in out  # the row names the section, it has no notebook
    row = next(r for r in json.loads((tmp_path / "summary.json").read_text())["sections"] if r["section"] == "quickstart")
    assert row["status"] == "not computed" and row["note"] == "never computed: make reproduce ONLY=quickstart"


def _computed(tmp_path):
    raw = RawTables("demo", tmp_path, scale="quick")
    raw.table("runs", lambda: pd.DataFrame(dict(n=range(5), t=[0.5] * 5)))
    raw.value("facts", lambda: dict(n=3))
    return raw.folder


def test_render_refuses_a_raw_table_that_was_cut_emptied_or_edited(tmp_path):
    """Each table's row count and sha256 are recorded as it is computed; a render checks them before parsing."""
    folder = _computed(tmp_path)
    recorded = json.loads((folder / "provenance.json").read_text())
    assert recorded["tables"]["runs.csv"]["rows"] == 5 and recorded["tables"]["facts.json"]["rows"] is None
    good = (folder / "runs.csv").read_bytes()
    for damaged in (good.rsplit(b"\n", 2)[0] + b"\n", b"", good.replace(b"0.5", b"0.6", 1)):
        (folder / "runs.csv").write_bytes(damaged)
        again = RawTables("demo", tmp_path, render_only=True, scale="quick")
        try:
            with pytest.raises(RawMismatch, match=r"raw table .*runs\.csv does not match .* 5 rows were recorded"):
                again.table("runs", pd.DataFrame)
            assert again.value("facts", dict) == dict(n=3)
        finally:
            forbid_contexts(None)
    (folder / "runs.csv").write_bytes(good)
    (folder / "facts.json").write_text('{"n": 4}\n')
    try:
        with pytest.raises(RawMismatch, match="facts.json does not match"):
            RawTables("demo", tmp_path, render_only=True, scale="quick").value("facts", dict)
        assert len(RawTables("demo", tmp_path, render_only=True, scale="quick").table("runs", pd.DataFrame)) == 5
        with pytest.raises(RawMismatch, match="computed at scale 'quick', not 'default'"):
            RawTables("demo", tmp_path, render_only=True, scale="default")
    finally:
        forbid_contexts(None)


def test_tables_computed_before_the_record_are_refused_until_recorded_afterwards(tmp_path):
    from hepkg.bench.raw import record_tables
    folder = _computed(tmp_path)
    provenance = json.loads((folder / "provenance.json").read_text())
    del provenance["tables"], provenance["tables_recorded"]
    (folder / "provenance.json").write_text(json.dumps(provenance))
    try:
        with pytest.raises(RawMismatch, match="records no row counts and hashes.*--record-tables --only demo"):
            RawTables("demo", tmp_path, render_only=True, scale="quick")
        record_tables(folder, "0123456789abcdef")
        recorded = json.loads((folder / "provenance.json").read_text())
        assert recorded["tables_recorded"].startswith("afterwards, from the files committed at 0123456789abcdef")
        assert recorded["tables"]["runs.csv"]["rows"] == 5
        assert len(RawTables("demo", tmp_path, render_only=True, scale="quick").table("runs", pd.DataFrame)) == 5
        with pytest.raises(ValueError, match="already records"):
            record_tables(folder, "0123456789abcdef")
    finally:
        forbid_contexts(None)


def test_the_committed_raw_tables_match_their_records():
    """make figures would refuse them otherwise; a committed table edited by hand fails here first."""
    from hepkg import paths
    for provenance in sorted(paths.committed().glob("*/raw/provenance.json")):
        tables = json.loads(provenance.read_text())["tables"]
        assert set(tables) == {p.name for p in provenance.parent.iterdir() if p.name != "provenance.json"}
        try:
            raw = RawTables(provenance.parent.parent.name, paths.committed(), render_only=True)
            for name in tables:
                stem, suffix = name.rsplit(".", 1)
                (raw.table if suffix == "csv" else raw.value)(stem, lambda: pytest.fail("render computed"))
        finally:
            forbid_contexts(None)
