"""A check's progress: written by the check's process as it goes, read by the judge (for the
verdict of a check that is stopped: timed out, cancelled, its process killed) and by the
owner's page while it runs.

The file is ``DIR/checks/<job id>.json``: the step running now (``building: make``,
``playing nine-mens-morris game 2 of 2 as black``), the lines of the steps done (the
build's result, each game's), and the build's output so far (its first
:data:`HEAD_CAP` and last :data:`TAIL_CAP` bytes).  It is rewritten whole (a new file
renamed over the old one: a reader never sees half of it), at most every
:data:`WRITE_EVERY_S` for output alone, at once for a step, and removed when the verdict is
stored.  Its size is bounded whatever the build prints.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from arena.server.common import CHECKS

#: build output kept: its first HEAD_CAP and last TAIL_CAP bytes
HEAD_CAP = 4 * 1024
TAIL_CAP = 12 * 1024
#: lines of finished steps kept (the first ones; a check has a few dozen)
MAX_LINES = 200
#: seconds between two rewrites of the file for output alone
WRITE_EVERY_S = 0.5


def progress_path(folder: Path, job_id: int) -> Path:
    """The progress file of check ``job_id`` in competition ``folder``."""
    return folder / CHECKS / f"{job_id}.json"


class CheckProgress:
    """The writer, in the check's process (see the module's docstring).  Thread-safe: the
    build's output arrives on the build's reader thread."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.step_text = "starting"
        self.lines: list[str] = []
        self.head = bytearray()
        self.tail = bytearray()
        self.cut = 0
        self._lock = threading.Lock()
        self._written = 0.0
        self._timer: threading.Timer | None = None
        self._write()

    def step(self, text: str) -> None:
        """The check now does ``text`` (written at once)."""
        with self._lock:
            self.step_text = text
            self._write()

    def line(self, text: str) -> None:
        """A step's result (written at once)."""
        with self._lock:
            if len(self.lines) < MAX_LINES:
                self.lines.append(text)
            self._write()

    def output(self, chunk: bytes) -> None:
        """More of the build's output (written at most every :data:`WRITE_EVERY_S`)."""
        with self._lock:
            room = HEAD_CAP - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            self.tail += chunk
            if len(self.tail) > TAIL_CAP:
                self.cut += len(self.tail) - TAIL_CAP
                del self.tail[:len(self.tail) - TAIL_CAP]
            wait = self._written + WRITE_EVERY_S - time.monotonic()
            if wait <= 0:
                self._write()
            elif self._timer is None:  # output that comes, then stops, is written too
                self._timer = threading.Timer(wait, self._flush)
                self._timer.daemon = True
                self._timer.start()

    def _flush(self) -> None:
        with self._lock:
            self._timer = None
            self._write()

    def output_text(self) -> str:
        middle = f"\n[... {self.cut} bytes left out ...]\n" if self.cut else ""
        return (bytes(self.head).decode("utf-8", "replace") + middle
                + bytes(self.tail).decode("utf-8", "replace"))

    def _write(self) -> None:
        data = {"step": self.step_text, "lines": self.lines, "output": self.output_text()}
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:  # readable by the server's user alone (it holds a participant's build output)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            with open(fd, "w", encoding="utf-8") as f:
                os.fchmod(fd, 0o600)  # a left-over temporary file kept its mode
                f.write(json.dumps(data))
            os.replace(tmp, self.path)
        except OSError:  # the folder went (the judge gave the check up): nothing to tell
            pass
        self._written = time.monotonic()


def read_progress(folder: Path, job_id: int) -> tuple[str, str]:
    """(the step running, the text so far: finished steps' lines and the build's output)
    of check ``job_id``; ("", "") when there is no progress file."""
    try:
        data: Any = json.loads(progress_path(folder, job_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "", ""
    if not isinstance(data, dict):
        return "", ""
    lines = [str(x) for x in data.get("lines", []) if isinstance(x, str)]
    output = str(data.get("output") or "")
    if output.strip():
        lines += ["build output so far:", *(f"| {ln}" for ln in output.rstrip().splitlines())]
    return str(data.get("step") or ""), "\n".join(lines)


def remove_progress(folder: Path, job_id: int) -> None:
    """Remove check ``job_id``'s progress file (its verdict is stored)."""
    progress_path(folder, job_id).unlink(missing_ok=True)
