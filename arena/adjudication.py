"""Ending a game early, as cutechess and fastchess do: by the bots' own scores (a draw both
agree on, a loss the loser admits), by a maximum length, or by the endgame tablebases.
Pure: the referee feeds each move's score in and asks for a verdict.

A tournament file (or ``arena sprt`` / ``arena play``) says::

    adjudicate:
      draw: {after_turn: 40, turns: 8, score: 10}    # both |score| <= 10 for 8 turns each
      resign: {turns: 3, score: 600, twosided: true}  # the loser <= -600 for 3 of its turns
                                                      #   (and the winner >= 600 for 3 of its)
      max_turns: 400                                  # a draw once 400 turns each are played
      tablebase: true                                 # decided endgames (docs/TABLEBASES.md):
                                                      #   true (the default folder) or a folder

Semantics (cutechess's ``GameAdjudicator``, with Morris's words: a *turn* is one player's
move, a *move number* counts both players' turns):

* A score is the one the mover sends with its move (``info ... score N``, in its own units,
  from its own side; a forced ``win N`` counts as a very large score, ``loss N`` as a very
  negative one).  A move without a score (a bot that sends none, an opening move of the
  referee's) resets every count: a bot that sends no score is never adjudicated by score.
* **draw**: the count of consecutive turns (of both players) whose score is within
  ``±score`` grows by one per such turn and falls to 0 on any other turn, and on every
  capture or placement (irreversible turns: cutechess resets on captures and pawn moves);
  the game is a draw once ``after_turn`` move numbers have been played (plies / 2 ≥
  ``after_turn``) and the count reaches ``2 × turns``.
* **resign**: per player, the count of its consecutive turns scoring ``≤ -score``; at
  ``turns`` that player loses, if ``twosided`` only when the opponent's own count of turns
  scoring ``≥ +score`` has also reached ``turns``.
* **max_turns**: a draw once ``2 × max_turns`` plies are played (the rules' own draws, such
  as no capture for N turns, usually come first).
* **tablebase**: after each turn, a position the endgame tables cover ends the game with
  their value, exactly (``termination: tablebase``): a win the tables can force only in
  more turns than the variant's no-capture (or three-men) draw rule leaves is a draw, as
  the prober counts the quiet turns already played (fastchess does the same with DTZ and
  the fifty-move rule).  A position the tables do not cover plays on.

Where it differs from cutechess: cutechess also ends a game on a "trusted" mate score of an
engine given ``whitepov``/``trust``; Morris Arena has no trust setting (a forced ``win N``
counts only through the resign rule).  Tablebase adjudication is exact, not a score rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from arena.errors import ConfigError
from arena.protocol import score_value

#: the keys of ``adjudicate:`` and of its ``draw:`` and ``resign:``
KEYS = ("draw", "resign", "max_turns", "tablebase")
DRAW_KEYS = ("after_turn", "turns", "score")
RESIGN_KEYS = ("turns", "score", "twosided")
#: the largest number any of them may be
_MAX = 1_000_000


@dataclass(frozen=True)
class Adjudication:
    """The rules (None: that rule is off).  See the module's docstring."""

    draw_after: Optional[int] = None
    draw_turns: int = 0
    draw_score: int = 0
    resign_turns: Optional[int] = None
    resign_score: int = 0
    twosided: bool = False
    max_turns: Optional[int] = None
    tablebase: bool = False
    #: the tables' folder ("": the default, :func:`arena.tablebase.default_directory`)
    tablebase_dir: str = ""

    @property
    def active(self) -> bool:
        """True when any rule is on."""
        return (self.draw_after is not None or self.resign_turns is not None
                or self.max_turns is not None or self.tablebase)

    def to_dict(self) -> dict[str, Any]:
        """The ``adjudicate:`` mapping that :func:`parse_adjudication` reads back."""
        out: dict[str, Any] = {}
        if self.draw_after is not None:
            out["draw"] = {"after_turn": self.draw_after, "turns": self.draw_turns,
                           "score": self.draw_score}
        if self.resign_turns is not None:
            out["resign"] = {"turns": self.resign_turns, "score": self.resign_score,
                             "twosided": self.twosided}
        if self.max_turns is not None:
            out["max_turns"] = self.max_turns
        if self.tablebase:
            out["tablebase"] = self.tablebase_dir or True
        return out


