"""Points, W-D-L and places from game records: the one place that counts and ranks them.

A win is 1 point, a draw 1/2, a loss 0 (``GameRecord.score``).  The runner's standings
tables, its live progress line, the ratings tables and the report all count through
:class:`Tally`, so they always agree, and all rank through :func:`places` (points, then the
chosen tie-breaks, :data:`TIEBREAKS`: by default head to head, then Sonneborn-Berger; for a
Swiss :data:`SWISS_TIEBREAKS`, Buchholz cut-1 first; bots level on all of them share a place,
written ``5=``), so a table, its CSV and JSON, the report and the competition server's final
give the same ranks.  Pure: records in, numbers out.
"""

from __future__ import annotations

import csv
import io
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence, Union

from arena.errors import ConfigError
from arena.records import GameRecord, atomic_write, spreadsheet_safe
from arena.tallies import GameTallies, VariantTally, tally_games

__all__ = ["Tally", "Tallies", "tally", "compute_standings", "format_standings",
           "write_standings_csv", "Standing", "Place", "places", "rank_bots", "ranking",
           "RANKINGS", "TIE_BREAKS", "STANDINGS_COLUMNS", "TIEBREAKS", "DEFAULT_TIEBREAKS",
           "SWISS_TIEBREAKS", "BUCHHOLZ_COLUMNS", "TiebreakError", "check_tiebreaks",
           "parse_tiebreaks", "describe_tiebreaks", "table_of", "tally_rows", "against_points"]

#: the tie-breaks :func:`places` knows (FIDE C.07's names), in no particular order:
#: ``direct-encounter`` (the points taken in the games among the bots still level),
#: ``sonneborn-berger`` (per opponent, the points taken from it times its points, summed),
#: ``buchholz`` (the points of every distinct opponent, summed) and ``buchholz-cut1`` (the
#: same without the opponent with the fewest points)
TIEBREAKS = ("direct-encounter", "sonneborn-berger", "buchholz", "buchholz-cut1")
#: the tie-breaks of a round robin and of every table when none are chosen
DEFAULT_TIEBREAKS = ("direct-encounter", "sonneborn-berger")
#: the tie-breaks of a Swiss, as FIDE C.07 advises for one: the opponents' strength first
#: (a Swiss's players met different opponents), the direct encounter last
SWISS_TIEBREAKS = ("buchholz-cut1", "buchholz", "sonneborn-berger", "direct-encounter")


class TiebreakError(ConfigError, ValueError):
    """An unknown or repeated tie-break name (a :class:`ConfigError` and a ``ValueError``)."""


def check_tiebreaks(tiebreaks: Optional[Iterable[str]]) -> tuple[str, ...]:
    """``tiebreaks`` as a tuple of names of :data:`TIEBREAKS`, in order
    (:data:`DEFAULT_TIEBREAKS` for None).

    :raises TiebreakError: an unknown name (the message names the allowed ones) or one given
        twice.
    """
    if tiebreaks is None:
        return DEFAULT_TIEBREAKS
    if isinstance(tiebreaks, str):
        raise TiebreakError(f"expected a list of tie-breaks, got the text {tiebreaks!r}")
    chosen = tuple(tiebreaks)
    for name in chosen:
        if name not in TIEBREAKS:
            raise TiebreakError(f"unknown tie-break {name!r} (allowed: {', '.join(TIEBREAKS)})")
    twice = sorted({name for name in chosen if chosen.count(name) > 1})
    if twice:
        raise TiebreakError(f"tie-break {twice[0]!r} is given twice")
    return chosen


