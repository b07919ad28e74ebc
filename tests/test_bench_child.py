"""hepkg.bench.child.in_child: a measurement in a fresh process, refused or recorded when memory runs out."""
import os
import signal
import sys

from hepkg.bench.child import in_child


def rows_with_threads(config):
    return [dict(x=config["x"], omp=os.environ.get("OMP_NUM_THREADS"), pid=os.getpid())]


def killed_by_the_kernel(config):
    os.kill(os.getpid(), signal.SIGKILL)


def test_runs_in_a_child_with_its_threads():
    rows = in_child(rows_with_threads, dict(x=3), need_bytes=0, threads=1)
    assert rows == [dict(x=3, omp="1", pid=rows[0]["pid"], status="measured", estimated_peak_bytes=0)]
    assert rows[0]["pid"] != os.getpid()


def test_refuses_work_beyond_the_free_memory():
    rows = in_child(rows_with_threads, dict(x=1), need_bytes=10 ** 15)
    assert len(rows) == 1 and rows[0]["status"] == "exceeds memory" and rows[0]["available_bytes"] < 10 ** 15


def test_a_dead_child_is_recorded_as_killed():
    assert in_child(killed_by_the_kernel, {}, need_bytes=0)[0]["status"] == "killed"


def module_file(config):
    import hepkg_probe_module

    return [dict(file=hepkg_probe_module.__file__)]


def test_python_path_comes_first_in_the_child_and_leaves_this_process_as_it_was(tmp_path):
    (tmp_path / "hepkg_probe_module.py").write_text("")
    before = list(sys.path)
    rows = in_child(module_file, {}, need_bytes=0, python_path=tmp_path)
    assert rows[0]["file"] == str(tmp_path / "hepkg_probe_module.py") and sys.path == before
