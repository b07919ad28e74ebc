"""The summary, the results pages and the README's results table are derived from the artifacts and agree
with them; every code example in the README and docs/ runs and prints what it says."""
import contextlib
import io
import json
import re

import pytest

from hepkg import paths, summary
from hepkg.reference.claims import STATUSES, load_claims, tally

ART = paths.ROOT / "artifacts"
README = paths.ROOT / "README.md"


def readme_rows() -> dict[str, list[str]]:
    """The README's results table: section folder -> its cells."""
    text = README.read_text().split(summary.BEGIN, 1)[1].split(summary.END, 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines() if line.startswith("| ")]
    return {re.search(r"artifacts/(\w+)/", cells[-1]).group(1): cells for cells in rows[1:] if "artifacts/" in cells[-1]}


def readme_titles() -> dict[str, list[str]]:
    """The README's results table: section title -> its cells."""
    text = README.read_text().split(summary.BEGIN, 1)[1].split(summary.END, 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines() if line.startswith("| ")]
    return {cells[0]: cells for cells in rows[1:]}


def test_readme_table_agrees_with_each_claims_json_and_run_json():
    rows = readme_rows()
    assert {"quickstart", "he_primitives", "spmv", "gemm", "facesearch", "omr"} <= set(rows)
    titles = readme_titles()  # every notebook has a row, computed or not
    assert set(titles) == {summary.SECTIONS[paths.section_of(nb)][0] for nb in paths.notebooks().glob("*.ipynb")}
    for section in {paths.section_of(nb) for nb in paths.notebooks().glob("*.ipynb")} - set(rows):
        assert not (ART / section / "claims.json").exists()
        assert titles[summary.SECTIONS[section][0]][1:3] == ["not computed", f"never computed: make reproduce "
                                                            f"ONLY={section}" + (f" on a machine with "
                                                            f"{summary.NEEDS[section][0]}" if section in summary.NEEDS else "")]
    for section, cells in rows.items():
        counts = tally(json.loads((ART / section / "claims.json").read_text()))
        assert cells[1] == " / ".join(str(counts[s]) for s in STATUSES), section
        git = json.loads((ART / section / "run.json").read_text())["system"]["git"]
        assert git["revision"][:7] in cells[3] and ("DIRTY" in cells[3]) == bool(git["dirty"]), section
        assert (ART / section / "README.md").is_file()


def test_summary_pages_and_readme_are_what_the_render_step_writes():
    """Nothing in them is kept by hand: regenerating changes nothing (run `make figures` when this fails)."""
    rows = summary.rows(ART)
    assert (ART / "summary.md").read_text() == summary.summary_markdown(rows)
    assert json.loads((ART / "summary.json").read_text()) == json.loads(json.dumps(dict(sections=rows)))
    assert README.read_text() == summary.readme(README.read_text(), rows, ART)
    for row in rows:
        if row["status"] != "not computed":
            assert (ART / row["section"] / "README.md").read_text() == summary.section_page(ART / row["section"])
    for row in json.loads((ART / "summary.json").read_text())["sections"]:
        counts = tally(load_claims(row["section"], ART))
        assert [row[summary.COLUMNS[s]] for s in STATUSES] == [counts[s] for s in STATUSES]
        assert row["status"] == "ok" or (row["status"] == "not computed" and row["note"]), row


def test_every_headline_names_ours_beside_the_paper():
    for row in summary.rows(ART):
        if row["status"] == "not computed":
            continue
        claims = load_claims(row["section"], ART)
        lead = next(c for c in claims if c["claim"] == summary.SECTIONS[row["section"]][2])
        assert row["headline"] == f"{summary.HEADLINES[lead['claim']](lead['evidence'])}: **{lead['status']}**"


