"""Processes of this machine: who we are (root?), the C library, liveness, process trees and
groups and their CPU time, unique uids, and the child subreaper.

Every other module of the sandbox asks "are we root?" through :func:`is_root` here, looked up
on this module at each call (``procs.is_root()``), so a test that patches it reaches every use.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import os
import resource
import stat as statmod
import sys
import threading
from typing import Any, Callable, Iterable, Iterator

from arena.sandbox.values import Check

#: first uid of the range from which bots get a unique uid when the referee is root
UID_BASE = 1_600_000_000
PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
#: seconds a kill waits for the processes it killed to be gone
KILL_WAIT_S = 3.0
#: processes per :class:`CpuTimes` whose stat file stays open (a bot usually has one to three)
KEEP_OPEN = 16

_counter = itertools.count(1)
_subreaper_lock = threading.Lock()


def pauses(first_s: float = 0.0005, most_s: float = 0.01) -> Iterator[float]:
    """Sleep lengths for waiting on the kernel (a process to exit, a cgroup to empty): from
    ``first_s``, doubling up to ``most_s`` (a process that exits at once costs no 10 ms tick)."""
    pause = first_s
    while True:
        yield pause
        pause = min(2 * pause, most_s)


def serial() -> int:
    """A number not given before in this process (names sandboxes, probes and uids)."""
    return next(_counter)


def is_root() -> bool:
    """True when the referee runs as root (bots are then confined and given their own uid)."""
    return os.geteuid() == 0


@functools.lru_cache(maxsize=1)
def libc() -> Any:
    """The C library, for the system calls Python does not wrap."""
    return ctypes.CDLL(None, use_errno=True)


def prctl(option: int, arg: int) -> int:
    """``prctl(option, arg)``.

    :raises OSError: the call failed.
    """
    result = libc().prctl(ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(0),
                          ctypes.c_ulong(0), ctypes.c_ulong(0))
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return int(result)


def process_alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its parent counts as gone)."""
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def is_stale(name: str) -> bool:
    """True when ``name`` (a sandbox token or a name starting with one: ``<referee pid>-...``)
    belongs to another referee process that no longer runs."""
    head = name.split("-", 1)[0]
    return head.isdigit() and int(head) != os.getpid() and not process_alive(int(head))


def alive(proc: Any) -> bool:
    """True while a ``psutil.Process`` runs (a zombie, or a reused pid, counts as gone)."""
    import psutil

    try:
        return bool(proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def tree(pid: int) -> list[Any]:
    """``pid`` and its live descendants as psutil processes (empty if it is gone)."""
    import psutil

    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def group_exists(pgid: int) -> bool:
    """True while the process group ``pgid`` has a member (a zombie counts), never for ours."""
    if pgid == os.getpgrp():
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a member we may not signal
        pass
    return True


def group_members(pgid: int) -> list[Any]:
    """Live processes (zombies excluded) in the process group ``pgid``, never our own group.

    Cheap when the group is empty (one ``killpg(pgid, 0)``); else the process table is read.
    """
    import psutil

    if not group_exists(pgid):
        return []
    found = []
    for pid in psutil.pids():
        try:
            if os.getpgid(pid) == pgid:
                p = psutil.Process(pid)
                if alive(p):
                    found.append(p)
        except (OSError, psutil.Error):
            continue
    return found


class _KeptFiles:
    """A per-process ``/proc/<pid>/<name>`` file of processes, each opened once and read with
    one ``pread`` (a fifth of the cost of psutil, which opens and parses it every time: a
    bot's clock is read on every move).  An open file keeps pointing at its process: once
    that ended, it reads nothing, whoever gets the pid next.  At most :data:`KEEP_OPEN` are
    kept open (a bot that forks a crowd costs the referee no more descriptors)."""

    name = ""

    def __init__(self) -> None:
        self._files: dict[int, int] = {}
        self._lock = threading.Lock()  # a descriptor is not closed (and reused) while read

    def _sum(self, pids: Iterable[int], value: Callable[[bytes], int]) -> int:
        """The sum of ``value(content)`` over the processes' files (0 for one that ended or
        cannot be read)."""
        total = 0
        files = self._files
        with self._lock:
            for pid in pids:
                fd = files.get(pid)
                try:
                    if fd is not None:
                        data = os.pread(fd, 4096, 0)
                    else:
                        fd = os.open(f"/proc/{pid}/{self.name}", os.O_RDONLY | os.O_CLOEXEC)
                        try:
                            data = os.pread(fd, 4096, 0)
                        finally:
                            if len(files) < KEEP_OPEN:
                                files[pid] = fd
                            else:
                                os.close(fd)
                    total += value(data)
                except (OSError, ValueError, IndexError):
                    continue
        return total

    def forget(self, pid: int) -> None:
        """Close the file of ``pid`` (a process no longer followed)."""
        with self._lock:
            fd = self._files.pop(pid, None)
            if fd is not None:
                os.close(fd)

    def close(self) -> None:
        with self._lock:
            for fd in self._files.values():
                os.close(fd)
            self._files.clear()


def _stat_ticks(stat: bytes) -> int:
    # after the command's name, which may hold anything: utime stime cutime cstime
    fields = stat[stat.rindex(b")") + 2:].split(None, 15)
    return int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])


