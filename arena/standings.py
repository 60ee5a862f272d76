"""Points, W-D-L and places from game records: the one place that counts and ranks them.

A win is 1 point, a draw 1/2, a loss 0 (``GameRecord.score``).  The runner's standings
tables, its live progress line, the ratings tables and the report all count through
:class:`Tally`, so they always agree, and all rank through :func:`places` (points, head to
head, Sonneborn-Berger; bots level on all of them share a place, written ``5=``), so a
table, its CSV and JSON, the report and the competition server's final give the same ranks.
Pure: records in, numbers out.
"""

from __future__ import annotations

import csv
import io
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

from arena.records import GameRecord, atomic_write, spreadsheet_safe

__all__ = ["Tally", "Tallies", "tally", "compute_standings", "format_standings",
           "write_standings_csv", "Standing", "Place", "places", "rank_bots", "ranking",
           "RANKINGS", "TIE_BREAKS", "STANDINGS_COLUMNS"]


@dataclass
class Tally:
    """One bot's results over some games (of one variant, or all variants when ``variant``
    is None): W-D-L and its losses by forfeit, counted by kind (``timeout``, ``crash``...)."""

    name: str
    variant: Optional[str] = None
    wins: int = 0
    draws: int = 0
    losses: int = 0
    forfeit_kinds: dict[str, int] = field(default_factory=dict)

    @property
    def games(self) -> int:
        """Games played."""
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        """A win 1, a draw 1/2."""
        return self.wins + 0.5 * self.draws

    @property
    def forfeits(self) -> int:
        """Games lost by forfeit (any kind)."""
        return sum(self.forfeit_kinds.values())

    @property
    def score_pct(self) -> float:
        """Points as a percentage of the games played (0 before any game)."""
        return 100.0 * self.points / self.games if self.games else 0.0

    @property
    def wdl(self) -> str:
        """``W-D-L`` text."""
        return f"{self.wins}-{self.draws}-{self.losses}"

    def add(self, record: GameRecord, color: str) -> None:
        """Count ``record`` for the side ``color`` (``white`` or ``black``) this bot played."""
        score = record.score(color)
        if score == 1.0:
            self.wins += 1
        elif score == 0.5:
            self.draws += 1
        else:
            self.losses += 1
            if record.forfeit == color:
                kind = record.termination
                self.forfeit_kinds[kind] = self.forfeit_kinds.get(kind, 0) + 1


@dataclass
class Standing(Tally):
    """One row of the runner's standings table: a :class:`Tally` with its place
    (:class:`Place`: ``rank``, ``shared``, the tie-break values ``h2h`` and ``sb``)."""

    rank: int = 0
    shared: bool = False
    h2h: Optional[float] = None
    sb: float = 0.0

    @property
    def place(self) -> str:
        """The rank as text, ``5=`` for a shared place (:attr:`Place.text`)."""
        return f"{self.rank}=" if self.shared else str(self.rank)


class Tallies:
    """Running tallies per bot, added to one record at a time (the live progress line), for
    one variant or pooled over all (``variant`` None: every record counts)."""

    def __init__(self, players: Sequence[str] = (), variant: Optional[str] = None) -> None:
        self.variant = variant
        self.rows: dict[str, Tally] = {p: Tally(p, variant) for p in players}

    def add(self, record: GameRecord) -> None:
        """Count ``record`` (ignored if it belongs to another variant)."""
        if self.variant is not None and record.variant != self.variant:
            return
        for color, info in (("white", record.white), ("black", record.black)):
            row = self.rows.get(info.name)
            if row is None:
                row = self.rows[info.name] = Tally(info.name, self.variant)
            row.add(record, color)

    def ranked(self) -> list[Tally]:
        """Best first: points, then wins, then name."""
        return sorted(self.rows.values(), key=lambda t: (-t.points, -t.wins, t.name))

    def leader(self) -> Optional[Tally]:
        """The first of :meth:`ranked` (None before any game)."""
        ranked = [t for t in self.ranked() if t.games]
        return ranked[0] if ranked else None


def tally(records: Iterable[GameRecord], *, variant: Optional[str] = None,
          players: Sequence[str] = ()) -> dict[str, Tally]:
    """Per bot name, its tally over ``records`` of ``variant`` (all when None)."""
    table = Tallies(players, variant)
    for record in records:
        table.add(record)
    return table.rows


