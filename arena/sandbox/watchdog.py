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
import select
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
# (ppid 1).  So every referee process that makes sandboxes (or builds) also starts one small
# watchdog (not its child: see _LAUNCHER; its own session, no parent-death signal) that
# holds the read end of a pipe only the referee can write.  End of file means the referee
# is gone: the watchdog then kills every process tagged with the referee's sandbox tokens,
# removes the cgroups and temporary folders named after it, and exits once a sweep has
# found nothing for WATCH_SWEEP_S.

_watchdog_lock = threading.Lock()
#: (our pid, write end of the watchdog's pipe, the watchdog's pid or None)
_watchdog: Optional[tuple[int, int, Optional[int]]] = None
#: seconds a watchdog keeps sweeping once nothing of the referee is found any more
WATCH_SWEEP_S = 0.5
#: the most seconds a watchdog goes on sweeping while something of the referee is still
#: found (a folder that cannot be removed yet, a process that does not die)
WATCH_GIVE_UP_S = 60.0
#: seconds the referee waits for the watchdog's launcher to say the watchdog's pid
LAUNCH_WAIT_S = 10.0

# The watchdog must outlive whatever kills the referee, and the referee's owner may kill
# the referee's whole process tree: a pool worker stopped by SIGTERM kills its descendants
# (arena.jobs), a CI job or a test kills "everything the process started".  A watchdog that
# is the referee's child dies with it and sweeps nothing (seen: a server check stopped at its
# check_timeout left its build's scratch folder, every time).  So the watchdog is not the
# referee's child: a small launcher (a bare Python, started in a session of its own) forks
# it and exits at once, so the kernel hands it to init (or to the nearest child subreaper
# above the referee).  The referee waits for the launcher to say the watchdog's pid (a bare
# interpreter's start, about 15 ms, once per process), before it ever becomes a child
# subreaper itself (basic), which would adopt the watchdog back.
_LAUNCHER = ("import os, sys\n"
             "pid = os.fork()\n"
             "if pid:\n"
             "    os.write(1, b'%d\\n' % pid)\n"
             "    os._exit(0)\n"
             "os.dup2(os.open(os.devnull, os.O_WRONLY), 1)\n"
             "python = sys.argv[2]\n"
             "os.execv(python, [python, '-m', 'arena.sandbox', '--watch', sys.argv[1]])\n")


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
    """Start this process's watchdog once (see :func:`watch_referee`), outside this
    process's tree (see :data:`_LAUNCHER`); a failure is logged."""
    global _watchdog
    with _watchdog_lock:
        if _watchdog is not None and _watchdog[0] == os.getpid():
            return
        package_root = str(Path(arena.__file__).resolve().parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        r, w = os.pipe()  # both non-inheritable: bots never hold the write end
        try:
            launcher = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(os.getpid()), sys.executable],
                stdin=r, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                close_fds=True, start_new_session=True, cwd="/", env=env)
        except OSError as e:
            os.close(w)
            log.warning("cannot start the sandbox watchdog: %s", e)
            return
        finally:
            os.close(r)
        pid = _launched_pid(launcher)
        if pid is None:
            log.warning("the sandbox watchdog's launcher did not say the watchdog's pid")
        _watchdog = (os.getpid(), w, pid)


def _launched_pid(launcher: subprocess.Popen[bytes]) -> Optional[int]:
    """The watchdog's pid, as its launcher writes it; waits for the launcher to exit."""
    assert launcher.stdout is not None
    fd = launcher.stdout.fileno()
    text = b""
    end = time.monotonic() + LAUNCH_WAIT_S
    try:
        while not text.endswith(b"\n"):
            left = end - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                break
            chunk = os.read(fd, 64)
            if not chunk:
                break
            text += chunk
    finally:
        launcher.stdout.close()
        try:
            launcher.wait(LAUNCH_WAIT_S)
        except subprocess.TimeoutExpired:  # pragma: no cover - a launcher stuck before its fork
            launcher.kill()
            launcher.wait()
    return int(text) if text.strip().isdigit() else None


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
    cgroups and folders were found (a folder that could not be removed yet counts: the
    watchdog then sweeps again)."""
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


def remove_tree(path: str, attempts: int = 3) -> bool:
    """Remove the folder ``path`` and everything in it, whatever modes its files and
    folders were given (a build or a bot may leave a folder it made unreadable, or
    read-only); True once it is gone.  A file system mounted on it (a build's scratch
    folder) is detached first.

    As root, modes never stop a removal; as another user, a folder that cannot be listed
    or emptied is opened up (``0700``, through a descriptor of exactly that folder: a link
    swapped in meanwhile is never followed) and the removal tried again.
    """
    from arena.sandbox.scratchfs import is_mount, unmount

    if is_mount(path):  # a build's own file system (arena.sandbox.scratchfs)
        unmount(path)
    for attempt in range(attempts):
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.lexists(path):
            return True
        if attempt < attempts - 1 and os.geteuid() != 0:
            _open_up(path)
    log.warning("cannot remove %s", path)
    return False


def _open_up(path: str) -> None:
    """Give ``path`` and every folder below it mode 0700 (links are not followed), so that
    its owner can list and empty them."""
    pending = [path]
    while pending:
        folder = pending.pop()
        try:
            fd = os.open(folder, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            os.chmod(f"/proc/self/fd/{fd}", 0o700)  # the folder itself, never a link's target
        except OSError:
            pass
        finally:
            os.close(fd)
        try:
            with os.scandir(folder) as entries:
                pending += [e.path for e in entries if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue


def _remove_temp_folders(wanted: Callable[[str], bool]) -> int:
    """Remove this user's sandbox temporary folders (``morris-arena-<token>-...``) whose
    token ``wanted`` accepts; returns how many were found (removed or not: see
    :func:`remove_tree`)."""
    base = tempfile.gettempdir()
    found = 0
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
            remove_tree(path, attempts=2)
            found += 1
    return found


#: the process (pid) that swept the temporary folders of dead referees already
_temp_swept_by = 0


def sweep_stale_temp_once() -> None:
    """Once per process: remove the temporary folders of referees that are gone (their
    watchdog normally did; it may have been killed too).  Called by every sandbox at
    ``basic`` and ``bwrap`` and by every build (a forked child sweeps again: it is
    another process)."""
    global _temp_swept_by
    if _temp_swept_by != os.getpid():
        _temp_swept_by = os.getpid()
        _remove_temp_folders(procs.is_stale)


def watch_referee(referee: int, fd: int = 0) -> None:
    """The watchdog's body: wait for end of file on ``fd`` (the referee exited, however it
    died), then sweep its sandboxes (:func:`sweep_referee`) until nothing has been found
    for :data:`WATCH_SWEEP_S` (a bwrap child half-way through its set-up may still fork; a
    folder a dying build still writes to is removed at a later sweep), at most
    :data:`WATCH_GIVE_UP_S`, and return."""
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
    started = quiet_since = time.monotonic()
    while time.monotonic() - quiet_since < WATCH_SWEEP_S:
        now = time.monotonic()
        if now - started > WATCH_GIVE_UP_S:
            log.warning("gave up sweeping what the referee %d left", referee)
            return
        if sweep_referee(referee):
            quiet_since = time.monotonic()
        time.sleep(0.05 if now - started < 5.0 else 0.5)  # slower once it takes long
