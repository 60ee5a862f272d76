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

import contextlib
import dataclasses
import json
import random
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, TextIO

from arena.bot import BotSpec
from arena.clock import TimeControl
from arena.errors import ArenaError, BotError, ConfigError
from arena.executors import FuturesExecutor, GameExecutor
from arena.jobs import GameJob
from arena.lock import FolderLock
from arena.options import OptionError, check_options, describe_option, value_problem
from arena.preflight import bot_label, preflight_all
from arena.progress import Progress
from arena.protocol import SEED_MAX, OptionDecl
from arena.records import GameRecord, append_record, atomic_write
from arena.rules import Position
from arena.schedule import Slot, derive_seed, random_opening
from arena.tournament import (CONFIG_FILE, GAMES_FILE, INTERRUPTED_STATUS, REJECTED_FILE,
                              StopFlag, read_repaired_games)
from arena.tuning.spsa import Param, Spsa, Step
from arena.variants import Variant

__all__ = ["PAIRS_FILE", "TRAJECTORY_FILE", "TUNE_FILE", "PairResult", "TuneOutcome",
           "TuneProgress", "TuneRun", "check_params", "prepare_folder", "read_pairs",
           "run_tune", "tune_game_id"]

#: in ``tune --out DIR``: the settings of the run
TUNE_FILE = "tune.json"
#: one line per counted pair, in order
PAIRS_FILE = "pairs.jsonl"
#: one line per finished iteration (and one for the start): derived from the pairs
TRAJECTORY_FILE = "trajectory.jsonl"
#: the file of ``arena sprt --out`` (a folder holds one kind of run)
_SPRT_FILE = "sprt.json"


@dataclass(frozen=True)
class TuneRun:
    """What decides a tuning run's games: the ``bot`` (with its fixed options), the
    ``spsa`` schedule, the variant and time control, the fixed ``opponent`` (None: the two
    perturbed settings play each other), ``opening_turns`` random turns shared by a pair's
    games, and the sandbox (``isolation``, None: the best available; not a setting)."""

    bot: BotSpec
    spsa: Spsa
    variant: Variant
    time_control: TimeControl
    opponent: Optional[BotSpec] = None
    opening_turns: int = 4
    isolation: Any = None

    @property
    def games_per_pair(self) -> int:
        """2 (``+`` against ``-``) or 4 (each against the opponent, both colours)."""
        return 2 if self.opponent is None else 4

    @property
    def games(self) -> int:
        """Every game of the run."""
        return self.spsa.total_pairs * self.games_per_pair

    def settings(self, seed: int) -> dict[str, Any]:
        """Everything that decides the games and the updates, as stored in ``tune.json``
        (JSON values).  ``workers`` and the isolation level are not in it."""
        def bot(spec: BotSpec) -> dict[str, Any]:
            return {"name": spec.name, "path": spec.path, "options": dict(spec.options)}

        tc = self.time_control
        settings: dict[str, Any] = {"bot": bot(self.bot), **self.spsa.settings(),
                                    "opponent": None if self.opponent is None
                                    else bot(self.opponent),
                                    "variant": {"name": self.variant.name,
                                                **self.variant.to_params()}}
        if tc.movetime_ms is not None and tc == TimeControl(movetime_ms=tc.movetime_ms):
            settings["movetime"] = tc.movetime_ms
        else:
            settings["time_control"] = tc.to_dict()
        settings["opening_turns"] = self.opening_turns
        settings["seed"] = seed
        loaded: dict[str, Any] = json.loads(json.dumps(settings))
        return loaded

    def describe(self, seed: int) -> str:
        """The header line."""
        s = self.spsa
        against = (f"each against {self.opponent.name}" if self.opponent is not None
                   else "theta+c*flip against theta-c*flip")
        return (f"SPSA {self.bot.name}: {s.iterations} iteration"
                f"{'s' if s.iterations != 1 else ''} of {s.pairs} pair"
                f"{'s' if s.pairs != 1 else ''} ({self.games} games), {against}; "
                f"{self.variant.name}, {self.time_control.describe()}, {self.opening_turns} "
                f"opening turns, seed {seed}; A {s.big_a}, alpha {s.alpha:g}, "
                f"gamma {s.gamma:g}")

    def side(self, values: Sequence[int], sign: str) -> BotSpec:
        """The bot with the fixed options and the tuned ``values``, named ``<bot>+`` or
        ``<bot>-``."""
        options = dict(self.bot.options)
        options.update({p.name: str(v) for p, v in zip(self.spsa.params, values)})
        return dataclasses.replace(self.bot, name=f"{self.bot.name}{sign}", options=options)

    def pair_games(self, step: Step, pair: int, seed: int) -> list[tuple[str, BotSpec, BotSpec]]:
        """``(game id, white, black)`` of pair ``pair`` of ``step``'s iteration."""
        plus, minus = self.side(step.plus_values, "+"), self.side(step.minus_values, "-")
        tag = tune_game_id(seed, step.iteration, pair, "")
        if self.opponent is None:
            return [(tag + "a", plus, minus), (tag + "b", minus, plus)]
        o = self.opponent
        return [(tag + "a", plus, o), (tag + "b", o, plus), (tag + "c", minus, o),
                (tag + "d", o, minus)]

    def opening(self, iteration: int, pair: int, seed: int) -> tuple[str, ...]:
        """The opening of a pair's games."""
        return random_opening(self.variant, self.opening_turns,
                              derive_seed(seed, "opening", iteration, pair))


