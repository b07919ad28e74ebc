"""Framing of serialized hepkg objects: magic, checksum, metadata, library payload.

``MAGIC | blake2b-16(rest) | u32 meta length | meta (JSON) | payload``. Unpacking checks
the magic, the length and the checksum, so truncated or altered bytes raise
:class:`CorruptedData` before any HE library parses them.
"""
from __future__ import annotations

import hashlib
import json
import struct

from .errors import CorruptedData

MAGIC = b"HEPKG\x01"
_DIGEST = 16


def pack(kind: str, meta: dict, payload: bytes) -> bytes:
    head = json.dumps(dict(meta, kind=kind), sort_keys=True).encode()
    rest = struct.pack("<I", len(head)) + head + bytes(payload)
    return MAGIC + hashlib.blake2b(rest, digest_size=_DIGEST).digest() + rest


def unpack(data: bytes, kind: str) -> tuple[dict, bytes]:
    """Return (meta, payload) of ``data``, which must hold a ``kind`` object."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise CorruptedData(f"expected bytes, got {type(data).__name__}")
    data = bytes(data)
    if not data.startswith(MAGIC):
        raise CorruptedData("not hepkg data: the magic header is missing")
    digest, rest = data[len(MAGIC):len(MAGIC) + _DIGEST], data[len(MAGIC) + _DIGEST:]
    if len(rest) < 4 or hashlib.blake2b(rest, digest_size=_DIGEST).digest() != digest:
        raise CorruptedData(f"checksum mismatch: the {len(data)} bytes are truncated or altered")
    (n,) = struct.unpack("<I", rest[:4])
    meta = json.loads(rest[4:4 + n])
    if meta.get("kind") != kind:
        raise CorruptedData(f"expected a serialized {kind}, got a {meta.get('kind')}")
    return meta, rest[4 + n:]


def frame(parts) -> bytes:
    """Length-prefixed concatenation of byte strings (a backend's public payload)."""
    return b"".join(struct.pack("<Q", len(p)) + bytes(p) for p in parts)


def unframe(data: bytes, count: int, what: str = "payload") -> list[bytes]:
    """Split :func:`frame` output back into ``count`` parts; CorruptedData if it does not fit."""
    parts, pos = [], 0
    for _ in range(count):
        if pos + 8 > len(data):
            raise CorruptedData(f"{what} is truncated")
        (size,) = struct.unpack_from("<Q", data, pos)
        if pos + 8 + size > len(data):
            raise CorruptedData(f"{what} is truncated")
        parts.append(data[pos + 8:pos + 8 + size])
        pos += 8 + size
    if pos != len(data):
        raise CorruptedData(f"{what} has {len(data) - pos} trailing bytes")
    return parts
