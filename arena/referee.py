"""The referee: plays one game between two players and returns its :class:`GameRecord`.

>>> from arena.bot import load_bot
>>> from arena.clock import TimeControl
>>> from arena.variants import get_variant
>>> record = play_game(load_bot("bots/random"), load_bot("bots/random"),
...                    get_variant("nine-mens-morris"), TimeControl.parse("1000"), seed=1)
>>> record.result, record.termination                                   # doctest: +SKIP
('1-0', 'blocked')

:func:`play_game` never raises for anything a bot does: a bot that fails to start, runs out
of time, crashes, breaks the protocol or plays an illegal move loses the game, and the
record says how (``termination``, ``forfeit``, ``detail``, ``offending_line``).  A line
other than ``info`` that a bot sends when nothing was asked (before its next request, or
after its last move when the game ends by the rules) is a protocol error too.  ``detail`` is
display text: what it quotes of a bot's output has its control characters escaped
(``offending_line`` and ``stderr`` keep the raw text).  Rules endings come from
:meth:`Position.outcome`, checked before every move.  The referee keeps one incremental
:class:`Position` per game (no replay per move) and measures every move itself.  Bad input
from the caller (an illegal opening) is a :class:`ConfigError`.

A side is a :class:`Player`: :class:`BotPlayer` (a bot process, owned by its
:class:`~arena.bot.BotProcess`) or :class:`HumanPlayer` (moves typed on a terminal).
"""

from __future__ import annotations

import abc
import logging
import random
import socket
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union

from arena.bot import BotProcess, BotSpec, cut
from arena.clock import GameClock, TimeControl
from arena.errors import (BotCrashed, BotError, BotStartError, BotTimeout, ConfigError, IllegalMove,
                          MoveError, ProtocolError)
from arena.adjudication import Adjudication, Adjudicator, Verdict
from arena.hints import LEGAL_MOVES_HINT
from arena.openings import check_opening, start_and_opening  # noqa: F401 (check_opening: moved)
from arena.protocol import SEED_MAX, Go, escape_controls, gameover_reason
from arena.records import GameRecord, MoveInfo, PlayerInfo
from arena.rules import COLOR_NAMES, Position, Termination
from arena.verdicts import (IN_TIME, UNJUDGED, illegal_move_text, judge_own, starved,
                            tablebase_verdict, timeout_text)
from arena.variants import Variant, get_variant

if TYPE_CHECKING:
    from arena.sandbox import Isolation
    from arena.sandbox.ownclock import OwnTime

log = logging.getLogger("arena.referee")

OnMove = Callable[[Position, MoveInfo], None]

#: seconds a bot that forfeited gets to exit after ``quit`` (then SIGTERM)
FAILED_QUIT_GRACE_S = 0.05
#: times a game whose time forfeit came from a starved bot is played again (then counted)
STARVED_REPLAYS = 3


_TERMINATIONS: tuple[tuple[type[BotError], Termination, str], ...] = (
    (BotStartError, Termination.START_FAILURE, "failed to start"),
    (BotTimeout, Termination.TIMEOUT, "ran out of time"),
    (BotCrashed, Termination.CRASH, "crashed"),
    (IllegalMove, Termination.ILLEGAL_MOVE, "played an illegal move"),
    (ProtocolError, Termination.PROTOCOL_ERROR, "broke the protocol"),
)


def termination_of(error: BotError) -> tuple[Termination, str]:
    """The forfeit termination for a bot error, and a verb phrase for it."""
    for kind, term, phrase in _TERMINATIONS:
        if isinstance(error, kind):
            return term, phrase
    return Termination.ERROR, "failed"


# --------------------------------------------------------------------------------------
# Players
# --------------------------------------------------------------------------------------


