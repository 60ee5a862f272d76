"""Running a tournament: a schedule played on an executor, resumable from ``games.jsonl``.

:func:`run_tournament` takes a checked :class:`~arena.config.TournamentConfig` and

1. takes the results folder (``results/<name>/`` by default) for itself: an OS lock on
   ``.lock`` inside it, held until the run ends (:mod:`arena.lock`); a folder another runner
   holds is refused (:class:`~arena.lock.FolderInUse`) before anything is written;
2. prepares the folder: a new one gets ``config.json`` (the normalised configuration and its
   hash); an existing one must hold the same configuration, or one that this one only adds
   games to (more games per pairing or rounds, another bot or variant: ``config.json`` is
   then updated to it), else :class:`ResultsMismatch` names the keys, unless ``restart``
   (see :func:`open_results`); lines of its ``games.jsonl`` that are not records (a torn
   last line, a hand edit) are moved to ``games.rejected.jsonl`` with one warning;
3. builds the schedule (:mod:`arena.schedule`, one slot at a time) and skips every game
   whose ``game_id`` is already in ``games.jsonl`` (read one line at a time: the runner
   keeps of each saved game its id, its outcome and where its record is,
   :class:`arena.runstate.Finished`, never the records: about 160 bytes a game);
4. submits the remaining games, in schedule order, as :class:`~arena.jobs.GameJob` s to the
   executor the configuration names (``executor.type``, looked up in the registry of
   :mod:`arena.executors`; a :class:`~arena.executors.GameExecutor` or any
   ``concurrent.futures.Executor`` can be passed instead), keeping as many games in flight as
   the executor asks for;
5. as each game finishes, appends its record to ``games.jsonl`` (flushed and fsynced, by this
   process only) before counting it (then drops it), and updates the progress display
   (:mod:`arena.progress`); a game the executor lost, or the referee failed on, is logged
   and left for the next run; a game the machine was too busy to judge (void) is played
   once more at the end of the run, then left for the next;
6. writes ``standings.csv`` (from the outcomes) and ``games.csv`` (the records read back
   from ``games.jsonl`` one at a time, in playing order) and, when the ratings area provides
   it, the Elo table (from the games' tallies, counted in the same pass) and the report (the
   records read back once more; it keeps only the games it lists).

Stopping: SIGINT (Ctrl-C) or SIGTERM sets a flag the loop checks between games; the games in
flight are abandoned: the executor is closed with ``cancel`` (the local pool's workers get
SIGTERM, which unwinds the referee so that its ``finally`` blocks stop the bots, see
:mod:`arena.jobs`).  The only loss is the games in flight; the next run plays them again.

Steps 1 and 2 (the results folder) are :mod:`arena.resultsfolder`'s; their names are also
importable from here.
"""

from __future__ import annotations

import importlib
import importlib.util
import dataclasses
import logging
import signal
import sys
import threading
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence, TextIO, Union

from arena.config import TournamentConfig
from arena.errors import ArenaError, BotError
from arena.executors import (ExecutorKind, GameExecutor, StallWatch, after_loss, executor_kind,
                             wrap_executor)
from arena.jobs import KEPT, GameJob
from arena.live import LIVE, PlyWriter, end_live, game_header, start_live
from arena.pgn import add_game, catch_up, open_pgn
from arena.progress import FORFEIT_KEY, ConsoleHandler, Progress, RunLogging, log_clock
from arena.protocol import escape_controls
from arena.records import GameRecord, append_record, read_records, write_games_csv
from arena.resultsfolder import (CONFIG_FILE, GAMES_CSV, GAMES_FILE, INTERRUPTED_STATUS,
                                 LOG_FILE, REJECTED_FILE, STANDINGS_FILE, Comparison,
                                 ResultsMismatch, WorkerFailure, compare_configs, lock_results,
                                 open_results, prepare_results, read_repaired_games,
                                 repair_games)
from arena.report.forfeits import forfeit_bot, forfeit_reason
from arena.rounds import Planner, bracket_standings, knockout_places
from arena.runstate import Finished, load_finished, read_at
from arena.tallies import GameTallies
from arena.schedule import (PendingSlots, Slot, config_slots, count_games, pairing_key,
                            pairing_order)
from arena.standings import (Standing, compute_standings, format_standings,
                             write_standings_csv)

log = logging.getLogger("arena.tournament")





