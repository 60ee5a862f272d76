"""Forfeits grouped by bot and reason, for the report's table and the runner's console.

A bot that fails the same way in every game (a syntax error, a crash on move 5) gives twenty
forfeits that differ only in their game: :func:`forfeit_reason` is the forfeit with its
game-specific parts (colour, numbers such as move numbers, times and exit codes) normalised,
so that equal reasons group together, and :func:`group_forfeits` makes one group per
(bot, reason) with its count, its games and the first game's detail and stderr as the example.
Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from arena.records import GameRecord

__all__ = ["ForfeitGroup", "ForfeitGrouper", "forfeit_bot", "forfeit_reason", "group_forfeits"]

_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
#: text the bot sent, quoted in a detail: another game's is another text, the same bug
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
#: a move or a point of the board (``d6``, ``a1-a4xb2``, ``G7x``): the game's, not the cause
_MOVE = re.compile(r"\b[A-Ga-g][1-7](?:[-x][A-Ga-g]?[1-7]?)*x?(?![\w])")
_COLOR = re.compile(r"^(white|black) \(")


def forfeit_bot(record: GameRecord) -> Optional[str]:
    """The name of the bot that forfeited ``record``, or None if nobody did."""
    if record.forfeit == "white":
        return record.white.name
    if record.forfeit == "black":
        return record.black.name
    return None


def forfeit_reason(record: GameRecord) -> str:
    """``termination: detail`` with the game-specific parts normalised (the colour becomes
    ``<colour>``, the bot's quoted text ``'…'``, moves and points ``M``, every number
    ``N``), so that one failure repeated in many games (one malformed-move bug, one crash)
    is one reason."""
    detail = _COLOR.sub("<colour> (", record.detail, count=1)
    detail = _QUOTED.sub("'…'", detail)
    detail = _MOVE.sub("M", detail)
    detail = _NUMBER.sub("N", _HEX.sub("0xN", detail))
    return f"{record.termination}: {detail}" if detail else record.termination


@dataclass
class ForfeitGroup:
    """The forfeits of one bot for one reason: how many (``total``), in which games (the
    first ones' ids, ``games``; all of them when not capped), their variants, and the first
    one as the example (its detail, offending line and stderr)."""

    bot: str
    termination: str
    reason: str
    first: GameRecord
    games: list[str] = field(default_factory=list)
    total: int = 0
    variants: set[str] = field(default_factory=set)

    @property
    def count(self) -> int:
        """How many games the bot forfeited this way."""
        return max(self.total, len(self.games))

    @property
    def stderr(self) -> str:
        """The bot's stderr in the first game (empty if it wrote none)."""
        return (self.first.stderr or {}).get(self.first.forfeit or "", "")


class ForfeitGrouper:
    """:func:`group_forfeits`, one game at a time (:meth:`add`), keeping the ids of the first
    ``keep`` games of each group (None: all) and counting the rest."""

    def __init__(self, keep: Optional[int] = None) -> None:
        self.keep = keep
        self.groups: dict[tuple[str, str], ForfeitGroup] = {}

    def add(self, game: Any) -> None:
        """Count ``game`` (a record, or an :class:`arena.tallies.Game`) if it was forfeited."""
        r = game.full() if hasattr(game, "full") else game
        bot = forfeit_bot(r)
        if bot is None:
            return
        reason = forfeit_reason(r)
        group = self.groups.get((bot, reason))
        if group is None:
            group = self.groups[bot, reason] = ForfeitGroup(bot, r.termination, reason, r)
        group.total += 1
        group.variants.add(r.variant)
        if self.keep is None or len(group.games) < self.keep:
            group.games.append(r.game_id)

    def result(self) -> dict[str, list[ForfeitGroup]]:
        """Each forfeiting bot's groups, most frequent reason first (bots in name order)."""
        out: dict[str, list[ForfeitGroup]] = {}
        for (bot, _), group in self.groups.items():
            out.setdefault(bot, []).append(group)
        return {bot: sorted(out[bot], key=lambda g: (-g.count, g.reason))
                for bot in sorted(out)}


def group_forfeits(records: Iterable[GameRecord]) -> dict[str, list[ForfeitGroup]]:
    """Each forfeiting bot's groups, most frequent reason first (bots in name order)."""
    grouper = ForfeitGrouper()
    for r in records:
        grouper.add(r)
    return grouper.result()
