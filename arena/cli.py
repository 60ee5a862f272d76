"""The ``arena`` command line: a thin click layer over the library."""

from __future__ import annotations

import click

from arena import ranges as R
from arena.errors import ArenaError
from arena.protocol import SEED_MAX, escape_controls


class Failure(click.ClickException):
    """A one-line error message and exit status 2."""

    exit_code = 2


class _Group(click.Group):
    """Turns the library's typed errors into one-line messages and exit status 2."""

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except ArenaError as e:
            raise Failure(str(e)) from None


@click.group(cls=_Group)
@click.version_option(package_name="morris-arena")
def cli() -> None:
    """Morris Arena: referee, tournaments and ratings for Nine Men's Morris bots."""


@cli.command()
def variants() -> None:
    """List the rule variant presets and where their rules come from."""
    from arena.variants import ALIASES, PRESETS

    for name, v in PRESETS.items():
        aliases = [a for a, target in ALIASES.items() if target == name]
        extra = f"  (aliases: {', '.join(aliases)})" if aliases else ""
        click.echo(f"{name}{extra}")
        click.echo(f"    board={v.board} men={v.men} " + " ".join(
            f"{k}={val}" for k, val in v.to_params().items() if k not in ("board", "men")))
        click.echo(f"    {v.source}")


@cli.command()
@click.argument("variant")
@click.argument("depth", type=click.IntRange(0, 12))
@click.option("--divide", is_flag=True, help="Print the count below each first move.")
def perft(variant: str, depth: int, divide: bool) -> None:
    """Count the legal move sequences of DEPTH turns from the start of VARIANT.

    A turn includes its captures.  VARIANT is a preset name or a variant YAML file.
    """
    from arena.rules import Position
    from arena.variants import load_variant

    pos = Position(load_variant(variant))
    if divide and depth > 0:
        total = 0
        for move in pos.legal_moves():
            pos.push(move)
            n = pos.perft(depth - 1)
            pos.pop()
            total += n
            click.echo(f"{move}: {n}")
        click.echo(f"total: {total}")
    else:
        click.echo(pos.perft(depth))


# --- play / check (referee) -----------------------------------------------------------

from typing import TYPE_CHECKING  # noqa: E402

if TYPE_CHECKING:
    from arena.sandbox import Isolation
    from arena.bot import BotSpec
    from arena.clock import TimeControl
    from arena.referee import Player


