"""The watchdog: what a referee that was killed leaves behind is killed and removed.

Every referee process that makes sandboxes starts one watchdog (:func:`ensure_watchdog`:
``python -m arena.sandbox --watch <referee pid>``, :func:`watch_referee`); the next referee
also removes what a referee whose watchdog died too left (:func:`sweep_stale_temp_once`, and
:func:`arena.sandbox.cgroups.sweep_stale` for cgroups).  A referee's leftovers are found by
the names below, which start with its sandbox tokens (``<referee pid>-<n>-<random>``).
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional

import arena
from arena.sandbox import procs
from arena.sandbox.cgroups import remove_cgroups

log = logging.getLogger("arena.sandbox")

#: the environment variable that tags a sandboxed bot's processes with its sandbox token
#: (to find adopted orphans, and a dead referee's bots)
TAG_VARIABLE = "MORRIS_ARENA_SANDBOX"
#: the name of every sandbox temporary folder starts with this, then the sandbox token
TEMP_PREFIX = "morris-arena-"

# The parent-death signal alone leaves a gap under bwrap: bwrap's first child (the future
# init of the PID namespace) is made by clone(), which never inherits a parent-death signal,
# and it waits on an eventfd until the outer bwrap releases it.  If the referee is killed in
# that window, the outer bwrap dies of its parent-death signal and the child sleeps forever
# (ppid 1).  So every referee process that makes sandboxes also starts one small watchdog
# (not its child's child: its own session, no parent-death signal) that holds the read end
# of a pipe only the referee can write.  End of file means the referee is gone: the
# watchdog then kills every process tagged with the referee's sandbox tokens and the
# cgroups named after it, and exits.

_watchdog_lock = threading.Lock()
#: (our pid, write end of the watchdog's pipe, the watchdog's pid)
_watchdog: Optional[tuple[int, int, int]] = None
WATCH_SWEEP_S = 1.0  # how long a watchdog keeps sweeping after the referee is gone


def _forget_watchdog() -> None:
    """In a forked child: the parent's watchdog is not ours; close our copy of its pipe."""
    global _watchdog
    if _watchdog is not None:
        try:
            os.close(_watchdog[1])
        except OSError:
            pass
        _watchdog = None


os.register_at_fork(after_in_child=_forget_watchdog)


def ensure_watchdog() -> None:
    """Start this process's watchdog once (see :func:`watch_referee`); a failure is logged."""
    global _watchdog
    with _watchdog_lock:
        if _watchdog is not None and _watchdog[0] == os.getpid():
            return
        package_root = str(Path(arena.__file__).resolve().parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        r, w = os.pipe()  # both non-inheritable: bots never hold the write end
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "arena.sandbox", "--watch", str(os.getpid())],
                stdin=r, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                close_fds=True, start_new_session=True, cwd="/", env=env)
        except OSError as e:
            os.close(w)
            log.warning("cannot start the sandbox watchdog: %s", e)
            return
        finally:
            os.close(r)
        _watchdog = (os.getpid(), w, proc.pid)


def watchdog_pid() -> Optional[int]:
    """The pid of this process's watchdog (it lives as long as this process), or None."""
    wd = _watchdog
    return wd[2] if wd is not None and wd[0] == os.getpid() else None


def _tagged(prefix: str) -> list[Any]:
    """Live processes whose sandbox tag starts with ``prefix`` (the watchdog itself excluded)."""
    import psutil

    found = []
    for p in psutil.process_iter():
        if p.pid == os.getpid():
            continue
        try:
            if p.environ().get(TAG_VARIABLE, "").startswith(prefix):
                found.append(p)
        except psutil.Error:
            continue
    return found


def sweep_referee(referee: int) -> int:
    """SIGKILL every process and remove every cgroup and temporary folder of the sandboxes
    made by the process ``referee`` (which must be gone); returns how many processes,
    cgroups and folders were found."""
    import psutil

    prefix = f"{referee}-"
    procs = _tagged(prefix)
    for p in procs:
        try:
            p.kill()
        except psutil.Error:
            pass
    return (len(procs) + remove_cgroups(lambda name: name.startswith(prefix))
            + _remove_temp_folders(lambda token: token.startswith(prefix)))


def _remove_temp_folders(wanted: Callable[[str], bool]) -> int:
    """Remove this user's sandbox temporary folders (``morris-arena-<token>-...``) whose
    token ``wanted`` accepts; returns how many were removed."""
    base = tempfile.gettempdir()
    removed = 0
    try:
        names = [n for n in os.listdir(base) if n.startswith(TEMP_PREFIX)]
    except OSError:
        return 0
    for name in names:
        path = os.path.join(base, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if st.st_uid != os.geteuid() or not stat.S_ISDIR(st.st_mode):
            continue
        if wanted(name[len(TEMP_PREFIX):]):
            shutil.rmtree(path, ignore_errors=True)
            removed += 1
    return removed


_temp_swept = False


def sweep_stale_temp_once() -> None:
    """Once per process: remove the temporary folders of referees that are gone (their
    watchdog normally did; it may have been killed too)."""
    global _temp_swept
    if not _temp_swept:
        _temp_swept = True
        _remove_temp_folders(procs.is_stale)


def watch_referee(referee: int, fd: int = 0) -> None:
    """The watchdog's body: wait for end of file on ``fd`` (the referee exited, however it
    died), then sweep its sandboxes (:func:`sweep_referee`) until nothing is found for a
    while (a bwrap child half-way through its set-up may still fork), and return."""
    while True:
        try:
            if not os.read(fd, 4096):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    if procs.process_alive(referee):  # it closed the pipe by exec: not ours to judge
        return
    end = time.monotonic() + WATCH_SWEEP_S
    quiet = 0
    while time.monotonic() < end and quiet < 5:
        quiet = 0 if sweep_referee(referee) else quiet + 1
        time.sleep(0.05)
