"""The harness that runs FastHE-Search's own C++ (hepkg.facesearch.fasthe), on a stand-in program."""
import stat

import pandas as pd
import pytest

from hepkg.bench import versus
from hepkg.bench.versus import MissingCheckout
from hepkg.facesearch import fasthe as F

#: Their lines as their main.cpp (fcb792bf) prints them.
OUTPUT = """\tConfigured OUTER_THREADS: 2
\tRunning Setup Operations:
Reading database vectors from file... done (0.2100s)
[SETUP_COSTS] KeyGen=0.5000s RotKeyGen=12.2500s DBEncrypt=3.0000s DiagPreRot=0.0000s GPUKeyUpload=0.0000s \
GPUDBCache=0.0000s OfflineTotal=15.7500s SetupTotal=15.7500s
[Receiver]\tEncrypting query vector... done (0.0310s)
[Sender]\tComputing membership scenario... done (wall: 41.5000s)
[Peak RAM after membership] Memory: 1234.5 MB
[Receiver]\tDecrypting membership results... done (0.0100s)
[Sender]\tComputing index scenario... done (wall: 40.2500s)
[Receiver]\tDecrypting index results... done (0.0200s)

\tDisplaying Query Results:
Membership scenario: true
Index scenario: [ 3 700 ]

\t[2026-11-29 07:00:00] DB=2^10 Approach=8 N=512 EncQuery=0.0310s MembComp=41.5000s MembDec=0.0100s \
IdxComp=40.2500s IdxDec=0.0200s MembResult=SUCCESS

\tProgram successfully terminated
"""


def test_parse_reads_times_setup_and_answers():
    got = F.parse(OUTPUT)
    assert got == dict(membership_s=41.5, identify_s=40.25, member=True, indices=[3, 700], keygen_s=12.75,
                       enroll_s=3.0)
    assert F.parse(OUTPUT.replace("true", "false").replace("[ 3 700 ]", "[ ]"))["indices"] == []


@pytest.mark.parametrize("line", ["Computing index scenario", "[SETUP_COSTS]", "Membership scenario: "])
def test_parse_names_the_missing_line(line):
    with pytest.raises(ValueError, match="no line matching"):
        F.parse(OUTPUT.replace(line, "something else"))


def _standin(tmp_path, body: str) -> F.Program:
    exe = tmp_path / "ImageMatching"
    exe.write_text("#!/bin/sh\n" + body)
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return F.Program(exe, tmp_path / "lib", "fasthe-search-k8-1a2b + openfhe-v1.5.1-3c4d")


def test_run_authors_passes_their_arguments_and_threads_and_reads_disk(tmp_path):
    (tmp_path / "d.dat").write_text("1\n")
    lines = OUTPUT.replace("\n", "\\n")
    program = _standin(tmp_path, f"""
        [ "$1" = "{tmp_path}/d.dat" ] && [ "$2" = 8 ] && [ "$3" = --keep-serial ] || exit 3
        [ "$OUTER_THREADS" = 2 ] && [ "$OMP_THREAD_LIMIT" = 2 ] && [ "$OMP_NUM_THREADS" = 2 ] || exit 4
        [ -d serial/db_diagonal ] && [ -d serial/db_blind ] || exit 5
        echo x >> latency.csv
        head -c 3000000 /dev/zero > serial/db_diagonal/index0.bin
        printf '{lines}'
        sleep 0.2
        """)
    got = F.run_authors(program, tmp_path / "d.dat", 8, threads=2)
    assert got["membership_s"] == 41.5 and got["member"] and got["indices"] == [3, 700]
    assert got["disk_gb"] == 0.003 and got["keygen_s"] == 12.75 and 0 < got["rss_gb"] < 0.1


def test_run_authors_reports_a_failed_run(tmp_path):
    program = _standin(tmp_path, "echo 'Error: experiment file not found' >&2; exit 1\n")
    with pytest.raises(RuntimeError, match="exited with 1(.|\n)*experiment file not found"):
        F.run_authors(program, tmp_path / "d.dat", 5, threads=1)


