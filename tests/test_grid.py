"""hepkg.grid: one executor interface, resumable stores, failures collected, atomic result files."""
import contextlib
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import psutil
import pytest

from hepkg.atomic import TMP_MARK
from hepkg.grid import GridError, GridStoreWarning, config_key, run_grid

TESTS = pathlib.Path(__file__).parent

CONFIGS = [{"n": 3, "label": "a"}, {"n": 1, "label": "b", "reps": 2}, {"n": 2, "label": "c"}]


def square(config):
    """``n**2`` as one row, or ``reps`` rows; logs each call to ``config["log"]``; raises if ``fail``."""
    if "log" in config:
        with open(config["log"], "a") as f:
            f.write(f"{config['n']}\n")
    if config.get("fail"):
        raise ValueError(f"boom {config['n']}")
    rows = [{"n": config["n"] ** 2, "rep": r} for r in range(config.get("reps", 1))]
    return rows[0] if len(rows) == 1 else rows


def not_rows(config):
    return config["n"]


def numpy_scalars(config):
    return {"v": np.int64(config["n"]), "w": np.float32(0.5)}


def record_pid_and_sleep(config):
    (pathlib.Path(config["pids"]) / str(os.getpid())).touch()
    time.sleep(600)
    return {}


def calls(log: pathlib.Path) -> list[int]:
    return sorted(int(line) for line in log.read_text().split())


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", ""])
    proc.wait()
    return proc.pid


def summary(loaded=0, computed=0, corrupt=0, failed=0) -> dict:
    return {"loaded": loaded, "computed": computed, "corrupt": corrupt, "failed": failed}


def test_config_key_stable_and_order_independent():
    a = config_key(square, {"n": 1, "opts": {"x": 1, "y": [1, 2]}})
    assert a == config_key(square, {"opts": {"y": [1, 2], "x": 1}, "n": 1})
    assert a != config_key(square, {"n": 2, "opts": {"x": 1, "y": [1, 2]}})
    assert a != config_key(not_rows, {"n": 1, "opts": {"x": 1, "y": [1, 2]}})
    # pinned: changing the key scheme would orphan every existing store
    assert config_key(math.hypot, {"n": 1}) == "3e5ee29c5b24a8f6"


def test_inline_frame_and_files(tmp_path):
    df = run_grid(square, CONFIGS, tmp_path, progress=True)
    assert list(df.columns) == ["config_n", "label", "reps", "n", "rep", "elapsed_s"]
    assert df["config_n"].tolist() == [3, 1, 1, 2]
    assert df["n"].tolist() == [9, 1, 1, 4]
    assert df["rep"].tolist() == [0, 0, 1, 0]
    assert (df["elapsed_s"] >= 0).all()
    assert df.attrs["grid"] == summary(computed=3)
    files = sorted(tmp_path.iterdir())
    assert [f.name for f in files] == sorted(f"{config_key(square, c)}.json" for c in CONFIGS)
    record = json.loads((tmp_path / f"{config_key(square, CONFIGS[1])}.json").read_text())
    assert record["config"] == CONFIGS[1]
    assert record["rows"] == [{"n": 1, "rep": 0}, {"n": 1, "rep": 1}]
    assert {"elapsed_s", "finished", "fn"} <= record.keys()


@pytest.mark.parametrize("executor", ["process", "dask"])
def test_executors_agree_with_inline(tmp_path, executor):
    expected = run_grid(square, CONFIGS, tmp_path / "inline", progress=False)
    got = run_grid(square, CONFIGS, tmp_path / executor, executor=executor, workers=2, progress=False)
    pd.testing.assert_frame_equal(got.drop(columns="elapsed_s"), expected.drop(columns="elapsed_s"))


