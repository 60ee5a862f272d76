"""Cgroups (v1, or v2 with the controllers delegated): where they are writable, and one bot's
cgroups: a memory limit, a process-count limit, exact CPU accounting of the whole tree, a CPU
weight that gives the bot to move the CPU it asks for, and a freezer for a race-free kill.

A bot's cgroups are ``<controller>/<the referee's own cgroup>/morris-arena/<sandbox token>``;
those of a referee that died without removing them are swept (:func:`sweep_stale`,
:func:`remove_cgroups`).  The hierarchies are probed once per process
(:func:`cgroup_status`, :func:`cpu_clock_status` for ``arena doctor``).
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence

from arena.sandbox import procs
from arena.sandbox.values import Check, Limits, SandboxError

log = logging.getLogger("arena.sandbox")

#: name of the folder that holds Morris Arena's cgroups inside the referee's own cgroup
CGROUP_PARENT = "morris-arena"

#: the controllers a sandbox uses, by role: (v1 name, v2 name or None)
_ROLES: dict[str, tuple[str, Optional[str]]] = {
    "memory": ("memory", "memory"), "pids": ("pids", "pids"), "cpu": ("cpuacct", "cpu"),
    "freezer": ("freezer", None), "weight": ("cpu", "cpu")}
#: a limit file written by the writability probe, per (role, version)
_PROBE_FILES = {("memory", 1): ("memory.limit_in_bytes", str(1 << 30)),
                ("memory", 2): ("memory.max", str(1 << 30)),
                ("pids", 1): ("pids.max", "64"), ("pids", 2): ("pids.max", "64"),
                ("freezer", 1): ("freezer.state", "THAWED"),
                ("weight", 1): ("cpu.shares", "1024"), ("weight", 2): ("cpu.weight", "100")}

#: the CPU weight file and its values per cgroup version: (file, a process's default weight,
#: the weight of the bot to move and of Morris Arena's parent folder)
_WEIGHTS = {1: ("cpu.shares", "1024", "102400"), 2: ("cpu.weight", "100", "10000")}
#: how many times a default process's CPU share the bot to move gets (the ratio above): on
#: a CPU where it competes with other work, it runs this many times as much as a process of
#: that work (at niceness 0; the machine's other sessions count as one each, autogroups)
THINKING_WEIGHT = 100


@dataclass(frozen=True)
class _Hierarchy:
    """Where one role's cgroups go: the parent folder, the controller and the version."""

    role: str
    controller: str
    version: int
    parent: Path


def read(path: Path | str) -> str:
    """The text of a cgroup (or /proc) file.

    :raises OSError: it cannot be read.
    """
    # raw reads: a text-mode open() costs several times more, and the CPU clock reads a
    # cgroup file on every move
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks).decode("ascii", "replace")


def write(path: Path | str, text: str) -> None:
    """Write ``text`` to a cgroup file in one ``write``.

    :raises OSError: the kernel refused it.
    """
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode("ascii"))
    finally:
        os.close(fd)


def _rmdir_quietly(path: Path) -> bool:
    try:
        path.rmdir()
        return True
    except OSError:
        return False


def _own_cgroups() -> tuple[dict[str, str], Optional[str]]:
    """This process's v1 cgroup path per controller, and its v2 path (``None`` if none)."""
    v1: dict[str, str] = {}
    v2: Optional[str] = None
    for line in read("/proc/self/cgroup").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, ctls, path = parts
        if ctls == "":
            v2 = path
        for ctl in ctls.split(","):
            if ctl:
                v1[ctl] = path
    return v1, v2


def _cgroup_mounts() -> list[tuple[str, str, str, set[str]]]:
    """``(fstype, mount point, mount root, v1 controllers)`` for every cgroup mount."""
    found = []
    for line in read("/proc/self/mountinfo").splitlines():
        left, sep, right = line.partition(" - ")
        a, b = left.split(), right.split()
        if not sep or len(a) < 5 or len(b) < 3 or b[0] not in ("cgroup", "cgroup2"):
            continue
        ctls = set(b[2].split(",")) if b[0] == "cgroup" else set()
        found.append((b[0], a[4].replace("\\040", " "), a[3], ctls))
    return found


def _relative(own: str, root: str) -> Optional[str]:
    """``own`` cgroup path seen from a mount rooted at ``root`` (None if outside it)."""
    if root == "/":
        return own.lstrip("/")
    if own == root or own.startswith(root.rstrip("/") + "/"):
        return own[len(root):].lstrip("/")
    return None


