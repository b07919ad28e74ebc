"""Test-session setup shared by tests/ and notebooks/ (executed by nbval in `make test`).

Every test session writes its artifacts, and the notebooks' grid stores, to a fresh temporary
folder ($HEPKG_ARTIFACTS), never to the repository's artifacts/ or to the per-machine cache.
Under pytest-xdist the workers share the controller's folder, so that the values a notebook
recorded under nbval are checked by ``tests/test_notebooks.py`` on the same worker, right after
(``--dist loadfile``, see below).
"""
import atexit
import collections
import os
import re
import shutil
import tempfile

import pytest

_SHARED = "HEPKG_TEST_SESSION_ARTIFACTS"
if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get(_SHARED):
    os.environ["HEPKG_ARTIFACTS"] = os.environ[_SHARED]  # the controller's folder; it removes it
else:
    _ARTIFACTS = tempfile.mkdtemp(prefix="hepkg-test-artifacts-")
    os.environ["HEPKG_ARTIFACTS"] = os.environ[_SHARED] = _ARTIFACTS
    atexit.register(shutil.rmtree, _ARTIFACTS, ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` (make test): each test file runs on one worker (its module fixtures built once), and
    each notebook's nbval cells run on the worker that then checks the values the notebook recorded
    (``test_notebook_values[<notebook>]``), right after them. Other modes are xdist's own."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False  # the order pytest_collection_modifyitems below gives

    class ByFileAndNotebook(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            checked = re.search(r"::test_notebook_values\[(\w+)\]$", nodeid)
            return f"notebooks/{checked.group(1)}.ipynb" if checked else nodeid.split("::", 1)[0]

    return ByFileAndNotebook(config, log)


def pytest_collection_modifyitems(items):
    """The notebooks first (the longest units of work), then the test files by decreasing number of tests,
    so that two workers finish close together."""
    files = collections.Counter(item.nodeid.split("::", 1)[0] for item in items)
    items.sort(key=lambda item: (not item.nodeid.startswith("notebooks/"), -files[item.nodeid.split("::", 1)[0]],
                                 item.nodeid.split("::", 1)[0]))