def test_resume_skips_finished_and_dedups(tmp_path):
    log = tmp_path / "calls.log"
    configs = [{"n": n, "log": str(log)} for n in range(5)]
    run_grid(square, configs[:2], tmp_path / "store", executor="process", workers=2, progress=False)
    first = {p.name: p.read_text() for p in (tmp_path / "store").iterdir()}
    df = run_grid(square, configs + configs[:3], tmp_path / "store", executor="process", workers=2, progress=False)
    assert calls(log) == [0, 1, 2, 3, 4]
    assert df.attrs["grid"] == summary(loaded=2, computed=3)
    assert df["config_n"].tolist() == [0, 1, 2, 3, 4]
    assert all((tmp_path / "store" / name).read_text() == text for name, text in first.items())


def test_a_resumed_grid_counts_the_seconds_earlier_sessions_spent(tmp_path):
    """What run.json's resumed_s adds to a session's wall time: the loaded records' elapsed_s, not recomputed."""
    from hepkg.grid import resumed_seconds
    configs = [{"n": n} for n in range(3)]
    first = run_grid(square, configs[:2], tmp_path / "store", progress=False)
    before = resumed_seconds()
    run_grid(square, configs, tmp_path / "store", progress=False)
    assert resumed_seconds() - before == pytest.approx(first.elapsed_s.sum())


def test_failure_reported_others_saved_and_retried(tmp_path, capsys):
    log = tmp_path / "calls.log"
    configs = [{"n": n, "fail": n == 2, "log": str(log)} for n in range(4)]
    with pytest.raises(GridError, match="boom 2") as info:
        run_grid(square, configs, tmp_path / "store", executor="process", workers=2, progress=False)
    err = info.value
    said = capsys.readouterr().err                    # as it happened, before the GridError at the end
    assert '"n": 2' in said and "ValueError: boom 2" in said
    assert [cfg for cfg, _ in err.failures] == [configs[2]]
    assert '"n": 2' in str(err) and "ValueError" in str(err)
    assert err.results["config_n"].tolist() == [0, 1, 3]
    assert err.results.attrs["grid"] == summary(computed=3, failed=1)
    assert len(list((tmp_path / "store").iterdir())) == 3
    with pytest.raises(GridError):
        run_grid(square, configs, tmp_path / "store", progress=False)
    assert calls(log) == [0, 1, 2, 2, 3]


def test_bad_return_and_bad_executor(tmp_path):
    with pytest.raises(GridError, match="must return a dict or a list of dicts"):
        run_grid(not_rows, [{"n": 1}], tmp_path, progress=False)
    with pytest.raises(ValueError, match="executor"):
        run_grid(square, CONFIGS, tmp_path, executor="threads")
    with pytest.raises(ValueError, match="scheduler"):
        run_grid(square, CONFIGS, tmp_path, scheduler="tcp://127.0.0.1:8786")
    assert not list(tmp_path.iterdir())


def test_numpy_scalars_are_saved_as_json_numbers(tmp_path):
    df = run_grid(numpy_scalars, [{"n": 3}], tmp_path, progress=False)
    assert df[["n", "v", "w"]].values.tolist() == [[3, 3, 0.5]]
    assert json.loads(next(tmp_path.iterdir()).read_text())["rows"] == [{"v": 3, "w": 0.5}]


