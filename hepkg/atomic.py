"""Atomic file writes: a temporary file in the same folder, then a rename."""
from __future__ import annotations

import contextlib
import os
import pathlib
import tempfile

#: in the names of temporary files (which keep the target's suffix, e.g. for papermill)
TMP_MARK = "tmp-"


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path; on success it replaces ``path`` at once, on error it is removed."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.{TMP_MARK}", suffix=path.suffix)
    os.close(fd)
    try:
        yield pathlib.Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_bytes(path, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_text(path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)
