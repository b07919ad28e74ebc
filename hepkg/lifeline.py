"""Worker processes that end when their parent does, even when it is killed by SIGKILL.

:func:`end_with` is the initializer of hepkg's process pools (:func:`hepkg.grid.run_grid`'s workers,
:func:`hepkg.bench.child.in_child`'s measurement child) and the first call of the guard's forked parser
(:func:`hepkg.he.guard.isolated`): Linux's parent-death signal where ``prctl`` exists, a watchdog thread
elsewhere. :func:`die_with_parent` is the signal alone, for programs started by ``subprocess``
(:func:`hepkg.bench.builds.run`).
"""
from __future__ import annotations

import ctypes
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time

__all__ = ["end_with", "die_with_parent"]

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


try:  # resolved once, here: a forked child (guard.isolated's, a subprocess before exec) must not load libraries
    _PRCTL = ctypes.CDLL(None, use_errno=True).prctl
except (AttributeError, OSError, TypeError):  # not Linux
    _PRCTL = None


def die_with_parent() -> bool:
    """Have Linux SIGKILL this process when its parent dies; False where ``prctl`` is unavailable. Also the
    ``preexec_fn`` that makes a program started by ``subprocess`` die with this process (it survives ``exec``).

    The signal follows the death of the parent *thread*: pool workers must be started by a thread
    that outlives the pool (``run_grid``'s, ``in_child``'s), a program by a thread that waits for it.
    """
    return _PRCTL is not None and _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL) == 0


def _exit_when_reparented(parent: int) -> None:
    """Watchdog thread: end this process once its parent is no longer ``parent``; polls every second."""
    while os.getppid() == parent:
        time.sleep(1)
    os._exit(1)


def _exit_at_eof(fd: int) -> None:
    """Watchdog thread: end this process once pipe ``fd`` is at EOF (its writer died)."""
    multiprocessing.connection.wait([fd])
    os._exit(1)


def end_with(parent: int, start_method: str) -> None:
    """Pool initializer: end this worker when ``parent`` (the process that started the pool) dies.

    A forked or spawned worker is ``parent``'s child: Linux kills it then, elsewhere a thread polls for
    reparenting. A forkserver's child (the forkserver lives on while it does) watches ``parent``'s end
    of the pipe it was launched through.
    """
    if start_method == "forkserver":
        sentinel = multiprocessing.parent_process().sentinel
        threading.Thread(target=_exit_at_eof, args=(sentinel,), daemon=True).start()
        return
    if not die_with_parent():
        threading.Thread(target=_exit_when_reparented, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # it died before the above took effect
        os._exit(1)
