"""The :class:`Sandbox`: the isolation of one bot process, from spawn to the last kill.

It wraps the command (:mod:`~arena.sandbox.bwrap`), prepares the child before ``exec``
(cgroups, rlimits, the ``basic``-as-root :mod:`~arena.sandbox.confine`, the parent-death
signal), measures the CPU time of the bot's whole process tree, and ends the bot: the one
shutdown path (:meth:`Sandbox.terminate`: SIGTERM to everything of the bot, a grace, then
:meth:`Sandbox.kill_all`) and the cleanup (:meth:`Sandbox.close`).

This module is longer than 700 lines: one class owns one bot's processes from spawn to the
last kill, and every part of it (spawn, measuring, pausing, ending) reads the same state.
"""

from __future__ import annotations

import ctypes
import logging
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Mapping, Optional, Sequence

from arena.errors import ConfigError
from arena.sandbox import procs
from arena.sandbox.bwrap import BASH, bwrap_args, trampoline
from arena.sandbox.cgroups import Cgroups, write
from arena.sandbox.confine import Confinement
from arena.sandbox.levels import Level, available_levels, parse_level
from arena.sandbox.paths import bot_paths, toolchain_env
from arena.sandbox.values import Limits, SandboxError
from arena.sandbox.watchdog import (TAG_VARIABLE, TEMP_PREFIX, ensure_watchdog, remove_tree,
                                    sweep_stale_temp_once)

log = logging.getLogger("arena.sandbox")

#: environment variables a bot keeps from the referee at ``basic`` and ``bwrap``
KEPT_VARIABLES = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH")
#: seconds between two searches of the process table for a bot's new descendants when its
#: CPU time comes from process CPU clocks (no cgroup)
RESCAN_S = 0.2