class Player(abc.ABC):
    """One side of a game as the referee sees it.

    Lifecycle: :meth:`start` (both sides, so bots boot in parallel), :meth:`prepare`,
    :meth:`choose` per move, then :meth:`begin_finish` and :meth:`end_finish` (both sides,
    so they shut down in parallel).  Failures are :class:`BotError` subclasses.
    """

    #: whether the time control applies to this player
    timed: bool = True
    #: CPU ms the last :meth:`choose` used, when the player can measure it
    last_cpu_ms: Optional[float] = None
    #: the run-queue wait (ms) during the last move, where measured (see BotProcess.run_delay)
    last_wait_ms: Optional[float] = None
    #: what the bot said of its search for the last move (``info`` fields), if anything
    last_info: Optional[dict[str, Any]] = None
    #: the own clock's reading of the last move (with ``own_limit_s``), where measured
    last_own: Optional[OwnTime] = None

    def __init__(self, info: PlayerInfo) -> None:
        self.info = info

    def next_info(self) -> PlayerInfo:
        """The :class:`PlayerInfo` of the game about to start (a player kept for several
        games gives each game its own)."""
        return self.info

    def start(self) -> None:
        """Begin starting (spawn a process); may do nothing."""

    def prepare(self, variant: Variant, seed: int, handshake_s: float) -> None:
        """Finish starting and set up a new game of ``variant``."""

    def set_up(self, position_text: str) -> None:
        """The game starts from ``position_text``, not the variant's start (a bot is told
        ``setup``: docs/PROTOCOL.md)."""

    @abc.abstractmethod
    def choose(self, position: Position, moves: Sequence[str], go: Go,
               timeout_s: Optional[float], *, cpu_limit_s: Optional[float] = None,
               own_limit_s: Optional[float] = None,
               after_send: Optional[Callable[[], object]] = None) -> tuple[str, float]:
        """The move text for ``position`` (reached by ``moves``) and the wall ms it took.

        ``cpu_limit_s`` (CPU clock only) bounds the CPU time the move may use; a player that
        measures CPU sets :attr:`last_cpu_ms` (without ``cpu_limit_s``, possibly only at
        :meth:`take_cpu`).  ``own_limit_s`` (own clock only) bounds the move's own time; a
        player that measures it sets :attr:`last_own`.  ``after_send``, if given, may be called once the request is out
        and the player is thinking (the referee's bookkeeping of the previous move)."""

    def take_cpu(self) -> Optional[float]:
        """:attr:`last_cpu_ms` of the last :meth:`choose`, read now if it was put off (and
        :attr:`last_wait_ms` with it)."""
        return self.last_cpu_ms

    def check_idle(self) -> None:
        """Fail if the player said something while not asked (called when a game ends by the
        rules: between moves, :meth:`choose` does this check itself)."""

    def begin_finish(self, result: str, reason: str, *, failed: bool = False) -> None:
        """Tell the player the game is over (``result``, ``reason``); ``failed`` if it forfeited."""

    def end_finish(self) -> None:
        """Release everything the player holds."""

    def stderr_tail(self) -> str:
        """Diagnostics the player wrote (a bot's stderr tail)."""
        return ""


