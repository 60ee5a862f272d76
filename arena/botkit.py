"""The bot kit: the protocol loop for Python bots, so a bot is one function or one class.

A function bot::

    from arena.botkit import run, spin

    def choose(position, clock):
        return position.legal_moves()[0]          # a Move or move text

(``clock.legal`` holds the referee's ``legalmoves`` list, for a bot whose ``bot.yaml``
says ``legal_moves: true``.)

    run(choose, name="first", author="me", options=[spin("Depth", 3, 1, 9)])

A class bot keeps state between moves and games::

    from arena.botkit import Bot, run, seed_option

    class MyBot(Bot):
        name, author = "mine", "me"
        option_decls = (seed_option(),)

        def new_game(self, variant):
            self.rng = random.Random(self.options["Seed"])

        def choose(self, position, clock):
            return self.rng.choice(position.legal_moves())

    run(MyBot())

The kit answers the handshake (``morris 1`` -> ``id`` lines, ``option`` lines, ``morrisok``),
stores ``setoption`` values typed by their declaration (``self.options`` / ``clock.options``),
builds the :class:`~arena.variants.Variant` on ``newgame``, keeps the game's
:class:`~arena.rules.Position` *with its history* (so ``outcome()`` sees repetitions: the move
list is replayed from the start once, then only the new moves are pushed), turns ``go`` into a
time budget (:class:`Clock`: ``budget_s``, ``deadline``, ``remaining()``, ``expired()``; the
search limits ``nodes`` and ``depth`` and the clock's ``movestogo`` as they were sent) and
prints ``bestmove``.  Every line is flushed; unknown or malformed lines are reported on stderr
and ignored.  A bot should print nothing on stdout itself: use :func:`log` (stderr) or
:func:`send_info`.

All line formats come from :mod:`arena.protocol`; this module only drives them.
"""

from __future__ import annotations

import io
import random
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Mapping, Optional, Sequence, TextIO, Union

from arena import protocol as P
from arena.errors import ArenaError, ProtocolError
from arena.protocol import OptionDecl
from arena.rules import Move, Position
from arena.variants import Variant

__all__ = ["Bot", "SeededBot", "Clock", "Options", "OptionDecl", "Session", "run", "spin", "check", "combo",
           "string", "button", "seed_option", "log", "send_info", "compute_budget"]

Choice = Union[Move, str]
ChooseFn = Callable[[Position, "Clock"], Choice]
OptionValue = Union[int, bool, str]

SEED_MAX = P.SEED_MAX


# --------------------------------------------------------------------------------------
# Option declarations and values
# --------------------------------------------------------------------------------------


def spin(name: str, default: int, lo: int, hi: int) -> OptionDecl:
    """An integer option ``name`` in ``lo..hi``."""
    return OptionDecl(name, "spin", str(default), lo, hi)


def check(name: str, default: bool) -> OptionDecl:
    """A boolean option (``true``/``false``)."""
    return OptionDecl(name, "check", "true" if default else "false")


def combo(name: str, default: str, choices: Sequence[str]) -> OptionDecl:
    """An option taking one of ``choices``."""
    return OptionDecl(name, "combo", default, vars=tuple(choices))


def string(name: str, default: str = "") -> OptionDecl:
    """A free-text option (``<empty>`` stands for the empty string, as in UCI)."""
    return OptionDecl(name, "string", default or "<empty>")


def button(name: str) -> OptionDecl:
    """A value-less option: ``setoption name <name>`` triggers :meth:`Bot.set_option`."""
    return OptionDecl(name, "button")


def seed_option() -> OptionDecl:
    """The conventional ``Seed`` option: ``spin``, default 0, range 0..2147483647.

    The referee sends ``setoption name Seed value <n>`` to bots that declare it, so games
    with a seed are reproducible.
    """
    return spin("Seed", 0, 0, SEED_MAX)