def _number(value: Any, where: str, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= _MAX:
        raise ConfigError(f"expected a whole number from {low} to {_MAX}, got {value!r}"[:120],
                          where)
    return value


def _mapping(value: Any, where: str, keys: tuple[str, ...]) -> Mapping[str, Any]:
    from arena.hints import did_you_mean

    if not isinstance(value, Mapping):
        raise ConfigError(f"expected a mapping with keys {', '.join(keys)}", where)
    for key in value:
        if key not in keys:
            raise ConfigError(f"unknown key ({did_you_mean(str(key), keys)}expected one of: "
                              f"{', '.join(keys)})", f"{where}.{key}")
    return value


def parse_adjudication(data: Any, where: str = "adjudicate") -> Adjudication:
    """``adjudicate:`` (None or an empty mapping: off) into an :class:`Adjudication`.

    :raises ConfigError: naming the key path and what was expected.
    """
    if data is None:
        return Adjudication()
    top = _mapping(data, where, KEYS)
    out: dict[str, Any] = {}
    if "draw" in top:
        draw = _mapping(top["draw"], f"{where}.draw", DRAW_KEYS)
        missing = [k for k in DRAW_KEYS if k not in draw]
        if missing:
            raise ConfigError(f"missing: {', '.join(missing)}", f"{where}.draw")
        out.update(draw_after=_number(draw["after_turn"], f"{where}.draw.after_turn"),
                   draw_turns=_number(draw["turns"], f"{where}.draw.turns", 1),
                   draw_score=_number(draw["score"], f"{where}.draw.score"))
    if "resign" in top:
        resign = _mapping(top["resign"], f"{where}.resign", RESIGN_KEYS)
        missing = [k for k in ("turns", "score") if k not in resign]
        if missing:
            raise ConfigError(f"missing: {', '.join(missing)}", f"{where}.resign")
        twosided = resign.get("twosided", False)
        if not isinstance(twosided, bool):
            raise ConfigError(f"expected true or false, got {twosided!r}"[:80],
                              f"{where}.resign.twosided")
        out.update(resign_turns=_number(resign["turns"], f"{where}.resign.turns", 1),
                   resign_score=_number(resign["score"], f"{where}.resign.score", 1),
                   twosided=twosided)
    if "max_turns" in top:
        out["max_turns"] = _number(top["max_turns"], f"{where}.max_turns", 1)
    if "tablebase" in top:
        value = top["tablebase"]
        if isinstance(value, str) and value.strip():
            out.update(tablebase=True, tablebase_dir=value.strip())
        elif isinstance(value, bool):
            out["tablebase"] = value
        else:
            raise ConfigError(f"expected true, false or the tables' folder, got {value!r}"[:80],
                              f"{where}.tablebase")
    return Adjudication(**out)


def parse_tokens(text: str, where: str) -> dict[str, Any]:
    """A command line's ``key=value`` tokens (``"after_turn=40 turns=8 score=10"``) as the
    mapping a file would give (whole numbers, true/false).

    :raises ConfigError: a token without ``=``.
    """
    out: dict[str, Any] = {}
    for token in text.replace(",", " ").split():
        key, sep, value = token.partition("=")
        if not sep:
            raise ConfigError(f"expected KEY=VALUE tokens, got {token!r}"[:100], where)
        low = value.strip().lower()
        out[key.strip()] = (True if low == "true" else False if low == "false"
                            else int(low) if low.lstrip("-").isdigit() else value)
    return out


@dataclass(frozen=True)
class Verdict:
    """An adjudicated ending: ``result`` (``1-0``, ``0-1``, ``1/2-1/2``), the rule that
    decided it (``draw``, ``resign``, ``max_turns``, ``tablebase``) and a sentence."""

    result: str
    rule: str
    detail: str


class Adjudicator:
    """The counts of one game (see the module's docstring)."""

    def __init__(self, rules: Adjudication) -> None:
        self.rules = rules
        self.draw_count = 0
        self.resign_count = [0, 0]
        self.win_count = [0, 0]
        self.last_scores: list[Optional[float]] = [None, None]

    def after_move(self, pos: Any, move: Any, color: int,
                   info: Optional[Mapping[str, Any]]) -> Optional[Verdict]:
        """:meth:`add` for the turn just played on ``pos`` (a :class:`~arena.rules.Position`):
        ``move`` by ``color``, with the mover's last ``info`` (None: it sent none).  (The
        tablebase's verdict, ``rules.tablebase``, is the referee's to ask for first:
        :func:`arena.verdicts.tablebase_verdict`, a layer above this one.)"""
        return self.add(len(pos.move_stack), color, score_value((info or {}).get("score")),
                        bool(move.captures) or move.src is None)

    def add(self, plies: int, color: int, score: Optional[float],
            irreversible: bool) -> Optional[Verdict]:
        """The turn just played: ``plies`` played so far (this one included), by ``color``
        (0 white, 1 black), with the mover's ``score`` (None: it sent none, or the
        referee played it), ``irreversible`` (a capture or a placement).  A verdict ends
        the game now."""
        r = self.rules
        if irreversible:
            self.draw_count = 0
        self.last_scores[color] = score
        if score is None:
            self.draw_count = 0
            self.resign_count[color] = self.win_count[color] = 0
        else:
            if r.draw_after is not None:
                self.draw_count = self.draw_count + 1 if abs(score) <= r.draw_score else 0
                if plies // 2 >= r.draw_after and self.draw_count >= 2 * r.draw_turns:
                    return Verdict("1/2-1/2", "draw", (
                        f"both bots scored within ±{r.draw_score} for {r.draw_turns} turns "
                        f"each after turn {r.draw_after} (last scores: "
                        f"{self._scores()})"))
            if r.resign_turns is not None:
                self.resign_count[color] = (self.resign_count[color] + 1
                                            if score <= -r.resign_score else 0)
                self.win_count[color] = (self.win_count[color] + 1
                                         if score >= r.resign_score else 0)
                other = 1 - color
                if self.resign_count[color] >= r.resign_turns and (
                        not r.twosided or self.win_count[other] >= r.resign_turns):
                    names = ("white", "black")
                    both = (f", and {names[other]} scored at least +{r.resign_score} for as "
                            f"long" if r.twosided else "")
                    return Verdict("0-1" if color == 0 else "1-0", "resign", (
                        f"{names[color]} scored -{r.resign_score} or less for "
                        f"{r.resign_turns} turns{both} (last scores: {self._scores()})"))
        if r.max_turns is not None and plies >= 2 * r.max_turns:
            return Verdict("1/2-1/2", "max_turns",
                           f"{r.max_turns} turns each were played (max_turns)")
        return None

    def _scores(self) -> str:
        return ", ".join(f"{name} {'-' if s is None else f'{s:+g}'}"
                         for name, s in zip(("white", "black"), self.last_scores))


__all__ = ["Adjudication", "Adjudicator", "Verdict", "parse_adjudication", "parse_tokens",
           "KEYS"]
