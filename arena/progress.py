"""What a run shows and logs: the live progress line, the console's log handler that steps
around it, and the run's logging set-up (the results folder's ``arena.log`` and the console,
with the workers' lines sent through the runner).

On a terminal :class:`Progress` redraws one line in place (games done/total, rate, ETA, the
leader); otherwise it prints a plain line per game.  The console shows a bot's repeated
identical forfeit once and counts the repeats (:class:`ConsoleHandler`); the log file keeps
every line.  :class:`RunLogging` installs the
handlers on the ``arena`` logger for one run and restores it afterwards.
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
import time
from pathlib import Path
from typing import Any, Iterable, TextIO

from multiprocessing_logging import MultiProcessingHandler

from arena.records import GameRecord
from arena.standings import Tallies

__all__ = ["FORFEIT_KEY", "ConsoleHandler", "LoadWatch", "Progress", "RunLogging", "log_clock"]

log = logging.getLogger("arena.progress")

#: the share of the bots' thinking time spent waiting for a CPU beyond which a run is
#: called overloaded (its timing is no longer fair to bots that use their time)
OVERLOADED = 0.2
#: the latest games whose moves :class:`LoadWatch` weighs
LOAD_WINDOW = 20


def log_clock(tc: Any) -> None:
    """Say once, at a run's start, the time control (``tc.describe()``: a moves-per-period
    clock, a node or depth limit and its cap) and what each move is charged (and warn where
    that cannot be fair to bots: no per-bot CPU clock, no way to tell a starved bot)."""
    from arena.sandbox import describe_charge

    log.info("time control: %s", tc.describe())
    info, warning = describe_charge(tc.clock, tc.wall_factor)
    log.info("clock: %s", info)
    if warning:
        log.warning("clock: %s", warning)


class LoadWatch:
    """How starved the bots of a run are: the share of their thinking time (wall time of
    their moves) spent runnable but waiting for a CPU, over the latest
    :data:`LOAD_WINDOW` games (moves measured by the referee: ``MoveInfo.wait_ms``), and
    how many games were played again because a bot was starved (``replays``).  Above
    :data:`OVERLOADED` the run is overloaded: logged once (and again if it clears and comes
    back), and shown on the progress line with the advice."""

    def __init__(self) -> None:
        self.games: list[tuple[float, float]] = []  # (waited ms, thought ms) per game
        self.replays = 0
        self.warned = False

    def add(self, record: GameRecord) -> None:
        waited = thought = 0.0
        for m in record.moves:
            if m.wait_ms is not None and not m.opening:
                # a move waits at most its own wall time (the run queue's delay is counted
                # from a little before the go and over the bot's threads: it can read more)
                waited += min(m.wait_ms, m.wall_ms)
                thought += m.wall_ms
        self.replays += len(record.replays)
        if thought > 0:
            self.games = (self.games + [(waited, thought)])[-LOAD_WINDOW:]
        share = self.share()
        if share is not None and share >= OVERLOADED and not self.warned:
            self.warned = True
            log.warning("the machine is overloaded: the bots spent %.0f%% of their thinking "
                        "time waiting for a CPU over the last %d games; use fewer workers "
                        "(or stop other work) for fair timing", 100 * share, len(self.games))
        elif share is not None and share < OVERLOADED / 2:
            self.warned = False

    def share(self) -> float | None:
        """The share of thinking time spent waiting for a CPU (None: nothing measured)."""
        thought = sum(t for _, t in self.games)
        return None if thought <= 0 else sum(w for w, _ in self.games) / thought

    def note(self) -> str:
        """What the progress line adds: the overload and the replays, or nothing."""
        parts = []
        share = self.share()
        if share is not None and share >= OVERLOADED:
            parts.append(f"overloaded: bots wait {100 * share:.0f}% for a CPU, use fewer workers")
        if self.replays:
            parts.append(f"{self.replays} starved game{'s' if self.replays > 1 else ''} replayed")
        return "; ".join(parts)


class Progress:
    """Games done/total, rate, ETA and the current leader.

    On a terminal one line is redrawn in place (``shown`` while it is on screen); otherwise a
    plain line is printed per game.
    """

    def __init__(self, total: int, done: int, stream: TextIO, *, live: bool,
                 records: Iterable[GameRecord] = ()) -> None:
        self.total = total
        self.done = done
        self.started_with = done
        self.stream = stream
        self.live = live
        self.tallies = Tallies()  # pooled over the variants: the leader so far
        self.load = LoadWatch()
        for record in records:
            self.tallies.add(record)
        self.t0 = time.monotonic()
        self.lock = threading.RLock()
        self.shown = False

    def add(self, record: GameRecord) -> None:
        """Count a finished game (already saved) and show it."""
        with self.lock:
            self.done += 1
            self.tallies.add(record)
            self.load.add(record)
            if self.live:
                self.redraw()
            else:
                self.stream.write(f"{self.status()}  {record.game_id} {record.white.name} - "
                                  f"{record.black.name} {record.result} ({record.termination})\n")
                self.stream.flush()

    def status(self) -> str:
        """``[done/total] rate ETA leader``."""
        elapsed = time.monotonic() - self.t0
        played = self.done - self.started_with
        rate = played / elapsed if elapsed > 0 and played else 0.0
        left = self.total - self.done
        eta = clock_text(left / rate) if rate > 0 else "?"
        width = len(str(self.total))
        text = f"[{self.done:>{width}}/{self.total}] {rate * 60:.1f} games/min, ETA {eta}"
        leader = self.tallies.leader()
        if leader is not None:
            text += f", leader {leader.name} ({leader.points:g} pts)"
        note = self.load.note()
        if note:
            text += f" [{note}]"
        return text

    def redraw(self, note: str = "") -> None:
        """Draw the live line again (with `` [note]`` after it)."""
        with self.lock:
            if self.live:
                self.stream.write("\r\x1b[K" + self.status() + (f" [{note}]" if note else ""))
                self.stream.flush()
                self.shown = True

    def clear(self) -> None:
        """Remove the live line (before other output)."""
        self._leave_line("\r\x1b[K")

    def close(self) -> None:
        """End the live line with a newline."""
        self._leave_line("\n")

    def _leave_line(self, text: str) -> None:
        with self.lock:
            if self.live and self.shown:
                self.stream.write(text)
                self.stream.flush()
                self.shown = False


def clock_text(seconds: float) -> str:
    """A duration as a clock: ``3:10``, ``1:02:03``."""
    s = int(seconds + 0.5)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


#: the ``extra`` attribute of a forfeit's log line: ``(bot, termination, reason)``, the same
#: for every repeat of one failure (:func:`arena.report.forfeits.forfeit_reason`)
FORFEIT_KEY = "forfeit_key"


class ConsoleHandler(logging.StreamHandler[TextIO]):
    """Log lines on the console that step around the live progress line.

    A forfeit's line (one carrying :data:`FORFEIT_KEY`) is shown the first time its bot fails
    that way; repeats are only counted, and :meth:`repeat_summary` says how many at the end
    (the log file, another handler, keeps every line).
    """

    def __init__(self, stream: TextIO, progress: Progress) -> None:
        super().__init__(stream)
        self.progress = progress
        #: (bot, termination, reason) -> [count, the first line's message]
        self.forfeits: dict[tuple[str, str, str], list[Any]] = {}

    def emit(self, record: logging.LogRecord) -> None:
        key = getattr(record, FORFEIT_KEY, None)
        if key is not None and record.levelno >= self.level:
            key = tuple(key)
            with self.progress.lock:
                seen = self.forfeits.get(key)
                if seen is not None:
                    seen[0] += 1
                    return
                self.forfeits[key] = [1, record.getMessage()]
        with self.progress.lock:
            shown = self.progress.shown
            self.progress.clear()
            super().emit(record)
            if shown:
                self.progress.redraw()


    def repeat_summary(self) -> list[str]:
        """One line per forfeit the console showed once but that happened again:
        ``bot: termination xN (first: ...)``, most frequent first."""
        with self.progress.lock:
            repeated = [(key, n, first) for key, (n, first) in self.forfeits.items() if n > 1]
        repeated.sort(key=lambda item: (-item[1], item[0]))
        return [f"{bot}: {term} x{n} (first: {first})" for (bot, term, _), n, first in repeated]


class _FanOut(logging.Handler):
    """The run's handlers behind one multiprocessing receiver: a record goes to each handler
    whose level it meets.  ``None`` is the receiver's wake-up (:class:`_Receiver`), not a
    record."""

    def __init__(self, handlers: list[logging.Handler]) -> None:
        super().__init__(min(h.level for h in handlers))
        self.handlers = handlers

    def emit(self, record: logging.LogRecord) -> None:
        if record is None:
            return
        for handler in self.handlers:
            if record.levelno >= handler.level:
                handler.handle(record)


class _Receiver(MultiProcessingHandler):
    """multiprocessing-logging's handler, closed without waiting for its poll.

    Its receiver thread reads the queue with a 0.2 s timeout and looks at the closed flag
    between reads, so the library's ``close`` waits up to 0.2 s (about that, after the last
    game's lines) at the end of every run: a third of a short run's fixed cost.  Here
    ``close`` sets the flag, then wakes the thread with ``None`` (which :class:`_FanOut`
    drops), so it ends once every record queued before is written."""

    _is_closed: bool

    def close(self) -> None:
        if not self._is_closed:
            self._is_closed = True
            self.queue.put_nowait(None)
            self._receive_thread.join(5.0)
        logging.Handler.close(self)


class RunLogging:
    """The ``arena`` logger's handlers for one run: the results folder's log file and the
    console.  Under the fork start method they sit behind one multiprocessing-logging
    receiver, so that forked workers log through the runner."""

    def __init__(self, log_path: Path, console: logging.Handler, level: int) -> None:
        self.logger = logging.getLogger("arena")
        self.saved = (self.logger.level, self.logger.propagate)
        fmt = logging.Formatter("%(asctime)s %(processName)s %(name)s %(levelname)s %(message)s")
        file_handler = logging.FileHandler(log_path, encoding="utf-8")
        file_handler.setLevel(min(level, logging.INFO))
        file_handler.setFormatter(fmt)
        console.setLevel(level)
        console.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        self.handlers: list[logging.Handler] = [file_handler, console]
        self.logger.setLevel(min(level, logging.INFO))
        self.logger.propagate = False
        # not the fork start method: workers do not inherit the queue, they log directly
        self.installed: list[logging.Handler] = (
            [_Receiver("arena-log-receiver", sub_handler=_FanOut(self.handlers))]
            if multiprocessing.get_start_method() == "fork" else list(self.handlers))
        for h in self.installed:
            self.logger.addHandler(h)

    def close(self) -> None:
        """Flush, stop the receiver thread and restore the logger."""
        for h in self.installed:
            h.close()
            self.logger.removeHandler(h)
        for h in self.handlers:
            h.close()
        self.logger.setLevel(self.saved[0])
        self.logger.propagate = self.saved[1]
