"""Running ``arena sprt``: colour-swapped pairs of A against B until a sequential test
decides, with its resumable ``--out`` folder, its progress line and its final summary.

:func:`run_sprt` takes a :class:`SprtRun` (everything that decides the games and the test)
and

1. with a folder, takes it for itself (:class:`~arena.lock.FolderLock`, held until the run
   ends) and checks it (:func:`prepare_folder`): a new folder gets ``sprt.json`` (the
   settings, :meth:`SprtRun.settings`); an existing one must hold the same settings (else a
   :class:`~arena.errors.ConfigError` naming the changed keys, unless ``restart``), and the
   games already in its ``games.jsonl`` are counted, not played again;
2. plays pairs ``1, 2, ...`` (:func:`play_pairs`, ``workers`` games at once on threads, each
   game appended to ``games.jsonl`` as it finishes) and feeds them to the
   :class:`~arena.ratings.SprtTest` in pair order, so that the verdict never depends on
   the number of workers;
3. shows a progress line (:class:`SprtProgress`, redrawn in place on a terminal) or, off a
   terminal, one line per pair (``pair   12: 1.5/2  pairs ...  LLR ...``), then the verdict
   and the summary (:func:`format_summary`).

Pair ``k``'s games have the ids ``sprt-<seed>-<k>a`` (A has white) and ``sprt-<seed>-<k>b``,
one variant (with several, pairs rotate over them: :meth:`SprtRun.variant_of`; the test
pools every pair, and the summary shows each variant's figures too), one opening (from the
book, or ``opening_turns`` random turns) and seeds derived from the run's seed, so a rerun
of the same command plays the same games and skips those already saved.  SIGINT (Ctrl-C) or SIGTERM stops the run: the games in flight are abandoned within a
move (their bots stopped, nothing saved for them), the summary so far is printed and the
status is :data:`~arena.tournament.INTERRUPTED_STATUS`; the next run plays them again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import random
import sys
import threading
import time
from collections.abc import Generator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional, TextIO

from arena.bot import BotSpec
from arena.clock import TimeControl
from arena.errors import ArenaError, BotError, ConfigError
from arena.jobs import KeptBots
from arena.live import LIVE, PlyWriter, end_live, game_header, start_live
from arena.lock import FolderLock
from arena.openings import Book, BookOrder, book_opening
from arena.preflight import bot_label, preflight_all
from arena.progress import Progress
from arena.protocol import SEED_MAX
from arena.ratings import SprtModel, SprtSummary, SprtTest, pentanomial_estimate
from arena.pgn import add_game, catch_up, open_pgn
from arena.records import GameRecord, append_record, atomic_write
from arena.rules import Position
from arena.schedule import derive_seed, random_opening
from arena.runstate import Finished, load_finished, read_at
from arena.tournament import CONFIG_FILE, GAMES_FILE, INTERRUPTED_STATUS, REJECTED_FILE, StopFlag
from arena.variants import Variant

log = logging.getLogger("arena.sprt")

__all__ = ["SPRT_FILE", "SprtOutcome", "SprtProgress", "SprtRun", "format_summary",
           "play_pairs", "prepare_folder", "run_sprt", "sprt_game_id", "verdict_text"]

#: in ``sprt --out DIR``: the settings of the run whose games ``DIR/games.jsonl`` holds
SPRT_FILE = "sprt.json"


@dataclass(frozen=True)
class SprtRun:
    """What decides an SPRT run's games and statistics.

    ``elo0``/``elo1`` are read in ``model``.  ``variants`` (two or more) are the variants
    pairs rotate over, ``variant`` the first of them; empty: ``variant`` alone.  Openings:
    ``book`` (its openings, shared by
    both games of a pair, taken in ``book_order``; ``book_name`` is how the header names the
    file) or, without a book, ``opening_turns`` random legal turns.  ``isolation`` is how bots
    are sandboxed (None: the best available).
    """

    a: BotSpec
    b: BotSpec
    variant: Variant
    time_control: TimeControl
    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    model: SprtModel = "logistic"
    opening_turns: int = 4
    book: Optional[Book] = None
    book_order: BookOrder = "sequential"
    book_name: str = ""
    isolation: Any = None
    #: ``per-game`` (fresh bot processes) or ``per-pairing`` (each bot's process kept for
    #: the next game; not part of the settings a resume compares)
    restart: str = "per-game"
    #: the variants pairs rotate over (pair ``k`` plays ``variants[(k - 1) % n]``); empty:
    #: ``variant`` alone
    variants: tuple[Variant, ...] = ()
    #: ending games early (:mod:`arena.adjudication`); off by default
    adjudicate: Any = None

    @property
    def rotation(self) -> tuple[Variant, ...]:
        """The variants the pairs rotate over (``variant`` alone when ``variants`` is empty)."""
        return self.variants or (self.variant,)

    def variant_of(self, pair: int) -> Variant:
        """The variant of pair ``pair`` (from 1): the variants in turn."""
        rotation = self.rotation
        return rotation[(pair - 1) % len(rotation)]

    def new_test(self) -> SprtTest:
        """A fresh test of these hypotheses (:raises ArenaError: bad elo0/elo1/alpha/beta)."""
        return SprtTest(self.elo0, self.elo1, self.alpha, self.beta, model=self.model)

    def settings(self, seed: int) -> dict[str, Any]:
        """Everything that decides the games and the statistics, as stored in ``sprt.json``
        (JSON values, so that a stored copy compares equal).  ``max_pairs``, ``workers`` and
        the isolation level are not in it: a run may be resumed with others.  Keys a run of
        an earlier version did not have appear only when they differ from what it did (a
        clock, a book, the normalised model), so its folder still resumes."""
        def bot(spec: BotSpec) -> dict[str, Any]:
            d = {"name": spec.name, "path": spec.path, "options": dict(spec.options)}
            if spec.engine:  # no bot.yaml: the command is the engine
                d["command"] = [a.replace(sys.executable, "{python}") for a in spec.command]
            return d

        tc = self.time_control
        settings: dict[str, Any] = {"a": bot(self.a), "b": bot(self.b)}
        rules = [{"name": v.name, **v.to_params()} for v in self.rotation]
        if len(rules) == 1:
            settings["variant"] = rules[0]
        else:  # a run of one variant keeps the form it always had
            settings["variants"] = rules
        if tc.movetime_ms is not None and tc == TimeControl(movetime_ms=tc.movetime_ms):
            settings["movetime"] = tc.movetime_ms
        else:
            settings["time_control"] = tc.to_dict()
        settings.update(elo0=self.elo0, elo1=self.elo1, alpha=self.alpha, beta=self.beta)
        if self.model != "logistic":
            settings["model"] = self.model
        settings["opening_turns"] = 0 if self.book is not None else self.opening_turns
        if self.book is not None:
            text = "\n".join(" ".join(line) for line in self.book)
            settings["book"] = {"sha256": hashlib.sha256(text.encode()).hexdigest(),
                                "openings": len(self.book), "order": self.book_order}
        if self.adjudicate is not None and self.adjudicate.active:
            settings["adjudicate"] = self.adjudicate.to_dict()
        settings["seed"] = seed
        loaded: dict[str, Any] = json.loads(json.dumps(settings))
        return loaded

    def opening(self, pair: int, seed: int) -> tuple[str, ...]:
        """The opening of pair ``pair`` (from 1) of the run with this ``seed``."""
        if self.book is not None:
            return book_opening(self.book, pair - 1, seed=derive_seed(seed, "book"),
                                order=self.book_order)
        return random_opening(self.variant_of(pair), self.opening_turns,
                              derive_seed(seed, "opening", pair))

    def describe(self, seed: int) -> str:
        """The header line: hypotheses, bounds, variant, time control, openings, seed."""
        unit = "nElo" if self.model == "normalized" else "Elo"
        lower, upper = self.new_test().bounds
        names = ", ".join(v.name for v in self.rotation)
        if len(self.rotation) > 1:
            names = f"variants {names} (pairs rotate)"
        text = (f"SPRT {self.a.name} vs {self.b.name}: H0 {unit} <= {self.elo0:g}, H1 {unit} "
                f">= {self.elo1:g}, alpha {self.alpha:g}, beta {self.beta:g}, bounds "
                f"[{lower:.2f}, {upper:.2f}]; {names}, "
                f"{self.time_control.describe()}, seed {seed}")
        if self.book is not None:
            text += (f"; book {self.book_name or 'given'} ({len(self.book)} opening"
                     f"{'s' if len(self.book) != 1 else ''}, {self.book_order} order)")
        return text


def sprt_game_id(tag: str, pair: int, game: int) -> str:
    """``<tag>-<pair>a`` (A has white) or ``<tag>-<pair>b`` (B has white)."""
    return f"{tag}-{pair}{'ab'[game]}"


class _Abandoned(Exception):
    """Raised from a game's ``on_move`` to stop it (the referee's ``finally`` stops the bots)."""


def play_pairs(run: SprtRun, *, seed: int, max_pairs: int, workers: int,
               games_file: Optional[Path], done: Mapping[str, GameRecord],
               stop: threading.Event,
               on_game: Optional[Callable[[GameRecord], None]] = None,
               pgn_file: Optional[Path] = None,
               ) -> Generator[tuple[int, GameRecord, GameRecord], None, None]:
    """Play colour-swapped pairs (``workers`` games at once) and yield ``(pair, A-white game,
    B-white game)`` in pair order.

    Each game is appended to ``games_file`` (if any) as soon as it finishes, and to the PGN
    file ``pgn_file`` (if any, :mod:`arena.pgn`), then passed to ``on_game``.  A game whose
    id is in ``done`` (the games of an earlier run of the same test: records, or the
    outcomes :func:`prepare_folder` keeps of them) is not played again: it stands in its
    place.  Once ``stop`` is set no game
    starts and the games in flight are abandoned at their next move (not saved); the
    generator then ends.  Closing it abandons the games in flight the same way.
    """
    tag = f"sprt-{seed}"
    abandon = threading.Event()
    kept = KeptBots(limit=2 * workers) if run.restart == "per-pairing" else None
    openings: dict[int, tuple[str, ...]] = {}

    def opening_of(k: int) -> tuple[str, ...]:  # computed once for both games of a pair
        if k not in openings:
            openings.clear()
            openings[k] = run.opening(k, seed)
        return openings[k]

    def check(position: Position, info: Any) -> None:
        if abandon.is_set() or stop.is_set():
            raise _Abandoned

    live = None if games_file is None else games_file.parent / LIVE  # (arena watch)

    def play(k: int, game: int, opening: tuple[str, ...]) -> GameRecord:
        from arena.referee import play_game

        a: Any = run.a
        b: Any = run.b
        if kept is not None:
            a, b = (kept.take(tag, spec, run.isolation) for spec in (run.a, run.b))
        white, black = (a, b) if game == 0 else (b, a)
        game_id = sprt_game_id(tag, k, game)
        on_move: Callable[[Position, Any], None] = check
        if live is not None:  # each ply to its file as well
            names = (run.a.name, run.b.name) if game == 0 else (run.b.name, run.a.name)
            writer = PlyWriter(str(live / f"{2 * k + game}.jsonl"), game_header(
                game_id, run.variant_of(k), *names, opening, tournament=tag, round=k, pair=k))

            def on_move(position: Position, info: Any) -> None:
                check(position, info)
                writer(position, info)
        try:
            rec = play_game(white, black, run.variant_of(k), run.time_control, opening=opening,
                            game_id=game_id,
                            seed=derive_seed(seed, "game", k, game), on_move=on_move,
                            isolation=run.isolation, adjudicate=run.adjudicate)
        finally:
            if kept is not None:
                again = not (abandon.is_set() or stop.is_set())
                kept.give_back(tag, run.a, a, keep=again)
                kept.give_back(tag, run.b, b, keep=again)
        rec.tournament, rec.round, rec.pair = tag, k, k
        return rec

    jobs = ((k, g) for k in range(1, max_pairs + 1) for g in (0, 1))
    void: set[int] = set()  # pairs with a game that could not be played fairly
    exhausted = False
    running: dict[Future[GameRecord], tuple[int, int]] = {}
    finished: dict[tuple[int, int], GameRecord] = {}
    next_pair = 1
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sprt-game")
    if live is not None:
        start_live(live)
    try:
        while True:
            while not exhausted and not stop.is_set() and len(running) < workers:
                job = next(jobs, None)
                if job is None:
                    exhausted = True
                    break
                recorded = done.get(sprt_game_id(tag, *job))
                if recorded is not None:
                    finished[job] = recorded
                else:
                    running[pool.submit(play, *job, opening_of(job[0]))] = job
            while (next_pair, 0) in finished and (next_pair, 1) in finished:
                first, second = finished.pop((next_pair, 0)), finished.pop((next_pair, 1))
                if next_pair not in void:
                    yield next_pair, first, second
                next_pair += 1
            if not running:
                if exhausted or stop.is_set():
                    return
                continue
            ready, _ = wait(running, timeout=0.2, return_when=FIRST_COMPLETED)
            for future in ready:
                job = running.pop(future)
                try:
                    rec = future.result()
                except _Abandoned:
                    continue
                if rec.void:  # not a fair result: the pair is not counted (nor saved)
                    log.warning("%s: %s", rec.game_id, rec.void)
                    void.add(job[0])
                    finished[job] = rec
                    continue
                if games_file is not None:
                    append_record(games_file, rec)
                if live is not None:  # saved: no longer in progress
                    end_live(live, f"{2 * job[0] + job[1]}.jsonl")
                add_game(pgn_file, rec)  # if any
                finished[job] = rec
                if on_game is not None:
                    on_game(rec)
    finally:
        abandon.set()
        for future in running:
            future.cancel()
        pool.shutdown(wait=True)
        if kept is not None:
            kept.close_all()
        if live is not None:
            end_live(live)


def prepare_folder(folder: Path, shown: str, run: SprtRun, seed: Optional[int], restart: bool,
                   warn: Callable[[str], None]) -> tuple[int, Finished]:
    """For ``sprt --out``, holding the folder's lock: the seed to use and the games already
    played (by id: their outcomes, :class:`arena.runstate.Finished`; ``games.jsonl`` is read
    one line at a time, its records are not kept), after checking that ``sprt.json`` (written here for a new
    run) holds the same settings.  Without a ``seed`` a resumed run takes the stored one.
    ``restart`` discards the files an earlier run wrote.  ``warn`` gets a line about
    unreadable lines of ``games.jsonl`` moved aside.

    :raises ConfigError: the folder holds another run's games (naming the changed settings),
        a tournament's, or an unreadable ``sprt.json``.
    """
    if (folder / CONFIG_FILE).is_file():
        raise ConfigError(f"{shown} is a tournament's results folder: choose another --out")
    stored_path, games, side = folder / SPRT_FILE, folder / GAMES_FILE, folder / REJECTED_FILE
    if restart:
        for path in (games, side, stored_path):
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
    elif games.exists() and games.stat().st_size:
        raise ConfigError(f"{games} holds games of no 'arena sprt' run (no {SPRT_FILE}); use "
                          f"--restart to discard them, or another --out")
    if seed is None:
        seed = (stored["seed"] if stored is not None
                else random.SystemRandom().randrange(SEED_MAX + 1))
    settings = run.settings(seed)
    if stored is None:
        text = json.dumps({"settings": settings, "created": datetime.now(timezone.utc)
                           .isoformat(timespec="seconds")}, indent=2) + "\n"
        atomic_write(stored_path, text.encode("utf-8"))
        return seed, Finished()
    changed = [k for k in sorted(set(stored) | set(settings)) if stored.get(k) != settings.get(k)]
    if changed:
        raise ConfigError(f"{shown} holds an SPRT run with other settings (changed: "
                          f"{', '.join(changed)}); use --restart to discard its games, or "
                          f"another --out")
    moved, done = load_finished(games, side)
    if moved:
        warn(f"warning: {games}: moved {moved} unreadable line{'s' if moved > 1 else ''} to "
             f"{side}; any game they held is played again")
    return seed, done


class SprtProgress(Progress):
    """The live line of an SPRT run: pairs done, rate, A's W-D-L, Elo, LLR and bounds.

    It is :class:`arena.progress.Progress` (redrawn in place on a terminal) counting games,
    with the test's figures instead of a leader.
    """

    def __init__(self, test: SprtTest, max_pairs: int, stream: TextIO, *, live: bool,
                 done_games: int = 0) -> None:
        super().__init__(2 * max_pairs, done_games, stream, live=live)
        self.test = test
        self.max_pairs = max_pairs

    def status(self) -> str:
        """``[pairs 12/2000] 30.0 games/min  W-D-L 10-4-10  Elo +0.0 ± 35.2  LLR ...``."""
        elapsed = time.monotonic() - self.t0
        played = self.done - self.started_with
        rate = played / elapsed if elapsed > 0 and played else 0.0
        t = self.test
        text = (f"[pairs {t.pairs}/{self.max_pairs}, games {self.done}] {rate * 60:.1f} "
                f"games/min")
        if t.pairs:
            w, d, l = t.wdl
            est = pentanomial_estimate(t.counts)
            lower, upper = t.bounds
            text += (f"  W-D-L {w}-{d}-{l}  Elo {est.elo:+.1f} ± {est.elo95:.1f}  "
                     f"LLR {t.llr:+.2f} [{lower:.2f}, {upper:.2f}]")
        note = self.load.note()
        return f"{text}  [{note}]" if note else text

    def add_game(self, record: GameRecord) -> None:
        """Count a finished game (already saved) on the live line (nothing off a terminal:
        the pair lines say it)."""
        with self.lock:
            self.done += 1
            self.load.add(record)
            if self.live:
                self.redraw()


@dataclass
class SprtOutcome:
    """What a run did: its seed, the summary of the test, whether it was interrupted, and
    the exit status (0 a verdict, 1 ``max_pairs`` ran out first, 130 interrupted)."""

    seed: int
    summary: SprtSummary
    interrupted: bool = False
    status: int = 1
    lines: list[str] = field(default_factory=list)
    #: with several variants, each one's figures (its pairs only; the test pools them)
    per_variant: dict[str, SprtSummary] = field(default_factory=dict)


def run_sprt(run: SprtRun, *, max_pairs: int, workers: int = 1, seed: Optional[int] = None,
             folder: Optional[Path] = None, shown: str = "", restart: bool = False,
             out: Optional[TextIO] = None, console: Optional[TextIO] = None,
             live: Optional[bool] = None, pgn_out: Optional[Path] = None) -> SprtOutcome:
    """Play ``run`` until its test decides or ``max_pairs`` pairs are counted (see the
    module's docstring); lines go to ``out``, the live progress line and warnings to
    ``console`` (default: standard output and standard error; ``live``: redraw one line, by
    default when ``console`` is a terminal; the pair lines are then left out when ``out`` is
    a terminal too).  ``pgn_out``: a PGN file every game is appended to as it ends
    (``--pgn-out``; on a resume, the folder's earlier games it lacks first).

    :raises ConfigError: bad hypotheses, a PGN file that cannot be written, a folder in use
        (:class:`~arena.lock.FolderInUse`)
        or holding another run.
    """
    test = run.new_test()
    out = sys.stdout if out is None else out
    console = sys.stderr if console is None else console
    if live is None:
        live = console.isatty()
    pair_lines = not (live and out.isatty())
    games_file: Optional[Path] = None
    done = Finished()
    open_pgn(pgn_out, key="--pgn-out")  # if any
    with contextlib.ExitStack() as owned:
        if folder is not None:
            shown = shown or str(folder)
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise ConfigError(f"cannot create {shown}: {e.strerror}") from None
            owned.enter_context(FolderLock(folder, shown=shown))  # held until the run ends
            preflight_bots(run)  # a second run was refused at once; sprt.json waits
            warnings = console

            def warn(text: str) -> None:
                warnings.write(text + "\n")
                warnings.flush()

            seed, done = prepare_folder(folder, shown, run, seed, restart, warn)
            games_file = folder / GAMES_FILE
        else:
            preflight_bots(run)
            if seed is None:
                seed = random.SystemRandom().randrange(SEED_MAX + 1)
        return _run(run, test, seed=seed, max_pairs=max_pairs, workers=workers,
                    games_file=games_file, done=done, out=out, console=console, live=live,
                    pair_lines=pair_lines, pgn_file=pgn_out)


def preflight_bots(run: SprtRun) -> None:
    """Build A and B if they have a build step, start each once (once for both when they
    are one bot with two settings) and check their options against the handshake, before
    the first game (:func:`arena.preflight.preflight_all`).

    :raises OptionError: a bad option (exit 2).
    :raises ConfigError: a bot that cannot be built or started: every game would forfeit.
    """
    for spec, got in zip((run.a, run.b), preflight_all(
            (run.a, run.b), isolation=run.isolation,
            handshake_s=run.time_control.handshake_ms / 1000.0)):
        if isinstance(got, BotError):
            raise ConfigError(f"{bot_label(spec)}: cannot be used: {got}") from None
        if isinstance(got, ArenaError):
            raise got


def _run(run: SprtRun, test: SprtTest, *, seed: int, max_pairs: int, workers: int,
         games_file: Optional[Path], done: Finished, out: TextIO,
         console: TextIO, live: bool, pair_lines: bool,
         pgn_file: Optional[Path] = None) -> SprtOutcome:
    """The body of :func:`run_sprt` once its seed and folder are settled."""
    from arena.report import format_estimate

    def say(text: str) -> None:
        out.write(text + "\n")
        out.flush()

    from arena.sandbox import describe_charge

    a, b = run.a.name, run.b.name
    lower, upper = test.bounds
    say(run.describe(seed))
    clock_warning = describe_charge(run.time_control.clock, run.time_control.wall_factor)[1]
    if clock_warning:
        say(f"warning: {clock_warning}")
    tag = f"sprt-{seed}"
    resumed = sum(1 for game_id in done if game_id.startswith(f"{tag}-"))
    if resumed:
        say(f"resuming: {resumed} games already in {games_file} are not played again (their "
            f"results are counted)")
    if pgn_file is not None and resumed and games_file is not None:
        # the earlier games it lacks (arena.pgn), in pair order, read back one at a time
        mine = [done.offset(g) for g in done if g.startswith(f"{tag}-")]
        places = sorted((r.pair or 0, r.game_id, offset)
                        for offset, r in zip(mine, read_at(games_file, mine)))
        catch_up(pgn_file, read_at(games_file, (offset for _, _, offset in places)))
    progress = SprtProgress(test, max_pairs, console, live=live, done_games=0)
    outcome = SprtOutcome(seed=seed, summary=test.summary())
    several = len(run.rotation) > 1
    per_variant = {v.name: run.new_test() for v in run.rotation} if several else {}
    with StopFlag() as flag:
        stop = flag.event
        pairs = play_pairs(run, seed=seed, max_pairs=max_pairs, workers=workers,
                           games_file=games_file, done=done, stop=stop,
                           on_game=progress.add_game, pgn_file=pgn_file)
        try:
            for k, first, second in pairs:
                score_a, score_b = first.score("white"), second.score("black")
                test.add_games(score_a, score_b)
                if several:
                    per_variant[run.variant_of(k).name].add_games(score_a, score_b)
                if pair_lines:
                    progress.clear()
                    est = format_estimate(pentanomial_estimate(test.counts), nelo=False,
                                          los=False)
                    where = f" ({run.variant_of(k).name})" if several else ""
                    say(f"pair {k:>4}{where}: {score_a + score_b:g}/2  pairs "
                        f"{'-'.join(map(str, test.counts))}  {est}  LLR {test.llr:+.2f} "
                        f"[{lower:.2f}, {upper:.2f}]")
                progress.redraw()
                if test.verdict is not None:
                    break
        finally:
            pairs.close()
            progress.close()
        outcome.interrupted = stop.is_set() and test.verdict is None
    verdict = test.verdict
    k = test.pairs
    unit = "nElo" if run.model == "normalized" else "Elo"
    if verdict is not None:
        say(f"{verdict_text(test.summary(), after=f' after {k} pairs')}, the {unit} of {a} "
            f"against {b}")
        outcome.status = 0
    elif outcome.interrupted:
        again = ("run the same command again to resume" if games_file is not None
                 else "nothing was saved (no --out)")
        say(f"interrupted after {k} pairs: {again}")
        outcome.status = INTERRUPTED_STATUS
    else:
        say(f"no decision after {max_pairs} pairs (LLR {test.llr:+.2f})")
    outcome.summary = test.summary()
    outcome.per_variant = {name: t.summary() for name, t in per_variant.items()}
    for line in format_summary(outcome.summary, a, b, per_variant=outcome.per_variant):
        say(line)
    return outcome


def verdict_text(s: SprtSummary, after: str = "") -> str:
    """What the test decided, without overstating it: an SPRT favours one hypothesis over
    the other, at its error rates; it does not prove a bound.  ``H1 accepted: Elo ≥ 10 is
    favoured over Elo ≤ 0 (α 0.05, β 0.05)``, ``H0 accepted: Elo ≤ 0 is favoured over
    Elo ≥ 10 (...)``, or ``undecided``; ``after`` goes after ``accepted`` (``H1 accepted
    after 40 pairs: ...``)."""
    unit = "nElo" if s.model == "normalized" else "Elo"
    h0, h1 = f"{unit} ≤ {s.elo0:g}", f"{unit} ≥ {s.elo1:g}"
    rates = f"(α {s.alpha:g}, β {s.beta:g})"
    if s.verdict == "H1":
        return f"H1 accepted{after}: {h1} is favoured over {h0} {rates}"
    if s.verdict == "H0":
        return f"H0 accepted{after}: {h0} is favoured over {h1} {rates}"
    return "undecided"


def format_summary(s: SprtSummary, a: str, b: str,
                   per_variant: Optional[Mapping[str, SprtSummary]] = None) -> list[str]:
    """The final summary, in the shape fastchess prints it (``Elo: ... nElo: ...``,
    ``LOS``, ``Games``/W-D-L, ``Ptnml(0-2)``, ``LLR (bounds) [elo0, elo1]``), with several
    variants each one's figures (``per_variant``: games, W-D-L, pentanomial counts, Elo,
    LLR; the test and the lines above pool them), and the verdict (:func:`verdict_text`)."""
    lower, upper = s.bounds
    lines = [f"Results of {a} vs {b} (A's view):"]
    e = s.estimate
    if e is None:
        lines.append("no pair finished")
    else:
        prior = " (with a virtual draw: a perfect score so far)" if e.prior else ""
        nelo = (f"{e.nelo:+.2f} ± {e.nelo95:.2f} (95%)" if math.isfinite(e.nelo)
                else "n/a (every pair scored the same)")
        lines.append(f"Elo: {e.elo:+.2f} ± {e.elo95:.2f} (95%){prior}, nElo: {nelo}")
        draw = s.draws / s.games if s.games else 0.0
        lines.append(f"LOS: {100 * e.los:.2f} %, DrawRatio: {100 * draw:.2f} %")
    points = s.wins + 0.5 * s.draws
    share = f" ({100 * points / s.games:.2f} %)" if s.games else ""
    lines.append(f"Games: {s.games}, Wins: {s.wins}, Draws: {s.draws}, Losses: {s.losses} "
                 f"(W-D-L {s.wins}-{s.draws}-{s.losses}), Points: {points:g}{share}")
    lines.append(f"Ptnml(0-2): [{', '.join(map(str, s.counts))}] (pairs LL, LD, WL+DD, WD, WW)")
    unit = "nElo" if s.model == "normalized" else "Elo"
    lines.append(f"LLR: {s.llr:+.2f} ({lower:.2f}, {upper:.2f}) [{s.elo0:.2f}, {s.elo1:.2f}] "
                 f"({s.model} {unit})")
    if per_variant:
        lines.append(f"By variant (the lines above pool all {len(per_variant)}):")
        for name, v in per_variant.items():
            elo = (f"Elo {v.estimate.elo:+.1f} ± {v.estimate.elo95:.1f}"
                   if v.estimate is not None else "Elo n/a")
            lines.append(f"  {name}: Games {v.games}, W-D-L {v.wins}-{v.draws}-{v.losses}, "
                         f"Ptnml [{', '.join(map(str, v.counts))}], {elo}, LLR {v.llr:+.2f}")
    lines.append(f"Verdict: {verdict_text(s)}")
    return lines