class CpuTimes(_KeptFiles):
    """The CPU seconds of processes and of the children they waited for, read from their
    ``/proc/<pid>/stat`` (what psutil's ``cpu_times`` reads)."""

    name = "stat"

    def seconds(self, pids: Iterable[int]) -> float:
        """Their CPU seconds now; a process that has ended (or cannot be read) counts 0."""
        return self._sum(pids, _stat_ticks) / _clock_ticks()


def _run_delay_ns(schedstat: bytes) -> int:
    return int(schedstat.split()[1])


class RunDelays(_KeptFiles):
    """The seconds processes spent runnable but waiting for a CPU (the scheduler's run
    queue), from ``/proc/<pid>/schedstat`` (its second field, in ns; the process's main
    thread).  A bot that waited long on the run queue was starved by the machine's load; one
    that slept did not wait there at all."""

    name = "schedstat"

    def seconds(self, pids: Iterable[int]) -> float:
        """Their run-queue waits now; a process that ended (or cannot be read) counts 0."""
        return self._sum(pids, _run_delay_ns) / 1e9


def _run_and_wait_ns(schedstat: bytes) -> tuple[int, int]:
    fields = schedstat.split()
    return int(fields[0]), int(fields[1])


class TaskTimes:
    """Per task (every thread of every process given), the nanoseconds it has spent on a CPU
    and runnable but waiting for one, from ``/proc/<pid>/task/<tid>/schedstat`` (its first
    two fields): what the own clock (``charge: own``) reads at the start and end of a move
    and while the bot thinks.  A task's file stays open (one ``pread`` a reading; at most
    :data:`KEEP_OPEN` kept, the rest opened each time); a task that ended reads nothing."""

    def __init__(self) -> None:
        self._files: dict[int, int] = {}
        self._pid_of: dict[int, int] = {}  # the process of each task read last
        self._lock = threading.Lock()

    def state(self, tid: int) -> str:
        """The scheduler state of a task read last (``R`` running or runnable, ``S``
        sleeping, ``D`` in uninterruptible sleep, ...), "" if it cannot be read."""
        pid = self._pid_of.get(tid, tid)
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                data = f.read()
            return data[data.rindex(b")") + 2:][:1].decode("ascii", "replace")
        except (OSError, ValueError):
            return ""

    def read(self, pids: Iterable[int]) -> dict[int, tuple[int, int]]:
        """``{tid: (on-CPU ns, waiting ns)}`` for every task of the processes ``pids`` now
        (a process that ended, or cannot be read, has none)."""
        found: dict[int, tuple[int, int]] = {}
        files = self._files
        with self._lock:
            for pid in pids:
                try:
                    tids = os.listdir(f"/proc/{pid}/task")
                except OSError:
                    continue
                for name in tids:
                    tid = int(name)
                    self._pid_of[tid] = pid
                    fd = files.get(tid)
                    try:
                        if fd is None:
                            fd = os.open(f"/proc/{pid}/task/{name}/schedstat",
                                         os.O_RDONLY | os.O_CLOEXEC)
                            if len(files) < KEEP_OPEN:
                                files[tid] = fd
                            else:
                                try:
                                    found[tid] = _run_and_wait_ns(os.pread(fd, 256, 0))
                                finally:
                                    os.close(fd)
                                continue
                        data = os.pread(fd, 256, 0)
                        if not data:  # the task ended (its kept file reads nothing)
                            files.pop(tid, None)
                            os.close(fd)
                            continue
                        found[tid] = _run_and_wait_ns(data)
                    except (OSError, ValueError, IndexError):
                        if files.get(tid) == fd and fd is not None:
                            files.pop(tid, None)
                            os.close(fd)
                        continue
            for tid in [t for t in files if t not in found]:  # tasks that ended
                os.close(files.pop(tid))
            if len(self._pid_of) > len(found):
                self._pid_of = {t: p for t, p in self._pid_of.items() if t in found}
        return found

    def close(self) -> None:
        with self._lock:
            for fd in self._files.values():
                os.close(fd)
            self._files.clear()