def tune_game_id(seed: int, iteration: int, pair: int, letter: str) -> str:
    """``tune-<seed>-<iteration>-<pair><letter>``."""
    return f"tune-{seed}-{iteration}-{pair}{letter}"


# --------------------------------------------------------------------------------------
# Parameters against the bot's declarations
# --------------------------------------------------------------------------------------


def check_params(params: Sequence[Param], declared: Sequence[OptionDecl], *, bot: str,
                 fixed: Mapping[str, str] = {}) -> tuple[Param, ...]:
    """The parameters, named as the bot declares them, once each is checked against its
    declaration ``declared`` (the handshake's ``option`` lines).

    :raises OptionError: an option the bot does not declare (with the nearest name), one that
        is not a ``spin``, a ``MIN`` or ``MAX`` outside its declared range, or a tuned
        option also given a fixed value (``fixed``).
    """
    by_lower = {d.name.lower(): d for d in declared}
    fixed_lower = {k.lower() for k in fixed}
    out = []
    for p in params:
        decl = by_lower.get(p.name.lower())
        if decl is None:
            check_options({p.name: ""}, declared, bot=bot)  # not declared: did you mean...
            raise OptionError(f"{bot} declares no such option", p.name, bot)  # (not reached)
        if decl.type != "spin":
            raise OptionError(f"only spin options can be tuned; {bot} declares it "
                              f"{describe_option(decl)}", p.name, bot)
        if p.name.lower() in fixed_lower:
            raise OptionError(f"tuned and given a fixed value for {bot}: give it one or the "
                              f"other", p.name, bot)
        for what, value in (("MIN", p.min), ("MAX", p.max)):
            if value_problem(decl, str(value)) is not None:
                raise OptionError(f"{what} {value} is out of range for {bot} "
                                  f"({describe_option(decl)})", p.name, bot)
        out.append(dataclasses.replace(p, name=decl.name))
    return tuple(out)


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
# The folder
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairResult:
    """One counted pair: its iteration and number, the values each side played, the
    ``+`` side's W-D-L (and the ``-`` side's, against a fixed opponent), and the result
    (``+``'s wins - losses, less ``-``'s against a fixed opponent)."""

    iteration: int
    pair: int
    games: tuple[str, ...]
    plus: dict[str, int]
    minus: dict[str, int]
    plus_wdl: tuple[int, int, int]
    minus_wdl: Optional[tuple[int, int, int]]
    result: int

    def to_json(self) -> str:
        data: dict[str, Any] = {"iteration": self.iteration, "pair": self.pair,
                                "games": list(self.games), "plus": self.plus,
                                "minus": self.minus, "plus_wdl": list(self.plus_wdl)}
        if self.minus_wdl is not None:
            data["minus_wdl"] = list(self.minus_wdl)
        data["result"] = self.result
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, line: str) -> PairResult:
        """:raises ValueError: not a pair line."""
        try:
            d = json.loads(line)
            minus_wdl = d.get("minus_wdl")
            pr = cls(int(d["iteration"]), int(d["pair"]), tuple(map(str, d["games"])),
                     {str(k): int(v) for k, v in d["plus"].items()},
                     {str(k): int(v) for k, v in d["minus"].items()},
                     _wdl(d["plus_wdl"]), None if minus_wdl is None else _wdl(minus_wdl),
                     int(d["result"]))
        except (TypeError, KeyError, AttributeError, ValueError) as e:
            raise ValueError(f"not a pair line ({type(e).__name__}: {e})") from None
        return pr


def _wdl(value: Any) -> tuple[int, int, int]:
    w, d, l = (int(x) for x in value)
    return w, d, l


def _score_wdl(records: Sequence[tuple[GameRecord, str]]) -> tuple[int, int, int]:
    """W-D-L of the side that played ``colour`` in each of ``records``."""
    scores = [r.score(colour) for r, colour in records]
    return scores.count(1.0), scores.count(0.5), scores.count(0.0)