def _make_parent(h: _Hierarchy) -> None:
    """Create the ``morris-arena`` parent (v2: with the controller enabled for children).

    Not ``Path.mkdir(exist_ok=True)``: it checks ``is_dir()`` after a ``FileExistsError``,
    and another sandbox closing at that moment may just have removed the (empty) parent.
    """
    try:
        os.mkdir(h.parent)
    except FileExistsError:
        pass
    if h.version == 2:
        write(h.parent / "cgroup.subtree_control", f"+{h.controller}")
    if h.role == "weight":  # the folder of every bot weighs as much as the bot to move
        name, _, high = _WEIGHTS[h.version]
        try:
            write(h.parent / name, high)
        except OSError as e:  # removed meanwhile by a sandbox that emptied it: made again
            if e.errno in (errno.ENODEV, errno.ENOENT):
                raise FileNotFoundError(e.errno, e.strerror) from None
            raise


#: attempts to make a bot's cgroup while other sandboxes remove the emptied parent
_MAKE_ATTEMPTS = 50


def _make_child(h: _Hierarchy, path: Path) -> None:
    """Create ``path`` under the parent, which another sandbox may remove when it empties
    (then the parent is made again)."""
    for attempt in range(_MAKE_ATTEMPTS):
        try:
            _make_parent(h)
            path.mkdir()
            return
        except FileNotFoundError:
            if attempt == _MAKE_ATTEMPTS - 1:
                raise


def _probe(h: _Hierarchy) -> Optional[str]:
    """Make the parent and a probe child, write a limit, remove both: None, or why not."""
    probe = h.parent / f"probe-{os.getpid()}-{procs.serial()}"
    try:
        _make_child(h, probe)  # retried: another referee may be removing the parent
    except OSError as e:
        _rmdir_quietly(h.parent)
        return f"not writable ({e.strerror})"
    limit_file, value = _PROBE_FILES.get((h.role, h.version), ("", ""))
    try:
        if limit_file:
            write(probe / limit_file, value)
        return None
    except OSError as e:
        return f"{limit_file} not writable ({e.strerror})"
    finally:
        _rmdir_quietly(probe)
        _rmdir_quietly(h.parent)


def _find_hierarchy(role: str, own_v1: Mapping[str, str], own_v2: Optional[str],
                    mounts: Sequence[tuple[str, str, str, set[str]]]) -> tuple[Optional[_Hierarchy], str]:
    """The usable hierarchy for ``role``, or None and why not."""
    v1_name, v2_name = _ROLES[role]
    why = "no cgroup hierarchy with this controller is mounted"
    for fstype, point, root, ctls in mounts:
        if fstype == "cgroup" and v1_name in ctls and v1_name in own_v1:
            version, controller, rel = 1, v1_name, _relative(own_v1[v1_name], root)
        elif fstype == "cgroup2" and v2_name is not None and own_v2 is not None:
            version, controller, rel = 2, v2_name, _relative(own_v2, root)
            try:
                if rel is not None and controller not in read(
                        Path(point, rel, "cgroup.subtree_control")).split():
                    why = f"v2 controller {controller} is not delegated to {Path(point, rel)}"
                    continue
            except OSError as e:
                why = f"v2: {e.strerror}"
                continue
        else:
            continue
        if rel is None:
            why = "this process's cgroup is outside the mounted hierarchy"
            continue
        h = _Hierarchy(role, controller, version, Path(point, rel, CGROUP_PARENT))
        problem = _probe(h)
        if problem is None:
            return h, ""
        why = f"v{version} {problem}"
    return None, why


@functools.lru_cache(maxsize=1)
def _cgroup_layout() -> tuple[tuple[Optional[_Hierarchy], ...], tuple[Check, ...]]:
    """Per role (memory, pids, cpu, freezer): the usable hierarchy or None, and the checks."""
    try:
        own_v1, own_v2 = _own_cgroups()
        mounts = _cgroup_mounts()
    except OSError as e:
        return ((None,) * len(_ROLES),
                tuple(Check(f"cgroup {v1}", False, f"unavailable ({e})") for v1, _ in _ROLES.values()))
    hierarchies: list[Optional[_Hierarchy]] = []
    found_checks: list[Check] = []
    for role, (v1_name, _) in _ROLES.items():
        h, why = _find_hierarchy(role, own_v1, own_v2, mounts)
        hierarchies.append(h)
        name = f"cgroup {h.controller if h else v1_name}" + (" weight" if role == "weight" else "")
        found_checks.append(Check(name, h is not None, f"writable (v{h.version}, {h.parent})"
                                  if h else f"unavailable ({why})"))
    return tuple(hierarchies), tuple(found_checks)