_stat_fd = -1
_stat_lock = threading.Lock()


def stolen() -> tuple[float, ...]:
    """Per CPU of this (virtual) machine, the seconds its host has stolen from it so far
    (``/proc/stat``'s ``steal``, in clock ticks; empty where not reported): while a virtual
    CPU does not run, nothing on it runs, and a bot woken there is not even on the run
    queue yet.  The file stays open (one ``pread``, a few microseconds)."""
    global _stat_fd
    try:
        with _stat_lock:
            if _stat_fd < 0:
                _stat_fd = os.open("/proc/stat", os.O_RDONLY | os.O_CLOEXEC)
            data = os.pread(_stat_fd, 65536, 0)
    except OSError:
        return ()
    ticks = _clock_ticks()
    found = []
    for line in data.split(b"\n"):
        if not line.startswith(b"cpu"):
            break
        fields = line.split()
        if line[3:4] != b" " and len(fields) > 8:  # not the sum of all CPUs
            found.append(int(fields[8]) / ticks)
    return tuple(found)


_thread_files = threading.local()


def thread_run_delay() -> float:
    """Seconds the calling thread has spent runnable but waiting for a CPU (0 where the
    kernel does not say): the referee's own share of a move's delay on a loaded machine.
    The thread's ``schedstat`` file is kept open (one ``pread`` per call)."""
    fd = getattr(_thread_files, "fd", None)
    try:
        if fd is None:
            fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY | os.O_CLOEXEC)
            _thread_files.fd = fd
        return _run_delay_ns(os.pread(fd, 4096, 0)) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def referee_mark() -> tuple[float, int]:
    """The calling thread's ``(run-queue wait s, voluntary context switches)`` so far: the
    marks :meth:`arena.bot.BotProcess` takes of the referee's lateness (:func:`lateness`).
    The switches are read last: a wait for the GIL as the first read returns counts after
    the mark."""
    delay = thread_run_delay()
    try:
        switches = resource.getrusage(resource.RUSAGE_THREAD).ru_nvcsw
    except (AttributeError, OSError, ValueError):
        switches = 0
    return delay, switches


def lateness(since: tuple[float, int], until: tuple[float, int], sleeps: int = 0) -> float:
    r"""Seconds the calling thread was kept from running between two :func:`referee_mark`\ s,
    ``sleeps`` of its voluntary switches meanwhile being its own waits (a ``poll`` for the
    bot): its run-queue wait, and its waits for the GIL while another thread of this process
    held it (a thread that got no CPU while holding it keeps every other thread waiting,
    though none of them is on a run queue).  CPython waits for the GIL in steps of at most
    the switch interval, each one voluntary switch, so every further switch is counted as
    one interval: what the thread waited, to within one interval per wait."""
    extra = max(0, until[1] - since[1] - sleeps)
    return max(0.0, until[0] - since[0]) + extra * sys.getswitchinterval()


@functools.lru_cache(maxsize=1)
def run_delays_available() -> bool:
    """True when this kernel reports run-queue waits (``/proc/self/schedstat``)."""
    try:
        with open("/proc/self/schedstat", "rb") as f:
            return len(f.read().split()) >= 2
    except OSError:
        return False


