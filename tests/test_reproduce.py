"""The papermill runner: a failing notebook is reported, not fatal; sections come from file names."""
import json
import pathlib

import nbformat

from hepkg.reproduce import main, merged_summary, run_notebook, section_of, summary_markdown


def write_notebook(path: pathlib.Path, source: str) -> pathlib.Path:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("SCALE = 'quick'")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(source)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


def test_section_names():
    assert section_of(pathlib.Path("10_spmv.ipynb")) == "spmv"
    assert section_of(pathlib.Path("31_facesearch_gpu.ipynb")) == "facesearch_gpu"


def test_failing_notebook_is_reported_and_kept(tmp_path):
    bad = write_notebook(tmp_path / "98_broken.ipynb", "raise RuntimeError('boom at ' + SCALE)")
    good = write_notebook(tmp_path / "99_fine.ipynb", "x = 1")
    rows = [run_notebook(nb, {"SCALE": "quick"}, tmp_path / "art") for nb in (bad, good)]
    assert [r["status"] for r in rows] == ["failed", "ok"]
    assert "boom at quick" in rows[0]["error"]
    assert (tmp_path / "art" / "broken" / "98_broken.ipynb").exists()  # the executed copy shows the error
    assert not list((tmp_path / "art").rglob(".*tmp-*"))
    assert "| 98_broken.ipynb | quick | failed |" in summary_markdown(rows, "quick")


def test_unknown_section_is_refused(tmp_path):
    try:
        main(["--only", "nope", "--artifacts", str(tmp_path)])
    except SystemExit as exc:
        assert "unknown section" in str(exc)
    else:
        raise AssertionError("an unknown section must be refused")
    assert not (tmp_path / "summary.json").exists() or json.loads((tmp_path / "summary.json").read_text())


def test_summary_keeps_notebooks_not_rerun(tmp_path):
    row = dict(notebook="10_spmv.ipynb", status="ok", seconds=1.0, claims_hold=1, claims_fail=0,
               claims_not_measured=0, error="")
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(dict(notebooks=[dict(row, scale="default")])))
    merged = merged_summary(path, [dict(row, notebook="20_gemm.ipynb")], "quick")
    assert [(r["notebook"], r["scale"]) for r in merged] == [("10_spmv.ipynb", "default"), ("20_gemm.ipynb", "quick")]


def test_dirty_tree_is_reported_loudly_and_artifacts_do_not_count():
    from hepkg.bench.sysinfo import git_state
    from hepkg.reproduce import dirty_warning
    state = git_state()
    assert not any(path.startswith("artifacts/") for path in state["changed"])
    assert dirty_warning(dict(revision="abc", dirty=False, changed=[])) == ""
    warning = dirty_warning(dict(revision="abc", dirty=True, changed=["hepkg/grid.py"]))
    assert "WARNING" in warning and "hepkg/grid.py" in warning


def test_grid_store_lives_outside_git_keyed_by_machine_and_revision(tmp_path, monkeypatch):
    from hepkg import paths
    from hepkg.grid import grid_store
    monkeypatch.delenv("HEPKG_ARTIFACTS")
    from hepkg.bench.sysinfo import git_state, machine_key
    assert grid_store("spmv", tmp_path) == tmp_path / "spmv" / "grid"
    default = grid_store("spmv")
    assert default == grid_store("spmv", paths.ROOT / "artifacts")
    assert paths.ROOT not in default.parents and default.parent.name.startswith(machine_key())
    assert git_state()["revision"][:12] in default.parent.name
