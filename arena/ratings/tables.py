"""Standings and head-to-head tables from game records.

:func:`rate` is the full table for one variant (or pooled): rated bots by Elo with the LOS
over the next one, flagged bots with the reason, W-D-L and forfeits counted by
:func:`arena.standings.tally`.  :func:`match_stats` / :func:`all_matches` give two bots'
W/D/L, pentanomial pair counts and estimate; :func:`standings_rows` and
:func:`ratings_table` (pandas, imported lazily) are the rows behind CSV and JSON.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.ratings.counts import game_counts, kept_arrays
from arena.ratings.elo import (ScoreEstimate, pentanomial_estimate, pentanomial_index,
                               trinomial_estimate)
from arena.ratings.fit import Fit, Games, Rateable, _matrices, fit_every_bot
from arena.ratings.intervals import IntervalMethod
from arena.ratings.mle import game_arrays
from arena.standings import (DEFAULT_TIEBREAKS, Source, Tally, check_tiebreaks,
                             describe_tiebreaks, places, ranking, table_of, tally_rows)
from arena.tallies import GameTallies, VariantTally, tally_games

if TYPE_CHECKING:
    from arena.records import GameRecord


# ---------------------------------------------------------------------------------------
# Standings: the full table for one variant or pooled
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BotStanding:
    """One row of a standings table, placed by :func:`arena.standings.places`: ``rank`` an
    integer, the same for bots sharing a place (``shared``, :attr:`place` ``5=``), with the
    tie-break values it was ranked by, ``h2h`` (points against the bots level with it; None
    when none is) and ``sb`` (Sonneborn-Berger).

    ``elo`` / ``elo95`` are the maximum-likelihood Elo and interval, None when the bot has
    none (``flag`` says why); such a bot's Elo rests on the prior (``prior`` True) and is in
    ``prior_elo`` / ``prior_elo95``.  :attr:`rating` / :attr:`rating95` give whichever the
    bot has (None only in a table of a single bot).
    """

    bot: str
    rank: Optional[int]
    elo: Optional[float]
    elo95: Optional[float]
    games: int
    wins: int
    draws: int
    losses: int
    los_next: Optional[float]
    forfeits: dict[str, int] = field(default_factory=dict)
    flag: str = ""
    prior: bool = False
    prior_elo: Optional[float] = None
    prior_elo95: Optional[float] = None
    shared: bool = False
    h2h: Optional[float] = None
    sb: float = 0.0
    #: Buchholz and Buchholz cut-1 (the opponents' points; without the weakest), the points
    #: of Swiss byes (counted in :attr:`points`), and whether the bot is level with another
    #: on the table's first key and points (the tie-breaks then told them apart)
    buchholz: float = 0.0
    buchholz_cut1: float = 0.0
    byes: float = 0.0
    level: bool = False

    @property
    def place(self) -> str:
        """The rank as text, ``5=`` for a shared place (``-`` without a rank)."""
        return "-" if self.rank is None else f"{self.rank}=" if self.shared else str(self.rank)

    @property
    def rating(self) -> Optional[float]:
        """The Elo shown in the tables: ``elo``, or ``prior_elo`` for a bot on the prior."""
        return self.prior_elo if self.prior else self.elo

    @property
    def rating95(self) -> Optional[float]:
        """The half-width shown with :attr:`rating`."""
        return self.prior_elo95 if self.prior else self.elo95

    @property
    def points(self) -> float:
        """A win 1, a draw 1/2, and the points of Swiss byes."""
        return self.wins + 0.5 * self.draws + self.byes

    @property
    def score(self) -> float:
        """Points per game, 0..1 (the games' points: byes are not games)."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games else math.nan

    @property
    def draw_ratio(self) -> float:
        """Draws per game, 0..1."""
        return self.draws / self.games if self.games else math.nan

    @property
    def wdl(self) -> str:
        """``W-D-L`` text."""
        return f"{self.wins}-{self.draws}-{self.losses}"

    def forfeits_text(self) -> str:
        """``timeout 2, crash 1`` or empty."""
        return ", ".join(f"{k} {v}" for k, v in sorted(self.forfeits.items()))


@dataclass(frozen=True)
class Standings:
    """Ratings of every bot in one variant (or pooled over all variants when ``variant`` is None)."""

    variant: Optional[str]
    rows: tuple[BotStanding, ...]
    fit: Optional[Fit]
    games: int
    anchor: Optional[str]
    note: str = ""
    #: how the rows are ranked: a key of :data:`arena.standings.RANKINGS`
    ranked_by: str = "points"
    #: the tie-breaks, in order (:data:`arena.standings.TIEBREAKS`)
    tiebreaks: tuple[str, ...] = DEFAULT_TIEBREAKS

    @property
    def ties(self) -> bool:
        """Whether some bots are level on the first key and points (the tie-breaks decide)."""
        return any(r.level for r in self.rows)

    @property
    def caption(self) -> str:
        """How the rows are ranked, in words (for the table's caption), with how bots level
        are told apart where some are (:func:`arena.standings.describe_tiebreaks`)."""
        from arena.standings import RANKINGS

        return RANKINGS[self.ranked_by] + (
            f"; {describe_tiebreaks(self.tiebreaks, self.ranked_by)}" if self.ties else "")

    @property
    def label(self) -> str:
        """The variant name, or ``all variants``."""
        return self.variant if self.variant is not None else "all variants"

    def row(self, bot: str) -> BotStanding:
        """The row of ``bot``; raises ``KeyError``."""
        for r in self.rows:
            if r.bot == bot:
                return r
        raise KeyError(bot)

    def los(self, a: str, b: str) -> Optional[float]:
        """Likelihood that ``a`` is stronger than ``b`` (None if either is unrated)."""
        if self.fit is None or a not in self.fit.players or b not in self.fit.players:
            return None
        return self.fit.los(self.fit.index(a), self.fit.index(b))


def rate(records: Source, *, variant: Optional[str] = None,
         anchor: Optional[tuple[str, float]] = None, method: IntervalMethod = "sandwich",
         bootstrap_samples: int = 200, seed: int = 0,
         tiebreaks: Optional[Sequence[str]] = None,
         byes: Optional[Mapping[str, float]] = None) -> Standings:
    """Standings for the games of ``variant`` (all games pooled when None).

    Every bot is placed (:func:`arena.standings.places`: points, head to head,
    Sonneborn-Berger; bots level on all of them share a place, listed by Elo) and has a finite Elo (:func:`arena.ratings.fit.fit_every_bot`):
    the maximum-likelihood fit where it exists, the prior for the others (``prior`` and
    ``flag`` say which and why).  Each row has the LOS over the next row.  With
    ``anchor=(bot, elo)`` the anchor bot gets that Elo exactly (and ± 0); if it is not in
    this table the table stays centred and ``note`` says so.  ``tiebreaks`` order bots
    level on points (:func:`arena.standings.places`; default: head to head, then
    Sonneborn-Berger); ``byes`` are the points of Swiss byes in this table, counted in the
    points (not in the Elo: a bye is not a game).

    ``records`` are the games (any iterable, read once) or their tallies
    (:class:`arena.tallies.GameTallies`, one pass over a folder's ``games.jsonl``): the fit
    works on the tallies' counts either way (a million games: the same bots-by-bots
    matrices as a thousand).  Only the seeded bootstrap of a list of records resamples the
    games in their order (the figures of earlier versions); from tallies it resamples the
    same pairs in another order, unless they kept the games (``keep_games``: a few numbers
    a game), which it then resamples as the list's.
    """
    if not isinstance(records, (GameTallies, VariantTally, Sequence)):
        records = tally_games(records)
    table = table_of(records, variant)
    games: Games
    if method == "bootstrap" and isinstance(records, Sequence):
        games = game_arrays(records, variant)
    elif method == "bootstrap" and isinstance(records, GameTallies) and records.kept:
        games = kept_arrays(records.kept, variant, tuple(table.players))
    else:
        games = game_counts(table)
    counts = tally_rows(table)
    note = ""
    anchor_name = None
    if anchor is not None and anchor[0] in games.players and len(games.players) >= 2:
        anchor_name = anchor[0]
    elif anchor is not None:
        note = f"anchor {anchor[0]!r} is not rated here; Elo is centred on the mean"
    fit, part = fit_every_bot(games, anchor=anchor_name,
                              anchor_elo=anchor[1] if anchor_name and anchor else 0.0,
                              method=method, bootstrap_samples=bootstrap_samples, seed=seed)
    elo = ({name: float(fit.elo[k]) for k, name in enumerate(fit.players)}
           if fit is not None else {})
    breaks = check_tiebreaks(tiebreaks)
    placed = places(table, elo=elo, tiebreaks=breaks, byes=byes)
    order = [p.name for p in placed]
    flags = _group_flags(games, part)
    half = fit.elo95() if fit is not None else np.zeros(0)
    rows: list[BotStanding] = []
    for place, (name, spot) in enumerate(zip(order, placed)):
        c = counts.get(name) or Tally(name)
        k = fit.index(name) if fit is not None and name in fit.players else -1
        nxt = (fit.los(k, fit.index(order[place + 1]))
               if fit is not None and k >= 0 and place + 1 < len(order)
               and order[place + 1] in fit.players else None)
        reason = flags.get(games.players.index(name), "") if name in games.players else ""
        value, width = elo.get(name), float(half[k]) if k >= 0 else None
        ml = (value, width) if not reason else (None, None)
        rows.append(BotStanding(name, spot.rank, ml[0], ml[1], c.games, c.wins, c.draws,
                                c.losses, nxt, dict(c.forfeit_kinds), reason, prior=bool(reason),
                                prior_elo=value if reason else None,
                                prior_elo95=width if reason else None, shared=spot.shared,
                                h2h=spot.h2h, sb=spot.sb, buchholz=spot.buchholz,
                                buchholz_cut1=spot.buchholz_cut1, byes=spot.byes,
                                level=spot.level))
    return Standings(variant, tuple(rows), fit, games.n_games, anchor_name, note,
                     ranking(table, elo=elo, byes=byes), breaks)


def _group_flags(games: Games, part: Rateable) -> dict[int, str]:
    """``part.flags`` with the flags about a whole group of bots reworded to say exactly
    what the games show, naming the group: a group that won (or lost) every game it played
    against the rest of the bots it is connected to (:func:`~arena.ratings.fit.find_rateable`
    words them against "the other bots' group", the rated core, which can be a small part
    of the table), and a group that never played the main group at all."""
    flags = dict(part.flags)
    n = len(games.players)
    if not flags or n < 2:
        return flags
    n_mat, s_mat = _matrices(games)
    names = games.players

    def reach(edges: np.ndarray, start: set[int]) -> set[int]:
        seen, todo = set(start), list(start)
        while todo:
            for j in np.flatnonzero(edges[todo.pop()]).tolist():
                if j not in seen:
                    seen.add(j)
                    todo.append(j)
        return seen

    def some(group: set[int]) -> str:
        listed = sorted(names[k] for k in group)
        return ", ".join(listed[:5]) + (f" and {len(listed) - 5} more" if len(listed) > 5 else "")

    core = set(part.core)
    met = n_mat > 0
    main = reach(met, core) if core else set()
    scored = s_mat > 0                      # scored[i, j]: i took a point (or half) from j
    below = reach(scored, core) if core else set()     # the core took points from these
    above = reach(scored.T, core) if core else set()   # these took points from the core
    for i, text in flags.items():
        if text.startswith("never lost a point") and main:
            group, rest = main - below, below
            flags[i] = (f"one of {len(group)} bots ({some(group)}) that won every game they "
                        f"played against the other {len(rest)} bots: they lost points only "
                        "among themselves, so the games cannot say how far ahead of the "
                        "others they are: no finite maximum-likelihood Elo")
        elif text.startswith("never took a point") and main:
            group, rest = main - above, above
            flags[i] = (f"one of {len(group)} bots ({some(group)}) that lost every game they "
                        f"played against the other {len(rest)} bots: they took points only "
                        "from each other, so the games cannot say how far behind the others "
                        "they are: no finite maximum-likelihood Elo")
        elif text.startswith("not connected by games"):
            group = reach(met, {i})
            others = main or max((reach(met, {k}) for k in range(n) if k not in group),
                                 key=len, default=set())
            flags[i] = (f"not connected by games to the {len(others)} bots of the main "
                        "group: " + (f"one of {len(group)} bots ({some(group)}) that played "
                                     "only each other" if len(group) > 1 else
                                     "it played none of them")
                        + ", so its Elo cannot be compared with theirs; Elo only through the "
                        "prior")
    return flags


def rate_all(records: Source, *, byes: Optional[Mapping[str, float]] = None,
             **kwargs: Any) -> list[Standings]:
    """Standings per variant (in order of first appearance) and, with several, pooled last.

    ``byes`` are the points of a Swiss's byes over the whole event; a bye stands for a won
    pairing, as many games in every variant, so each variant's table counts its share (as
    :func:`arena.standings.compute_standings` does) and the pooled table all of them.
    ``records``: any iterable of records, read once, or their :class:`GameTallies`."""
    tallies = records if isinstance(records, GameTallies) else tally_games(
        records)  # type: ignore[arg-type]
    # the seeded bootstrap of a list resamples its games in their order (see rate)
    source: Source = (records if kwargs.get("method") == "bootstrap"
                      and isinstance(records, Sequence) else tallies)
    variants = tallies.variant_names
    share = ({name: p / len(variants) for name, p in byes.items()}
             if byes and variants else None)
    out = [rate(source, variant=v, byes=share, **kwargs) for v in variants]
    if len(variants) > 1:
        out.append(rate(source, variant=None, byes=byes or None, **kwargs))
    return out


def parse_anchor(text: str) -> tuple[str, float]:
    """``BOT=ELO`` (e.g. ``random=0``) as ``(bot, elo)``; raises :class:`ArenaError`."""
    name, sep, value = text.rpartition("=")
    try:
        elo = float(value)
    except ValueError:
        elo = math.nan
    if not sep or not name or not math.isfinite(elo):
        raise ArenaError(f"--anchor expects BOT=ELO (e.g. random=0), got {text!r}")
    return name, elo


# ---------------------------------------------------------------------------------------
# Head to head
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Match:
    """Everything about the games between two bots, from ``a``'s side.

    ``pentanomial`` counts complete colour-swapped pairs ``[LL, LD, WL+DD, WD, WW]``;
    ``unpaired`` games (no pair id, or a pair not completed) count only in W/D/L.
    ``estimate`` is pentanomial when there are pairs, else trinomial.
    """

    a: str
    b: str
    wins: int
    draws: int
    losses: int
    pentanomial: tuple[int, int, int, int, int]
    unpaired: int
    estimate: Optional[ScoreEstimate]

    @property
    def games(self) -> int:
        """Games played between the two."""
        return self.wins + self.draws + self.losses

    @property
    def draw_ratio(self) -> float:
        """Draws per game."""
        return self.draws / self.games if self.games else math.nan


def match_stats(records: Source, a: str, b: str,
                variant: Optional[str] = None) -> Match:
    """W/D/L, pentanomial pair counts and Elo estimate of ``a`` against ``b``."""
    return _match(table_of(records, variant), a, b)


def all_matches(records: Source, variant: Optional[str] = None,
                order: Sequence[str] = ()) -> list[Match]:
    """:func:`match_stats` for every pair of bots that met, in one pass over ``records``.

    Each pair is seen from the bot that comes first in ``order`` (then by name).
    """
    table = table_of(records, variant)
    rank = {name: k for k, name in enumerate(order)}
    met: dict[tuple[str, str], None] = {}
    for w, b in table.results:
        if w != b:
            first, second = sorted((w, b), key=lambda n: (rank.get(n, len(rank)), n))
            met.setdefault((first, second), None)
    return [_match(table, a, b) for a, b in
            sorted(met, key=lambda item: (rank.get(item[0], len(rank)), item[0],
                                          rank.get(item[1], len(rank)), item[1]))]


def _match(table: VariantTally, a: str, b: str) -> Match:
    """The :class:`Match` of ``a`` against ``b`` from their tallied games."""
    wins = draws = losses = 0
    for white, black in ((a, b), (b, a)):
        counts = table.results.get((white, black))
        if counts is None:
            continue
        ww, d, bw, other = counts
        ours, theirs = (ww, bw) if white == a else (bw, ww)
        wins += ours
        draws += d
        losses += theirs + other
        if white == black:
            break
    penta = [0] * 5
    unpaired = 0
    stats = table.pairs.get((a, b) if a < b else (b, a))
    if stats is not None:
        unpaired = stats.loose
        for (k, _rated, first, second, complete), c in stats.clusters.items():
            if complete:
                penta[pentanomial_index((first if a < b else second) / 2)] += c
            else:
                unpaired += k * c
    estimate: Optional[ScoreEstimate] = None
    if sum(penta):
        estimate = pentanomial_estimate(penta)
    elif wins + draws + losses:
        estimate = trinomial_estimate(wins, draws, losses)
    return Match(a, b, wins, draws, losses, (penta[0], penta[1], penta[2], penta[3], penta[4]),
                 unpaired, estimate)


def head_to_head(records: Source, variant: Optional[str] = None
                 ) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``(bots, points, games)``: ``points[i, j]`` bot i's points against bot j in ``games[i, j]``."""
    g = game_counts(table_of(records, variant))
    return list(g.players), g.s_mat, g.n_mat


# ---------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------


#: the columns of :func:`standings_rows`: ``rank`` is an integer, the same for bots sharing a
#: place; ``place`` is its text (``5=`` when shared, ``shared`` True); ``h2h`` the points
#: scored against the bots level with it (None when none is) and ``sb`` Sonneborn-Berger,
#: the tie-breaks (:func:`arena.standings.places`)
COLUMNS = ("variant", "rank", "bot", "points", "elo", "elo95", "prior", "games", "score_pct",
           "wins", "draws", "losses", "draw_pct", "los_next_pct", "forfeits", "flag",
           "place", "shared", "h2h", "sb", "buchholz", "buchholz_cut1", "bye_points")


def standings_rows(standings: Sequence[Standings]) -> list[dict[str, Any]]:
    """One dict per bot per table, keyed by :data:`COLUMNS` (for CSV / JSON / pandas)."""
    out: list[dict[str, Any]] = []
    for st in standings:
        for r in st.rows:
            out.append({
                "variant": st.label, "rank": r.rank,
                "bot": r.bot, "points": r.points,
                "elo": None if r.rating is None else round(r.rating, 1) + 0.0,
                "elo95": None if r.rating95 is None else round(r.rating95, 1),
                "prior": r.prior,
                "games": r.games, "score_pct": round(100 * r.score, 1),
                "wins": r.wins, "draws": r.draws, "losses": r.losses,
                "draw_pct": round(100 * r.draw_ratio, 1),
                "los_next_pct": None if r.los_next is None else round(100 * r.los_next, 1),
                "forfeits": r.forfeits_text(), "flag": r.flag,
                "place": r.place, "shared": r.shared, "h2h": r.h2h, "sb": r.sb,
                "buchholz": r.buchholz, "buchholz_cut1": r.buchholz_cut1,
                "bye_points": r.byes,
            })
    return out


def ratings_table(standings: Sequence[Standings]) -> Any:
    """:func:`standings_rows` as a pandas DataFrame (pandas imported lazily)."""
    import pandas as pd

    df = pd.DataFrame(standings_rows(standings), columns=list(COLUMNS))
    df["rank"] = df["rank"].astype("Int64")  # an integer column even with no rows
    return df
