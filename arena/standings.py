"""Points and W-D-L from game records: the one place that counts them.

A win is 1 point, a draw 1/2, a loss 0 (``GameRecord.score``).  The runner's standings
tables, its live progress line, the ratings tables and the report all count through
:class:`Tally`, so they always agree.  Pure: records in, numbers out.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

from arena.records import GameRecord, atomic_write, spreadsheet_safe

__all__ = ["Tally", "Tallies", "tally", "compute_standings", "format_standings",
           "write_standings_csv", "Standing", "rank_bots"]


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


#: the runner's name for one row of a standings table
Standing = Tally


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
                      players: Sequence[str] = ()) -> dict[str, list[Tally]]:
    """Per variant (in order of first appearance), its table best first (:func:`rank_bots`:
    points, head to head, Sonneborn-Berger, name).

    ``players`` are listed in every variant even before they have played (after those who
    have, by name).
    """
    chosen = list(records)
    tables: dict[str, Tallies] = {}
    for record in chosen:
        table = tables.get(record.variant)
        if table is None:
            table = tables[record.variant] = Tallies(players, record.variant)
        table.add(record)
    out: dict[str, list[Tally]] = {}
    for variant, table in tables.items():
        order = rank_bots(chosen, variant=variant)
        rest = sorted(name for name in table.rows if name not in set(order))
        out[variant] = [table.rows[name] for name in order + rest]
    return out


def format_standings(tables: dict[str, list[Tally]]) -> str:
    """The standings as aligned text tables, one per variant, each saying how it is ranked
    (:func:`ranking`)."""
    out = io.StringIO()
    for variant, rows in tables.items():
        width = max([len(r.name) for r in rows] + [4])
        played = {r.games for r in rows if r.games}
        by = "points" if len(played) <= 1 else "score"
        out.write(f"\n{variant} ({RANKINGS[by]})\n")
        out.write(f"  {'#':>2}  {'bot':<{width}}  {'points':>7}  {'games':>5}  "
                  f"{'W-D-L':>11}  {'score':>6}  forfeits\n")
        for rank, r in enumerate(rows, 1):
            out.write(f"  {rank:>2}  {r.name:<{width}}  {r.points:>7g}  {r.games:>5}  "
                      f"{r.wdl:>11}  {r.score_pct:>5.1f}%  {r.forfeits:>8}\n")
    return out.getvalue()


def write_standings_csv(path: Path, tables: dict[str, list[Tally]]) -> None:
    """``standings.csv``: one row per variant and player, ranked."""
    f = io.StringIO(newline="")
    writer = csv.writer(f)
    writer.writerow(["variant", "rank", "bot", "points", "games", "wins", "draws",
                     "losses", "forfeits", "score_pct"])
    for variant, rows in tables.items():
        for rank, r in enumerate(rows, 1):
            writer.writerow([variant, rank, spreadsheet_safe(r.name), f"{r.points:g}", r.games,
                             r.wins, r.draws, r.losses, r.forfeits, f"{r.score_pct:.1f}"])
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


def ranking(records: Iterable[GameRecord], *, variant: Optional[str] = None,
            elo: Optional[Mapping[str, float]] = None) -> str:
    """How the table of ``records`` (of ``variant``) is ranked: a key of :data:`RANKINGS`
    (``points`` where every bot played as many games, as in a round robin or a Swiss;
    else ``elo`` when ``elo`` is given, else ``score``)."""
    counts = {t.games for t in tally(records, variant=variant).values()}
    if len(counts) <= 1:
        return "points"
    return "elo" if elo else "score"


def rank_bots(records: Iterable[GameRecord], *, variant: Optional[str] = None,
              elo: Optional[Mapping[str, float]] = None) -> list[str]:
    """Every bot of ``records`` (of ``variant``, all when None), best first; rank = place + 1.

    By :func:`ranking`: points first (a win 1, a draw 1/2) where every bot played as many
    games; otherwise by ``elo`` (when given) or by score per game, points only breaking
    their ties.  Bots level are ordered by the points they scored in the games among
    themselves (head to head), then by Sonneborn-Berger (the points scored against each
    opponent times that opponent's total points, summed), then by ``elo`` (when given),
    then by name, so every bot has a rank of its own.
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
    level: dict[float, list[str]] = {}
    for name in rows:
        level.setdefault(points[name], []).append(name)
    head: dict[str, float] = {}
    for group in level.values():
        for a in group:
            head[a] = sum(against.get((a, b), 0.0) for b in group if b != a)
    strength = elo or {}
    first: dict[str, float] = (points if by == "points" else
                               {n: strength.get(n, 0.0) for n in rows} if by == "elo" else
                               {n: t.points / t.games if t.games else 0.0
                                for n, t in rows.items()})
    return sorted(rows, key=lambda n: (-first[n], -points[n], -head[n], -sonneborn[n],
                                       -strength.get(n, 0.0), n))
