"""What the report needs of a folder's games, gathered in one pass (issue 39).

:func:`collect` reads the games once (a results folder's ``games.jsonl`` a line at a time, or
any iterable of records) and keeps what the report shows, in memory that does not grow with
the games beyond the games it lists:

* the tallies of every table (:class:`arena.tallies.GameTallies`): standings, Elo,
  crosstables, match statistics and the bot pages' results by opponent use every game;
* the records of the games the report lists (the first ``max_games``, 10,000 by default:
  their viewer pages, the games table, the bot pages' game lists) and their titles,
  numbered among all the games of their variant and round;
* the forfeits grouped by bot and reason (the first of each group whole, the ids of its
  first :data:`FORFEIT_IDS` games, the count), the clocks, the games played again, the
  game lengths and endings per variant (counts), each bot's points over the rounds (or
  over the games, a point every so many games beyond :data:`SCORE_POINTS`), the endgame
  analysis of the games (``arena analyse``) and, for a Swiss or knockout, a small record
  (no moves) of each game of its rounds.
"""

from __future__ import annotations

import bisect
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Union

from arena.records import GameRecord, PlayerInfo
from arena.report.forfeits import ForfeitGroup, ForfeitGrouper
from arena.tallies import Game, GameTallies

#: the most points drawn per bot in the score chart over the games (beyond, every k-th game)
SCORE_POINTS = 4000
#: the ids kept per group of identical forfeits (the page names 20)
FORFEIT_IDS = 20
#: White's and Black's points per result (GameRecord.score; any other result: 0 and 0)
_POINTS = {"1-0": (1.0, 0.0), "0-1": (0.0, 1.0), "1/2-1/2": (0.5, 0.5)}


class ScoreSeries:
    """Each bot's cumulative points after each round, and after each game (every ``step``-th
    game once there are more than :data:`SCORE_POINTS`), added one game at a time."""

    def __init__(self) -> None:
        self.bots: dict[str, int] = {}
        self.points: list[float] = []
        self.by_round: dict[int, dict[str, float]] = {}
        self.all_rounds = True
        self.games = 0
        self.step = 1
        self.xs: list[int] = []
        self.snapshots: list[array[float]] = []

    def add(self, white: str, black: str, white_score: float, black_score: float,
            rnd: Optional[int]) -> None:
        bots, points = self.bots, self.points
        k = bots.get(white)
        if k is None:
            k = bots[white] = len(points)
            points.append(0.0)
        points[k] += white_score
        k = bots.get(black)
        if k is None:
            k = bots[black] = len(points)
            points.append(0.0)
        points[k] += black_score
        if rnd is None:
            self.all_rounds = False
        else:
            row = self.by_round.get(rnd)
            if row is None:
                row = self.by_round[rnd] = {}
            row[white] = row.get(white, 0.0) + white_score
            row[black] = row.get(black, 0.0) + black_score
        self.games += 1
        if self.games % self.step == 0:
            self.xs.append(self.games)
            self.snapshots.append(array("d", self.points))
            if len(self.xs) > SCORE_POINTS:  # keep every other point, twice the step
                self.xs = self.xs[1::2]
                self.snapshots = self.snapshots[1::2]
                self.step *= 2

    def result(self) -> tuple[str, list[int], dict[str, list[float]], int]:
        """``(unit, xs, {bot: points at each x}, step)`` as
        :func:`arena.report.charts.score_over_rounds` returns them (and the games per point:
        1 unless the games were many)."""
        names = list(self.bots)
        rounds = sorted(self.by_round)
        if len(rounds) >= 2 and self.all_rounds:
            series = {b: [0.0] for b in names}
            for rnd in rounds:
                row = self.by_round[rnd]
                for b in names:
                    series[b].append(series[b][-1] + row.get(b, 0.0))
            xs = list(rounds)
            xs.insert(0, xs[0] - 1)
            return "round", xs, series, 1
        series = {b: [0.0] for b in names}
        for snap in self.snapshots:
            for b, k in self.bots.items():
                series[b].append(snap[k] if k < len(snap) else 0.0)
        xs = [0] + self.xs
        if self.games and (not self.xs or self.xs[-1] != self.games):  # the last game too
            xs.append(self.games)
            for b, k in self.bots.items():
                series[b].append(self.points[k])
        return "game", xs, series, self.step


@dataclass
class ReportData:
    """What :func:`collect` gathered (see the module's docstring)."""

    tallies: GameTallies
    listed: list[GameRecord]
    titles: dict[str, str]
    forfeits: dict[str, list[ForfeitGroup]]
    clock: dict[str, Any]
    lengths: dict[str, Counter[int]]
    endings: dict[str, Counter[str]]
    terminations: Counter[tuple[str, str]]
    score: tuple[str, list[int], dict[str, list[float]], int]
    endgames: list[Any] = field(default_factory=list)
    staged: list[GameRecord] = field(default_factory=list)

    @property
    def total(self) -> int:
        """How many games."""
        return self.tallies.count

    @property
    def variants(self) -> list[str]:
        """The variants, in order of first appearance."""
        return self.tallies.variant_names

    @property
    def bots(self) -> list[str]:
        """Every bot, in order of first appearance."""
        return list(self.tallies.players)


def _title(r: GameRecord, number: int) -> str:
    from arena.report.viewer import game_title

    return game_title(r, number)


