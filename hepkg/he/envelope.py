"""Framing of serialized hepkg objects: magic, tag, metadata, library payload.

``MAGIC | tag | u32 meta length | meta (JSON) | payload``, the tag being SHA-256 of
everything after it (HMAC-SHA256 under a key: twice as fast as BLAKE2b where the CPU has SHA
instructions, which matters for megabyte ciphertexts). Objects made under a context (ciphertexts, the parties' messages)
are tagged with the context's *session key*, a 32-byte secret generated with the keys
and shared with the parties inside the public context: the tag is then a MAC, so bytes
altered or forged by anyone outside the session raise :class:`CorruptedData` before any
HE library parses them (OpenFHE's parser aborts the interpreter on some malformed
inputs). Public contexts themselves carry an unkeyed checksum, which anyone on the path can
recompute: a context is authenticated by its :func:`fingerprint` (that checksum, a SHA-256 of
everything after it), which the party that made it publishes over an authenticated channel and
the receiving party pins (:func:`hepkg.he.load_context`); it is then parsed in a guarded child
process first (see :mod:`hepkg.he.guard`). The metadata is checked field by field
(:func:`require`), so a missing or ill-typed field is reported by name. A message that wraps a ciphertext
of the same session (:func:`seal`) tags its metadata and the ciphertext's own tag, so the ciphertext's bytes are
hashed once.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import struct

from .errors import CorruptedData

MAGIC = b"HEPKG\x03"
#: Earlier formats: 1 unauthenticated, 2 tagged with BLAKE2b.
_OLD = {b"HEPKG\x01": "format 1 (unauthenticated)", b"HEPKG\x02": "format 2 (BLAKE2b tags)"}
TAG_BYTES = 32
KEY_BYTES = 32
_FAILED = "authentication failed: the bytes were altered, truncated, or made in another session (another context's key)"


def _tag(parts, key: bytes | None) -> bytes:
    digest = hmac.new(key, digestmod=hashlib.sha256) if key else hashlib.sha256()
    for part in parts:
        digest.update(part)
    return digest.digest()


def pack(kind: str, meta: dict, payload, key: bytes | None = None) -> bytes:
    """Bytes of a ``kind`` object; ``key`` (a session key) makes the tag a MAC.

    ``payload``: bytes, or a list of bytes-like parts written back to back (copied once).
    """
    head = json.dumps(dict(meta, kind=kind), sort_keys=True).encode()
    parts = [struct.pack("<I", len(head)), head, *(payload if isinstance(payload, (list, tuple)) else [payload])]
    return b"".join([MAGIC, _tag(parts, key), *parts])


def seal(kind: str, meta: dict, inner, key: bytes) -> bytes:
    """Bytes of a ``kind`` object that wraps ``inner``, hepkg bytes tagged under the same session ``key`` (a
    serialized ciphertext). Its MAC covers the metadata and ``inner``'s own tag, not ``inner``'s bytes a second
    time, so a megabyte ciphertext is hashed once on each side. :func:`unseal` gives ``inner`` back unchecked:
    what reads it checks its tag (``Context.deserialize`` does), and that tag binds its bytes."""
    head = json.dumps(dict(meta, kind=kind), sort_keys=True).encode()
    parts = [struct.pack("<I", len(head)), head]
    return b"".join([MAGIC, _tag([*parts, _inner_tag(inner)], key), *parts, inner])


def unseal(data, kind: str, key: bytes) -> tuple[dict, memoryview]:
    """(meta, inner) of ``data``, which must hold a ``kind`` object :func:`seal` made under ``key``; ``inner``'s own
    tag is for its reader to check."""
    tag, rest = _split(data)
    n = _head_length(rest, kind)
    inner = rest[4 + n:]
    try:
        inner_tag = _inner_tag(inner)
    except CorruptedData:
        inner_tag = None
    if inner_tag is None or _tag([rest[:4 + n], inner_tag], key) != tag:
        if _tag([rest], key) == tag:       # a message of this session packed whole (pack), not sealed
            _meta(rest, n, kind)           # names its kind where it is another
            raise CorruptedData(f"the {kind} was packed whole, not sealed around a ciphertext (another hepkg version?)")
        raise CorruptedData(f"{_FAILED} ({len(data)} bytes, expected a {kind})")
    return _meta(rest, n, kind), inner.toreadonly()


def unpack(data, kind: str, key: bytes | None = None) -> tuple[dict, memoryview]:
    """(meta, payload) of ``data``, which must hold a ``kind`` object tagged with ``key``.

    The payload is a read-only view into ``data`` (no copy of a large message)."""
    tag, rest = _split(data)
    if len(rest) < 4 or _tag([rest], key) != tag:
        what = _FAILED if key else "checksum mismatch: the bytes are truncated or altered"
        raise CorruptedData(f"{what} ({len(data)} bytes, expected a {kind})")
    n = _head_length(rest, kind)
    return _meta(rest, n, kind), rest[4 + n:].toreadonly()


def _split(data) -> tuple[memoryview, memoryview]:
    """(tag, everything after it) of hepkg bytes of this format; CorruptedData for anything else."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise CorruptedData(f"expected bytes, got {type(data).__name__}")
    view = memoryview(data).cast("B")
    if bytes(view[:len(MAGIC)]) in _OLD:
        raise CorruptedData(f"hepkg data in {_OLD[bytes(view[:len(MAGIC)])]}; serialize it again with this version")
    if view[:len(MAGIC)] != MAGIC:
        raise CorruptedData("not hepkg data: the magic header is missing")
    return view[len(MAGIC):len(MAGIC) + TAG_BYTES], view[len(MAGIC) + TAG_BYTES:]


