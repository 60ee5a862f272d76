"""Running ``arena tune``: SPSA iterations played on the executor of tournaments, kept in an
append-only ``--out`` folder that a rerun resumes exactly.

:func:`run_tune` takes a :class:`TuneRun` (the bot, the :class:`~arena.tuning.spsa.Spsa`
schedule, the variant, the time control, the optional fixed opponent, the openings) and

1. starts the bot (and the opponent) once (:func:`arena.preflight.preflight_all`) and checks
   every tuned parameter against the options the bot declares (:func:`check_params`: a
   ``spin``, its ``MIN..MAX`` inside the declared range), before anything is written;
2. takes the folder for itself (:class:`~arena.lock.FolderLock`) and checks it
   (:func:`prepare_folder`): a new folder gets ``tune.json`` (the settings); an existing one
   must hold the same settings (else a :class:`~arena.errors.ConfigError` naming the changed
   keys, unless ``restart``), and its stored pairs are read back;
3. plays the iterations still missing, each one's games at once (``workers`` at a time, on
   threads, through :class:`~arena.executors.FuturesExecutor` and
   :func:`arena.jobs.play_job` as tournaments play theirs), and for each:

   * every game is appended to ``games.jsonl`` as it finishes;
   * every pair, once its games are in, is appended to ``pairs.jsonl`` in pair order
     (iteration, pair, the values both sides played, their W-D-L, the result): **a pair
     counts once its line is there**;
   * once the iteration's pairs are there, ``theta`` is updated and a line appended to
     ``trajectory.jsonl`` (``theta``, ``c_k``, ``R_k``, flips, games so far).

The files are the run.  ``trajectory.jsonl`` is derived: on every start it is recomputed
from ``pairs.jsonl`` (:meth:`Spsa.trajectory`, a pure function of the settings and the
results) and rewritten if it differs, so a run killed at any point (SIGKILL included) loses
at most the games in flight, and never repeats nor skips a pair; games saved without their
pair line are reused, not played again.  SIGINT or SIGTERM stops a run at once (the games in
flight abandoned within a move) with status 130.

Pair ``p`` of iteration ``i`` has the games ``tune-<seed>-<i>-<p>a`` (``+`` has white) and
``...b`` (``-`` has white); against a fixed opponent, ``a``/``b`` are ``+`` with white/black
against it and ``c``/``d`` the same for ``-``.  The games of a pair share one opening
(``opening_turns`` random turns), each game its own seed, all derived from the run's seed.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence, TextIO

from arena.bot import BotSpec
from arena.errors import ArenaError, BotError, ConfigError
from arena.executors import FuturesExecutor, GameExecutor
from arena.jobs import GameJob
from arena.live import LIVE, PlyWriter, end_live, game_header, start_live
from arena.lock import FolderLock
from arena.preflight import bot_label, preflight_all
from arena.progress import Progress, clock_text
from arena.records import GameRecord, append_record, atomic_write
from arena.rules import Position
from arena.schedule import Slot, derive_seed
from arena.tournament import GAMES_FILE, INTERRUPTED_STATUS, StopFlag
from arena.tuning.folder import (PAIRS_FILE, TRAJECTORY_FILE, PairResult, append_line,
                                 check_pairs, pair_result, prepare_folder, trajectory_line,
                                 trajectory_lines)
from arena.tuning.settings import TuneRun, check_params
from arena.tuning.spsa import Step

__all__ = ["TuneOutcome", "TuneProgress", "format_theta", "preflight_run", "run_tune"]


def preflight_run(run: TuneRun) -> TuneRun:
    """Start the bot (and the opponent) once, check the fixed options and the tuned
    parameters against the handshake: ``run`` with its parameters named as the bot
    declares them.

    :raises OptionError: a bad option or parameter (exit 2).
    :raises ConfigError: a bot that cannot be built or started.
    """
    specs = [run.bot] + ([run.opponent] if run.opponent is not None else [])
    got = preflight_all(specs, isolation=run.isolation,
                        handshake_s=run.time_control.handshake_ms / 1000.0)
    for spec, result in zip(specs, got):
        if isinstance(result, BotError):
            raise ConfigError(f"{bot_label(spec)}: cannot be used: {result}") from None
        if isinstance(result, ArenaError):
            raise result
    handshake = got[0]
    assert not isinstance(handshake, ArenaError)
    params = check_params(run.spsa.params, handshake.options, bot=bot_label(run.bot),
                          fixed=run.bot.options)
    return dataclasses.replace(run, spsa=dataclasses.replace(run.spsa, params=params))


# --------------------------------------------------------------------------------------
# Progress
# --------------------------------------------------------------------------------------


def format_theta(names: Sequence[str], theta: Sequence[float]) -> str:
    """``MenWeight 95.31  TwoWeight 12.08``."""
    return "  ".join(f"{n} {t:.2f}" for n, t in zip(names, theta))


class TuneProgress(Progress):
    """The live line of a tuning run: iterations and games done, rate, current values."""

    def __init__(self, run: TuneRun, stream: TextIO, *, live: bool, iterations_done: int,
                 theta: Sequence[float]) -> None:
        done = iterations_done * run.spsa.pairs * run.games_per_pair
        super().__init__(run.games, done, stream, live=live)
        self.run = run
        self.iterations_done = iterations_done
        self.theta = tuple(theta)

    def status(self) -> str:
        """``[iteration 12/200, games 24/400] 30.0 games/min, ETA 3:10  MenWeight 95.31``."""
        elapsed = time.monotonic() - self.t0
        played = self.done - self.started_with
        rate = played / elapsed if elapsed > 0 and played else 0.0
        left = self.total - self.done
        eta = f", ETA {clock_text(left / rate)}" if rate > 0 else ""
        text = (f"[iteration {self.iterations_done}/{self.run.spsa.iterations}, games "
                f"{self.done}/{self.total}] {rate * 60:.1f} games/min{eta}  "
                f"{format_theta([p.name for p in self.run.spsa.params], self.theta)}")
        note = self.load.note()
        return f"{text}  [{note}]" if note else text

    def add_game(self, record: GameRecord) -> None:
        """Count a finished game (already saved) on the live line."""
        with self.lock:
            self.done += 1
            self.load.add(record)
            if self.live:
                self.redraw()

    def set_theta(self, iterations_done: int, theta: Sequence[float]) -> None:
        """After an iteration: its number and the new values."""
        with self.lock:
            self.iterations_done = iterations_done
            self.theta = tuple(theta)
            if self.live:
                self.redraw()


# --------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------


@dataclass
class TuneOutcome:
    """What a run did: its seed, the iterations counted, the final ``theta``, whether it
    was interrupted, the exit status (0 done, 130 interrupted) and the report's files."""

    seed: int
    iterations: int
    theta: tuple[float, ...]
    interrupted: bool = False
    status: int = 0
    report: list[Path] = field(default_factory=list)


