"""Hardening, second round (issue 27): items 6, 8, 10, 11, 12 and 13, each from its reproduction."""
import contextlib
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import psutil
import pytest

from hepkg.bench.child import SCRATCH_PREFIX, in_child

TESTS = pathlib.Path(__file__).parent


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", ""])
    proc.wait()
    return proc.pid


def running(procs: list[psutil.Process]) -> list[psutil.Process]:
    """Those of ``procs`` still running (an unreaped zombie is not)."""
    out = []
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                out.append(proc)
    return out


# ------------------------------------------------------------------ 6. measurement children die with their parent
def scratch_and_sleep(config):
    """A trial's shape: a temporary folder with data in it (a face database), then a long computation."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="hepkg-faces-"))
    (folder / "d0000.ct").write_bytes(b"x" * 1000)
    (pathlib.Path(config["pids"]) / str(os.getpid())).write_text(str(folder))
    time.sleep(120)
    return []


def no_rows(config):
    return []


def trial_in_child(config):
    return in_child(scratch_and_sleep, config, need_bytes=0)


PARENT = """
import sys
from hepkg.bench.child import in_child
from hepkg.grid import run_grid
from test_hardening_round2b import scratch_and_sleep, trial_in_child
pids, store, mode = sys.argv[1:]
if mode == "inline":
    in_child(scratch_and_sleep, {"pids": pids}, need_bytes=0)
else:
    run_grid(trial_in_child, [{"i": i, "pids": pids} for i in range(2)], store, executor="process", workers=2,
             progress=False)
"""


@pytest.mark.parametrize("mode,trials", [("inline", 1), ("process pool", 2)])
def test_6_measurement_children_die_with_a_killed_parent(tmp_path, monkeypatch, mode, trials):
    """SIGKILL of the process running in_child (directly, or in run_grid's process workers): every
    descendant (workers, trials, resource trackers) exits; the next in_child removes the trials' scratch."""
    pids, scratch = tmp_path / "pids", tmp_path / "tmp"
    pids.mkdir()
    scratch.mkdir()
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(pids), str(tmp_path / "store"), mode], cwd=TESTS,
                              env=os.environ | {"TMPDIR": str(scratch)})
    family = []
    try:
        deadline = time.monotonic() + 120
        while len(list(pids.iterdir())) < trials:
            assert parent.poll() is None and time.monotonic() < deadline, "the trials did not start"
            time.sleep(0.1)
        family = psutil.Process(parent.pid).children(recursive=True)
        assert len(family) >= trials
        folders = [pathlib.Path(p.read_text()) for p in pids.iterdir()]
        assert all(f.is_dir() for f in folders)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 15
        while running(family) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not running(family), f"{len(running(family))} of {len(family)} descendants outlived the parent"
        assert all(f.parent.name.startswith(SCRATCH_PREFIX) for f in folders)  # left by the killed parent
        monkeypatch.setattr(tempfile, "tempdir", str(scratch))
        assert in_child(no_rows, {}, need_bytes=0) == []
        assert not any(f.exists() for f in folders) and list(scratch.iterdir()) == []
    finally:
        parent.kill()
        for proc in running(family):
            proc.kill()


# ------------------------------------------------------------------ 12. an enrollment killed mid-write