def _typed(decl: OptionDecl, text: str) -> OptionValue:
    """The value of ``text`` for ``decl``; raises ``ValueError`` with a reason."""
    if decl.type == "spin":
        value = int(text)
        if (decl.min is not None and value < decl.min) or (decl.max is not None and value > decl.max):
            raise ValueError(f"{value} is outside {decl.min}..{decl.max}")
        return value
    if decl.type == "check":
        low = text.lower()
        if low in ("true", "false"):
            return low == "true"
        raise ValueError(f"expected true or false, got {text!r}")
    if decl.type == "combo":
        for var in decl.vars:
            if var.lower() == text.lower():
                return var
        raise ValueError(f"expected one of {', '.join(decl.vars)}, got {text!r}")
    if decl.type == "string":
        return "" if text == "<empty>" else text
    return True  # button


class Options(Mapping[str, OptionValue]):
    """The bot's option values by name (case-insensitive), typed by their declarations:
    ``spin`` -> ``int``, ``check`` -> ``bool``, ``combo``/``string`` -> ``str``.
    """

    def __init__(self, decls: Iterable[OptionDecl]) -> None:
        self.decls: dict[str, OptionDecl] = {}
        self._values: dict[str, OptionValue] = {}
        for decl in decls:
            key = decl.name.lower()
            if key in self.decls:
                raise ArenaError(f"option {decl.name!r} is declared twice")
            self.decls[key] = decl
            if decl.type != "button":
                self._values[key] = _typed(decl, decl.default if decl.default is not None else "")

    def set(self, name: str, text: str) -> OptionValue:
        """Set option ``name`` from protocol text; raises ``KeyError``/``ValueError``."""
        decl = self.decls[name.lower()]
        value = _typed(decl, text)
        if decl.type != "button":
            self._values[name.lower()] = value
        return value

    def __getitem__(self, name: str) -> OptionValue:
        return self._values[name.lower()]

    def __iter__(self) -> Iterator[str]:
        return (self.decls[k].name for k in self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Options({dict(self.items())!r})"


# --------------------------------------------------------------------------------------
# Time budget
# --------------------------------------------------------------------------------------

#: a clock game is budgeted as if this many more moves were to come
MOVES_TO_GO = 25
#: budget when ``go`` names no time at all
DEFAULT_BUDGET_S = 1.0


def compute_budget(go: P.Go, white_to_move: bool) -> float:
    """Seconds this move may take, with a safety margin for process and pipe overhead.

    ``movetime`` gives its value less a reserve (10 % + 10 ms, at most 50 ms); a clock gives
    a share of the remaining time (``time / 25 + 3/4 increment``, or ``time / movestogo``
    when the clock is refilled after ``movestogo`` more moves), never more than half of
    what is left less the reserve.  Both present: the smaller.  With neither, a move
    limited by ``nodes`` or ``depth`` gets the referee's cap
    (:data:`~arena.protocol.LIMIT_CAP_MS`) less the reserve: the search should stop at its
    limit long before.  Never below 1 ms.
    """
    budgets: list[float] = []
    movetime = go.movetime
    if movetime is None and go.wtime is None and go.btime is None and (
            go.nodes is not None or go.depth is not None):
        movetime = P.LIMIT_CAP_MS
    if movetime is not None:
        budgets.append(movetime - min(50.0, 0.1 * movetime + 10.0))
    left = go.wtime if white_to_move else go.btime
    inc = (go.winc if white_to_move else go.binc) or 0
    if left is not None:
        reserve = min(50.0, 0.1 * left + 10.0)
        moves = go.movestogo if go.movestogo and go.movestogo > 0 else MOVES_TO_GO
        share = left / moves + 0.75 * inc
        budgets.append(min(share, left / 2 - reserve))
    if not budgets:
        return DEFAULT_BUDGET_S
    return max(0.001, min(budgets) / 1000.0)


@dataclass
class Clock:
    """The time for one move, measured from when ``go`` was read (``time.monotonic``).

    ``go`` holds the raw times (ms) and limits (:attr:`nodes`, :attr:`depth`, and
    :attr:`movestogo` of a moves-per-period clock, None when not sent: a bot keeps
    ``nodes`` and ``depth`` itself, the referee cannot see them); ``options`` are the bot's
    option values (for function bots, which have no ``self``); ``legal`` is the referee's
    ``legalmoves`` list for this turn (move texts, in the referee's order) when the bot asked
    for it (``legal_moves: true`` in its ``bot.yaml``), else ``None``
    (``position.legal_moves()`` gives the same moves).
    """

    go: P.Go
    start: float
    budget_s: float
    options: Options = field(default_factory=lambda: Options(()))
    legal: Optional[tuple[str, ...]] = None

    @property
    def deadline(self) -> float:
        """``time.monotonic()`` value by which the move should be chosen."""
        return self.start + self.budget_s

    @property
    def nodes(self) -> Optional[int]:
        """``go nodes N``: search at most N nodes (None: no node limit)."""
        return self.go.nodes

    @property
    def depth(self) -> Optional[int]:
        """``go depth N``: search N plies deep (None: no depth limit)."""
        return self.go.depth

    @property
    def movestogo(self) -> Optional[int]:
        """``go movestogo N``: the moves until the clock is refilled (None: no periods)."""
        return self.go.movestogo

    def elapsed(self) -> float:
        """Seconds since ``go`` was read."""
        return time.monotonic() - self.start

    def remaining(self) -> float:
        """Seconds left of the budget (negative once past it)."""
        return self.deadline - time.monotonic()

    def expired(self) -> bool:
        """Whether the budget is used up."""
        return time.monotonic() >= self.deadline


# --------------------------------------------------------------------------------------
# Bots
# --------------------------------------------------------------------------------------


class Bot:
    """Base class for bots with state.  Override :meth:`choose`; the other hooks are optional.

    Class attributes ``name``, ``author`` and ``option_decls`` describe the bot; the kit
    fills ``self.options`` (values), ``self.variant`` (the current game's rules) and
    ``self.start_position`` (the position text of a game that starts from a set-up position,
    as ``setup`` gave it; None for the variant's start).
    """

    name: str = "bot"
    author: str = "unknown"
    option_decls: Sequence[OptionDecl] = ()
    start_position: Optional[str] = None

    def __init__(self) -> None:
        self.options = Options(self.option_decls)
        self.variant: Variant = Variant()

    def set_option(self, name: str, value: OptionValue) -> None:
        """Called after an option value was stored (and for every ``button``)."""

    def new_game(self, variant: Variant) -> None:
        """Called on ``newgame``, after ``self.variant`` is set."""

    def choose(self, position: Position, clock: Clock) -> Choice:
        """Return a legal move (a :class:`Move` or its text) for ``position``.

        ``position`` is a copy the bot may push/pop freely; it has the game's history.
        """
        raise NotImplementedError

    def game_over(self, result: str, reason: str) -> None:
        """Called on ``gameover <result> <reason>``."""


class SeededBot(Bot):
    """A :class:`Bot` that declares the conventional ``Seed`` option and owns ``self.rng``,
    re-seeded from it at every ``newgame`` (so a game depends only on the seed).

    Subclasses add their own declarations: ``option_decls = SeededBot.option_decls + (...)``.
    Overriding :meth:`new_game` must call ``super().new_game(variant)``.
    """

    option_decls: Sequence[OptionDecl] = (seed_option(),)

    def __init__(self) -> None:
        super().__init__()
        self.rng = random.Random(0)

    def new_game(self, variant: Variant) -> None:
        """Re-seed ``self.rng`` from the ``Seed`` option."""
        self.rng = random.Random(self.options["Seed"])


class _FunctionBot(Bot):
    def __init__(self, choose: ChooseFn, name: str, author: str,
                 options: Sequence[OptionDecl]) -> None:
        self.name, self.author, self.option_decls = name, author, tuple(options)
        super().__init__()
        self._choose = choose

    def choose(self, position: Position, clock: Clock) -> Choice:
        return self._choose(position, clock)


class PolicyBot(Bot):
    """A learned policy as a bot: ``policy(observation, mask) -> action`` over
    :mod:`arena.encoding`'s observations and actions (the ones :mod:`arena.env` trains
    on), asked action by action until its turn is complete.  An action the mask forbids is
    a bug in the bot, not hidden: ``choose`` raises (with ``forgiving``, a random move)."""

    def __init__(self, policy: Callable[..., object], name: str = "policy",
                 author: str = "unknown", options: Sequence[OptionDecl] = ()) -> None:
        self.name, self.author, self.option_decls = name, author, tuple(options)
        super().__init__()
        self.policy = policy

    def choose(self, position: Position, clock: Clock) -> Choice:
        from arena.encoding import policy_move  # numpy: only for the bots that use it

        return policy_move(position, self.policy)


def run_policy(policy: Callable[..., object], *, name: str = "policy",
               author: str = "unknown", options: Sequence[OptionDecl] = (),
               **kwargs: object) -> None:
    """:func:`run` for a learned policy (:class:`PolicyBot`): a trained agent's bot.py
    loads its weights from a file in its folder and calls this (docs/LEARNING.md)."""
    run(PolicyBot(policy, name, author, options), **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------
# The protocol session
# --------------------------------------------------------------------------------------


def log(*parts: object) -> None:
    """Print a line on stderr (the referee keeps the bot's stderr; stdout is the protocol)."""
    print(*parts, file=sys.stderr, flush=True)


_info_sink: Optional[Callable[[str], None]] = None


def send_info(text: str = "", *, depth: Optional[int] = None, seldepth: Optional[int] = None,
              score: Optional[int] = None, win: Optional[int] = None,
              loss: Optional[int] = None, nodes: Optional[int] = None,
              nps: Optional[int] = None, time_ms: Optional[int] = None,
              pv: Optional[Sequence[object]] = None) -> None:
    """Send an ``info`` line to the referee (allowed any time).  The conventional fields,
    which the referee keeps in the move's record and shows in the viewer and the PGN
    (docs/PROTOCOL.md, *Engine output*): ``depth``, ``seldepth``, ``score`` (in your own
    units, e.g. centi-men) or ``win``/``loss`` (a forced result in that many plies),
    ``nodes``, ``nps``, ``time_ms``, ``pv`` (moves); ``text`` goes last, as
    ``string <text>`` when fields are given (free text otherwise)::

        send_info(depth=5, score=120, nodes=24000, pv=["a1-a4", "d7-d6"])
    """
    parts: list[str] = []
    for key, value in (("depth", depth), ("seldepth", seldepth), ("nodes", nodes),
                       ("nps", nps), ("time", time_ms)):
        if value is not None:
            parts.append(f"{key} {int(value)}")
    if score is not None:
        parts.append(f"score {int(score)}")
    elif win is not None:
        parts.append(f"score win {int(win)}")
    elif loss is not None:
        parts.append(f"score loss {int(loss)}")
    if pv:
        parts.append("pv " + " ".join(str(m) for m in pv))
    if text and parts:
        parts.append("string " + text)
    elif text:
        parts.append(text)
    line = P.format_info(" ".join(" ".join(parts).split()))
    if _info_sink is not None:
        _info_sink(line)
    else:
        _write_stdout(line)


def _write_stdout(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class Session:
    """One bot's side of the protocol: feed it referee lines, it calls ``send`` with replies.

    Pure of I/O itself (``send`` is injected), so a harness can run two bots in one process.
    """

    def __init__(self, bot: Bot, send: Callable[[str], None] = _write_stdout,
                 warn: Callable[[str], None] = log, forgiving: bool = False) -> None:
        self.bot = bot
        #: replace a bad choice (an exception, an illegal move) by a random legal move instead
        #: of letting the referee see it; off by default so bugs show up in game records
        self.forgiving = forgiving
        self.send = send
        self.warn = warn
        self.variant: Variant = bot.variant
        self.position: Position = Position(self.variant)
        self._moves: list[str] = []  # the moves ``self.position`` was built from
        #: the game's set-up position (``setup``), None for the variant's start
        self.start: Optional[str] = None
        #: the ``legalmoves`` line received since the last ``position`` (None: none was)
        self.legal: Optional[tuple[str, ...]] = None
        self.running = True

    # -- position tracking ----------------------------------------------------------------
    def first_position(self) -> Position:
        """The game's first position: the ``setup`` position, else the variant's start."""
        if self.start is not None:
            return Position.from_text(self.variant, self.start)
        return Position(self.variant)

    def set_position(self, text: str, moves: Sequence[str]) -> Position:
        """Make ``self.position`` the position ``text`` reached by ``moves`` from the start
        (the ``setup`` position of a game that has one).

        Pushes only the moves not seen yet when ``moves`` extends the previous list; replays
        from the start otherwise.  If the replay does not reach ``text`` (or fails), the
        position is built from ``text`` alone, without history.
        """
        if moves and self.variant.repetition:
            n = len(self._moves)
            if n <= len(moves) and list(moves[:n]) == self._moves:
                pos, todo = self.position, moves[n:]
            else:
                pos, todo = self.first_position(), moves
            try:
                for m in todo:
                    pos.push(Move.parse(m))
                if pos.to_text() == " ".join(text.split()):
                    self.position, self._moves = pos, list(moves)
                    return pos
                self.warn("kit: the moves do not lead to the position given; using the text")
            except ArenaError as e:
                self.warn(f"kit: cannot replay the moves ({e}); using the position text")
        self.position = Position.from_text(self.variant, text)
        self._moves = list(moves)
        return self.position

    # -- the command handlers --------------------------------------------------------------
    def handle(self, line: str, received: Optional[float] = None) -> bool:
        """Handle one referee line; returns False once ``quit`` was received.

        ``received`` is the ``time.monotonic()`` at which the line was read (for ``go``).
        """
        if received is None:
            received = time.monotonic()
        if not line.strip():
            return self.running
        try:
            msg = P.parse_referee_line(line)
        except ProtocolError as e:
            self.warn(f"kit: ignored: {e}")
            return self.running
        try:
            self._dispatch(msg, received)
        except ArenaError as e:
            self.warn(f"kit: {type(e).__name__}: {e}")
        return self.running

    def _dispatch(self, msg: P.RefereeMessage, received: float) -> None:
        bot = self.bot
        if isinstance(msg, P.Hello):
            if msg.version != P.VERSION:
                self.warn(f"kit: referee speaks protocol {msg.version}, this kit {P.VERSION}")
            self.send(P.format_id("name", bot.name))
            self.send(P.format_id("author", bot.author))
            for decl in bot.options.decls.values():
                self.send(P.format_option(decl))
            self.send(P.format_morrisok())
        elif isinstance(msg, P.SetOption):
            try:
                value = bot.options.set(msg.name, msg.value)
            except KeyError:
                self.warn(f"kit: ignored unknown option {msg.name!r}")
                return
            except ValueError as e:
                self.warn(f"kit: ignored option {msg.name!r}: {e}")
                return
            bot.set_option(bot.options.decls[msg.name.lower()].name, value)
        elif isinstance(msg, P.NewGame):
            self.variant = Variant.from_params(msg.variant, msg.params)
            bot.variant = self.variant
            self.position, self._moves = Position(self.variant), []
            self.start = bot.start_position = None
            bot.new_game(self.variant)
        elif isinstance(msg, P.Setup):
            self.position = Position.from_text(self.variant, msg.position)
            self.start = bot.start_position = msg.position
            self._moves = []
        elif isinstance(msg, P.IsReady):
            self.send(P.format_readyok())
        elif isinstance(msg, P.PositionCmd):
            self.legal = None
            self.set_position(msg.position, msg.moves)
        elif isinstance(msg, P.LegalMoves):
            self.legal = msg.moves
        elif isinstance(msg, P.Go):
            self._go(msg, received)
        elif isinstance(msg, P.GameOver):
            bot.game_over(msg.result, msg.reason)
        elif isinstance(msg, P.Quit):
            self.running = False

    def _go(self, go: P.Go, received: float) -> None:
        pos = self.position
        clock = Clock(go, received, compute_budget(go, pos.turn == 0), self.bot.options,
                      self.legal)
        self.legal = None
        legal = pos.legal_moves()
        if not legal:
            self.warn(f"kit: asked to move, but the game is over: {pos.outcome()}")
            self.send(P.format_bestmove("none"))
            return
        global _info_sink
        previous, _info_sink = _info_sink, self.send
        try:
            choice = self.bot.choose(pos.copy(), clock)
        except Exception:  # a bug in the bot: leave a trace on stderr, then crash or forgive
            self.warn("kit: the bot's choose() raised:\n" + traceback.format_exc().rstrip())
            if not self.forgiving:
                raise SystemExit(1) from None
            choice = None
        finally:
            _info_sink = previous
        if self.forgiving:
            self.send(P.format_bestmove(self._checked(choice, legal)))
        else:  # the referee judges the move, so an illegal one is recorded as such
            self.send(P.format_bestmove(choice))

    def _checked(self, choice: object, legal: list[Move]) -> Move:
        """``choice`` if it is a legal move, else (with a warning) a random legal move."""
        try:
            move = choice if isinstance(choice, Move) else Move.parse(str(choice))
            if move in legal:
                return move
            reason = "is not legal here"
        except ArenaError:
            reason = "is not a move"
        if choice is not None:
            self.warn(f"kit: the bot chose {choice!r}, which {reason}; playing a random move")
        return random.choice(legal)


def run(bot: Union[Bot, ChooseFn], *, name: str = "bot", author: str = "unknown",
        options: Sequence[OptionDecl] = (), stdin: Optional[TextIO] = None,
        stdout: Optional[TextIO] = None, forgiving: bool = False) -> None:
    """Run ``bot`` (a :class:`Bot` or a ``choose(position, clock)`` function) on stdin/stdout
    until ``quit`` or the end of input.  ``name``/``author``/``options`` apply to functions.

    While it runs, ``sys.stdout`` is redirected to stderr, so a stray ``print`` in the bot
    goes to the log instead of breaking the protocol; protocol lines go to the real stdout.

    A bug in the bot is not hidden: if ``choose`` raises, the traceback goes to stderr and the
    bot exits with status 1 (the referee records a crash with that stderr); a move that is not
    legal is sent as it is (the referee records an illegal move).  ``forgiving=True`` plays a
    random legal move instead, with a warning on stderr.
    """
    if not isinstance(bot, Bot):
        bot = _FunctionBot(bot, name, author, options)
    inp = stdin if stdin is not None else sys.stdin
    out = stdout if stdout is not None else sys.stdout
    if isinstance(out, io.TextIOWrapper):
        out.reconfigure(line_buffering=True)

    def send(line: str) -> None:
        out.write(line + "\n")
        out.flush()

    global _info_sink
    session = Session(bot, send, forgiving=forgiving)
    saved, sys.stdout = sys.stdout, sys.stderr
    saved_sink, _info_sink = _info_sink, send
    try:
        while True:
            line = inp.readline()
            received = time.monotonic()
            if not line or not session.handle(line, received):
                return
    except BrokenPipeError:  # the referee went away: nothing left to say
        return
    finally:
        sys.stdout, _info_sink = saved, saved_sink
