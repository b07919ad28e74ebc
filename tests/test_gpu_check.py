"""scripts/gpu_check.sh, the GPU checks in one run: each step logged within its limit, the tables packed."""
import os
import pathlib
import subprocess
import tarfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
STEPS = ["00_env", "01_rns_tests", "02_test_rns_cupy", "03_bench_rns_cupy", "04_pipelines"]


def _run(tmp_path, **env):
    return subprocess.run(["bash", str(ROOT / "scripts" / "gpu_check.sh")], cwd=ROOT, capture_output=True, text=True,
                          env=os.environ | dict(OUT=str(tmp_path), **env), timeout=120)


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
