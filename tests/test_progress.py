"""Progress bars reach the terminal of `make reproduce` through $HEPKG_PROGRESS."""
import json
import time

from hepkg import progress
from hepkg.grid import run_grid


def square(cfg):
    return {"y": cfg["x"] ** 2}


def test_a_grid_reports_its_bar_to_the_progress_file(tmp_path, monkeypatch):
    path = tmp_path / "bar.json"
    monkeypatch.setenv(progress.ENV, str(path))
    run_grid(square, [{"x": i} for i in range(5)], tmp_path / "store", desc="squares")
    states = [json.loads(line) for line in path.read_text().splitlines()]
    assert states[0] == {"desc": "squares", "done": 0, "total": 5} and states[-1] == dict(states[0], done=5)


def test_without_the_variable_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.delenv(progress.ENV, raising=False)
    with progress.Bar(total=2, desc="quiet", disable=True) as bar:
        bar.update(2)
    assert list(tmp_path.iterdir()) == []


def test_the_watcher_draws_each_reported_bar_in_the_terminal(tmp_path, capsys):
    path = tmp_path / "bar.json"
    with progress.Watcher(path, prefix="  "):
        with path.open("a") as out:  # faster than the watcher polls: it still shows each bar's end
            for desc, done, total in (("counts on sim", 0, 3), ("counts on sim", 3, 3), ("measured", 1, 4)):
                out.write(json.dumps(dict(desc=desc, done=done, total=total)) + "\n")
            out.write('{"desc": "measured", "do')  # half a line: read when complete
        time.sleep(3 * progress.INTERVAL_S)
        with path.open("a") as out:
            out.write('ne": 4, "total": 4}\n')
        time.sleep(3 * progress.INTERVAL_S)
    err = capsys.readouterr().err
    assert "  counts on sim: 100%" in err and "3/3" in err and "  measured: 100%" in err and "4/4" in err
