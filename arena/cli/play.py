"""The referee commands: ``arena play`` (one game), ``arena check`` (a submission check) and
``arena doctor`` (what this machine's sandbox supports)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from arena.cli.common import (Failure, adjudication_options, enable_verbose, engine_arg,
                              limit_options, parse_adjudication_options, parse_isolation,
                              parse_options, read_only_option, time_control, verbose_option,
                              warn_clock, warn_isolation, with_time_options)
from arena.protocol import SEED_MAX, escape_controls
from arena.clock import CHECK_MOVETIME_MS, MOVETIME_MS

#: ``arena check``'s exit status when the machine was too busy to judge the bot
NOT_JUDGED_EXIT = 3

if TYPE_CHECKING:
    from arena.bot import BotSpec
    from arena.referee import Player
    from arena.sandbox import Isolation


def _load_bot_arg(arg: str, options: dict[str, str]) -> BotSpec:
    """A bot folder, or an engine string (``"cmd=./mybot name=mine option.Depth=3"``:
    :func:`~arena.cli.common.engine_arg`); a bare name that is not a folder is looked up
    under ``bots/`` here, then under the example bots next to the package."""
    from pathlib import Path

    from arena.bot import load_bot
    from arena.check import DEFAULT_OPPONENT

    engine = engine_arg(arg, options)
    if engine is not None:
        return engine
    path = Path(arg)
    if not path.is_dir() and "/" not in arg:
        for root in (Path("bots"), DEFAULT_OPPONENT.parent):
            if (root / arg).is_dir():
                path = root / arg
                break
    return load_bot(path, options=options)


def _preflight(spec: BotSpec, sandbox: Isolation | None, handshake_s: float) -> None:
    """Build the bot if it has a build step and check its options against its handshake
    (an :class:`~arena.options.OptionError`, exit 2, names a bad one).  Skipped for a bot
    with neither: the game's own start shows everything.  A bot that fails here is left to
    the game, which records the failure as a forfeit with its stderr."""
    from arena.errors import BotError
    from arena.preflight import bot_label, preflight

    if not spec.options and not spec.build:
        return
    try:
        preflight(spec, isolation=sandbox, handshake_s=handshake_s)
    except BotError as e:
        from arena.build import BuildError

        if isinstance(e, BuildError):  # said here with its output; the game forfeits
            click.echo(f"{bot_label(spec)}: {e}", err=True)
        # else the game fails to start the same way, and says so in full


@click.command()
@click.argument("bot_a", metavar="BOT_A")
@click.argument("bot_b", metavar="BOT_B")
@click.option("--variant", default="nine-mens-morris", show_default=True,
              help="A preset name (see 'arena variants') or a variant YAML file.")
@with_time_options(MOVETIME_MS, "as in a tournament file without 'time'")
@limit_options
@click.option("--seed", type=click.IntRange(0, SEED_MAX), help="Seed sent to bots with a Seed option.")
@click.option("--opening", default="", metavar="MOVES", help="Moves played first, e.g. 'd6 d2'.")
@click.option("--position", "start", default=None, metavar="TEXT",
              help="Start from this position (the protocol's position text, e.g. "
                   "'W...B.....B..W.....B.W.. w 6 6 6 - - 6'; see docs/PROTOCOL.md); "
                   "--opening moves are then played from it.")
@click.option("--quiet", is_flag=True, help="Do not show the board after every move.")
@click.option("--record", "record_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Save the game record as JSON.")
@click.option("--option-a", multiple=True, metavar="K=V",
              help="An option for BOT_A (repeatable; merged over its bot.yaml options). Every "
                   "option is checked against those the bot declares before the game.")
@click.option("--option-b", multiple=True, metavar="K=V", help="An option for BOT_B (the same).")
@read_only_option
@adjudication_options
@verbose_option
def play(bot_a: str, bot_b: str, variant: str, movetime: int | None, clock: str | None,
         handshake: int, margin: int, cpu_clock: bool, charge: str,
         isolation: str | None, nodes: int | None, depth: int | None,
         seed: int | None, opening: str, start: str | None, quiet: bool,
         record_path: str | None, option_a: tuple[str, ...], option_b: tuple[str, ...],
         read_only: tuple[str, ...], adj_draw: str | None, adj_resign: str | None,
         adj_max_turns: int | None, adj_tablebase: str | None, verbose: int) -> None:
    """Play one game: BOT_A (white) against BOT_B (black).

    A bot is a bot folder (with bot.yaml), a name under bots/, an engine string as
    cutechess names engines ("cmd='./mybot --fast' name=fast option.Depth=3": keys cmd,
    name, dir, arg, option.NAME, legal_moves, variants; see docs/BOTS.md), or 'human' to
    type moves yourself.  Prints the board as the game goes, then the result and how the game ended
    (for a forfeit: which side failed, why, and the offending line).  Exit status 0 for a
    game played (whatever its result), 1 when a bot could not start (or build), 2 on bad
    input.
    """
    from pathlib import Path

    from arena.records import MoveInfo
    from arena.referee import HumanPlayer, Player, play_game
    from arena.rules import COLOR_NAMES, Position
    from arena.variants import load_variant

    from arena.openings import check_start

    tc = time_control(movetime, clock, handshake, margin, default_movetime=MOVETIME_MS,
                      cpu_clock=cpu_clock, charge=charge, nodes=nodes, depth=depth)
    sandbox = parse_isolation(isolation, read_only)
    var = load_variant(variant)
    if start is not None:  # checked before any bot starts: one line naming the option
        start = check_start(var, start, "--position")
    sides: list[BotSpec | Player] = []
    for arg, pairs, flag in ((bot_a, option_a, "--option-a"), (bot_b, option_b, "--option-b")):
        options = parse_options(pairs, flag)
        if arg == "human" and not Path(arg).is_dir():
            if options:
                raise Failure(f"{flag}: a human player takes no options")
            sides.append(HumanPlayer("human", write=click.echo, show_board=quiet))
        else:
            sides.append(_load_bot_arg(arg, options))
    enable_verbose(verbose)
    for side in sides:
        if not isinstance(side, Player):
            _preflight(side, sandbox, tc.handshake_ms / 1000.0)
    names = [s.name if not isinstance(s, Player) else s.info.name for s in sides]
    click.echo(f"{names[0]} (white) vs {names[1]} (black): {var.name}, {tc.describe()}")
    warn_clock(tc)

    def show(pos: Position, info: MoveInfo) -> None:
        mover = COLOR_NAMES[1 - pos.turn]
        how = "opening" if info.opening else f"{info.wall_ms:.1f} ms"
        click.echo(f"{pos.ply}. {mover} {info.move} ({how})")
        if not quiet:
            click.echo(pos.board_text() + "\n")

    if not quiet:
        click.echo((Position.from_text(var, start) if start else Position(var)).board_text()
                   + "\n")
    adjudicate = parse_adjudication_options(adj_draw, adj_resign, adj_max_turns,
                                            adj_tablebase)
    # an id of its own, so that records saved by several plays and gathered into one
    # games.jsonl stay apart (the report's viewer pages, arena analyse)
    import secrets
    from datetime import datetime, timezone

    game_id = (f"play/{var.name}/{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}-"
               f"{secrets.token_hex(4)}")
    record = play_game(sides[0], sides[1], var, tc, opening=opening.split(), seed=seed,
                       start=start,
                       on_move=show, isolation=sandbox, adjudicate=adjudicate,
                       game_id=game_id)
    for reason in record.replays:
        click.echo(f"not counted, played again (a bot was starved by the machine): {reason}")
    click.echo(f"result: {record.result} ({record.termination}): {record.detail}")
    if record.void:
        click.echo(f"warning: {record.void}: the machine is too busy for a fair game",
                   err=True)
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
    if record.termination == "start-failure":  # no game was played: not a success
        failed = record.white if record.forfeit == "white" else record.black
        side = sides[0 if record.forfeit == "white" else 1]
        import shlex

        named = (shlex.quote(side.engine) if not isinstance(side, Player) and side.engine
                 else failed.path or failed.name)
        click.echo(f"{failed.name} could not start: 'arena check {named}' says more", err=True)
        raise SystemExit(1)


@click.command()
@click.argument("bot")
@click.option("--variant", "variants", multiple=True, metavar="V",
              help="A variant to play (repeatable; default: the variants the bot's bot.yaml "
                   "lists under 'variants:', else nine-mens-morris, twelve-mens-morris, "
                   "six-mens-morris). A variant the bot does not list is refused.")
@click.option("--games", type=click.IntRange(1, 100), default=2, show_default=True,
              help="Games per variant, colours alternating.")
@with_time_options(CHECK_MOVETIME_MS, "a check tests legality, not strength; a bot that "
                   "answers in time here also does at a tournament's 1000")
@limit_options
@click.option("--opponent", metavar="BOT",
              help="The bot to play against: a folder or an engine string (default: "
                   "bots/random).")
@click.option("--seed", type=click.IntRange(0, SEED_MAX), default=None,
              help="Seed of the check's games (sent to the bots' Seed option; default: fixed "
                   "seeds, the same every time).")
@read_only_option
@verbose_option
def check(bot: str, variants: tuple[str, ...], games: int, movetime: int | None,
          clock: str | None, handshake: int, margin: int, cpu_clock: bool,
          charge: str, isolation: str | None, nodes: int | None, depth: int | None,
          opponent: str | None, seed: int | None, read_only: tuple[str, ...],
          verbose: int) -> None:
    """Check a bot submission: handshake, then short games against bots/random on each
    variant its bot.yaml lists under 'variants:' (else three boards: see --variant).
    BOT is a bot folder or an engine string ("cmd=./mybot name=mine", as for 'arena play').

    Reports the handshake time and the id/option lines, then every problem (slow start,
    illegal move, timeout, protocol error, crash) with the offending line.  Exit status 0
    only on PASS (1 on FAIL, 3 on NOT JUDGED: the machine was too busy to tell whether the
    bot's moves were in time; 2 on bad input).
    """
    from arena.check import DEFAULT_OPPONENT, DEFAULT_VARIANTS, check_bot, format_report
    from arena.options import check_options
    from arena.preflight import bot_label
    from arena.variants import load_variant

    tc = time_control(movetime, clock, handshake, margin, default_movetime=CHECK_MOVETIME_MS,
                      cpu_clock=cpu_clock, charge=charge, nodes=nodes, depth=depth)
    sandbox = parse_isolation(isolation, read_only)
    spec = _load_bot_arg(bot, {})
    opp = _load_bot_arg(opponent, {}) if opponent else _load_bot_arg(str(DEFAULT_OPPONENT), {})
    vars_ = [load_variant(v) for v in (variants or spec.variants or DEFAULT_VARIANTS)]
    for who, player in (("the bot", spec), ("the opponent", opp)):
        refused = [v.name for v in vars_ if player.variants and v.name not in player.variants]
        if refused:
            given = f"--variant {refused[0]}" if variants else refused[0]
            raise Failure(f"{given}: {who} ({bot_label(player)}) plays only "
                          f"{', '.join(player.variants)} (its bot.yaml 'variants:')")
    warn_isolation(sandbox)
    enable_verbose(verbose)
    if not spec.build:  # with a build step, a failed build is the check's own verdict
        _preflight(spec, sandbox, tc.handshake_ms / 1000.0)
    click.echo(f"time control {tc.describe()}, handshake {tc.handshake_ms} ms, "
               f"margin {tc.margin_ms} ms; opponent {opp.name}")
    warn_clock(tc)
    report = check_bot(spec, variants=vars_, games=games, time_control=tc, opponent=opp,
                       isolation=sandbox, retry_build=True,  # a check always builds again
                       seed=seed or 0)
    for line in format_report(report):
        click.echo(line)
    if spec.build and report.handshake is not None:  # not checked before the build
        check_options(spec.options, report.handshake.options, bot=bot_label(spec))
    if not report.passed:
        raise SystemExit(1 if report.problems else NOT_JUDGED_EXIT)


@click.command()
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
