"""Which rule parameters a table depends on, and the tables' file names.

A table holds the moving and flying phases (both hands empty).  Its values depend on:

* ``board``: the points, adjacencies and mills (and so the symmetries);
* ``flying`` and ``fly_at``: which men counts fly (``fly_at`` is kept only with flying);
* ``mill_capture``, ``multi_mill_captures``, ``optional_capture``: which men a mill takes;
* ``lose_below``: the men count that loses (the smallest table is ``lose_below``-each);
* ``blocked``: what a player without a move does (loses, draws, or removes and moves on);
* ``three_three_draw``: a three-against-three ending drawn after that many quiet turns, which
  decides whether a capture into 3-3 wins (tables above 3-3 depend on it).

They do not depend on ``men`` (the tables cover fewer men than any start), the placement
rules (``placement_mill``, ``move_in_placement``, ``second_moves_first``), ``board_full``
(tables stop before the board is full), ``repetition`` (values assume repeated positions
are draws, and a win never repeats a position under optimal play) or ``no_capture_draw``:
stored values ignore that count and the prober applies it to the stored distance, which is
exact when ``no_capture_draw`` is at least the tables' longest distance (checked).

Variants with state beyond the men and the side to move are refused
(:class:`UnsupportedVariant`): ``no_immediate_reform``, ``one_time_mill``, ``mill_wins``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from arena.board import TOPOLOGIES
from arena.tablebase.errors import UnsupportedVariant
from arena.variants import Variant

#: the table file format's version (the header's ``format``)
FORMAT_VERSION = 1
#: table file names end with this
SUFFIX = ".mtb"
#: the environment variable naming the default tables folder
DIR_VARIABLE = "MORRIS_ARENA_TABLEBASES"


@dataclass(frozen=True)
class TableRules:
    """The rule parameters a table's values depend on (see the module's text)."""

    board: str
    flying: bool
    fly_at: int
    mill_capture: str
    multi_mill_captures: int
    optional_capture: bool
    lose_below: int
    blocked: str
    three_three_draw: int

    @classmethod
    def of(cls, variant: Variant) -> TableRules:
        """The table rules of ``variant``.

        :raises UnsupportedVariant: a rule the tables cannot hold.
        """
        reasons = []
        if variant.mill_wins:
            reasons.append("mill_wins (a mill ends the game: no capture phases)")
        if variant.no_immediate_reform:
            reasons.append("no_immediate_reform (the forbidden mill is state beyond the men)")
        if variant.one_time_mill:
            reasons.append("one_time_mill (the used lines are state beyond the men)")
        if variant.lose_below < 1:
            reasons.append("lose_below below 1")
        if reasons:
            raise UnsupportedVariant(f"{variant.name}: no tablebase for a variant with "
                                     + ", ".join(reasons))
        return cls(board=variant.board, flying=variant.flying,
                   fly_at=variant.fly_at if variant.flying else 0,
                   mill_capture=variant.mill_capture,
                   multi_mill_captures=variant.multi_mill_captures,
                   optional_capture=variant.optional_capture, lose_below=variant.lose_below,
                   blocked=variant.blocked, three_three_draw=variant.three_three_draw)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TableRules:
        """From a header's ``rules``; raises ``ValueError`` when it is not one."""
        names = {f.name for f in dataclasses.fields(cls)}
        if set(data) != names:
            raise ValueError(f"expected the keys {sorted(names)}, got {sorted(data)}")
        rules = cls(**dict(data))
        if rules.board not in TOPOLOGIES:
            raise ValueError(f"unknown board {rules.board!r}")
        return rules

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @functools.cached_property
    def key(self) -> str:
        """A short name for these rules: the board and a hash of every parameter."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return f"{self.board}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"

    def flies(self, men: int) -> bool:
        """Whether a player with ``men`` men (none in hand) flies."""
        return self.flying and men <= self.fly_at

    def differences(self, other: TableRules) -> list[str]:
        """``key=this (other: that)`` for every parameter that differs."""
        mine, theirs = self.to_dict(), other.to_dict()
        return [f"{k}={_text(mine[k])} (table: {_text(theirs[k])})"
                for k in mine if mine[k] != theirs[k]]


def _text(value: object) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def table_name(rules: TableRules, a: int, b: int) -> str:
    """The file name of the table of ``a`` against ``b`` men (``a >= b``) for ``rules``."""
    return f"{rules.key}.{a}-{b}{SUFFIX}"


def parse_men(text: str) -> tuple[int, int]:
    """``"4-3"`` -> ``(4, 3)`` (the larger count first); raises ``ValueError``."""
    parts = text.strip().split("-")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ValueError(f"expected men counts as A-B (e.g. 4-4), got {text!r}")
    a, b = int(parts[0]), int(parts[1])
    return max(a, b), min(a, b)


def default_directory() -> Path:
    """Where tables live by default: ``$MORRIS_ARENA_TABLEBASES``, else
    ``$XDG_CACHE_HOME/morris-arena/tablebases``, else ``~/.cache/morris-arena/tablebases``."""
    named = os.environ.get(DIR_VARIABLE)
    if named:
        return Path(named)
    cache = os.environ.get("XDG_CACHE_HOME")
    base = Path(cache) if cache else Path.home() / ".cache"
    return base / "morris-arena" / "tablebases"