def test_a_section_page_is_derived_from_its_folder(tmp_path):
    folder = tmp_path / "spmv"
    folder.mkdir()
    (folder / "claims.json").write_text(json.dumps([
        dict(claim="spmv.headline_speedups", statement="s", source="T5", status="fails",
             evidence={"arc130": dict(verdict="fails: below", ours=dict(value=23.3), paper=dict(value=30.1),
                                      kind="measured")}),
        dict(claim="spmv.other", statement="a | b", source="T1", status="holds", evidence="x"),
        dict(claim="spmv.both", statement="s", source="T2", status="fails: below", evidence={},
             subjects={"the authors' program": "fails: below", "hepkg": "holds"})]))
    (folder / "run.json").write_text(json.dumps(dict(scale="quick", started="2026-01-01T00:00:00+00:00",
                                                     finished="2026-01-01T00:01:30+00:00",
                                                     system=dict(git=dict(revision="0123456789", dirty=False)))))
    (folder / "tab5_speedup.md").write_text("| a |\n|---|\n| 1 |\n")
    (folder / "tab5_speedup.csv").write_text("a\n1\n")
    (folder / "fig5_time.png").write_bytes(b"")
    row = next(r for r in summary.rows(tmp_path) if r["section"] == "spmv")
    assert (row["status"], row["seconds"], row["revision"], row["claims_hold"], row["claims_fail"],
            row["claims_fail_below"]) == ("not run", 90.0, "0123456, clean", 1, 1, 1)  # one statement judged on two subjects counts once
    assert row["headline"] == ("speedup over the paper's diagonal method arc130 23.3x measured (paper 30.1x): "
                               "**fails**")
    page = summary.section_page(folder)
    assert "| `spmv.other` | **holds** |  | a \\| b | T1 | x |" in page and "### tab5_speedup ([csv](tab5_speedup.csv))" in page
    assert "| `spmv.both` | **fails: below** | the authors' program: fails: below; hepkg: holds | s |" in page
    assert "![fig5_time](fig5_time.png)" in page and "1 holds, 1 fails, 1 fails: below, 0 fails: above, 0 inconclusive" in page
    assert summary.RULE in page  # the one verdict rule, stated on every results page
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{summary.BEGIN}\nstale row\n{summary.END}\nrest\n"
                      + "".join(f"{begin}\n{end}\n" for begin, end in map(summary._block, summary.BLOCKS)))
    summary.write_all(tmp_path, readme)
    text = readme.read_text()
    assert "stale row" not in text and "| 1 / 1 / 1 / 0 / 0 / 0 / 0 |" in text and f"{summary.END}\nrest\n" in text
    assert "| Face search on the GPU (rns engine) | not computed | never computed: make reproduce ONLY=facesearch_gpu" \
           " on a machine with an NVIDIA GPU with CuPy | | |" in text
    assert (folder / "README.md").read_text() == page and "| spmv | quick | not run | 0123456, clean | 90.0 |" in \
        (tmp_path / "summary.md").read_text().replace(".ipynb", "")
    readme.write_text("no markers\n")
    with pytest.raises(ValueError, match="exactly one"):
        summary.write_all(tmp_path, readme)


def _run(folder, **run):
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps(dict(scale="default", started="2026-01-01T00:00:00+00:00",
                                                     finished="2026-01-01T01:00:00+00:00", **run)))


def test_computation_sums_the_sessions_a_run_resumed_across_and_its_peak_is_its_largest_process(tmp_path):
    _run(tmp_path / "gemm", resumed_s=1800.0, peak_rss_bytes=3_000_000_000)
    row = summary.section_row(tmp_path / "gemm")
    assert (row["seconds"], row["peak_gb"]) == (5400.0, 3.0)  # one hour here, half an hour loaded from the store
    _run(tmp_path / "omr")  # recorded before resumed_s: its raw tables' grid records say how long it took
    (tmp_path / "omr" / "raw").mkdir()
    (tmp_path / "omr" / "raw" / "digests.csv").write_text(
        "scheme,round,rss_peak_bytes,elapsed_s\nsoph,0,11600000000,3000.5\nsoph,0,11500000000,3000.5\n"
        "perf,0,9000000000,4000.25\n")
    row = summary.section_row(tmp_path / "omr")
    assert (row["seconds"], row["peak_gb"]) == (7000.8, 11.6)  # each configuration's elapsed_s once
    assert summary.expected([row], "default") == {"omr": (7000.8, 11.6)}
    assert summary.expected([row], "full") == {"omr": (None, None)}
    quick = summary.duration(summary.QUICK_S["omr"])
    assert f"| `omr` | SophOMR: Tables 3-7, Figs. 2, 3 | {quick} | default: about 1.9 h, 11.6 GB |" in \
        summary.times_table([row])
    block = summary.commands_block([row])
    assert "about 1.9 h of computation on 2 cores, 11.6 GB at the peak (omr)" in block and "artifacts/_quick/" in block