def cgroup_status() -> list[Check]:
    """One :class:`Check` per cgroup role: memory, pids, cpu accounting, freezer."""
    return list(_cgroup_layout()[1])


def _hierarchy(role: str) -> Optional[_Hierarchy]:
    return _cgroup_layout()[0][list(_ROLES).index(role)]


def cpu_clock_status() -> Check:
    """Which CPU clock ``charge: cpu`` uses here: cgroup accounting or process CPU times
    (not ok where neither can be read: then games are charged wall time)."""
    h = _hierarchy("cpu")
    if h is not None:
        source = "cgroup cpuacct" if h.version == 1 else "cgroup v2 cpu.stat"
        return Check("cpu clock", True, f"{source} (exact, whole process tree; at basic and bwrap)")
    if not os.path.exists("/proc/self/stat"):
        return Check("cpu clock", False, "no per-bot CPU clock (no /proc): games are charged "
                                         "wall time; run on Linux for the CPU clock")
    return Check("cpu clock", True, "process CPU times (/proc/<pid>/stat; live process tree, "
                                    "approximate: writable cgroups make it exact, see "
                                    "docs/SECURITY.md)")


def describe_charge(clock: str, wall_factor: float) -> tuple[str, Optional[str]]:
    """What a run says once at its start about its clock: (what each move is charged, a
    warning or None: no per-bot CPU clock here, or no way to tell a starved bot from a slow
    one)."""
    from arena.sandbox.procs import run_delays_available

    status = cpu_clock_status()
    if clock == "own":
        weight = _hierarchy("weight")
        info = ("each move is charged the bot's own time (wall time less its waits for a CPU: "
                "/proc/<pid>/task/*/schedstat), with a wall-clock cap of "
                f"{wall_factor:g} times its allowance; "
                + (f"the bot to move gets {THINKING_WEIGHT} times a process's CPU share "
                   f"(cgroup {weight.controller} weight, at basic and bwrap)"
                   if weight is not None else
                   "no CPU weight for the bot to move here (no writable cgroup cpu "
                   "controller): on a busy machine more moves may go unjudged"))
    elif clock == "cpu":
        info = (f"each move is charged the bot's CPU time ({status.detail}), with a "
                f"wall-clock cap of {wall_factor:g} times its allowance")
    else:
        info = "each move is charged wall time (a loaded machine can make bots lose on time)"
    warning: Optional[str] = None
    if clock == "cpu" and not status.ok:
        warning = status.detail
    elif clock == "own" and _hierarchy("weight") is None:
        warning = ("the bot to move cannot be given a CPU weight here (no writable cgroup cpu "
                   "controller: run as root, or delegate it; arena doctor): on a busy machine "
                   "more games may go unjudged and be played again")
    elif not run_delays_available():
        warning = ("this kernel does not report run-queue waits (/proc/<pid>/schedstat): a "
                   "bot starved by the machine's load cannot be told from a slow one, and its "
                   "time forfeits count")
    return info, warning


def default_charge() -> str:
    """The clock a time control charges by default (``charge: auto``): ``own`` (the bot's
    own time, fair in both directions on a busy machine) where this kernel reports each
    thread's run-queue wait (``/proc/<pid>/task/<tid>/schedstat``), else ``wall``."""
    from arena.sandbox.procs import run_delays_available

    return "own" if run_delays_available() else "wall"