class Sandbox:
    """The isolation of one bot process: command wrapping, child setup, CPU time, shutdown.

    One owner thread spawns and closes; :meth:`cpu_time` may be called from any thread.
    Every signal that ends the bot comes from here: :meth:`terminate` (SIGTERM, a grace,
    then :meth:`kill_all`) and :meth:`close`, which kills what is left and removes the
    cgroups and the temporary folder (a context manager closes it too).

    The parent-death signal fires when the *thread* that spawned the bot exits: spawn a bot
    from a thread that outlives it (the game's thread).

    :raises ConfigError: the level is unknown or not available here.
    :raises SandboxError: a cgroup or the temporary folder cannot be made.
    """

    def __init__(self, level: Level | str, folder: str | os.PathLike[str], *,
                 cwd: Optional[str] = None, limits: Optional[Limits] = None, label: str = "",
                 read_only: Sequence[str] = (), cgroups: bool = True,
                 writable: bool = False) -> None:
        self.level = level if isinstance(level, Level) else parse_level(level)
        if self.level not in available_levels():
            raise ConfigError(f"isolation level {self.level.value} is not available here")
        self.folder = os.path.realpath(folder)
        self.cwd = os.path.realpath(cwd) if cwd is not None else self.folder
        self.limits = limits or Limits()
        self.label = label
        self.read_only = tuple(read_only)
        #: the folder is writable (a build's scratch copy, :mod:`arena.build`); games: False
        self.writable = writable
        #: tags the bot's environment and names its cgroups: ``<referee pid>-<n>-<random>``
        self.token = f"{os.getpid()}-{procs.serial()}-{os.urandom(4).hex()}"
        #: the unprivileged uid a bwrap bot runs as when the referee is root
        self.uid: Optional[int] = None
        #: the bot's private temporary folder (basic; bwrap uses a tmpfs)
        self.tmp: Optional[str] = None
        #: the spawned process (bwrap itself at level bwrap)
        self.pid: Optional[int] = None
        self._root: Any = None  # psutil.Process of pid: signals to it are safe from pid reuse
        self._group: Optional[int] = None  # the process group pid leads (see attach)
        self._gone = False  # nothing of the bot was left running when last looked at
        self._cgroups: Optional[Cgroups] = None
        self._tracked: dict[int, Any] = {}  # pid -> psutil.Process seen in the bot's tree
        self._cpu_times = procs.CpuTimes()  # their CPU times, without cgroups
        self._run_delays = procs.RunDelays()  # their waits for a CPU (the run queue)
        self._task_times = procs.TaskTimes()  # every thread's time on and waiting for a CPU
        self._delay_floor = 0.0
        self._cpu_floor = 0.0
        self._scanned_at = -RESCAN_S
        self._cpu_base_ns: Optional[int] = None
        self._lock = threading.Lock()
        self._closed = False
        self._frozen = ""  # how freeze() stopped the bot: "cgroup", "signal" or "" (running)
        self._stopped: list[Any] = []  # the processes freeze() sent SIGSTOP
        self._parent_pid = os.getpid()
        self._rlimits: list[tuple[int, tuple[int, int]]] = []
        self._command: tuple[str, ...] = ()
        if self.level is Level.NONE:
            return
        ensure_watchdog()  # kills our bots if we are killed: see watchdog.watch_referee
        sweep_stale_temp_once()  # what dead referees whose watchdog died too left in /tmp
        if procs.is_root():  # bwrap (setpriv) and basic (confinement) drop root for a unique uid
            self.uid = procs.unique_uid()
            if self.level is Level.BASIC:
                _check_readable(self.folder)
        self._rlimits = self._make_rlimits()
        if cgroups:
            self._cgroups = Cgroups(self.token, self.limits)
        if self.level is Level.BASIC:
            procs.ensure_subreaper()
        if self.level is Level.BASIC and self.uid is None:  # as root: a private tmpfs
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
        prefix = bwrap_args(folder=self.folder, cwd=self.cwd, tmp_mb=self.limits.tmp_mb,
                             uid=self.uid, command=command, read_only=self.read_only,
                             writable=self.writable)
        if pipes is not None:
            prefix += trampoline(pipes)
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
        if self.level is not Level.BWRAP or BASH is None:
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
        do; under bwrap only the package itself is mounted), set the variables of the host's
        toolchains (``RUSTUP_HOME``, ``CARGO_HOME``, ``JAVA_HOME``, Go's offline settings,
        their program folders at the end of ``PATH``: :func:`~arena.sandbox.paths.toolchain_env`,
        whose folders the sandbox shows read-only), then what ``base`` adds or changes
        relative to our own environment, and set ``HOME``/``TMPDIR`` to the bot's private
        temporary folder.
        """
        if self.level is Level.NONE:
            return dict(base) if base is not None else None
        env = {k: os.environ[k] for k in KEPT_VARIABLES if k in os.environ}
        env.update(toolchain_env(env.get("PATH", os.defpath)))
        if base is not None:
            env.update({k: v for k, v in base.items() if os.environ.get(k) != v})
        home = self.tmp or "/tmp"
        env.update(HOME=home, TMPDIR=home, PYTHONDONTWRITEBYTECODE="1")
        env[TAG_VARIABLE] = self.token
        return env

    @property
    def preexec(self) -> Optional[Callable[[], None]]:
        """The function to run in the child before ``exec`` (None at level ``none`` in a
        process of niceness 0).

        It keeps the bot as nice as its referee: its new session is a new autogroup on a
        Linux that groups by session, and an autogroup's share of the CPU ignores its
        processes' niceness (a competition server's judge plays at ``nice: 10`` so that its
        pages stay quick: without this, each bot would take as much CPU as the whole web
        server).  Then it joins the bot's cgroups (so every descendant is born inside
        them), confines it (``basic`` as root), then sets the rlimits and the parent-death
        signal.  Only system calls: safe after ``fork``.
        """
        nice = os.getpriority(os.PRIO_PROCESS, 0)
        if self.level is Level.NONE:
            return (lambda: procs.autogroup_nice(nice)) if nice > 0 else None
        files = self._cgroups.procs_files if self._cgroups is not None else ()
        rlimits = list(self._rlimits)
        parent = self._parent_pid
        prctl = procs.libc().prctl
        confine = self.confinement()

        def setup() -> None:
            if nice > 0:
                procs.autogroup_nice(nice)
            me = str(os.getpid()).encode("ascii")
            for name in files:
                fd = os.open(name, os.O_WRONLY)
                try:
                    os.write(fd, me)
                finally:
                    os.close(fd)
            if confine is not None:  # before the limits: it opens a file per folder shown,
                try:                   # while the referee's own files are still open here
                    confine.apply()
                except OSError as e:  # seen by the referee as a start failure with this line
                    os.write(2, f"morris-arena: cannot confine the bot: {e}\n".encode())
                    os._exit(126)
            for res, values in rlimits:  # lowered only, so allowed after the uid's change
                resource.setrlimit(res, values)
            prctl(ctypes.c_int(procs.PR_SET_PDEATHSIG), ctypes.c_ulong(signal.SIGKILL),
                  ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))
            if os.getppid() != parent:  # the referee died before the signal was armed
                os._exit(127)

        return setup

    def confinement(self) -> Optional[Confinement]:
        """How the bot is confined at ``basic`` as root (None at other levels or as another
        user): planned for the command last given to :meth:`wrap` (or this Python)."""
        if self.level is not Level.BASIC or self.uid is None:
            return None
        command = self._command or (sys.executable,)
        needed = [*bot_paths(command, self.read_only), self.folder]
        return Confinement.plan(uid=self.uid, tmp_mb=self.limits.tmp_mb, cwd=self.cwd,
                                 needed=needed, writable=(self.folder,) if self.writable else ())

    def attach(self, pid: int) -> None:
        """Record the spawned process (started with :meth:`wrap`, :meth:`env`, :meth:`preexec`).

        If :meth:`preexec` was not used, the process is moved into the cgroups now (children
        it made before this call are not).
        """
        import psutil

        self.pid = pid
        self._gone = False
        self._group = pid if _in_group(pid, pid) else None  # started in a session of its own
        try:
            self._root = psutil.Process(pid)
            self._tracked[pid] = self._root
        except psutil.Error:
            self._root = None
        if self._cgroups is not None and pid not in self._cgroups.pids() and self._root:
            for name in self._cgroups.procs_files:
                try:
                    write(name, str(pid))
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
        found: list[Any] = []
        if self._cgroups is not None and self._cgroups.dirs:
            for pid in self._cgroups.pids():
                try:
                    found.append(psutil.Process(pid))
                except psutil.Error:
                    continue
        else:
            if self._root is not None and self._root.is_running():
                found = procs.tree(self.pid)
            if self.level is Level.BASIC:
                found += self._adopted()
        return self._track(found)

    def _track(self, found: list[Any]) -> list[Any]:
        """Remember ``found``; the live tracked processes (those that ended are forgotten,
        and reaped if adopted)."""
        import psutil

        live = []
        with self._lock:
            for p in found:
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
                    self._cpu_times.forget(pid)
                    self._run_delays.forget(pid)
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
            found = self._scan()
            self._scanned_at = time.monotonic()
        else:
            with self._lock:
                found = list(self._tracked.values())
        total = self._cpu_times.seconds(p.pid for p in found)
        with self._lock:
            self._cpu_floor = max(self._cpu_floor, total)
            return self._cpu_floor

    def run_delay(self) -> float:
        """Seconds the bot's live processes (their main threads) have spent runnable but
        waiting for a CPU, never decreasing: what the machine's load cost the bot, as
        opposed to time it slept or waited for input (see :class:`procs.RunDelays`).  0
        where the kernel does not report it."""
        total = self._run_delays.seconds(self._live_pids())
        with self._lock:
            self._delay_floor = max(self._delay_floor, total)
            return self._delay_floor

    def task_times(self, rescan: bool = True) -> dict[int, tuple[int, int]]:
        """Every thread of the bot's live processes now: ``{tid: (ns on a CPU, ns runnable
        but waiting for one)}`` (:class:`procs.TaskTimes`; empty where the kernel does not
        say).  What the own clock (``charge: own``) charges a move from.  ``rescan`` False:
        without cgroups, the processes found last (no search of the process table, which
        costs milliseconds: not while a bot may be answering)."""
        return self._task_times.read(self._live_pids(rescan))

    def task_state(self, tid: int) -> str:
        """The scheduler state of one of the bot's tasks (``R``, ``S``, ``D``...; see
        :meth:`procs.TaskTimes.state`)."""
        return self._task_times.state(tid)

    def _live_pids(self, rescan: bool = True) -> list[int]:
        """The bot's processes: its cgroup's members (one read), else the tracked ones (the
        process table searched again at most every :data:`RESCAN_S`, if ``rescan``)."""
        if self._cgroups is not None and self._cgroups.dirs:
            return self._cgroups.members()
        if rescan and time.monotonic() - self._scanned_at >= RESCAN_S:
            self._scan()
            self._scanned_at = time.monotonic()
        with self._lock:
            return list(self._tracked)

    def processes(self) -> list[int]:
        """Pids of the bot's live processes (as :meth:`kill_all` finds them)."""
        return sorted(p.pid for p in self._everything())

    def _everything(self) -> list[Any]:
        """Every live process of the bot: :meth:`_scan`'s, and the members of its process
        group, which may have left its tree (their parent exited)."""
        live = self._scan()
        if self._group is None:
            return live
        known = {p.pid for p in live}
        members = [p for p in procs.group_members(self._group) if p.pid not in known]
        return self._track(members) if members else live  # every live tracked process

    # -- pausing ------------------------------------------------------------------------
    @property
    def frozen(self) -> bool:
        """True between :meth:`freeze` and :meth:`thaw` (or the next kill)."""
        return bool(self._frozen)

    def to_move(self, moving: bool) -> bool:
        """The bot is to move (``True``: it gets the CPU it asks for, a weight of
        :data:`~arena.sandbox.cgroups.THINKING_WEIGHT` processes) or waits for its opponent
        (``False``: a process's share).  False where it has no CPU weight of its own (no
        writable ``cpu`` cgroup controller: at ``none``, or without cgroups)."""
        return self._cgroups is not None and self._cgroups.to_move(moving)

    @property
    def weighted(self) -> bool:
        """True when the bot has a CPU weight of its own (:meth:`to_move` works)."""
        return self._cgroups is not None and self._cgroups.weighted

    def freeze(self) -> None:
        """Stop every process of the bot until :meth:`thaw`, so that it uses no CPU (a bot
        kept between the games of a pairing): the cgroup freezer where the bot has one,
        else SIGSTOP to each of its processes (again until no new one is found: one may
        fork while the others are being stopped).  A frozen bot can always be ended:
        :meth:`terminate`, :meth:`kill_all` and :meth:`close` thaw it first."""
        import psutil

        if self.pid is None or self._closed or self._frozen:
            return
        if self._cgroups is not None and self._cgroups.freeze(True):
            self._frozen = "cgroup"
            return
        self._frozen = "signal"
        if self._group is not None:  # the usual bot, its children too, in one system call
            try:
                os.killpg(self._group, signal.SIGSTOP)
            except OSError:
                pass
        stopped: dict[int, Any] = {}
        for _ in range(8):  # and each process outside the group (setsid)
            fresh = [p for p in self._everything() if p.pid not in stopped]
            for p in fresh:
                try:
                    p.send_signal(signal.SIGSTOP)  # psutil: never a reused pid
                    stopped[p.pid] = p
                except psutil.Error:
                    pass
            if not any(self._group is None or not _in_group(p.pid, self._group) for p in fresh):
                break  # the group was stopped at once: none of it forked since
        self._stopped = list(stopped.values())

    def thaw(self) -> None:
        """Let the bot run again after :meth:`freeze` (nothing if it is not frozen)."""
        import psutil

        how, self._frozen = self._frozen, ""
        if how == "cgroup" and self._cgroups is not None:
            self._cgroups.freeze(False)
        elif how == "signal":  # a stopped process forks nothing: those stopped are all
            if self._group is not None:
                try:
                    os.killpg(self._group, signal.SIGCONT)
                except OSError:
                    pass
            for p in self._stopped:
                try:
                    p.send_signal(signal.SIGCONT)
                except psutil.Error:
                    pass
            self._stopped = []

    # -- ending --------------------------------------------------------------------------
    def snapshot(self) -> None:
        """Remember the bot's processes now, while the spawned process still holds its tree
        together: :meth:`terminate` and :meth:`kill_all` then reach a descendant even after
        it left the tree and the process group (at ``none``, a ``setsid`` grandchild whose
        parent exits on ``quit``).  Call it before asking the bot to quit.

        With cgroups there is nothing to remember: the bot's processes cannot leave them, and
        :meth:`terminate` and :meth:`kill_all` find every one there (a millisecond of
        ``/proc`` reads saved per bot and game)."""
        if self._cgroups is not None and self._cgroups.dirs:
            return
        self._scan()

    def terminate(self, grace_s: float) -> list[int]:
        """End the bot: SIGTERM to every process of it (its process group, its tree and the
        processes :meth:`snapshot` remembered, adopted orphans, cgroup members), up to
        ``grace_s`` seconds for them to exit, then :meth:`kill_all` for what is left.

        Nothing is waited for when nothing of the bot runs any more (a bot that exited on
        ``quit``).  Returns the pids that had to be killed (SIGTERM did not end them).
        """
        if self.pid is None:
            return []
        self.thaw()  # a frozen bot cannot act on SIGTERM
        live = self._everything()
        if not live:  # nothing can start again: kill_all (and close) need not look
            self._gone = True
            return []
        log.debug("%s: sending SIGTERM to %d process(es)", self, len(live))
        self._signal(live, signal.SIGTERM)
        end = time.monotonic() + grace_s
        pauses = procs.pauses()
        while any(procs.alive(p) for p in live) and time.monotonic() < end:
            time.sleep(next(pauses))
        survivors = {p.pid for p in live if procs.alive(p)}
        if survivors:
            log.debug("%s: sending SIGKILL (still running after SIGTERM: %s)", self,
                      sorted(survivors))
        return sorted(survivors.union(self.kill_all()))

    def _signal(self, live: list[Any], sig: int) -> None:
        """Send ``sig`` once to each of the processes ``live``: to those in the bot's process
        group with one ``killpg`` (which also reaches a member forked since), to the others
        one by one."""
        import psutil

        group = self._group
        outside = [p for p in live if group is None or not _in_group(p.pid, group)]
        if group is not None and len(outside) < len(live):
            try:
                os.killpg(group, sig)
            except OSError:
                pass
        for p in outside:
            try:
                p.send_signal(sig)
            except psutil.Error:
                pass

    def kill_all(self) -> list[int]:
        """SIGKILL every process of the bot and wait until none runs; returns the pids killed.

        Uses the cgroups (freeze, kill, thaw) where there are some, the PID namespace under
        bwrap (killing bwrap kills everything in it), and the process tree, the process group
        and adopted orphans.  The spawned process is killed but not reaped (its owner waits).
        """
        import psutil

        if self.pid is None:
            return []
        self.thaw()  # (the cgroup kill freezes again; SIGKILL ends a stopped process)
        self._scan()  # remember the whole tree while its root still holds it together
        killed: set[int] = set()
        if self._cgroups is not None and self._cgroups.dirs:
            killed |= self._cgroups.kill()
        root_running = self._root is not None and self._root.is_running()
        if root_running and self.level is Level.BWRAP:
            try:
                self._root.kill()
                killed.add(self.pid)
            except psutil.Error:
                pass
        if self._group is not None and (root_running or procs.group_exists(self._group)):
            try:
                os.killpg(self._group, signal.SIGKILL)
            except OSError:
                pass
        end = time.monotonic() + procs.KILL_WAIT_S
        live = self._everything()
        pauses = procs.pauses(most_s=0.005)
        while live and time.monotonic() < end:
            for p in live:
                try:
                    p.kill()
                    killed.add(p.pid)
                except psutil.Error:
                    pass
            time.sleep(next(pauses))
            live = self._everything()
        if live:
            log.warning("%s: processes survived SIGKILL: %s", self, [p.pid for p in live])
        self._gone = not live
        return sorted(killed)

    def close(self) -> None:
        """Kill whatever is left, then remove the cgroups and the temporary folder.  Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            if not self._gone:  # else terminate or kill_all just saw nothing left
                self.kill_all()
            self._reap_group()
        finally:
            if self._cgroups is not None:
                self._cgroups.remove()
            self._cpu_times.close()
            self._run_delays.close()
            self._task_times.close()
            if self.tmp is not None:
                remove_tree(self.tmp)


    def _reap_group(self) -> None:
        """At ``basic``: collect the exit status of the bot's dead orphans in its process
        group that we adopted (the child subreaper) but never saw alive (a fork bomb's,
        killed by the cgroup), never of the spawned process (its owner waits for it).
        Each such zombie is a process of the bot's uid until collected: it stays in the
        process table, and as root it counts against the process limit of whichever later
        bot is given the same uid (they are reused)."""
        if self.level is not Level.BASIC or self._group is None:
            return
        while True:
            try:  # look without collecting: the spawned process may be among them
                found = os.waitid(os.P_PGID, self._group, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return
            if found is None or found.si_pid == self.pid:
                return
            try:
                os.waitpid(found.si_pid, os.WNOHANG)
            except ChildProcessError:
                return


def _in_group(pid: int, group: int) -> bool:
    """True when the process ``pid`` (a zombie too) is in the process group ``group``."""
    try:
        return os.getpgid(pid) == group
    except OSError:
        return False


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