def parse_tiebreaks(value: object, path: str = "tiebreaks") -> tuple[str, ...]:
    """The tie-breaks of a tournament file's key or a command-line option: a list of names of
    :data:`TIEBREAKS` or one text of them separated by commas (``buchholz-cut1,buchholz``).

    :raises TiebreakError: anything else, with a one-line message starting with ``path``.
    """
    if isinstance(value, str):
        items: list[object] = [part.strip() for part in value.split(",")]
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        raise TiebreakError(f"expected a list of tie-breaks ({', '.join(TIEBREAKS)}), got "
                            f"{type(value).__name__}", path)
    if not items or items == [""]:
        raise TiebreakError(f"expected at least one tie-break ({', '.join(TIEBREAKS)})", path)
    for item in items:
        if not isinstance(item, str):
            raise TiebreakError(f"expected tie-break names ({', '.join(TIEBREAKS)}), got "
                                f"{item!r}", path)
    try:
        return check_tiebreaks([str(item) for item in items])
    except TiebreakError as e:
        raise TiebreakError(str(e), path) from None


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
    (:class:`Place`: ``rank``, ``shared``, ``level``, the tie-break values ``h2h``, ``sb``,
    ``buchholz`` and ``buchholz_cut1``, the points from ``byes``) and the ``tiebreaks`` the
    table was ranked with.  :attr:`points` count the byes; W-D-L and :attr:`score_pct` only
    the games."""

    rank: int = 0
    shared: bool = False
    h2h: Optional[float] = None
    sb: float = 0.0
    buchholz: float = 0.0
    buchholz_cut1: float = 0.0
    byes: float = 0.0
    level: bool = False
    tiebreaks: tuple[str, ...] = DEFAULT_TIEBREAKS

    @property
    def points(self) -> float:
        """A win 1, a draw 1/2, plus the points from byes."""
        return self.wins + 0.5 * self.draws + self.byes

    @property
    def score_pct(self) -> float:
        """The points of the games (byes left out) as a percentage of the games played."""
        return 100.0 * (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0

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


def compute_standings(records: Iterable[GameRecord], players: Sequence[str] = (), *,
                      tiebreaks: Optional[Sequence[str]] = None,
                      byes: Optional[Mapping[str, float]] = None) -> dict[str, list[Standing]]:
    """Per variant (in order of first appearance), its table best first, each row with its
    place (:func:`places`: points, then ``tiebreaks``, by default head to head and
    Sonneborn-Berger; bots level on all of them share a place).

    ``players`` are listed in every variant even before they have played (after those who
    have, by name, sharing the place after the last bot that played).  ``byes`` are the
    points each bot got from a Swiss's byes over the whole event (``rounds.jsonl``'s
    ``bye_points``, summed); a bye stands for a won pairing, as many games in each variant,
    so each of the n variant tables counts 1/n of them, and a bot with a bye is in every
    table.

    :raises TiebreakError: an unknown tie-break.
    """
    chosen = list(records)
    breaks = check_tiebreaks(tiebreaks)
    tables: dict[str, Tallies] = {}
    for record in chosen:
        table = tables.get(record.variant)
        if table is None:
            table = tables[record.variant] = Tallies(players, record.variant)
        table.add(record)
    share = ({name: points / len(tables) for name, points in (byes or {}).items()}
             if tables else {})
    out: dict[str, list[Standing]] = {}
    for variant, table in tables.items():
        placed = places(chosen, variant=variant, tiebreaks=breaks, byes=share or None)
        done = {p.name for p in placed}
        rest = sorted(name for name in table.rows if name not in done)
        rows = [_standing(table.rows.get(p.name) or Tally(p.name, variant), p, breaks)
                for p in placed]
        rows += [_standing(table.rows[name], Place(name, len(placed) + 1, len(rest) > 1,
                                                    0.0, None, 0.0), breaks)
                 for name in rest]
        out[variant] = rows
    return out


def _standing(t: Tally, p: Place, tiebreaks: tuple[str, ...]) -> Standing:
    return Standing(t.name, t.variant, t.wins, t.draws, t.losses, dict(t.forfeit_kinds),
                    rank=p.rank, shared=p.shared, h2h=p.h2h, sb=p.sb, buchholz=p.buchholz,
                    buchholz_cut1=p.buchholz_cut1, byes=p.byes, level=p.level,
                    tiebreaks=tiebreaks)


#: per tie-break, its column in the text table and its value in a :class:`Standing`
_TIE_COLUMNS = {"direct-encounter": ("h2h", 5), "sonneborn-berger": ("SB", 7),
                "buchholz": ("BH", 7), "buchholz-cut1": ("BH-C1", 7)}


def _tie_value(r: Standing, name: str) -> Optional[float]:
    return {"direct-encounter": r.h2h, "sonneborn-berger": r.sb, "buchholz": r.buchholz,
            "buchholz-cut1": r.buchholz_cut1}[name]


def _tiebreaks_of(rows: Sequence[Tally]) -> tuple[str, ...]:
    """The tie-breaks a table was ranked with (its :class:`Standing` rows'; the default)."""
    return next((r.tiebreaks for r in rows if isinstance(r, Standing)), DEFAULT_TIEBREAKS)


def _byes_of(rows: Sequence[Tally]) -> bool:
    return any(isinstance(r, Standing) and r.byes for r in rows)


def format_standings(tables: Mapping[str, Sequence[Tally]]) -> str:
    """The standings as aligned text tables, one per variant, each saying how it is ranked
    (:data:`RANKINGS`, :func:`describe_tiebreaks`); shared places read ``5=``, and where bots
    are level on points the columns of the tie-breaks the table was ranked with follow, in
    their order (``h2h``, ``SB``, ``BH``, ``BH-C1``), after a ``byes`` column (the points
    from byes, counted in ``points``) when some bot had one."""
    out = io.StringIO()
    for variant, rows in tables.items():
        width = max([len(r.name) for r in rows] + [4])
        played = {r.games for r in rows if r.games}
        with_byes = _byes_of(rows)
        by = "points" if len(played) <= 1 or with_byes else "score"
        breaks = _tiebreaks_of(rows)
        ties = any(isinstance(r, Standing) and r.level for r in rows)
        rule = ((BYES_RANKING if with_byes else RANKINGS[by])
                + (f"; {describe_tiebreaks(breaks, by)}" if ties else ""))
        out.write("\n" + textwrap.fill(f"{variant} ({rule})", width=92,
                                       subsequent_indent="  ") + "\n")
        columns = [_TIE_COLUMNS[name] for name in breaks] if ties else []
        out.write(f"  {'#':>3}  {'bot':<{width}}  {'points':>7}  {'games':>5}  "
                  f"{'W-D-L':>11}  {'score':>6}  forfeits"
                  + (f"  {'byes':>5}" if with_byes else "")
                  + "".join(f"  {head:>{w}}" for head, w in columns) + "\n")
        for k, r in enumerate(rows, 1):
            place = r.place if isinstance(r, Standing) else str(k)
            extra = ""
            if with_byes:
                extra += f"  {r.byes:>5g}" if isinstance(r, Standing) else f"  {'-':>5}"
            for name, (_, w) in zip(breaks, columns):
                value = _tie_value(r, name) if isinstance(r, Standing) and r.level else None
                extra += f"  {value:>{w}g}" if value is not None else f"  {'-':>{w}}"
            out.write(f"  {place:>3}  {r.name:<{width}}  {r.points:>7g}  {r.games:>5}  "
                      f"{r.wdl:>11}  {r.score_pct:>5.1f}%  {r.forfeits:>8}{extra}\n")
    return out.getvalue()


#: the columns of the runner's ``standings.csv``: ``rank`` an integer (the same for bots
#: sharing a place), ``place`` its text (``5=`` when shared), ``h2h`` the points scored
#: against the bots level on points (empty when none is), ``sb`` Sonneborn-Berger
STANDINGS_COLUMNS = ("variant", "rank", "bot", "points", "games", "wins", "draws", "losses",
                     "forfeits", "score_pct", "place", "shared", "h2h", "sb")

#: the columns appended to :data:`STANDINGS_COLUMNS` when a table was ranked with a Buchholz
#: tie-break or some bot had a bye: ``buchholz``, ``buchholz_cut1`` (:class:`Place`) and
#: ``bye_points`` (the points from byes, counted in ``points``)
BUCHHOLZ_COLUMNS = ("buchholz", "buchholz_cut1", "bye_points")


def write_standings_csv(path: Path, tables: Mapping[str, Sequence[Tally]]) -> None:
    """``standings.csv`` (:data:`STANDINGS_COLUMNS`): one row per variant and player, ranked;
    with :data:`BUCHHOLZ_COLUMNS` at the end where a table was ranked with ``buchholz`` or
    ``buchholz-cut1`` or some bot had a bye."""
    extra = any(_byes_of(rows) or {"buchholz", "buchholz-cut1"} & set(_tiebreaks_of(rows))
                for rows in tables.values())
    f = io.StringIO(newline="")
    writer = csv.writer(f)
    writer.writerow(STANDINGS_COLUMNS + (BUCHHOLZ_COLUMNS if extra else ()))
    for variant, rows in tables.items():
        for k, r in enumerate(rows, 1):
            s = r if isinstance(r, Standing) else None
            place = s.place if s is not None else str(k)
            h2h = s.h2h if s is not None else None
            sb = s.sb if s is not None else None
            cells: list[object] = [
                variant, place.rstrip("="), spreadsheet_safe(r.name), f"{r.points:g}",
                r.games, r.wins, r.draws, r.losses, r.forfeits, f"{r.score_pct:.1f}", place,
                place.endswith("="), "" if h2h is None else f"{h2h:g}",
                "" if sb is None else f"{sb:g}"]
            if extra:
                cells += ([f"{s.buchholz:g}", f"{s.buchholz_cut1:g}", f"{s.byes:g}"]
                          if s is not None else ["", "", ""])
            writer.writerow(cells)
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


#: how a table with byes is ranked (a Swiss with an odd field): by points, whatever the games
#: played, as a bye stands for the games of its round
BYES_RANKING = ("ranked by points, a bye's points included: a bye stands for the games of "
                "its round")

#: per tie-break, how it reads in :func:`describe_tiebreaks`
_TIE_WORDS = {
    "direct-encounter": "the points they took from each other (head to head)",
    "sonneborn-berger": "Sonneborn-Berger",
    "buchholz": "Buchholz (their opponents' points, summed)",
    "buchholz-cut1": "Buchholz cut-1 (Buchholz without the weakest opponent)",
}


def describe_tiebreaks(tiebreaks: Optional[Sequence[str]] = None, by: str = "points") -> str:
    """How bots level on the first key ``by`` (a key of :data:`RANKINGS`) are told apart by
    ``tiebreaks`` (:data:`DEFAULT_TIEBREAKS` when None), in words: :data:`TIE_BREAKS`'s
    sentence for the default order.

    :raises TiebreakError: an unknown tie-break.
    """
    breaks = check_tiebreaks(tiebreaks)
    if breaks == DEFAULT_TIEBREAKS:
        return TIE_BREAKS[by]
    what = {"points": "points", "elo": "Elo and points", "score": "score and points"}[by]
    return (f"bots level on {what} are ordered by "
            + ", then by ".join(_TIE_WORDS[name] for name in breaks)
            + "; bots level on all of these share a place (5=)")


def ranking(records: Source, *, variant: Optional[str] = None,
            elo: Optional[Mapping[str, float]] = None,
            byes: Optional[Mapping[str, float]] = None) -> str:
    """How the table of ``records`` (of ``variant``) is ranked: a key of :data:`RANKINGS`
    (``points`` where every bot played as many games, as in a round robin or a Swiss, or
    where some bot had a bye (``byes`` names one: a Swiss's odd field, whose bye stands for
    the games of its round); else ``elo`` when ``elo`` is given, else ``score``)."""
    return _ranking(tally_rows(table_of(records, variant)), elo, byes)


def _ranking(rows: Mapping[str, Tally], elo: Optional[Mapping[str, float]],
             byes: Optional[Mapping[str, float]]) -> str:
    """:func:`ranking` of a table's tallies."""
    if byes:
        return "points"
    counts = {t.games for t in rows.values()}
    if len(counts) <= 1:
        return "points"
    return "elo" if elo else "score"


#: what the tables are counted from: records, or their tallies (arena.tallies)
Source = Union[Iterable[GameRecord], GameTallies, VariantTally]


def table_of(source: Source, variant: Optional[str] = None) -> VariantTally:
    """The tallies of ``variant``'s games (all when None) in ``source``: records (counted
    here, in one pass), a folder's :class:`GameTallies`, or one table's tallies."""
    if isinstance(source, VariantTally):
        if variant is not None and source.variant not in (None, variant):
            raise ValueError(f"the tallies of {source.variant!r}, not of {variant!r}")
        return source
    if isinstance(source, GameTallies):
        return source.table(variant)
    return tally_games(r for r in source if variant is None or r.variant == variant).table(None)


def tally_rows(table: VariantTally) -> dict[str, Tally]:
    """Per bot (in order of first appearance), its :class:`Tally` in ``table``: as
    :func:`tally` of the games counted."""
    rows = {name: Tally(name, table.variant) for name in table.players}
    for (w, b), (ww, d, bw, other) in table.results.items():
        white, black = rows[w], rows[b]
        white.wins += ww
        white.draws += d
        white.losses += bw + other
        black.wins += bw
        black.draws += d
        black.losses += ww + other
    for name, kinds in table.forfeits.items():
        rows[name].forfeit_kinds.update(kinds)
    return rows


def against_points(table: VariantTally) -> dict[tuple[str, str], float]:
    """``(a, b)``: the points ``a`` scored against ``b`` in ``table``'s games, for every two
    different bots that met."""
    out: dict[tuple[str, str], float] = {}
    for (w, b), (ww, d, bw, _other) in table.results.items():
        if w == b:
            continue
        out[w, b] = out.get((w, b), 0.0) + ww + 0.5 * d
        out[b, w] = out.get((b, w), 0.0) + bw + 0.5 * d
    return out


@dataclass(frozen=True)
class Place:
    """One bot's place in a table (:func:`places`).

    ``rank`` is an integer, the same for every bot sharing a place (four bots level for 36th
    are all 36, the next bot 40th); ``shared`` says so and :attr:`text` writes it ``36=``.
    ``points`` (a win 1, a draw 1/2, plus ``byes``, the points from byes), ``h2h`` (the
    direct encounter: the points scored in the games against the other bots level with it on
    the table's first key, points and the tie-breaks chosen before it; None when no bot is
    level with it there, when not every two of those level bots met (FIDE C.07), or when
    the direct encounter is not a chosen tie-break), ``sb``
    (Sonneborn-Berger: per opponent, the points scored against it times its total points,
    summed), ``buchholz`` (the points of each distinct opponent, summed) and
    ``buchholz_cut1`` (the same without the opponent with the fewest) are the values it was
    ranked by; ``level`` says it was level with another bot on the first key and points, so
    that the tie-breaks decided its place.
    """

    name: str
    rank: int
    shared: bool
    points: float
    h2h: Optional[float]
    sb: float
    buchholz: float = 0.0
    buchholz_cut1: float = 0.0
    byes: float = 0.0
    level: bool = False

    @property
    def text(self) -> str:
        """The rank as text: ``5`` or, for a shared place, ``5=`` (as chess arbiters write it)."""
        return f"{self.rank}=" if self.shared else str(self.rank)


def places(records: Source, variant: Optional[str] = None,
           elo: Optional[Mapping[str, float]] = None, *,
           tiebreaks: Optional[Sequence[str]] = None,
           byes: Optional[Mapping[str, float]] = None) -> list[Place]:
    """Every bot of ``records`` (of ``variant``, all when None) and of ``byes``, best first,
    with its place.

    The first key is :func:`ranking`'s: points (a win 1, a draw 1/2) where every bot played
    as many games or some bot had a bye; otherwise ``elo`` (when given, e.g. the
    Bradley-Terry fit) or else score per game, points breaking their ties.  Bots level on it
    and on points are ordered by ``tiebreaks`` in turn (names of :data:`TIEBREAKS`; None is
    :data:`DEFAULT_TIEBREAKS`, the points they scored in the games among themselves (head to
    head), then Sonneborn-Berger; :data:`SWISS_TIEBREAKS` suit a Swiss):

    - ``direct-encounter``: the points scored in the games among the bots level on every
      key before it;
    - ``sonneborn-berger``: per opponent, the points scored against it times its points;
    - ``buchholz``: the points of every distinct opponent (one met in several games, or
      several pairings, counts once);
    - ``buchholz-cut1``: the same less the points of the opponent with the fewest (0 for a
      bot without opponents).

    Bots level on all of these share a place: the same ``rank``, ``shared`` True.  Within a
    shared place they are listed by ``elo`` (when given), then by name, which decide nothing.

    ``byes`` are the points each bot got from byes of a Swiss (not games): they count in its
    points, so in its rank and in its opponents' Buchholz and Sonneborn-Berger.  For its own
    Buchholz (and cut-1) its byes count as one virtual opponent with its own points, a
    simplification of FIDE C.07's virtual opponent (which scores as the bot did before the
    bye and draws the rest); a bot with byes and no game is placed too.

    This is the one ranking of the runner's standings, ``arena rate``, the report and the
    competition server's final.

    :raises TiebreakError: an unknown tie-break (the message names the allowed ones).
    """
    breaks = check_tiebreaks(tiebreaks)
    table = table_of(records, variant)
    rows = tally_rows(table)
    bye = {name: float(p) for name, p in (byes or {}).items()}
    names = list(rows) + [name for name in bye if name not in rows]
    by = _ranking(rows, elo, bye)
    points = {n: (rows[n].points if n in rows else 0.0) + bye.get(n, 0.0) for n in names}
    against = against_points(table)
    sonneborn = {name: 0.0 for name in names}
    met: dict[str, list[float]] = {name: [] for name in names}
    for (a, b), p in against.items():
        sonneborn[a] += p * points[b]
        met[a].append(points[b])
    for name in bye:
        met[name].append(points[name])  # the virtual opponent of its byes
    buchholz = {n: sum(met[n]) for n in names}
    cut1 = {n: buchholz[n] - min(met[n]) if met[n] else 0.0 for n in names}
    strength = elo or {}
    # Elo is a float from a fit: level when equal to a millionth of a point
    first: dict[str, float] = (points if by == "points" else
                               {n: round(strength.get(n, 0.0), 6) for n in names} if by == "elo"
                               else {n: rows[n].points / rows[n].games
                                     if n in rows and rows[n].games else 0.0 for n in names})
    keys: dict[str, list[float]] = {n: [-first[n], -points[n]] for n in names}
    firsts = Counter(tuple(key) for key in keys.values())
    level = {n: firsts[tuple(keys[n])] > 1 for n in names}
    head: dict[str, Optional[float]] = {n: None for n in names}
    for tiebreak in breaks:
        if tiebreak == "direct-encounter":
            groups: dict[tuple[float, ...], list[str]] = {}
            for n in names:
                groups.setdefault(tuple(keys[n]), []).append(n)
            for group in groups.values():
                # only where every two of them met (FIDE C.07: in a Swiss, level players
                # who did not all meet are not told apart by the games some of them played)
                all_met = all((a, b) in against for a in group for b in group if a != b)
                for a in group:
                    head[a] = (sum(against.get((a, b), 0.0) for b in group if b != a)
                               if len(group) > 1 and all_met else None)
            value: Mapping[str, Optional[float]] = head
        else:
            value = {"sonneborn-berger": sonneborn, "buchholz": buchholz,
                     "buchholz-cut1": cut1}[tiebreak]
        for n in names:
            keys[n].append(-(value[n] or 0.0))

    def sporting(n: str) -> tuple[float, ...]:
        return tuple(keys[n])

    order = sorted(names, key=lambda n: (sporting(n), -strength.get(n, 0.0), n))
    out: list[Place] = []
    for k, name in enumerate(order):
        rank = out[-1].rank if k and sporting(order[k - 1]) == sporting(name) else k + 1
        shared = any(0 <= j < len(order) and sporting(order[j]) == sporting(name)
                     for j in (k - 1, k + 1))
        out.append(Place(name, rank, shared, points[name], head[name], sonneborn[name],
                         buchholz[name], cut1[name], bye.get(name, 0.0), level[name]))
    return out


def rank_bots(records: Source, *, variant: Optional[str] = None,
              elo: Optional[Mapping[str, float]] = None,
              tiebreaks: Optional[Sequence[str]] = None,
              byes: Optional[Mapping[str, float]] = None) -> list[str]:
    """The names of :func:`places`, best first (rank = place + 1 where no place is shared)."""
    return [p.name for p in places(records, variant=variant, elo=elo, tiebreaks=tiebreaks,
                                   byes=byes)]