class _Abandoned(Exception):
    """Raised from a game's ``on_move`` to stop it (the referee's ``finally`` stops the bots)."""


class _Check:
    """A game's ``on_move`` that abandons it once the run is stopped, and appends each ply
    to the game's file for ``arena watch`` (``writer``: :class:`arena.live.PlyWriter`)."""

    def __init__(self, *events: threading.Event, writer: Optional[PlyWriter] = None) -> None:
        self.events = events
        self.writer = writer

    def __call__(self, position: Position, info: Any) -> None:
        if any(e.is_set() for e in self.events):
            raise _Abandoned
        if self.writer is not None:
            self.writer(position, info)


def run_tune(run: TuneRun, folder: Path, *, workers: int = 1, seed: Optional[int] = None,
             shown: str = "", restart: bool = False, out: Optional[TextIO] = None,
             console: Optional[TextIO] = None, live: Optional[bool] = None,
             executor: Optional[GameExecutor] = None, report: bool = True) -> TuneOutcome:
    """Play the iterations of ``run`` not yet in ``folder`` (see the module's docstring).
    Lines go to ``out``, the live line and warnings to ``console`` (default: standard
    output and error; ``live``: redraw one line, by default on a terminal, the iteration
    lines then left out when ``out`` is a terminal too).  ``executor`` replaces the
    threads that play the games (a given one is not closed; its games cannot be abandoned
    within a move).  ``report``: write the plot and the YAML when the run is complete.

    :raises OptionError: a bad option or parameter.
    :raises ConfigError: a folder in use (:class:`~arena.lock.FolderInUse`) or holding
        another run; a bot that cannot start.
    :raises ArenaError: a game failed in the referee, or the executor broke (finished
        games and pairs are saved: run again to resume).
    """
    out = sys.stdout if out is None else out
    console = sys.stderr if console is None else console
    if live is None:
        live = console.isatty()
    shown = shown or str(folder)
    run = preflight_run(run)  # before the folder is touched
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"cannot create {shown}: {e.strerror}") from None
    with FolderLock(folder, shown=shown):
        def warn(text: str) -> None:
            console.write(text + "\n")
            console.flush()

        seed, pairs, done = prepare_folder(folder, shown, run, seed, restart, warn)
        thetas = check_pairs(run, seed, pairs, shown)
        lines = trajectory_lines(run, seed, pairs[:(len(thetas) - 1) * run.spsa.pairs])
        text = "".join(line + "\n" for line in lines)
        path = folder / TRAJECTORY_FILE
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            atomic_write(path, text.encode("utf-8"))
        outcome = _Runner(run, folder, seed, pairs, thetas, done, workers=workers, out=out,
                          console=console, live=live,
                          iteration_lines=not (live and out.isatty()),
                          executor=executor).play()
    if report and not outcome.interrupted and outcome.iterations == run.spsa.iterations:
        from arena.tuning.report import write_report

        outcome.report = write_report(folder)
        for written in outcome.report:
            out.write(f"wrote {written}\n")
        out.flush()
    return outcome


