"""Messages between the parties, as bytes: how communication is measured.

A message is a hepkg envelope (magic, checksum, JSON metadata) whose payload holds numpy
arrays and opaque blobs (serialized ciphertexts) back to back; the metadata records each
part's dtype, shape and length. Truncated or altered bytes raise
:class:`~hepkg.he.CorruptedData`. Packing copies each blob once, into the message; unpacking
returns views into the message, so a party holds the message and one ciphertext at a time.
"""
from __future__ import annotations

import numpy as np

from hepkg.he import envelope
from hepkg.he.errors import CorruptedData

__all__ = ["pack", "unpack"]

_DTYPES = {"int32", "int64", "float64"}


def pack(kind: str, meta: dict, arrays: dict[str, np.ndarray] | None = None, blobs=()) -> bytes:
    """Bytes of a ``kind`` message: JSON-able ``meta``, numeric ``arrays`` and byte ``blobs``."""
    parts, layout = [], {"arrays": [], "blobs": []}
    for name, arr in (arrays or {}).items():
        arr = np.ascontiguousarray(arr)
        if arr.dtype.name not in _DTYPES:
            raise TypeError(f"array {name!r} has dtype {arr.dtype}; messages carry {sorted(_DTYPES)}")
        layout["arrays"].append([name, arr.dtype.name, list(arr.shape)])
        parts.append(arr.tobytes())
    for blob in blobs:
        layout["blobs"].append(len(blob))
        parts.append(blob)
    return envelope.pack(kind, dict(meta, _layout=layout), parts)


def unpack(data: bytes, kind: str) -> tuple[dict, dict[str, np.ndarray], list[memoryview]]:
    """(meta, arrays, blobs) of a message made by :func:`pack`; the blobs are views into ``data``
    (no copy: a party can deserialize one ciphertext at a time)."""
    meta, payload = envelope.unpack(data, kind)
    meta.pop("kind", None)
    layout = meta.pop("_layout", None)
    if layout is None:
        raise CorruptedData(f"{kind} message without a payload layout")
    arrays, blobs, pos = {}, [], 0
    try:
        for name, dtype, shape in layout["arrays"]:
            if dtype not in _DTYPES:
                raise CorruptedData(f"{kind} message: unexpected dtype {dtype!r}")
            n = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
            arrays[name] = np.frombuffer(payload[pos:pos + n], dtype=dtype).reshape(shape).copy()
            pos += n
        for n in layout["blobs"]:
            blobs.append(payload[pos:pos + n])
            pos += n
    except (TypeError, ValueError) as exc:
        raise CorruptedData(f"{kind} message: malformed payload ({exc})") from exc
    if pos != len(payload) or any(len(b) != n for b, n in zip(blobs, layout["blobs"])):
        raise CorruptedData(f"{kind} message: payload is {len(payload)} bytes, layout says {pos}")
    return meta, arrays, blobs
