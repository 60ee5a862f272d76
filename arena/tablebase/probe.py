"""The prober: a folder of table files answering for positions, like python-chess's
``chess.syzygy``.

>>> with open_tablebase("~/.cache/morris-arena/tablebases") as tb:   # doctest: +SKIP
...     tb.probe(position)          # Probe(value='win', distance=7)
...     tb.probe_moves(position)    # [MoveProbe(move=Move('a1', 'a4'), value='win', ...), ...]

``probe`` answers for the side to move: ``win``, ``draw`` or ``loss`` and the distance in
plies to the next capture or the end of the game under optimal play (the winner shortening,
the loser lengthening it; 0 for a draw or a game already over).  The value honours the
position's quiet-turn count: a table win whose distance does not fit in what is left of
``no_capture_draw`` (or ``three_three_draw`` at three men each) is a draw, as it would be in
the game; so is a loss the loser can drag past the limit.  This is exact when every
distance of the tables is within ``no_capture_draw`` (checked: a variant with a shorter rule
gets :class:`TablebaseMismatch`).

Positions the tables do not hold raise :class:`NotCovered` (men in hand, removals owed, men
counts above the tables', a variant whose rules are not the tables'), with the subclasses
:class:`MissingTable`, :class:`TablebaseMismatch` and :class:`UnsupportedVariant`.  A damaged
file raises :class:`TablebaseCorrupt` when a probe first needs it.

Files are found by their header (any name ending in ``.mtb``); a table is read and its
checksum verified the first time a probe needs it.  No numpy: the referee and bots import
this module.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Literal, Optional, Union

from arena.rules import Move, Position
from arena.tablebase.errors import (MissingTable, NotCovered, TablebaseCorrupt,
                                    TablebaseError, TablebaseMismatch)
from arena.tablebase.fileformat import Header, Orientation, loads, read_header
from arena.tablebase.geometry import geometry
from arena.tablebase.index import Layout
from arena.tablebase.params import SUFFIX, TableRules
from arena.variants import Variant

Value = Literal["win", "draw", "loss"]
_FLIP: dict[str, Value] = {"win": "loss", "draw": "draw", "loss": "win"}


@dataclass(frozen=True)
class Probe:
    """What the tables say of a position, for the side to move."""

    value: Value
    #: plies to the next capture or the end under optimal play; 0 for a draw
    distance: int


@dataclass(frozen=True)
class MoveProbe:
    """A legal move and what it leads to, for the side that plays it."""

    move: Move
    value: Value
    #: plies from before the move to the next capture or the end (1 for a capture); 0 for
    #: a draw
    distance: int


def rank(value: str, distance: int) -> tuple[int, int]:
    """A sort key, best first for the side choosing: wins soonest, draws, losses latest."""
    if value == "win":
        return (0, distance)
    if value == "draw":
        return (1, 0)
    return (2, -distance)


class _Table:
    """One file: its header at once, its data the first time it is needed."""

    def __init__(self, path: Path, header: Header) -> None:
        self.path = path
        self.header = header
        self.layouts: Optional[dict[int, tuple[Layout, Orientation]]] = None

    def load(self) -> dict[int, tuple[Layout, Orientation]]:
        if self.layouts is None:
            try:
                blob = self.path.read_bytes()
            except OSError as e:
                raise TablebaseCorrupt(f"{self.path}: cannot read ({e.strerror})") from None
            header, orients = loads(blob, str(self.path))
            if header.data != self.header.data:
                raise TablebaseCorrupt(f"{self.path}: changed while open")
            geo = geometry(header.rules.board)
            self.layouts = {o.mover: (Layout(geo, o.mover, o.opponent, o.classes), o)
                            for o in orients}
        return self.layouts

    def lookup(self, mover: int, opponent: int, m: int) -> tuple[int, int]:
        """(1 won / 0 drawn / -1 lost, distance) of the position."""
        layout, orient = self.load()[m]
        code = orient.codes[layout.index(mover, opponent)]
        flag = 128 if self.header.dtype == "uint8" else 32768
        if code == 0:
            return 0, 0
        if code >= flag:
            return -1, code - flag
        return 1, code


class Tablebase:
    """The tables of a folder (or one file).  Use as a context manager, or call
    :meth:`close`; probing a closed tablebase raises :class:`TablebaseError`."""

    def __init__(self, path: Union[str, os.PathLike[str]]) -> None:
        self.path = Path(path).expanduser()
        self._tables: dict[tuple[str, int, int], _Table] = {}
        self._rules: dict[int, tuple[Variant, TableRules]] = {}
        self._closed = False
        if self.path.is_dir():
            files = sorted(p for p in self.path.iterdir()
                           if p.name.endswith(SUFFIX) and not p.name.startswith("."))
        elif self.path.is_file():
            files = [self.path]
        else:
            raise MissingTable(f"no tablebase folder or file at {self.path}")
        for p in files:
            header = read_header(p)
            a, b = header.men
            self._tables[(header.rules.key, a, b)] = _Table(p, header)

    # -- context manager ----------------------------------------------------------------
    def __enter__(self) -> Tablebase:
        return self

    def __exit__(self, kind: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()

    def close(self) -> None:
        """Forget the tables (their memory is freed)."""
        self._tables.clear()
        self._closed = True

    # -- what is here ------------------------------------------------------------------
    def headers(self) -> list[Header]:
        """The headers of every table found, smaller tables first."""
        return [t.header for _, t in sorted(self._tables.items(),
                                            key=lambda kv: (kv[0][1] + kv[0][2], kv[0]))]

    def rules_for(self, variant: Variant) -> TableRules:
        """The table rules of ``variant`` (:class:`UnsupportedVariant` if it has none)."""
        known = self._rules.get(id(variant))  # variants are frozen: one answer per object
        if known is None or known[0] is not variant:
            known = self._rules[id(variant)] = (variant, TableRules.of(variant))
        return known[1]

    def _table(self, variant: Variant, m: int, o: int) -> _Table:
        if self._closed:
            raise TablebaseError("the tablebase is closed")
        rules = self.rules_for(variant)
        a, b = max(m, o), min(m, o)
        table = self._tables.get((rules.key, a, b))
        if table is None:
            others = [t for (_, x, y), t in self._tables.items() if (x, y) == (a, b)]
            if others:
                near = min(others, key=lambda t: len(rules.differences(t.header.rules)))
                raise TablebaseMismatch(
                    f"the {a}-{b} table in {self.path} is for other rules than "
                    f"{variant.name}: {', '.join(rules.differences(near.header.rules))}")
            raise MissingTable(f"no {a}-{b} table for {variant.name} in {self.path} (build it "
                               f"with: arena tablebase build {variant.name} --men {a}-{b})")
        limit = variant.no_capture_draw
        longest = table.header.chain_max_distance
        if limit and limit < longest:
            raise TablebaseMismatch(
                f"{variant.name}: no_capture_draw={limit} is shorter than the longest "
                f"distance of the {a}-{b} table and those below it ({longest} plies); the "
                "tables are exact only for a rule at least that long")
        return table

    def covers(self, variant: Variant | str) -> bool:
        """Whether this folder holds any table for ``variant``'s rules (a variant or its
        name)."""
        try:
            key = self.rules_for(_variant(variant)).key
        except NotCovered:  # UnsupportedVariant: no table rules for it
            return False
        return any(k == key for k, _, _ in self._tables)

    def preload(self, variant: Variant | str) -> list[Header]:
        """Read and check every table for ``variant``'s rules (a variant or its name) now, so
        that no probe pays for it later (a bot before its first move, a tournament before
        its first game); returns their headers, smaller tables first.

        :raises UnsupportedVariant: the variant has no tables.
        :raises TablebaseCorrupt: a table is damaged.
        """
        key = self.rules_for(_variant(variant)).key
        found = sorted(((a, b), t) for (k, a, b), t in self._tables.items() if k == key)
        for _, table in found:
            table.load()
        return [t.header for _, t in found]

    # -- probing -----------------------------------------------------------------------
    def probe(self, position: Position) -> Probe:
        """The value and distance of ``position`` for the side to move.

        :raises NotCovered: no table holds the position (see the module's text).
        :raises TablebaseCorrupt: the table it needs is damaged.
        """
        variant = position.variant
        rules = self.rules_for(variant)
        if position.hand[0] or position.hand[1]:
            raise NotCovered("men in hand: the tables hold the moving phase only")
        if position.pending[0] or position.pending[1]:
            raise NotCovered("removals are owed: the tables hold the moving phase only")
        t = position.turn
        mover, opponent = position.men[t], position.men[1 - t]
        m, o = mover.bit_count(), opponent.bit_count()
        if m < rules.lose_below:
            return Probe("loss", 0)
        if o < rules.lose_below:
            return Probe("win", 0)
        table = self._table(variant, m, o)
        outcome = position.outcome()
        if outcome is not None:
            if outcome.winner is None:
                return Probe("draw", 0)
            return Probe("win" if outcome.winner == t else "loss", 0)
        value, distance = table.lookup(mover, opponent, m)
        if value == 0:
            return Probe("draw", 0)
        limit = variant.no_capture_draw
        if variant.three_three_draw and m == 3 == o:
            limit = min(limit, variant.three_three_draw) if limit else variant.three_three_draw
        if limit and position.quiet + distance > limit:
            return Probe("draw", 0)
        return Probe("win" if value > 0 else "loss", distance)

    def probe_moves(self, position: Position) -> list[MoveProbe]:
        """Every legal move of ``position`` with the value it leads to for the side to move
        and its distance, best first (:func:`rank`).  Empty when the game is over.

        :raises NotCovered: no table holds the position.
        """
        self.probe(position)  # the position itself must be covered
        pos = position.copy()
        moves = pos.legal_moves()
        out = []
        me = pos.turn
        for move, raw in zip(moves, pos.generate_raw()):
            pos.push_raw(raw)
            try:
                after = self.probe(pos)
                same = pos.turn == me
            finally:
                pos.pop_raw()
            value = after.value if same else _FLIP[after.value]
            if value == "draw":
                distance = 0
            elif raw[2]:
                distance = 1  # a capture or a removal: the count starts again
            else:
                distance = after.distance + 1
            out.append(MoveProbe(move, value, distance))
        out.sort(key=lambda mp: (rank(mp.value, mp.distance), str(mp.move)))
        return out


def open_tablebase(path: Union[str, os.PathLike[str]]) -> Tablebase:
    """The tables in the folder ``path`` (or the one table file ``path``).

    :raises MissingTable: ``path`` does not exist.
    :raises TablebaseCorrupt: a table file's header is damaged.
    """
    return Tablebase(path)


def _variant(variant: Variant | str) -> Variant:
    """``variant``, or the variant of that name (:func:`arena.variants.get_variant`)."""
    if isinstance(variant, str):
        from arena.variants import get_variant

        return get_variant(variant)
    return variant