def _inner_tag(inner) -> bytes:
    """The tag of wrapped hepkg bytes; CorruptedData where they are not hepkg data."""
    tag, rest = _split(inner)
    if len(tag) != TAG_BYTES or len(rest) < 4:
        raise CorruptedData("the wrapped bytes are truncated hepkg data")
    return bytes(tag)


def _head_length(rest, kind: str) -> int:
    if len(rest) < 4:
        raise CorruptedData(f"the {kind} is truncated")
    (n,) = struct.unpack_from("<I", rest)
    if 4 + n > len(rest):
        raise CorruptedData(f"the {kind}'s metadata is truncated")
    return n


def _meta(rest, n: int, kind: str) -> dict:
    try:
        meta = json.loads(bytes(rest[4:4 + n]))
    except (UnicodeDecodeError, ValueError) as exc:
        raise CorruptedData(f"the {kind}'s metadata is not valid JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise CorruptedData(f"the {kind}'s metadata is a {type(meta).__name__}, not an object")
    if meta.get("kind") != kind:
        raise CorruptedData(f"expected a serialized {kind}, got a {meta.get('kind')!r}")
    return meta


def fingerprint(data) -> str:
    """The hex SHA-256 that identifies hepkg bytes made without a key (a public context): the tag they carry,
    the digest of everything after it. Its maker publishes it; :func:`unpack` checks the tag against the bytes,
    so bytes that unpack and carry the published fingerprint are the maker's, bit for bit."""
    if not isinstance(data, (bytes, bytearray, memoryview)) or bytes(memoryview(data)[:len(MAGIC)]) != MAGIC:
        raise CorruptedData("not hepkg data: the magic header is missing")
    return bytes(memoryview(data)[len(MAGIC):len(MAGIC) + TAG_BYTES]).hex()


def peek(data) -> dict | None:
    """The metadata of ``data`` WITHOUT checking its tag (for error messages only), or None."""
    try:
        rest = memoryview(data)[len(MAGIC) + TAG_BYTES:]
        meta = json.loads(bytes(rest[4:4 + struct.unpack("<I", rest[:4])[0]]))
    except (TypeError, ValueError, struct.error):
        return None
    return meta if isinstance(meta, dict) else None


def require(meta: dict, spec: dict, what: str) -> dict:
    """``meta`` if every field of ``spec`` (name -> check(value) -> bool) is present and valid."""
    for name, check in spec.items():
        if name not in meta:
            raise CorruptedData(f"{what}: metadata field {name!r} is missing")
        if not check(meta[name]):
            raise CorruptedData(f"{what}: metadata field {name!r} has an invalid value {meta[name]!r}")
    return meta


def is_int(lo: int = 0, hi: int | None = None):
    """A check for an integer (not a bool) in [lo, hi]."""
    return lambda v: type(v) is int and v >= lo and (hi is None or v <= hi)


def is_hex(nbytes: int):
    """A check for a hex string of ``nbytes`` bytes."""
    def check(v) -> bool:
        try:
            return isinstance(v, str) and len(bytes.fromhex(v)) == nbytes
        except ValueError:
            return False
    return check


def frame(parts) -> list:
    """Length-prefixed byte strings (a backend's public payload), as a list of parts for :func:`pack` to
    write back to back: the parts (tens of megabytes of keys) are copied once, into the packed bytes."""
    return [x for p in parts for x in (struct.pack("<Q", len(p)), p)]


def unframe(data, count: int, what: str = "payload") -> list[bytes]:
    """Split :func:`frame` output back into ``count`` parts; CorruptedData if it does not fit."""
    parts, pos = [], 0
    for _ in range(count):
        if pos + 8 > len(data):
            raise CorruptedData(f"{what} is truncated")
        (size,) = struct.unpack_from("<Q", data, pos)
        if pos + 8 + size > len(data):
            raise CorruptedData(f"{what} is truncated")
        parts.append(bytes(data[pos + 8:pos + 8 + size]))
        pos += 8 + size
    if pos != len(data):
        raise CorruptedData(f"{what} has {len(data) - pos} trailing bytes")
    return parts
