"""The submission check: does a bot start, speak the protocol and play legal, timely moves?

:func:`check_bot` first runs the bot's ``build:`` step if it has one
(:func:`arena.build.ensure_built`: only if the folder changed since its last build; a
failure, new or remembered for the same folder state, is a ``build-failure`` problem with the
build's last lines, and no game is played), then runs a
handshake on its own (timed, with the ``id``/``option`` lines kept),
then a few short games against an opponent (``bots/random`` by default) on each requested
variant, the bot taking both colours, and collects every problem with the offending line.
:func:`format_report` turns the result into the PASS/FAIL text ``arena check`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from arena.bot import BotProcess, BotSpec, Handshake, cut
from arena.build import BuildError, BuildResult, ensure_built
from arena.clock import TimeControl
from arena.errors import BotError, MoveError
from arena.hints import HANDSHAKE_HINT, ordinal, stderr_excerpt
from arena.protocol import SEED_MAX, escape_controls, format_option
from arena.records import GameRecord
from arena.referee import KeptBotPlayer, play_game
from arena.rules import COLOR_NAMES, Position
from arena.variants import Variant

if TYPE_CHECKING:
    from arena.sandbox import Isolation

#: the variants checked when none are named: three different boards
DEFAULT_VARIANTS = ("nine-mens-morris", "twelve-mens-morris", "six-mens-morris")
#: the default opponent, next to the package in a source checkout
DEFAULT_OPPONENT = Path(__file__).resolve().parent.parent / "bots" / "random"

#: the last lines of a failed build's output shown by :func:`format_report`
BUILD_LINES = 15

_KINDS = {"start-failure": "failed to start", "timeout": "timeout", "illegal-move": "illegal move",
          "protocol-error": "protocol error", "crash": "crash", "error": "error"}


@dataclass
class Problem:
    """One thing the bot did wrong: a kind (``timeout``, ``crash``...), what and where."""

    kind: str
    text: str
    line: Optional[str] = None
    stderr: str = ""
    #: the last lines of a failed build's output
    output: str = ""


@dataclass
class CheckReport:
    """Everything :func:`check_bot` found out."""

    bot: BotSpec
    #: the bot's build (None: it has no ``build:`` step, or its build failed)
    build: Optional[BuildResult] = None
    handshake: Optional[Handshake] = None
    games: list[GameRecord] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: games the machine was too busy to judge (void after their replays: the own clock
    #: could not tell whether a move was in time, see :func:`arena.verdicts.judge_own`)
    unjudged: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when no problem was found and every game was judged: a check never passes
        on games it could not judge."""
        return not self.problems and not self.unjudged

    @property
    def verdict(self) -> str:
        """``PASS``, ``FAIL`` (a problem found, whatever else) or ``NOT JUDGED`` (no
        problem, but a game the machine was too busy to judge: check again later)."""
        return "FAIL" if self.problems else "NOT JUDGED" if self.unjudged else "PASS"


def _last_lines(text: str, n: int = 3) -> str:
    return "\n".join(text.rstrip().splitlines()[-n:])


def check_build(spec: BotSpec, report: CheckReport, opponent: Optional[BotSpec] = None,
                isolation: Optional[Isolation] = None, retry: bool = False,
                on_output: Optional[Callable[[bytes], None]] = None) -> bool:
    """Run the bot's (and the opponent's) ``build:`` step if the folder changed since the
    last build (``retry``: also if the last build failed for this folder state).  False if
    the bot's build failed (a ``build-failure`` problem); the opponent's is a warning.
    ``on_output`` receives the bot's build output as it comes."""
    if spec.build:
        try:
            report.build = ensure_built(spec, isolation=isolation, retry_failed=retry,
                                        on_output=on_output)
        except BuildError as e:
            report.problems.append(Problem("build-failure", str(e),
                                           output=_last_lines(e.log, BUILD_LINES)))
            return False
    if opponent is not None and opponent.build:
        try:
            ensure_built(opponent, isolation=isolation, retry_failed=retry)
        except BuildError as e:
            report.warnings.append(f"the opponent's build failed: {e}")
    return True