class BotPlayer(Player):
    """A bot process as a player; the :class:`BotProcess` owns the process."""

    def __init__(self, spec: BotSpec, *, label: str = "", quit_grace_s: Optional[float] = None,
                 term_grace_s: Optional[float] = None,
                 isolation: Optional[Isolation] = None) -> None:
        super().__init__(PlayerInfo(name=spec.name, bot=spec.folder_name, path=spec.path,
                                    options=dict(spec.options)))
        self.spec = spec
        kwargs: dict[str, Any] = {"isolation": isolation}
        if quit_grace_s is not None:
            kwargs["quit_grace_s"] = quit_grace_s
        if term_grace_s is not None:
            kwargs["term_grace_s"] = term_grace_s
        self.process = BotProcess(spec, label=label or spec.name, **kwargs)

    def start(self) -> None:
        """Spawn the bot (it starts booting while the other side does too)."""
        self.process.start()

    def prepare(self, variant: Variant, seed: int, handshake_s: float) -> None:
        """Read the handshake; set the options (and ``Seed`` if declared and unset); new game."""
        hs = self.process.read_handshake(handshake_s)
        options = dict(self.spec.options)
        declared = hs.option("Seed")
        if declared is not None and not any(k.lower() == "seed" for k in options):
            options[declared.name] = str(seed)
        self.info.options = options
        self.process.new_game(variant.name, variant.to_params(), options, handshake_s)

    def choose(self, position: Position, moves: Sequence[str], go: Go,
               timeout_s: Optional[float], *, cpu_limit_s: Optional[float] = None,
               own_limit_s: Optional[float] = None,
               after_send: Optional[Callable[[], object]] = None) -> tuple[str, float]:
        """``position`` (and ``legalmoves``, if the bot asked for it) and ``go`` to the bot;
        its ``bestmove`` and the referee-measured ms.  The CPU reading waits for
        :meth:`take_cpu` unless ``cpu_limit_s`` needs it at once."""
        legal = [m.text for m in position.legal_moves()] if self.spec.legal_moves else None
        try:
            return self.process.go(position.to_text(), moves, go, timeout_s,
                                   cpu_limit_s=cpu_limit_s, own_limit_s=own_limit_s,
                                   legal=legal, cpu_now=cpu_limit_s is not None,
                                   after_send=after_send)
        finally:
            self.last_cpu_ms = self.process.last_cpu_ms
            self.last_info = self.process.last_info
            self.last_own = self.process.last_own

    def set_up(self, position_text: str) -> None:
        self.process.set_up(position_text)

    def take_cpu(self) -> Optional[float]:
        """The last move's CPU ms, read from the bot's process tree now if it was put off."""
        self.last_cpu_ms = self.process.take_cpu()
        self.last_wait_ms = self.process.last_wait_ms
        return self.last_cpu_ms

    def check_idle(self) -> None:
        """A line other than ``info`` since the bot's last answer is a :class:`ProtocolError`
        (see :meth:`BotProcess.check_idle`; a bot that exited after its last move is not
        blamed for it: the game is over)."""
        try:
            self.process.check_idle()
        except BotCrashed:
            pass

    def begin_finish(self, result: str, reason: str, *, failed: bool = False) -> None:
        """``gameover``, ``quit``, close the bot's input.  A bot that failed is not expected
        to listen: it gets only :data:`FAILED_QUIT_GRACE_S` to exit before SIGTERM."""
        if failed:
            self.process.quit_grace_s = min(self.process.quit_grace_s, FAILED_QUIT_GRACE_S)
        self.process.begin_close(result, reason)

    def end_finish(self) -> None:
        """Wait, then SIGTERM/SIGKILL what is left of the bot."""
        self.process.finish_close()

    def stderr_tail(self) -> str:
        """The bot's stderr tail (capped)."""
        return self.process.stderr_tail()


