"""Guarded parsing: run a library parser in a forked child before trusting it in this process.

Some libraries do not survive malformed input: OpenFHE's deserializers die with SIGSEGV,
SIGFPE or an uncaught C++ exception (SIGABRT) on altered bytes, scipy's Matrix Market reader
with SIGSEGV on a truncated last line. :func:`isolated` runs a call in a child made by
``fork`` (copy-on-write, yet not free: a guarded call took 3.4 ms in a process of 31 MB, 18 ms beside 2 GB of
numpy arrays, 29 ms in a process of 0.5 GB holding one 2^16 OpenFHE context; ``scripts/fork_cost.py``), with its
address space bounded, ending with this process even when it is killed by SIGKILL (the
parent-death signal, :func:`hepkg.lifeline.end_with`), and returns its (pickled) result: a crash, a hang or a memory blow-up
becomes :class:`CorruptedData`; an ordinary Python exception is re-raised here unchanged.
:func:`probe` only checks that the call survives, and the caller then parses for real.
Where ``fork`` does not exist (Windows) the call runs in this process. A forked child cannot run OpenMP
parallel regions once the parent has (libgomp's thread pool does not survive ``fork``: the
child hangs), so code that a probe runs checks :func:`in_child` before any such work.
"""
from __future__ import annotations

import faulthandler
import os
import pickle
import select
import signal
import time

from hepkg.lifeline import end_with

from .errors import CorruptedData

#: seconds a probe may take, plus one per this many payload bytes
TIMEOUT_S, BYTES_PER_S = 60.0, 20_000_000
#: address space the child may add beyond its parent's: fixed part plus a multiple of the payload
EXTRA_MEMORY, MEMORY_PER_BYTE = 4 << 30, 16


_IN_CHILD = [False]


def in_child() -> bool:
    """True inside a probe's forked child."""
    return _IN_CHILD[0]


def _child(parent: int, fn, args, memory: int, out: int) -> None:
    """Body of the forked child: dies with ``parent``, bounded memory, run ``fn``, report its result, exit
    without cleanup."""
    code, report = 0, b""
    _IN_CHILD[0] = True
    faulthandler.disable()  # a crash here is the expected outcome, not a traceback to print
    try:
        end_with(parent, "fork")  # a hanging parse must not outlive a killed parent
        import resource  # POSIX only, like fork

        limit = _address_space() + EXTRA_MEMORY + MEMORY_PER_BYTE * memory
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
        report = pickle.dumps(fn(*args), protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
        code = 1
        try:
            report = pickle.dumps(exc)
        except Exception:  # noqa: BLE001 - an exception that does not pickle
            report = pickle.dumps(CorruptedData(f"{type(exc).__name__}: {exc}"))
    try:
        os.write(out, report)
    finally:
        os._exit(code)


def _address_space() -> int:
    """Virtual memory of this process in bytes (Linux), else 0."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def _read_all(fd: int, deadline: float | None) -> bytes | None:
    """Everything written to ``fd`` until EOF, or None when the deadline (if any) passes."""
    chunks = []
    while True:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and (left <= 0 or not select.select([fd], [], [], left)[0]):
            return None
        block = os.read(fd, 1 << 16)
        if not block:
            return b"".join(chunks)
        chunks.append(block)


def _survive(fn, *args) -> None:
    fn(*args)


def probe(fn, *args, what: str, size: int = 0) -> None:
    """Run ``fn(*args)`` in a forked child; raise what it raised, or CorruptedData if it died.

    ``what`` names the input in messages; ``size`` (bytes parsed) scales the time and
    memory the child may use. Where there is no ``fork``, nothing runs (the caller parses anyway).
    """
    if hasattr(os, "fork"):
        isolated(_survive, fn, *args, what=what, size=size)


def isolated(fn, *args, what: str, size: int = 0, timed: bool = True, largest: int | None = None):
    """``fn(*args)`` computed in a forked child and returned (it must pickle); what it raised, or
    CorruptedData if it died. ``timed=False`` lifts the time limit (long legitimate parses); ``largest``:
    where ``fn`` parses several inputs one after another (``size`` bytes in all), the largest one's bytes,
    which scale the memory instead of ``size``."""
    if not hasattr(os, "fork"):
        return fn(*args)
    read_end, write_end = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        os.close(read_end)
        _child(parent, fn, args, size if largest is None else largest, write_end)
    os.close(write_end)
    try:
        report = _read_all(read_end, time.monotonic() + TIMEOUT_S + size / BYTES_PER_S if timed else None)
    finally:
        os.close(read_end)
    if report is None:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if report is None:
        raise CorruptedData(f"{what}: parsing did not finish in time (the bytes are malformed)")
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        raise CorruptedData(f"{what}: the library's parser crashed ({name}) on these bytes: they are malformed")
    if os.WEXITSTATUS(status):
        exc = pickle.loads(report) if report else CorruptedData(f"{what}: the parser failed")
        if isinstance(exc, MemoryError):
            raise CorruptedData(f"{what}: parsing exhausted memory (a size field is implausible)") from None
        raise exc
    return pickle.loads(report)
