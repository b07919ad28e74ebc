"""The device side of the face-search pipelines (:mod:`.gpu`): the device and Eq. 6, sizes known before anything
is loaded, device memory read at every allocation, phase clocks, a pool of streams fed by host threads, and the
rotation keys a pipeline moves between the host, the device and the client.

The device is whatever the ``rns`` engine runs on (``HEPKG_RNS_XP``: numpy on the CPU, cupy on an NVIDIA GPU).
On numpy a documented CPU stand-in (:func:`device_info`) sizes the pool, phases are timed by ``perf_counter``,
device memory is not measured (the host's peak RSS stands in) and every number is a CPU measurement (on the
engine's numba kernels where numba is installed, else its numpy reference).

Keys: the backend protocol fixes a context's rotation keys when it is made; the paper's pipelines generate a
variant's keys on the client, drop the host-only and temporary ones on the device, and (Sec. 5.1.3's alternative)
lend the host's baby-step keys to the device for one query. :func:`keep_keys`, :func:`generate_keys` and
:func:`upload_keys` do that through the rns engine's own methods (``free_rotation_keys``,
``gen_rotation_keys``, its key set): the one place the device pipelines leave the protocol.
"""
from __future__ import annotations

import os
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from hepkg import he
from hepkg.he import envelope
from hepkg.he.backends.rns import engine_params
from hepkg.rns import device as rdev
from hepkg.rns.basis import digit_rows
from hepkg.rns.fused import workspace_bytes
from hepkg.rns.keys import SwitchKey
from hepkg.rns.ntt import NTT

__all__ = ["DeviceInfo", "device_info", "stream_pool_size", "sizes", "window", "PhaseTimer", "StreamPool",
           "array_module", "keep_keys", "generate_keys", "upload_keys", "TEMPS_PER_GROUP", "SMS_PER_STREAM",
           "MAX_STREAMS"]

#: Eq. 6: ciphertext-sized temporaries per group in flight (the paper's), SMs per stream, the cap
TEMPS_PER_GROUP, SMS_PER_STREAM, MAX_STREAMS = 40, 4, 32


# ---------------------------------------------------------------------------- the device and Eq. 6

@dataclass(frozen=True)
class DeviceInfo:
    """What Eq. 6 reads from the device: streaming multiprocessors and free memory."""
    name: str
    kind: str           # 'cuda' or 'cpu stand-in'
    sms: int
    free_bytes: int
    total_bytes: int


def device_info(xp=None) -> DeviceInfo:
    """The device the rns engine runs on (``xp``: default ``HEPKG_RNS_XP``).

    CuPy: the GPU's name, multiprocessor count and free / total memory. numpy: a CPU stand-in with
    4 "SMs" per core (so Eq. 6's SM term is the core count) and the host's available memory."""
    xp = rdev.array_module(os.environ.get("HEPKG_RNS_XP", "numpy") if xp is None else xp)
    if rdev.on_gpu(xp):
        props = xp.cuda.runtime.getDeviceProperties(xp.cuda.Device().id)
        free, total = xp.cuda.runtime.memGetInfo()
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        return DeviceInfo(name, "cuda", int(props["multiProcessorCount"]), int(free), int(total))
    cores = os.cpu_count() or 1
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return DeviceInfo(f"CPU stand-in ({cores} cores, {rdev.path(xp)} kernels)", "cpu stand-in",
                      SMS_PER_STREAM * cores, int(rdev.free_bytes(np)), int(total))