def compute_standings(records: Iterable[GameRecord],
                      players: Sequence[str] = ()) -> dict[str, list[Standing]]:
    """Per variant (in order of first appearance), its table best first, each row with its
    place (:func:`places`: points, head to head, Sonneborn-Berger; bots level on all of them
    share a place).

    ``players`` are listed in every variant even before they have played (after those who
    have, by name, sharing the place after the last bot that played).
    """
    chosen = list(records)
    tables: dict[str, Tallies] = {}
    for record in chosen:
        table = tables.get(record.variant)
        if table is None:
            table = tables[record.variant] = Tallies(players, record.variant)
        table.add(record)
    out: dict[str, list[Standing]] = {}
    for variant, table in tables.items():
        placed = places(chosen, variant=variant)
        done = {p.name for p in placed}
        rest = sorted(name for name in table.rows if name not in done)
        rows = [_standing(table.rows[p.name], p.rank, p.shared, p.h2h, p.sb) for p in placed]
        rows += [_standing(table.rows[name], len(placed) + 1, len(rest) > 1, None, 0.0)
                 for name in rest]
        out[variant] = rows
    return out


def _standing(t: Tally, rank: int, shared: bool, h2h: Optional[float], sb: float) -> Standing:
    return Standing(t.name, t.variant, t.wins, t.draws, t.losses, dict(t.forfeit_kinds),
                    rank=rank, shared=shared, h2h=h2h, sb=sb)


def _places_of(rows: Sequence[Tally]) -> list[tuple[str, Optional[float], Optional[float]]]:
    """``(place text, h2h, sb)`` per row: a :class:`Standing`'s own, else ``1, 2, 3...``."""
    return [(r.place, r.h2h, r.sb) if isinstance(r, Standing) else (str(k), None, None)
            for k, r in enumerate(rows, 1)]


def format_standings(tables: Mapping[str, Sequence[Tally]]) -> str:
    """The standings as aligned text tables, one per variant, each saying how it is ranked
    (:data:`RANKINGS`, :data:`TIE_BREAKS`); shared places read ``5=``, and where bots are
    level on points the tie-break columns (``h2h``, ``SB``) follow."""
    out = io.StringIO()
    for variant, rows in tables.items():
        width = max([len(r.name) for r in rows] + [4])
        played = {r.games for r in rows if r.games}
        by = "points" if len(played) <= 1 else "score"
        marks = _places_of(rows)
        ties = any(h2h is not None for _, h2h, _ in marks)
        rule = RANKINGS[by] + (f"; {TIE_BREAKS[by]}" if ties else "")
        out.write("\n" + textwrap.fill(f"{variant} ({rule})", width=92,
                                       subsequent_indent="  ") + "\n")
        out.write(f"  {'#':>3}  {'bot':<{width}}  {'points':>7}  {'games':>5}  "
                  f"{'W-D-L':>11}  {'score':>6}  forfeits"
                  + (f"  {'h2h':>5}  {'SB':>7}" if ties else "") + "\n")
        for r, (place, h2h, sb) in zip(rows, marks):
            tie = ""
            if ties:
                tie = (f"  {h2h:>5g}  {sb:>7g}" if h2h is not None and sb is not None
                       else f"  {'-':>5}  {'-':>7}")
            out.write(f"  {place:>3}  {r.name:<{width}}  {r.points:>7g}  {r.games:>5}  "
                      f"{r.wdl:>11}  {r.score_pct:>5.1f}%  {r.forfeits:>8}{tie}\n")
    return out.getvalue()


#: the columns of the runner's ``standings.csv``: ``rank`` an integer (the same for bots
#: sharing a place), ``place`` its text (``5=`` when shared), ``h2h`` the points scored
#: against the bots level on points (empty when none is), ``sb`` Sonneborn-Berger
STANDINGS_COLUMNS = ("variant", "rank", "bot", "points", "games", "wins", "draws", "losses",
                     "forfeits", "score_pct", "place", "shared", "h2h", "sb")


def write_standings_csv(path: Path, tables: Mapping[str, Sequence[Tally]]) -> None:
    """``standings.csv`` (:data:`STANDINGS_COLUMNS`): one row per variant and player, ranked."""
    f = io.StringIO(newline="")
    writer = csv.writer(f)
    writer.writerow(STANDINGS_COLUMNS)
    for variant, rows in tables.items():
        for r, (place, h2h, sb) in zip(rows, _places_of(rows)):
            writer.writerow([variant, place.rstrip("="), spreadsheet_safe(r.name),
                             f"{r.points:g}", r.games, r.wins, r.draws, r.losses, r.forfeits,
                             f"{r.score_pct:.1f}", place, place.endswith("="),
                             "" if h2h is None else f"{h2h:g}", "" if sb is None else f"{sb:g}"])
    atomic_write(path, f.getvalue().encode("utf-8"))


#: how a table is ranked: by points when every bot played as many games, else by Elo
#: (strength against the opponents actually met) when it was fitted, else by score per game
RANKINGS = {
    "points": "ranked by points: every bot played the same number of games",
    "elo": ("ranked by Elo: the bots played different numbers of games, so points would "
            "favour those who played more, and Elo counts whom each one played"),
    "score": ("ranked by score per game: the bots played different numbers of games, so "
              "points would favour those who played more"),
}