# --------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------


@dataclass
class TournamentResult:
    """What a run did: games in the schedule, finished (in total, and in this run), whether it
    was interrupted, the standings and the files written.  ``failed`` counts games the
    referee failed on, ``lost`` games the executor lost (a cluster whose workers died; both
    unplayed)."""

    total: int
    finished: int
    played: int
    interrupted: bool
    folder: Path
    standings: dict[str, list[Standing]] = field(default_factory=dict)
    failed: int = 0
    lost: int = 0
    #: games the executor lost (a dead worker, a lost scheduler) and played again in the run
    replayed: int = 0
    #: games not counted because the machine starved a bot in every play (unplayed)
    void: int = 0
    report: Optional[Path] = None
    elo: Optional[str] = None

    @property
    def complete(self) -> bool:
        """True when every scheduled game is in ``games.jsonl``."""
        return self.finished == self.total


def finished_records(path: Path, ids: set[str]) -> dict[str, GameRecord]:
    """The records of ``games.jsonl`` by ``game_id``, keeping only ``ids`` (first one wins)."""
    return _by_id(read_records(path), ids)


def _by_id(records: Sequence[GameRecord], ids: Optional[set[str]]) -> dict[str, GameRecord]:
    """``records`` by ``game_id``, keeping only ``ids`` (None: every id; first one wins)."""
    out: dict[str, GameRecord] = {}
    for r in records:
        if (ids is None or r.game_id in ids) and r.game_id not in out:
            out[r.game_id] = r
    return out


class StopFlag:
    """Set by SIGINT/SIGTERM while a run is in progress (main thread only; the handlers only
    set it, the previous ones come back at the end).  True once set; ``event`` is the same
    flag for threads that wait on it (``arena sprt``'s pairs)."""

    def __init__(self) -> None:
        self.signal: Optional[int] = None
        self.event = threading.Event()
        self.saved: dict[int, Any] = {}

    def __enter__(self) -> StopFlag:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.saved[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        self.signal = signum
        self.event.set()

    def __exit__(self, *_: Any) -> None:
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)

    def __bool__(self) -> bool:
        return self.event.is_set()


def run_tournament(config: TournamentConfig, *, restart: bool = False,
                   executor: Union[GameExecutor, Executor, None] = None,
                   console: TextIO = sys.stderr, live: Optional[bool] = None,
                   log_level: int = logging.WARNING,
                   max_games: Optional[int] = None) -> TournamentResult:
    """Play every game of ``config`` not yet in its results folder, then write the tables.

    ``executor`` replaces the executor ``config.executor`` names: a
    :class:`~arena.executors.GameExecutor`, or any ``concurrent.futures.Executor`` (which
    plays :func:`arena.jobs.play_job`); a given executor is used, not closed.  ``console``
    receives progress and log lines (``live``: redraw one line, default when it is a
    terminal); ``log_level`` is the console's level (the log file gets INFO and above);
    ``max_games`` stops after that many games (for tests and benchmarks).

    The results folder is locked for the whole run (:func:`lock_results`), whatever the
    executor: a second runner of the same folder fails at once, before writing anything.

    :raises FolderInUse: another runner holds the results folder.
    :raises ResultsMismatch: the results folder holds another configuration.
    :raises WorkerFailure: the executor broke; finished games are saved.
    :raises ArenaError: the executor the configuration names cannot be used (checked before
        anything is written when it can be, see :class:`~arena.executors.ExecutorKind`).
    """
    kind = executor_kind(config)
    given = None if executor is None else _as_game_executor(executor, config.workers)
    if given is None:  # before anything is written
        kind.require(config)
    where = kind.describe(config) if executor is None else type(executor).__name__
    with lock_results(config):
        return _run_locked(config, restart=restart, kind=kind, given=given, where=where,
                           console=console, live=live, log_level=log_level,
                           max_games=max_games)


