"""Running a tournament: a schedule played on a worker pool, resumable from ``games.jsonl``.

:func:`run_tournament` takes a checked :class:`~arena.config.TournamentConfig` and

1. takes the results folder (``results/<name>/`` by default) for itself: an OS lock on
   ``.lock`` inside it, held until the run ends (:mod:`arena.lock`); a folder another runner
   holds is refused (:class:`~arena.lock.FolderInUse`) before anything is written;
2. prepares the folder: a new one gets ``config.json`` (the normalised configuration and its
   hash); an existing one must hold the same configuration (else :class:`ResultsMismatch`,
   unless ``restart``), and lines of its ``games.jsonl`` that are not records (a torn last
   line, a hand edit) are moved to ``games.rejected.jsonl`` with one warning;
3. builds the schedule (:mod:`arena.schedule`) and skips every game whose ``game_id`` is
   already in ``games.jsonl``;
4. submits the remaining games, in schedule order, to an executor (by default a
   ``ProcessPoolExecutor`` whose workers run referees; with ``executor: dask`` a Dask
   cluster, see :mod:`arena.cluster`; any ``concurrent.futures.Executor`` can be passed
   instead), keeping a few more games in flight than there are workers;
5. as each game finishes, appends its record to ``games.jsonl`` (flushed and fsynced, by this
   process only) before counting it, and updates the progress display;
6. writes ``standings.csv`` and ``games.csv`` and, when the ratings area provides it, the
   report.

Stopping: SIGINT (Ctrl-C) or SIGTERM sets a flag the loop checks between games; the games in
flight are abandoned: their workers get SIGTERM, which raises ``SystemExit`` inside the
referee so that its ``finally`` blocks stop the bots, then the worker exits.  Workers ignore
SIGINT and ask the kernel (``PR_SET_PDEATHSIG``) for a SIGTERM when the runner dies, so even
a ``kill -9`` of the runner leaves no worker, and through the referees no bot, behind.  The
only loss is the games in flight; the next run plays them again.
"""

from __future__ import annotations

import contextlib
import csv
import importlib
import importlib.util
import io
import json
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence, TextIO

from arena.config import TournamentConfig, config_digest
from arena.errors import ArenaError, ConfigError
from arena.lock import LOCK_FILE, FolderLock
from arena.records import (GameRecord, append_record, atomic_write, read_records,
                           records_table, set_aside_unreadable)
from arena.schedule import Slot, build_schedule
from arena.standings import (Standing, Tallies, compute_standings, format_standings,
                             write_standings_csv)

log = logging.getLogger("arena.tournament")

GAMES_FILE = "games.jsonl"
#: where lines of ``games.jsonl`` that are not records are moved (see :func:`repair_games`)
REJECTED_FILE = "games.rejected.jsonl"
CONFIG_FILE = "config.json"
LOG_FILE = "arena.log"
STANDINGS_FILE = "standings.csv"
GAMES_CSV = "games.csv"
#: seconds a terminated worker gets to stop its game (and bots) before SIGKILL
WORKER_STOP_GRACE_S = 5.0
#: exit status of an interrupted run (128 + SIGINT, as shells report it)
INTERRUPTED_STATUS = 130


class ResultsMismatch(ConfigError):
    """The results folder holds games of a different configuration."""


class WorkerFailure(ArenaError):
    """The worker pool broke (a worker process died outside a game's control)."""


# --------------------------------------------------------------------------------------
# The results folder
# --------------------------------------------------------------------------------------