class KeptBotPlayer(BotPlayer):
    """A bot process kept between games (``restart: per-pairing``): started once, it gets
    ``newgame`` for each game and ``gameover`` after it, and plays either colour.

    A bot that fails a game (crash, timeout, illegal move, protocol error...) is closed as
    usual at the end of that game and :attr:`alive` turns False: whoever keeps it starts a
    fresh one for the next game.  :meth:`close` ends a healthy one (``quit``).  CPU time,
    sandbox and limits stay the process's own; ``info.games_before`` says how many games the
    process played before the current one.  Between games the process and its children
    are paused (frozen: :meth:`BotProcess.pause`), so a bot cannot think, or spin, on
    nobody's time; the next game resumes it, and :meth:`close` resumes it to end it.
    """

    def __init__(self, spec: BotSpec, *, label: str = "", quit_grace_s: Optional[float] = None,
                 term_grace_s: Optional[float] = None,
                 isolation: Optional[Isolation] = None) -> None:
        super().__init__(spec, label=label, quit_grace_s=quit_grace_s,
                         term_grace_s=term_grace_s, isolation=isolation)
        self.games = 0
        #: stderr bytes already in an earlier game's record
        self._stderr_reported = 0
        self._seed_option: Optional[str] = None
        self._handshaken = False
        self._in_game = False
        self._failed = False

    @property
    def alive(self) -> bool:
        """True while the process can play another game."""
        return not self._failed and (self.process.proc is None
                                     or self.process.returncode is None)

    def next_info(self) -> PlayerInfo:
        """A fresh :class:`PlayerInfo` per game (the records of earlier games keep theirs)."""
        self.info = PlayerInfo(name=self.spec.name, bot=self.spec.folder_name,
                               path=self.spec.path, options=dict(self.spec.options),
                               games_before=self.games)
        return self.info

    def start(self) -> None:
        """Spawn the bot for its first game; later games find it running, and resume it
        (it was paused between games)."""
        if self.process.proc is None:
            self.process.start()
        else:
            self.process.resume()

    def prepare(self, variant: Variant, seed: int, handshake_s: float) -> None:
        """The first game reads the handshake; every game sets the options (and this game's
        ``Seed``) and sends ``newgame``."""
        if not self._handshaken:
            declared = self.process.read_handshake(handshake_s).option("Seed")
            self._seed_option = declared.name if declared is not None else None
            self._handshaken = True
        options = dict(self.spec.options)
        if self._seed_option is not None and not any(k.lower() == "seed" for k in options):
            options[self._seed_option] = str(seed)
        self.info.options = options
        self._in_game = True
        self.process.new_game(variant.name, variant.to_params(), options, handshake_s)

    def begin_finish(self, result: str, reason: str, *, failed: bool = False) -> None:
        """``gameover`` to a bot that played the game through (it stays up for the next);
        a bot that failed, or cannot be told, is closed.  A bot whose game never began (the
        other side failed to start first) is told nothing."""
        in_game, self._in_game = self._in_game, False
        if in_game:
            self.games += 1
        if not failed and self.alive and not in_game:
            return  # no newgame was sent this time: nothing to end
        if not failed and self.alive:
            try:
                self.process.game_over(result, reason)
                return
            except BotError:
                pass
        self._failed = True
        super().begin_finish(result, reason, failed=failed)

    def end_finish(self) -> None:
        """Finish closing a bot that failed; a healthy one stays up, paused (frozen, its
        children too: it uses no CPU) until its next game, or :meth:`close`."""
        if self._failed:
            super().end_finish()
        elif self.process.proc is not None and self.alive:
            self.process.pause()

    def stderr_tail(self) -> str:
        """What the bot wrote on stderr since the previous game's record took its part (each
        game's record holds its own game's output, not the whole process's so far)."""
        mark = self.process.settle_stderr()  # all it wrote before its last reply: this game's
        text = self.process.stderr_tail(self._stderr_reported)
        self._stderr_reported = mark
        return text

    def close(self) -> None:
        """Resume, ``quit`` and end the process (safe to call more than once).  What it
        wrote on stderr after its last game's record (on ``gameover`` or ``quit``) goes to
        the log, as no record can hold it."""
        self._failed = True
        self.process.close()
        left = self.process.stderr_tail(self._stderr_reported)
        if left.strip():
            self._stderr_reported = self.process.stderr_mark()
            log.info("%s wrote on stderr after its last game: %s", self.process.label,
                     escape_controls(left.strip()[-500:], "\n"))