def test_interrupted_write_leaves_no_partial_file(tmp_path, monkeypatch):
    def half_then_interrupt(self, text, *args, **kwargs):
        with open(self, "w") as f:
            f.write(text[: len(text) // 2])
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(pathlib.Path, "write_text", half_then_interrupt)
        with pytest.raises(KeyboardInterrupt):
            run_grid(square, CONFIGS, tmp_path, progress=False)
    assert not list(tmp_path.iterdir())
    assert len(run_grid(square, CONFIGS, tmp_path, progress=False)) == 4
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".json"] * 3


def edit(**fields):
    return lambda text: json.dumps({**json.loads(text), **fields})


CORRUPTIONS = {  # store file text -> corrupted text, the reason reported
    "truncated": (lambda text: text[: len(text) // 2], "JSONDecodeError"),
    "not utf-8": (lambda text: "\xff" + text, "UnicodeDecodeError"),
    "rows only": (lambda text: '{"rows": "oops"}', "not an object with an 'fn' string"),
    "a list": (lambda text: "[]", "not an object with an 'fn' string"),
    "rows a string": (edit(rows="oops"), "'rows' is not a list of objects"),
    "rows of numbers": (edit(rows=[1]), "'rows' is not a list of objects"),
    "elapsed a string": (edit(elapsed_s="1.5"), "'elapsed_s' is not a number"),
    "config edited": (edit(config={"n": 7}), "do not hash to its key"),
    "fn edited": (edit(fn="tests.other"), "do not hash to its key"),
}


@pytest.mark.parametrize("corrupt, reason", CORRUPTIONS.values(), ids=CORRUPTIONS)
def test_unusable_store_file_is_set_aside_and_recomputed(tmp_path, corrupt, reason):
    log = tmp_path / "calls.log"
    configs = [{"n": n, "log": str(log)} for n in range(3)]
    store = tmp_path / "store"
    run_grid(square, configs, store, progress=False)
    path = store / f"{config_key(square, configs[1])}.json"
    bad = corrupt(path.read_text()).encode("latin-1")
    path.write_bytes(bad)
    with pytest.warns(GridStoreWarning, match=f"{re.escape(str(path))}: .*{re.escape(reason)}") as warned:
        df = run_grid(square, configs, store, progress=False)
    assert warned[0].filename == __file__
    assert calls(log) == [0, 1, 1, 2]
    assert df["n"].tolist() == [0, 1, 4]
    assert df.attrs["grid"] == summary(loaded=2, computed=1, corrupt=1)
    [aside] = store.glob(f"{path.name}.corrupt-*")
    assert aside.read_bytes() == bad
    assert json.loads(path.read_text())["rows"] == [{"n": 1, "rep": 0}]
    assert run_grid(square, configs, store, progress=False).attrs["grid"] == summary(loaded=3)


def test_stale_temp_files_removed_at_start(tmp_path):
    stale = tmp_path / f".{config_key(square, CONFIGS[0])}.{TMP_MARK}{dead_pid()}-0123456789ab.json"
    live = tmp_path / f".other.{TMP_MARK}{os.getpid()}-0123456789ab.json"
    stale.write_text("half")
    live.write_text("being written")
    run_grid(square, CONFIGS, tmp_path, progress=False)
    assert not stale.exists() and live.exists()


PARENT = """
import multiprocessing, sys
import hepkg.grid as grid
import hepkg.lifeline as lifeline
from test_grid import record_pid_and_sleep
pids, store, mode = sys.argv[1:]
if mode == "fork, no prctl":
    lifeline.die_with_parent = lambda: False  # the forked workers poll their parent instead
multiprocessing.set_start_method(mode.split(",")[0])
grid.run_grid(record_pid_and_sleep, [{"i": i, "pids": pids} for i in range(2)], store,
              executor="process", workers=2, progress=False)
"""


def running(procs: list[psutil.Process]) -> list[psutil.Process]:
    """Those of ``procs`` still running (an unreaped zombie is not)."""
    out = []
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                out.append(proc)
    return out


@pytest.mark.parametrize("mode", ["fork", "fork, no prctl", "spawn", "forkserver"])
def test_process_workers_die_with_killed_parent(tmp_path, mode):
    pids = tmp_path / "pids"
    pids.mkdir()
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(pids), str(tmp_path / "store"), mode], cwd=TESTS)
    workers = []
    try:
        deadline = time.monotonic() + 60
        while len(workers := [psutil.Process(int(p.name)) for p in pids.iterdir()]) < 2:
            assert parent.poll() is None and time.monotonic() < deadline, "workers did not start"
            time.sleep(0.1)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 10
        while running(workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not running(workers)
    finally:
        parent.kill()
        for proc in running(workers):
            proc.kill()


def test_worker_exits_if_parent_died_before_it_started():
    code = f"from hepkg.lifeline import end_with; end_with({dead_pid()}, 'fork'); print('survived')"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "survived" not in proc.stdout