def pair_result(run: TuneRun, step: Step, pair: int, records: Sequence[GameRecord]) -> PairResult:
    """The pair line of ``records`` (the pair's games, in the order of
    :meth:`TuneRun.pair_games`)."""
    names = [p.name for p in run.spsa.params]
    plus = _score_wdl([(records[0], "white"), (records[1], "black")])
    minus = None
    if run.opponent is None:
        result = plus[0] - plus[2]
    else:
        minus = _score_wdl([(records[2], "white"), (records[3], "black")])
        result = (plus[0] - plus[2]) - (minus[0] - minus[2])
    return PairResult(step.iteration, pair, tuple(r.game_id for r in records),
                      dict(zip(names, step.plus_values)), dict(zip(names, step.minus_values)),
                      plus, minus, result)


def read_pairs(path: Path) -> tuple[list[PairResult], int]:
    """The pair lines of ``path`` (none if it does not exist) up to the first that is not
    one, and how many lines follow it (a line torn by a crash: the caller rewrites the
    file without them)."""
    if not path.exists():
        return [], 0
    lines = path.read_bytes().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out: list[PairResult] = []
    for n, line in enumerate(lines):
        try:
            out.append(PairResult.from_json(line.decode("utf-8")))
        except (ValueError, UnicodeDecodeError):
            return out, len(lines) - n
    return out, 0