def _run_locked(config: TournamentConfig, *, restart: bool, kind: ExecutorKind,
                given: Optional[GameExecutor], where: str, console: TextIO,
                live: Optional[bool], log_level: int,
                max_games: Optional[int]) -> TournamentResult:
    """:func:`run_tournament` once the results folder is ours.  The games are played on
    ``given``, else on an executor that ``kind`` opens (and this function closes);
    ``where`` says which, for the log."""
    cannot_start = _preflight_bots(config)  # before the folder is touched: a bad option
    open_pgn(config.pgn_out)  # and a PGN file that cannot be written (pgn_out: ConfigError)
    folder, config = open_results(config, restart=restart)  # bots in joining order
    games_path = folder / GAMES_FILE
    # the saved games' ids, outcomes and places in games.jsonl, read one line at a time:
    # the runner never holds the records (arena.runstate)
    moved, done = load_finished(games_path, folder / REJECTED_FILE)
    kept = config.restart == "per-pairing"  # each pairing's games together
    # a Swiss or a knockout: round by round, each paired (and recorded) once the one before
    # is complete (arena.rounds)
    planner = Planner(config, folder) if config.format.staged else None
    if planner is not None:
        first = planner.next_slots(done)
        pending = PendingSlots(iter(first), done, done.places, max_games,
                               regroup=pairing_order if kept else None)
        total = planner.total(done)
    else:
        pending = PendingSlots(config_slots(config, by_pairing=kept), done,  # walked lazily
                               done.places, max_games, grouped=kept)
        total = count_games(config.format, config.players, len(config.variants),
                            games_per_pairing=config.games_per_pairing)

    live = console.isatty() if live is None else live
    progress = Progress(total, len(done), console, live=live, records=done.values())
    console_log = ConsoleHandler(console, progress)
    logs = RunLogging(folder / LOG_FILE, console_log, log_level)
    result = TournamentResult(total=total, finished=len(done), played=0,
                              interrupted=False, folder=folder)
    try:
        for line in cannot_start:
            log.warning("%s", escape_controls(line))
        if moved:
            log.warning("%s: moved %d unreadable line%s to %s; any game they held is played "
                        "again", games_path, moved, "s" if moved > 1 else "",
                        folder / REJECTED_FILE)
        log.info("tournament %s: %d games, %d finished, %d to play on %s", config.name,
                 total, len(done), pending.count(total - len(done)), where)
        log_clock(config.time_control)
        if config.pgn_out:  # the saved games it lacks, in playing order, read back one by one
            slots = planner.slots(done) if planner is not None else config_slots(config)
            catch_up(config.pgn_out, _read_back(games_path, done,
                                                done.ordered(s.game_id for s in slots)))
        if pending:
            progress.redraw()
            _start_live(config, folder)
            games = given if given is not None else kind.open(config)
            with StopFlag() as stop:
                clean = False
                try:
                    _play_all(config, games, pending, games_path, progress, result, stop,
                              done)
                    if planner is not None:
                        _play_rounds(config, planner, games, games_path, progress, result,
                                     stop, done, max_games, {s.game_id for s in first})
                    clean = not stop
                finally:
                    result.interrupted = bool(stop)
                    if given is None:  # ours: wait for it, or stop its games
                        games.close(cancel=not clean)
                    KEPT.close_all()  # bots kept by games played on this process's threads
                    end_live(folder / LIVE)  # games abandoned in flight: not in progress
            progress.close()
            if result.interrupted:
                log.warning("interrupted: %d of %d games saved in %s; run again to resume",
                            result.finished, result.total, folder)
        if not result.interrupted:
            pending.finish()  # the places of saved games not walked past (max_games)
        # the saved games in playing order (schedule order, once it is walked to its end;
        # else games.jsonl's), as packed entries: their outcomes give the standings, their
        # records are read back one at a time for the tables
        if planner is not None:
            entries = done.ordered(s.game_id for s in planner.slots(done))
        else:
            entries = done.ordered(by_place=pending.exhausted)
        result.finished = len(entries)
        if planner is not None:
            result.total = max(planner.total(done), len(entries))
            if planner.ended:
                log.warning("%s", planner.ended)
        result.standings = compute_standings(
            [done.outcome_of(v) for v in entries], config.players,
            tiebreaks=config.chosen_tiebreaks,
            byes=planner.byes() if planner is not None else None)
        if planner is not None and planner.kind == "knockout":  # placed by the bracket
            result.standings = bracket_standings(result.standings,
                                                 knockout_places(planner, done))
        if not result.interrupted:
            # one pass over the records read back writes games.csv and counts the Elo
            # table's tallies (when there is a report): no step holds every record
            tallies = GameTallies() if config.report and result.complete else None
            failed: list[Exception] = []
            _write_tables(folder, _tallied(_read_back(games_path, done, entries), tallies,
                                           failed), result.standings)
            if tallies is not None:
                try:
                    if failed:
                        raise failed[0]
                    result.elo = elo_table(tallies.finish())
                    # a pass of its own: the report pulls its records, after games.csv is saved
                    result.report = write_report(config, folder,
                                                 _read_back(games_path, done, entries))
                except Exception as e:  # the games and tables are saved: say so, go on
                    log.error("the report failed (%r); the games are saved in %s", e, folder,
                              exc_info=True)
    finally:
        progress.close()
        repeats = console_log.repeat_summary()
        if repeats:
            log.warning("repeated forfeits (each shown once above; every game is in %s):\n  %s",
                        folder / LOG_FILE, "\n  ".join(repeats))
        logs.close()
    return result


