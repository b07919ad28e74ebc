"""Run one measurement in a fresh child process, so that its peak RSS is its own.

The papers' harnesses run each trial as a subprocess; so does :func:`in_child`. It refuses, with a
row instead of an attempt, work whose estimated peak exceeds 90% of the memory available now, and
records a child that dies (the kernel's out-of-memory killer) as 'killed'. The child dies with its
parent, even when the parent is killed (:func:`hepkg.lifeline.end_with`), and keeps its temporary files
(a face-search trial's encrypted database: gigabytes) in a scratch folder
``$TMPDIR/hepkg-child-<parent pid>-*``, removed when the child ends or, if its parent was killed, by
the next :func:`in_child` on this host. ``python_path`` puts a folder first on the child's module path
(an ``openfhe`` module built from source in place of the wheel's).
"""
from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from contextlib import contextmanager
from typing import Callable

from hepkg.atomic import clean_stale
from hepkg.lifeline import end_with

__all__ = ["in_child", "omp_threads", "first_on_path"]

SCRATCH_PREFIX = "hepkg-child-"
_SCRATCH = re.compile(rf"{SCRATCH_PREFIX}(\d+)-[a-z0-9_]+")  # the pid of the process that ran in_child


@contextmanager
def omp_threads(n: int | None):
    """OMP_NUM_THREADS set to ``n`` while a child process starts (OpenMP reads it when the HE library loads)."""
    old = os.environ.get("OMP_NUM_THREADS")
    if n is not None:
        os.environ["OMP_NUM_THREADS"] = str(n)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = old


@contextmanager
def first_on_path(folder):
    """``folder`` (if not None) first on ``sys.path`` while a spawned child starts: it imports from there first."""
    if folder is not None:
        sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        if folder is not None:
            sys.path.remove(str(folder))


def _start(parent: int, scratch: str) -> None:
    """The child's initializer: end with ``parent``; temporary files under ``scratch``."""
    end_with(parent, "spawn")
    tempfile.tempdir = os.environ["TMPDIR"] = scratch


#: the share of the available memory one measured process may be estimated to take (the estimate's error and the
#: rest of the machine: the measured peak can lie above it)
MEMORY_SHARE = 0.9


def in_child(fn: Callable[[dict], list[dict]], config: dict, need_bytes: int,
             threads: int | None = None, python_path=None) -> list[dict]:
    """``fn(config)`` (a module-level function returning rows) in a spawned child with ``threads``
    OpenMP threads and ``python_path`` first on its module path; each row gains ``status`` ('measured')
    and ``estimated_peak_bytes``. One row with status 'exceeds memory' when ``need_bytes`` is above
    :data:`MEMORY_SHARE` of the available memory, 'killed' when the child dies. Scratch folders of processes killed
    while their child ran are removed first."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    import psutil

    avail = psutil.virtual_memory().available
    if need_bytes > MEMORY_SHARE * avail:
        return [dict(status="exceeds memory", estimated_peak_bytes=need_bytes, available_bytes=avail)]
    clean_stale(tempfile.gettempdir(), _SCRATCH)
    scratch = tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-")
    try:
        spawn = multiprocessing.get_context("spawn")
        with omp_threads(threads), first_on_path(python_path), ProcessPoolExecutor(
                1, mp_context=spawn, initializer=_start, initargs=(os.getpid(), scratch)) as pool:
            rows = pool.submit(fn, config).result()
    except BrokenProcessPool:
        return [dict(status="killed", estimated_peak_bytes=need_bytes, available_bytes=avail)]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return [r | dict(status="measured", estimated_peak_bytes=need_bytes) for r in rows]
