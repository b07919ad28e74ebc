"""The harness that runs HyDia's own C++ (hepkg.facesearch.authors), on a stand-in program."""
import stat

import numpy as np
import pytest

from hepkg.bench.versus import MissingCheckout
from hepkg.facesearch import authors as A
from hepkg.facesearch import versus as fv

#: Their lines as their main.cpp prints them.
OUTPUT = """\tRunning Setup Operations:
Experimental approach: Novel diagonal transform
CKKS scheme set up (depth = 11, batch size = 16384)
Reading database vectors from file...
Encrypting database vectors...

\tRunning Experiments:
[Receiver]\tEncrypting query vector... done (0.031s)
[Sender]\tComputing membership scenario... done (41.5s)
[Receiver]\tDecrypting membership results... done (0.01s)
[Sender]\tComputing index scenario... done (40.25s)
[Receiver]\tDecrypting index results... done (0.02s)

\tDisplaying Query Results:
Membership scenario: true
Index scenario: [ 3 700 ]

\tProgram successfully terminated
"""


def test_parse_reads_both_times_and_both_answers():
    assert A.parse(OUTPUT) == dict(membership_s=41.5, identify_s=40.25, member=True, indices=[3, 700])
    assert A.parse(OUTPUT.replace("true", "false").replace("[ 3 700 ]", "[ ]"))["indices"] == []


def test_parse_names_the_missing_line():
    with pytest.raises(ValueError, match="index scenario"):
        A.parse(OUTPUT.replace("Computing index scenario", "Computing index"))


def test_write_dataset_is_their_format_and_refuses_another_dimension(tmp_path):
    db, q = np.arange(2 * 512).reshape(2, 512) - 99.0, np.full(512, 0.5)
    A.write_dataset(tmp_path / "d.dat", db, q)
    lines = (tmp_path / "d.dat").read_text().splitlines()
    assert lines[0] == "2" and len(lines) == 4
    assert np.array_equal(np.array(lines[1].split(), dtype=float), q)
    assert np.array_equal(np.array(lines[3].split(), dtype=float), db[1])
    with pytest.raises(ValueError, match="512-dimensional"):
        A.write_dataset(tmp_path / "e.dat", db[:, :128], q[:128])


def _standin(tmp_path, body: str) -> A.Authors:
    exe = tmp_path / "ImageMatching"
    exe.write_text("#!/bin/sh\n" + body)
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return A.Authors(exe, tmp_path / "lib")


def test_run_authors_reads_their_times_files_and_answers(tmp_path):
    (tmp_path / "d.dat").write_text("1\n")
    lines = OUTPUT.replace("\n", "\\n")
    authors = _standin(tmp_path, f"""
        [ "$1" = "{tmp_path}/d.dat" ] && [ "$2" = 5 ] || exit 3
        [ "$OMP_THREAD_LIMIT" = 2 ] && [ "$OMP_NUM_THREADS" = 2 ] || exit 4
        head -c 2000000 /dev/zero > serial/db_diagonal/index0.bin
        printf '{lines}'
        """)
    got = A.run_authors(authors, tmp_path / "d.dat", threads=2)
    assert got["membership_s"] == 41.5 and got["member"] and got["indices"] == [3, 700]
    assert got["disk_gb"] == 0.002 and 0 <= got["keygen_s"] <= got["keygen_s"] + got["enroll_s"] < 60


def test_run_authors_reports_a_failed_run(tmp_path):
    authors = _standin(tmp_path, "echo 'Error: unable to open input file' >&2; exit 1\n")
    with pytest.raises(RuntimeError, match="exited with 1(.|\n)*unable to open"):
        A.run_authors(authors, tmp_path / "missing.dat", threads=1)


def test_prepare_without_an_openfhe_source_says_how_to_get_one(tmp_path, monkeypatch):
    monkeypatch.delenv("HEPKG_OPENFHE_SRC", raising=False)
    with pytest.raises(MissingCheckout, match=r"--branch v1\.2\.3 .*openfhe-development"):
        A.prepare(tmp_path)


def test_their_side_joins_the_rounds_and_a_wrong_answer_is_not_correct(tmp_path, monkeypatch):
    from hepkg.facesearch import experiments

    monkeypatch.setattr(experiments, "measure", lambda cfg: [dict(
        status="measured", membership_s=2.0, membership_he_s=1.9, identify_s=3.0, rss_peak_bytes=5e9,
        server_rss_peak_bytes=4e9, keygen_s=1.0, context_s=1.2, enroll_s=2.0, identified=True, count_error=0.1,
        op_rotate=511, op_keyswitch=511, op_mul_ct=512, rotation_keys=516) if cfg["method"] != "hydia" else dict(
        status="exceeds memory", estimated_peak_bytes=23e9, available_bytes=24e9)])
    from hepkg.datasets.faces import synthetic_database
    matches = list(synthetic_database(1024, fv.KM, 512, 0).matches)
    monkeypatch.setattr(A, "run_authors", lambda authors, dataset, threads: dict(
        membership_s=4.0, identify_s=5.0, member=True, indices=next(iter_answers), rss_gb=1.0, keygen_s=1.0,
        enroll_s=1.0, disk_gb=0.1))
    iter_answers = iter([matches, matches, [3]])      # the warm-up run, then one right answer and one wrong
    runs = fv.versus_run("l512 K1024 kappa10", A.Authors(tmp_path, tmp_path), reps=2)
    theirs = runs[runs.side == "hydia C++"]
    assert list(theirs.correct) == [True, False] and list(theirs.e2e_s) == [4.0, 4.0]
    held = runs[runs.side == "hydia"]
    assert list(held.status) == ["exceeds memory"] * 2 and list(held.estimated_rss_gb) == [23.0, 23.0]
    assert not held.correct.any() and len(runs) == 8
    assert set(runs.side) == {fv.REFERENCE, *fv.METHODS}


def test_the_notebook_table_puts_their_hydia_over_each_hepkg_method(tmp_path):
    """versus_table: theirs (hydia C++) over each hepkg method that ran, per quantity, from the runs as
    load_runs reads them back; no table without their side."""
    import pandas as pd

    from hepkg.bench import report
    from hepkg.bench.versus import load_runs
    from hepkg.facesearch import report as rep

    assert load_runs("facesearch", tmp_path).empty and rep.versus_table(pd.DataFrame()).empty
    rows = [dict(case="l512 K1024 kappa10", side=side, rep=r, correct=True, e2e_s=e2e + r, identify_s=10.0,
                 rss_gb=rss, keygen_s=1.0, build="hydia-1a2f" if side == fv.REFERENCE else None)
            for r in range(5) for side, e2e, rss in ((fv.REFERENCE, 40.0, 20.0), ("hydia", 38.0, 16.0),
                                                     ("bsgs-diagonal", 35.0, 2.0))]
    report.save_table(pd.DataFrame(rows), "bench", "versus_facesearch", base=tmp_path)
    v = rep.versus_table(load_runs("facesearch", tmp_path)).set_index(["side", "quantity"])
    assert set(v.index.get_level_values("side")) == {"hydia", "bsgs-diagonal"}
    assert v.loc[("bsgs-diagonal", "e2e_s"), "ratio"] == pytest.approx(42 / 37)
    assert v.loc[("bsgs-diagonal", "rss_gb"), "ratio"] == pytest.approx(10.0)
    assert v.loc[("hydia", "e2e_s"), "authors_median"] == 42.0 and (v.authors_build == "hydia-1a2f").all()
    assert rep.versus_table(pd.DataFrame(rows).query("side != @fv.REFERENCE")).empty
