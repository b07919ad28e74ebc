"""Compute, then render: ``--render-only`` rebuilds a section from its raw tables, identically."""
import json
import shutil

import pandas as pd
import pytest

from hepkg import reproduce
from hepkg.bench import RawMissing, RawTables
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


def test_render_only_names_a_section_without_raw_tables(tmp_path, capsys):
    assert reproduce.main(["--render-only", "--only", "quickstart", "--artifacts", str(tmp_path)]) == 1
    assert "no raw tables" in capsys.readouterr().out
