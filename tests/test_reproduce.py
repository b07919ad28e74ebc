"""The papermill runner: a failing notebook is reported, not fatal; sections come from file names."""
import json
import pathlib

import nbformat
import pytest

from hepkg import summary
from hepkg.reproduce import main, notebooks, plan_message, run_notebook, section_of


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


def test_a_run_says_how_long_it_takes_and_where_it_writes_before_it_starts(tmp_path):
    from hepkg import paths
    text = plan_message(["gemm", "facesearch"], "default", {"gemm": (3700, 7.5), "facesearch": (2700, 22.9)},
                        paths.committed())
    assert "about 1.8 h" in text and "22.9 GB (facesearch)" in text and "the committed results, which this run replaces" in text
    text = plan_message(["quickstart", "omr"], "quick", {"quickstart": (5, None), "omr": (None, None)}, tmp_path)
    assert text.startswith("SCALE=quick: 2 notebook(s), about 5 s") and "(unknown for omr)" in text
    assert f"Writing into {tmp_path} (the committed results in {paths.committed()} are left as they are)" in text


def test_times_and_memory_come_from_the_committed_records():
    """The runner's plan, the README's tables and summary.md read the same numbers (hepkg.summary.expected)."""
    from hepkg import paths
    from hepkg.reproduce import estimate
    rows = {r["section"]: r for r in summary.rows(paths.committed())}
    got = estimate(["spmv", "omr"], "default")
    assert got["spmv"] == (rows["spmv"]["seconds"], rows["spmv"]["peak_gb"]) and got["spmv"][0] > 0
    assert got["omr"] == (None, None) and rows["omr"]["scale"] == "full"  # its committed run is at another scale
    assert estimate(["omr"], "full")["omr"] == (rows["omr"]["seconds"], rows["omr"]["peak_gb"])
    assert estimate(["gemm"], "quick") == {"gemm": (summary.QUICK_S["gemm"], None)}


def test_a_resumed_run_is_estimated_from_the_committed_records_not_its_own_partial_tables(tmp_path, monkeypatch):
    """An interrupted run has rewritten raw tables in the working tree: the plan still reads the commit's."""
    import subprocess

    from hepkg import paths
    from hepkg.reproduce import estimate
    raw = tmp_path / "artifacts" / "facesearch" / "raw"
    raw.mkdir(parents=True)
    (raw.parent / "run.json").write_text(json.dumps(dict(scale="default", started="2026-01-01T00:00:00+00:00",
                                                         finished="2026-01-01T01:00:00+00:00")))
    (raw / "memory.csv").write_text("elapsed_s,rss_peak_bytes\n7200,22900000000\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-qm", "results"]):
        subprocess.run(git + cmd, check=True, capture_output=True)
    (raw / "memory.csv").write_text("elapsed_s,rss_peak_bytes\n60,2100000000\n")  # the interrupted run's
    monkeypatch.setattr(paths, "committed", lambda: tmp_path / "artifacts")
    monkeypatch.setattr(paths, "CHECKOUT", True)
    assert estimate(["facesearch"], "default") == {"facesearch": (7200.0, 22.9)}
    monkeypatch.setattr(paths, "CHECKOUT", False)  # installed: the files as they are
    assert estimate(["facesearch"], "default") == {"facesearch": (3600.0, 2.1)}


def test_a_quick_run_writes_outside_the_committed_results_unless_told_to_overwrite(tmp_path, monkeypatch):
    from hepkg import paths
    from hepkg.reproduce import notebook_folder_parameter, results_folder
    monkeypatch.delenv("HEPKG_ARTIFACTS")
    monkeypatch.setattr(paths, "committed", lambda: tmp_path / "artifacts")

    def args(*argv):
        import argparse
        ns = dict(scale="default", artifacts=None, overwrite=False, render_only=False)
        ns.update(dict(zip(argv[::2], argv[1::2])))
        return argparse.Namespace(**ns)

    assert results_folder(args("scale", "quick")) == tmp_path / "artifacts" / "_quick"
    assert results_folder(args("scale", "full")) == tmp_path / "artifacts" / "_full"
    assert results_folder(args()) == tmp_path / "artifacts"
    assert results_folder(args("scale", "quick", "overwrite", True)) == tmp_path / "artifacts"
    assert results_folder(args("render_only", True)) == tmp_path / "artifacts"
    with pytest.raises(SystemExit, match="would replace them.*--overwrite"):
        results_folder(args("scale", "quick", "artifacts", str(tmp_path / "artifacts")))
    nb = paths.ROOT / "notebooks" / "40_omr.ipynb"  # the notebook resolves None itself (hepkg.paths.results)
    assert notebook_folder_parameter(tmp_path / "artifacts" / "_quick", "quick", nb) is None
    assert notebook_folder_parameter(tmp_path / "artifacts", "default", nb) is None
    assert notebook_folder_parameter(paths.ROOT / "artifacts", "full", nb) == "../artifacts"  # no machine path
    assert notebook_folder_parameter(tmp_path / "elsewhere", "quick", nb) == str(tmp_path / "elsewhere")


