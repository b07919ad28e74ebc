"""Downloads into hepkg's cache: streamed with a progress bar, sha256-checked, written atomically.

Checksums are kept in ``checksums.json`` beside the cached files: the first download of a
file records its sha256 (trust on first use) unless the caller pins one, and every later
use verifies the cached bytes against the record, so a truncated or altered file is
detected instead of parsed. A download enters the cache only after ``validate`` accepted
it (e.g. it is a gzip tarball holding the expected matrix): an HTML error page or a
truncated archive leaves nothing behind, neither file nor checksum.
"""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import urllib.error
import urllib.request

from hepkg import atomic

__all__ = ["DEFAULT_BASE_URL", "BASE_URL_ENV", "DatasetError", "ChecksumError", "CorruptDownload", "base_url",
           "suitesparse_url", "sha256_file", "download", "recorded_checksum", "verify_cached"]

#: The SuiteSparse Matrix Collection's Matrix Market tarballs: ``<base>/<Group>/<Name>.tar.gz``.
DEFAULT_BASE_URL = "https://sparse.tamu.edu/MM"
BASE_URL_ENV = "HEPKG_SUITESPARSE_URL"
_REGISTRY = "checksums.json"


class DatasetError(ValueError):
    """A data file or the cache's checksum record is unusable; the message names the file and the fix."""


class ChecksumError(DatasetError):
    """A file's sha256 differs from the pinned or recorded one."""


class CorruptDownload(DatasetError):
    """A download is not what was asked for (an HTML page, a truncated archive); nothing was cached."""


def base_url(override: str | None = None) -> str:
    """The collection's base URL: ``override``, else $HEPKG_SUITESPARSE_URL, else the default."""
    return (override or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")


def suitesparse_url(group: str, name: str, base: str | None = None) -> str:
    return f"{base_url(base)}/{group}/{name}.tar.gz"


def sha256_file(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _registry(folder: pathlib.Path) -> dict:
    path = folder / _REGISTRY
    if not path.exists():
        return {}
    try:
        reg = json.loads(path.read_text())
        problem = None if isinstance(reg, dict) and all(
            isinstance(e, dict) and isinstance(e.get("sha256"), str) for e in reg.values()) \
            else "not a mapping of file name -> {sha256, url}"
    except (UnicodeDecodeError, ValueError) as exc:
        problem = f"{type(exc).__name__}: {exc}"
    if problem:
        raise DatasetError(f"{path}: the checksum record is corrupt ({problem}); delete it and the cached files "
                           f"beside it to download them again")
    return reg


def recorded_checksum(path) -> str | None:
    """The sha256 recorded for a cached file, if any."""
    path = pathlib.Path(path)
    entry = _registry(path.parent).get(path.name)
    return entry["sha256"] if entry else None


def _record(path: pathlib.Path, digest: str, url: str) -> None:
    reg = _registry(path.parent)
    reg[path.name] = dict(sha256=digest, url=url)
    atomic.write_text(path.parent / _REGISTRY, json.dumps(reg, indent=1, sort_keys=True) + "\n")


def verify_cached(path, sha256: str | None = None) -> None:
    """Raise ChecksumError unless the file matches ``sha256`` (or its recorded checksum)."""
    expected = sha256 or recorded_checksum(path)
    if expected is None:
        return
    actual = sha256_file(path)
    if actual != expected:
        raise ChecksumError(f"{path}: sha256 {actual} does not match {expected}; delete the file to download "
                            f"it again")


def download(url: str, dest, *, sha256: str | None = None, validate=None, progress: bool = True,
             timeout: float = 60) -> pathlib.Path:
    """Fetch ``url`` to ``dest`` (atomically) and record or check its sha256.

    ``validate(path)`` inspects the complete download before it replaces ``dest`` and raises
    on bad content (CorruptDownload names the URL and the reason); the checksum is recorded
    only after it passed.
    """
    from tqdm.auto import tqdm

    dest = pathlib.Path(dest)
    digest = hashlib.sha256()
    with urllib.request.urlopen(url, timeout=timeout) as response, atomic.atomic_path(dest) as tmp:
        total = int(response.headers.get("Content-Length") or 0) or None
        with open(tmp, "wb") as out, tqdm(total=total, unit="B", unit_scale=True, desc=dest.name,
                                           disable=not progress) as bar:
            for block in iter(lambda: response.read(1 << 16), b""):
                out.write(block)
                digest.update(block)
                bar.update(len(block))
        if total is not None and tmp.stat().st_size != total:
            raise urllib.error.URLError(f"incomplete download: {tmp.stat().st_size} of {total} bytes")
        if sha256 and digest.hexdigest() != sha256:
            raise ChecksumError(f"{url}: sha256 {digest.hexdigest()} does not match the expected {sha256}")
        if validate is not None:
            try:
                validate(tmp)
            except (DatasetError, ValueError, OSError, EOFError) as exc:
                raise CorruptDownload(f"{url} is not the expected file: {exc}. Nothing was cached; check the URL "
                                      f"(base URL: ${BASE_URL_ENV}) and try again") from exc
    _record(dest, digest.hexdigest(), url)
    return dest