class HumanPlayer(Player):
    """Moves typed on a terminal; a bad input shows why and the legal moves, then asks again.

    Untimed.  The end of input forfeits the game (as a crash: the player left).
    """

    timed = False

    def __init__(self, name: str = "human", *, read: Callable[[str], str] = input,
                 write: Callable[[str], None] = print, show_board: bool = False) -> None:
        super().__init__(PlayerInfo(name=name, bot="human"))
        self.read = read
        self.write = write
        self.show_board = show_board

    def choose(self, position: Position, moves: Sequence[str], go: Go,
               timeout_s: Optional[float], *, cpu_limit_s: Optional[float] = None,
               own_limit_s: Optional[float] = None,
               after_send: Optional[Callable[[], object]] = None) -> tuple[str, float]:
        """Prompt until a legal move is typed."""
        if after_send is not None:
            after_send()
        start = time.monotonic()
        if self.show_board:
            self.write(position.board_text())
        color = COLOR_NAMES[position.turn]
        while True:
            try:
                text = self.read(f"{self.info.name} ({color}) move: ").strip()
            except EOFError:
                self.write("")
                raise BotCrashed("the human player left (end of input)") from None
            if not text:
                continue
            try:
                move = position.parse_move(text)
            except MoveError:
                legal = " ".join(str(m) for m in position.legal_moves())
                self.write(f"{illegal_move_text(position, text)}\nlegal moves: {legal}")
                continue
            return str(move), (time.monotonic() - start) * 1000.0


def _as_player(side: Union[BotSpec, Player], color: str, quit_grace_s: Optional[float],
               term_grace_s: Optional[float], isolation: Optional[Isolation]) -> Player:
    if isinstance(side, Player):
        return side
    return BotPlayer(side, label=f"{color}:{side.name}", quit_grace_s=quit_grace_s,
                     term_grace_s=term_grace_s, isolation=isolation)


# --------------------------------------------------------------------------------------
# Games
# --------------------------------------------------------------------------------------


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


_HOST: Optional[str] = None


def _host() -> str:
    global _HOST
    if _HOST is None:
        _HOST = socket.gethostname()
    return _HOST