def test_rows_another_machine_measured_do_not_count_as_this_computations_memory(tmp_path):
    """The GPU units a notebook copies into its raw tables carry the GPU machine's resident set: not this run's."""
    _run(tmp_path / "facesearch_gpu", peak_rss_bytes=1_500_000_000)
    raw = tmp_path / "facesearch_gpu" / "raw"
    raw.mkdir()
    (raw / "provenance.json").write_text(json.dumps(dict(machine="aaaaaaaaaaaa")))
    (raw / "runs.csv").write_text("machine,rss_peak_bytes\naaaaaaaaaaaa,1700000000\n")
    (raw / "device_runs.csv").write_text("machine,rss_peak_bytes\nbbbbbbbbbbbb,12500000000\n")
    assert summary.section_row(tmp_path / "facesearch_gpu")["peak_gb"] == 1.7


def test_a_section_computed_without_the_hardware_it_needs_says_so(tmp_path):
    _run(tmp_path / "facesearch_gpu", on_gpu=False)
    row = summary.section_row(tmp_path / "facesearch_gpu")
    assert row["note"] == "computed without an NVIDIA GPU with CuPy: its GPU claims read 'not measured'"
    assert row["note"] in summary.readme_table([row]) and row["note"] in summary.summary_markdown([row])
    _run(tmp_path / "units" / "facesearch_gpu", on_gpu=False, device_units=["K1024"])
    assert summary.section_row(tmp_path / "units" / "facesearch_gpu")["note"] == (
        "computed without an NVIDIA GPU with CuPy: its own rows ran on the CPU, its GPU rows are the committed "
        "device units (K1024); a claim without them reads 'not measured'")
    _run(tmp_path / "gpu" / "facesearch_gpu", on_gpu=True)
    assert summary.section_row(tmp_path / "gpu" / "facesearch_gpu")["note"] == ""