def test_a_notebook_opened_in_jupyterlab_writes_outside_the_committed_results(tmp_path, monkeypatch):
    """Every notebook resolves its folder from SCALE (RawTables.root) right after opening its raw tables, and a
    kernel started without the runner's parameters sends a quick run to artifacts/_quick/."""
    from hepkg import paths
    from hepkg.bench import RawTables
    for nb in notebooks():
        lines = [line for c in json.loads(nb.read_text())["cells"] for line in "".join(c["source"]).splitlines()]
        at = next(i for i, line in enumerate(lines) if line.startswith("raw = RawTables(SECTION, ARTIFACT_DIR,"))
        assert lines[at + 1].startswith("ARTIFACT_DIR = raw.root"), nb.name
        assert not [line for line in lines[:at] if "ARTIFACT_DIR" in line and not line.startswith("ARTIFACT_DIR = None")]
    monkeypatch.delenv("HEPKG_ARTIFACTS")
    monkeypatch.setattr(paths, "committed", lambda: tmp_path)
    assert RawTables("demo", None, scale="quick").root == tmp_path / "_quick"
    assert RawTables("demo", tmp_path / "mine", scale="quick").root == tmp_path / "mine"
    assert not (tmp_path / "demo").exists() and (tmp_path / "_quick" / "demo" / "raw" / "provenance.json").is_file()
    assert RawTables("demo", None, scale="default").root == tmp_path
    probe = write_notebook(tmp_path / "97_probe.ipynb", "from hepkg import paths\nprint(paths.results(SCALE, None))")
    row = run_notebook(probe, {"SCALE": "quick"}, tmp_path / "art")
    out = json.loads((tmp_path / "art" / "probe" / "97_probe.ipynb").read_text())["cells"][-1]["outputs"][0]["text"]
    assert row["status"] == "ok" and "".join(out).strip() == str(paths.ROOT / "artifacts" / "_quick")


def test_executed_notebooks_are_normalized(tmp_path):
    """No timestamps, durations, machine paths or random ids: the same notebook run twice gives the same bytes."""
    nb = write_notebook(tmp_path / "96_same.ipynb", "print(SCALE)")
    copies = []
    for i in range(2):
        run_notebook(nb, {"SCALE": "quick"}, tmp_path / f"run{i}")
        copies.append((tmp_path / f"run{i}" / "same" / "96_same.ipynb").read_bytes())
    assert copies[0] == copies[1]
    text = copies[0].decode()
    assert "injected-parameters" in text and "start_time" not in text and "iopub" not in text and str(tmp_path) not in text


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


def test_normalize_joins_a_stream_split_across_messages(tmp_path):
    """A print the kernel flushed in two messages and one flushed in one normalize to the same bytes."""
    from hepkg.reproduce import normalize

    def executed(outputs):
        cell = dict(cell_type="code", id="a", metadata=dict(execution={"iopub.status.busy": "t"}, papermill=dict(
            duration=1.5, start_time="t0", end_time="t1")), source="print(x)", outputs=outputs, execution_count=1)
        return dict(cells=[cell], metadata=dict(papermill=dict(duration=2, output_path="/tmp/x.ipynb")), nbformat=4,
                    nbformat_minor=5)

    def stream(name, text):
        return dict(output_type="stream", name=name, text=text)

    split = executed([stream("stdout", ["a\n", "b"]), stream("stdout", ["\n"]), stream("stderr", ["w\n"]),
                      stream("stdout", ["c\n"])])
    whole = executed([stream("stdout", ["a\n", "b\n"]), stream("stderr", ["w\n"]), stream("stdout", ["c\n"])])
    files = []
    for i, nb in enumerate((split, whole)):
        path = tmp_path / f"{i}.ipynb"
        path.write_text(json.dumps(nb))
        normalize(path, tmp_path / "src.ipynb")
        files.append(path.read_bytes())
    assert files[0] == files[1]
    cell = json.loads(files[0])["cells"][0]
    assert [o["name"] for o in cell["outputs"]] == ["stdout", "stderr", "stdout"]
    assert "execution" not in cell["metadata"] and "duration" not in cell["metadata"]["papermill"]
