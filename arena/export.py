"""Games as PGN-style text: a portable file a person, a Morris program or a PGN reader can read.

``arena export RESULTS`` writes every record of a results folder (or of a ``games.jsonl``
file) as one PGN game.  PGN, chess's Portable Game Notation, is the form Morris programs
already exchange: Sanmill exports and imports it with a ``Variant`` tag (``[Variant "Nine
Men's Morris"]``) and moves in the same coordinates as our protocol (``d6``, ``a1-a4``,
``e3xd5``), and every PGN reader (python-chess, SCID, pgn-extract) can split, filter and
read the tags of such a file even if it cannot replay Morris moves.  So:

* **tags**: the Seven Tag Roster first, in its order (``Event``: the tournament's name;
  ``Site``: ``Morris Arena``; ``Date``: the day the game started, ``YYYY.MM.DD``; ``Round``:
  the round, ``?`` for a game outside a tournament; ``White``, ``Black``: the bots' display
  names; ``Result``), then ``Variant`` (the variant's name as ``arena variants`` lists it,
  e.g. ``nine-mens-morris``, or a tournament's own name for a variant it defines),
  ``Termination``, ``TimeControl``, ``PlyCount`` (as Sanmill writes it), ``GameId`` (the
  record's id in ``games.jsonl``) and, for a game that forfeits, ``Forfeit`` (the colour that
  failed).  ``Termination`` uses PGN's own words, which readers know: ``normal`` for every
  ending by the rules, ``time forfeit`` for a timeout, ``rules infraction`` for an illegal
  move or a protocol error, ``abandoned`` for a crash, a failed start or a referee error;
  our exact ending (``blocked``, ``repetition``, ``crash``...) and the referee's detail are
  in a comment at the end of the moves.  ``TimeControl`` is PGN's ``base+increment`` in
  seconds for a clock and cutechess's ``N/move`` (seconds) for a fixed time per move (both,
  joined by ``, ``, when the game had both).
* **SetUp and FEN** only for a game from a set-up position (a position book,
  ``start_position:``, ``arena play --position``): ``[SetUp "1"]`` and ``[FEN "<position
  text>"]``, the protocol's position text (docs/PROTOCOL.md), after ``Variant``; its moves
  are played from there (a PGN book with a FEN tag is read the same way).  Any other game
  starts from its variant's start position.  An opening the tournament imposed is the first
  turns of the moves, followed by a comment saying how many turns it was (``{opening: 2
  turns}``).
* **moves**: one turn a token, in the protocol's notation, numbered by full move (``1. d6
  f4 2. d2 d7xd2``), the result token last (``1-0``, ``0-1``, ``1/2-1/2``).
* **a comment after each move** a bot played, as cutechess writes it (:func:`move_comment`):
  ``{+120/5 0.183s}``: the score the bot sent with the move, in its own units and from its
  own side's view, a ``/`` and the depth when it sent one, then the wall time the move took
  in seconds; a forced result as ``{+M7/9 0.052s}`` (a win in 7 plies) or ``{-M4/6 ...}`` (a
  loss in 4 plies); the time alone (``{0.183s}``) for a bot that sent no score.  The
  referee's opening turns have none.

Tag values are escaped as PGN says (``\\`` before ``"`` and ``\\``); control characters
(a newline in a bot's name, an escape sequence) become U+FFFD, so no value can end its tag,
start another or break the file's lines; comments lose ``{`` and ``}`` likewise.

Pure: it formats records and writes nothing itself.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any, Iterable, Mapping, Optional

from arena.records import GameRecord, MoveInfo

#: PGN's Termination for each of our endings (anything else is ``normal``, a rules ending)
TERMINATIONS = {"timeout": "time forfeit", "illegal-move": "rules infraction",
                "protocol-error": "rules infraction", "crash": "abandoned",
                "start-failure": "abandoned", "error": "abandoned",
                "adjudication": "adjudication", "tablebase": "adjudication"}
SITE = "Morris Arena"
_RESULTS = ("1-0", "0-1", "1/2-1/2")
_MOVE = re.compile(r"^[a-z0-9x*\-]+$")  # the protocol's notation, x* (a man from the hand) too
_LINE = 79  # PGN export format: lines of at most 79 characters


def clean(text: str) -> str:
    """``text`` with every control or separator character other than a space (newlines,
    escapes, U+2028...) replaced by U+FFFD."""
    return "".join("\ufffd" if _is_control(c) else c for c in text)


def _is_control(c: str) -> bool:
    return c != " " and unicodedata.category(c)[0] in "CZ"


def tag_value(text: str) -> str:
    """``text`` as the inside of a PGN tag's quotes: control characters replaced
    (:func:`clean`), ``\\`` and ``"`` escaped with ``\\``."""
    return clean(text).replace("\\", "\\\\").replace('"', '\\"')


def comment(text: str) -> str:
    """``text`` as a PGN comment (``{...}``), braces and control characters replaced."""
    return "{" + clean(text).replace("{", "(").replace("}", ")") + "}"


