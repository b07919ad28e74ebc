"""Progress bars that show in the notebook and, during ``make reproduce``, in the terminal.

A :class:`Bar` is a ``tqdm.auto`` bar (a widget in JupyterLab); when ``$HEPKG_PROGRESS`` names a
file (``hepkg.reproduce`` sets it for the notebook's kernel) the bar also appends its state there, a
JSON line ``{"desc", "done", "total"}`` at most twice a second and at its end, and :class:`Watcher`
in the runner draws each bar in the terminal: configurations done / total, elapsed, remaining.
"""
from __future__ import annotations

import json
import os
import pathlib
import sys
import threading
import time

ENV = "HEPKG_PROGRESS"
INTERVAL_S = 0.5


class Bar:
    """``tqdm.auto.tqdm(total=..., desc=...)`` that also reports to ``$HEPKG_PROGRESS``."""

    def __init__(self, total: int, desc: str, initial: int = 0, disable: bool = False):
        from tqdm.auto import tqdm

        self._bar = tqdm(total=total, initial=initial, desc=desc, disable=disable)
        self._file = os.environ.get(ENV)
        self.desc, self.total, self.done, self._last = desc, total, initial, 0.0
        self._report(force=True)

    def update(self, n: int = 1) -> None:
        self._bar.update(n)
        self.done += n
        self._report(force=self.done >= self.total)

    def _report(self, force: bool = False) -> None:
        now = time.monotonic()
        if self._file and (force or now - self._last >= INTERVAL_S):
            self._last = now
            with open(self._file, "a") as out:  # one short line per write: readers never see half of one
                out.write(json.dumps(dict(desc=self.desc, done=self.done, total=self.total)) + "\n")

    def close(self) -> None:
        self._report(force=True)
        self._bar.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Watcher:
    """Draws the bars a notebook's kernel reports to ``path`` in this terminal, until :meth:`stop`."""

    def __init__(self, path: pathlib.Path, prefix: str = "    "):
        self.path, self.prefix = pathlib.Path(path), prefix
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _states(self, offset: int) -> tuple[list[dict], int]:
        """The complete lines appended since ``offset``, parsed, and the offset after them."""
        try:
            with open(self.path, "rb") as f:
                f.seek(offset)
                data = f.read()
        except OSError:
            return [], offset
        complete = data[:data.rfind(b"\n") + 1]
        return [json.loads(line) for line in complete.splitlines() if line.strip()], offset + len(complete)

    def _run(self) -> None:
        from tqdm import tqdm

        bar, seen, offset = None, None, 0
        tty = sys.stderr.isatty()
        while True:
            stopping = self._stop.wait(INTERVAL_S)
            states, offset = self._states(offset)
            for state in states:
                if (state["desc"], state["total"]) != seen:
                    if bar is not None:
                        bar.close()
                    seen = (state["desc"], state["total"])
                    bar = tqdm(total=state["total"], initial=state["done"], desc=self.prefix + state["desc"],
                               file=sys.stderr, mininterval=0.5 if tty else 30, dynamic_ncols=True)
                elif state["done"] != bar.n:
                    bar.update(state["done"] - bar.n)
            if stopping:
                break
        if bar is not None:
            bar.close()