class Cgroups:
    """One bot's cgroups: one folder per v1 hierarchy (or one v2 folder), made with limits."""

    def __init__(self, name: str, limits: Optional[Limits]) -> None:
        """Make the cgroups ``name`` with ``limits``; ``None``: take existing ones as they are."""
        self.dirs: dict[str, Path] = {}
        self.versions: dict[str, int] = {}
        self._cpu_fd = -1  # the CPU accounting file, kept open (read with pread on every move)
        self._weight_fd = -1  # the CPU weight file, kept open (written twice a move)
        self._weighs = ""  # the weight written last
        self._cpu_lock = threading.Lock()  # the descriptor is not reused while being read
        if limits is not None:
            sweep_stale()
        try:
            for role in _ROLES:
                h = _hierarchy(role)
                if h is None:
                    continue
                path = h.parent / name
                if limits is not None and path not in self.dirs.values():
                    _make_child(h, path)
                self.dirs[role] = path
                self.versions[role] = h.version
                if limits is not None:
                    self._configure(role, h.version, path, limits)
                    if role == "weight":
                        self._weighs = _WEIGHTS[h.version][2]
        except OSError as e:
            self.remove()
            raise SandboxError(f"cannot set up the cgroup {name}: {e}") from None

    @staticmethod
    def _configure(role: str, version: int, path: Path, limits: Limits) -> None:
        memory = str(limits.memory_mb << 20)
        if role == "memory" and version == 1:
            write(path / "memory.limit_in_bytes", memory)
            if (path / "memory.memsw.limit_in_bytes").exists():  # no swapping past the limit
                write(path / "memory.memsw.limit_in_bytes", memory)
        elif role == "memory":
            write(path / "memory.max", memory)
            if (path / "memory.swap.max").exists():
                write(path / "memory.swap.max", "0")
        elif role == "pids":
            write(path / "pids.max", str(limits.pids))
        elif role == "weight":  # a bot starting up (its handshake is timed) is one to move
            name, _, high = _WEIGHTS[version]
            write(path / name, high)

    @property
    def procs_files(self) -> tuple[str, ...]:
        """The ``cgroup.procs`` files a new process writes its pid into, one per folder."""
        return tuple(sorted({str(p / "cgroup.procs") for p in self.dirs.values()}))

    def pids(self) -> set[int]:
        """Every process now in the bot's cgroups."""
        found: set[int] = set()
        for path in set(self.dirs.values()):
            try:
                found.update(int(x) for x in read(path / "cgroup.procs").split())
            except OSError:
                continue
        return found

    def members(self) -> list[int]:
        """The processes in the bot's first cgroup (each is in all of them): one read."""
        for path in self.dirs.values():
            try:
                return [int(x) for x in read(path / "cgroup.procs").split()]
            except OSError:
                continue
        return []

    @functools.cached_property
    def _cpu_file(self) -> Optional[tuple[str, int]]:
        """The CPU accounting file and its cgroup version (found once: read on every move)."""
        path = self.dirs.get("cpu")
        if path is None:
            return None
        version = self.versions["cpu"]
        return str(path / ("cpuacct.usage" if version == 1 else "cpu.stat")), version

    def cpu_ns(self) -> Optional[int]:
        """CPU nanoseconds used by every process that was ever in the cgroup, or None.

        The file is opened once and read from its start with ``pread`` (a seq_file is
        generated afresh for a read at offset 0): one system call per reading, not four."""
        found = self._cpu_file
        if found is None:
            return None
        try:
            with self._cpu_lock:
                if self._cpu_fd < 0:
                    if self._cpu_fd == -2:  # removed
                        return None
                    self._cpu_fd = os.open(found[0], os.O_RDONLY | os.O_CLOEXEC)
                text = os.pread(self._cpu_fd, 4096, 0)
            if found[1] == 1:
                return int(text)
            for line in text.split(b"\n"):  # usage_usec is the first line (so far)
                if line.startswith(b"usage_usec "):
                    return int(line[11:]) * 1000
        except (OSError, ValueError):
            pass
        return None

    def _close_cpu_file(self) -> None:
        with self._cpu_lock:
            if self._cpu_fd >= 0:
                os.close(self._cpu_fd)
            self._cpu_fd = -2
            if self._weight_fd >= 0:
                os.close(self._weight_fd)
            self._weight_fd = -2

    @property
    def weighted(self) -> bool:
        """True when the bot has a CPU weight of its own (see :meth:`to_move`)."""
        return "weight" in self.dirs

    def to_move(self, moving: bool) -> bool:
        """Give the bot the CPU weight of the bot to move (:data:`THINKING_WEIGHT` times a
        process's), or a process's default weight while it waits for its opponent: on a
        busy machine the bot that thinks gets the CPU it asks for, and one that thinks on
        its opponent's time (pondering, or spinning to slow its opponent down) gets no more
        than any process.  One ``write`` to a file kept open; False without a CPU weight."""
        path = self.dirs.get("weight")
        if path is None:
            return False
        name, low, high = _WEIGHTS[self.versions["weight"]]
        value = high if moving else low
        with self._cpu_lock:
            if self._weighs == value:
                return True
            try:
                if self._weight_fd < 0:
                    if self._weight_fd == -2:  # removed
                        return False
                    self._weight_fd = os.open(path / name, os.O_WRONLY | os.O_CLOEXEC)
                os.write(self._weight_fd, value.encode("ascii"))
                self._weighs = value
            except OSError:
                return False
        return True

    def freeze(self, frozen: bool) -> bool:
        """Freeze (or thaw) every process in the cgroups, without waiting for the kernel to
        have stopped them all (a bot kept between games); False without a freezer."""
        return self._freeze(frozen, wait=False)

    def _freeze(self, frozen: bool, wait: bool = True) -> bool:
        """Freeze (or thaw) the bot: v1 freezer, else v2 ``cgroup.freeze``; False if neither.
        ``wait``: until every process is frozen (v1; at most half a second)."""
        v1 = self.dirs.get("freezer")
        v2 = next((p for r, p in self.dirs.items() if self.versions[r] == 2), None)
        try:
            if v1 is not None:
                write(v1 / "freezer.state", "FROZEN" if frozen else "THAWED")
                end = time.monotonic() + 0.5
                while wait and frozen and read(v1 / "freezer.state").strip() != "FROZEN":
                    if time.monotonic() > end:
                        break
                    time.sleep(0.002)
                return True
            if v2 is not None:
                write(v2 / "cgroup.freeze", "1" if frozen else "0")
                return True
        except OSError:
            pass
        return False

    def kill(self) -> set[int]:
        """Freeze, SIGKILL every member, thaw, until the cgroups are empty; the pids killed."""
        killed: set[int] = set()
        end = time.monotonic() + procs.KILL_WAIT_S
        v2_kill = next((p / "cgroup.kill" for r, p in self.dirs.items()
                        if self.versions[r] == 2 and (p / "cgroup.kill").exists()), None)
        while self.pids() and time.monotonic() < end:
            frozen = self._freeze(True)
            members = self.pids()
            if v2_kill is not None:
                try:
                    write(v2_kill, "1")
                except OSError:
                    pass
            for pid in members:
                try:
                    os.kill(pid, signal.SIGKILL)  # members cannot be reused pids: they are inside
                    killed.add(pid)
                except OSError:
                    pass
            if frozen:
                self._freeze(False)
            time.sleep(0.002)
        return killed

    def notes(self) -> list[str]:
        """What the limits did: OOM kills, forks refused at the process limit."""
        out = []
        mem, pids = self.dirs.get("memory"), self.dirs.get("pids")
        if mem is not None:
            events = {**_events(mem / "memory.oom_control"), **_events(mem / "memory.events")}
            if events.get("oom_kill", 0) > 0:
                out.append(f"memory limit reached: {events['oom_kill']} process(es) killed")
        if pids is not None and _events(pids / "pids.events").get("max", 0) > 0:
            out.append("process limit reached: forks refused")
        return out

    def remove(self) -> None:
        """Remove the folders (retrying while the last members exit) and empty parents."""
        self._close_cpu_file()
        for path in sorted(set(self.dirs.values()), key=str):
            end = time.monotonic() + 2.0
            pauses = procs.pauses(most_s=0.005)
            while path.exists() and not _rmdir_quietly(path) and time.monotonic() < end:
                time.sleep(next(pauses))
            if path.exists():
                log.warning("cgroup %s could not be removed", path)
            _rmdir_quietly(path.parent)  # only succeeds once no other bot uses it