def _append_line(path: Path, text: str) -> None:
    """Append one line in one write and fsync it (as :func:`arena.records.append_record`)."""
    import os

    data = (text + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def prepare_folder(folder: Path, shown: str, run: TuneRun, seed: Optional[int], restart: bool,
                   warn: Any) -> tuple[int, list[PairResult], dict[str, GameRecord]]:
    """For ``tune --out``, holding the folder's lock: the seed, the pairs counted so far
    and the games saved (by id), after checking that ``tune.json`` (written here for a new
    run) holds the same settings.  Without a ``seed`` a resumed run takes the stored one;
    ``restart`` discards an earlier run's files.  ``warn`` gets a line about repaired files.

    :raises ConfigError: the folder holds another run (naming the changed settings), a
        tournament's or an SPRT's games, an unreadable ``tune.json``, or pairs out of order.
    """
    if (folder / CONFIG_FILE).is_file() or (folder / _SPRT_FILE).is_file():
        kind = "a tournament's results" if (folder / CONFIG_FILE).is_file() else "an SPRT run"
        raise ConfigError(f"{shown} holds {kind}: choose another --out")
    stored_path, games, pairs_path = folder / TUNE_FILE, folder / GAMES_FILE, folder / PAIRS_FILE
    trajectory = folder / TRAJECTORY_FILE
    if restart:
        for path in (games, folder / REJECTED_FILE, pairs_path, trajectory, stored_path):
            path.unlink(missing_ok=True)
    stored: Optional[dict[str, Any]] = None
    if stored_path.exists():
        try:
            data = json.loads(stored_path.read_text(encoding="utf-8"))
            stored = data["settings"] if isinstance(data, dict) else None
        except (OSError, ValueError, KeyError):
            stored = None
        if not isinstance(stored, dict) or not isinstance(stored.get("seed"), int):
            raise ConfigError(f"{stored_path} is unreadable; use --restart to start over")
    elif (games.exists() and games.stat().st_size) or pairs_path.exists():
        raise ConfigError(f"{shown} holds games of no 'arena tune' run (no {TUNE_FILE}); use "
                          f"--restart to discard them, or another --out")
    if seed is None:
        seed = (stored["seed"] if stored is not None
                else random.SystemRandom().randrange(SEED_MAX + 1))
    settings = run.settings(seed)
    if stored is None:
        text = json.dumps({"settings": settings, "created": datetime.now(timezone.utc)
                           .isoformat(timespec="seconds")}, indent=2) + "\n"
        atomic_write(stored_path, text.encode("utf-8"))
        return seed, [], {}
    changed = [k for k in sorted(set(stored) | set(settings)) if stored.get(k) != settings.get(k)]
    if changed:
        raise ConfigError(f"{shown} holds a tuning run with other settings (changed: "
                          f"{', '.join(changed)}); use --restart to discard it, or another "
                          f"--out")
    pairs, torn = read_pairs(pairs_path)
    if torn:
        atomic_write(pairs_path, "".join(p.to_json() + "\n" for p in pairs).encode("utf-8"))
        warn(f"warning: {pairs_path}: removed {torn} unreadable line{'s' if torn > 1 else ''} "
             f"at its end (a crash's torn write); their pairs are counted again")
    moved, kept = read_repaired_games(folder)
    if moved:
        warn(f"warning: {games}: moved {moved} unreadable line{'s' if moved > 1 else ''} to "
             f"{folder / REJECTED_FILE}; any game they held is played again")
    done: dict[str, GameRecord] = {}
    for rec in kept:
        done.setdefault(rec.game_id, rec)
    return seed, pairs, done


def check_pairs(run: TuneRun, seed: int, pairs: Sequence[PairResult],
                shown: str) -> list[tuple[float, ...]]:
    """The trajectory of the stored ``pairs`` (``theta`` at the start and after each
    complete iteration), once each pair is checked to be the next one, with the values its
    iteration's plan gives.

    :raises ConfigError: a pair out of order, or played with other values (the file is not
        this run's).
    """
    spsa = run.spsa
    theta = spsa.start()
    thetas = [theta]
    step: Optional[Step] = None
    total = 0
    for n, pr in enumerate(pairs):
        iteration, pair = divmod(n, spsa.pairs)
        iteration, pair = iteration + 1, pair + 1
        if pair == 1:
            step = spsa.plan(theta, iteration, seed) if iteration <= spsa.iterations else None
            total = 0
        names = [p.name for p in spsa.params]
        if (step is None or (pr.iteration, pr.pair) != (iteration, pair)
                or pr.plus != dict(zip(names, step.plus_values))
                or pr.minus != dict(zip(names, step.minus_values))):
            raise ConfigError(f"{shown}/{PAIRS_FILE}: line {n + 1} is not pair {pair} of "
                              f"iteration {iteration} of this run; use --restart to start over")
        total += pr.result
        if pair == spsa.pairs:
            assert step is not None
            theta = spsa.update(theta, step, total)
            thetas.append(theta)
    return thetas


def trajectory_lines(run: TuneRun, seed: int, pairs: Sequence[PairResult]) -> list[str]:
    """``trajectory.jsonl``'s lines for the complete iterations of ``pairs``: the start,
    then per iteration ``theta`` after it, its ``c_k``, ``R_k = a_k / c_k^2``, flips and
    summed result, and the games played so far."""
    spsa = run.spsa
    names = [p.name for p in spsa.params]
    thetas = check_pairs(run, seed, pairs, "")
    lines = [json.dumps({"iteration": 0, "games": 0, "theta": dict(zip(names, thetas[0]))},
                        separators=(",", ":"))]
    for i in range(1, len(thetas)):
        step = spsa.plan(thetas[i - 1], i, seed)
        result = sum(p.result for p in pairs[(i - 1) * spsa.pairs:i * spsa.pairs])
        lines.append(trajectory_line(run, step, thetas[i], result))
    return lines


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
        eta = ""
        if rate > 0:
            s = int(left / rate + 0.5)
            eta = f", ETA {s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
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
    """A game's ``on_move`` that abandons it once the run is stopped."""

    def __init__(self, *events: threading.Event) -> None:
        self.events = events

    def __call__(self, position: Position, info: Any) -> None:
        if any(e.is_set() for e in self.events):
            raise _Abandoned


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
                jobs.append((pair, g, GameJob(slot, white, black, run.time_control,
                                              f"tune-{seed}", run.isolation, on_move=check)))
        pending = list(jobs)
        running: dict[Future[GameRecord], tuple[int, int, GameJob]] = {}
        next_pair = start + 1
        try:
            while True:
                while pending and not stop.is_set() and len(running) < games.capacity():
                    job = pending.pop(0)
                    running[games.submit(job[2])] = job
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
                        broken = games.broken(e)
                        raise ArenaError(f"{broken or f'game {job.slot.game_id} failed in the referee: {e!r}'}"
                                         f"; the pairs so far are saved in {self.folder}: run "
                                         f"again to resume") from None
                    append_record(self.games_path, rec)
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
        _append_line(self.trajectory_path, line)
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
            _append_line(self.pairs_path, pr.to_json())
            self.pairs.append(pr)
            next_pair += 1
        return next_pair

    @staticmethod
    def _same_players(rec: GameRecord, white: BotSpec, black: BotSpec) -> bool:
        """Whether a saved game was played by these two settings (a game of this run
        always is; one that is not is played again)."""
        return all(info.name == spec.name and info.options.items() >= spec.options.items()
                   for info, spec in ((rec.white, white), (rec.black, black)))


def trajectory_line(run: TuneRun, step: Step, theta: Sequence[float], result: int) -> str:
    """The ``trajectory.jsonl`` line of ``step``'s iteration: ``theta`` after it, the
    summed ``result``, each parameter's ``c_k``, ``R_k = a_k / c_k^2`` and flip, and the
    games of the run so far."""
    names = [p.name for p in run.spsa.params]
    return json.dumps({
        "iteration": step.iteration,
        "games": step.iteration * run.spsa.pairs * run.games_per_pair, "result": result,
        "theta": dict(zip(names, theta)), "c": dict(zip(names, step.c)),
        "R": {n: a / c ** 2 for n, a, c in zip(names, step.a, step.c)},
        "flip": dict(zip(names, step.flips))}, separators=(",", ":"))