def lock_results(config: TournamentConfig) -> FolderLock:
    """Take the lock of ``config``'s results folder (creating the folder) and return it;
    release it (or use it as a context manager) when the run ends.

    A folder that exists and is not a results folder is refused first, so that no lock
    file is left in it.

    :raises FolderInUse: another runner holds the folder ("results/NAME is in use by pid N").
    :raises ResultsMismatch: ``output`` is a file, or a folder that is not a results folder.
    """
    folder = config.output
    _refuse_foreign(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ResultsMismatch(f"cannot create {folder}: {e.strerror}", "output") from None
    lock = FolderLock(folder, shown=str(folder))
    lock.acquire()
    return lock


def prepare_results(config: TournamentConfig, *, restart: bool = False) -> Path:
    """Create or check the results folder and return it.

    A new (or empty) folder gets ``config.json``.  An existing one must have been created by the
    same configuration; ``restart`` discards its contents first.  Call it holding the
    folder's lock (:func:`lock_results`), as :func:`run_tournament` does.

    :raises ResultsMismatch: the folder holds another configuration's games, or is not a
        results folder at all.
    """
    folder = config.output
    stored_path = folder / CONFIG_FILE
    _refuse_foreign(folder)
    if folder.is_dir() and _has_content(folder):
        stored = _read_stored_config(stored_path)
        if restart:
            _clear_results(folder)
        elif stored.get("digest") != config.digest():
            changed = _changed_keys(stored.get("config", {}), config.normalised())
            raise ResultsMismatch(
                f"{folder} holds games of a different configuration of this tournament "
                f"(changed: {', '.join(changed) or 'unknown'}); run with --restart to discard "
                f"them, or give the tournament a new name")
        else:
            return folder
    folder.mkdir(parents=True, exist_ok=True)
    stored = {"digest": config.digest(), "created": _now(), "config": config.normalised()}
    atomic_write(stored_path, (json.dumps(stored, indent=2) + "\n").encode("utf-8"))
    return folder


def _refuse_foreign(folder: Path) -> None:
    """Refuse an ``output`` that is a file, or a folder with content but no ``config.json``."""
    if folder.exists() and not folder.is_dir():
        raise ResultsMismatch(f"{folder} is a file, not a results folder", "output")
    if folder.is_dir() and not (folder / CONFIG_FILE).is_file() and _has_content(folder):
        raise ResultsMismatch(f"{folder} exists and is not a Morris Arena results folder "
                              f"(no {CONFIG_FILE}): choose another 'output' or name", "output")


def _has_content(folder: Path) -> bool:
    """True when ``folder`` holds anything besides its lock file."""
    return any(child.name != LOCK_FILE for child in folder.iterdir())


def _read_stored_config(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ResultsMismatch(f"{path} is unreadable ({e}); run with --restart to start over")
    if not isinstance(data, dict):
        raise ResultsMismatch(f"{path} is not a stored configuration; run with --restart")
    return data


def _changed_keys(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The top-level keys whose values differ, leaving out the unhashed ones (workers...),
    which hash to the same (empty) digest whatever their values."""
    keys = sorted(set(old) | set(new))
    return [k for k in keys if old.get(k) != new.get(k)
            and config_digest({k: old.get(k)}) != config_digest({k: new.get(k)})]


def _clear_results(folder: Path) -> None:
    """Remove the contents of a results folder (known to be ours: it has config.json), but
    its lock file, which this process holds."""
    import shutil

    for child in folder.iterdir():
        if child.name == LOCK_FILE:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def repair_games(folder: Path) -> int:
    """Move the lines of ``folder/games.jsonl`` that are not records (a torn last line left
    by a crash, a hand edit, a stray comment) to ``games.rejected.jsonl`` beside it and return
    how many were moved.  Every line that parses stays; the games of the moved lines are no
    longer finished, so the run plays them again.  Call it holding the folder's lock.

    :raises ArenaError: a file cannot be read or written.
    """
    return set_aside_unreadable(folder / GAMES_FILE, folder / REJECTED_FILE)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# --------------------------------------------------------------------------------------
# Workers
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GameJob:
    """Everything a worker needs to play one scheduled game (picklable)."""

    slot: Slot
    white: Any  # BotSpec
    black: Any  # BotSpec
    time_control: Any  # TimeControl
    tournament: str
    isolation: Any = None  # arena.sandbox.Isolation, or None for the best available


#: in a worker: a game is being played (SIGTERM then unwinds it rather than exiting at once)
_in_game = False
#: in a worker: SIGTERM has come; the worker is on its way out
_terminated = threading.Event()
#: seconds a terminated worker's game gets to stop its bots before the watchdog takes over
#: (less than WORKER_STOP_GRACE_S, after which the runner kills the worker)
BOT_STOP_GRACE_S = 3.0
_TERM_STATUS = 128 + signal.SIGTERM


def _on_sigterm(signum: int, frame: Any) -> None:
    """In a worker: unwind the game (the referee's ``finally`` blocks stop its bots), or exit
    at once when idle.

    Only the first SIGTERM raises: a later one (the pool sends its own when it sees another
    worker exit) must not cut the bots' shutdown short.
    """
    if _terminated.is_set():
        return
    _terminated.set()
    if _in_game:
        raise SystemExit(_TERM_STATUS)
    os._exit(_TERM_STATUS)


def _watchdog() -> None:
    """In a worker, on a thread: once SIGTERM has come, wait (a little) for the game to stop,
    kill whatever child process is left, and exit.

    The main thread normally exits first (see :func:`play_job`); this covers a ``SystemExit``
    that never reached it (raised inside a ``__del__``, where Python ignores exceptions, or
    outside the game), which would otherwise leave the worker waiting for work forever.
    """
    _terminated.wait()
    deadline = time.monotonic() + BOT_STOP_GRACE_S
    while _in_game and time.monotonic() < deadline:
        time.sleep(0.02)
    _kill_children()
    os._exit(_TERM_STATUS)


def _kill_children() -> None:
    """SIGKILL every descendant of this process (bots a referee could not stop)."""
    import psutil

    try:
        children = psutil.Process().children(recursive=True)
    except psutil.Error:
        return
    for child in children:
        try:
            child.kill()
        except psutil.Error:
            pass


def _set_parent_death_signal(sig: int) -> None:
    """Ask Linux to send ``sig`` to this process when its parent dies (``PR_SET_PDEATHSIG``)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(sig), 0, 0, 0)  # 1 == PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def init_worker(parent_pid: int) -> None:
    """Worker initializer: ignore SIGINT (the runner decides), turn SIGTERM into a clean stop,
    and die with the runner."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _on_sigterm)
    threading.Thread(target=_watchdog, name="arena-worker-watchdog", daemon=True).start()
    _set_parent_death_signal(signal.SIGTERM)
    if os.getppid() != parent_pid:  # the runner died before the request took effect
        os._exit(1)


def play_job(job: GameJob) -> GameRecord:
    """Play one scheduled game (in a worker) and return its record, labelled with the
    tournament, round and pair."""
    global _in_game
    from arena.referee import play_game

    slot = job.slot
    try:
        _in_game = True
        try:
            record = play_game(job.white, job.black, slot.variant, job.time_control,
                               opening=slot.opening, game_id=slot.game_id, seed=slot.seed,
                               isolation=job.isolation)
        finally:
            _in_game = False
    except SystemExit:
        os._exit(_TERM_STATUS)  # terminated mid-game: the referee stopped the bots unwinding
    if _terminated.is_set():  # the SystemExit went astray, the game ended anyway: nobody waits
        os._exit(_TERM_STATUS)
    record.tournament = job.tournament
    record.round = slot.round
    record.pair = slot.pair
    return record


def process_pool(workers: int) -> ProcessPoolExecutor:
    """The default executor: ``workers`` forked processes set up by :func:`init_worker`."""
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method),
                               initializer=init_worker, initargs=(os.getpid(),))


def _stop_pool(executor: Executor) -> None:
    """Abandon the games in flight: SIGTERM every worker, wait, SIGKILL stragglers."""
    processes = list((getattr(executor, "_processes", None) or {}).values()) if isinstance(
        executor, ProcessPoolExecutor) else []
    for p in processes:
        if p.is_alive() and p.pid is not None:
            try:
                os.kill(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + WORKER_STOP_GRACE_S
    for p in processes:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive() and p.pid is not None:
            log.warning("worker %s did not stop in %.0f s; killing it", p.pid,
                        WORKER_STOP_GRACE_S)
            p.kill()
            p.join(1.0)
    executor.shutdown(wait=True, cancel_futures=True)


# --------------------------------------------------------------------------------------
# Progress and console logging
# --------------------------------------------------------------------------------------


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
        eta = _duration(left / rate) if rate > 0 else "?"
        width = len(str(self.total))
        text = f"[{self.done:>{width}}/{self.total}] {rate * 60:.1f} games/min, ETA {eta}"
        leader = self.tallies.leader()
        if leader is not None:
            text += f", leader {leader.name} ({leader.points:g} pts)"
        return text

    def redraw(self) -> None:
        """Draw the live line again."""
        with self.lock:
            if self.live:
                self.stream.write("\r\x1b[K" + self.status())
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


def _duration(seconds: float) -> str:
    s = int(seconds + 0.5)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class _ConsoleHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Log lines on the console that step around the live progress line."""

    def __init__(self, stream: TextIO, progress: Progress) -> None:
        super().__init__(stream)
        self.progress = progress

    def emit(self, record: logging.LogRecord) -> None:
        with self.progress.lock:
            shown = self.progress.shown
            self.progress.clear()
            super().emit(record)
            if shown:
                self.progress.redraw()


class _Logging:
    """The ``arena`` logger's handlers for one run: the results folder's log file and the
    console, wrapped by multiprocessing-logging so that forked workers log through the runner."""

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
        for h in self.handlers:
            self.logger.addHandler(h)
        self.wrapped = False
        try:
            import multiprocessing_logging

            multiprocessing_logging.install_mp_handler(self.logger)
            self.wrapped = True
        except (ImportError, AssertionError):  # not the fork start method: workers log directly
            pass

    def close(self) -> None:
        """Flush, stop the receiver threads and restore the logger."""
        for h in list(self.logger.handlers):
            sub = getattr(h, "sub_handler", None)
            if h in self.handlers or sub in self.handlers:
                h.close()
                self.logger.removeHandler(h)
        for h in self.handlers:
            h.close()
        self.logger.setLevel(self.saved[0])
        self.logger.propagate = self.saved[1]


# --------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------


@dataclass
class TournamentResult:
    """What a run did: games in the schedule, finished (in total, and in this run), whether it
    was interrupted, the standings and the files written.  ``failed`` counts games the
    referee failed on, ``lost`` games a cluster lost (its workers died; both unplayed)."""

    total: int
    finished: int
    played: int
    interrupted: bool
    folder: Path
    standings: dict[str, list[Standing]] = field(default_factory=dict)
    failed: int = 0
    lost: int = 0
    report: Optional[Path] = None
    elo: Optional[str] = None

    @property
    def complete(self) -> bool:
        """True when every scheduled game is in ``games.jsonl``."""
        return self.finished == self.total


def finished_records(path: Path, ids: set[str]) -> dict[str, GameRecord]:
    """The records of ``games.jsonl`` by ``game_id``, keeping only ``ids`` (first one wins)."""
    out: dict[str, GameRecord] = {}
    for r in read_records(path):
        if r.game_id in ids and r.game_id not in out:
            out[r.game_id] = r
    return out


class _StopFlag:
    """Set by SIGINT/SIGTERM while a run is in progress (the handlers only set it)."""

    def __init__(self) -> None:
        self.signal: Optional[int] = None
        self.saved: dict[int, Any] = {}

    def __enter__(self) -> _StopFlag:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.saved[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        self.signal = signum

    def __exit__(self, *_: Any) -> None:
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)

    def __bool__(self) -> bool:
        return self.signal is not None


def run_tournament(config: TournamentConfig, *, restart: bool = False,
                   executor: Optional[Executor] = None, console: TextIO = sys.stderr,
                   live: Optional[bool] = None, log_level: int = logging.WARNING,
                   max_games: Optional[int] = None) -> TournamentResult:
    """Play every game of ``config`` not yet in its results folder, then write the tables.

    ``executor`` replaces the executor ``config.executor`` names (the process pool, or a Dask
    cluster; a given executor is used, not shut down); ``console``
    receives progress and log lines (``live``: redraw one line, default when it is a
    terminal); ``log_level`` is the console's level (the log file gets INFO and above);
    ``max_games`` stops after that many games (for tests and benchmarks).

    The results folder is locked for the whole run (:func:`lock_results`), whatever the
    executor: a second runner of the same folder fails at once, before writing anything.

    :raises FolderInUse: another runner holds the results folder.
    :raises ResultsMismatch: the results folder holds another configuration.
    :raises WorkerFailure: the worker pool broke; finished games are saved.
    :raises ClusterError: the Dask cluster cannot be used (``arena.cluster``).
    """
    dask = executor is None and config.executor.kind == "dask"
    if dask:  # before anything is written
        from arena.cluster import require_distributed

        require_distributed()
    with lock_results(config):
        return _run_locked(config, restart=restart, executor=executor, console=console,
                           live=live, log_level=log_level, max_games=max_games, dask=dask)


def _run_locked(config: TournamentConfig, *, restart: bool, executor: Optional[Executor],
                console: TextIO, live: Optional[bool], log_level: int,
                max_games: Optional[int], dask: bool) -> TournamentResult:
    """:func:`run_tournament` once the results folder is ours."""
    folder = prepare_results(config, restart=restart)
    moved = repair_games(folder)
    games_path = folder / GAMES_FILE
    slots = build_schedule(config.players, config.variants, config.format,
                           games_per_pairing=config.games_per_pairing,
                           opening_turns=config.opening_turns, seed=config.seed)
    order = {s.game_id: s.index for s in slots}
    done = finished_records(games_path, set(order))
    pending = deque(s for s in slots if s.game_id not in done)
    if max_games is not None:
        pending = deque(list(pending)[:max_games])

    live = console.isatty() if live is None else live
    progress = Progress(len(slots), len(done), console, live=live, records=done.values())
    logs = _Logging(folder / LOG_FILE, _ConsoleHandler(console, progress), log_level)
    result = TournamentResult(total=len(slots), finished=len(done), played=0,
                              interrupted=False, folder=folder)
    try:
        if moved:
            log.warning("%s: moved %d unreadable line%s to %s; any game they held is played "
                        "again", games_path, moved, "s" if moved > 1 else "",
                        folder / REJECTED_FILE)
        log.info("tournament %s: %d games, %d finished, %d to play on %s", config.name,
                 len(slots), len(done), len(pending),
                 "a Dask cluster" if dask else f"{config.workers} workers"
                 if executor is None else type(executor).__name__)
        if pending:
            progress.redraw()
            cluster = contextlib.ExitStack()
            if dask:
                from arena.cluster import cluster_executor

                executor = cluster.enter_context(cluster_executor(config))
            own = executor is None
            pool = process_pool(config.workers) if executor is None else executor
            with cluster, _StopFlag() as stop:
                clean = False
                try:
                    _play_all(config, pool, pending, games_path, progress, result, stop,
                              in_flight_cap=lambda: _in_flight_cap(pool, config.workers))
                    clean = not stop
                finally:
                    result.interrupted = bool(stop)
                    if own and clean:
                        pool.shutdown(wait=True)
                    elif own:
                        _stop_pool(pool)
            progress.close()
            if result.interrupted:
                log.warning("interrupted: %d of %d games saved in %s; run again to resume",
                            result.finished, result.total, folder)
        records = sorted(finished_records(games_path, set(order)).values(),
                         key=lambda r: order[r.game_id])
        result.finished = len(records)
        result.standings = compute_standings(records, config.players)
        if not result.interrupted:
            _write_tables(folder, records, result.standings)
            if config.report and result.complete:
                try:
                    result.elo = elo_table(records)
                    result.report = write_report(config, folder, records)
                except Exception as e:  # the games and tables are saved: say so, go on
                    log.error("the report failed (%r); the games are saved in %s", e, folder,
                              exc_info=True)
    finally:
        progress.close()
        logs.close()
    return result


def _play_all(config: TournamentConfig, pool: Executor, pending: deque[Slot], games_path: Path,
              progress: Progress, result: TournamentResult, stop: _StopFlag,
              in_flight_cap: Callable[[], int]) -> None:
    """The submit / as-completed loop.  Each finished game is saved before it is counted.

    ``in_flight_cap()`` is the number of games to keep submitted (asked again as games
    finish: a cluster may grow during the run)."""
    bots = config.bots
    in_flight: dict[Future[GameRecord], Slot] = {}
    try:
        _loop(config, pool, pending, games_path, progress, result, stop, in_flight_cap,
              bots, in_flight)
    finally:
        for future in in_flight:  # abandoned (stopped, or the pool broke)
            future.cancel()


def _loop(config: TournamentConfig, pool: Executor, pending: deque[Slot], games_path: Path,
          progress: Progress, result: TournamentResult, stop: _StopFlag,
          in_flight_cap: Callable[[], int], bots: Sequence[Any],
          in_flight: dict[Future[GameRecord], Slot]) -> None:
    from concurrent.futures.process import BrokenProcessPool

    while (pending or in_flight) and not stop:
        cap = in_flight_cap()
        while pending and len(in_flight) < cap:
            slot = pending.popleft()
            job = GameJob(slot, bots[slot.white], bots[slot.black], config.time_control,
                          config.name, config.isolation)
            in_flight[pool.submit(play_job, job)] = slot
        finished, _ = wait(in_flight, timeout=0.25, return_when=FIRST_COMPLETED)
        for future in sorted(finished, key=lambda f: in_flight[f].index):
            slot = in_flight.pop(future)
            try:
                record = future.result()
            except BrokenProcessPool as e:
                raise WorkerFailure(f"a worker process died ({e}); finished games are saved "
                                    f"in {games_path.parent}: run again to resume") from None
            except Exception as e:  # a referee bug, not a bot's doing: the game is retried
                if _is_lost_game(e):  # on the next run; so is a game a cluster lost
                    result.lost += 1
                    log.error("game %s was lost on the cluster (%s: %s); it is left "
                              "unplayed for the next run", slot.game_id, type(e).__name__, e)
                else:
                    result.failed += 1
                    log.error("game %s failed in the referee: %r", slot.game_id, e)
                continue
            append_record(games_path, record)
            result.played += 1
            result.finished += 1
            log.log(logging.WARNING if record.forfeit else logging.INFO,
                    "game %s: %s - %s %s (%s)%s", record.game_id, record.white.name,
                    record.black.name, record.result, record.termination,
                    f": {record.detail}" if record.forfeit else "")
            progress.add(record)


def _in_flight_cap(pool: Executor, workers: int) -> int:
    """How many games to keep submitted: the executor's ``games_in_flight`` when it has one
    (a cluster: one per worker thread, so that a dying worker holds one game only), else two
    per worker, so that a worker never waits for its next game."""
    own = getattr(pool, "games_in_flight", None)
    if own is not None:
        return max(1, int(own))
    return 2 * max(1, getattr(pool, "_max_workers", workers))


def _is_lost_game(error: BaseException) -> bool:
    """A cluster lost the game (see :func:`arena.cluster.is_lost_game`); only when Dask is in
    use, without importing it otherwise."""
    if "distributed" not in sys.modules:
        return False
    from arena.cluster import is_lost_game

    return is_lost_game(error)


def _write_tables(folder: Path, records: list[GameRecord],
                  tables: dict[str, list[Standing]]) -> None:
    write_standings_csv(folder / STANDINGS_FILE, tables)
    atomic_write(folder / GAMES_CSV, records_table(records).to_csv(index=False).encode("utf-8"))


#: the ratings area's report entry point: ``arena.report.<name>(config, folder, records)``
REPORT_FUNCTION = "write_report"


def _report_module() -> Optional[Any]:
    """``arena.report`` (the ratings area), or None while it does not exist."""
    if importlib.util.find_spec("arena.report") is None:
        log.info("no arena.report module: skipping the Elo table and the report")
        return None
    return importlib.import_module("arena.report")


def write_report(config: TournamentConfig, folder: Path,
                 records: list[GameRecord]) -> Optional[Path]:
    """The report (charts, ratings.csv, report.html) from the ratings area, when it exists.

    Returns the report's path, or None when ``arena.report`` does not provide it.
    """
    module = _report_module()
    report: Optional[Callable[..., Any]] = getattr(module, REPORT_FUNCTION, None)
    if report is None:
        return None
    out = report(config, folder, records)  # the single call site of the report
    return Path(out) if out is not None else None


def elo_table(records: Sequence[GameRecord]) -> Optional[str]:
    """The Elo table as text (``arena.ratings.rate_all`` formatted by
    ``arena.report.format_standings``), or None when those do not exist."""
    module = _report_module()
    if module is None or not hasattr(module, "format_standings"):
        return None
    from arena import ratings

    if not records or not hasattr(ratings, "rate_all"):
        return None
    text: str = module.format_standings(ratings.rate_all(records), records)
    return text