def _read_back(games_path: Path, done: Finished, entries: list[int]) -> Iterator[GameRecord]:
    """The records of ``entries`` (of :meth:`Finished.ordered`) read back from
    ``games.jsonl``, in that order, one at a time."""
    return read_at(games_path, map(done.offset_of, entries))


def _tallied(records: Iterable[GameRecord], tallies: Optional[GameTallies],
             failed: list[Exception]) -> Iterator[GameRecord]:
    """``records`` as they come, each counted in ``tallies`` too (None: not counted); a game
    the tallies refuse ends the counting, its error kept in ``failed`` (raised where the
    report's errors are caught: the tables are written regardless)."""
    for record in records:
        if tallies is not None and not failed:
            try:
                tallies.add(record)
            except Exception as e:
                failed.append(e)
        yield record


def _play_rounds(config: TournamentConfig, planner: Planner, games: GameExecutor,
                 games_path: Path, progress: Progress, result: TournamentResult,
                 stop: StopFlag, done: Finished, max_games: Optional[int],
                 tried: set[str]) -> None:
    """The rounds of a Swiss or a knockout after the first step (already played): each
    paired once the one before is complete (:meth:`Planner.next_slots`), until none is left,
    the run is stopped, ``max_games`` are played, or a round cannot be completed in this
    run (a game lost or not judged twice, so ``tried`` already: the next run plays it,
    then pairs on)."""
    regroup = pairing_order if config.restart == "per-pairing" else None
    while not stop:
        left = None if max_games is None else max_games - result.played
        if left is not None and left <= 0:
            return
        step = planner.next_slots(done)
        if not step:
            return
        if any(s.game_id in tried for s in step):
            unplayed = len(step)
            log.warning("round %d has %d game(s) left unplayed in this run; the next round "
                        "is paired once it is complete: run again", planner.rounds[-1].number,
                        unplayed)
            return
        progress.total = result.total = max(planner.total(done), progress.total)
        tried.update(s.game_id for s in step)
        log.info("round %d of %s: %d games", planner.rounds[-1].number, config.name, len(step))
        _play_all(config, games,
                  PendingSlots(iter(step), done, done.places, left, regroup=regroup),
                  games_path, progress, result, stop, done)


def _preflight_bots(config: TournamentConfig) -> list[str]:
    """Every bot once before the first game (:func:`arena.preflight.preflight`): its
    ``build:`` step, a start and the check of its options.  A bad option ends the run
    (OptionError, exit 2) before any game and before the results folder changes; a bot that
    fails to build or start is not an error of the run: its games are played as start
    failures, each with the reason.  Returns one line per such bot, for the run's log."""
    from arena.options import OptionError
    from arena.preflight import preflight_all

    outcomes = preflight_all(config.bots, isolation=config.isolation,
                             handshake_s=config.time_control.handshake_ms / 1000.0)
    failures = []
    for bot, got in zip(config.bots, outcomes):
        if isinstance(got, OptionError):
            raise got
        if isinstance(got, BotError):
            failures.append(f"{bot.name} cannot start ({got}): its games will be forfeits")
        elif isinstance(got, ArenaError):  # e.g. a Dask run whose bots exist only on the workers
            failures.append(f"{bot.name} cannot be started here ({got}); its games decide")
    return failures


def _as_game_executor(executor: Union[GameExecutor, Executor], workers: int) -> GameExecutor:
    """An executor passed to :func:`run_tournament`, as a game executor."""
    return wrap_executor(executor, workers) if isinstance(executor, Executor) else executor