def _parse_options(pairs: tuple[str, ...], flag: str) -> dict[str, str]:
    """``K=V`` pairs into a dict; a pair without ``=`` is a one-line error."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise Failure(f"{flag} expects NAME=VALUE, got {pair!r}")
        out[key.strip()] = value
    return out


def _load_bot_arg(arg: str, options: dict[str, str]) -> BotSpec:
    """A bot folder; a bare name that is not a folder is looked up under ``bots/`` here, then
    under the example bots next to the package."""
    from pathlib import Path

    from arena.bot import load_bot
    from arena.check import DEFAULT_OPPONENT

    path = Path(arg)
    if not path.is_dir() and "/" not in arg:
        for root in (Path("bots"), DEFAULT_OPPONENT.parent):
            if (root / arg).is_dir():
                path = root / arg
                break
    return load_bot(path, options=options)


def _time_control(movetime: int | None, clock: str | None, handshake: int, margin: int,
                  default_movetime: int, cpu_clock: bool = False) -> TimeControl:
    from arena.clock import TimeControl

    charge = "cpu" if cpu_clock else "wall"
    if movetime is not None and clock is not None:
        raise Failure("use --movetime or --clock, not both")
    if clock is not None:
        if "+" not in clock:
            raise Failure(f"--clock expects BASE+INC in seconds (e.g. 60+1), got {clock[:40]!r}")
        try:
            return TimeControl.parse(clock, handshake_ms=handshake, margin_ms=margin,
                                     clock=charge)
        except ArenaError as e:
            raise Failure(f"--clock: {str(e).split(': ', 1)[-1]}") from None
    return TimeControl(movetime_ms=movetime or default_movetime, handshake_ms=handshake,
                       margin_ms=margin, clock=charge)


def _isolation(level: str | None) -> Isolation | None:
    """``--isolation``: None (the default: best available, or MORRIS_ARENA_ISOLATION)."""
    if level is None:
        return None
    from arena.sandbox import Isolation

    return Isolation.parse(level, "--isolation")


def _warn_isolation(isolation: Isolation | None) -> None:
    """Say once, on stderr, what the isolation level in use does not protect (if anything)."""
    from arena.sandbox import Isolation, level_warning

    try:
        level = (isolation or Isolation.default()).level
    except ArenaError:
        return  # a bad MORRIS_ARENA_ISOLATION is reported where it is used
    warning = level_warning(level)
    if warning:
        click.echo(f"warning: {warning}", err=True)


def _enable_protocol_log() -> None:
    import logging

    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(relativeCreated)8.0f ms %(message)s"))
    for name in ("arena.bot", "arena.referee"):
        logger = logging.getLogger(name)
        logger.setLevel(logging.DEBUG)
        logger.addHandler(handler)


_time_options = [
    click.option("--movetime", type=click.IntRange(R.MOVETIME_MS.low, R.MOVETIME_MS.high),
                 metavar="MS", help="Time per move in ms (the default; at most an hour)."),
    click.option("--clock", "clock", metavar="BASE+INC",
                 help="A chess clock instead: base and increment in seconds, e.g. 60+1 "
                      "(base up to 86400, increment up to 3600)."),
    click.option("--handshake", type=click.IntRange(R.HANDSHAKE_MS.low, R.HANDSHAKE_MS.high),
                 default=5000, show_default=True,
                 metavar="MS", help="Time a bot gets to start (spawn to morrisok)."),
    click.option("--margin", type=click.IntRange(R.MARGIN_MS.low, R.MARGIN_MS.high),
                 default=100, show_default=True,
                 metavar="MS", help="Tolerance added to every deadline."),
    click.option("--cpu-clock", is_flag=True,
                 help="Charge each move the CPU time of the bot's whole process tree (fair on a "
                      "busy machine; a wall-clock cap several times larger still applies)."),
    click.option("--isolation", type=click.Choice(["none", "basic", "bwrap", "best"]),
                 default=None, help="How bots are sandboxed (default: the best this machine "
                                    "supports; see 'arena doctor')."),
]


def _with_time_options(f):  # type: ignore[no-untyped-def]
    for option in reversed(_time_options):
        f = option(f)
    return f


@cli.command()
@click.argument("bot_a", metavar="BOT_A")
@click.argument("bot_b", metavar="BOT_B")
@click.option("--variant", default="nine-mens-morris", show_default=True,
              help="A preset name (see 'arena variants') or a variant YAML file.")
@_with_time_options
@click.option("--seed", type=click.IntRange(0, SEED_MAX), help="Seed sent to bots with a Seed option.")
@click.option("--opening", default="", metavar="MOVES", help="Moves played first, e.g. 'd6 d2'.")
@click.option("--quiet", is_flag=True, help="Do not show the board after every move.")
@click.option("--record", "record_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Save the game record as JSON.")
@click.option("--option-a", multiple=True, metavar="K=V", help="An option for BOT_A (repeatable).")
@click.option("--option-b", multiple=True, metavar="K=V", help="An option for BOT_B (repeatable).")
@click.option("-v", "--verbose", is_flag=True,
              help="Log every protocol line on stderr (<< sent, >> received).")
def play(bot_a: str, bot_b: str, variant: str, movetime: int | None, clock: str | None,
         handshake: int, margin: int, cpu_clock: bool, isolation: str | None,
         seed: int | None, opening: str, quiet: bool,
         record_path: str | None, option_a: tuple[str, ...], option_b: tuple[str, ...],
         verbose: bool) -> None:
    """Play one game: BOT_A (white) against BOT_B (black).

    A bot is a bot folder (with bot.yaml), a name under bots/, or 'human' to type moves
    yourself.  Prints the board as the game goes, then the result and how the game ended
    (for a forfeit: which side failed, why, and the offending line).
    """
    from pathlib import Path

    from arena.records import MoveInfo
    from arena.referee import HumanPlayer, Player, play_game
    from arena.rules import COLOR_NAMES, Position
    from arena.variants import load_variant

    tc = _time_control(movetime, clock, handshake, margin, default_movetime=1000,
                       cpu_clock=cpu_clock)
    sandbox = _isolation(isolation)
    var = load_variant(variant)
    sides: list[BotSpec | Player] = []
    for arg, pairs, flag in ((bot_a, option_a, "--option-a"), (bot_b, option_b, "--option-b")):
        options = _parse_options(pairs, flag)
        if arg == "human" and not Path(arg).is_dir():
            if options:
                raise Failure(f"{flag}: a human player takes no options")
            sides.append(HumanPlayer("human", write=click.echo, show_board=quiet))
        else:
            sides.append(_load_bot_arg(arg, options))
    if verbose:
        _enable_protocol_log()
    names = [s.name if not isinstance(s, Player) else s.info.name for s in sides]
    click.echo(f"{names[0]} (white) vs {names[1]} (black): {var.name}, {tc.describe()}")

    def show(pos: Position, info: MoveInfo) -> None:
        mover = COLOR_NAMES[1 - pos.turn]
        how = "opening" if info.opening else f"{info.wall_ms:.1f} ms"
        click.echo(f"{pos.ply}. {mover} {info.move} ({how})")
        if not quiet:
            click.echo(pos.board_text() + "\n")

    if not quiet:
        click.echo(Position(var).board_text() + "\n")
    record = play_game(sides[0], sides[1], var, tc, opening=opening.split(), seed=seed,
                       on_move=show, isolation=sandbox)
    click.echo(f"result: {record.result} ({record.termination}): {record.detail}")
    if record.offending_line is not None:
        click.echo(f"offending line: {record.offending_line!r}")
    if record.forfeit and record.stderr.get(record.forfeit):
        tail = record.stderr[record.forfeit].rstrip().splitlines()[-5:]
        click.echo("stderr tail:\n" + "\n".join(f"  {escape_controls(line)}" for line in tail))
    if record_path:
        try:
            Path(record_path).write_text(record.to_json() + "\n", encoding="utf-8")
        except OSError as e:
            raise Failure(f"cannot write {record_path}: {e.strerror}") from None
        click.echo(f"record saved to {record_path}")


@cli.command()
@click.argument("bot")
@click.option("--variant", "variants", multiple=True, metavar="V",
              help="A variant to play (repeatable; default: nine-mens-morris, "
                   "twelve-mens-morris, six-mens-morris).")
@click.option("--games", type=click.IntRange(1, 100), default=2, show_default=True,
              help="Games per variant, colours alternating.")
@_with_time_options
@click.option("--opponent", type=click.Path(file_okay=False), metavar="DIR",
              help="The bot to play against (default: bots/random).")
@click.option("-v", "--verbose", is_flag=True, help="Log every protocol line on stderr.")
def check(bot: str, variants: tuple[str, ...], games: int, movetime: int | None,
          clock: str | None, handshake: int, margin: int, cpu_clock: bool,
          isolation: str | None, opponent: str | None, verbose: bool) -> None:
    """Check a bot submission: handshake, then short games against bots/random.

    Reports the handshake time and the id/option lines, then every problem (slow start,
    illegal move, timeout, protocol error, crash) with the offending line.  Exit status 0
    only on PASS (1 on FAIL, 2 on bad input).
    """
    from arena.check import DEFAULT_OPPONENT, DEFAULT_VARIANTS, check_bot, format_report
    from arena.variants import load_variant

    tc = _time_control(movetime, clock, handshake, margin, default_movetime=200,
                       cpu_clock=cpu_clock)
    sandbox = _isolation(isolation)
    spec = _load_bot_arg(bot, {})
    opp = _load_bot_arg(opponent, {}) if opponent else _load_bot_arg(str(DEFAULT_OPPONENT), {})
    vars_ = [load_variant(v) for v in (variants or DEFAULT_VARIANTS)]
    _warn_isolation(sandbox)
    if verbose:
        _enable_protocol_log()
    click.echo(f"time control {tc.describe()}, handshake {tc.handshake_ms} ms, "
               f"margin {tc.margin_ms} ms; opponent {opp.name}")
    report = check_bot(spec, variants=vars_, games=games, time_control=tc, opponent=opp,
                       isolation=sandbox)
    for line in format_report(report):
        click.echo(line)
    if not report.passed:
        raise SystemExit(1)


# --- run (tournaments) -------------------------------------------------------------------


@cli.command()
@click.argument("config_file", metavar="TOURNAMENT.yaml")
@click.option("--restart", is_flag=True,
              help="Discard the games already in the results folder and start over.")
@click.option("-j", "--workers", type=click.IntRange(1, R.workers_range().high), default=None,
              help="Games played at once (default: the file's 'workers', else the CPU count; "
                   f"at most {R.WORKERS_PER_CPU} per CPU core).")
@click.option("--output", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="The results folder (default: the file's 'output', else results/<name>).")
@click.option("--executor", type=click.Choice(["local", "dask"]), default=None,
              help="Where games run: this machine's process pool (local, the default) or a "
                   "Dask cluster (dask; needs the cluster extra, see docs/CLUSTER.md).")
@click.option("--scheduler", default=None, metavar="ADDR",
              help="With dask: 'local' (a local cluster of --workers processes, the default) "
                   "or a scheduler address such as tcp://HOST:8786.")
@click.option("--ship-bots/--shared-bots", "ship_bots", default=None,
              help="With dask: send the bot folders to the workers, or expect them at the same "
                   "path on every worker (the default).")
@click.option("-v", "--verbose", is_flag=True, help="Show the log (info level) on the console.")
def run(config_file: str, restart: bool, workers: int | None, output: str | None,
        executor: str | None, scheduler: str | None, ship_bots: bool | None,
        verbose: bool) -> None:
    """Run the tournament described by TOURNAMENT.yaml, or resume it.

    Games already in results/<name>/games.jsonl are not played again; a changed file is
    refused for an existing results folder unless --restart is given.  Ctrl-C stops cleanly
    (the games in flight are abandoned; run the same command again to finish).  At the end
    the standings are printed and written to standings.csv, with games.csv and the report.
    The file format is in docs/TOURNAMENTS.md.
    """
    import dataclasses
    import logging
    import sys
    from pathlib import Path

    from arena.config import load_config, with_executor
    from arena.tournament import INTERRUPTED_STATUS, format_standings, run_tournament

    config = load_config(config_file, workers=workers)
    if output is not None:
        config = dataclasses.replace(config, output=Path(output))
    if executor is not None or scheduler is not None or ship_bots is not None:
        config = with_executor(config, kind=executor, scheduler=scheduler, ship_bots=ship_bots)
    _warn_isolation(config.isolation)
    result = run_tournament(config, restart=restart,
                            log_level=logging.INFO if verbose else logging.WARNING)
    if result.interrupted:
        click.echo(f"interrupted: {result.finished}/{result.total} games saved in "
                   f"{result.folder}; run the same command again to resume", err=True)
        sys.exit(INTERRUPTED_STATUS)
    click.echo(f"{config.name}: {result.finished}/{result.total} games "
               f"({result.played} played now) in {result.folder}")
    click.echo(format_standings(result.standings))
    if result.elo:
        click.echo(result.elo)
    if result.report is not None:
        click.echo(f"report: {result.report}")
    if result.failed or result.lost:
        what = [f"{result.failed} games failed in the referee"] if result.failed else []
        what += [f"{result.lost} games were lost on the cluster"] if result.lost else []
        raise Failure(f"{' and '.join(what)} (see {result.folder / 'arena.log'}); run the same "
                      f"command again to play them")


# --- rate / report / sprt (ratings) ------------------------------------------------------


@cli.command()
@click.argument("results", metavar="RESULTS")
@click.option("--variant", default=None, help="Only this variant (default: each, then pooled).")
@click.option("--anchor", default=None, metavar="BOT=ELO",
              help="Pin one bot's Elo (e.g. random=0) instead of centring on the mean.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
              show_default=True, help="Output format.")
@click.option("--interval", type=click.Choice(["sandwich", "bootstrap"]), default="sandwich",
              show_default=True, help="How the 95% intervals are estimated.")
@click.option("--seed", type=click.IntRange(0, SEED_MAX), default=0, show_default=True,
              help="Seed of the bootstrap.")
def rate(results: str, variant: str | None, anchor: str | None, fmt: str, interval: str,
         seed: int) -> None:
    """Elo ratings from RESULTS (a results folder or its games.jsonl).

    One table per variant and, with several variants, one pooled over all of them: rank,
    Elo, its 95% interval, games, score, W-D-L, draws, likelihood of superiority over the
    next bot, forfeits.  Bots with no finite Elo are listed with a note.  See docs/RATINGS.md.
    """
    from arena.ratings import parse_anchor, rate as rate_games, rate_all
    from arena.report import (format_standings, load_games, select_variant, standings_csv,
                              standings_json)

    pin = parse_anchor(anchor) if anchor else None
    records = load_games(results)
    chosen = select_variant(records, variant)
    if pin is not None and pin[0] not in {n for r in records for n in (r.white.name, r.black.name)}:
        raise Failure(f"--anchor: no bot named {pin[0]!r} in {results}")
    options = {"anchor": pin, "method": interval, "seed": seed}
    tables = ([rate_games(records, variant=chosen, **options)] if chosen is not None
              else rate_all(records, **options))  # type: ignore[arg-type]
    if fmt == "csv":
        click.echo(standings_csv(tables), nl=False)
    elif fmt == "json":
        click.echo(standings_json(tables, records))
    else:
        click.echo(format_standings(tables, records), nl=False)


@cli.command()
@click.argument("results", metavar="RESULTS")
@click.option("--anchor", default=None, metavar="BOT=ELO", help="Pin one bot's Elo (e.g. random=0).")
@click.option("--title", default=None, help="Page title (default: the folder's name).")
@click.option("--max-games", type=click.IntRange(min=0), default=10_000, show_default=True,
              help="List the moves of at most this many games (0: all).")
def report(results: str, anchor: str | None, title: str | None, max_games: int) -> None:
    """Write charts and a self-contained report.html into the results folder RESULTS.

    Standings, charts (Elo per variant, Elo by variant, head-to-head, Elo against games,
    game lengths and endings), crosstable, forfeit reasons and every game's moves.
    """
    from arena.ratings import parse_anchor
    from arena.report import build_report, games_path, load_games

    pin = parse_anchor(anchor) if anchor else None
    records = load_games(results)
    folder = games_path(results).parent
    click.echo(build_report(folder, records, title=title, anchor=pin, max_games=max_games or None))


import typing  # noqa: E402  (for the annotation below only)

if typing.TYPE_CHECKING:
    from pathlib import Path

    from arena.bot import BotSpec
    from arena.ratings import SprtTest
    from arena.records import GameRecord
    from arena.variants import Variant


def _bot_arg(text: str) -> BotSpec:
    """``FOLDER`` or ``FOLDER:K=V,K=V`` as a bot spec (options named in the display name)."""
    from arena.bot import load_bot

    folder, sep, opts = text.rpartition(":")
    if not sep or "=" not in opts:
        return load_bot(text)
    options: dict[str, str] = {}
    for item in opts.split(","):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise Failure(f"bad bot options in {text!r}: expected FOLDER:KEY=VALUE,KEY=VALUE")
        options[key.strip()] = value.strip()
    import dataclasses

    spec = load_bot(folder, options=options)
    shown = ",".join(f"{k}={v}" for k, v in options.items())
    return dataclasses.replace(spec, name=f"{spec.name}({shown})")


def _sprt_game_id(tag: str, pair: int, game: int) -> str:
    """``<tag>-<pair>a`` (A has white) or ``<tag>-<pair>b`` (B has white)."""
    return f"{tag}-{pair}{'ab'[game]}"


def _sprt_pairs(a: BotSpec, b: BotSpec, variant: typing.Any, tc: typing.Any, *, seed: int,
                opening_turns: int, max_pairs: int, workers: int, games_file: typing.Any,
                tag: str, done: typing.Mapping[str, GameRecord] | None = None,
                ) -> typing.Generator[tuple[int, float], None, None]:
    """Play colour-swapped pairs (``workers`` games at once) and yield ``(pair, A's points)``
    in order; each game is appended to ``games_file`` (if any) as it finishes.

    A game whose id is in ``done`` (the records of an earlier run of the same test, by game
    id) is not played again: its recorded result is counted in its place.  Closing the
    generator abandons the games not yet started and waits for the running ones.
    """
    from collections import deque
    from concurrent.futures import Future, ThreadPoolExecutor

    from arena.records import GameRecord, append_record
    from arena.referee import play_game
    from arena.schedule import derive_seed, random_opening

    known = done or {}

    def play(k: int, game: int, opening: tuple[str, ...]) -> GameRecord:
        white, black = (a, b) if game == 0 else (b, a)
        rec = play_game(white, black, variant, tc, opening=opening,
                        game_id=_sprt_game_id(tag, k, game),
                        seed=derive_seed(seed, "game", k, game))
        rec.tournament, rec.round, rec.pair = tag, k, k
        return rec

    jobs = ((k, g) for k in range(1, max_pairs + 1) for g in (0, 1))
    # (pair, game, its record to come, whether it is played now rather than recorded before)
    in_flight: deque[tuple[int, int, Future[GameRecord], bool]] = deque()
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        points = 0.0
        while True:
            while len(in_flight) < workers:
                job = next(jobs, None)
                if job is None:
                    break
                k, g = job
                recorded = known.get(_sprt_game_id(tag, k, g))
                if recorded is not None:
                    future: Future[GameRecord] = Future()
                    future.set_result(recorded)
                    in_flight.append((k, g, future, False))
                    continue
                opening = random_opening(variant, opening_turns, derive_seed(seed, "opening", k))
                in_flight.append((k, g, pool.submit(play, k, g, opening), True))
            if not in_flight:
                return
            k, g, future, fresh = in_flight.popleft()
            rec = future.result()
            if fresh and games_file is not None:
                append_record(games_file, rec)
            points += rec.score("white" if g == 0 else "black")
            if g == 1:
                yield k, points
                points = 0.0
    finally:
        for _, _, future, _ in in_flight:
            future.cancel()
        pool.shutdown(wait=True)


#: in ``sprt --out DIR``: the settings of the run whose games ``DIR/games.jsonl`` holds
SPRT_FILE = "sprt.json"


def _sprt_settings(a: BotSpec, b: BotSpec, rules: Variant, *, movetime: int, elo0: float,
                   elo1: float, alpha: float, beta: float, opening_turns: int,
                   seed: int) -> dict[str, typing.Any]:
    """Everything that decides an SPRT run's games and statistics, as stored in
    ``sprt.json`` (JSON values, so that a stored copy compares equal).  ``--max-pairs`` and
    ``--workers`` are not in it: a run may be resumed with others."""
    import json

    def bot(spec: BotSpec) -> dict[str, typing.Any]:
        return {"name": spec.name, "path": spec.path, "options": dict(spec.options)}

    settings = {"a": bot(a), "b": bot(b), "variant": {"name": rules.name, **rules.to_params()},
                "movetime": movetime, "elo0": elo0, "elo1": elo1, "alpha": alpha, "beta": beta,
                "opening_turns": opening_turns, "seed": seed}
    loaded: dict[str, typing.Any] = json.loads(json.dumps(settings))
    return loaded


def _sprt_resume(folder: Path, shown: str,
                 make_settings: typing.Callable[[int], dict[str, typing.Any]],
                 seed: int | None, restart: bool) -> tuple[int, dict[str, GameRecord]]:
    """For ``sprt --out``, holding the folder's lock: the seed to use and the records of the
    games already played (by id), after checking that ``sprt.json`` (written here for a new
    run) holds the same settings (``make_settings(seed)``).  Without ``--seed`` a resumed
    run takes the stored one.  ``restart`` discards the files an earlier run wrote.

    :raises Failure: the folder holds another run's games (or a tournament's).
    """
    import json
    import random
    from datetime import datetime, timezone

    from arena.records import atomic_write, read_records, set_aside_unreadable
    from arena.tournament import CONFIG_FILE, GAMES_FILE, REJECTED_FILE

    if (folder / CONFIG_FILE).is_file():
        raise Failure(f"{shown} is a tournament's results folder: choose another --out")
    stored_path, games, side = folder / SPRT_FILE, folder / GAMES_FILE, folder / REJECTED_FILE
    if restart:
        for path in (games, side, stored_path):
            path.unlink(missing_ok=True)
    stored: dict[str, typing.Any] | None = None
    if stored_path.exists():
        try:
            data = json.loads(stored_path.read_text(encoding="utf-8"))
            stored = data["settings"] if isinstance(data, dict) else None
        except (OSError, ValueError, KeyError):
            stored = None
        if not isinstance(stored, dict) or not isinstance(stored.get("seed"), int):
            raise Failure(f"{stored_path} is unreadable; use --restart to start over")
    elif games.exists() and games.stat().st_size:
        raise Failure(f"{games} holds games of no 'arena sprt' run (no {SPRT_FILE}); use "
                      f"--restart to discard them, or another --out")
    if seed is None:
        seed = stored["seed"] if stored is not None else random.SystemRandom().randrange(
            SEED_MAX + 1)
    settings = make_settings(seed)
    if stored is None:
        text = json.dumps({"settings": settings, "created": datetime.now(timezone.utc)
                           .isoformat(timespec="seconds")}, indent=2) + "\n"
        atomic_write(stored_path, text.encode("utf-8"))
        return seed, {}
    changed = [k for k in sorted(set(stored) | set(settings)) if stored.get(k) != settings.get(k)]
    if changed:
        raise Failure(f"{shown} holds an SPRT run with other settings (changed: "
                      f"{', '.join(changed)}); use --restart to discard its games, or another "
                      f"--out")
    moved = set_aside_unreadable(games, side)
    if moved:
        click.echo(f"warning: {games}: moved {moved} unreadable line{'s' if moved > 1 else ''} "
                   f"to {side}; any game they held is played again", err=True)
    done: dict[str, GameRecord] = {}
    for rec in read_records(games):
        done.setdefault(rec.game_id, rec)
    return seed, done


@cli.command()
@click.argument("bot_a", metavar="A")
@click.argument("bot_b", metavar="B")
@click.option("--elo0", type=click.FloatRange(-R.ELO_BOUND, R.ELO_BOUND), default=0.0,
              show_default=True, help="Elo of H0 (A - B).")
@click.option("--elo1", type=click.FloatRange(-R.ELO_BOUND, R.ELO_BOUND), default=10.0,
              show_default=True, help="Elo of H1 (A - B).")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="Chance of accepting H1 when H0 holds.")
@click.option("--beta", type=float, default=0.05, show_default=True,
              help="Chance of accepting H0 when H1 holds.")
@click.option("--variant", default="nine-mens-morris", show_default=True,
              help="Variant preset name or YAML file.")
@click.option("--movetime", type=click.IntRange(R.MOVETIME_MS.low, R.MOVETIME_MS.high),
              default=100, show_default=True, help="Milliseconds per move.")
@click.option("--max-pairs", type=click.IntRange(R.SPRT_PAIRS.low, R.SPRT_PAIRS.high),
              default=2000, show_default=True, help="Stop undecided after this many pairs.")
@click.option("--opening-turns", type=click.IntRange(R.OPENING_TURNS.low, R.OPENING_TURNS.high),
              default=4, show_default=True,
              help="Random legal turns played before the bots, shared by both games of a pair.")
@click.option("--seed", type=click.IntRange(0, SEED_MAX), default=None,
              help="Seed of the openings (default: random).")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Also append every game to OUT/games.jsonl (for 'arena rate' / 'arena report').")
@click.option("--restart", is_flag=True,
              help="With --out: discard the games of an earlier run in OUT instead of resuming it.")
@click.option("-j", "--workers", type=click.IntRange(1, R.workers_range().high), default=1,
              show_default=True,
              help="Games played at once (2 plays both games of a pair together; at most "
                   f"{R.WORKERS_PER_CPU} per CPU core).")
def sprt(bot_a: str, bot_b: str, elo0: float, elo1: float, alpha: float, beta: float,
         variant: str, movetime: int, max_pairs: int, opening_turns: int, seed: int | None,
         out: str | None, workers: int, restart: bool) -> None:
    """Is A better than B?  Play colour-swapped pairs until a sequential test decides.

    A and B are bot folders, optionally with options: bots/alphabeta:Depth=3.  After each
    pair the generalized SPRT's log-likelihood ratio (pentanomial, logistic Elo) is printed
    with its bounds; H1 (A is elo1 better) or H0 (A is at most elo0 better) is accepted when
    the LLR leaves them.  Exit status 0 with a verdict, 1 if --max-pairs ran out first.

    With --out, OUT belongs to one run at a time, and running the same command again resumes
    it: the games already in OUT/games.jsonl are counted, not played again (other settings
    are refused unless --restart).
    """
    import contextlib
    import dataclasses
    import random
    from pathlib import Path

    from arena.clock import TimeControl
    from arena.ratings import SprtTest
    from arena.variants import load_variant

    test = SprtTest(elo0, elo1, alpha, beta)
    rules = load_variant(variant)
    if opening_turns > 2 * rules.men:
        raise Failure(f"--opening-turns: at most {2 * rules.men} for {rules.name} (its "
                      f"placement phase: 2 x {rules.men} men), got {opening_turns}")
    a, b = _bot_arg(bot_a), _bot_arg(bot_b)
    if a.name == b.name:
        b = dataclasses.replace(b, name=f"{b.name} (B)")
    tc = TimeControl.parse(str(movetime))
    with contextlib.ExitStack() as owned:
        games_file: Path | None = None
        done: dict[str, GameRecord] = {}
        if out is not None:
            from arena.lock import FolderLock
            from arena.tournament import GAMES_FILE

            folder = Path(out)
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise Failure(f"cannot create {out}: {e.strerror}") from None
            owned.enter_context(FolderLock(folder, shown=out))  # held until the command ends
            seed, done = _sprt_resume(folder, out, lambda s: _sprt_settings(
                a, b, rules, movetime=movetime, elo0=elo0, elo1=elo1, alpha=alpha, beta=beta,
                opening_turns=opening_turns, seed=s), seed, restart)
            games_file = folder / GAMES_FILE
        elif seed is None:
            seed = random.SystemRandom().randrange(SEED_MAX + 1)
        _sprt_run(test, a, b, rules, tc, seed=seed, movetime=movetime, max_pairs=max_pairs,
                  opening_turns=opening_turns, workers=workers, games_file=games_file,
                  done=done)


def _sprt_run(test: SprtTest, a: BotSpec, b: BotSpec, rules: Variant, tc: TimeControl, *,
              seed: int, movetime: int, max_pairs: int, opening_turns: int, workers: int,
              games_file: Path | None, done: dict[str, GameRecord]) -> None:
    """The body of ``arena sprt`` once its seed and ``--out`` folder are settled: print the
    test, feed it pairs until it decides, exit 1 when ``max_pairs`` run out first."""
    import contextlib
    import sys

    from arena.ratings import pentanomial_estimate
    from arena.report import format_estimate

    elo0, elo1, alpha, beta = test.elo0, test.elo1, test.alpha, test.beta
    tag = f"sprt-{seed}"
    lower, upper = test.bounds
    click.echo(f"SPRT {a.name} vs {b.name}: H0 Elo <= {elo0:g}, H1 Elo >= {elo1:g}, "
               f"alpha {alpha:g}, beta {beta:g}, bounds [{lower:.2f}, {upper:.2f}]; "
               f"{rules.name}, {movetime} ms/move, seed {seed}")
    resumed = sum(1 for game_id in done if game_id.startswith(f"{tag}-"))
    if resumed:
        click.echo(f"resuming: {resumed} games already in {games_file} are not played "
                   f"again (their results are counted)")
    pairs = _sprt_pairs(a, b, rules, tc, seed=seed, opening_turns=opening_turns,
                        max_pairs=max_pairs, workers=workers, games_file=games_file,
                        tag=tag, done=done)
    with contextlib.closing(pairs):
        for k, points in pairs:
            test.add_pair(points)
            est = format_estimate(pentanomial_estimate(test.counts), nelo=False, los=False)
            click.echo(f"pair {k:>4}: {points:g}/2  pairs {'-'.join(map(str, test.counts))}  "
                       f"{est}  LLR {test.llr:+.2f} [{lower:.2f}, {upper:.2f}]")
            if test.verdict == "H1":
                click.echo(f"H1 accepted after {k} pairs: {a.name} is stronger than {b.name} "
                           f"(Elo >= {elo1:g} favoured)")
                return
            if test.verdict == "H0":
                click.echo(f"H0 accepted after {k} pairs: {a.name} is not {elo1:g} Elo "
                           f"stronger than {b.name} (Elo <= {elo0:g} favoured)")
                return
    click.echo(f"no decision after {max_pairs} pairs (LLR {test.llr:+.2f})")
    sys.exit(1)


# --- doctor (sandboxing) -----------------------------------------------------------------


@cli.command()
@click.option("--strict", is_flag=True,
              help="Exit with status 1 unless bwrap and the memory/pids cgroups are usable.")
def doctor(strict: bool) -> None:
    """Print which isolation levels and clocks this machine supports, and why (one line each).

    Levels: none, basic, bwrap (the best available is the default).  Cgroups, where writable,
    add memory and process limits and exact CPU accounting.  See docs/SECURITY.md.
    """
    from arena.sandbox import best_level, checks, level_warning

    found = checks()
    for check in found:
        click.echo(check.line())
    warning = level_warning(best_level())
    if warning:
        click.echo(f"warning: {warning}")
    if strict:
        wanted = ("bwrap", "cgroup memory", "cgroup pids")
        missing = [c.name for c in found if c.name in wanted and not c.ok]
        if missing:
            raise click.exceptions.Exit(1)


def main() -> None:
    """Entry point of the ``arena`` console script."""
    cli(prog_name="arena")
