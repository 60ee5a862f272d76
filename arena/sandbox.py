"""Sandboxes for untrusted bots: isolation levels, resource limits, whole-tree CPU time and kill.

A :class:`Sandbox` is made per bot process from an :class:`Isolation` (a level, :class:`Limits`
and extra read-only paths) and the bot's folder.  The process owner (:class:`arena.bot.BotProcess`)
uses it like this::

    sb = Isolation.default().sandbox(folder, cwd=cwd, label="white")
    proc = sb.popen(argv)            # pipes for stdin/stdout/stderr, own session, attached
    ...  sb.cpu_time()  ...          # seconds of CPU used by the bot's whole process tree
    sb.close()                       # nothing of the bot survives; cgroups and temp dirs removed

(:meth:`Sandbox.popen` is :meth:`~Sandbox.wrap`, :meth:`~Sandbox.env` and
:attr:`~Sandbox.preexec` given to ``subprocess.Popen``, then :meth:`~Sandbox.attach`.)

Levels (each includes the one before; see ``docs/SECURITY.md`` for what each guarantees):

``none``
    The bot's own process group and working directory (``BotProcess`` does that); on close
    its process group and its descendants still linked to it are killed.
``basic``
    Resource limits safe for every language (no core files, a file size cap, an open-file
    cap, a CPU-time backstop), a cleared environment (``PATH``, ``LANG``, ``HOME`` = a private
    temporary folder), the referee as *child subreaper* so orphaned descendants are found and
    killed, and a parent-death signal so nothing outlives a killed referee.
``bwrap``
    Bubblewrap: no network, a private PID namespace (killing it kills everything in it), a
    root file system holding only the system directories, the Python installation, the
    ``arena`` package and the bot's own folder, all read-only, plus a small private ``/tmp``.
    When the referee runs as root the bot runs as a unique unprivileged uid (``setpriv``).

Independently of the level (from ``basic`` up), where cgroups are writable (v1, or v2 with
the controllers delegated), each bot gets its own cgroups under ``<controller>/<the referee's
cgroup>/morris-arena/``: a memory limit, a process-count limit, exact CPU accounting of the
whole tree, and a freezer for a race-free kill.  They are always removed on :meth:`Sandbox.close`.
"""

from __future__ import annotations

import ctypes
import enum
import functools
import itertools
import logging
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from arena.errors import ArenaError, ConfigError

log = logging.getLogger("arena.sandbox")

__all__ = ["Level", "Limits", "Isolation", "Sandbox", "Check", "SandboxError", "parse_level",
           "best_level", "available_levels", "bwrap_status", "cgroup_status", "cpu_clock_status",
           "confinement_status", "level_warning", "checks", "process_alive", "CGROUP_PARENT"]

#: name of the folder that holds Morris Arena's cgroups inside the referee's own cgroup
CGROUP_PARENT = "morris-arena"
#: the environment variable that tags a basic-level bot's processes (to find adopted orphans)
TAG_VARIABLE = "MORRIS_ARENA_SANDBOX"
#: environment variables a bot keeps from the referee at ``basic`` and ``bwrap``
KEPT_VARIABLES = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH")
#: /etc entries mounted read-only under bwrap: dynamic linking, alternatives, time zone, names
ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime",
               "nsswitch.conf", "passwd", "group", "mime.types", "ssl")
#: top-level system directories mounted (or recreated as the same symlinks) under bwrap
SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
#: the environment variable that overrides the default isolation level (none/basic/bwrap/best)
LEVEL_VARIABLE = "MORRIS_ARENA_ISOLATION"
#: the name of every sandbox temporary folder starts with this, then the sandbox token
TEMP_PREFIX = "morris-arena-"
#: first uid of the range from which bwrap bots get a unique uid when the referee is root
UID_BASE = 1_600_000_000

#: the shell that moves a bwrap bot's pipes into place (dash cannot name descriptors >= 10)
_BASH = shutil.which("bash")
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
_KILL_WAIT_S = 3.0
#: seconds between two searches of the process table for a bot's new descendants when its
#: CPU time comes from process CPU clocks (no cgroup)
RESCAN_S = 0.2
_counter = itertools.count(1)
_subreaper_lock = threading.Lock()


class SandboxError(ArenaError):
    """A sandbox could not be set up (a cgroup or a temporary folder could not be made)."""


# --------------------------------------------------------------------------------------
# Levels, limits, isolation settings (configuration checked at the edge)
# --------------------------------------------------------------------------------------


class Level(str, enum.Enum):
    """An isolation level; each includes everything of the ones before it."""

    NONE = "none"
    BASIC = "basic"
    BWRAP = "bwrap"


@dataclass(frozen=True)
class Limits:
    """Per-bot resource limits.

    ``memory_mb`` and ``pids`` (processes *and* threads) are enforced by cgroups where they
    are writable; ``open_files``, ``file_size_mb`` and ``cpu_s`` (a per-process CPU-time
    backstop, far above any game's budget) are rlimits; ``tmp_mb`` sizes bwrap's private
    ``/tmp``.  ``RLIMIT_AS`` is never used: it kills node and java at modest sizes.
    """

    memory_mb: int = 1024
    pids: int = 128
    open_files: int = 1024
    file_size_mb: int = 256
    cpu_s: int = 1800
    tmp_mb: int = 64

    def __post_init__(self) -> None:
        from arena.ranges import LIMITS

        for f in fields(self):
            LIMITS[f.name].check(getattr(self, f.name), f.name)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], path: str = "limits") -> Limits:
        """Limits from a YAML mapping; unknown keys and bad values name their key path.

        :raises ConfigError: not a mapping, an unknown key or a bad value.
        """
        if not isinstance(data, Mapping):
            raise ConfigError(f"expected a mapping, got {type(data).__name__}", path)
        known = {f.name for f in fields(cls)}
        for key in data:
            if key not in known:
                raise ConfigError(f"unknown key (known: {', '.join(sorted(known))})",
                                  f"{path}.{key}")
        try:
            return cls(**dict(data))
        except ConfigError as e:
            raise ConfigError(str(e).split(": ", 1)[-1], f"{path}.{e.path}") from None


def parse_level(text: object, path: str = "isolation") -> Level:
    """``none``/``basic``/``bwrap``, or ``best``/``auto``/``None`` for the best available.

    :raises ConfigError: an unknown name, or a level this machine cannot provide.
    """
    if text is None or (isinstance(text, str) and text.lower() in ("best", "auto", "")):
        return best_level()
    if isinstance(text, Level):
        level = text
    else:
        try:
            level = Level(str(text).lower())
        except ValueError:
            names = ", ".join(lv.value for lv in Level)
            raise ConfigError(f"unknown isolation level {text!r} (known: {names}, best)",
                              path) from None
    if level not in available_levels():
        why = (bwrap_status() if level is Level.BWRAP else _basic_status()).detail
        raise ConfigError(f"isolation level {level.value} is not available here: {why} "
                          "(see `arena doctor`)", path)
    return level