def _play_all(config: TournamentConfig, games: GameExecutor,
              pending: PendingSlots, games_path: Path, progress: Progress,
              result: TournamentResult, stop: StopFlag, done: Finished) -> None:
    """The submit / as-completed loop.  Each finished game is saved (and added to ``done``,
    the games of ``games.jsonl`` by id, with its place in the schedule) before it is
    counted; its record is then dropped.

    The executor's ``capacity()`` is the number of games to keep submitted (asked again as
    games finish: a cluster may grow during the run).  An executor's optional ``stalled()``
    and ``after_loss()`` (see :class:`~arena.executors.GameExecutor`) are used."""
    in_flight: dict[Future[GameRecord], GameJob] = {}
    try:
        _loop(config, games, pending, games_path, progress, result, stop, in_flight, done)
    finally:
        for future in in_flight:  # abandoned (stopped, or the executor broke)
            future.cancel()


def _loop(config: TournamentConfig, games: GameExecutor, pending: PendingSlots,
          games_path: Path, progress: Progress, result: TournamentResult, stop: StopFlag,
          in_flight: dict[Future[GameRecord], GameJob], done: Finished) -> None:
    bots = config.bots
    again: deque[GameJob] = deque()  # lost games, played again first
    # games the machine was too busy to judge (void): played once more at the end of the
    # run, when the load may have passed, and only then left for the next run
    later: list[GameJob] = []
    retried: set[str] = set()
    waiting = StallWatch(games, config.cluster_wait, progress, result, WorkerFailure)

    def take(future: Future[GameRecord]) -> None:
        """Save (or set aside, or leave for later) the game of a finished ``future``."""
        job = in_flight.pop(future)
        slot = job.slot
        try:
            record = future.result()
        except Exception as e:
            broken = games.broken(e)
            if broken is not None:
                raise WorkerFailure(f"{broken}; finished games are saved in "
                                    f"{games_path.parent}: run again to resume") from None
            if not games.is_lost(e):  # a referee bug, not a bot's doing: the next run
                result.failed += 1
                log.error("game %s failed in the referee: %r", slot.game_id, e)
                return
            verdict = after_loss(games, job, e)  # (logged there)
            if isinstance(verdict, GameJob):  # played again, on another worker
                result.replayed += 1
                again.append(verdict)
                return
            if verdict is None:  # not played; left for the next run
                result.lost += 1
                return
            record = verdict  # given up: the forfeit the executor made of it
        if record.game_id in done:  # a copy of a game played twice: saved once
            log.info("game %s came back a second time; it is saved once", record.game_id)
            return
        if record.void and slot.game_id not in retried:  # once more, at the end
            later.append(job)
            return
        if record.void:  # not a fair result: left for the next run
            result.void += 1
            log.warning("game %s could not be judged (%s); it is left unplayed for the "
                        "next run: run again on a quieter machine, or with fewer workers",
                        record.game_id, record.void)
            return
        offset = _size(games_path)  # where its line starts (this process alone appends)
        append_record(games_path, record)
        end_live(games_path.parent / LIVE, _live_file(slot))  # saved: not in progress
        add_game(config.pgn_out, record)  # with its record: a resume adds no copy
        done.add(record, offset)
        done.set_place(record.game_id, slot.index)
        result.played += 1
        result.finished += 1
        bot = forfeit_bot(record)
        # the console shows one bot's identical forfeits once, then counts them
        extra = None if bot is None else {
            FORFEIT_KEY: (bot, record.termination, forfeit_reason(record))}
        log.log(logging.WARNING if record.forfeit else logging.INFO,
                "game %s: %s - %s %s (%s)%s", record.game_id, record.white.name,
                record.black.name, record.result, record.termination,
                f": {record.detail}" if record.forfeit else "", extra=extra)
        progress.add(record)

    while (again or pending or in_flight or later) and not stop:
        if later and not (again or pending or in_flight):
            log.warning("%d game(s) the machine was too busy to judge are played once more",
                        len(later))
            retried.update(job.slot.game_id for job in later)
            again.extend(dataclasses.replace(job, last=True) for job in later)  # kept bots end
            later.clear()
        cap = 0 if waiting.check() else games.capacity()
        while (again or pending) and len(in_flight) < cap:
            if again:
                job = again.popleft()
            else:
                slot = pending.popleft()
                job = GameJob(slot, bots[slot.white], bots[slot.black], config.time_control,
                              config.name, config.isolation, restart=config.restart,
                              pairing=pairing_key(slot), last=pending.ends_pairing(slot),
                              adjudicate=config.adjudicate,
                              on_move=_ply_writer(config, games_path.parent, slot))
            in_flight[games.submit(job)] = job
        if not in_flight:  # waiting for the executor, nothing to wait on
            stop.event.wait(0.25)
            continue
        finished, _ = wait(in_flight, timeout=0.25, return_when=FIRST_COMPLETED)
        batch = sorted(finished, key=lambda f: in_flight[f].slot.index, reverse=True)
        finished.clear()  # a finished future holds its record: none is kept past its turn
        while batch:
            take(batch.pop())


