"""Worker processes that end when their parent does, even when it is killed by SIGKILL.

:func:`end_with` is the initializer of hepkg's process pools (:func:`hepkg.grid.run_grid`'s workers,
:func:`hepkg.bench.child.in_child`'s measurement child): Linux's parent-death signal where ``prctl``
exists, a watchdog thread elsewhere.
"""
from __future__ import annotations

import ctypes
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time

__all__ = ["end_with"]

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def _pdeathsig() -> bool:
    """Have Linux SIGKILL this process when its parent dies; False where ``prctl`` is unavailable.

    The signal follows the death of the parent *thread*: pool workers must be started by a thread
    that outlives the pool (``run_grid``'s, ``in_child``'s).
    """
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL) == 0
    except (AttributeError, OSError, TypeError):  # not Linux
        return False


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
    if not _pdeathsig():
        threading.Thread(target=_exit_when_reparented, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # it died before the above took effect
        os._exit(1)
