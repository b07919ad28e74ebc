"""What the device pipelines need of CuPy beyond the engine's strict stand-in (:mod:`hepkg.rns.standin`), added
for a test: streams (per-thread current stream, each launch recorded with its thread and stream), events, the
device's properties, and a memory pool whose bytes in use are the live device arrays (each numpy array that owns
its data inside a stand-in array, released when numpy frees it), reported to the allocator hook CuPy offers
(``cuda.set_allocator``) at every allocation, as CuPy's pool does.

``with extended(monkeypatch) as cp:`` installs the stand-in as ``cupy`` with these additions; ``cp.LAUNCHES``
lists (thread id, stream id) per launch while ``cp.RECORD_STREAMS`` is set."""
from __future__ import annotations

import contextlib
import threading
import time
import weakref

from hepkg.rns import standin


class _State:
    def __init__(self):
        self.live, self.peak, self.tracked = 0, 0, {}
        self.allocator = None
        self.lock = threading.Lock()
        self.local = threading.local()
        self.launches: list = []
        self.record = False


class Stream:
    _ids = iter(range(1, 1 << 30))

    def __init__(self, non_blocking: bool = False, null: bool = False):
        self.id = self.ptr = 0 if null else next(Stream._ids)
        self.non_blocking, self.synchronized = non_blocking, 0

    def __enter__(self):
        stack = _STATE.local.__dict__.setdefault("stack", [])
        stack.append(self)
        return self

    def __exit__(self, *exc):
        _STATE.local.stack.pop()

    def synchronize(self) -> None:
        self.synchronized += 1


_NULL = Stream(null=True)


def _current() -> Stream:
    stack = getattr(_STATE.local, "stack", None)
    return stack[-1] if stack else _NULL


class Event:
    def __init__(self):
        self.t = None

    def record(self, stream=None) -> None:
        self.t = time.perf_counter()

    def synchronize(self) -> None:
        pass


class _Pool:
    def malloc(self, size):
        return size

    def used_bytes(self) -> int:
        return _STATE.live

    def free_bytes(self) -> int:
        return 0

    def total_bytes(self) -> int:
        return _STATE.live


_STATE = _State()
_POOL = _Pool()


def _release(key: int, nbytes: int) -> None:
    with _STATE.lock:
        _STATE.live -= nbytes
        _STATE.tracked.pop(key, None)


def _init(self, a) -> None:
    self._a = a
    if a.base is None and id(a) not in _STATE.tracked:       # an array that owns its data: an allocation
        with _STATE.lock:
            _STATE.live += a.nbytes
            _STATE.peak = max(_STATE.peak, _STATE.live)
            _STATE.tracked[id(a)] = weakref.finalize(a, _release, id(a), a.nbytes)
        if _STATE.allocator is not None:
            _STATE.allocator(a.nbytes)


def _launch(name: str, original=standin._launch) -> None:
    if _STATE.record:
        _STATE.launches.append((threading.get_ident(), _current().id))
    original(name)


@contextlib.contextmanager
def extended(monkeypatch):
    """The stand-in installed as ``cupy``, extended as the module docstring says; removed after the block."""
    global _STATE
    _STATE = _State()
    cp = standin.install()
    cuda = cp.cuda
    monkeypatch.setattr(standin.ndarray, "__init__", _init)
    monkeypatch.setattr(standin, "_launch", _launch)
    monkeypatch.setattr(cuda, "Stream", Stream, raising=False)
    monkeypatch.setattr(cuda, "Event", Event, raising=False)
    monkeypatch.setattr(cuda, "get_current_stream", _current, raising=False)
    monkeypatch.setattr(cuda, "get_elapsed_time", lambda a, b: 1e3 * (b.t - a.t), raising=False)
    monkeypatch.setattr(cuda, "get_allocator", lambda: _STATE.allocator, raising=False)
    monkeypatch.setattr(cuda, "set_allocator", lambda fn=None: setattr(_STATE, "allocator", fn), raising=False)
    monkeypatch.setattr(cuda, "get_default_memory_pool", lambda: _POOL)
    monkeypatch.setattr(cp, "get_default_memory_pool", lambda: _POOL)
    monkeypatch.setattr(cp, "EXT", _STATE, raising=False)
    try:
        yield cp
    finally:
        standin.uninstall()
