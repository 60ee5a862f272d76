"""The Morris Arena text protocol, version 1: every line's format and parse, as pure functions.

Only this module knows what protocol lines look like.  The referee formats commands with the
``format_*`` functions and reads bot replies with :func:`parse_bot_line`; the Python bot kit
does the reverse with :func:`parse_referee_line` and the ``format_*`` replies.  See
``docs/PROTOCOL.md`` for the specification users read.

Lines are UTF-8 text ending in ``\\n``; trailing white space and ``\\r`` are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence, Union

from arena.errors import ProtocolError
from arena.hints import STDOUT_HINT

VERSION = 1
#: the largest seed: the range of the conventional ``Seed`` option (a 31-bit ``spin``)
SEED_MAX = 2**31 - 1

# --------------------------------------------------------------------------------------
# Referee -> bot
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hello:
    """``morris <version>``: the first line a bot receives."""

    version: int


@dataclass(frozen=True)
class SetOption:
    """``setoption name <name> value <value>``"""

    name: str
    value: str


@dataclass(frozen=True)
class NewGame:
    """``newgame <variant> key=value ...``: every rule parameter of the variant."""

    variant: str
    params: dict[str, str]


@dataclass(frozen=True)
class IsReady:
    """``isready``: answer ``readyok``."""


@dataclass(frozen=True)
class PositionCmd:
    """``position <position text> moves <m1> <m2> ...``

    ``position`` is the *current* position (8 fields, see ``Position.to_text``); ``moves`` is
    the whole game so far from the variant's start position, for bots that track repetitions.
    """

    position: str
    moves: tuple[str, ...]


@dataclass(frozen=True)
class Setup:
    """``setup <position text>``: this game starts from ``position`` (a set-up position, as
    ``Position.to_text`` writes it), not from the variant's start; sent after ``readyok`` and
    before the game's first ``position``, only in such a game.  The ``moves`` of its
    ``position`` lines are counted from this position."""

    position: str


@dataclass(frozen=True)
class LegalMoves:
    """``legalmoves <m1> <m2> ...``: every legal turn here, sent just before ``go`` to a bot
    that asked for it (``legal_moves: true`` in its ``bot.yaml``); never empty."""

    moves: tuple[str, ...]


@dataclass(frozen=True)
class Go:
    """``go [wtime <ms>] [btime <ms>] [winc <ms>] [binc <ms>] [movestogo <n>] [movetime <ms>]
    [nodes <n>] [depth <n>]``

    ``movestogo``: the moves the side to move still has to make before its clock is refilled
    (a moves-per-period clock such as ``40/60+0.6``); ``nodes`` and ``depth``: a search limit
    the referee cannot see, only the bot keeps it (the referee's cap on such a move is
    ``movetime`` when given, else :data:`LIMIT_CAP_MS`).
    """

    wtime: Optional[int] = None
    btime: Optional[int] = None
    winc: Optional[int] = None
    binc: Optional[int] = None
    movetime: Optional[int] = None
    movestogo: Optional[int] = None
    nodes: Optional[int] = None
    depth: Optional[int] = None

    def line(self) -> str:
        """This command as the referee writes it (:func:`format_go`)."""
        return format_go(self.wtime, self.btime, self.winc, self.binc, self.movetime,
                         movestogo=self.movestogo, nodes=self.nodes, depth=self.depth)


#: the words of ``go``, in the order the referee writes them
GO_WORDS = ("wtime", "btime", "winc", "binc", "movestogo", "movetime", "nodes", "depth")
#: the referee's cap on a move limited only by ``nodes`` or ``depth`` (no ``movetime``, no
#: clock), in ms: it cannot count a bot's nodes or plies, so a bot that never stops must
#: still lose; not sent (the bot searches to its limit), and the kit's budget then
LIMIT_CAP_MS = 10_000


@dataclass(frozen=True)
class GameOver:
    """``gameover <result> <reason> [lastmove <move>] [position <text>]``: the ending, the
    last move played (if any) and the final position (so a bot can confirm an ending it did
    not make itself)."""

    result: str
    reason: str
    last_move: Optional[str] = None
    position: Optional[str] = None


@dataclass(frozen=True)
class Quit:
    """``quit``: exit promptly."""


RefereeMessage = Union[Hello, SetOption, NewGame, IsReady, Setup, PositionCmd, LegalMoves, Go,
                       GameOver, Quit]

#: the first word of ``setup``; an opening (a book's line, a schedule's slot) whose first
#: item is ``setup <position text>`` starts from that position (:func:`split_setup`)
SETUP = "setup"


def format_hello(version: int = VERSION) -> str:
    return f"morris {version}"


def format_setoption(name: str, value: object) -> str:
    if isinstance(value, bool):
        value = "true" if value else "false"
    return f"setoption name {name} value {value}"


def format_newgame(variant_name: str, params: Mapping[str, str]) -> str:
    return " ".join(["newgame", variant_name, *(f"{k}={v}" for k, v in params.items())])


def format_isready() -> str:
    return "isready"


def format_setup(position_text: str) -> str:
    """``setup <position text>`` (also an opening's first item, see :func:`split_setup`)."""
    return f"{SETUP} {position_text}"


def split_setup(opening: Sequence[str]) -> tuple[Optional[str], list[str]]:
    """An opening's start position and moves: ``("setup <text>", "d6", ...)`` is
    ``("<text>", ["d6", ...])``; an opening without a ``setup`` item starts from the
    variant's start (``None``)."""
    if opening and opening[0].startswith(SETUP + " "):
        return " ".join(opening[0].split()[1:]), list(opening[1:])
    return None, list(opening)


def format_position(position_text: str, moves: Sequence[str] = ()) -> str:
    # one join, not a generator: the referee formats this line for every move of every game
    return f"position {position_text} moves {' '.join(moves)}" if moves else \
        f"position {position_text} moves"


def format_legalmoves(moves: Sequence[object]) -> str:
    """``legalmoves <m1> <m2> ...`` (moves as text, or :class:`~arena.rules.Move` objects)."""
    return "legalmoves " + " ".join(map(str, moves))


def format_go(wtime: Optional[int] = None, btime: Optional[int] = None, winc: Optional[int] = None,
              binc: Optional[int] = None, movetime: Optional[int] = None, *,
              movestogo: Optional[int] = None, nodes: Optional[int] = None,
              depth: Optional[int] = None) -> str:
    """``go`` with the words given, in the order of :data:`GO_WORDS` (``go nodes 1000``)."""
    parts = ["go"]
    for key, val in zip(GO_WORDS, (wtime, btime, winc, binc, movestogo, movetime, nodes,
                                   depth)):
        if val is not None:
            parts.append(f"{key} {int(val)}")
    return " ".join(parts)


def format_gameover(result: str, reason: str, last_move: Optional[str] = None,
                    position: Optional[str] = None) -> str:
    """``gameover <result> <reason>``, then ``lastmove <move>`` and ``position <text>`` when
    given (the position last: its text has spaces)."""
    return f"gameover {result} {gameover_reason(reason, last_move, position)}"


def gameover_reason(reason: str, last_move: Optional[str] = None,
                    position: Optional[str] = None) -> str:
    """What follows the result in ``gameover``: the reason, then ``lastmove <move>`` and
    ``position <text>`` when given (for a caller that passes it on as one reason)."""
    if last_move:
        reason += f" lastmove {last_move}"
    if position:
        reason += f" position {position}"
    return reason


def format_quit() -> str:
    return "quit"


def _clean(line: str) -> str:
    return line.rstrip(" \t\r\n")


def parse_referee_line(line: str) -> RefereeMessage:
    """Parse a line the referee sends; raises :class:`ProtocolError` naming the line."""
    text = _clean(line)
    words = text.split()
    if not words:
        raise ProtocolError("empty line", text)
    cmd, args = words[0], words[1:]
    try:
        if cmd == "morris" and len(args) == 1:
            return Hello(int(args[0]))
        if cmd == "setoption" and len(args) >= 3 and args[0] == "name" and "value" in args[2:]:
            at = args.index("value", 2)
            return SetOption(" ".join(args[1:at]), " ".join(args[at + 1:]))
        if cmd == "setoption" and len(args) >= 2 and args[0] == "name":  # value-less (button)
            return SetOption(" ".join(args[1:]), "")
        if cmd == "newgame" and args:
            params = {}
            for kv in args[1:]:
                key, sep, val = kv.partition("=")
                if not sep or not key:
                    raise ValueError(kv)
                params[key] = val
            return NewGame(args[0], params)
        if cmd == "isready" and not args:
            return IsReady()
        if cmd == SETUP and args:
            return Setup(" ".join(args))
        if cmd == "position" and "moves" in args:
            at = args.index("moves")
            return PositionCmd(" ".join(args[:at]), tuple(args[at + 1:]))
        if cmd == "position" and args:
            return PositionCmd(" ".join(args), ())
        if cmd == "legalmoves" and args:
            return LegalMoves(tuple(args))
        if cmd == "go":
            if len(args) % 2:
                raise ValueError(args)
            values = {args[i]: int(args[i + 1]) for i in range(0, len(args), 2)}
            return Go(**values)
        if cmd == "gameover" and len(args) >= 2:
            rest = args[2:]
            last = position = None
            if len(rest) >= 2 and rest[0] == "lastmove":
                last, rest = rest[1], rest[2:]
            if len(rest) >= 2 and rest[0] == "position":
                position, rest = " ".join(rest[1:]), []
            return GameOver(args[0], args[1], last, position)
        if cmd == "quit" and not args:
            return Quit()
    except (ValueError, TypeError):
        pass
    raise ProtocolError(f"not a referee command: {text[:200]!r}", text)


# --------------------------------------------------------------------------------------
# Bot -> referee
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Id:
    """``id name <name>`` or ``id author <author>``"""

    key: str
    value: str


@dataclass(frozen=True)
class OptionDecl:
    """``option name <name> type <check|spin|combo|string|button> [default <v>] [min <n>]
    [max <n>] [var <v>]...``"""

    name: str
    type: str
    default: Optional[str] = None
    min: Optional[int] = None
    max: Optional[int] = None
    vars: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class MorrisOk:
    """``morrisok``: the handshake is complete."""


@dataclass(frozen=True)
class ReadyOk:
    """``readyok``"""


@dataclass(frozen=True)
class Info:
    """``info <free text>``: never an error; the conventional fields are read by
    :func:`parse_info` (a move's record keeps them)."""

    text: str


#: the conventional ``info`` fields (UCI's, with Morris scores): ``depth``, ``seldepth``,
#: ``nodes``, ``nps``, ``time`` (ms) are whole numbers; ``score`` is a number in the bot's
#: own units (``score 120``, or UCI's ``score cp 120``), or ``score win N`` / ``score loss
#: N`` (a forced win or loss in N plies; UCI's ``score mate N`` counts moves, as UCI
#: defines it: ``mate N`` is read as ``win 2N-1`` (the engine's turn, then N-1 of each
#: side's), ``mate -N`` as ``loss 2N``); ``pv`` takes the moves after it; ``string`` the
#: rest of the line
INFO_NUMBERS = ("depth", "seldepth", "nodes", "nps", "time", "multipv", "hashfull")
INFO_KEYS = (*INFO_NUMBERS, "score", "pv", "string")


def parse_info(text: str) -> dict[str, Any]:
    """The fields of an ``info`` line's text (after ``info``): ``{"depth": 5, "score": 120,
    "nodes": 24000, "pv": ["a1", "d1"], "string": "..."}``; a score of a forced result is
    ``{"score": {"win": 7}}`` or ``{"score": {"loss": 4}}``.  What cannot be read (an
    unknown word, a field without its value) is kept as text under ``"other"``: never an
    error."""
    words = text.split()
    out: dict[str, Any] = {}
    other: list[str] = []
    i = 0
    while i < len(words):
        word = words[i].lower()
        if word == "string":
            out["string"] = " ".join(words[i + 1:])
            break
        if word == "pv":
            moves: list[str] = []
            i += 1
            while i < len(words) and words[i].lower() not in INFO_KEYS:
                moves.append(words[i])
                i += 1
            out["pv"] = moves
            continue
        if word in INFO_NUMBERS and i + 1 < len(words) and _is_int(words[i + 1]):
            out[word] = int(words[i + 1])
            i += 2
            continue
        if word == "score" and i + 1 < len(words):
            kind = words[i + 1].lower()
            if _is_int(words[i + 1]):
                out["score"] = int(words[i + 1])
                i += 2
                continue
            if kind == "cp" and i + 2 < len(words) and _is_int(words[i + 2]):
                out["score"] = int(words[i + 2])
                i += 3
                continue
            if kind in ("win", "loss", "mate") and i + 2 < len(words) and _is_int(words[i + 2]):
                n = int(words[i + 2])
                if kind == "mate":  # UCI: moves, each the engine's turn and the reply
                    kind, n = ("win", 2 * n - 1) if n > 0 else ("loss", -2 * n)
                out["score"] = {kind: abs(n)}
                i += 3
                continue
        other.append(words[i])
        i += 1
    if other:
        out["other"] = " ".join(other)
    return out


def _is_int(word: str) -> bool:
    digits = word[1:] if word[:1] in "+-" else word
    return digits.isascii() and digits.isdigit() and len(word) <= 20


def score_value(score: Any, win_value: int = 100_000) -> Optional[float]:
    """A score as one number for comparisons and graphs: a number as is; a forced win in N
    plies ``win_value - N``, a loss ``-(win_value - N)``; None when there is none."""
    if isinstance(score, (int, float)) and not isinstance(score, bool):
        return float(score)
    if isinstance(score, dict):
        if "win" in score:
            return float(win_value - int(score["win"]))
        if "loss" in score:
            return -float(win_value - int(score["loss"]))
    return None


@dataclass(frozen=True)
class BestMove:
    """``bestmove <move>``, or UCI's ``bestmove <move> ponder <move>``: the move it would
    think about on the opponent's time (``ponder``; the referee plays no pondering: it is
    kept, never asked for)."""

    move: str
    ponder: Optional[str] = None


BotMessage = Union[Id, OptionDecl, MorrisOk, ReadyOk, Info, BestMove]

OPTION_TYPES = ("check", "spin", "combo", "string", "button")


def format_id(key: str, value: str) -> str:
    return f"id {key} {value}"


def format_option(decl: OptionDecl) -> str:
    parts = [f"option name {decl.name} type {decl.type}"]
    if decl.default is not None:
        parts.append(f"default {decl.default}")
    if decl.min is not None:
        parts.append(f"min {decl.min}")
    if decl.max is not None:
        parts.append(f"max {decl.max}")
    parts.extend(f"var {v}" for v in decl.vars)
    return " ".join(parts)


def format_morrisok() -> str:
    return "morrisok"


def format_readyok() -> str:
    return "readyok"


def format_info(text: str) -> str:
    return f"info {text}"


def format_bestmove(move: object) -> str:
    return f"bestmove {move}"


def _parse_option(args: list[str], text: str) -> OptionDecl:
    keywords = ("name", "type", "default", "min", "max", "var")
    if not args or args[0] != "name" or "type" not in args:
        raise ProtocolError(f"option needs 'name <name> type <type>': {text[:200]!r}", text)
    fields: dict[str, list[str]] = {}
    vars_: list[str] = []
    key = None
    for word in args:
        if word in keywords and (key != "name" or word == "type"):
            if key == "var":
                vars_.append(" ".join(fields.pop("var", [])))
            key = word
            fields.setdefault(key, [])
            continue
        if key is None:
            raise ProtocolError(f"bad option line: {text[:200]!r}", text)
        fields[key].append(word)
    if key == "var":
        vars_.append(" ".join(fields.pop("var", [])))
    name = " ".join(fields.get("name", []))
    typ = " ".join(fields.get("type", []))
    if not name or typ not in OPTION_TYPES:
        raise ProtocolError(f"option needs a name and a type in {OPTION_TYPES}: {text[:200]!r}", text)
    try:
        lo = int(fields["min"][0]) if fields.get("min") else None
        hi = int(fields["max"][0]) if fields.get("max") else None
    except ValueError:
        raise ProtocolError(f"option min/max must be integers: {text[:200]!r}", text) from None
    default = " ".join(fields["default"]) if "default" in fields else None
    return OptionDecl(name, typ, default, lo, hi, tuple(vars_))


def parse_bot_line(line: str) -> BotMessage:
    """Parse a line a bot sends; raises :class:`ProtocolError` (carrying the line) otherwise."""
    text = _clean(line)
    words = text.split()
    if not words:
        raise ProtocolError("empty line", text)
    cmd, args = words[0], words[1:]
    if cmd == "id" and len(args) >= 2 and args[0] in ("name", "author"):
        return Id(args[0], " ".join(args[1:]))
    if cmd == "option":
        return _parse_option(args, text)
    if cmd == "morrisok" and not args:
        return MorrisOk()
    if cmd == "readyok" and not args:
        return ReadyOk()
    if cmd == "info":
        return Info(text[4:].strip())
    if cmd == "bestmove" and len(args) == 1:
        return BestMove(args[0])
    if cmd == "bestmove" and len(args) == 3 and args[1] == "ponder":  # as UCI engines send
        return BestMove(args[0], args[2])
    raise ProtocolError(f"unexpected line from bot: {text[:200]!r} ({STDOUT_HINT})", text)


# --------------------------------------------------------------------------------------
# Showing what a bot sent
# --------------------------------------------------------------------------------------

#: control characters (C0, DEL, C1), lone surrogates, and the invisible format characters
#: that reorder or hide text (bidirectional overrides, zero-width characters, line/paragraph
#: separators, the byte order mark)
_CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f"
                         "\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff]")


_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(m: re.Match[str]) -> str:
    char = m.group()
    code = ord(char)
    return _SHORT_ESCAPES.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def escape_controls(text: str, keep: str = "") -> str:
    """``text`` (anything a bot sent) safe to show on a terminal or a page: each control
    character written as ``\\xNN``, ``\\n``, ``\\r`` or ``\\t`` (``\\uNNNN`` for the
    invisible format characters, such as bidirectional overrides), except those in ``keep``
    (e.g. ``"\\n\\t"`` for a block of stderr, where a ``\\r`` before a ``\\n`` goes too).
    Nothing else changes: HTML escaping is the template's job."""
    if not _CONTROL_RE.search(text):
        return text
    if "\n" in keep:
        text = text.replace("\r\n", "\n")
    if keep:
        return _CONTROL_RE.sub(lambda m: m.group() if m.group() in keep else _escape_char(m), text)
    return _CONTROL_RE.sub(_escape_char, text)