class _Runner:
    """The loop of :func:`run_tune` once the folder is ours."""

    def __init__(self, run: TuneRun, folder: Path, seed: int, pairs: list[PairResult],
                 thetas: list[tuple[float, ...]], done: dict[str, GameRecord], *,
                 workers: int, out: TextIO, console: TextIO, live: bool,
                 iteration_lines: bool, executor: Optional[GameExecutor]) -> None:
        self.run, self.folder, self.seed = run, folder, seed
        self.pairs, self.thetas, self.done = pairs, thetas, done
        self.workers, self.out, self.iteration_lines = workers, out, iteration_lines
        self.given = executor
        self.names = [p.name for p in run.spsa.params]
        self.progress = TuneProgress(run, console, live=live,
                                     iterations_done=len(thetas) - 1, theta=thetas[-1])
        self.games_path = folder / GAMES_FILE
        self.pairs_path = folder / PAIRS_FILE
        self.trajectory_path = folder / TRAJECTORY_FILE
        # the games in progress, a ply file each (arena watch): the run's own threads only
        self.live: Optional[Path] = None
        self.live_files: dict[str, str] = {}  # game id -> its ply file's name
        self.live_count = 0

    def say(self, text: str) -> None:
        self.progress.clear()
        self.out.write(text + "\n")
        self.out.flush()
        self.progress.redraw()

    def play(self) -> TuneOutcome:
        run, spsa = self.run, self.run.spsa
        self.say(run.describe(self.seed))
        first_c, first_a = spsa.gains(0)
        for p, c, a in zip(spsa.params, first_c, first_a):
            self.say(f"  {p.name}: start {p.start:g} in {p.min}..{p.max}, c {c:.4g} -> "
                     f"{p.c_end:g}, R {a / c ** 2:.4g} -> {p.r_end:g}")
        from arena.sandbox import describe_charge

        warning = describe_charge(run.time_control.clock, run.time_control.wall_factor)[1]
        if warning:
            self.say(f"warning: {warning}")
        counted = len(self.thetas) - 1
        if self.pairs:
            self.say(f"resuming: {len(self.pairs)} pairs ({counted} iterations) already in "
                     f"{self.pairs_path} are counted, not played again")
        outcome = TuneOutcome(self.seed, counted, self.thetas[-1])
        abandon = threading.Event()
        own = self.given is None
        games: GameExecutor = self.given if self.given is not None else FuturesExecutor(
            ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="tune-game"),
            games=self.workers)
        clean = False
        with StopFlag() as flag:
            stop = flag.event
            check = _Check(stop, abandon) if own else None
            if own and start_live(self.folder / LIVE):
                self.live = self.folder / LIVE
            try:
                for iteration in range(counted + 1, spsa.iterations + 1):
                    if not self._iteration(iteration, games, stop, check):
                        break
                    outcome.iterations = iteration
                    outcome.theta = self.thetas[-1]
                clean = not stop.is_set()
            finally:
                abandon.set()
                if own:
                    games.close(cancel=not clean)
                if self.live is not None:
                    end_live(self.live)  # games abandoned in flight: not in progress
                self.progress.close()
            outcome.interrupted = stop.is_set() and outcome.iterations < spsa.iterations
        if outcome.interrupted:
            self.say(f"interrupted after {outcome.iterations} iterations: run the same "
                     f"command again to resume")
            outcome.status = INTERRUPTED_STATUS
        else:
            self.say(f"done: {outcome.iterations} iterations, "
                     f"{outcome.iterations * spsa.pairs * run.games_per_pair} games")
        for p, t in zip(spsa.params, outcome.theta):
            self.say(f"  {p.name} {t:.2f} -> {round(t)} (start {p.start:g})")
        return outcome

    def _iteration(self, iteration: int, games: GameExecutor, stop: threading.Event,
                   check: Optional[_Check]) -> bool:
        """Play one iteration; False when stopped before it was complete."""
        run, spsa, seed = self.run, self.run.spsa, self.seed
        theta = self.thetas[-1]
        step = spsa.plan(theta, iteration, seed)
        start = len(self.pairs) - (iteration - 1) * spsa.pairs  # pairs of it already counted
        jobs: list[tuple[int, int, GameJob]] = []
        finished: dict[tuple[int, int], GameRecord] = {}
        for pair in range(start + 1, spsa.pairs + 1):
            opening = run.opening(iteration, pair, seed)
            for g, (game_id, white, black) in enumerate(run.pair_games(step, pair, seed)):
                saved = self.done.get(game_id)
                if saved is not None and self._same_players(saved, white, black):
                    finished[(pair, g)] = saved
                    continue
                record_pair = pair if run.opponent is None else 2 * pair - 1 + g // 2
                slot = Slot(index=len(jobs), game_id=game_id, variant=run.variant,
                            round=iteration, pair=record_pair, game=g % 2, white=0, black=1,
                            opening=opening, seed=derive_seed(seed, "game", iteration, pair, g))
                on_move = check
                if check is not None and self.live is not None:
                    self.live_count += 1
                    name = self.live_files[game_id] = f"{self.live_count}.jsonl"
                    on_move = _Check(*check.events, writer=PlyWriter(
                        str(self.live / name),
                        game_header(game_id, run.variant, white.name, black.name, opening,
                                    tournament=f"tune-{seed}", round=iteration,
                                    pair=record_pair)))
                jobs.append((pair, g, GameJob(slot, white, black, run.time_control,
                                              f"tune-{seed}", run.isolation, on_move=on_move)))
        pending = list(jobs)
        running: dict[Future[GameRecord], tuple[int, int, GameJob]] = {}
        next_pair = start + 1
        try:
            while True:
                while pending and not stop.is_set() and len(running) < games.capacity():
                    entry = pending.pop(0)
                    running[games.submit(entry[2])] = entry
                next_pair = self._count_pairs(step, next_pair, finished)
                if next_pair > spsa.pairs:
                    break
                if stop.is_set() or not running:
                    return False
                ready, _ = wait(running, timeout=0.25, return_when=FIRST_COMPLETED)
                for future in ready:
                    pair, g, job = running.pop(future)
                    try:
                        rec = future.result()
                    except _Abandoned:
                        continue
                    except Exception as e:
                        if stop.is_set():
                            continue
                        why = (games.broken(e)
                               or f"game {job.slot.game_id} failed in the referee: {e!r}")
                        raise ArenaError(f"{why}; the pairs so far are saved in {self.folder}: "
                                         f"run again to resume") from None
                    append_record(self.games_path, rec)
                    if self.live is not None and rec.game_id in self.live_files:
                        end_live(self.live, self.live_files.pop(rec.game_id))  # saved
                    self.done[rec.game_id] = rec
                    finished[(pair, g)] = rec
                    self.progress.add_game(rec)
        finally:
            for future in running:
                future.cancel()
        total = sum(p.result for p in self.pairs[(iteration - 1) * spsa.pairs:])
        theta = spsa.update(theta, step, total)
        self.thetas.append(theta)
        line = trajectory_line(run, step, theta, total)
        append_line(self.trajectory_path, line)
        self.progress.set_theta(iteration, theta)
        if self.iteration_lines:
            mine = self.pairs[(iteration - 1) * spsa.pairs:]
            w, d, l = (sum(p.plus_wdl[i] for p in mine) for i in range(3))
            games_text = f"W-D-L {w}-{d}-{l}"
            if run.opponent is not None:
                mw, md, ml = (sum((p.minus_wdl or (0, 0, 0))[i] for p in mine) for i in range(3))
                games_text = f"+ {w}-{d}-{l}, - {mw}-{md}-{ml}"
            self.say(f"iteration {iteration:>4}: {total:+d} ({games_text})  "
                     f"{format_theta(self.names, theta)}")
        return True

    def _count_pairs(self, step: Step, next_pair: int,
                     finished: dict[tuple[int, int], GameRecord]) -> int:
        """Append the line of every pair from ``next_pair`` on whose games are all in, in
        order; the next pair still waiting."""
        n = self.run.games_per_pair
        while next_pair <= self.run.spsa.pairs and all(
                (next_pair, g) in finished for g in range(n)):
            records = [finished.pop((next_pair, g)) for g in range(n)]
            pr = pair_result(self.run, step, next_pair, records)
            append_line(self.pairs_path, pr.to_json())
            self.pairs.append(pr)
            next_pair += 1
        return next_pair

    @staticmethod
    def _same_players(rec: GameRecord, white: BotSpec, black: BotSpec) -> bool:
        """Whether a saved game was played by these two settings (a game of this run
        always is; one that is not is played again)."""
        return all(info.name == spec.name and info.options.items() >= spec.options.items()
                   for info, spec in ((rec.white, white), (rec.black, black)))
