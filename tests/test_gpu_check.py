"""The GPU scripts, on the CPU: scripts/gpu_check.sh (each step logged within its limit, the tables packed) and
scripts/gpu_facesearch.sh with hepkg.facesearch.gpu_run (one unit per call, rows written as they finish, what is
committed complete skipped, so Tables 7-8 fill across calls)."""
import json
import os
import pathlib
import subprocess
import sys
import tarfile

import pandas as pd
import pytest

from hepkg.facesearch import gpu_run

ROOT = pathlib.Path(__file__).resolve().parents[1]
STEPS = ["00_env", "01_rns_tests", "02_test_rns_cupy", "03_bench_rns_cupy"]


def _run(tmp_path, script="gpu_check.sh", **env):
    return subprocess.run(["bash", str(ROOT / "scripts" / script)], cwd=ROOT, capture_output=True, text=True,
                          env=os.environ | dict(OUT=str(tmp_path), **env), timeout=600)


def test_every_step_runs_and_logs_its_exit_status(tmp_path):
    out = _run(tmp_path, PY="true")             # each step's interpreter a no-op that succeeds
    assert out.returncode == 0, out.stderr
    for step in STEPS:
        assert (tmp_path / f"{step}.log").read_text().splitlines()[-1].startswith("rc=0 in "), step
    assert not (tmp_path / "art").exists()
    with tarfile.open(tmp_path / "art.tgz") as tar:
        assert "art/bench" in tar.getnames()


def test_a_step_past_its_limit_or_failing_does_not_stop_the_next_and_the_whole_limit_skips_the_rest(tmp_path):
    slow = tmp_path / "slow-python"
    slow.write_text("#!/bin/sh\nsleep 6\nexit 1\n")
    slow.chmod(0o755)
    out = _run(tmp_path, PY=str(slow), LIMIT="14", T_ENV="5")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "00_env.log").read_text().splitlines()[-1].startswith("rc=124 in ")   # its 5 s limit
    assert (tmp_path / "01_rns_tests.log").read_text().splitlines()[-1].startswith("rc=1 in ")
    for step in STEPS[2:]:                      # at most 14 - 5 - 6 s left: under the 5 s a step needs
        assert (tmp_path / f"{step}.log").read_text() == "skipped: LIMIT reached\n", step


# ---------------------------------------------------------------------------- scripts/gpu_facesearch.sh, gpu_run

def _write_unit(folder: pathlib.Path, unit: str, complete: bool) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{unit}.json").write_text(json.dumps(dict(unit=unit, complete=complete, machine="m", started="t",
                                                         device=dict(name="NVIDIA H200"))))
    (folder / f"{unit}.jsonl").write_text(json.dumps(dict(K=1, membership_s=0.1, unit=unit)) + "\n")


def test_the_next_unit_skips_what_is_complete_in_the_committed_folder_or_the_output(tmp_path):
    committed, out = tmp_path / "committed", tmp_path / "out"
    assert gpu_run.next_unit(gpu_run.PLAN, committed, out) == "K1024"          # nothing anywhere yet
    _write_unit(committed, "K1024", complete=True)
    _write_unit(committed, "streams", complete=False)                         # cut short: measured again
    assert gpu_run.next_unit(gpu_run.PLAN, committed, out) == "streams"
    _write_unit(out, "streams", complete=True)
    assert gpu_run.next_unit(gpu_run.PLAN, committed, out) == "K32768"
    (committed / "K32768.json").write_text("{not json")                       # a damaged record counts as absent
    assert gpu_run.next_unit(gpu_run.PLAN, committed, out) == "K32768"
    for unit in gpu_run.PLAN:
        _write_unit(out, unit, complete=True)
    assert gpu_run.next_unit(gpu_run.PLAN, committed, out) is None
    loaded = gpu_run.load(committed)                                          # complete units only
    assert list(loaded.unit) == ["K1024"] and (loaded.gpu == "NVIDIA H200").all()
    assert gpu_run.load(tmp_path / "none").empty
    assert gpu_run.unit_config("K65536", gpu_run.PAPER_RUN)["Km"] == 128      # Table 7's Km at 2^16
    assert gpu_run.unit_config("streams", dict(Km=3))["K"] == gpu_run.STREAMS_K
    with pytest.raises(ValueError, match="unknown unit"):
        gpu_run.unit_config("K1e3", {})