def check_handshake(spec: BotSpec, tc: TimeControl, variant: Variant, report: CheckReport,
                    isolation: Optional[Isolation] = None) -> bool:
    """Start the bot alone: handshake, ``isready``, ``quit``.  False if it failed to start."""
    bp = BotProcess(spec, label=f"check:{spec.name}", isolation=isolation)
    failure: Optional[BotError] = None
    try:
        bp.start()
        report.handshake = bp.read_handshake(tc.handshake_ms / 1000.0)
        bp.new_game(variant.name, variant.to_params(), spec.options, tc.handshake_ms / 1000.0)
    except BotError as e:
        failure = e
    finally:
        bp.close()
    if failure is not None:
        text = str(failure)
        # a handshake timeout of a bot that ended without a word, or whose output waited
        # in a buffer, is no slow start
        slow = "timeout" in text and HANDSHAKE_HINT not in text and "in a buffer" not in text
        report.problems.append(Problem("slow start" if slow else "failed to start", text,
                                       cut(failure.line), stderr_excerpt(bp.stderr_tail())))
        return False
    hs = report.handshake
    assert hs is not None
    if bp.returncode is not None and bp.returncode < 0:
        report.warnings.append(f"did not exit by itself after 'quit' ({bp.returncode}: killed)")
    if hs.ms > tc.handshake_ms / 2:
        report.warnings.append(f"slow start: {hs.ms:.0f} ms of the {tc.handshake_ms} ms allowed")
    if "name" not in hs.id:
        report.warnings.append("no 'id name' line in the handshake")
    return True


#: games one process of the bot plays in a row in the check's last step: a ``newgame``
#: after a finished game, with the other colour
KEPT_GAMES = 2


def check_bot(spec: BotSpec, *, variants: Sequence[Variant], games: int, time_control: TimeControl,
              opponent: BotSpec, on_game: Optional[Callable[[GameRecord], None]] = None,
              isolation: Optional[Isolation] = None, retry_build: bool = False,
              kept_games: int = KEPT_GAMES, on_step: Optional[Callable[[str], None]] = None,
              on_output: Optional[Callable[[bytes], None]] = None,
              seed: int = 0) -> CheckReport:
    """The build (if any), handshake, then ``games`` games per variant against ``opponent``,
    colours alternating (the bot is white in the first), each with a fresh process; then
    ``kept_games`` games in a row by one process of the bot (``newgame`` between them, as
    ``restart: per-pairing`` plays), on the first variant.  Stops after the build or the
    handshake if it fails, and skips the games in a row if an earlier game failed.
    ``isolation`` sandboxes the build and the games (default: the best level available);
    ``retry_build``: build again even if the last build failed for the same folder state.
    ``on_step`` is told each step as it starts (``building: make``, ``playing
    nine-mens-morris game 2 of 2 as black``...: what a stopped check was doing);
    ``on_output`` receives the build's output as it comes.  ``seed`` shifts the games'
    seeds (0: the same games every time)."""
    step = on_step or (lambda _text: None)
    report = CheckReport(spec)
    if spec.build:
        step(f"building: {_command_text(spec.build)}")
    if not check_build(spec, report, opponent, isolation, retry_build, on_output):
        return report
    step("starting the bot alone (handshake)")
    if not check_handshake(spec, time_control, variants[0], report, isolation):
        return report
    for variant in variants:
        for n in range(games):
            color = n % 2
            step(f"playing {variant.name} game {n + 1} of {games} as {COLOR_NAMES[color]}")
            white, black = (spec, opponent) if color == 0 else (opponent, spec)
            record = play_game(white, black, variant, time_control,
                               seed=(seed + n + 1) % (SEED_MAX + 1),
                               game_id=f"{variant.name}-{n + 1}", isolation=isolation)
            _judge(report, record, color, f"{variant.name} game {n + 1} as "
                                          f"{COLOR_NAMES[color]}", on_game, variant)
    if kept_games > 1 and not report.problems:
        step(f"playing {variants[0].name}: {kept_games} games by one process")
        _check_kept(spec, variants[0], time_control, opponent, report, isolation, kept_games,
                    on_game, seed)
    return report


def _check_kept(spec: BotSpec, variant: Variant, tc: TimeControl, opponent: BotSpec,
                report: CheckReport, isolation: Optional[Isolation], games: int,
                on_game: Optional[Callable[[GameRecord], None]], seed: int = 0) -> None:
    """``games`` games by one process of the bot, colours alternating: a bot that keeps
    state wrongly between games (or ignores ``newgame``) fails here."""
    player = KeptBotPlayer(spec, label=f"check-kept:{spec.name}", isolation=isolation)
    try:
        for n in range(games):
            color = n % 2
            white, black = (player, opponent) if color == 0 else (opponent, player)
            record = play_game(white, black, variant, tc,
                               seed=(seed + 100 + n) % (SEED_MAX + 1),
                               game_id=f"{variant.name}-kept-{n + 1}", isolation=isolation)
            _judge(report, record, color, f"{variant.name} game {n + 1} of {games} played "
                                          f"by one process (newgame between games) as "
                                          f"{COLOR_NAMES[color]}", on_game, variant)
            if not player.alive:
                break
    finally:
        player.close()