def _events(path: Path) -> dict[str, int]:
    try:
        text = read(path)
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if value.strip().isdigit():
            out[key] = int(value)
    return out


def sweep_stale() -> None:
    """Kill and remove the bots of referees that died without cleaning up.

    A stale cgroup is named ``<pid>-...`` after a referee that no longer runs, and exists
    under *every* parent this referee uses: so only sandboxes made from the same cgroup as
    ours are touched (on a shared machine, another user's or session's are left alone).
    Without this, a bwrap child killed in its first microseconds (its parent gone before
    letting it run) would wait forever inside its cgroup.  (The dead referee's watchdog,
    :func:`arena.sandbox.watchdog.watch_referee`, normally did this already.)
    """
    remove_cgroups(procs.is_stale)


def remove_cgroups(wanted: Callable[[str], bool]) -> int:
    """Kill what runs in, then remove, the sandbox cgroups whose name ``wanted`` accepts
    under any parent this process uses; returns how many were found.

    Under any parent, not every one: a sweep that removed a sandbox's folder under some
    controllers but not yet under another (a member still exiting on a loaded machine)
    leaves a part that the next sweep must still find."""
    parents = {h.parent for h in _cgroup_layout()[0] if h is not None}
    names: set[str] = set()
    for parent in parents:  # names first, then (d_type, no stat) whether it is a folder
        try:
            with os.scandir(parent) as entries:
                names.update(e.name for e in entries if wanted(e.name) and e.is_dir())
        except OSError:
            pass
    for name in sorted(names):
        log.info("removing the sandbox %s of a referee that is gone", name)
        left = Cgroups(name, None)
        left.kill()
        left.remove()
    return len(names)