def test_prepare_without_an_openfhe_source_says_how_to_get_one(tmp_path, monkeypatch):
    monkeypatch.delenv("HEPKG_OPENFHE_SRC", raising=False)
    with pytest.raises(MissingCheckout, match=r"--branch v1\.5\.1 .*openfhe-development"):
        F.prepare(tmp_path)


def test_both_approaches_join_the_rounds_beside_hepkg_and_wrong_answers_are_not_correct(tmp_path, monkeypatch):
    from hepkg.datasets.faces import synthetic_database

    calls = []
    monkeypatch.setattr(F, "in_child", lambda fn, cfg, need, threads, python_path=None: calls.append(
        (cfg["method"], cfg["params"], python_path)) or [dict(
            status="measured", membership_s=2.0, membership_he_s=1.9, identify_s=3.0, rss_peak_bytes=5e9,
            keygen_s=1.0, context_s=1.2, enroll_s=2.0, identified=True, count_error=0.1, openfhe_module="/m/openfhe",
            encode_path="Python list (bindings)", call_path="lock held (bindings)")])
    monkeypatch.setattr(F, "estimated_peak_bytes", lambda cfg: 0)
    matches = list(synthetic_database(1024, F.KM, 512, 0).matches)
    answers = iter([matches, matches, [3], matches])
    monkeypatch.setattr(F, "run_authors", lambda program, dataset, approach, threads: dict(
        membership_s=4.0 if approach == 5 else 2.5, identify_s=5.0, member=True, indices=next(answers), rss_gb=1.0,
        keygen_s=1.0, enroll_s=1.0, disk_gb=0.1))
    programs = {8: F.Program(tmp_path / "k8", tmp_path, "k8-build"), 10: F.Program(tmp_path / "k10", tmp_path, "")}
    runs = F.versus_run("l512 K1024 kappa8 threads2", F.Authors(programs, tmp_path / "py", "module on lib"), reps=1)
    assert len(runs) == 5 and set(runs.side) == {*F.METHODS, *F.APPROACHES}        # the warm-up round left out
    theirs = runs[runs.side.isin(list(F.APPROACHES))].set_index("side")
    assert theirs.loc["FastHE-Search 5 (HyDia)", "correct"] != theirs.loc["FastHE-Search 8 (BSGS-Diagonal)", "correct"]
    assert (theirs.build == "k8-build").all()
    ours = runs[runs.side.isin(F.METHODS)]
    assert (ours.build == "module on lib").all() and (ours.params == "ckks-32768-d9").all()
    assert {c[2] for c in calls} == {tmp_path / "py"} and len(calls) == 6
    summary = versus.summarize(runs.assign(rep=0), ["e2e_s"], F.REFERENCE, pairs=F.PAIRS)
    pair = summary[(summary.side == "bsgs-diagonal")].set_index("reference")
    assert pair.loc[F.REFERENCE, "ratio"] == 2.0 and pair.loc["FastHE-Search 8 (BSGS-Diagonal)", "ratio"] == 1.25
    their8 = summary[summary.side == "FastHE-Search 8 (BSGS-Diagonal)"]
    assert len(their8) == 1 and their8.ratio.iloc[0] == 4.0 / 2.5                 # the paper's claim on theirs