def play_game(white: Union[BotSpec, Player], black: Union[BotSpec, Player],
              variant: Union[Variant, str], time_control: TimeControl, *,
              opening: Sequence[str] = (), game_id: str = "", seed: Optional[int] = None,
              start: Optional[str] = None, on_move: Optional[OnMove] = None,
              quit_grace_s: Optional[float] = None, term_grace_s: Optional[float] = None,
              isolation: Optional[Isolation] = None,
              replays: int = STARVED_REPLAYS,
              adjudicate: Optional[Adjudication] = None) -> GameRecord:
    """Play one game, ``white`` first, and return its record.

    ``white``/``black`` are bot specs (spawned and owned here) or :class:`Player`\\ s.
    ``opening`` moves are played by the referee first (recorded with ``opening=True``),
    from ``start`` (position text; or the opening's ``setup`` item, see
    :func:`arena.protocol.split_setup`) when given, else from the variant's start.
    ``seed`` (random if ``None``, recorded either way) is sent as the ``Seed`` option to bots
    that declare one and were not given one.  ``on_move(position, info)`` is called after
    every move.  ``quit_grace_s``/``term_grace_s`` override how long bots get to exit.
    ``isolation`` is how bot processes are sandboxed (:mod:`arena.sandbox`; default: the
    best level available, see ``arena doctor``).  Every move records its wall and CPU ms;
    it is charged as ``time_control.clock`` says (own, wall or CPU time: :mod:`arena.clock`).

    ``adjudicate`` ends a game early by the bots' scores, its length or the endgame
    tablebases (:mod:`arena.adjudication`; termination ``adjudication`` or ``tablebase``).

    A game with a move the machine was too busy to judge (:func:`judge_own`, :func:`starved`)
    is not a result: it is played again, from the start with the same seed and fresh
    processes, up to ``replays`` times (its ``replays`` say why); one still not judged then
    comes back ``void`` (never counted: the callers leave it for later).

    :raises ConfigError: the start position or an opening move is illegal (before any process
        starts), or the isolation level is not available here.
    """
    if isinstance(variant, str):
        variant = get_variant(variant)
    start, opening_moves = start_and_opening(variant, opening, start)
    if seed is None:
        seed = random.SystemRandom().randrange(SEED_MAX + 1)
    if isolation is None:
        from arena.sandbox import Isolation

        isolation = Isolation.default()
    sides: list[Union[BotSpec, Player]] = [white, black]
    voided: list[str] = []
    while True:
        players = (_as_player(sides[0], "white", quit_grace_s, term_grace_s, isolation),
                   _as_player(sides[1], "black", quit_grace_s, term_grace_s, isolation))
        kept = any(isinstance(p, KeptBotPlayer) for p in players)
        record = GameRecord(game_id=game_id, variant=variant.name,
                            variant_params=variant.to_dict(), white=players[0].next_info(),
                            black=players[1].next_info(), result="*", termination="",
                            opening=list(opening_moves), time_control=time_control.to_dict(),
                            seed=seed, started=_now(), host=_host(),
                            isolation=isolation.level.value,
                            restart="per-pairing" if kept else "per-game", start_position=start)
        game = _Game(players, variant, time_control, seed, on_move, record, adjudicate)
        try:
            game.run(opening_moves)
        finally:
            game.finish()
        if game.starved is None or len(voided) >= replays:
            break
        voided.append(record.detail if game.starved in record.detail
                      else f"{record.detail}: {game.starved}")
        log.warning("game %s: not counted, played again: %s (the machine is overloaded: "
                    "fewer workers, or a quieter machine)", game_id or "-", voided[-1])
        for n, player in enumerate(players):  # a kept bot that was ended: a fresh process
            if isinstance(player, KeptBotPlayer) and not player.alive:
                sides[n] = player.spec
    record.replays = voided
    if game.starved is not None:
        what = "was too busy to judge" if time_control.clock == "own" else "starved a bot in"
        record.void = f"the machine {what} all {len(voided) + 1} plays ({game.starved}): not counted"
        log.warning("game %s: %s", game_id or "-", record.void)
    return record


