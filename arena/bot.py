"""The one class that owns a bot process: :class:`BotProcess`.

A :class:`BotProcess` spawns a bot (a :class:`~arena.manifest.BotSpec` read from its
``bot.yaml`` by :func:`~arena.manifest.load_bot`) in a :class:`~arena.sandbox.Sandbox`, in its
own process group and working directory, speaks the protocol (every line formatted and parsed
by :mod:`arena.protocol`), reads with a deadline on every read, keeps a transcript and a
capped stderr tail, and shuts the bot down: ``gameover``/``quit``, a grace, then the sandbox
ends everything of the bot (:meth:`~arena.sandbox.Sandbox.terminate`: SIGTERM, a grace,
SIGKILL).  Every line sent (``<<``) and received (``>>``) is logged at DEBUG on the
``arena.bot`` logger.

Failures are typed (:mod:`arena.errors`): :class:`BotStartError` (missing command, exit or
silence or a wrong line during the handshake), :class:`BotTimeout`, :class:`BotCrashed`,
:class:`ProtocolError`.  Whether a move is legal is the referee's business.

``BotSpec`` and ``load_bot`` live in :mod:`arena.manifest`; they are also importable from
here, as they always were.
"""

# This module is longer than the house's ~600 lines, on purpose: nearly all of it is
# BotProcess, the one class that owns a bot process (STYLE.md, principle 6).  Its reads,
# writes, deadlines, transcript and shutdown share the pipes, the pidfd and the sandbox; split
# in two, the process would have two owners.  Manifests went to arena.manifest, signals to
# the sandbox.

from __future__ import annotations

import array
import collections
import fcntl
import logging
import os
import select
import shlex
import shutil
import signal
import struct
import subprocess
import termios
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence

from arena import protocol as P
from arena.errors import BotCrashed, BotError, BotStartError, BotTimeout, ProtocolError
from arena.hints import (FLUSH_HINT, HANDSHAKE_HINT, crash_line, handshake_line_text,
                         unreachable_hint)
from arena.manifest import BotSpec, load_bot
from arena.sandbox.ownclock import OwnClock, OwnTime
from arena.sandbox.procs import lateness, referee_mark

if TYPE_CHECKING:
    from arena.sandbox import Isolation, Sandbox

log = logging.getLogger("arena.bot")

#: longest stdout line accepted (bytes); a longer one is cut and is a protocol error
LINE_CAP = 64 * 1024
#: bytes of stderr kept per bot (the tail)
STDERR_CAP = 8 * 1024
#: characters of an offending line kept in errors and records
OFFENDING_CAP = 300
#: lines kept in a transcript
TRANSCRIPT_CAP = 400
#: seconds between two looks at a thinking bot's CPU time under the CPU clock (cgroup
#: accounting; the process-tree fallback costs more and is looked at four times less often)
CPU_POLL_S = 0.005
#: the shortest pause between two looks at a move's own time while the bot thinks
OWN_POLL_S = 0.005
#: seconds a bot gets to exit after ``quit``, then after SIGTERM
QUIT_GRACE_S = 0.5
TERM_GRACE_S = 0.5
#: after a move's limit passed without an answer, the bot is watched for as long again as
#: it ran, at least the first and at most the second of these seconds, to tell a bot that
#: answers a little late from one that never answers (the verdict is the same: only its
#: words differ, see :class:`MoveTimeout`)
WATCH_AFTER_S = (0.5, 2.0)
#: seconds a bot silent in its handshake is given, its input closed, to show what it holds
#: (output left in a buffer comes out as it exits)
SILENCE_PROBE_S = 0.5

_READ_CHUNK = 65536


def cut(line: Optional[str], cap: int = OFFENDING_CAP) -> Optional[str]:
    """``line`` cut to ``cap`` characters (with a note of how much was cut)."""
    if line is None or len(line) <= cap:
        return line
    return f"{line[:cap]}... [{len(line) - cap} more characters cut]"


@dataclass
class Handshake:
    """What a bot said during the handshake, and how long it took from spawn (ms)."""

    ms: float = 0.0
    id: dict[str, str] = field(default_factory=dict)
    options: list[P.OptionDecl] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    def option(self, name: str) -> Optional[P.OptionDecl]:
        """The declared option called ``name`` (any case), if any."""
        low = name.lower()
        return next((o for o in self.options if o.name.lower() == low), None)


