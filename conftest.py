"""Test-session setup shared by tests/ and notebooks/ (executed by nbval in `make test`).

Every test session writes its artifacts, and the notebooks' grid stores, to a fresh temporary
folder ($HEPKG_ARTIFACTS), never to the repository's artifacts/ or to the per-machine cache.
"""
import atexit
import os
import shutil
import tempfile

_ARTIFACTS = tempfile.mkdtemp(prefix="hepkg-test-artifacts-")
os.environ["HEPKG_ARTIFACTS"] = _ARTIFACTS
atexit.register(shutil.rmtree, _ARTIFACTS, ignore_errors=True)