#: how bots level in a table are told apart, per key of :data:`RANKINGS` (said after it)
TIE_BREAKS = {
    by: (f"bots level on {what} are ordered by the points they took from each other (head "
         "to head), then by Sonneborn-Berger; bots level on all of these share a place (5=)")
    for by, what in (("points", "points"), ("elo", "Elo and points"),
                     ("score", "score and points"))
}


def ranking(records: Iterable[GameRecord], *, variant: Optional[str] = None,
            elo: Optional[Mapping[str, float]] = None) -> str:
    """How the table of ``records`` (of ``variant``) is ranked: a key of :data:`RANKINGS`
    (``points`` where every bot played as many games, as in a round robin or a Swiss;
    else ``elo`` when ``elo`` is given, else ``score``)."""
    counts = {t.games for t in tally(records, variant=variant).values()}
    if len(counts) <= 1:
        return "points"
    return "elo" if elo else "score"


@dataclass(frozen=True)
class Place:
    """One bot's place in a table (:func:`places`).

    ``rank`` is an integer, the same for every bot sharing a place (four bots level for 36th
    are all 36, the next bot 40th); ``shared`` says so and :attr:`text` writes it ``36=``.
    ``points`` (a win 1, a draw 1/2), ``h2h`` (the points scored in the games against the
    other bots level with it on the table's first key and points; None when no bot is level
    with it) and ``sb`` (Sonneborn-Berger: per opponent, the points scored against it times
    its total points, summed) are the values it was ranked by.
    """

    name: str
    rank: int
    shared: bool
    points: float
    h2h: Optional[float]
    sb: float

    @property
    def text(self) -> str:
        """The rank as text: ``5`` or, for a shared place, ``5=`` (as chess arbiters write it)."""
        return f"{self.rank}=" if self.shared else str(self.rank)


def places(records: Iterable[GameRecord], variant: Optional[str] = None,
           elo: Optional[Mapping[str, float]] = None) -> list[Place]:
    """Every bot of ``records`` (of ``variant``, all when None), best first, with its place.

    The first key is :func:`ranking`'s: points (a win 1, a draw 1/2) where every bot played
    as many games; otherwise ``elo`` (when given, e.g. the Bradley-Terry fit) or else score
    per game, points breaking their ties.  Bots level on it and on points are ordered by the
    points they scored in the games among themselves (head to head), then by Sonneborn-Berger.
    Bots level on all of these share a place: the same ``rank``, ``shared`` True.  Within a
    shared place they are listed by ``elo`` (when given), then by name, which decide nothing.
    This is the one ranking of the runner's standings, ``arena rate``, the report and the
    competition server's final.
    """
    chosen = [r for r in records if variant is None or r.variant == variant]
    rows = tally(chosen)
    by = ranking(chosen, elo=elo)
    points = {name: t.points for name, t in rows.items()}
    against: dict[tuple[str, str], float] = {}
    for r in chosen:
        w, b = r.white.name, r.black.name
        if w == b:
            continue
        against[w, b] = against.get((w, b), 0.0) + r.score("white")
        against[b, w] = against.get((b, w), 0.0) + r.score("black")
    sonneborn = {name: 0.0 for name in rows}
    for (a, b), p in against.items():
        sonneborn[a] += p * points[b]
    strength = elo or {}
    # Elo is a float from a fit: level when equal to a millionth of a point
    first: dict[str, float] = (points if by == "points" else
                               {n: round(strength.get(n, 0.0), 6) for n in rows} if by == "elo"
                               else {n: t.points / t.games if t.games else 0.0
                                     for n, t in rows.items()})
    level: dict[tuple[float, float], list[str]] = {}
    for name in rows:
        level.setdefault((first[name], points[name]), []).append(name)
    head: dict[str, Optional[float]] = {}
    for group in level.values():
        for a in group:
            head[a] = (sum(against.get((a, b), 0.0) for b in group if b != a)
                       if len(group) > 1 else None)

    def sporting(n: str) -> tuple[float, float, float, float]:
        return (-first[n], -points[n], -(head[n] or 0.0), -sonneborn[n])

    order = sorted(rows, key=lambda n: (sporting(n), -strength.get(n, 0.0), n))
    out: list[Place] = []
    for k, name in enumerate(order):
        rank = out[-1].rank if k and sporting(order[k - 1]) == sporting(name) else k + 1
        shared = any(0 <= j < len(order) and sporting(order[j]) == sporting(name)
                     for j in (k - 1, k + 1))
        out.append(Place(name, rank, shared, points[name], head[name], sonneborn[name]))
    return out


def rank_bots(records: Iterable[GameRecord], *, variant: Optional[str] = None,
              elo: Optional[Mapping[str, float]] = None) -> list[str]:
    """The names of :func:`places`, best first (rank = place + 1 where no place is shared)."""
    return [p.name for p in places(records, variant=variant, elo=elo)]