def stream_pool_size(sms: int, free_bytes: int, ct_bytes: int) -> int:
    """Eq. 6: S = min(floor(SMs / 4), floor(0.2 F / (40 C)), 32), at least 2."""
    if min(sms, free_bytes, ct_bytes) <= 0:
        raise ValueError(f"Eq. 6 needs positive SMs, free memory and ciphertext size, got {sms}, {free_bytes}, "
                         f"{ct_bytes}")
    return max(2, min(sms // SMS_PER_STREAM, int(0.2 * free_bytes) // (TEMPS_PER_GROUP * ct_bytes), MAX_STREAMS))


def sizes(public: bytes) -> dict:
    """Bytes of what an rns public context holds, read from its metadata alone (nothing parsed or loaded, the tag
    not checked: :func:`hepkg.he.load_context` checks it when the context is loaded): ``ciphertext`` (level 0),
    ``switch_key`` (one rotation or relinearization key), ``tables`` (the engine's NTT tables), ``limbs`` (Q's
    primes), ``steps`` (its rotation steps), ``keys`` (rotation keys + the relinearization key) and ``workspace``
    (the engine's fixed intermediates kept per stream, :func:`hepkg.rns.fused.workspace_bytes`)."""
    meta = envelope.peek(public) if isinstance(public, (bytes, bytearray, memoryview)) else None
    if not isinstance(meta, dict) or meta.get("kind") != "context" or meta.get("backend") != "rns":
        raise ValueError("the device pipelines need the client's rns public context (ctx.to_bytes()), got "
                         f"{'another backend' if isinstance(meta, dict) else type(public).__name__}")
    try:
        rp = engine_params(he.get_params(meta["params"]["name"]))
        steps = sorted(int(s) for s in meta["steps"])
        keys = len(steps) + bool(meta["relin"])
    except (KeyError, TypeError, ValueError, he.ParameterError) as exc:
        raise he.CorruptedData(f"the public context's metadata does not describe an rns context: {exc}") from None
    nq, full = len(rp.q_primes), len(rp.q_primes) + len(rp.p_primes)
    digits = len(digit_rows(nq, 0, rp.dnum))
    return dict(ciphertext=2 * nq * rp.n * 8, switch_key=2 * digits * full * rp.n * 8,
                tables=NTT.table_bytes(rp.n, full), limbs=nq, steps=steps, keys=keys, n=rp.n,
                workspace=workspace_bytes(rp.n, nq, full - nq, digits))


@contextmanager
def array_module(name: str):
    """HEPKG_RNS_XP set to ``name`` while contexts are made or loaded (the host side always runs on the CPU)."""
    old = os.environ.get("HEPKG_RNS_XP")
    os.environ["HEPKG_RNS_XP"] = name
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("HEPKG_RNS_XP", None)
        else:
            os.environ["HEPKG_RNS_XP"] = old


# ---------------------------------------------------------------------------- device memory

class _Window:
    __slots__ = ("base", "peak", "end")

    def __init__(self, used: int):
        self.base = self.peak = self.end = used

    @property
    def rise(self) -> int:
        """The window's peak above the bytes in use when it opened."""
        return self.peak - self.base


_OPEN: list = []
_HOOK = dict(xp=None, previous=None)
_LOCK = threading.Lock()


def _note(used: int) -> None:
    for w in _OPEN:
        if used > w.peak:
            w.peak = used


def _install(xp) -> None:
    """CuPy's allocator replaced by the memory pool's, each allocation followed by a reading of the bytes in use."""
    pool = xp.get_default_memory_pool()

    def alloc(size):
        mem = pool.malloc(size)
        _note(int(pool.used_bytes()))
        return mem
    _HOOK.update(xp=xp, previous=xp.cuda.get_allocator())
    xp.cuda.set_allocator(alloc)


@contextmanager
def window(xp):
    """Device bytes in use (CuPy's memory pool) and their peak during the block, read at every allocation, so no
    peak between two readings escapes: ``with window(xp) as w: ...`` then ``w.base``, ``w.peak``, ``w.end``,
    ``w.rise`` (peak above base). Windows nest; on the CPU the block runs unmeasured (``w`` is None)."""
    if not rdev.on_gpu(xp):
        yield None
        return
    pool = xp.get_default_memory_pool()
    with _LOCK:
        if _HOOK["xp"] is not xp:
            _install(xp)
        w = _Window(int(pool.used_bytes()))
        _OPEN.append(w)
    try:
        yield w
    finally:
        with _LOCK:
            w.end = int(pool.used_bytes())
            w.peak = max(w.peak, w.end)
            _OPEN.remove(w)
            if not _OPEN:
                xp.cuda.set_allocator(_HOOK["previous"])
                _HOOK.update(xp=None, previous=None)


# ---------------------------------------------------------------------------- timing and streams

class PhaseTimer:
    """Seconds per phase: CUDA events on CuPy (the device's own clock, every stream done), ``perf_counter`` on
    numpy."""

    def __init__(self, xp):
        self.xp, self.seconds = xp, Counter()

    @contextmanager
    def phase(self, name: str):
        if not rdev.on_gpu(self.xp):
            start = time.perf_counter()
            try:
                yield
            finally:
                self.seconds[name] += time.perf_counter() - start
            return
        cuda = self.xp.cuda
        start, end = cuda.Event(), cuda.Event()
        start.record()
        try:
            yield
        finally:
            cuda.Device().synchronize()  # every stream of the pool done
            end.record()
            end.synchronize()
            self.seconds[name] += cuda.get_elapsed_time(start, end) / 1e3


class StreamPool:
    """``size`` CUDA streams with up to ``size`` items in flight at once, the paper's waves of S groups (Sec.
    5.1.2) without the wait for a wave's slowest group. ``issue="threads"``: ``size`` host threads, each launching
    on a non-blocking stream of its own and waiting for its item (on the CPU: the threads alone, numpy and the numba
    kernels releasing the GIL). ``issue="caller"``: the calling thread launches every item, item i on stream
    i mod ``size``, waiting for that stream's previous item first (no host thread contends for the GIL)."""

    ISSUES = ("threads", "caller")

    def __init__(self, xp, size: int, issue: str = "threads"):
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"a stream pool needs a positive integer size, got {size!r}")
        if issue not in self.ISSUES:
            raise ValueError(f"issue must be one of {', '.join(self.ISSUES)}, got {issue!r}")
        self.xp, self.size, self.issue = xp, size, issue
        self._local = threading.local()
        self._threads = (ThreadPoolExecutor(size, thread_name_prefix="hepkg-stream", initializer=self._bind)
                         if issue == "threads" else None)
        self._streams: list = []

    def _new_stream(self):
        return self.xp.cuda.Stream(non_blocking=True) if rdev.on_gpu(self.xp) else None

    def _bind(self) -> None:
        self._local.stream = self._new_stream()

    def _run(self, fn, item):
        stream = self._local.stream
        if stream is None:
            return fn(item)
        with stream:
            out = fn(item)
        stream.synchronize()          # its results ready for the caller's stream
        return out

    def _issue(self, fn, items) -> list:
        if not rdev.on_gpu(self.xp):
            return [fn(item) for item in items]
        while len(self._streams) < min(self.size, len(items)):
            self._streams.append(self._new_stream())
        out = []
        for i, item in enumerate(items):
            stream = self._streams[i % self.size]
            if i >= self.size:
                stream.synchronize()  # its previous item done: at most size in flight
            with stream:
                out.append(fn(item))
        for stream in self._streams[:len(items)]:
            stream.synchronize()
        return out

    def map(self, fn, items) -> list:
        """``[fn(item) for item in items]``, ``size`` at a time; what the caller's stream queued before (the
        query's upload) is done before any item starts."""
        items = list(items)
        if rdev.on_gpu(self.xp):
            self.xp.cuda.get_current_stream().synchronize()
        if self._threads is None:
            return self._issue(fn, items)
        return list(self._threads.map(self._run, [fn] * len(items), items))

    def close(self) -> None:
        if self._threads is not None:
            self._threads.shutdown(wait=True)


# ---------------------------------------------------------------------------- keys

def _engine(ctx):
    if ctx.backend != "rns":
        raise ValueError(f"the device pipelines run on the rns backend, not {ctx.backend!r}")
    return ctx._eng


def keep_keys(ctx, steps) -> list[int]:
    """Drop every rotation key of ``ctx`` but ``steps``, releasing its memory; the dropped steps."""
    eng = _engine(ctx)
    keep = frozenset(int(s) % ctx.period for s in steps)
    drop = sorted(set(ctx.keys.steps) - keep)
    eng.free_rotation_keys(drop)
    ctx.keys.steps = frozenset(ctx.keys.steps) & keep
    return drop


def generate_keys(ctx, steps) -> list[int]:
    """Make the rotation keys of ``steps`` that the client's (secret) context lacks; the steps made."""
    if not ctx.has_secret:
        raise PermissionError("rotation keys are made with the secret key: this context has none")
    new = sorted({int(s) % ctx.period for s in steps} - set(ctx.keys.steps) - {0})
    _engine(ctx).gen_rotation_keys(new)
    ctx.keys.steps = frozenset(ctx.keys.steps) | set(new)
    return new


def upload_keys(device_ctx, host_ctx, steps) -> int:
    """Copy the rotation keys of ``steps`` from ``host_ctx`` (numpy) into ``device_ctx`` (same keys, same session);
    the bytes uploaded. :func:`keep_keys` frees them again."""
    dev, host = _engine(device_ctx), _engine(host_ctx)
    if device_ctx.key_id != host_ctx.key_id:
        raise he.ContextMismatch("keys are lent between the host and the device context of one session only")
    steps = sorted({int(s) % device_ctx.period for s in steps} - {0})
    missing = [s for s in steps if s not in host.keys.galois]
    if missing:
        raise he.MissingRotationKey(f"the host context holds no key for steps {missing[:8]}")
    moved = 0
    for s in steps:
        key = host.keys.galois[s]
        dev.keys.galois[s] = SwitchKey(rdev.to_device(key.b, dev.xp), rdev.to_device(key.a, dev.xp))
        moved += key.nbytes
    device_ctx.keys.steps = frozenset(device_ctx.keys.steps) | set(steps)
    return moved