def _judge(report: CheckReport, record: GameRecord, color: int, where: str,
           on_game: Optional[Callable[[GameRecord], None]], variant: Variant) -> None:
    """Add ``record`` (the bot played ``color``) to the report, with its problem, if any."""
    report.games.append(record)
    if on_game is not None:
        on_game(record)
    if record.void:  # the machine, not the bot: not held against it, nor passed
        report.unjudged.append(f"{where}: {record.void}")
    elif record.forfeit == COLOR_NAMES[color]:
        report.problems.append(Problem(
            _KINDS.get(record.termination, record.termination),
            f"{where}, {_when(record, color, variant)}: {record.detail}",
            record.offending_line, stderr_excerpt(record.stderr.get(COLOR_NAMES[color], ""))))
    elif record.forfeit is not None:
        report.warnings.append(f"{where}: the opponent failed ({record.detail})")


def _when(record: GameRecord, color: int, variant: Variant) -> str:
    """When in the game the bot of ``color`` failed: the game's move number (both sides'
    moves) and the bot's own count, which is the one its author has in mind (``move 9 of
    the game (your 5th move)``), from the game replayed (the opening's moves are the
    referee's, not the bot's)."""
    if record.termination == "start-failure" and not record.moves:
        return "at the start"
    ply = len(record.moves) + 1
    pos, own = Position(variant), 0
    try:
        for info in record.moves:
            if pos.turn == color and not info.opening:
                own += 1
            pos.push_text(info.move)
    except (MoveError, ValueError):  # not replayable here: the game's count alone
        return f"move {ply}"
    if pos.outcome() is not None or pos.turn != color:  # failed while the other moved
        return f"move {ply} of the game (after your {ordinal(own)} move)" if own \
            else f"move {ply} of the game (before your first move)"
    return f"move {ply} of the game (your {ordinal(own + 1)} move)"


def format_report(report: CheckReport) -> list[str]:
    """The report as lines of text, ending with PASS, FAIL or NOT JUDGED."""
    out = [f"checking {report.bot.name} ({report.bot.path})"]
    if report.build is not None:
        out.append(f"build: {report.build.describe()}: {_command_text(report.build.command)}")
    hs = report.handshake
    if hs is not None:
        out.append(f"handshake: {hs.ms:.0f} ms")
        out += [f"  id {k} {v}" for k, v in hs.id.items()]
        out += [f"  {format_option(o)}" for o in hs.options]
    for rec in report.games:
        out.append(f"game {rec.game_id}: {rec.white.name} - {rec.black.name} {rec.result} "
                   f"({rec.termination}, {len(rec.moves)} moves)")
    for w in report.warnings:
        out.append(f"warning: {w}")
    for u in report.unjudged:
        out.append(f"not judged: {u}")
    for p in report.problems:
        out.append(f"problem: {p.kind}: {p.text}")
        if p.line is not None:
            out.append(f"  offending line: {p.line!r}")
        if p.stderr:
            out += [f"  stderr: {ln}" for ln in p.stderr.splitlines()]
        if p.output:
            out.append("  build output (last lines):")
            out += [f"  | {ln}" for ln in p.output.splitlines()]
    if report.passed:
        out.append(f"PASS: {report.bot.name} started, spoke the protocol and played "
                   f"{len(report.games)} games without a fault")
    elif report.problems:
        out.append(f"FAIL: {len(report.problems)} problem(s)")
    else:
        out.append(f"NOT JUDGED: {len(report.unjudged)} of {len(report.games)} games could "
                   "not be judged: the machine was too busy (it gave the bot too little CPU "
                   "to tell whether its moves were in time); check again when it is quieter")
    return [escape_controls(line) for line in out]  # ids, options, stderr: the bot's text


def _command_text(command: tuple[str, ...]) -> str:
    """A build command as written in ``bot.yaml`` (the text given to ``/bin/sh -c``)."""
    import shlex

    if len(command) == 3 and command[:2] == ("/bin/sh", "-c"):
        return command[2]
    return shlex.join(command)


__all__ = ["CheckReport", "Problem", "check_bot", "check_build", "check_handshake", "format_report",
           "DEFAULT_VARIANTS", "DEFAULT_OPPONENT"]
