"""What the ``arena`` commands share: the error type and group that make a library error one
line with exit status 2, and the parsing of options several commands take (time controls,
isolation, ``K=V`` pairs).  Cheap to import (the command line's help must start fast): heavy
modules are imported inside the functions.  The command modules import this one, never the
other way round.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypeVar

import click

from arena import ranges as R
from arena.errors import ArenaError

if TYPE_CHECKING:
    from pathlib import Path

    from arena.clock import TimeControl
    from arena.manifest import BotSpec
    from arena.records import GameRecord
    from arena.sandbox import Isolation

#: a command function, before or after click's decorators
_F = TypeVar("_F", bound=Callable[..., Any])


class Failure(click.ClickException):
    """A one-line error message and exit status 2."""

    exit_code = 2


class ArenaGroup(click.Group):
    """Turns the library's typed errors into one-line messages and exit status 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ArenaError as e:
            raise Failure(str(e)) from None


def parse_options(pairs: tuple[str, ...], flag: str) -> dict[str, str]:
    """``K=V`` pairs into a dict; a pair without ``=`` is a one-line error."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise Failure(f"{flag} expects NAME=VALUE, got {pair!r}")
        out[key.strip()] = value
    return out


def is_competition(results: str) -> bool:
    """Whether RESULTS is a competition folder (``arena server init``'s: ``server.yaml`` or
    ``arena.db``, no ``games.jsonl``) rather than a results folder."""
    from arena.server.export import is_competition_folder

    return is_competition_folder(results)


def load_results(results: str) -> list[GameRecord]:
    """The records RESULTS names for ``arena rate``, ``report`` and ``export``: a results
    folder or its ``games.jsonl`` (:func:`arena.report.load_games`), or a competition
    folder, whose finished games are read as ``arena server export`` takes them (the
    latest final's once one has started, else the ladder's), writing nothing there.

    :raises ArenaError: no games, or a competition folder without the ``server`` extra
        (a one-line hint).
    """
    if is_competition(results):
        from arena.server.export import load_competition

        return load_competition(results)
    from arena.report import load_games

    return load_games(results)


def results_folder(results: str) -> Path:
    """The folder of RESULTS (a results folder, its ``games.jsonl``, or a competition
    folder).  :raises ArenaError: none of them."""
    if is_competition(results):
        from pathlib import Path

        return Path(results)
    from arena.report import games_path

    return games_path(results).parent


def engine_arg(arg: str, options: dict[str, str] | None = None) -> BotSpec | None:
    """A bot argument that is an engine string (``"cmd='./mybot --fast' name=fast
    option.Depth=3"``, see :func:`arena.manifest.parse_engine`) as a bot spec, with
    ``options`` merged over its own; None for anything else (a folder of that name wins).
    A bad string is a one-line error (exit 2)."""
    import dataclasses
    import os

    from arena.manifest import is_engine_string, parse_engine

    if os.path.isdir(arg) or not is_engine_string(arg):
        return None
    spec = parse_engine(arg)
    return dataclasses.replace(spec, options={**spec.options, **options}) if options else spec


def time_control(movetime: int | None, clock: str | None, handshake: int, margin: int,
                 default_movetime: int, cpu_clock: bool = False,
                 charge: str = "auto", *, nodes: int | None = None,
                 depth: int | None = None) -> TimeControl:
    """The time control of ``--movetime`` or ``--clock`` (``default_movetime`` without
    either, unless ``--nodes`` or ``--depth`` is given: those moves are capped at
    :data:`~arena.protocol.LIMIT_CAP_MS`), ``--handshake``, ``--margin`` and ``--charge``
    (``--cpu-clock``: ``cpu``; ``auto``: the CPU clock where this machine has one); a bad
    one is a one-line error."""
    import dataclasses

    from arena.clock import TimeControl

    if cpu_clock:
        if charge == "wall":
            raise Failure("use --charge wall or --cpu-clock, not both")
        charge = "cpu"
    if charge == "auto":
        from arena.sandbox import default_charge

        charge = default_charge()
    if clock is not None:
        if not any(c in clock for c in "+/:") and clock.strip().lower() != "inf":
            try:  # a base alone, as cutechess's tc=60: 60 s for the game, no increment
                float(clock)
            except ValueError:
                raise Failure(f"--clock expects BASE+INC in seconds (e.g. 60+1), BASE (60) "
                              f"or MOVES/BASE+INC (e.g. 40/60+0.6), got {clock[:40]!r}") from None
            clock = f"{clock.strip()}+0"
        try:
            tc = TimeControl.parse(clock, handshake_ms=handshake, margin_ms=margin,
                                   clock=charge)
        except ArenaError as e:
            raise Failure(f"--clock: {str(e).split(': ', 1)[-1]}") from None
        # with --movetime too, each move is capped as well (as a tournament file's time:
        # {clock, movetime} and cutechess's tc= with st=)
        tc = dataclasses.replace(tc, nodes=nodes, depth=depth)
        return tc if movetime is None else dataclasses.replace(tc, movetime_ms=movetime)
    if movetime is None and (nodes is not None or depth is not None):
        per_move = None  # the referee's cap (LIMIT_CAP_MS), not sent
    else:
        per_move = movetime or default_movetime
    return TimeControl(movetime_ms=per_move, handshake_ms=handshake, margin_ms=margin,
                       clock=charge, nodes=nodes, depth=depth)


def fresh_option(what: str) -> Callable[[_F], _F]:
    """``--fresh``: discard what an earlier run left in the output folder (``what``) and
    start over; the old name ``--restart`` is kept, hidden, and warns (``restart`` elsewhere
    means a bot process kept between games)."""
    def warn(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
        if value:
            click.echo("warning: --restart is now called --fresh (it discards results)",
                       err=True)
        return value

    def decorate(f: _F) -> _F:
        f = click.option("--restart", "restart_alias", is_flag=True, hidden=True,
                         callback=warn)(f)
        return click.option("--fresh", is_flag=True, help=f"Discard {what} and start over.")(f)
    return decorate


def pgn_out_option(more: str) -> Callable[[_F], _F]:
    """``--pgn-out FILE``: each game appended to FILE as PGN as it ends (``more``: the rest
    of the help's sentence, for the command)."""
    return click.option("--pgn-out", "pgn_out", type=click.Path(dir_okay=False), default=None,
                        metavar="FILE",
                        help="Append each game to FILE as PGN as it ends, with {score/depth "
                             f"time}} after each move {more}.")


def adjudication_options(f: _F) -> _F:
    """``--draw``, ``--resign``, ``--max-turns``, ``--tablebase``: the ``adjudicate:`` rules
    of a tournament file (docs/TOURNAMENTS.md, *adjudicate*), as options; read them with
    :func:`parse_adjudication_options`."""
    for option in reversed([
        click.option("--draw", "adj_draw", metavar="'after_turn=N turns=N score=N'",
                     help="Adjudicate a draw when both bots' scores stay within ±score for "
                          "that many turns each after that turn (cutechess's movenumber= "
                          "movecount= score= too)."),
        click.option("--resign", "adj_resign", metavar="'turns=N score=N [twosided=true]'",
                     help="Adjudicate a loss for a bot whose score stays at -score or less "
                          "for that many of its turns (cutechess's movecount= score= too)."),
        click.option("--max-turns", "adj_max_turns", type=click.IntRange(1, 1_000_000),
                     default=None, help="Adjudicate a draw once this many turns each are "
                                        "played."),
        click.option("--tablebase", "adj_tablebase", is_flag=False, flag_value="",
                     default=None, metavar="[DIR]",
                     help="End a game in an endgame the tables cover with their value "
                          "(DIR: the tables' folder; default: the tablebase cache)."),
    ]):
        f = option(f)
    return f


def parse_adjudication_options(draw: str | None, resign: str | None,
                               max_turns: int | None, tablebase: str | None) -> Any:
    """The :class:`arena.adjudication.Adjudication` of :func:`adjudication_options` (None
    when none is given).

    :raises ConfigError: a bad value, naming the option.
    """
    if draw is None and resign is None and max_turns is None and tablebase is None:
        return None
    from arena.adjudication import parse_adjudication, parse_tokens
    from arena.compat import adjudication_tokens

    data: dict[str, Any] = {}
    if draw is not None:  # cutechess's keys too: movenumber=40 movecount=8 score=10
        data["draw"] = adjudication_tokens("draw", parse_tokens(draw, "--draw"))
    if resign is not None:
        data["resign"] = adjudication_tokens("resign", parse_tokens(resign, "--resign"))
    if max_turns is not None:
        data["max_turns"] = max_turns
    if tablebase is not None:
        data["tablebase"] = tablebase or True
    return parse_adjudication(data, "adjudication")


def verbose_option(f: _F) -> _F:
    """``-v``: the log at info level on stderr; ``-vv``: also every protocol line the
    referee and the bots exchange.  The same meaning in every command."""
    return click.option("-v", "--verbose", count=True,
                        help="-v: show the log (info level) on stderr; -vv: also every "
                             "protocol line sent (<<) and received (>>).")(f)


def enable_verbose(level: int) -> None:
    """What :func:`verbose_option`'s count asks for, for a command that logs in this
    process (a run with workers sets its own handlers: it reads the count itself)."""
    import logging

    if level >= 1:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        logger = logging.getLogger("arena")
        logger.addHandler(handler)
        logger.setLevel(min(logger.level or logging.INFO, logging.INFO))
    if level >= 2:
        enable_protocol_log()


def warn_clock(tc: TimeControl) -> None:
    """Say once, on stderr, where the clock cannot be fair to bots on a busy machine (no
    per-bot CPU clock, or no way to tell a starved bot)."""
    from arena.sandbox import describe_charge

    _, warning = describe_charge(tc.clock, tc.wall_factor)
    if warning:
        click.echo(f"warning: {warning}", err=True)


def parse_isolation(level: str | None, read_only: tuple[str, ...] = ()) -> Isolation | None:
    """``--isolation`` and ``--read-only``: None (the default: best available, or
    MORRIS_ARENA_ISOLATION) when neither is given."""
    if level is None and not read_only:
        return None
    import dataclasses
    import os

    from arena.sandbox import Isolation

    iso = Isolation.parse(level, "--isolation") if level is not None else Isolation.default()
    paths = tuple(os.path.abspath(p) for p in read_only)
    for path in paths:
        if not os.path.exists(path):
            raise Failure(f"--read-only: no such file or folder: {path}")
    return dataclasses.replace(iso, read_only=(*iso.read_only, *paths)) if paths else iso


def read_only_option(f: _F) -> _F:
    """``--read-only PATH`` (repeatable): a folder bots may read, as a tournament file's
    ``isolation.read_only`` (a runtime or a virtual environment outside the bot's folder)."""
    return click.option("--read-only", "read_only", multiple=True, metavar="PATH",
                        type=click.Path(), help="A folder the bots may read (repeatable), "
                        "e.g. a virtual environment outside the bot's folder; as "
                        "isolation.read_only in a tournament file.")(f)


def warn_isolation(isolation: Isolation | None) -> None:
    """Say once, on stderr, what the isolation level in use does not protect (if anything)."""
    from arena.sandbox import Isolation, level_warning

    try:
        level = (isolation or Isolation.default()).level
    except ArenaError:
        return  # a bad MORRIS_ARENA_ISOLATION is reported where it is used
    warning = level_warning(level)
    if warning:
        click.echo(f"warning: {warning}", err=True)


def enable_protocol_log() -> None:
    """``-vv``: every protocol line of the bots and the referee on stderr, with its time
    (once: not passed on to the ``arena`` logger's handler of ``-v`` as well)."""
    import logging

    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(relativeCreated)8.0f ms %(message)s"))
    for name in ("arena.bot", "arena.referee"):
        logger = logging.getLogger(name)
        logger.setLevel(logging.DEBUG)
        logger.addHandler(handler)
        logger.propagate = False


#: ``play`` and ``check``: how long a bot may think, and how it is sandboxed
_TIME_OPTIONS = [
    click.option("--clock", "clock", metavar="BASE+INC",
                 help="A chess clock instead: base and increment in seconds, e.g. 60+1 "
                      "(base up to 86400, increment up to 3600), or moves per period as "
                      "cutechess writes it: 40/60+0.6 (60 s for 40 moves, then 60 s more)."),
    click.option("--handshake", type=click.IntRange(R.HANDSHAKE_MS.low, R.HANDSHAKE_MS.high),
                 default=5000, show_default=True,
                 metavar="MS", help="Time a bot gets to start (spawn to morrisok)."),
    click.option("--margin", type=click.IntRange(R.MARGIN_MS.low, R.MARGIN_MS.high),
                 default=100, show_default=True,
                 metavar="MS", help="Tolerance added to every deadline."),
    click.option("--charge", type=click.Choice(["auto", "own", "wall", "cpu"]),
                 default="auto", show_default=True,
                 help="What a move is charged: own, the bot's own time (wall time less the "
                      "time it waited for a CPU: fair on a busy machine both ways); wall, "
                      "elapsed time (cutechess's way); cpu, the CPU time of the bot's whole "
                      "process tree (a wall-clock cap 5 times larger ends a bot that "
                      "sleeps); auto, own where this machine reports run-queue waits "
                      "('arena doctor'), else wall."),
    click.option("--cpu-clock", is_flag=True, help="The same as --charge cpu."),
    click.option("--isolation", type=click.Choice(["none", "basic", "bwrap", "best"]),
                 default=None, help="How bots are sandboxed (default: the best this machine "
                                    "supports; see 'arena doctor')."),
]


def limit_options(f: _F) -> _F:
    """``--nodes N`` and ``--depth N``: sent in ``go`` (``go nodes 1000``), kept by the bot
    only (the referee cannot count them); such moves are capped at ``--movetime``, or the
    clock, or 10 s."""
    f = click.option("--depth", type=click.IntRange(R.DEPTH.low, R.DEPTH.high), metavar="N",
                     help="Search depth per move, sent as 'go depth N' (kept by the bot "
                          "alone: the referee cannot see it). Without --movetime or --clock "
                          "a move is still capped at 10000 ms.")(f)
    return click.option("--nodes", type=click.IntRange(R.NODES.low, R.NODES.high),
                        metavar="N",
                        help="Nodes per move, sent as 'go nodes N' (kept by the bot alone: "
                             "the referee cannot count them). Without --movetime or --clock "
                             "a move is still capped at 10000 ms.")(f)


def movetime_option(default_ms: int, why: str) -> Callable[[_F], _F]:
    """``--movetime MS``, its default and the reason for it shown in ``--help``."""
    return click.option(
        "--movetime", type=click.IntRange(R.MOVETIME_MS.low, R.MOVETIME_MS.high), metavar="MS",
        help=f"Time per move in ms (default {default_ms}: {why}; at most an hour).")


def with_time_options(default_movetime: int, why: str) -> Callable[[_F], _F]:
    """Decorate a command with ``--movetime`` (its default and why) and the other
    time-control and isolation options, in their help order."""
    def decorate(f: _F) -> _F:
        for option in reversed([movetime_option(default_movetime, why), *_TIME_OPTIONS]):
            f = option(f)
        return f
    return decorate