def test_the_readme_bench_table_is_read_from_the_committed_comparisons(tmp_path):
    """Each side's lead quantity beside the authors' (medians, ratio and its range from the quartiles, the verdict in
    words), with both sides' builds and threads for that case alone and the run record's machine."""
    bench = tmp_path / "bench"
    bench.mkdir()
    assert "No comparison with the authors' C++ is committed yet" in summary.bench_table(tmp_path)
    (bench / "versus_omr.csv").write_text(
        "side,case,threads,build,digest_s\n"
        "authors,OMR t1,1,theirs-b,150\nhepkg,OMR t1,1,,300\nauthors,OMR t2,2,theirs-b,100\nhepkg,OMR t2,2,,90\n")
    (bench / "versus_omr_summary.csv").write_text(
        "case,side,quantity,reference,side_median,ref_median,ratio,ratio_low,ratio_high,verdict\n"
        "OMR t1,hepkg,digest_s,authors,300,150,0.5,0.45,0.55,greater\n"
        "OMR t1,hepkg,rss_gb,authors,3,2,0.67,0.6,0.7,greater\n"
        "OMR t2,hepkg,digest_s,authors,90,100,1.111,0.98,1.2,inconclusive\n")
    (bench / "versus_omr_run.json").write_text(json.dumps(dict(system=dict(cpu="AMD EPYC", logical_cores=2,
                                                                        page_reporting_order=None))))
    table = summary.bench_table(tmp_path).splitlines()
    assert table[2:] == [
        "| [versus_omr](artifacts/bench/versus_omr_summary.md) | OMR t1 | hepkg | authors | 150 | 300 | 0.50x "
        "(0.45-0.55) | slower | theirs-b, threads 1 | openfhe wheel, threads 1 | AMD EPYC, 2 logical cores, free page "
        "reporting off |",
        "| [versus_omr](artifacts/bench/versus_omr_summary.md) | OMR t2 | hepkg | authors | 100 | 90 | 1.11x "
        "(0.98-1.20) | inconclusive | theirs-b, threads 2 | openfhe wheel, threads 2 | AMD EPYC, 2 logical cores, free "
        "page reporting off |"]
    (bench / "versus_omr_run.json").write_text(json.dumps(dict(system=dict(cpu="AMD EPYC", logical_cores=2))))
    assert summary.bench_table(tmp_path).endswith("| AMD EPYC, 2 logical cores, free page reporting not recorded |\n")
    kept = dict(cases={"OMR t1": "aaa-r1", "OMR t2": "bbb-r2"},
                machines={"aaa-r1": dict(key="aaa", cpu="AMD EPYC", logical_cores=2),
                          "bbb-r2": dict(key="bbb", cpu="Intel Xeon", logical_cores=2)})
    (bench / "versus_omr_run.json").write_text(json.dumps(dict(kept=kept)))
    assert [line.rsplit("| ", 1)[1] for line in summary.bench_table(tmp_path).splitlines()[2:]] == [
        "AMD EPYC aaa, 2 logical cores (rounds kept in aaa-r1) |", "Intel Xeon bbb, 2 logical cores (rounds kept in bbb-r2) |"]


def _python_blocks():
    for page in [README, *sorted((paths.ROOT / "docs").glob("*.md"))]:
        for i, block in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), re.S)):
            yield pytest.param(block, id=f"{page.relative_to(paths.ROOT)}:{i}")


@pytest.mark.parametrize("code", list(_python_blocks()))
def test_every_python_example_in_the_docs_runs_and_prints_what_it_says(code):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<example>", "exec"), {})
    for expected in re.findall(r"^print\(.*?\)\s+# (.+)$", code, re.M):
        assert expected.strip() in out.getvalue(), (expected, out.getvalue())


def test_every_make_target_the_docs_name_exists():
    targets = set(re.findall(r"^([a-z][\w-]*):", (paths.ROOT / "Makefile").read_text(), re.M))
    for page in [README, *sorted((paths.ROOT / "docs").glob("*.md"))]:
        named = set(re.findall(r"`make ([a-z][\w-]*)", page.read_text()))
        assert named <= targets, (page.name, named - targets)


@pytest.mark.parametrize("notebook", sorted(ART.glob("*/[0-9][0-9]_*.ipynb")), ids=lambda p: p.parent.name)
def test_executed_notebooks_hold_no_stderr_warnings_or_machine_paths(notebook):
    for cell in json.loads(notebook.read_text())["cells"]:
        for out in cell.get("outputs", []):
            assert not (out["output_type"] == "stream" and out["name"] == "stderr"), "".join(out["text"])[:300]
            assert out["output_type"] != "error", out.get("evalue")
            text = json.dumps(out)
            assert "Warning" not in text, text[:300]
            assert not re.search(r"(?<![\w.])/(work|home|tmp|root|Users)/", text), re.search(r"/\w+/\S{0,80}", text)[0]


def test_every_command_line_the_docs_name_starts():
    import subprocess
    import sys

    modules = set()
    for page in [README, *sorted((paths.ROOT / "docs").glob("*.md"))]:
        modules |= set(re.findall(r"python -m (hepkg[\w.]*)", page.read_text()))
    assert modules
    for module in sorted(modules):
        out = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, cwd=paths.ROOT)
        assert out.returncode == 0 and "usage" in out.stdout, (module, out.stderr[-500:])