def time_control(tc: Mapping[str, Any]) -> str:
    """A record's time control as PGN's TimeControl (``60+1``; ``40/60+0.6`` with moves per
    period; ``0.2/move`` for a fixed time per move; ``nodes=1000``, ``depth=6``; ``?`` when
    unknown): :func:`arena.clock.pgn_time_control`."""
    from arena.clock import pgn_time_control

    return pgn_time_control(tc)


def score_text(score: Any) -> Optional[str]:
    """A score as the PGN comments and ``arena show`` write it: ``+120``, ``-35``, ``0`` (a
    number in the bot's own units, from its own side's view), ``+M7`` (a forced win in 7
    plies), ``-M4`` (a forced loss in 4 plies); None for anything else."""
    if isinstance(score, bool):
        return None
    if isinstance(score, (int, float)) and math.isfinite(score):
        n = int(round(score))
        return f"{n:+d}" if n else "0"
    if isinstance(score, dict) and len(score) == 1:
        (kind, plies), = score.items()
        if kind in ("win", "loss") and isinstance(plies, int) and not isinstance(plies, bool):
            return f"{'+' if kind == 'win' else '-'}M{abs(plies)}"
    return None


def eval_text(info: Any) -> str:
    """A move's score and depth as ``+120/5`` (``+120`` without a depth); "" without a score
    (``info``: a record's :attr:`MoveInfo.info`, or None)."""
    if not isinstance(info, dict):
        return ""
    score = score_text(info.get("score"))
    if score is None:
        return ""
    depth = info.get("depth")
    if isinstance(depth, int) and not isinstance(depth, bool) and depth >= 0:
        return f"{score}/{depth}"
    return score


def move_comment(move: MoveInfo) -> str:
    """The text of the comment after a move (see the module's docstring): ``+120/5 0.183s``,
    ``0.183s`` without a score, "" for an opening turn."""
    if move.opening:
        return ""
    seconds = f"{max(float(move.wall_ms or 0.0), 0.0) / 1000:.3f}s"
    evaluation = eval_text(move.info)
    return f"{evaluation} {seconds}" if evaluation else seconds


def game_tags(record: GameRecord) -> list[tuple[str, str]]:
    """The tags of one game, in order (see the module's docstring)."""
    date = record.started[:10].replace("-", ".") if record.started else "????.??.??"
    tags = [("Event", record.tournament or "?"), ("Site", SITE), ("Date", date),
            ("Round", str(record.round) if record.round is not None else "?"),
            ("White", record.white.name), ("Black", record.black.name),
            ("Result", record.result if record.result in _RESULTS else "*"),
            ("Variant", record.variant),
            *((("SetUp", "1"), ("FEN", record.start_position)) if record.start_position
              else ()),
            ("Termination", TERMINATIONS.get(record.termination, "normal")),
            ("TimeControl", time_control(record.time_control)),
            ("PlyCount", str(len(record.moves))), ("GameId", record.game_id)]
    if record.forfeit:
        tags.append(("Forfeit", record.forfeit))
    return tags


def format_game(record: GameRecord) -> str:
    """One game as PGN text: its tags, a blank line, its moves, a blank line."""
    head = "".join(f'[{name} "{tag_value(value)}"]\n' for name, value in game_tags(record))
    tokens: list[str] = []
    opening = len(record.opening)
    # a set-up position with black to move: the moves start at "1..." (as in chess PGN)
    late = 1 if record.start_position and record.start_position.split()[1:2] == ["b"] else 0
    for ply, info in enumerate(record.moves):
        if (ply + late) % 2 == 0:
            tokens.append(f"{(ply + late) // 2 + 1}.")
        elif ply == 0:
            tokens.append("1...")
        move = info.move if _MOVE.match(info.move) else comment(f"unreadable move {info.move}")
        tokens.append(move)
        annotation = move_comment(info)
        if annotation:
            tokens.append(comment(annotation))
        if opening and ply + 1 == opening:
            tokens.append(comment(f"opening: {opening} turn{'s' if opening > 1 else ''}"))
    tokens.append(comment(_ending(record)))
    tokens.append(record.result if record.result in _RESULTS else "*")
    return head + "\n" + _wrap(tokens) + "\n\n"


def _ending(record: GameRecord) -> str:
    """Our own words for how the game ended: the ending, who forfeited and why."""
    if record.forfeit:
        text = f"{record.forfeit} forfeits: {record.termination}"
    else:
        text = record.termination
    return f"{text}: {record.detail}" if record.detail else text


def _wrap(tokens: list[str]) -> str:
    """The tokens in lines of at most :data:`_LINE` characters (a longer comment alone)."""
    lines: list[str] = []
    line = ""
    for token in tokens:
        if line and len(line) + 1 + len(token) > _LINE:
            lines.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    lines.append(line)
    return "\n".join(lines)


def format_games(records: Iterable[GameRecord]) -> Iterable[str]:
    """Each record as PGN text (:func:`format_game`), in the order given."""
    for record in records:
        yield format_game(record)


__all__ = ["SITE", "TERMINATIONS", "clean", "comment", "eval_text", "format_game",
           "format_games", "game_tags", "move_comment", "score_text", "tag_value",
           "time_control"]
