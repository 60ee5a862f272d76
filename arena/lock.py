"""One owner per results folder: an OS lock on a file inside it, held for a whole run.

Two runners of one tournament at once would each play every game and both append to
``games.jsonl``.  :class:`FolderLock` makes the second one fail at once with
:class:`FolderInUse` ("results/demo is in use by pid 1234") before it writes anything.

The lock is a POSIX record lock (``fcntl.lockf``) on ``<folder>/.lock``, taken without
waiting, with the holder's pid written into the file so that a refused runner can name it:

* the kernel drops it when the holder dies, however it dies (``kill -9`` included): a lock
  file left behind by a dead runner blocks nobody;
* it belongs to the process, so processes forked by the runner (the worker pool) do not hold
  it: they cannot keep a folder locked after the runner died (a ``flock`` lock, shared by
  every copy of the descriptor, would stay held by a worker still stopping its game); the
  descriptor is opened ``O_CLOEXEC``, so bots and other programs started later never get it;
* POSIX locks are per process, so a second :class:`FolderLock` of the same file in the same
  process would succeed, and closing *any* descriptor of the file would drop the lock: this
  module keeps a registry of the lock files the process holds and refuses a second one
  without opening the file again.  Nothing else should open the lock file.

The lock file is never removed (removing it would let a second runner lock a new file of the
same name while the first still holds the old one).
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Optional

from arena.errors import ArenaError

#: the lock file inside a results folder
LOCK_FILE = ".lock"
#: seconds a refused runner waits for the holder to write its pid (it does so right after
#: taking the lock)
PID_WAIT_S = 1.0

_held: set[str] = set()
_held_guard = threading.Lock()


class FolderInUse(ArenaError):
    """Another process (``pid``) holds the lock of a results folder."""

    def __init__(self, shown: str, pid: Optional[int]) -> None:
        super().__init__(f"{shown} is in use by pid {pid if pid is not None else '?'}")
        self.pid = pid


class FolderLock:
    """The lock of one folder: ``with FolderLock(folder):`` owns it for the block.

    ``shown`` names the folder in the error message (default: ``folder`` as given).  The
    folder must exist.
    """

    def __init__(self, folder: str | os.PathLike[str], shown: Optional[str] = None,
                 name: str = LOCK_FILE) -> None:
        self.path = Path(folder) / name
        self.shown = shown if shown is not None else os.fspath(folder)
        self._fd: Optional[int] = None
        self._key = ""

    @property
    def held(self) -> bool:
        """True while this object holds the lock."""
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock at once, or fail.

        :raises FolderInUse: another process (or another lock object in this one) holds it.
        :raises ArenaError: the lock file cannot be created.
        """
        if self._fd is not None:
            return
        key = os.path.realpath(self.path)
        with _held_guard:
            if key in _held:  # this process holds it: opening the file again would drop it
                raise FolderInUse(self.shown, os.getpid())
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError as e:
                raise ArenaError(f"cannot create the lock file {self.path}: "
                                 f"{e.strerror}") from None
            try:
                self._lock(fd)
            except BaseException:
                os.close(fd)
                raise
            _held.add(key)
        self._fd, self._key = fd, key
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)

    def _lock(self, fd: int) -> None:
        """Lock ``fd``; while another process holds it, wait (briefly) for its pid to read."""
        deadline = time.monotonic() + PID_WAIT_S
        while True:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except OSError as e:
                if e.errno not in (errno.EACCES, errno.EAGAIN):
                    raise ArenaError(f"cannot lock {self.path}: {e.strerror}") from None
            pid = _read_pid(fd)
            if pid is not None or time.monotonic() >= deadline:
                raise FolderInUse(self.shown, pid)
            time.sleep(0.02)  # locked a moment ago: the holder is writing its pid

    def release(self) -> None:
        """Let the lock go (closing the descriptor drops it)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with _held_guard:
            try:
                os.ftruncate(fd, 0)  # no stale pid in a free lock file
            except OSError:
                pass
            os.close(fd)
            _held.discard(self._key)

    def __enter__(self) -> FolderLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]],
                 exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.release()


def _read_pid(fd: int) -> Optional[int]:
    """The pid written in a lock file, or None when it holds none (yet)."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def holder_pid(folder: str | os.PathLike[str]) -> Optional[int]:
    """The pid the holder of ``folder``'s lock wrote into it, if that process is alive; None
    when no process holds it (a released lock holds no pid).  The lock is not tried: taking
    it, even for a moment, could refuse a runner starting then.  Call it from a process that
    does not hold the lock: closing a descriptor of the file would drop this process's own
    lock (see the module's docstring)."""
    try:
        fd = os.open(os.path.join(folder, LOCK_FILE), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        pid = _read_pid(fd)
    finally:
        os.close(fd)
    if pid is None or pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:  # alive, another user's
        return pid
    return pid