def test_the_section_is_skipped_without_their_checkout(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(F.ENV, raising=False)
    monkeypatch.setattr(versus, "measure", lambda *a, **k: pytest.fail("measured without their checkout"))
    versus.main(["fasthe", "--artifacts", str(tmp_path)])
    assert "skipped" in capsys.readouterr().err


def test_the_plot_labels_a_side_set_beside_a_second_reference():
    rows = [dict(case="c", side=s, reference=r, quantity="e2e_s", ratio=x, ratio_low=x, ratio_high=x, verdict="less")
            for s, r, x in (("hydia", "theirs", 1.2), ("bsgs", "theirs", 2.0), ("bsgs", "theirs-8", 1.1))]
    fig = versus.plot(pd.DataFrame(rows), "t")
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[:3] == ["hydia", "bsgs", "bsgs (beside theirs-8)"]


def test_hydias_own_program_joins_at_its_comparison_depth_only(tmp_path, monkeypatch):
    from hepkg.facesearch import authors as A

    monkeypatch.setattr(F, "in_child", lambda fn, cfg, need, threads, python_path=None: [dict(
        status="measured", membership_s=2.0, membership_he_s=1.9, identify_s=3.0, rss_peak_bytes=5e9, keygen_s=1.0,
        context_s=1.2, enroll_s=2.0, identified=True, count_error=0.1, openfhe_module="/m/openfhe",
        encode_path="Python list (bindings)", call_path="lock held (bindings)")])
    monkeypatch.setattr(F, "estimated_peak_bytes", lambda cfg: 0)
    run = dict(membership_s=4.0, identify_s=5.0, member=True, indices=[], rss_gb=1.0, keygen_s=1.0, enroll_s=1.0,
               disk_gb=0.1)
    monkeypatch.setattr(F, "run_authors", lambda *a: run)
    monkeypatch.setattr(A, "run_authors", lambda authors, dataset, threads: run | dict(membership_s=6.0))
    lib, prog = (type("B", (), dict(root=tmp_path / n))() for n in ("openfhe-v151", "hydia-1a2f"))
    programs = {k: F.Program(tmp_path, tmp_path, f"k{k}") for k in (8, 10)}
    authors = F.Authors(programs, hydia=A.Authors(tmp_path / "ImageMatching", tmp_path, (lib, prog)))
    at10 = F.versus_run("l512 K1024 kappa10 threads2", authors, reps=1, warmup=0).set_index("side")
    assert at10.loc[F.HYDIA, "e2e_s"] == 6.0 and at10.loc[F.HYDIA, "build"] == "openfhe-v151 + hydia-1a2f"
    assert not at10.loc[F.HYDIA, "correct"]               # a member answered with no indices
    assert (at10.loc[list(F.METHODS), "build"] == "openfhe wheel").all()
    assert F.HYDIA not in set(F.versus_run("l512 K1024 kappa8 threads2", authors, reps=1, warmup=0).side)


def test_their_peak_rss_is_their_programs_own_not_the_harness_process(tmp_path):
    """wait4's ru_maxrss is at least the harness's RSS when it forked (the copy counts before the exec): 2.2 GB for a
    shell script under a test worker."""
    import sys

    from hepkg.bench import builds

    ballast = bytearray(300 * 2 ** 20)                     # the harness holds 300 MB
    ballast[::4096] = b"x" * len(ballast[::4096])
    exe = tmp_path / "alloc"
    exe.write_text(f"#!{sys.executable}\nimport time\nb = bytearray(200 * 2 ** 20)\nb[::4096] = b'y' * len(b[::4096])\n"
                   "time.sleep(0.3)\nprint('done')\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    _, _, peak, _ = builds.run(exe, [], libdir=tmp_path, threads=1)
    assert 200 * 2 ** 20 < peak < 300 * 2 ** 20 and len(ballast)


def test_every_side_runs_at_the_cases_threads_whatever_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    seen = []
    monkeypatch.setattr(F, "in_child", lambda fn, cfg, need, threads, python_path=None: seen.append(
        ("hepkg", threads, cfg["omp_threads"])) or [dict(status="refused", estimated_peak_bytes=1e9)])
    monkeypatch.setattr(F, "estimated_peak_bytes", lambda cfg: 0)
    monkeypatch.setattr(F, "run_authors", lambda program, dataset, approach, threads: seen.append(
        ("theirs", threads, threads)) or dict(membership_s=1.0, identify_s=1.0, member=True, indices=[], rss_gb=1.0,
                                             keygen_s=1.0, enroll_s=1.0, disk_gb=0.1))
    programs = {k: F.Program(tmp_path, tmp_path, f"k{k}") for k in (8, 10)}
    runs = F.versus_run("l512 K1024 kappa8 threads1", F.Authors(programs), reps=1, warmup=0)
    assert {s[1:] for s in seen} == {(1, 1)} and {s[0] for s in seen} == {"hepkg", "theirs"}
    assert set(runs.omp_threads) == {1}
    assert {c.split()[-1] for c in F.versus_cases("default")} == {"threads1", "threads2"}
    assert len(set(F.versus_cases("default"))) == 8