@dataclass(frozen=True)
class Isolation:
    """How bots are isolated in a game or tournament: a level (default: the best available),
    limits, extra read-only paths.

    ``read_only`` paths are mounted read-only for bwrap bots (for a runtime installed outside
    the standard places, e.g. ``/opt/java``).  ``cgroups: false`` turns cgroups off even
    where they are writable (limits then rest on rlimits, CPU time on process times).
    """

    level: Level = field(default_factory=lambda: best_level())
    limits: Limits = field(default_factory=Limits)
    read_only: tuple[str, ...] = ()
    cgroups: bool = True

    @classmethod
    def best(cls, limits: Optional[Limits] = None) -> Isolation:
        """The best level this machine supports, with ``limits`` (default limits if None)."""
        return cls(best_level(), limits or Limits())

    @classmethod
    def default(cls) -> Isolation:
        """What bots get when nothing is configured: the level named by the environment
        variable ``MORRIS_ARENA_ISOLATION`` if set, else the best available; default limits.

        :raises ConfigError: the variable names an unknown or unavailable level.
        """
        return cls(parse_level(os.environ.get(LEVEL_VARIABLE), LEVEL_VARIABLE))

    @classmethod
    def parse(cls, data: object, path: str = "isolation") -> Isolation:
        """From config: a level name (``bwrap``) or a mapping ``{level: ..., limits: {...},
        read_only: [...], cgroups: true}``; ``None`` means the best available.

        :raises ConfigError: naming the key path that is wrong.
        """
        if data is None or isinstance(data, (str, Level)):
            return cls(parse_level(data, path))
        if not isinstance(data, Mapping):
            raise ConfigError(f"expected a level name or a mapping, got {data!r}", path)
        for key in data:
            if key not in ("level", "limits", "read_only", "cgroups"):
                raise ConfigError("unknown key (known: level, limits, read_only, cgroups)",
                                  f"{path}.{key}")
        level = parse_level(data.get("level"), f"{path}.level")
        limits = Limits.from_mapping(data.get("limits") or {}, f"{path}.limits")
        ro = data.get("read_only") or []
        if not isinstance(ro, list) or not all(isinstance(p, str) and os.path.isabs(p) for p in ro):
            raise ConfigError("expected a list of absolute paths", f"{path}.read_only")
        use_cgroups = data.get("cgroups", True)
        if not isinstance(use_cgroups, bool):
            raise ConfigError(f"expected true or false, got {use_cgroups!r}", f"{path}.cgroups")
        return cls(level, limits, tuple(ro), use_cgroups)

    def sandbox(self, folder: str | os.PathLike[str], *, cwd: Optional[str] = None,
                label: str = "") -> Sandbox:
        """A :class:`Sandbox` for one bot process living in ``folder``."""
        return Sandbox(self.level, folder, cwd=cwd, limits=self.limits, label=label,
                       read_only=self.read_only, cgroups=self.cgroups)

    def to_dict(self) -> dict[str, Any]:
        """A plain form for records and reports."""
        return {"level": self.level.value,
                "limits": {f.name: getattr(self.limits, f.name) for f in fields(self.limits)},
                "read_only": list(self.read_only), "cgroups": self.cgroups}


# --------------------------------------------------------------------------------------
# Machine capabilities (probed once per process)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """One capability: its name, whether it is usable, and why (a short phrase)."""

    name: str
    ok: bool
    detail: str

    def line(self) -> str:
        """``name: detail`` as ``arena doctor`` prints it."""
        return f"{self.name}: {self.detail}"


def _is_root() -> bool:
    return os.geteuid() == 0


@functools.lru_cache(maxsize=1)
def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, arg: int) -> int:
    result = _libc().prctl(ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(0),
                           ctypes.c_ulong(0), ctypes.c_ulong(0))
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return int(result)


@functools.lru_cache(maxsize=1)
def bwrap_status() -> Check:
    """Whether bubblewrap is installed *and* can make its namespaces here (tried once)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return Check("bwrap", False, "unavailable (bubblewrap is not installed: "
                                     "apt-get install -y bubblewrap)")
    try:
        version = subprocess.run([exe, "--version"], capture_output=True, text=True,
                                 timeout=5).stdout.strip() or "bubblewrap"
    except (OSError, subprocess.SubprocessError) as e:
        return Check("bwrap", False, f"unavailable (cannot run {exe}: {e})")
    if _is_root() and shutil.which("setpriv") is None:
        return Check("bwrap", False, f"unavailable ({version} is installed, but running as root "
                                     "needs setpriv (util-linux) to drop privileges)")
    uid = _unique_uid() if _is_root() else None
    probe = _bwrap_args(folder=None, cwd="/", tmp_mb=1, uid=uid) + ["true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as e:
        return Check("bwrap", False, f"unavailable ({version} is installed but failed: {e})")
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return Check("bwrap", False, f"unavailable ({version} is installed but cannot make "
                                     f"its namespaces: {why})")
    return Check("bwrap", True, f"available ({version})")


@functools.lru_cache(maxsize=1)
def _subreaper_status() -> Check:
    try:
        flag = ctypes.c_int(0)  # kept alive while prctl writes into it
        _prctl(_PR_GET_CHILD_SUBREAPER, ctypes.addressof(flag))
    except (OSError, AttributeError) as e:
        return Check("child subreaper", False, f"unavailable ({e})")
    return Check("child subreaper", True, "available (prctl PR_SET_CHILD_SUBREAPER)")


def available_levels() -> list[Level]:
    """The levels this machine can provide, weakest first."""
    levels = [Level.NONE]
    if _subreaper_status().ok:
        if not _is_root() or confinement_status().ok:
            levels.append(Level.BASIC)
        if bwrap_status().ok:
            levels.append(Level.BWRAP)
    return levels


def _basic_status() -> Check:
    """Why ``basic`` is or is not available (as root it needs the confinement)."""
    sub = _subreaper_status()
    if not sub.ok or not _is_root():
        return sub
    return confinement_status()


def level_warning(level: Level) -> Optional[str]:
    """What ``level`` does not protect here, in one line for the console (None when it
    confines files and processes: ``bwrap``, or ``basic`` run by root)."""
    get_bwrap = "install bubblewrap for a file system boundary (apt-get install -y bubblewrap)"
    if level is Level.NONE:
        who = "root" if _is_root() else "you"
        return (f"isolation none: bots run unconfined as {who}: they can read and write your "
                f"files and signal your processes; {get_bwrap}")
    if level is Level.BASIC and not _is_root():
        return ("isolation basic: bots run as you: they can read and write your files, "
                f"signal your processes and reach the network; {get_bwrap}, see `arena doctor`")
    return None


def best_level() -> Level:
    """The strongest level available here (the default)."""
    return available_levels()[-1]


# -- cgroups -----------------------------------------------------------------------------

#: the controllers a sandbox uses, by role: (v1 name, v2 name or None)
_ROLES: dict[str, tuple[str, Optional[str]]] = {
    "memory": ("memory", "memory"), "pids": ("pids", "pids"), "cpu": ("cpuacct", "cpu"),
    "freezer": ("freezer", None)}
#: a limit file written by the writability probe, per (role, version)
_PROBE_FILES = {("memory", 1): ("memory.limit_in_bytes", str(1 << 30)),
                ("memory", 2): ("memory.max", str(1 << 30)),
                ("pids", 1): ("pids.max", "64"), ("pids", 2): ("pids.max", "64"),
                ("freezer", 1): ("freezer.state", "THAWED")}


@dataclass(frozen=True)
class _Hierarchy:
    """Where one role's cgroups go: the parent folder, the controller and the version."""

    role: str
    controller: str
    version: int
    parent: Path