class _Game:
    """The state of one game while it is played."""

    def __init__(self, players: tuple[Player, Player], variant: Variant, tc: TimeControl,
                 seed: int, on_move: Optional[OnMove], record: GameRecord,
                 adjudicate: Optional[Adjudication] = None) -> None:
        self.players = players
        self.variant = variant
        self.tc = tc
        self.seed = seed
        self.on_move = on_move
        self.record = record
        start = record.start_position
        self.position = Position.from_text(variant, start) if start else Position(variant)
        self.moves: list[str] = []
        self.failure: Optional[tuple[int, BotError]] = None
        #: why the failure, a timeout, was the machine's fault (see :func:`starved`)
        self.starved: Optional[str] = None
        self.adjudicator = (Adjudicator(adjudicate) if adjudicate is not None
                            and adjudicate.active else None)
        #: the adjudication that ended the game early, if one did
        self.verdict: Optional[Verdict] = None
        #: the move pushed last, not yet recorded: (player, its text, wall ms); see _book
        self._unbooked: Optional[tuple[Player, str, float]] = None

    def run(self, opening: Sequence[str]) -> None:
        """Start both players, play the opening, then turns until the game ends."""
        handshake_s, start = self.tc.handshake_ms / 1000.0, self.record.start_position
        for step in (lambda p: p.start(), lambda p: p.prepare(self.variant, self.seed, handshake_s),
                     lambda p: start and p.set_up(start)):
            for color, player in enumerate(self.players):
                try:
                    step(player)
                except BotError as e:
                    self.failure = (color, e)
                    return
        pos = self.position
        for text in opening:
            pos.push_text(text)
            self.moves.append(text)
            self._report(MoveInfo(text, 0.0, opening=True))
            if self.adjudicator is not None:  # the referee's moves carry no score
                self.adjudicator.add(len(pos.move_stack), 1 - pos.turn, None, True)
        clock = GameClock(self.tc)
        while pos.outcome() is None:
            color, unjudged = pos.turn, ""
            player = self.players[color]
            try:
                allowed = clock.allowed_ms(color)
                timeout_ms = clock.deadline_ms(color) if player.timed else None
                on_cpu, on_own = (timeout_ms is not None and self.tc.clock == c
                                  for c in ("cpu", "own"))
                wall_ms = clock.wall_deadline_ms(color) if player.timed else None
                if on_own:  # before its clock starts: a quick reply never waits for it
                    self._while_waiting()
                try:
                    text, ms = player.choose(
                        pos, self.moves, clock.go(),
                        None if wall_ms is None else wall_ms / 1000.0,
                        cpu_limit_s=timeout_ms / 1000.0 if on_cpu else None,  # type: ignore[operator]
                        own_limit_s=timeout_ms / 1000.0 if on_own else None,  # type: ignore[operator]
                        after_send=None if on_own else self._while_waiting)
                finally:
                    self._book()  # the previous move's, if the player did not call it
                own = player.last_own if on_own else None
                verdict, why = judge_own(own, allowed, self.tc) if own else (IN_TIME, "")
                if own is not None and verdict != IN_TIME:  # the own clock: late, not judged
                    late = BotTimeout(why)
                    late.wall_ms, late.cpu_ms, late.wait_ms, late.own = (ms, own.cpu_ms,
                                                                         own.waited_ms, own)
                    unjudged = why if verdict == UNJUDGED else ""
                    raise late
                charged = own.own_ms if own else player.take_cpu() if on_cpu else ms
                if charged is None:
                    charged = ms
                if player.timed and not clock.charge(color, charged):
                    unit = " of CPU time" if on_cpu else " of its own time" if own else ""
                    late = BotTimeout(f"took {charged:.0f} ms{unit}, the limit was "
                                      f"{timeout_ms:.0f} ms")
                    late.wall_ms, late.cpu_ms = ms, player.take_cpu()
                    late.wait_ms = player.last_wait_ms
                    raise late
                try:
                    move = pos.push_text(text)
                except MoveError:
                    raise IllegalMove(illegal_move_text(pos, text), text) from None
            except BotError as e:
                self.failure = (color, e)
                if isinstance(e, BotTimeout) and player.timed:
                    self.starved = unjudged or starved(e, allowed, self.tc)
                    if not unjudged:  # (a move not judged says why, and has no fix)
                        e.args = (timeout_text(e, allowed, self.tc, clock.remaining is not None),)
                elif isinstance(e, IllegalMove) and isinstance(player, BotPlayer) \
                        and not player.spec.legal_moves:
                    e.args = (f"{e.args[0]}; {LEGAL_MOVES_HINT}",)
                return
            played = str(move)
            self.moves.append(played)
            self._unbooked = (player, played, ms)
            if self.adjudicator is not None and pos.outcome() is None:
                rules = self.adjudicator.rules
                self.verdict = ((tablebase_verdict(pos, rules.tablebase_dir)
                                 if rules.tablebase else None)
                                or self.adjudicator.after_move(pos, move, color,
                                                               player.last_info))
                if self.verdict is not None:
                    break
        self._book()
        # the game is over by the rules: a line either bot sent unasked is still a forfeit
        # (the side that moved last first: its extra line is the likelier)
        for color in (1 - pos.turn, pos.turn):
            try:
                self.players[color].check_idle()
            except BotError as e:
                self.failure = (color, e)
                return

    def _report(self, info: MoveInfo) -> None:
        """The move just played into the record, and to ``on_move``."""
        self.record.moves.append(info)
        if self.on_move is not None:
            self.on_move(self.position, info)

    def _while_waiting(self) -> None:
        """Work done while the player to move thinks (the own clock: just before its clock
        starts, as a quick reply would wait for it): the previous move's record
        (:meth:`_book`), and the legal moves, which make checking the reply a lookup."""
        self._book()
        self.position.generate_raw()

    def _book(self) -> None:
        """Record the move played last (its CPU reading, its :class:`MoveInfo`, ``on_move``),
        by :meth:`_while_waiting` (off the path from a reply to the next request) or at the end."""
        if self._unbooked is None:
            return
        player, played, ms = self._unbooked
        self._unbooked = None
        cpu = player.take_cpu()
        own = player.last_own
        # the own clock: what the move was not charged (its waits for a CPU)
        wait = own.waited_ms if own is not None else player.last_wait_ms
        self._report(MoveInfo(played, round(ms, 3), None if cpu is None else round(cpu, 3),
                              wait_ms=None if wait is None else round(wait, 3),
                              info=player.last_info))

    def finish(self) -> None:
        """Fill in the result, tell both players, shut them down."""
        rec = self.record
        if self.failure is not None:
            color, error = self.failure
            term, phrase = termination_of(error)
            name = COLOR_NAMES[color]
            rec.result = "0-1" if color == 0 else "1-0"
            rec.termination = term.value
            rec.forfeit = name
            # display text: whatever of the bot's output it quotes is shown escaped
            rec.detail = escape_controls(f"{name} ({self.players[color].info.name}) {phrase}: "
                                         f"{error}")
            rec.offending_line = cut(error.line)
        elif self.verdict is not None:
            v = self.verdict
            rec.result = v.result
            rec.termination = (Termination.TABLEBASE if v.rule == "tablebase"
                               else Termination.ADJUDICATION).value
            rec.detail = f"adjudicated ({v.rule}): {v.detail}"
            assert self.adjudicator is not None  # a verdict is the adjudicator's
            rec.adjudication = {"rule": v.rule, "scores": list(self.adjudicator.last_scores)}
        else:
            outcome = self.position.outcome()
            if outcome is None:  # interrupted (an exception in on_move or the like)
                rec.result, rec.termination = "*", Termination.ERROR.value
                rec.detail = "the game was interrupted"
            else:
                rec.result, rec.termination = outcome.result, outcome.termination.value
                rec.detail = _rules_detail(outcome.termination, outcome.winner, self.position.turn)
        failed = self.failure[0] if self.failure is not None else None
        # gameover <result> <reason> lastmove <move> position <text>: a bot can confirm an
        # ending it did not make (docs/PROTOCOL.md)
        ending = gameover_reason(rec.termination, self.moves[-1] if self.moves else None,
                                 self.position.to_text())
        for color, player in enumerate(self.players):
            player.begin_finish(rec.result, ending, failed=color == failed)
        for player in self.players:
            player.end_finish()
        rec.final_position = self.position.to_text()
        rec.stderr = {COLOR_NAMES[c]: tail for c, p in enumerate(self.players)
                      if (tail := p.stderr_tail())}
        rec.finished = _now()
        log.debug("game %s: %s %s (%s)", rec.game_id, rec.result, rec.termination, rec.detail)


_RULES_TEXT = {
    Termination.TOO_FEW_MEN: "{loser} has too few men left",
    Termination.BLOCKED: "{loser} cannot move",
    Termination.MILL: "{winner} formed a mill",
    Termination.BOARD_FULL: "the board is full",
    Termination.THREE_VS_THREE: "three men each without a capture for too long",
    Termination.NO_CAPTURE: "too many turns without a capture",
    Termination.REPETITION: "the same position occurred too often",
}


def _rules_detail(term: Termination, winner: Optional[int], to_move: int) -> str:
    """A sentence for a rules ending (the side to move is the loser when there is no winner)."""
    loser = 1 - winner if winner is not None else to_move
    return _RULES_TEXT.get(term, term.value).format(winner=COLOR_NAMES[1 - loser],
                                                    loser=COLOR_NAMES[loser])
