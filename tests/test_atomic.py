"""hepkg.atomic: files get open()'s mode; temporary files of writers killed mid-write are cleaned."""
import os
import pathlib
import signal
import subprocess
import sys

import pytest

from hepkg.atomic import TMP_MARK, atomic_path, clean_stale, write_text

KILLED_WRITER = """
import os, signal, sys
from hepkg.atomic import atomic_path
with atomic_path(sys.argv[1]) as tmp:
    tmp.write_text("half of a large result")
    os.kill(os.getpid(), signal.SIGKILL)
"""


def killed_writer(path: pathlib.Path) -> pathlib.Path:
    """Run a process that is SIGKILLed while writing ``path`` atomically; return the temporary file it left."""
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(path)], timeout=60)
    assert proc.returncode == -signal.SIGKILL
    [tmp] = path.parent.glob(f".*{TMP_MARK}*")
    return tmp


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002], ids=lambda m: f"umask {m:03o}")
def test_mode_is_that_of_plain_open(tmp_path, umask):
    old = os.umask(umask)
    try:
        write_text(tmp_path / "atomic.txt", "x")
        with atomic_path(tmp_path / "nb.ipynb") as tmp:
            tmp.write_text("{}")
        (tmp_path / "plain.txt").write_text("x")
    finally:
        os.umask(old)
    modes = {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()}
    assert modes == dict.fromkeys(["atomic.txt", "nb.ipynb", "plain.txt"], 0o666 & ~umask)


def test_clean_stale_removes_only_dead_writers_temp_files(tmp_path):
    stale = killed_writer(tmp_path / "result.json")
    assert stale.read_text() == "half of a large result"
    others = [tmp_path / "result.json.bak", tmp_path / ".result.tmp-abc.json", tmp_path / "notes.tmp-1-0.txt"]
    for p in others:
        p.write_text("not ours")
    with atomic_path(tmp_path / "live.json") as live:  # this (live) process's
        assert clean_stale(tmp_path) == [stale]
        assert live.exists()
    assert sorted(tmp_path.iterdir()) == sorted([*others, tmp_path / "live.json"])
    assert clean_stale(tmp_path / "missing") == []