def _read(path: Path | str) -> str:
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


def _write(path: Path | str, text: str) -> None:
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
    for line in _read("/proc/self/cgroup").splitlines():
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
    for line in _read("/proc/self/mountinfo").splitlines():
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
    """Create the ``morris-arena`` parent (v2: with the controller enabled for children)."""
    h.parent.mkdir(exist_ok=True)
    if h.version == 2:
        _write(h.parent / "cgroup.subtree_control", f"+{h.controller}")


def _make_child(h: _Hierarchy, path: Path) -> None:
    """Create ``path`` under the parent, which another process may remove when it empties."""
    for attempt in range(5):
        try:
            _make_parent(h)
            path.mkdir()
            return
        except FileNotFoundError:
            if attempt == 4:
                raise


def _probe(h: _Hierarchy) -> Optional[str]:
    """Make the parent and a probe child, write a limit, remove both: None, or why not."""
    probe = h.parent / f"probe-{os.getpid()}-{next(_counter)}"
    try:
        _make_parent(h)
        probe.mkdir()
    except OSError as e:
        _rmdir_quietly(h.parent)
        return f"not writable ({e.strerror})"
    limit_file, value = _PROBE_FILES.get((h.role, h.version), ("", ""))
    try:
        if limit_file:
            _write(probe / limit_file, value)
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
                if rel is not None and controller not in _read(
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
        name = f"cgroup {h.controller if h else v1_name}"
        found_checks.append(Check(name, h is not None, f"writable (v{h.version}, {h.parent})"
                                  if h else f"unavailable ({why})"))
    return tuple(hierarchies), tuple(found_checks)


def cgroup_status() -> list[Check]:
    """One :class:`Check` per cgroup role: memory, pids, cpu accounting, freezer."""
    return list(_cgroup_layout()[1])


def _hierarchy(role: str) -> Optional[_Hierarchy]:
    return _cgroup_layout()[0][list(_ROLES).index(role)]


def cpu_clock_status() -> Check:
    """Which CPU clock ``clock: cpu`` uses here: cgroup accounting or process CPU times."""
    h = _hierarchy("cpu")
    if h is not None:
        source = "cgroup cpuacct" if h.version == 1 else "cgroup v2 cpu.stat"
        return Check("cpu clock", True, f"{source} (exact, whole process tree; at basic and bwrap)")
    return Check("cpu clock", True, "process CPU times (psutil; live process tree, approximate)")


def checks() -> list[Check]:
    """Everything ``arena doctor`` reports, one :class:`Check` per line."""
    out = [Check("levels", True, ", ".join(lv.value for lv in available_levels())
                 + f" (default: {best_level().value})"),
           Check("none", True, "available (own process group and working directory)")]
    basic = _basic_status()
    if not basic.ok:
        out.append(Check("basic", False, basic.detail))
    elif _is_root():
        out.append(Check("basic", True, "available (as root: a unique unprivileged uid, "
                                        "read-only mounts, a private /tmp; rlimits, cleared "
                                        "environment, child subreaper, parent-death signal)"))
    else:
        out.append(Check("basic", True, "available (rlimits, cleared environment, child "
                                        "subreaper, parent-death signal; bots run as you)"))
    out.append(bwrap_status())
    if _is_root():
        ok = shutil.which("setpriv") is not None
        out.append(Check("privilege drop", ok, "setpriv (bwrap bots run as a unique "
                                               "unprivileged uid)" if ok else
                         "unavailable (setpriv is missing)"))
    out += cgroup_status()
    out.append(cpu_clock_status())
    out.append(Check("wall clock", True, "available (time.monotonic)"))
    return out


# --------------------------------------------------------------------------------------
# One bot's cgroups
# --------------------------------------------------------------------------------------


class _Cgroups:
    """One bot's cgroups: one folder per v1 hierarchy (or one v2 folder), made with limits."""

    def __init__(self, name: str, limits: Optional[Limits]) -> None:
        """Make the cgroups ``name`` with ``limits``; ``None``: take existing ones as they are."""
        self.dirs: dict[str, Path] = {}
        self.versions: dict[str, int] = {}
        if limits is not None:
            _sweep_stale()
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
        except OSError as e:
            self.remove()
            raise SandboxError(f"cannot set up the cgroup {name}: {e}") from None

    @staticmethod
    def _configure(role: str, version: int, path: Path, limits: Limits) -> None:
        memory = str(limits.memory_mb << 20)
        if role == "memory" and version == 1:
            _write(path / "memory.limit_in_bytes", memory)
            if (path / "memory.memsw.limit_in_bytes").exists():  # no swapping past the limit
                _write(path / "memory.memsw.limit_in_bytes", memory)
        elif role == "memory":
            _write(path / "memory.max", memory)
            if (path / "memory.swap.max").exists():
                _write(path / "memory.swap.max", "0")
        elif role == "pids":
            _write(path / "pids.max", str(limits.pids))

    @property
    def procs_files(self) -> tuple[str, ...]:
        """The ``cgroup.procs`` files a new process writes its pid into, one per folder."""
        return tuple(sorted({str(p / "cgroup.procs") for p in self.dirs.values()}))

    def pids(self) -> set[int]:
        """Every process now in the bot's cgroups."""
        found: set[int] = set()
        for path in set(self.dirs.values()):
            try:
                found.update(int(x) for x in _read(path / "cgroup.procs").split())
            except OSError:
                continue
        return found

    @functools.cached_property
    def _cpu_file(self) -> Optional[tuple[str, int]]:
        """The CPU accounting file and its cgroup version (found once: read on every move)."""
        path = self.dirs.get("cpu")
        if path is None:
            return None
        version = self.versions["cpu"]
        return str(path / ("cpuacct.usage" if version == 1 else "cpu.stat")), version

    def cpu_ns(self) -> Optional[int]:
        """CPU nanoseconds used by every process that was ever in the cgroup, or None."""
        found = self._cpu_file
        try:
            if found is not None and found[1] == 1:
                return int(_read(found[0]))
            if found is not None:
                for line in _read(found[0]).splitlines():
                    key, _, value = line.partition(" ")
                    if key == "usage_usec":
                        return int(value) * 1000
        except (OSError, ValueError):
            pass
        return None

    def _freeze(self, frozen: bool) -> bool:
        """Freeze (or thaw) the bot: v1 freezer, else v2 ``cgroup.freeze``; False if neither."""
        v1 = self.dirs.get("freezer")
        v2 = next((p for r, p in self.dirs.items() if self.versions[r] == 2), None)
        try:
            if v1 is not None:
                _write(v1 / "freezer.state", "FROZEN" if frozen else "THAWED")
                end = time.monotonic() + 0.5
                while frozen and _read(v1 / "freezer.state").strip() != "FROZEN":
                    if time.monotonic() > end:
                        break
                    time.sleep(0.002)
                return True
            if v2 is not None:
                _write(v2 / "cgroup.freeze", "1" if frozen else "0")
                return True
        except OSError:
            pass
        return False

    def kill(self) -> set[int]:
        """Freeze, SIGKILL every member, thaw, until the cgroups are empty; the pids killed."""
        killed: set[int] = set()
        end = time.monotonic() + _KILL_WAIT_S
        v2_kill = next((p / "cgroup.kill" for r, p in self.dirs.items()
                        if self.versions[r] == 2 and (p / "cgroup.kill").exists()), None)
        while self.pids() and time.monotonic() < end:
            frozen = self._freeze(True)
            members = self.pids()
            if v2_kill is not None:
                try:
                    _write(v2_kill, "1")
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
        for path in sorted(set(self.dirs.values()), key=str):
            end = time.monotonic() + 2.0
            while path.exists() and not _rmdir_quietly(path) and time.monotonic() < end:
                time.sleep(0.005)
            if path.exists():
                log.warning("cgroup %s could not be removed", path)
            _rmdir_quietly(path.parent)  # only succeeds once no other bot uses it


def _events(path: Path) -> dict[str, int]:
    try:
        text = _read(path)
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if value.strip().isdigit():
            out[key] = int(value)
    return out


def _sweep_stale() -> None:
    """Kill and remove the bots of referees that died without cleaning up.

    A stale cgroup is named ``<pid>-...`` after a referee that no longer runs, and exists
    under *every* parent this referee uses: so only sandboxes made from the same cgroup as
    ours are touched (on a shared machine, another user's or session's are left alone).
    Without this, a bwrap child killed in its first microseconds (its parent gone before
    letting it run) would wait forever inside its cgroup.  (The dead referee's watchdog,
    :func:`watch_referee`, normally did this already.)
    """
    _remove_cgroups(_is_stale)


def _remove_cgroups(wanted: Callable[[str], bool]) -> int:
    """Kill what runs in, then remove, the sandbox cgroups whose name ``wanted`` accepts
    and that exist under every parent this process uses; returns how many were found."""
    parents = {h.parent for h in _cgroup_layout()[0] if h is not None}
    names: Optional[set[str]] = None
    for parent in parents:
        try:
            found = {c.name for c in parent.iterdir() if c.is_dir() and wanted(c.name)}
        except OSError:
            found = set()
        names = found if names is None else names & found
    for name in sorted(names or ()):
        log.info("removing the sandbox %s of a referee that is gone", name)
        left = _Cgroups(name, None)
        left.kill()
        left.remove()
    return len(names or ())


def _is_stale(name: str) -> bool:
    head = name.split("-", 1)[0]
    return head.isdigit() and int(head) != os.getpid() and not process_alive(int(head))


# --------------------------------------------------------------------------------------
# Process helpers
# --------------------------------------------------------------------------------------


def process_alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its parent counts as gone)."""
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _tree(pid: int) -> list[Any]:
    """``pid`` and its live descendants as psutil processes (empty if it is gone)."""
    import psutil

    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def _cpu_seconds(procs: Iterable[Any]) -> float:
    import psutil

    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def _check_readable(folder: str) -> None:
    """A bot run as an unprivileged uid needs its folder readable by other users.

    :raises SandboxError: it is not (naming the mode and the fix).
    """
    try:
        mode = os.stat(folder).st_mode
    except OSError as e:
        raise SandboxError(f"cannot read the bot folder {folder}: {e.strerror}") from None
    if mode & 0o005 != 0o005:
        raise SandboxError(f"the bot folder {folder} is not readable by other users (mode "
                           f"{mode & 0o777:o}); as root, bots run as an unprivileged uid: "
                           f"chmod -R a+rX {folder}")


def _unique_uid() -> int:
    """A uid no other live sandbox uses: from this process's pid and a counter."""
    return UID_BASE + (os.getpid() % (1 << 22)) * 64 + next(_counter) % 64