def _live_file(slot: Slot) -> str:
    return f"{slot.index}.jsonl"


def _ply_writer(config: TournamentConfig, folder: Path, slot: Slot) -> Optional[PlyWriter]:
    """The referee's ``on_move`` for ``slot``'s game: each ply appended to its file in
    ``RESULTS/live/`` (:mod:`arena.live`, for ``arena watch``), on this machine's workers
    only (a Dask worker's files would be on its own machine)."""
    if config.executor.kind != "local":
        return None
    players = config.players
    header = game_header(slot.game_id, slot.variant, players[slot.white],
                         players[slot.black], slot.opening, tournament=config.name,
                         round=slot.round, pair=slot.pair)
    return PlyWriter(str(folder / LIVE / _live_file(slot)), header)


def _start_live(config: TournamentConfig, folder: Path) -> None:
    """``RESULTS/live/`` made (for :func:`_ply_writer`), emptied of an earlier run's files."""
    if config.executor.kind == "local" and not start_live(folder / LIVE):
        log.warning("cannot create %s: arena watch will not show the games in progress",
                    folder / LIVE)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _write_tables(folder: Path, records: Iterable[GameRecord],
                  tables: dict[str, list[Standing]]) -> None:
    """``standings.csv``, and ``games.csv`` written as ``records`` are read (one at a
    time)."""
    write_standings_csv(folder / STANDINGS_FILE, tables)
    write_games_csv(folder / GAMES_CSV, records)


#: the ratings area's report entry point: ``arena.report.<name>(config, folder, records)``
REPORT_FUNCTION = "write_report"


def _report_module() -> Optional[Any]:
    """``arena.report`` (the ratings area), or None while it does not exist."""
    if importlib.util.find_spec("arena.report") is None:
        log.info("no arena.report module: skipping the Elo table and the report")
        return None
    return importlib.import_module("arena.report")


def write_report(config: TournamentConfig, folder: Path,
                 records: Iterable[GameRecord]) -> Optional[Path]:
    """The report (charts, ratings.csv, report.html) from the ratings area, when it exists;
    ``records`` are read once, in their order (a list, or records read back one at a time).

    Returns the report's path, or None when ``arena.report`` does not provide it.
    """
    module = _report_module()
    report: Optional[Callable[..., Any]] = getattr(module, REPORT_FUNCTION, None)
    if report is None:
        return None
    out = report(config, folder, records)  # the single call site of the report
    return Path(out) if out is not None else None


def elo_table(records: Union[Sequence[GameRecord], GameTallies]) -> Optional[str]:
    """The Elo table as text (``arena.ratings.rate_all`` formatted by
    ``arena.report.format_standings``) of a list of records or of their tallies
    (:func:`arena.tallies.tally_games`: the same table), or None when those do not
    exist."""
    module = _report_module()
    if module is None or not hasattr(module, "format_standings"):
        return None
    from arena import ratings

    if not records or not hasattr(ratings, "rate_all"):
        return None
    text: str = module.format_standings(ratings.rate_all(records), records)
    return text


__all__ = ["StopFlag", "CONFIG_FILE", "GAMES_CSV", "GAMES_FILE", "INTERRUPTED_STATUS", "LOG_FILE",
           "REJECTED_FILE", "STANDINGS_FILE", "Comparison", "Progress", "ResultsMismatch",
           "TournamentResult", "WorkerFailure", "compare_configs", "elo_table",
           "finished_records", "format_standings", "lock_results", "open_results",
           "prepare_results", "read_repaired_games", "repair_games", "run_tournament",
           "write_report"]