@functools.lru_cache(maxsize=1)
def _clock_ticks() -> int:
    """Clock ticks per second, the unit of ``/proc/<pid>/stat``'s CPU times."""
    return os.sysconf("SC_CLK_TCK")


def held_deleted_bytes(pids: Iterable[int], devices: Iterable[int]) -> int:
    """Disk bytes allocated to the files that the processes ``pids`` hold open or mapped
    although every name of them was removed (they still take disk space until closed), on
    the file systems ``devices`` (``st_dev``): each file counted once, by its allocated
    blocks (a sparse file takes none).

    Found in ``/proc/<pid>/fd`` (each descriptor's target, its ``st_nlink`` 0) and
    ``/proc/<pid>/maps`` (mappings of deleted files; sized through ``map_files`` where we
    may open it, which needs ``CAP_SYS_ADMIN``, else by the mapped length, a lower bound).
    A process we may not inspect counts nothing (at ``basic`` and ``bwrap`` the referee may
    inspect its bots: they run as it, or as a uid of its own when it is root)."""
    wanted = set(devices)
    found: dict[tuple[int, int], int] = {}

    def take(st: os.stat_result) -> None:
        if st.st_nlink == 0 and st.st_dev in wanted and statmod.S_ISREG(st.st_mode):
            key = (st.st_dev, st.st_ino)
            found[key] = max(found.get(key, 0), st.st_blocks * 512)

    for pid in pids:
        base = f"/proc/{pid}"
        try:
            fds = os.listdir(f"{base}/fd")
        except OSError:
            fds = []
        for fd in fds:
            link = f"{base}/fd/{fd}"
            try:
                if os.readlink(link).endswith(" (deleted)"):
                    take(os.stat(link))
            except OSError:
                continue
        try:
            with open(f"{base}/maps", "rb") as f:
                maps = f.read()
        except OSError:
            continue
        for line in maps.splitlines():
            if not line.endswith(b" (deleted)"):
                continue
            words = line.split(None, 5)
            if len(words) < 6:
                continue
            span, dev, inode = words[0].decode("ascii", "replace"), words[3], int(words[4])
            try:
                take(os.stat(f"{base}/map_files/{span}"))
                continue
            except (OSError, ValueError):
                pass
            major, _, minor = dev.partition(b":")
            try:
                key = (os.makedev(int(major, 16), int(minor, 16)), inode)
                start, _, end = span.partition("-")
                length = int(end, 16) - int(start, 16)
            except ValueError:
                continue
            if key[0] in wanted:
                found[key] = max(found.get(key, 0), length)
    return sum(found.values())


def unique_uid() -> int:
    """A uid no other live sandbox uses: from this process's pid and a counter."""
    return UID_BASE + (os.getpid() % (1 << 22)) * 64 + serial() % 64


def ensure_subreaper() -> None:
    """Make this process the child subreaper (once): orphans of bots become our children."""
    with _subreaper_lock:
        flag = ctypes.c_int(0)
        prctl(_PR_GET_CHILD_SUBREAPER, ctypes.addressof(flag))
        if not flag.value:
            prctl(_PR_SET_CHILD_SUBREAPER, 1)


@functools.lru_cache(maxsize=1)
def subreaper_status() -> Check:
    """Whether this process can be the child subreaper (``basic`` needs it)."""
    try:
        flag = ctypes.c_int(0)  # kept alive while prctl writes into it
        prctl(_PR_GET_CHILD_SUBREAPER, ctypes.addressof(flag))
    except (OSError, AttributeError) as e:
        return Check("child subreaper", False, f"unavailable ({e})")
    return Check("child subreaper", True, "available (prctl PR_SET_CHILD_SUBREAPER)")


def autogroup_nice(nice: int) -> None:
    """In a child after ``setsid``: give its new autogroup (``/proc/self/autogroup``, where
    the kernel groups by session) the niceness ``nice``.  Raising a niceness needs no
    privilege; a kernel without autogroups has no such file, and nothing is lost."""
    try:
        fd = os.open("/proc/self/autogroup", os.O_WRONLY)
    except OSError:
        return
    try:
        os.write(fd, str(nice).encode("ascii"))
    except OSError:
        pass
    finally:
        os.close(fd)