def _ensure_subreaper() -> None:
    """Make this process the child subreaper (once): orphans of bots become our children."""
    with _subreaper_lock:
        flag = ctypes.c_int(0)
        _prctl(_PR_GET_CHILD_SUBREAPER, ctypes.addressof(flag))
        if not flag.value:
            _prctl(_PR_SET_CHILD_SUBREAPER, 1)


# --------------------------------------------------------------------------------------
# The watchdog: the bots of a referee that was killed
# --------------------------------------------------------------------------------------
#
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


def _ensure_watchdog() -> None:
    """Start this process's watchdog once (see :func:`watch_referee`); a failure is logged."""
    global _watchdog
    with _watchdog_lock:
        if _watchdog is not None and _watchdog[0] == os.getpid():
            return
        import arena

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
    return (len(procs) + _remove_cgroups(lambda name: name.startswith(prefix))
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


def _sweep_stale_temp_once() -> None:
    """Once per process: remove the temporary folders of referees that are gone (their
    watchdog normally did; it may have been killed too)."""
    global _temp_swept
    if not _temp_swept:
        _temp_swept = True
        _remove_temp_folders(_is_stale)


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
    if process_alive(referee):  # it closed the pipe by exec: not ours to judge
        return
    end = time.monotonic() + WATCH_SWEEP_S
    quiet = 0
    while time.monotonic() < end and quiet < 5:
        quiet = 0 if sweep_referee(referee) else quiet + 1
        time.sleep(0.05)


# --------------------------------------------------------------------------------------
# bubblewrap command line
# --------------------------------------------------------------------------------------


def _inside(path: str, root: str) -> bool:
    """``path`` is ``root`` or below it."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def _runtime_paths(command: Sequence[str], env_path: str) -> list[str]:
    """Real paths of the Python installation, the arena package and the command's own
    installation (``.../bin/node`` -> ``...``), to mount read-only.  Top-level folders
    (``/opt``, ``/home``) are never mounted whole: name such paths in ``read_only``."""
    import arena

    found = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             str(Path(arena.__file__).resolve().parent)]
    exe = os.path.realpath(sys.executable)
    found.append(str(Path(exe).parent.parent if Path(exe).parent.name == "bin" else Path(exe).parent))
    if command:
        which = shutil.which(command[0], path=env_path) if "/" not in command[0] else command[0]
        if which and os.path.isabs(which):
            real = Path(os.path.realpath(which))
            found.append(str(real.parent.parent if real.parent.name == "bin" else real.parent))
    paths = [os.path.realpath(p) for p in found]
    return [p for p in paths if p.count("/") >= 2 or _inside(p, "/usr")]


def _bwrap_args(*, folder: Optional[str], cwd: str, tmp_mb: int, uid: Optional[int],
                command: Sequence[str] = (), read_only: Sequence[str] = ()) -> list[str]:
    """The bwrap prefix (ending with ``--`` and, as root, a ``setpriv`` privilege drop)."""
    args = [shutil.which("bwrap") or "bwrap"]
    mounted: list[str] = []  # read-only trees already visible
    for name in SYSTEM_DIRS:
        host = f"/{name}"
        if os.path.islink(host):
            args += ["--symlink", os.readlink(host), host]
        elif os.path.isdir(host):
            args += ["--ro-bind", host, host]
            mounted.append(host)
    args += ["--perms", "0755", "--dir", "/etc"]  # bwrap would make it 0700: unreadable
    for name in ETC_ENTRIES:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for java in sorted(Path("/etc").glob("java*")):
        args += ["--ro-bind-try", str(java), str(java)]
    args += ["--proc", "/proc", "--ro-bind-try", "/proc/sys", "/proc/sys", "--dev", "/dev",
             "--perms", "1777", "--size", str(tmp_mb << 20), "--tmpfs", "/tmp"]
    made = {"/", "/tmp", "/proc", "/dev", "/etc"}
    binds = _runtime_paths(command, os.environ.get("PATH", os.defpath)) + [
        os.path.realpath(p) for p in read_only]
    if folder is not None:
        binds.append(folder)
    for src in sorted(dict.fromkeys(binds), key=lambda p: (p.count("/"), p)):
        if src != folder and folder is not None and _inside(folder, src):
            log.warning("not mounting %s for the bot: it contains the bot folder", src)
            continue
        if not os.path.exists(src) or any(_inside(src, m) for m in mounted):
            continue
        parents = [str(p) for p in reversed(Path(src).parents)]
        for parent in parents:
            if parent not in made:
                args += ["--perms", "0755", "--dir", parent]
                made.add(parent)
        args += ["--ro-bind", src, src]
        mounted.append(src)
    args += ["--chdir", cwd, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
             "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--"]
    if uid is not None:
        args += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                 "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    return args


# --------------------------------------------------------------------------------------
# basic as root: an unprivileged uid in a private, read-only mount namespace
# --------------------------------------------------------------------------------------
#
# A bot run by a root referee at ``basic`` would own the machine.  So, as root, ``basic``
# confines each bot in its child, before ``exec`` (only system calls, as bwrap would do
# them): a new mount namespace in which every mount is read-only, one private tmpfs of
# ``tmp_mb`` on ``/tmp`` (also bound on ``/var/tmp`` and ``/dev/shm``: the world-writable
# places), closed folders on the way to what the bot needs (``/root`` for a Python
# installed there) replaced by an empty read-only tmpfs holding just those paths, and then a
# unique unprivileged uid with no groups, no capabilities and ``no_new_privs``.  The bot
# then cannot write outside its ``/tmp``, cannot signal or trace other bots (other uids),
# and sees the results folder only if it is world-readable and not under ``/tmp``.

_CLONE_NEWNS = 0x00020000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV = 0x1, 0x2, 0x4
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
_SYS_MOUNT_SETATTR = 442  # the same number on every architecture (added in Linux 5.12)
_AT_FDCWD, _AT_RECURSIVE = -100, 0x8000
_MOUNT_ATTR_RDONLY, _MOUNT_ATTR_NOSUID = 0x1, 0x2
_PR_SET_NO_NEW_PRIVS = 38
#: the world-writable folders that become the bot's private tmpfs at ``basic`` as root
PRIVATE_TMP = ("/tmp", "/var/tmp", "/dev/shm")


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def _check(result: int, what: str) -> None:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source: Optional[str], target: str, fstype: Optional[str], flags: int,
           data: Optional[str] = None) -> None:
    enc = (lambda s: s.encode() if s is not None else None)
    _check(_libc().mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags),
                         enc(data)), f"mount {target}")


@dataclass(frozen=True)
class _Confinement:
    """How one bot is confined at ``basic`` as root: planned in the referee (it reads the
    file system), applied in the child before ``exec`` (:meth:`apply`: system calls only)."""

    uid: int
    tmp_mb: int
    cwd: str
    #: paths the bot needs (its folder, the runtime), read-only
    visible: tuple[str, ...]
    #: closed folders (no search permission for others) on the way to a visible path,
    #: covered by an empty read-only tmpfs holding just the visible paths below them
    masks: tuple[str, ...]

    @classmethod
    def plan(cls, *, uid: int, tmp_mb: int, cwd: str, needed: Iterable[str]) -> _Confinement:
        """The confinement for a bot that needs ``needed`` (and ``cwd``) read-only."""
        visible: list[str] = []
        wanted = {os.path.realpath(p) for p in [*needed, cwd] if os.path.exists(p)} - {"/"}
        for path in sorted(wanted, key=lambda p: (p.count("/"), p)):
            if not any(_inside(path, v) for v in visible):
                visible.append(path)
        masks: list[str] = []
        for path in visible:
            if any(_inside(path, t) for t in PRIVATE_TMP):
                continue  # re-created inside the private /tmp
            for parent in reversed(Path(path).parents):
                folder = str(parent)
                if folder == "/" or any(_inside(folder, m) for m in masks):
                    continue
                try:
                    closed = not os.stat(folder).st_mode & 0o001
                except OSError:
                    closed = True
                if closed:
                    masks.append(folder)
                    break
        return cls(uid, tmp_mb, os.path.realpath(cwd), tuple(visible), tuple(masks))

    def _hidden(self, path: str) -> bool:
        return any(_inside(path, m) for m in (*PRIVATE_TMP, *self.masks))

    def apply(self) -> None:
        """In the child, before ``exec``: the mount namespace, then the uid.  Raises OSError
        if a step that protects the machine fails (the bot then does not start)."""
        libc = _libc()
        os.umask(0o022)
        _check(libc.unshare(ctypes.c_int(_CLONE_NEWNS)), "unshare")
        _mount(None, "/", None, _MS_REC | _MS_PRIVATE)  # nothing propagates to the host
        rebinds = [p for p in self.visible if self._hidden(p)]
        fds = [os.open(p, os.O_PATH | os.O_CLOEXEC) for p in rebinds]  # before hiding them
        attr = _MountAttr(_MOUNT_ATTR_RDONLY | _MOUNT_ATTR_NOSUID, 0, 0, 0)
        _check(libc.syscall(ctypes.c_long(_SYS_MOUNT_SETATTR), ctypes.c_int(_AT_FDCWD), b"/",
                            ctypes.c_uint(_AT_RECURSIVE), ctypes.byref(attr),
                            ctypes.c_size_t(ctypes.sizeof(attr))), "read-only mounts")
        _mount("tmpfs", "/tmp", "tmpfs", _MS_NOSUID | _MS_NODEV,
               f"mode=1777,size={self.tmp_mb}m")
        for other in PRIVATE_TMP[1:]:
            if os.path.isdir(other):  # one tmpfs: the bot's whole writable space is tmp_mb
                _mount("/tmp", other, None, _MS_BIND)
        for mask in self.masks:
            _mount("tmpfs", mask, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755,size=1m")
        for path, fd in zip(rebinds, fds):
            os.makedirs(path, 0o755, exist_ok=True)
            _mount(f"/proc/self/fd/{fd}", path, None, _MS_BIND | _MS_REC)  # read-only already
            os.close(fd)
        for mask in self.masks:
            _mount(None, mask, None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
        os.chdir(self.cwd)
        os.setgroups([])
        os.setresgid(self.uid, self.uid, self.uid)
        os.setresuid(self.uid, self.uid, self.uid)
        _check(libc.prctl(ctypes.c_int(_PR_SET_NO_NEW_PRIVS), ctypes.c_ulong(1),
                          ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)),
               "no_new_privs")


def _confined_basic() -> bool:
    """True when ``basic`` confines bots (the referee is root)."""
    return _is_root()


@functools.lru_cache(maxsize=1)
def confinement_status() -> Check:
    """Whether ``basic`` can confine a bot here when the referee is root (tried once, for
    real: a child in a private read-only mount namespace, as an unprivileged uid, must run
    this Python, write its private ``/tmp`` and fail to write ``/``)."""
    if not _is_root():
        return Check("confinement", False, "not root: basic bots run as you")
    plan = _Confinement.plan(uid=_unique_uid(), tmp_mb=1, cwd="/",
                             needed=_runtime_paths([sys.executable], os.defpath))
    code = ("import os,sys\n"
            "open('/tmp/probe','w').write('x')\n"
            "try:\n open('/morris-arena-probe','w')\nexcept OSError: pass\n"
            "else: sys.exit(4)\n"
            "sys.exit(0 if os.getuid() != 0 else 3)")
    try:
        done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True,
                              text=True, timeout=20, preexec_fn=plan.apply, cwd="/",
                              env={"PATH": os.defpath})
    except (OSError, subprocess.SubprocessError) as e:
        return Check("confinement", False, f"unavailable (a confined child failed: {e})")
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return Check("confinement", False, f"unavailable (a confined child failed: {why})")
    return Check("confinement", True, "unique unprivileged uid, read-only mounts, private /tmp "
                                      "(basic as root)")


# --------------------------------------------------------------------------------------
# The sandbox
# --------------------------------------------------------------------------------------


class Sandbox:
    """The isolation of one bot process: command wrapping, child setup, CPU time, kill.

    One owner thread spawns and closes; :meth:`cpu_time` may be called from any thread.
    Call :meth:`close` (or use it as a context manager) to kill what is left and to remove
    the cgroups and the temporary folder.

    The parent-death signal fires when the *thread* that spawned the bot exits: spawn a bot
    from a thread that outlives it (the game's thread).

    :raises ConfigError: the level is unknown or not available here.
    :raises SandboxError: a cgroup or the temporary folder cannot be made.
    """

    def __init__(self, level: Level | str, folder: str | os.PathLike[str], *,
                 cwd: Optional[str] = None, limits: Optional[Limits] = None, label: str = "",
                 read_only: Sequence[str] = (), cgroups: bool = True) -> None:
        self.level = level if isinstance(level, Level) else parse_level(level)
        if self.level not in available_levels():
            raise ConfigError(f"isolation level {self.level.value} is not available here")
        self.folder = os.path.realpath(folder)
        self.cwd = os.path.realpath(cwd) if cwd is not None else self.folder
        self.limits = limits or Limits()
        self.label = label
        self.read_only = tuple(read_only)
        #: tags the bot's environment and names its cgroups: ``<referee pid>-<n>-<random>``
        self.token = f"{os.getpid()}-{next(_counter)}-{os.urandom(4).hex()}"
        #: the unprivileged uid a bwrap bot runs as when the referee is root
        self.uid: Optional[int] = None
        #: the bot's private temporary folder (basic; bwrap uses a tmpfs)
        self.tmp: Optional[str] = None
        #: the spawned process (bwrap itself at level bwrap)
        self.pid: Optional[int] = None
        self._root: Any = None  # psutil.Process of pid: signals to it are safe from pid reuse
        self._cgroups: Optional[_Cgroups] = None
        self._tracked: dict[int, Any] = {}  # pid -> psutil.Process seen in the bot's tree
        self._cpu_floor = 0.0
        self._scanned_at = -RESCAN_S
        self._cpu_base_ns: Optional[int] = None
        self._lock = threading.Lock()
        self._closed = False
        self._parent_pid = os.getpid()
        self._rlimits: list[tuple[int, tuple[int, int]]] = []
        self._command: tuple[str, ...] = ()
        if self.level is Level.NONE:
            return
        _ensure_watchdog()  # kills our bots if we are killed: see watch_referee
        if _is_root():  # bwrap (setpriv) and basic (confinement) drop root for a unique uid
            self.uid = _unique_uid()
            if self.level is Level.BASIC:
                _check_readable(self.folder)
        self._rlimits = self._make_rlimits()
        if cgroups:
            self._cgroups = _Cgroups(self.token, self.limits)
        if self.level is Level.BASIC:
            _ensure_subreaper()
        if self.level is Level.BASIC and self.uid is None:  # as root: a private tmpfs
            _sweep_stale_temp_once()
            try:  # named after the token, so a dead referee's folders can be found
                self.tmp = tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{self.token}-")
            except OSError as e:
                if self._cgroups is not None:
                    self._cgroups.remove()
                raise SandboxError(f"cannot make a temporary folder: {e}") from None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Sandbox {self.describe()} {self.label or self.folder} pid={self.pid}>"

    # -- describing ----------------------------------------------------------------------
    @property
    def cgroups(self) -> list[str]:
        """The cgroup roles the bot runs under (``memory``, ``pids``, ``cpu``, ``freezer``)."""
        return list(self._cgroups.dirs) if self._cgroups is not None else []

    @property
    def exact_cpu(self) -> bool:
        """True when :meth:`cpu_time` comes from cgroup accounting (exited processes included)."""
        return "cpu" in self.cgroups

    def describe(self) -> str:
        """One phrase: the level and what backs it, e.g. ``bwrap + cgroups(memory,pids,cpu)``."""
        extra = f" + cgroups({','.join(self.cgroups)})" if self.cgroups else ""
        return f"{self.level.value}{extra}" + (f", uid {self.uid}" if self.uid is not None else "")

    def notes(self) -> list[str]:
        """What the limits did to the bot (OOM kills, refused forks), for game records."""
        return self._cgroups.notes() if self._cgroups is not None else []

    def exit_status(self, code: int) -> int:
        """The bot's exit status from the spawned process's: bwrap reports a child killed
        by signal N as ``128 + N``, which is turned back into ``-N`` (as ``Popen`` says)."""
        if self.level is Level.BWRAP and 128 < code < 128 + 65:
            return 128 - code
        return code

    # -- spawning ------------------------------------------------------------------------
    def _make_rlimits(self) -> list[tuple[int, tuple[int, int]]]:
        lim = self.limits
        wanted = [(resource.RLIMIT_CORE, 0, 0),
                  (resource.RLIMIT_FSIZE, lim.file_size_mb << 20, lim.file_size_mb << 20),
                  (resource.RLIMIT_NOFILE, lim.open_files, lim.open_files),
                  (resource.RLIMIT_CPU, lim.cpu_s, lim.cpu_s + 5)]  # SIGXCPU, then SIGKILL
        if self.uid is not None:  # a unique uid: its process count is exactly the bot's
            wanted.append((resource.RLIMIT_NPROC, lim.pids, lim.pids))
        out = []
        for res, soft, hard in wanted:
            _, cap = resource.getrlimit(res)
            if cap != resource.RLIM_INFINITY:
                soft, hard = min(soft, cap), min(hard, cap)
            out.append((res, (soft, hard)))
        return out

    def wrap(self, command: Sequence[str], *, pipes: Optional[tuple[int, int]] = None) -> list[str]:
        """The command to run: unchanged below bwrap, else behind the bwrap prefix.

        ``pipes`` (bwrap only): descriptors ``(stdin, stdout)`` that a bash trampoline inside
        the sandbox moves to the bot's 0 and 1, so bwrap's own processes never hold them.
        """
        self._command = tuple(command)
        if self.level is not Level.BWRAP:
            return list(command)
        prefix = _bwrap_args(folder=self.folder, cwd=self.cwd, tmp_mb=self.limits.tmp_mb,
                             uid=self.uid, command=command, read_only=self.read_only)
        if pipes is not None:
            i, o = pipes
            prefix += [_BASH, "-c", f'exec 0<&{i} 1>&{o} {i}<&- {o}>&-; exec "$@"', "bot"]
        return prefix + list(command)

    def popen(self, command: Sequence[str], *, cwd: Optional[str] = None,
              env: Optional[Mapping[str, str]] = None) -> subprocess.Popen[bytes]:
        """Start ``command`` in the sandbox, in its own session, with unbuffered binary pipes
        for stdin, stdout and stderr; :meth:`attach` it.  ``env`` is as for :meth:`env`.

        Under bwrap, bwrap's own processes keep their standard descriptors open for the
        sandbox's life; so the bot's stdin and stdout are handed over on other descriptors
        and moved into place inside, and a bot that closes its stdout is seen at once.

        :raises OSError: the command (or bwrap) cannot be started.
        """
        common: dict[str, Any] = dict(cwd=cwd or self.cwd, env=self.env(env),
                                      preexec_fn=self.preexec, start_new_session=True,
                                      close_fds=True, bufsize=0, stderr=subprocess.PIPE)
        if self.level is not Level.BWRAP or _BASH is None:
            proc = subprocess.Popen(self.wrap(command), stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, **common)
        else:
            in_r, in_w = os.pipe()
            out_r, out_w = os.pipe()
            try:
                proc = subprocess.Popen(self.wrap(command, pipes=(in_r, out_w)),
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        pass_fds=(in_r, out_w), **common)
            except BaseException:
                os.close(in_w)
                os.close(out_r)
                raise
            finally:
                os.close(in_r)
                os.close(out_w)
            proc.stdin = os.fdopen(in_w, "wb", buffering=0)
            proc.stdout = os.fdopen(out_r, "rb", buffering=0)
        self.attach(proc.pid)
        return proc

    def env(self, base: Optional[Mapping[str, str]] = None) -> Optional[dict[str, str]]:
        """The bot's environment.  ``base`` is what the caller would have used (None: ours).

        ``none`` returns ``base`` unchanged; ``basic`` and ``bwrap`` keep only ``PATH``,
        ``LANG``/``LC_*``/``TZ``, ``PYTHONPATH`` (so ``{python}`` bots import ``arena`` as we
        do; under bwrap only the package itself is mounted) and what ``base`` adds or changes
        relative to our own environment, and set ``HOME``/``TMPDIR`` to the bot's private
        temporary folder.
        """
        if self.level is Level.NONE:
            return dict(base) if base is not None else None
        env = {k: os.environ[k] for k in KEPT_VARIABLES if k in os.environ}
        env.setdefault("PATH", os.defpath)
        if base is not None:
            env.update({k: v for k, v in base.items() if os.environ.get(k) != v})
        home = self.tmp or "/tmp"
        env.update(HOME=home, TMPDIR=home, PYTHONDONTWRITEBYTECODE="1")
        env[TAG_VARIABLE] = self.token
        return env

    @property
    def preexec(self) -> Optional[Callable[[], None]]:
        """The function to run in the child before ``exec`` (None at level ``none``).

        It joins the bot's cgroups (so every descendant is born inside them), sets the
        rlimits and the parent-death signal.  Only system calls: safe after ``fork``.
        """
        if self.level is Level.NONE:
            return None
        files = self._cgroups.procs_files if self._cgroups is not None else ()
        rlimits = list(self._rlimits)
        parent = self._parent_pid
        prctl = _libc().prctl
        confine = self.confinement()

        def setup() -> None:
            me = str(os.getpid()).encode("ascii")
            for name in files:
                fd = os.open(name, os.O_WRONLY)
                try:
                    os.write(fd, me)
                finally:
                    os.close(fd)
            for res, values in rlimits:
                resource.setrlimit(res, values)
            if confine is not None:
                try:
                    confine.apply()
                except OSError as e:  # seen by the referee as a start failure with this line
                    os.write(2, f"morris-arena: cannot confine the bot: {e}\n".encode())
                    os._exit(126)
            prctl(ctypes.c_int(_PR_SET_PDEATHSIG), ctypes.c_ulong(signal.SIGKILL),
                  ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))
            if os.getppid() != parent:  # the referee died before the signal was armed
                os._exit(127)

        return setup

    def confinement(self) -> Optional[_Confinement]:
        """How the bot is confined at ``basic`` as root (None at other levels or as another
        user): planned for the command last given to :meth:`wrap` (or this Python)."""
        if self.level is not Level.BASIC or self.uid is None:
            return None
        command = self._command or (sys.executable,)
        needed = [*_runtime_paths(command, os.environ.get("PATH", os.defpath)),
                  *(os.path.realpath(p) for p in self.read_only), self.folder]
        return _Confinement.plan(uid=self.uid, tmp_mb=self.limits.tmp_mb, cwd=self.cwd,
                                 needed=needed)

    def attach(self, pid: int) -> None:
        """Record the spawned process (started with :meth:`wrap`, :meth:`env`, :meth:`preexec`).

        If :meth:`preexec` was not used, the process is moved into the cgroups now (children
        it made before this call are not).
        """
        import psutil

        self.pid = pid
        try:
            self._root = psutil.Process(pid)
            self._tracked[pid] = self._root
        except psutil.Error:
            self._root = None
        if self._cgroups is not None and pid not in self._cgroups.pids() and self._root:
            for name in self._cgroups.procs_files:
                try:
                    _write(name, str(pid))
                except OSError as e:
                    log.warning("%s: cannot move pid %d into %s: %s", self, pid, name, e)
        if self._cgroups is not None:
            self._cpu_base_ns = self._cgroups.cpu_ns()

    # -- measuring -----------------------------------------------------------------------
    def _scan(self) -> list[Any]:
        """The bot's live processes: cgroup members, or its tree plus tracked and adopted
        orphans.  Tracked processes that ended are forgotten (and reaped if adopted)."""
        import psutil

        if self.pid is None:
            return []
        procs: list[Any] = []
        if self.cgroups:
            for pid in self._cgroups.pids():  # type: ignore[union-attr]
                try:
                    procs.append(psutil.Process(pid))
                except psutil.Error:
                    continue
        else:
            procs = _tree(self.pid) if self._root is not None and self._root.is_running() else []
            if self.level is Level.BASIC:
                procs += self._adopted()
        live = []
        with self._lock:
            for p in procs:
                self._tracked.setdefault(p.pid, p)
            for pid, p in list(self._tracked.items()):
                try:
                    if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                        live.append(p)
                        continue
                except psutil.Error:
                    pass
                if pid != self.pid:
                    self._reap(p)
                    del self._tracked[pid]
        return live

    def _adopted(self) -> list[Any]:
        """Orphans of this bot adopted by us (the subreaper), found by their environment
        tag, with their descendants."""
        import psutil

        found = []
        try:
            children = psutil.Process().children()
        except psutil.Error:
            return []
        for child in children:
            if child.pid == self.pid or child.pid in self._tracked:
                continue
            try:
                if child.environ().get(TAG_VARIABLE) == self.token:
                    found += [child, *child.children(recursive=True)]
            except psutil.Error:
                continue
        return found

    def _reap(self, proc: Any) -> None:
        """Collect the exit status of an adopted orphan (never of the spawned process, whose
        owner waits for it)."""
        import psutil

        try:
            if proc.pid == self.pid or proc.ppid() != os.getpid():
                return
        except psutil.Error:
            return
        try:
            os.waitpid(proc.pid, os.WNOHANG)
        except ChildProcessError:
            pass

    def cpu_time(self) -> float:
        """Seconds of CPU used by the bot's whole process tree since :meth:`attach`.

        Exact from cgroup accounting (exited processes included); otherwise the sum of the
        live processes' CPU times (with their waited-for children), never decreasing.  The
        process table is searched for new descendants at most every :data:`RESCAN_S` (it
        costs milliseconds); in between, the processes already found are summed.
        """
        if self._cgroups is not None and self._cpu_base_ns is not None:
            now = self._cgroups.cpu_ns()
            if now is not None:
                return max(0, now - self._cpu_base_ns) / 1e9
        if time.monotonic() - self._scanned_at >= RESCAN_S:
            procs = self._scan()
            self._scanned_at = time.monotonic()
        else:
            with self._lock:
                procs = list(self._tracked.values())
        total = _cpu_seconds(procs)
        with self._lock:
            self._cpu_floor = max(self._cpu_floor, total)
            return self._cpu_floor

    def processes(self) -> list[int]:
        """Pids of the bot's live processes (as :meth:`kill_all` finds them)."""
        return sorted(p.pid for p in self._scan())

    # -- ending --------------------------------------------------------------------------
    def kill_all(self) -> list[int]:
        """SIGKILL every process of the bot and wait until none runs; returns the pids killed.

        Uses the cgroups (freeze, kill, thaw) where there are some, the PID namespace under
        bwrap (killing bwrap kills everything in it), and the process tree, the process group
        and adopted orphans.  The spawned process is killed but not reaped (its owner waits).
        """
        import psutil

        if self.pid is None:
            return []
        self._scan()  # remember the whole tree while its root still holds it together
        killed: set[int] = set()
        if self.cgroups:
            killed |= self._cgroups.kill()  # type: ignore[union-attr]
        root_running = self._root is not None and self._root.is_running()
        if root_running and self.level is Level.BWRAP:
            try:
                self._root.kill()
                killed.add(self.pid)
            except psutil.Error:
                pass
        if root_running:
            try:
                if os.getpgid(self.pid) == self.pid:
                    os.killpg(self.pid, signal.SIGKILL)
            except OSError:
                pass
        end = time.monotonic() + _KILL_WAIT_S
        live = self._scan()
        while live and time.monotonic() < end:
            for p in live:
                try:
                    p.kill()
                    killed.add(p.pid)
                except psutil.Error:
                    pass
            time.sleep(0.005)
            live = self._scan()
        if live:
            log.warning("%s: processes survived SIGKILL: %s", self, [p.pid for p in live])
        return sorted(killed)

    def close(self) -> None:
        """Kill whatever is left, then remove the cgroups and the temporary folder.  Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self.kill_all()
        finally:
            if self._cgroups is not None:
                self._cgroups.remove()
            if self.tmp is not None:
                shutil.rmtree(self.tmp, ignore_errors=True)


if __name__ == "__main__":  # the watchdog: python -m arena.sandbox --watch <referee pid>
    if len(sys.argv) == 3 and sys.argv[1] == "--watch" and sys.argv[2].isdigit():
        watch_referee(int(sys.argv[2]))
    else:
        sys.exit("usage: python -m arena.sandbox --watch REFEREE_PID")
