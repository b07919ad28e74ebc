"""Atomic file writes: a temporary file in the same folder, then a rename.

A temporary file is named ``.<stem>.tmp-<writer pid>-<random><suffix>``: a writer killed mid-write
leaves it behind, and :func:`clean_stale` removes it once that pid is gone (as it removes other
writers' temporary files and folders whose names carry their pid: an interrupted enrollment, a
measurement child's scratch folder).
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import pathlib
import re
import secrets
import shutil

import psutil

#: in the names of temporary files (which keep the target's suffix, e.g. for papermill)
TMP_MARK = "tmp-"
_TMP_NAME = re.compile(rf"\..*\.{TMP_MARK}(\d+)-[0-9a-f]{{12}}(\.[^.]*)?")


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this host (a zombie, dead but not yet reaped, does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:  # another user's process
        return True


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path; on success it replaces ``path`` at once, on error it is removed.

    The file gets the mode a plain ``open()`` gives (``0o666`` less the umask, or a default ACL).
    """
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{TMP_MARK}{os.getpid()}-{secrets.token_hex(6)}{path.suffix}")
    # Created like open() does, not by mkstemp (mode 0600, then a chmod that must read the umask, which
    # is process-global). O_EXCL: never an existing file or a symlink; a clash of 48 random bits in one
    # process raises FileExistsError.
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def clean_stale(folder: str | os.PathLike, names: re.Pattern = _TMP_NAME) -> list[pathlib.Path]:
    """Remove the entries of ``folder`` whose names match ``names`` and whose writer is no longer
    running (a folder with its contents); return their paths.

    ``names`` must match a whole name and capture the writer's pid first; by default hepkg's
    temporary file names. Pids are this host's: a folder written from several hosts at once must not
    be cleaned.
    """
    folder = pathlib.Path(folder)
    if not folder.is_dir():
        return []
    removed = []
    for entry in folder.iterdir():
        match = names.fullmatch(entry.name)
        if not match or _pid_alive(int(match[1])):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                entry.unlink()
        if not os.path.lexists(entry):
            removed.append(entry)
    return removed


def write_bytes(path, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_text(path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


_AT_FDCWD, _RENAME_EXCHANGE = -100, 2  # from <fcntl.h>, <linux/fs.h>
try:
    _RENAMEAT2 = ctypes.CDLL(None, use_errno=True).renameat2  # glibc 2.28 and later
except (AttributeError, OSError, TypeError):  # not Linux
    _RENAMEAT2 = None


def replace_folder(new, target) -> None:
    """Put the folder ``new`` at ``target`` and remove what was there: readers of ``target`` see the old folder
    or the new one, whole, never a mix. Where ``target`` exists, the two are exchanged in one step (Linux'
    ``renameat2(RENAME_EXCHANGE)``), then the old one, now under ``new``'s name, is removed: killed while it is
    removed, it is left under that name (for :func:`clean_stale`). Elsewhere the old folder is renamed to ``new``'s
    name plus ``.old`` first, a moment in which ``target`` is absent."""
    new, target = pathlib.Path(new), pathlib.Path(target)
    if not os.path.lexists(target):
        os.replace(new, target)
        return
    if _RENAMEAT2 is not None and _RENAMEAT2(_AT_FDCWD, os.fsencode(new), _AT_FDCWD, os.fsencode(target),
                                             _RENAME_EXCHANGE) == 0:
        shutil.rmtree(new)
        return
    aside = new.with_name(new.name + ".old")
    os.replace(target, aside)
    os.replace(new, target)
    shutil.rmtree(aside)
