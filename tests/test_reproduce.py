"""The papermill runner: a failing notebook is reported, not fatal; sections come from file names."""
import json
import pathlib

import nbformat

from hepkg import summary
from hepkg.reproduce import main, plan_message, run_notebook, section_of


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
    derived = {r["section"]: r for r in summary.rows(tmp_path / "art")}  # the summary reads the executed copies
    assert derived["broken"]["status"] == "failed" and "boom at quick" in derived["broken"]["error"]
    assert derived["fine"]["status"] == "ok"


def test_unknown_section_is_refused(tmp_path):
    try:
        main(["--only", "nope", "--artifacts", str(tmp_path)])
    except SystemExit as exc:
        assert "unknown section" in str(exc)
    else:
        raise AssertionError("an unknown section must be refused")
    assert not (tmp_path / "summary.json").exists() or json.loads((tmp_path / "summary.json").read_text())


def test_a_run_says_how_long_it_takes_before_it_starts():
    text = plan_message(["gemm", "facesearch"], "default", {"gemm": 3700, "facesearch": 2700})
    assert "about 1.8 h" in text and "16.5 GB (facesearch)" in text and "SCALE=quick" in text
    assert plan_message(["quickstart"], "quick", {"quickstart": 5}).startswith("SCALE=quick: 1 notebook(s), about 1 min")


def test_estimates_take_the_longer_of_the_table_and_the_last_run(tmp_path):
    from hepkg.reproduce import ESTIMATE_S, estimate
    (tmp_path / "omr").mkdir()
    (tmp_path / "omr" / "run.json").write_text(json.dumps(dict(scale="default", started="2026-01-01T00:00:00+00:00",
                                                                finished="2026-01-01T00:06:00+00:00")))
    (tmp_path / "gemm").mkdir()
    (tmp_path / "gemm" / "run.json").write_text(json.dumps(dict(scale="default", started="2026-01-01T00:00:00+00:00",
                                                                 finished="2026-01-01T05:00:00+00:00")))
    got = estimate(["omr", "gemm", "unlisted"], "default", tmp_path)
    assert got == {"omr": ESTIMATE_S["default"]["omr"], "gemm": 18000.0, "unlisted": None}


def test_dirty_tree_is_reported_loudly_and_artifacts_do_not_count(tmp_path):
    from hepkg.bench.sysinfo import git_state
    state = git_state()
    assert not any(path.startswith("artifacts/") for path in state["changed"])
    for section, dirty in (("clean", False), ("edited", True)):
        (tmp_path / section).mkdir()
        (tmp_path / section / "run.json").write_text(json.dumps(dict(system=dict(git=dict(revision="abcdef0123", dirty=dirty)))))
    text = summary.summary_markdown(summary.rows(tmp_path))
    assert "WARNING: edited ran uncommitted code" in text and "abcdef0, DIRTY" in text and "abcdef0, clean" in text


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


def test_papermill_sees_every_parameter_the_runner_passes():
    """A parameter line papermill cannot parse is dropped with a warning ("Passed unknown parameter")."""
    from papermill.translators import PythonTranslator

    from hepkg.reproduce import notebooks
    for nb in notebooks():
        cell = next(c for c in json.loads(nb.read_text())["cells"] if "parameters" in c["metadata"].get("tags", []))
        names = {p.name for p in PythonTranslator.inspect({"source": "".join(cell["source"])})}
        assert {"SCALE", "SEED", "ARTIFACT_DIR", "EXECUTOR", "WORKERS", "SCHEDULER", "RENDER_ONLY"} <= names, nb.name