def _toy(out, committed, *extra):
    return [sys.executable, "-m", "hepkg.facesearch.gpu_run", "--out", str(out), "--committed", str(committed),
            "--params", "toy-ckks-4096-d11", "--l", "16", "--Km", "1", "--reps", "1", "--warmup", "0", "--insecure",
            "--plan", "K2049,K64", "--variants", "bsgs-tbs,bsgs-tbe", *extra]


def test_gpu_run_measures_one_unit_per_call_writes_rows_as_they_finish_and_resumes(tmp_path):
    """The entry on the CPU (the rns engine's CPU kernels, a toy ring, l = 16): the first call measures K2049 (two
    groups) and nothing else, its rows and record in --out; with them committed, the next call measures K64, and a
    third finds the plan complete."""
    env = os.environ | dict(PYTHONPATH=str(ROOT), HEPKG_RNS_XP="numpy")
    committed, out = tmp_path / "committed", tmp_path / "out"
    committed.mkdir()
    stale = tmp_path / "db" / "hepkg-fsgpu-4194304-left"          # a killed run's database (no such pid)
    (stale / "db0").mkdir(parents=True)
    first = subprocess.run(_toy(out, committed, "--tmp", str(tmp_path / "db")), cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    assert sorted(p.name for p in out.iterdir()) == ["K2049.json", "K2049.jsonl"]
    record = json.loads((out / "K2049.json").read_text())
    rows = pd.read_json(out / "K2049.jsonl", lines=True)
    assert record["complete"] and record["rows"] == len(rows) == 2 and record["config"]["K"] == 2049
    assert rows.correct.all() and (rows.groups == 2).all() and list(rows.variant) == ["bsgs-tbs", "bsgs-tbe"]
    assert not any((tmp_path / "db").iterdir())         # the databases deleted, the killed run's too
    for p in out.iterdir():
        (committed / p.name).write_bytes(p.read_bytes())
    second = subprocess.run(_toy(tmp_path / "out2", committed), cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=600)
    assert second.returncode == 0 and "measuring K64" in second.stdout, second.stderr
    for p in (tmp_path / "out2").iterdir():
        (committed / p.name).write_bytes(p.read_bytes())
    third = subprocess.run(_toy(tmp_path / "out3", committed), cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=600)
    assert third.returncode == 0 and "every unit of the plan is complete" in third.stdout
    assert not (tmp_path / "out3").exists() or not any((tmp_path / "out3").iterdir())
    assert set(gpu_run.load(committed).unit) == {"K2049", "K64"}


def test_gpu_run_refuses_a_database_folder_under_its_output(tmp_path):
    out = subprocess.run(_toy(tmp_path / "out", tmp_path, "--tmp", str(tmp_path / "out" / "db")), cwd=ROOT,
                         env=os.environ | dict(PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "--tmp must not lie under --out" in out.stderr


def test_gpu_facesearch_sh_checks_first_and_measures_no_unit_after_a_failed_check(tmp_path):
    """The script's steps: the pipelines' GPU check first; a failed check (here: an interpreter that fails) stops
    it before any unit; a passing one (no-op) goes on to the unit step."""
    out = _run(tmp_path / "a", "gpu_facesearch.sh", PY="false")
    assert out.returncode == 1 and "no unit measured" in out.stdout
    assert not (tmp_path / "a" / "01_unit.log").exists()
    out = _run(tmp_path / "b", "gpu_facesearch.sh", PY="true")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "b" / "01_unit.log").read_text().splitlines()[-1].startswith("rc=0 in ")