class _StderrTail:
    """Drains a stderr pipe on a thread, keeping only the last ``cap`` bytes.

    The thread sleeps until the bot writes to its stderr or :meth:`stop` wakes it (a pipe
    of its own), never on a timer: a thread of the referee's process that wakes while a bot
    thinks may take the GIL and be pre-empted holding it on a loaded machine, and the
    referee's wait for it would make a reply late that came in time."""

    def __init__(self, fd: int, cap: int, label: str) -> None:
        self.fd = fd
        self.cap = cap
        self.label = label
        self._buf = bytearray()
        #: bytes read so far (the buffer holds the last of them)
        self.total = 0
        self._lock = threading.Lock()
        self._stop = False
        self._reading = False  # between a read and its bytes joining the buffer
        self._wake_r, self._wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self._thread = threading.Thread(target=self._run, name=f"stderr-{label}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._drain()
        finally:
            os.close(self._wake_r)

    def _drain(self) -> None:
        poller = select.poll()
        poller.register(self.fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        poller.register(self._wake_r, select.POLLIN)
        debug = log.isEnabledFor(logging.DEBUG)
        while not self._stop:
            if not poller.poll() or self._stop:
                continue
            self._reading = True
            try:
                chunk = os.read(self.fd, _READ_CHUNK)
            except BlockingIOError:
                self._reading = False
                continue
            except OSError:
                self._reading = False
                return
            if not chunk:
                self._reading = False
                return
            with self._lock:
                self._buf += chunk
                self.total += len(chunk)
                if len(self._buf) > 2 * self.cap:
                    del self._buf[:-self.cap]
                self._reading = False
            if debug:
                for line in chunk.decode("utf-8", "replace").splitlines():
                    log.debug("%s 2> %s", self.label, P.escape_controls(line[:OFFENDING_CAP]))

    def text(self, since: int = 0) -> str:
        """The kept tail, decoded: of what was written after the first ``since`` bytes."""
        with self._lock:
            start = max(0, since - (self.total - len(self._buf)))
            data = bytes(self._buf[start:][-self.cap:])
        return data.decode("utf-8", "replace")

    def settle(self, wait_s: float) -> None:
        """Wait up to ``wait_s`` until everything already written to the pipe is in the
        buffer (a kept bot's game ends: what it wrote before its last reply is that game's,
        even when this thread is slow to run on a loaded machine)."""
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and self._thread.is_alive():
            try:
                waiting = struct.unpack("i", fcntl.ioctl(self.fd, termios.FIONREAD,
                                                         b"\0\0\0\0"))[0]
            except OSError:
                return
            if not waiting and not self._reading:
                return
            time.sleep(0.002)

    def wait_eof(self, wait_s: float) -> None:
        """Wait up to ``wait_s`` for the end of the stream (the writer exited)."""
        self._thread.join(wait_s)

    def stop(self, wait_s: float) -> None:
        """Stop draining, after waiting up to ``wait_s`` for the end of the stream."""
        self._thread.join(wait_s)
        self._stop = True
        if self._wake_w >= 0:
            try:
                os.write(self._wake_w, b"x")
            except OSError:
                pass
            os.close(self._wake_w)
            self._wake_w = -1
        self._thread.join(0.5)


def _exit_text(code: Optional[int]) -> str:
    if code is None:
        return "is still running"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


class BotProcess:
    """One bot process: spawn, handshake, new game, moves, shutdown.  The only owner of it.

    Use as a context manager or call :meth:`close`; every method that reads takes a time
    limit and raises :class:`BotTimeout` when it passes.  The bot runs in a
    :class:`~arena.sandbox.Sandbox` made from ``isolation`` (:class:`arena.sandbox.Isolation`;
    default :meth:`~arena.sandbox.Isolation.default`: the best level this machine supports,
    see ``arena doctor``), which measures the CPU time of its whole process tree
    (:attr:`last_cpu_ms`) and kills what is left at the end.
    """

    def __init__(self, spec: BotSpec, *, label: str = "", env: Optional[Mapping[str, str]] = None,
                 line_cap: int = LINE_CAP, stderr_cap: int = STDERR_CAP,
                 quit_grace_s: float = QUIT_GRACE_S, term_grace_s: float = TERM_GRACE_S,
                 isolation: Optional[Isolation] = None) -> None:
        self.spec = spec
        self.isolation = isolation
        self.sandbox: Optional[Sandbox] = None
        #: CPU ms the bot's whole process tree used for its last reply to :meth:`go`: since
        #: its previous reply (or ``readyok``), so thinking on the opponent's time counts too
        self.last_cpu_ms: Optional[float] = None
        #: the conventional fields of the ``info`` lines sent during the last ``go`` (later
        #: lines override earlier ones: the last complete search), or None
        self.last_info: Optional[dict[str, Any]] = None
        #: the run-queue wait (ms) of the bot's processes during its last reply (the load)
        self.last_wait_ms: Optional[float] = None
        self._cpu_mark = 0.0
        self._wait_mark = 0.0
        #: the referee thread's marks (procs.referee_mark) when the move began, once the
        #: request was written, and when it last went to wait for the reply
        self._referee_wait = self._sent_wait = self._poll_wait = (0.0, 0)
        self._send_sleeps = 0  # the waits for the bot to read its input while writing
        self._late_since_sent = False  # see _mark_wait
        self._cpu_due = False  # a reply's CPU reading is owed (see take_cpu)
        #: the own clock's reading of the last move (:class:`OwnTime`), with ``own_limit_s``
        self.last_own: Optional[OwnTime] = None
        self._own: Optional[OwnClock] = None
        self.label = label or spec.name
        self.env = dict(env) if env is not None else None
        self.line_cap = line_cap
        self.stderr_cap = stderr_cap
        self.quit_grace_s = quit_grace_s
        self.term_grace_s = term_grace_s
        self._proc: Optional[subprocess.Popen[bytes]] = None
        self._spawning: Optional[Future[None]] = None  # the spawn started by start()
        self._spawn_error: Optional[BotStartError] = None
        self.handshake: Handshake = Handshake()
        #: the last lines sent (``<<``) and received (``>>``)
        self.transcript: collections.deque[tuple[str, str]] = collections.deque(maxlen=TRANSCRIPT_CAP)
        self._spawned_at = 0.0
        self._buf = bytearray()
        self._unread = array.array("i", [0])  # for FIONREAD (see _check_read)
        self._lines: collections.deque[str] = collections.deque()
        self._eof = False
        self._stdin = -1
        self._stdout = -1
        self._poll_in: Any = None
        self._poll_out: Any = None
        self._stderr: Optional[_StderrTail] = None
        self._pidfd = -1
        self._debug = log.isEnabledFor(logging.DEBUG)
        self._last_go: tuple[Optional[P.Go], str] = (None, "")
        #: the bot's last answer (``morrisok``, ``readyok`` or its ``bestmove`` line)
        self._last_reply = ""
        self._closing = False
        self._closed = False

    # -- properties ----------------------------------------------------------------------
    @property
    def pid(self) -> Optional[int]:
        """The bot's process id (also its process group id), once started."""
        return self.proc.pid if self.proc is not None else None

    @property
    def returncode(self) -> Optional[int]:
        """The exit status once the process has ended (negative: killed by that signal)."""
        return self.proc.poll() if self.proc is not None else None

    def stderr_tail(self, since: int = 0) -> str:
        """The last bytes the bot wrote on stderr (at most ``stderr_cap``), after the first
        ``since`` (a :meth:`stderr_mark`)."""
        return self._stderr.text(since) if self._stderr is not None else ""

    def stderr_mark(self) -> int:
        """How many bytes the bot has written on stderr so far (see :meth:`stderr_tail`)."""
        return self._stderr.total if self._stderr is not None else 0

    def settle_stderr(self, wait_s: float = 0.5) -> int:
        """Wait (up to ``wait_s``) until what the bot has written on stderr so far is read;
        then its :meth:`stderr_mark`."""
        if self._stderr is not None:
            self._stderr.settle(wait_s)
        return self.stderr_mark()

    def __repr__(self) -> str:
        return f"<BotProcess {self.label} pid={self.pid}>"

    def __enter__(self) -> BotProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- start ---------------------------------------------------------------------------
    def start(self) -> None:
        """Spawn the bot and send ``morris <version>``; :meth:`read_handshake` reads the answer.

        The spawn itself (which waits for the sandbox's ``exec``) runs on a spawner thread,
        so that both bots of a game are spawned at once; whatever needs the process waits
        for it (:attr:`proc`), and a spawn that failed is raised by :meth:`read_handshake`.

        :raises BotStartError: the command cannot be run.
        """
        if self._proc is not None or self._spawning is not None:
            raise RuntimeError("BotProcess.start called twice")
        spec = self.spec
        self._debug = log.isEnabledFor(logging.DEBUG)
        from arena.sandbox import Isolation

        if spec.build:  # a failed build is the reason, not the program it did not make
            from arena.build import build_failure

            why = build_failure(spec)
            if why is not None:
                raise BotStartError(why)
        missing = _missing_program(spec.command[0], spec.cwd, (self.env or os.environ).get("PATH"))
        if missing:  # found here: inside a sandbox it would only show as an early exit
            if spec.build:
                missing += " (has its build: step run? 'arena check' builds it)"
            raise BotStartError(f"cannot run {shlex.join(spec.command)!r} in {spec.cwd}: {missing}")
        if self.isolation is None:  # ConfigError: MORRIS_ARENA_ISOLATION names a bad level
            self.isolation = Isolation.default()
        # ConfigError/SandboxError here are the referee's setup, not the bot's fault
        self.sandbox = self.isolation.sandbox(spec.path, cwd=spec.cwd, label=self.label)
        self._spawning = _spawner().submit(self._spawn)

    def _spawn(self) -> None:
        """Start the process in the sandbox (on a spawner thread: see :func:`_spawner`)."""
        spec, sb = self.spec, self.sandbox
        assert sb is not None
        try:
            proc = sb.popen(spec.command, cwd=spec.cwd, env=self.env)
        except (OSError, subprocess.SubprocessError) as e:
            sb.close()
            raise BotStartError(f"cannot run {shlex.join(spec.command)!r} in {spec.cwd}: "
                                f"{getattr(e, 'strerror', None) or e}") from None
        self._spawned_at = time.monotonic()
        assert proc.stdin and proc.stdout and proc.stderr
        self._stdin = proc.stdin.fileno()
        self._stdout = proc.stdout.fileno()
        for fd in (self._stdin, self._stdout, proc.stderr.fileno()):
            os.set_blocking(fd, False)
        self._poll_in = select.poll()
        self._poll_in.register(self._stdout, select.POLLIN | select.POLLHUP | select.POLLERR)
        self._poll_out = select.poll()
        self._poll_out.register(self._stdin, select.POLLOUT | select.POLLERR)
        self._stderr = _StderrTail(proc.stderr.fileno(), self.stderr_cap, self.label)
        try:  # a pidfd wakes the wait for the exit at once (Linux 5.3+)
            self._pidfd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            self._pidfd = -1
        self._proc = proc
        log.debug("%s: started pid %d: %s (cwd %s, sandbox %s)", self.label, proc.pid,
                  shlex.join(spec.command), spec.cwd, sb.describe())
        try:
            self._send([P.format_hello()], self._spawned_at + 1.0)
        except BotError:
            pass  # an early exit shows up in handshake()

    @property
    def proc(self) -> Optional[subprocess.Popen[bytes]]:
        """The process (``bwrap`` itself at that level), once spawned: waits for a spawn
        under way; None before :meth:`start`, or when the spawn failed."""
        self._wait_spawn()
        return self._proc

    def _wait_spawn(self) -> None:
        """Wait for the spawn :meth:`start` began; keep its failure for :meth:`_spawned`."""
        spawning = self._spawning
        if spawning is None:
            return
        try:
            spawning.result()
        except BotStartError as e:
            self._spawn_error = e
        self._spawning = None

    def _spawned(self) -> None:
        """Wait for the spawn; raise its failure.

        :raises BotStartError: the command could not be run.
        """
        self._wait_spawn()
        if self._spawn_error is not None:
            raise self._spawn_error
        if self._proc is None:
            raise RuntimeError(f"{self.label}: BotProcess.start was not called")

    def read_handshake(self, timeout_s: float) -> Handshake:
        """Read the handshake up to ``morrisok``, within ``timeout_s`` of the spawn.

        :raises BotStartError: silence (timeout), an exit, or a line other than ``id``,
            ``option``, ``info`` or ``morrisok``; the error's ``line`` is the offending line.
        """
        self._spawned()
        deadline = self._spawned_at + timeout_s
        hs = self.handshake
        try:
            while True:
                line = self._read_line(deadline)
                hs.lines.append(line)
                msg = P.parse_bot_line(line)
                if isinstance(msg, P.Id):
                    hs.id[msg.key] = msg.value
                elif isinstance(msg, P.OptionDecl):
                    hs.options.append(msg)
                elif isinstance(msg, P.MorrisOk):
                    self._last_reply = line
                    break
                elif not isinstance(msg, P.Info):
                    raise ProtocolError(f"unexpected line in the handshake: {cut(line)!r}", line)
        except BotTimeout:
            raise BotStartError(f"handshake timeout: no 'morrisok' within {timeout_s * 1000:.0f} ms "
                                f"of the start{self._silence_hint()}") from None
        except BotCrashed as e:
            raise BotStartError(f"exited during the handshake: {e}", e.line) from None
        except ProtocolError as e:  # a line of another protocol, or debug text: say which
            told = handshake_line_text(e.line) if e.line is not None else ""
            raise BotStartError(f"bad handshake: {told or e}", e.line) from None
        hs.ms = (time.monotonic() - self._spawned_at) * 1000.0
        return hs

    def _silence_hint(self) -> str:
        """What the bot's stdout held when its handshake timed out, as a hint: a line
        without its newline, the last line received, or nothing.  A bot silent so far has
        its input closed and :data:`SILENCE_PROBE_S` to show what it holds (it is failed
        anyway): output that comes then waited in a buffer; a bot that ends without a word
        read ``morris`` and had nothing to say to it (written for another protocol, a UCI
        engine waiting for ``uci``); one still running says nothing either way."""
        try:
            self._drain()
        except ProtocolError:  # a line over the cap: the timeout is what is reported
            pass
        partial = bytes(self._buf).decode("utf-8", "replace")
        if partial:
            return (f"; received {cut(partial, 80)!r} without a newline: does the bot end each "
                    "line with \\n and flush stdout after it?")
        if self._lines or self.handshake.lines:
            last = self._lines[-1] if self._lines else self.handshake.lines[-1]
            return f" (the last line received: {cut(last, 80)!r}: {HANDSHAKE_HINT})"
        probed = self._probe_silence()
        if probed:
            return probed
        return f"; no output at all: does the bot flush stdout after each line? {FLUSH_HINT}"

    def _probe_silence(self) -> str:
        """Close the input of a bot silent in its handshake and watch its output for
        :data:`SILENCE_PROBE_S`: the hint for what comes (lines it held in a buffer, or the
        end of its output without a word), ``""`` if nothing does."""
        proc = self._proc
        if proc is None or self._stdin < 0 or self._poll_in is None:
            return ""
        try:
            fcntl.ioctl(self._stdin, termios.FIONREAD, self._unread, True)
            unread = self._unread[0]
        except OSError:
            unread = -1
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        self._stdin = -1
        deadline = time.monotonic() + SILENCE_PROBE_S
        try:
            while not self._eof:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                if self._poll_in.poll(left * 1000.0 + 1.0):
                    self._fill()
        except ProtocolError:
            pass
        held = list(self._lines) + ([bytes(self._buf).decode("utf-8", "replace")]
                                    if self._buf else [])
        for line in self._lines:
            self._log_in(line)
        self._lines.clear()
        if held:
            shown = ", ".join(repr(cut(line, 60)) for line in held[:3])
            return (f"; its output came only when its input was closed ({shown}): it waited "
                    f"in a buffer: flush stdout after each line {FLUSH_HINT}")
        if self._eof:
            read = ("it read 'morris', said nothing" if unread == 0
                    else "it did not read 'morris'" if unread > 0 else "it said nothing")
            return (f"; no output at all: {read}, and ended without a word when its input was "
                    f"closed: {HANDSHAKE_HINT}; a bot written for another protocol waits for "
                    "its own first line (a UCI engine for 'uci') and never answers")
        return ""

    def new_game(self, variant_name: str, params: Mapping[str, str], options: Mapping[str, str],
                 timeout_s: float) -> None:
        """Send the options, ``newgame`` and ``isready``; wait for ``readyok``.

        :raises ProtocolError: a line other than ``info`` sent when nothing was asked: since
            the handshake and before ``isready`` was read (see :meth:`check_idle`).
        :raises BotStartError: no ``readyok`` in time, an exit, or another line instead.
        """
        self._spawned()
        lines = [P.format_setoption(k, v) for k, v in options.items()]
        ask = P.format_isready()
        lines += [P.format_newgame(variant_name, params), ask]
        self._drain()
        self._check_extra()  # a line nobody asked for: a protocol error, not a failed start
        if self.sandbox is not None:  # getting ready (timed) as a bot to move does
            self.sandbox.to_move(True)
        deadline = time.monotonic() + timeout_s
        try:
            self._send(lines, deadline)
            while True:
                line = self._read_line(deadline)
                msg = self._parse_quiet(line)
                if isinstance(msg, P.Info):
                    continue
                self._check_read(line, ask)
                if not isinstance(msg, P.ReadyOk):
                    raise ProtocolError(f"expected 'readyok', got {cut(line)!r}", line)
                self._last_reply = line
                self._cpu_mark, self._cpu_due = self.cpu_time(), False
                self._wait_mark = self.run_delay()
                if self.sandbox is not None:  # ready: it waits for its first request now
                    self.sandbox.to_move(False)
                return
        except _UnaskedLine:
            raise
        except BotTimeout:
            raise BotStartError(f"no 'readyok' within {timeout_s * 1000:.0f} ms of 'isready'") from None
        except BotCrashed as e:
            raise BotStartError(f"exited before the game: {e}", e.line) from None
        except ProtocolError as e:
            raise BotStartError(f"bad answer to newgame/isready: {e}", e.line) from None

    # -- moves ---------------------------------------------------------------------------
    def go(self, position_text: str, moves: Sequence[str], go: P.Go,
           timeout_s: Optional[float], *, cpu_limit_s: Optional[float] = None,
           own_limit_s: Optional[float] = None,
           legal: Optional[Sequence[str]] = None, cpu_now: bool = True,
           after_send: Optional[Callable[[], object]] = None) -> tuple[str, float]:
        """Ask for a move; returns ``(move text, wall ms)`` measured from writing ``go`` (the
        clock starts as the write begins) to reading ``bestmove``.  ``timeout_s`` ``None`` waits forever (never for games).
        ``legal`` (the legal moves' texts, for a bot that asked for them) is sent as a
        ``legalmoves`` line between ``position`` and ``go``.

        :attr:`last_cpu_ms` is then the CPU time of the bot's process tree since its previous
        reply.  With ``cpu_limit_s`` that CPU time is watched while the bot thinks, and a bot
        that goes over loses at once (``timeout_s`` still caps the wall time).  With
        ``own_limit_s`` (the own clock) the move's own time (:mod:`arena.sandbox.ownclock`:
        wall time less the bot's and the referee's waits for a CPU) is measured from the
        write to the reply into :attr:`last_own`, and watched while the bot thinks: a bot
        whose own time goes over loses at once (``timeout_s`` caps the wall time).  With
        ``cpu_now`` False (never with ``cpu_limit_s``) that reading waits for
        :meth:`take_cpu`, which the referee calls once the other bot's request is written:
        the bot is idle then, and the reading is off the path from a reply to the next
        request.  ``after_send`` is called once the request is written, before the wait.

        :raises MoveTimeout: no ``bestmove`` in time (wall, CPU with ``cpu_limit_s``, own
            time with ``own_limit_s``); the bot is then watched a little longer, to say
            whether it answered late or not at all (see :class:`MoveTimeout`).
        :raises BotTimeout: the request could not be written in time (not reading its input).
        :raises BotCrashed: the bot exited or closed its output.
        :raises ProtocolError: a line other than ``info``/``bestmove``; a line other than
            ``info`` sent since the previous request was answered (see :meth:`check_idle`), or
            a ``bestmove`` that arrives while the bot has not read the ``go`` line yet (it was
            sent before the bot knew a move was asked for); a second reply; a line longer
            than the cap.
        """
        self.check_idle()
        if self._cpu_due:  # a reply whose reading was not taken: before the mark moves
            self.take_cpu()
        # with a fixed time per move, every go line is the same: formatted once
        if self._last_go[0] is not go and self._last_go[0] != go:
            self._last_go = (go, go.line())
        ask = self._last_go[1]
        position = P.format_position(position_text, moves)
        lines = (position, ask) if legal is None else (position, P.format_legalmoves(legal), ask)
        limit = timeout_s if timeout_s is not None else float("inf")
        self.last_cpu_ms = None
        self.last_own = None
        sandbox = self.sandbox
        if sandbox is not None:  # the bot to move gets the CPU it asks for (before the clock)
            sandbox.to_move(True)
        own = None
        if own_limit_s is not None:  # the bot's marks: it is idle, waiting for the request
            own = self._own_clock()
            own.start()
        # the clock starts before the write: a bot too slow to read its input uses its own
        # time, and so does a bot woken by the write that runs while the referee is still in it
        self._referee_wait = referee_mark()
        start = time.monotonic()
        if own is not None:
            watch: Optional[Callable[[], float]] = self._own_watch(own, own_limit_s, start)  # type: ignore[arg-type]
        else:
            watch = self._cpu_watch(cpu_limit_s) if cpu_limit_s is not None else None
        deadline = start + limit
        self._send(lines, deadline)
        self._sent_wait = self._poll_wait = referee_mark()
        if after_send is not None:
            after_send()
        # a reply already there came while the referee was kept from waiting for it (its
        # bookkeeping, another thread holding the GIL): it is late from the request on
        self._late_since_sent = bool(self._poll_in.poll(0))
        info: dict[str, Any] = {}
        self.last_info = None
        while True:
            try:
                line = self._read_line(deadline, watch, marks=True)
            except BotTimeout as e:
                if sandbox is not None:
                    sandbox.to_move(False)
                if not isinstance(e, MoveTimeout):
                    e = MoveTimeout(f"no bestmove within {timeout_s * 1000:.0f} ms")  # type: ignore[operator]
                self._measure(e, start, own)
                self._watch_after(e, start)
                raise e from None
            if line.startswith("bestmove "):  # the usual reply, parsed as parse_bot_line would
                words = line.split()
                if len(words) == 2:
                    move = words[1]
                    break
            msg = P.parse_bot_line(line)
            if isinstance(msg, P.BestMove):
                move = msg.move
                break
            if not isinstance(msg, P.Info):
                raise ProtocolError(f"expected 'bestmove' or 'info', got {cut(line)!r}", line)
            info.update(P.parse_info(msg.text))
        self.last_info = info or None
        elapsed_ms = (time.monotonic() - start) * 1000.0
        if own is not None:
            late = self._referee_late()
            self.last_own = own.now(time.monotonic() - start, late)
        if sandbox is not None:
            sandbox.to_move(False)
        self._check_read(line, ask)
        self._last_reply = line
        self._cpu_due = True
        if cpu_now or cpu_limit_s is not None:
            self.take_cpu()
        if self._lines:
            self._check_extra()
        return move, elapsed_ms

    def _watch_after(self, timeout: MoveTimeout, start: float) -> None:
        """A move's limit passed without a ``bestmove`` (measured already): watch the bot
        for as long again as it ran (within :data:`WATCH_AFTER_S`), reading its lines, to
        tell a bot that answers late (``timeout.answered_ms``) from one that does not
        answer at all (``timeout.unanswered_ms``).  Only the verdict's words depend on it;
        a bot that exits or breaks the protocol meanwhile leaves both unknown."""
        ran = time.monotonic() - start
        low, high = WATCH_AFTER_S
        deadline = start + ran + min(max(ran, low), high)
        try:
            while True:
                line = self._read_line(deadline)
                if line.startswith("bestmove"):
                    timeout.answered_ms = (time.monotonic() - start) * 1000.0
                    return
        except BotTimeout:
            timeout.unanswered_ms = (time.monotonic() - start) * 1000.0
        except BotError:
            pass

    def take_cpu(self) -> Optional[float]:
        """Read the CPU time owed by the last :meth:`go` (``cpu_now=False``) into
        :attr:`last_cpu_ms`, once, and the run-queue wait into :attr:`last_wait_ms`;
        returns the CPU time."""
        if self._cpu_due:
            self._cpu_due = False
            used = self.cpu_time()
            self.last_cpu_ms, self._cpu_mark = (used - self._cpu_mark) * 1000.0, used
            waited = self.run_delay()
            self.last_wait_ms, self._wait_mark = (waited - self._wait_mark) * 1000.0, waited
        return self.last_cpu_ms

    def run_delay(self) -> float:
        """Seconds the bot's processes have waited for a CPU since it started (the load)."""
        return self.sandbox.run_delay() if self.sandbox is not None else 0.0

    def _measure(self, timeout: BotTimeout, start: float, own: Optional[OwnClock] = None) -> None:
        """What a move that timed out used until now: wall, CPU and run-queue wait (ms):
        the bot's, and the referee's own (a referee that got no CPU read the reply late);
        with the own clock, its own time and share of a CPU (:class:`OwnTime`)."""
        timeout.wall_ms = (time.monotonic() - start) * 1000.0
        if own is not None:
            try:
                late = self._referee_late()
                t = own.now(time.monotonic() - start, late, settled=False)
            except Exception:  # noqa: BLE001 - a measurement that fails is left unknown
                return
            self.last_own = t
            timeout.wall_ms, timeout.cpu_ms, timeout.wait_ms = t.wall_ms, t.cpu_ms, t.waited_ms
            timeout.own = t
            return
        try:
            timeout.cpu_ms = (self.cpu_time() - self._cpu_mark) * 1000.0
            waited = (self.run_delay() - self._wait_mark + self._referee_late()) * 1000.0
            timeout.wait_ms = min(waited, timeout.wall_ms)
        except Exception:  # noqa: BLE001 - a measurement that fails is left unknown
            pass

    def cpu_time(self) -> float:
        """Seconds of CPU the bot's whole process tree has used since it started."""
        return self.sandbox.cpu_time() if self.sandbox is not None else 0.0

    def _cpu_watch(self, limit_s: float) -> Callable[[], float]:
        """For :meth:`_read_line`: a check that raises once the bot's process tree has used
        more than ``limit_s`` of CPU since its previous reply, else returns the seconds
        until it should be called again."""
        exact = self.sandbox is not None and self.sandbox.exact_cpu
        interval = CPU_POLL_S if exact else 4 * CPU_POLL_S

        def check() -> float:
            used = self.cpu_time() - self._cpu_mark
            if used > limit_s:
                self.last_cpu_ms = used * 1000.0
                raise _CpuTimeout(f"used {used * 1000:.0f} ms of CPU time, the limit was "
                                  f"{limit_s * 1000:.0f} ms")
            return interval
        return check

    def _own_clock(self) -> OwnClock:
        """The bot's :class:`OwnClock` (made at its first move under the own clock)."""
        if self._own is None:
            sandbox = self.sandbox
            if sandbox is None:
                raise BotCrashed("not started")
            self._own = OwnClock(sandbox.task_times,
                                 sandbox.cpu_time if sandbox.exact_cpu else None,
                                 sandbox.task_state)
        return self._own

    def _referee_late(self) -> float:
        """Seconds the referee's thread was kept from running while the bot could not go on
        without it: writing the request (from the clock's start), and being woken by the
        reply (since it last went to wait for it).  Kept by the machine (a wait for a CPU)
        or by another thread of the referee's process (a wait for the GIL: a game of a
        thread pool, a spawn, a stderr reader that got no CPU while holding it), see
        :func:`arena.sandbox.procs.lateness`.  Its waits in between, while the bot thinks
        (the bookkeeping of the previous move, a look at the own clock), delay nothing of
        the bot's and are not counted; nor are its waits for the bot (to read its input,
        to answer)."""
        return (lateness(self._referee_wait, self._sent_wait, self._send_sleeps)
                + lateness(self._poll_wait, referee_mark(), 1))

    def _own_watch(self, own: OwnClock, limit_s: float, start: float) -> Callable[[], float]:
        """For :meth:`_read_line`: a check that raises once the move's own time is over
        ``limit_s``, else returns the seconds until it could be (own time grows no faster
        than wall time: on a quiet machine, one look at the deadline; on a busy one, a few
        more, at least :data:`OWN_POLL_S` apart)."""
        looked = [False]

        def check() -> float:
            if not looked[0]:  # at the start of the wait: the own time cannot be over yet
                looked[0] = True
                return limit_s
            late = self._referee_late()
            t = own.now(time.monotonic() - start, late, settled=False)
            if t.own_ms > limit_s * 1000.0:
                if self._poll_in.poll(0):  # a reply came meanwhile: read, then judged at it
                    return 0.0
                raise _OwnTimeout(f"took {t.own_ms:.0f} ms of its own time, the limit was "
                                  f"{limit_s * 1000:.0f} ms")
            return max(OWN_POLL_S, limit_s - t.own_ms / 1000.0)
        return check

    def check_idle(self) -> None:
        """Check what the bot sent since its last answer, when nothing was asked: read,
        without waiting, everything its output holds; any line but ``info`` is a protocol
        error.  Called before every request and by the referee at the end of a game.

        A line that arrives before a request is written is caught here; an answer that
        arrives after the request is written but while it is still wholly unread in the
        bot's input is caught by :meth:`go` (and :meth:`new_game`).  A line the bot wrote
        before it read the request but that reaches the referee only after the bot read it
        cannot be told from an answer (docs/PROTOCOL.md says so).

        :raises ProtocolError: a line other than ``info``, with that line.
        :raises BotCrashed: the bot closed its output (after any such line).
        """
        poll = self._poll_in
        if poll is None:
            self._spawned()
            poll = self._poll_in
        if not self._eof and poll.poll(0):  # the usual case, nothing: one system call
            self._drain()
        if self._lines:
            self._check_extra()
        if self._eof:
            raise self._crashed()

    def _drain(self) -> None:
        """Read, without waiting, what the bot's output holds (at most ``_DRAIN_CHUNKS``
        reads: a bot that writes without pause cannot keep the referee here)."""
        for _ in range(_DRAIN_CHUNKS):
            if self._eof or not self._poll_in.poll(0):
                return
            self._fill()

    def _check_extra(self) -> None:
        """Fail on a complete line already received when nothing is asked (a bot answering
        twice, or before it is asked); ``info`` lines are fine."""
        while self._lines:
            line = self._lines.popleft()
            self._log_in(line)
            if not isinstance(self._parse_quiet(line), P.Info):
                raise _UnaskedLine(self._unasked(line), line)

    def _unasked(self, line: str) -> str:
        last = self._last_reply
        if last.startswith("bestmove"):
            return (f"a second reply to one request: sent {cut(line)!r} after {cut(last)!r}, "
                    "when nothing was asked")
        after = f" (after {last!r})" if last else ""
        return f"sent {cut(line)!r} when nothing was asked{after}"

    def _check_read(self, line: str, ask: str) -> None:
        """Fail if the line ``ask`` is still wholly unread in the bot's input now that its
        answer ``line`` arrived: the bot wrote ``line`` before it could know the request."""
        try:
            fcntl.ioctl(self._stdin, termios.FIONREAD, self._unread, True)
        except OSError:
            return
        if self._unread[0] > len(ask):
            raise _UnaskedLine(f"sent {cut(line)!r} before reading {ask.split()[0]!r}, "
                               "when nothing was asked", line)

    def _parse_quiet(self, line: str) -> Optional[P.BotMessage]:
        try:
            return P.parse_bot_line(line)
        except ProtocolError:
            return None

    # -- low-level I/O -------------------------------------------------------------------
    def _send(self, lines: Sequence[str], deadline: float) -> None:
        """Write ``lines`` by ``deadline``.  They go into the transcript (and the debug log)
        once the write is done, whether it succeeded or not: while the bot reads them, not
        between its previous answer and this request."""
        if self._stdin < 0:
            raise BotCrashed("input already closed")
        data = ("\n".join(lines) + "\n").encode("utf-8")
        self._send_sleeps = 0
        try:
            while True:
                try:
                    n = os.write(self._stdin, data)
                except BlockingIOError:
                    n = 0
                except (BrokenPipeError, ConnectionResetError):
                    raise self._crashed() from None
                if n == len(data):  # the usual case: all of it at once
                    return
                if n:  # a full pipe took part of it: the rest (a copy, but requests are small)
                    data = data[n:]
                    continue
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BotTimeout("not reading its input")
                self._send_sleeps += 1  # a wait for the bot, not the referee's lateness
                self._poll_out.poll(max(1, int(left * 1000)))
        finally:
            for line in lines:
                if self._debug:
                    log.debug("%s << %s", self.label, line)
                self.transcript.append(("<<", line))

    def _read_line(self, deadline: float, watch: Optional[Callable[[], float]] = None,
                   marks: bool = False) -> str:
        """The next line, by ``deadline``; ``watch`` runs while waiting and may raise; it
        returns the seconds until it is to run again.  ``marks``: a move's reply, for whose
        lateness the referee thread's wait for a CPU is marked as it goes to wait
        (:meth:`_referee_late`)."""
        lines = self._lines
        if not lines and watch is None and not self._eof and not self._buf:
            # the usual wait for an answer, in one poll and one read of one whole line
            left = deadline - time.monotonic()
            if marks:
                self._mark_wait()
            if 0.0 < left < _LONGEST_POLL_S and self._poll_in.poll(left * 1000.0 + 1.0):
                try:
                    chunk: Optional[bytes] = os.read(self._stdout, _READ_CHUNK)
                except OSError:
                    chunk = None  # read again below, where errors are handled
                if chunk is not None:
                    line = self._one_line(chunk)
                    if line is not None:
                        self._log_in(line)
                        return line
                    self._take(chunk)
        while not lines:
            if self._eof:
                raise self._crashed()
            left = deadline - time.monotonic()
            if left <= 0:
                # a last look: a reply that came while the referee itself waited for a CPU
                # was in time (the wall cap is for bots that hang, not for a busy referee)
                if self._poll_in.poll(0):
                    self._fill()
                    if lines or self._eof:
                        continue
                raise BotTimeout("no answer in time")
            if marks:  # the referee's wait from here is lateness (a reply may come in a look)
                self._mark_wait()
            if watch is not None:
                left = min(left, watch())
            if self._poll_in.poll(min(left * 1000.0 + 1.0, 2.0**31 - 1)):
                self._fill()
        line = lines.popleft()
        self._log_in(line)
        return line

    def _mark_wait(self) -> None:
        """Mark the referee thread as it goes to wait for a move's reply (its lateness is
        counted from here, :meth:`_referee_late`), or from the request's write when the
        reply was already there after it (the first wait of the move only: a bot sending
        ``info`` lines cannot keep the mark back)."""
        if self._late_since_sent:
            self._late_since_sent = False
            self._poll_wait = self._sent_wait
        else:
            self._poll_wait = referee_mark()

    def _log_in(self, line: str) -> None:
        if self._debug:
            log.debug("%s >> %s", self.label, P.escape_controls(line))
        self.transcript.append((">>", line))

    def _fill(self) -> None:
        """Read what is available on stdout (see :meth:`_take`)."""
        try:
            chunk = os.read(self._stdout, _READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        self._take(chunk)

    def _take(self, chunk: bytes) -> None:
        """Split what was read from stdout into complete lines (``b""``: the end of it);
        check the line length cap."""
        buf = self._buf
        if not chunk:
            self._eof = True
            if buf:
                self._lines.append(buf.decode("utf-8", "replace").rstrip("\r"))
                buf.clear()
            return
        if not buf:
            line = self._one_line(chunk)  # the usual reply: no copy into the buffer
            if line is not None:
                self._lines.append(line)
                return
        buf += chunk
        if b"\n" in chunk:
            complete = buf.split(b"\n")
            rest = complete.pop()
            for raw in complete:
                if len(raw) > self.line_cap:
                    self._too_long(raw)
                self._lines.append(raw.decode("utf-8", "replace").rstrip("\r"))
            self._buf = buf = rest
        if len(buf) > self.line_cap:
            self._too_long(buf)

    def _one_line(self, chunk: bytes) -> Optional[str]:
        """``chunk`` as a line when it is exactly one whole line (the usual answer), else
        None (``b""`` too).

        :raises ProtocolError: that one line is longer than the cap."""
        end = len(chunk) - 1
        if end < 0 or chunk.find(b"\n") != end:
            return None
        if end > self.line_cap:
            self._too_long(chunk[:-1])
        return chunk[:-1].decode("utf-8", "replace").rstrip("\r")

    def _too_long(self, raw: bytes | bytearray) -> None:
        note = f"... [cut: the line is longer than {self.line_cap} bytes]"
        text = bytes(raw[:OFFENDING_CAP]).decode("utf-8", "replace")[:OFFENDING_CAP - len(note)]
        self._buf.clear()
        self._eof = True  # nothing more is read from a bot that broke the line cap
        raise ProtocolError(f"a line longer than {self.line_cap} bytes", text + note)

    def _crashed(self) -> BotCrashed:
        """A :class:`BotCrashed` with the exit status and the stderr line that says most
        (:func:`arena.hints.crash_line`: the exception or the panic, not a runtime's hint
        printed after it).  Reads
        ``_proc``, never :attr:`proc`: the spawn itself may be asking (its ``morris`` line
        met a closed pipe), and it must not wait for itself to finish."""
        proc = self._proc
        code = proc.returncode if proc is not None and self._wait_exit(0.2) else None
        if self.sandbox is not None and code is not None:
            code = self.sandbox.exit_status(code)
        if self._stderr is not None and code is not None:
            self._stderr.wait_eof(0.2)
        said = crash_line(self.stderr_tail())
        what = "closed its output" if code is None else _exit_text(code)
        notes = self.sandbox.notes() if self.sandbox is not None else []
        msg = what + (f" ({'; '.join(notes)})" if notes else "") + (
            f" (stderr: {cut(said, 200)})" if said else "")
        sb = self.sandbox
        if sb is not None and code is not None:  # a file its command names, out of its reach
            hint = unreachable_hint(self.stderr_tail(), self.spec.command, self.spec.path,
                                    sb.level.value, sb.uid is not None)
            msg += f". {hint}" if hint else ""
        return BotCrashed(msg, returncode=code)

    def game_over(self, result: str, reason: str) -> None:
        """Say ``gameover`` and keep the bot running for another ``newgame`` (a bot kept
        between the games of a pairing).  Nothing is read: a line the bot sends in answer
        is a protocol error at the next :meth:`new_game`, as any unasked line.

        :raises BotError: the line cannot be written (the bot has gone).
        """
        self._send([P.format_gameover(result, reason or "-")], time.monotonic() + 0.05)

    def set_up(self, position_text: str) -> None:
        """Say ``setup <position text>`` (the game, started by :meth:`new_game`, begins from
        that position).  Nothing is read: the bot answers the next ``position``/``go``.

        :raises BotError: the line cannot be written in a second (the bot has gone, or does
            not read its input).
        """
        self._send([P.format_setup(position_text)], time.monotonic() + 1.0)

    def pause(self) -> None:
        """Freeze the bot's processes, its children too, until :meth:`resume` (a bot kept
        between the games of a pairing uses no CPU while it waits; see
        :meth:`~arena.sandbox.Sandbox.freeze`).  Closing resumes it first."""
        if self.sandbox is not None and self._proc is not None and not self._closing:
            self.sandbox.freeze()

    def resume(self) -> None:
        """Let the bot run again after :meth:`pause` (nothing if it is not paused)."""
        if self.sandbox is not None:
            self.sandbox.thaw()

    # -- shutdown ------------------------------------------------------------------------
    def close(self, result: Optional[str] = None, reason: str = "") -> None:
        """Say ``gameover`` (if a result is given) and ``quit``, then end the process group.

        Safe to call more than once.  See :meth:`begin_close` / :meth:`finish_close` to close
        several bots at once.
        """
        self.begin_close(result, reason)
        self.finish_close()

    def begin_close(self, result: Optional[str] = None, reason: str = "") -> None:
        """Have the sandbox remember the bot's processes, then send ``gameover``/``quit`` and
        close its input."""
        if self._closing or self.proc is None:
            return
        self._closing = True
        self.resume()  # a paused bot could not read quit, nor act on SIGTERM
        if self.proc.poll() is None:
            assert self.sandbox is not None  # made before the process
            self.sandbox.snapshot()  # its whole tree, while the bot still holds it
            lines = ([P.format_gameover(result, reason or "-")] if result else []) + [P.format_quit()]
            try:
                self._send(lines, time.monotonic() + 0.05)
            except BotError:
                pass
        if self._stdin >= 0 and self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            self._stdin = -1

    def finish_close(self) -> None:
        """Wait up to ``quit_grace_s`` for the bot to exit; then its sandbox ends whatever of
        it is left (SIGTERM, up to ``term_grace_s``, SIGKILL); reap it, remove the sandbox."""
        if self._closed or self.proc is None:
            return
        self.begin_close()
        self._closed = True
        proc, sb = self.proc, self.sandbox
        assert sb is not None  # made before the process
        self._wait_exit(self.quit_grace_s)
        sb.terminate(self.term_grace_s)  # the one shutdown path: every process of the bot
        try:
            proc.wait(1.0)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL failed
            log.warning("%s: pid %d survived SIGKILL", self.label, proc.pid)
        sb.close()  # cgroups and temporary folder removed
        if self._pidfd >= 0:
            os.close(self._pidfd)
            self._pidfd = -1
        if self._stderr is not None:
            self._stderr.stop(0.2)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        log.debug("%s: closed (%s)", self.label, _exit_text(proc.returncode))

    def _wait_exit(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the bot's main process to exit (and reap it); only
        once it is spawned (see :meth:`_crashed`)."""
        proc = self._proc
        assert proc is not None
        if proc.poll() is not None:
            return True
        if self._pidfd >= 0:
            poller = select.poll()
            poller.register(self._pidfd, select.POLLIN)
            poller.poll(max(0, int(timeout_s * 1000)))
            return proc.poll() is not None
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return False
        return True


class MoveTimeout(BotTimeout):
    """No ``bestmove`` by the move's limit (:meth:`BotProcess.go`), and what the bot did
    after it, while it was watched (:data:`WATCH_AFTER_S`): ``answered_ms``, its
    ``bestmove`` came this many ms after the request (late); ``unanswered_ms``, none had
    come this many ms after it (it never answered).  Both None: not known (it exited)."""

    answered_ms: Optional[float] = None
    unanswered_ms: Optional[float] = None


class _OwnTimeout(MoveTimeout):
    """The move's own time went over its limit while the bot thought (the own clock)."""


class _CpuTimeout(MoveTimeout):
    """The bot used more CPU time than its move allows."""


class _UnaskedLine(ProtocolError):
    """A line the bot sent when nothing was asked: a protocol error in every state."""


#: the most reads :meth:`BotProcess.check_idle` makes without waiting (64 KiB each)
_DRAIN_CHUNKS = 16
#: the longest wait :meth:`BotProcess._read_line` makes in one poll on its usual path (a poll's
#: timeout in ms must fit in 31 bits)
_LONGEST_POLL_S = 1e6


#: threads that spawn bots (several, so the two bots of a game, or of concurrent games,
#: spawn at once)
SPAWNERS = 4
_spawners: tuple[int, Optional[ThreadPoolExecutor]] = (0, None)
_spawners_lock = threading.Lock()


def _spawner() -> ThreadPoolExecutor:
    """This process's spawner threads.  They live as long as the process: a bot's
    parent-death signal (:class:`~arena.sandbox.Sandbox`) fires when the thread that spawned
    it exits, so bots spawned here die with the referee, never with a thread that outlived
    its use.  A forked worker process makes its own."""
    global _spawners
    with _spawners_lock:
        pid, pool = _spawners
        if pool is None or pid != os.getpid():
            pool = ThreadPoolExecutor(SPAWNERS, thread_name_prefix="arena-spawn")
            _spawners = (os.getpid(), pool)
        return pool


def _missing_program(program: str, cwd: str, path: Optional[str]) -> str:
    """Why ``program`` cannot be started (a path is taken from ``cwd``, a name looked up on
    ``path``), or ``""``."""
    if "/" in program:
        full = os.path.join(cwd, program)
        if not os.path.exists(full):
            return "No such file or directory"
        return "" if os.access(full, os.X_OK) else "Permission denied"
    return "" if shutil.which(program, path=path) else "No such file or directory"


def is_gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (a zombie waiting for its parent counts as gone)."""
    from arena.sandbox import process_alive

    return not process_alive(pid)


__all__ = ["BotSpec", "BotProcess", "Handshake", "load_bot", "is_gone", "cut", "LINE_CAP",
           "STDERR_CAP", "OFFENDING_CAP", "MoveTimeout",
           "WATCH_AFTER_S"]  # BotSpec and load_bot: from arena.manifest