def _order(g: Union[Game, GameRecord]) -> tuple[bool, int, str]:
    """The order of the games of one variant and round for their titles' numbers."""
    return (g.pair is None, g.pair or 0, g.game_id)


def collect(games: Iterable[Union[GameRecord, Game]], *, max_games: Optional[int] = None,
            analysed: Optional[Mapping[str, Any]] = None, staged: bool = False) -> ReportData:
    """Read ``games`` once and gather the report's data (``max_games``: how many games the
    report lists, None for all; ``analysed``: the endgame analysis by game id;
    ``staged``: keep a small record of each game of a Swiss's or knockout's rounds)."""
    tallies = GameTallies()
    listed: list[GameRecord] = []
    forfeits = ForfeitGrouper(FORFEIT_IDS)
    clocks: Counter[str] = Counter()
    waited = thought = 0.0
    replayed: list[dict[str, Any]] = []
    lengths: dict[str, Counter[int]] = {}
    endings: dict[str, Counter[str]] = {}
    terminations: Counter[tuple[str, str]] = Counter()
    series = ScoreSeries()
    endgames: list[Any] = []
    small: list[GameRecord] = []
    # the titles' numbers: the listed games' order keys per (variant, round), and how many
    # later games sort before each (a difference array over the sorted keys)
    keys: Optional[dict[tuple[str, Optional[int]], list[tuple[bool, int, str]]]] = None
    later: dict[tuple[str, Optional[int]], list[int]] = {}
    for item in games:
        g = item if isinstance(item, Game) else Game(item, None)
        tallies.add_game(g.variant, g.white, g.black, g.result, g.termination, g.forfeit,
                         None if g.pair is None else (g.tournament, g.variant, g.round, g.pair))
        if max_games is None or len(listed) < max_games:
            listed.append(g.full())
        else:
            if keys is None:
                keys = _listed_keys(listed)
            group = (g.variant, g.round)
            known = keys.get(group)
            if known is not None:
                later[group][bisect.bisect_right(known, _order(g))] += 1
        if g.forfeit:
            forfeits.add(g)
        tc = g.time_control or {}
        if tc.get("clock") == "cpu":
            clocks[f"the bot's CPU time (wall-clock cap {tc.get('wall_factor', 5):g}x)"] += 1
        elif tc.get("clock") == "own":
            clocks["the bot's own time (wall time less its waits for a CPU; wall-clock cap "
                   f"{tc.get('wall_factor', 5):g}x)"] += 1
        else:
            clocks["wall time"] += 1
        waited, thought = g.waits(waited, thought)
        if g.replays:
            replayed.append({"id": g.game_id, "reasons": list(g.replays)})
        variant = g.variant
        per_variant = lengths.get(variant)
        if per_variant is None:
            per_variant = lengths[variant] = Counter()
            endings[variant] = Counter()
        per_variant[g.plies] += 1
        endings[variant][g.termination or "unknown"] += 1
        terminations[variant, g.termination] += 1
        white_score, black_score = _POINTS.get(g.result, (0.0, 0.0))
        series.add(g.white, g.black, white_score, black_score, g.round)
        if analysed and g.game_id in analysed:
            endgames.append(analysed[g.game_id])
        if staged and g.round is not None and not g.void:
            small.append(GameRecord(g.game_id, g.variant, {}, PlayerInfo(g.white),
                                    PlayerInfo(g.black), g.result, g.termination,
                                    round=g.round, pair=g.pair))
        if keys is None and max_games is not None and len(listed) == max_games:
            keys = _listed_keys(listed)
            later = {group: [0] * (len(k) + 1) for group, k in keys.items()}
    tallies.finish()
    titles = _titles(listed, keys, later)
    clock = {
        "clocks": [f"{what}: {n} game{'s' if n != 1 else ''}" for what, n in clocks.most_common()],
        "replayed": replayed,
        "waited": None if thought <= 0 else round(100 * waited / thought, 1),
    }
    return ReportData(tallies, listed, titles, forfeits.result(), clock, lengths, endings,
                      terminations, series.result(), endgames, small)


def _listed_keys(listed: list[GameRecord]
                 ) -> dict[tuple[str, Optional[int]], list[tuple[bool, int, str]]]:
    out: dict[tuple[str, Optional[int]], list[tuple[bool, int, str]]] = {}
    for r in listed:
        out.setdefault((r.variant, r.round), []).append(_order(r))
    for k in out.values():
        k.sort()
    return out


def _titles(listed: list[GameRecord],
            keys: Optional[dict[tuple[str, Optional[int]], list[tuple[bool, int, str]]]],
            later: dict[tuple[str, Optional[int]], list[int]]) -> dict[str, str]:
    """The titles of the listed games, as :func:`arena.report.viewer.game_titles` of all the
    games numbers them (the later games that sort before a listed one counted)."""
    groups: dict[tuple[str, Optional[int]], list[GameRecord]] = {}
    for r in listed:
        groups.setdefault((r.variant, r.round), []).append(r)
    number: dict[str, int] = {}
    for group, members in groups.items():
        members.sort(key=_order)
        before = 0
        diff = later.get(group) if keys is not None else None
        for k, r in enumerate(members):
            if diff is not None:
                before += diff[k]
            number[r.game_id] = k + 1 + before
    return {r.game_id: _title(r, number[r.game_id]) for r in listed}


__all__ = ["FORFEIT_IDS", "SCORE_POINTS", "ReportData", "ScoreSeries", "collect"]
