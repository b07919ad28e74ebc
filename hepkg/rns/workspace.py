"""Fixed workspaces: the intermediates of the kernel paths' compound operations, allocated once per context.

An op's intermediates (ModUp's extensions, the key inner product, ModDown's transforms) live in buffers kept by the
context and reused by every later op: no allocation per op, so no fresh pages to fault on the CPU, no pool calls on
the GPU, and fixed addresses a CUDA graph could capture. Only an op's result is a new array.

A buffer belongs to one name, one thread and (on CuPy) one CUDA stream: ops issued from several threads, or on
several streams, never share one, and ops issued in order on one stream reuse it in that order. It grows to the
largest size asked for (the top level) and is shaped per call as a view.
"""
from __future__ import annotations

import threading

import numpy as np

from .device import on_gpu


class Workspace:
    """The fixed intermediates of one context (one Bases) on the compiled CPU path or CuPy."""

    def __init__(self, xp):
        self.xp = xp
        self._local = threading.local()

    def _stream(self) -> int:
        return int(self.xp.cuda.get_current_stream().ptr) if on_gpu(self.xp) else 0

    def __call__(self, name: str, shape: tuple):
        """The uint64 buffer ``name`` of this thread and stream as a C-contiguous view of ``shape`` (contents
        undefined: the caller writes it whole before reading it)."""
        bufs = self._local.__dict__.setdefault("bufs", {})
        key, size = (name, self._stream()), int(np.prod(shape, dtype=np.int64))
        buf = bufs.get(key)
        if buf is None or buf.size < size:
            buf = bufs[key] = self.xp.empty(size, dtype=np.uint64)
        return buf[:size].reshape(shape)
