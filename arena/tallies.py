"""A results folder's games as tallies, built in one streaming pass (issue 39).

``arena rate``, ``report``, ``export`` and ``analyse`` never hold a folder's records: they
read ``games.jsonl`` a line at a time (:func:`stream_games`) and count what the tables need
(:class:`GameTallies`): per variant, per ordered pair of bots, the games by result; per bot,
its losses by forfeit; and the colour-swapped pairs as a histogram per pair of bots (how many
pairs of each pentanomial class, how many lone games), which is all the pair-clustered
sandwich covariance and the pentanomial statistics need.  Memory is O(bots² × variants), not
O(games): a million games take the same few megabytes as a thousand.

A pair (a *cluster*: the games sharing ``(tournament, variant, round, pair)``) is closed as
soon as it has two games, as every runner writes them: its key is forgotten then.  A third
game with the same key (no runner writes one) starts a new cluster.  Games without a pair id
are clusters of their own.  A bot against itself counts in W-D-L, never in ratings or pairs.

Pure: records in, numbers out (the reader only reads).
"""

from __future__ import annotations

import json
import os
from array import array
from collections import Counter
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Iterable, Iterator, Optional, Sequence, Union

from arena.records import GameRecord, MoveInfo, PlayerInfo, iter_lines, parse_record

__all__ = ["Game", "GameTallies", "KeptGames", "VariantTally", "PairStats", "stream_games",
           "stream_lines", "parse_game_line",
           "tally_games", "tally_file", "CLUSTER_KEY"]

#: per result, the index of its count in a pair's counts: White won, drawn, Black won, other
#: (an unknown result scores 0 for both sides, as :meth:`GameRecord.score` does)
_RESULT_INDEX = {"1-0": 0, "1/2-1/2": 1, "0-1": 2}
#: what identifies a colour-swapped pair of games
CLUSTER_KEY = ("tournament", "variant", "round", "pair")

_RECORD_FIELDS = frozenset(f.name for f in fields(GameRecord))
_REQUIRED = frozenset(f.name for f in fields(GameRecord)
                      if f.default is MISSING and f.default_factory is MISSING)
_PLAYER_FIELDS = frozenset(f.name for f in fields(PlayerInfo))
_MOVE_FIELDS = frozenset(f.name for f in fields(MoveInfo))


class Game:
    """One game as the tallies and the report read it: a :class:`GameRecord`, or the JSON
    object of a ``games.jsonl`` line read without building one (:meth:`full` builds it)."""

    __slots__ = ("record", "data", "game_id", "variant", "white", "black", "result",
                 "termination", "forfeit", "tournament", "round", "pair", "void")

    def __init__(self, record: Optional[GameRecord], data: Optional[dict[str, Any]]) -> None:
        self.record = record
        self.data = data
        if record is not None:
            self.game_id, self.variant = record.game_id, record.variant
            self.white, self.black = record.white.name, record.black.name
            self.result, self.termination = record.result, record.termination
            self.forfeit, self.tournament = record.forfeit, record.tournament
            self.round, self.pair, self.void = record.round, record.pair, record.void
        else:
            assert data is not None
            self.game_id, self.variant = data["game_id"], data["variant"]
            self.white, self.black = data["white"]["name"], data["black"]["name"]
            self.result, self.termination = data["result"], data["termination"]
            self.forfeit, self.tournament = data.get("forfeit"), data.get("tournament")
            self.round, self.pair, self.void = data.get("round"), data.get("pair"), \
                data.get("void", "")

    @classmethod
    def of(cls, item: Union[GameRecord, Game]) -> Game:
        """``item`` as a :class:`Game` (a record is wrapped)."""
        return item if isinstance(item, Game) else cls(item, None)

    def full(self) -> GameRecord:
        """The whole record (built from the line on first use, then kept)."""
        if self.record is None:
            assert self.data is not None
            self.record = GameRecord.from_dict(self.data)
        return self.record

    def score(self, color: str) -> float:
        """1, 0.5 or 0 for ``color``, as :meth:`GameRecord.score`."""
        if self.result == "1/2-1/2":
            return 0.5
        return 1.0 if {"1-0": "white", "0-1": "black"}.get(self.result) == color else 0.0

    @property
    def plies(self) -> int:
        """Turns played."""
        if self.record is not None:
            return len(self.record.moves)
        assert self.data is not None
        return len(self.data.get("moves") or ())

    @property
    def time_control(self) -> dict[str, Any]:
        if self.record is not None:
            return self.record.time_control
        assert self.data is not None
        return self.data.get("time_control") or {}

    @property
    def replays(self) -> Sequence[str]:
        if self.record is not None:
            return self.record.replays
        assert self.data is not None
        return self.data.get("replays") or ()

    def waits(self, waited: float = 0.0, thought: float = 0.0) -> tuple[float, float]:
        """``waited`` and ``thought`` with the milliseconds its bots waited for a CPU and
        thought added, move by move (not the opening's), where the wait was measured."""
        if self.record is not None:
            for m in self.record.moves:
                if m.wait_ms is not None and not m.opening:
                    waited += m.wait_ms
                    thought += m.wall_ms
        else:
            assert self.data is not None
            for d in self.data.get("moves") or ():
                w = d.get("wait_ms")
                if w is not None and not d.get("opening", False):
                    waited += w
                    thought += d.get("wall_ms", 0.0)
        return waited, thought


def _looks_like_record(d: Any) -> bool:
    """Whether the JSON value ``d`` has a record's shape (what :meth:`GameRecord.from_dict`
    needs), checked without building one."""
    if type(d) is not dict:
        return False
    keys = d.keys()
    if not (keys >= _REQUIRED and keys <= _RECORD_FIELDS):
        return False
    for p in (d["white"], d["black"]):
        if type(p) is not dict or "name" not in p or not p.keys() <= _PLAYER_FIELDS:
            return False
    moves = d.get("moves", ())
    if type(moves) is not list:
        return False
    for m in moves:
        if type(m) is not dict or "move" not in m or not m.keys() <= _MOVE_FIELDS:
            return False
    return True


def stream_games(path: str | os.PathLike[str], *, full: bool = False) -> Iterator[Game]:
    """The games of a ``games.jsonl`` file, a line at a time (the file is never held whole).

    The same games, and the same errors, as :func:`arena.records.iter_records`: blank lines
    are skipped; a torn last line (a crash mid-write: a line among the file's last two
    that does not parse and does not end with ``}``) is skipped; any other line that is not
    a record is an :class:`ArenaError` naming the file and line.  ``full``: every game
    carries its :class:`GameRecord` (else only the fields the tallies read, the record
    being built on demand, :meth:`Game.full`).
    """
    for item in stream_lines(path, full=full):
        yield Game(item, None) if isinstance(item, GameRecord) else Game(None, item)


def stream_lines(path: str | os.PathLike[str], *, full: bool = False
                 ) -> Iterator[Union[GameRecord, dict[str, Any]]]:
    """:func:`stream_games`' games as they were read: each line's JSON object (checked to
    have a record's shape), or its :class:`GameRecord` (``full``, or a line whose shape
    only :meth:`GameRecord.from_dict` can judge).  The lines are read, and torn or broken
    ones judged, by :func:`arena.records.iter_lines` (the reader of
    :func:`arena.records.iter_records`)."""
    if full:
        return iter_lines(path, parse_record)
    return iter_lines(path, parse_game_line)


_decode = json.JSONDecoder().decode  # json.loads' own decoder, without its type checks


def parse_game_line(raw: bytes) -> Union[GameRecord, dict[str, Any]]:
    """One line of ``games.jsonl`` as :func:`stream_lines` reads it: its JSON object when it
    has a record's shape (checked without building the record), else its
    :class:`GameRecord` (:func:`arena.records.parse_record`, which also raises its errors
    word for word).  ``Game(None, data)`` or ``Game(record, None)`` of it is the game.

    :raises ArenaError: the line is not a record (as :func:`~arena.records.parse_record`).
    """
    try:
        data: Any = _decode(raw.decode("utf-8"))
    except ValueError:  # not JSON, or not UTF-8: parse_record says which
        data = None
    if _looks_like_record(data):
        return data  # type: ignore[no-any-return]
    return parse_record(raw)  # the record, or its error word for word


# ---------------------------------------------------------------------------------------
# The tallies
# ---------------------------------------------------------------------------------------


@dataclass
class PairStats:
    """The colour-swapped pairs and lone games of two bots ``a`` < ``b`` (by name).

    ``clusters`` counts closed clusters between them by ``(games, 2 × a's points as the
    ratings count them, 2 × a's points, 2 × b's points, complete)``: ``complete`` a
    colour-swapped pair (two games, each bot White once), the rest lone games or pairs that
    are not colour-swapped.  ``loose`` counts their games that were in a cluster with games
    of other bots (unpaired for the match statistics).
    """

    clusters: Counter[tuple[int, int, int, int, bool]] = field(default_factory=Counter)
    loose: int = 0

    def merge(self, other: PairStats) -> None:
        self.clusters.update(other.clusters)
        self.loose += other.loose


@dataclass
class VariantTally:
    """The tallies of one variant (or of all, pooled: :meth:`GameTallies.pooled`).

    ``players`` in order of first appearance (White, then Black, game by game); ``results``
    per ordered ``(white, black)``: games White won, drawn, Black won, other results;
    ``forfeits`` per bot its losses by forfeit by kind; ``pairs`` per ``(a, b)``, a < b by
    name, their :class:`PairStats`; ``mixed`` the clusters whose games were between
    different bots (each a list of ``(white, black, White's score)``); ``games`` the games
    between two different bots (rated), ``clusters`` their clusters.
    """

    variant: Optional[str]
    players: dict[str, None] = field(default_factory=dict)
    results: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    forfeits: dict[str, Counter[str]] = field(default_factory=dict)
    pairs: dict[tuple[str, str], PairStats] = field(default_factory=dict)
    mixed: list[list[tuple[str, str, float]]] = field(default_factory=list)
    games: int = 0
    all_games: int = 0

    @property
    def clusters(self) -> int:
        """How many clusters the rated games form."""
        return sum(sum(s.clusters.values()) for s in self.pairs.values()) + len(self.mixed)

    def pair(self, a: str, b: str) -> PairStats:
        key = (a, b) if a < b else (b, a)
        stats = self.pairs.get(key)
        if stats is None:
            stats = self.pairs[key] = PairStats()
        return stats

    def merge(self, other: VariantTally) -> None:
        """Add ``other``'s games (players appended in their order)."""
        for name in other.players:
            self.players.setdefault(name, None)
        for key, counts in other.results.items():
            mine = self.results.setdefault(key, [0, 0, 0, 0])
            for k in range(4):
                mine[k] += counts[k]
        for name, kinds in other.forfeits.items():
            self.forfeits.setdefault(name, Counter()).update(kinds)
        for key, stats in other.pairs.items():
            self.pairs.setdefault(key, PairStats()).merge(stats)
        self.mixed.extend(other.mixed)
        self.games += other.games
        self.all_games += other.all_games


#: per result index, White's and Black's score (GameRecord.score)
_SCORES = ((1.0, 0.0), (0.5, 0.5), (0.0, 1.0), (0.0, 0.0))
#: per "the first bot (by name) played White" and result index, twice its points as the
#: ratings count them (White's score, or 1 less it), as it scored, and as the other scored
_HALVES = {w: tuple((int(2 * (ws if w else 1.0 - ws)), int(2 * (ws if w else bs)),
                     int(2 * (bs if w else ws))) for ws, bs in _SCORES) for w in (True, False)}


class GameTallies:
    """Everything the ratings tables need from a folder's games, added one game at a time
    (:meth:`add`), in memory that does not grow with the games (see the module's
    docstring).  :meth:`table` gives a variant's :class:`VariantTally` (None: pooled)."""

    def __init__(self, keep_games: bool = False) -> None:
        self.variants: dict[str, VariantTally] = {}
        self.players: dict[str, None] = {}
        self.count = 0
        self._open: dict[tuple[Any, ...], tuple[str, str, int]] = {}
        self._pooled: Optional[VariantTally] = None
        #: with ``keep_games``: every rated game as a few numbers (the seeded bootstrap
        #: resamples the games in their order: 28 bytes a game, not a record)
        self.kept: Optional[KeptGames] = KeptGames() if keep_games else None

    def __len__(self) -> int:
        """How many games were counted."""
        return self.count

    def add(self, item: Union[GameRecord, Game]) -> None:
        """Count one game (a record, or a :class:`Game` read by :func:`stream_games`)."""
        g = Game.of(item)
        self.add_game(g.variant, g.white, g.black, g.result, g.termination, g.forfeit,
                      (g.tournament, g.variant, g.round, g.pair) if g.pair is not None else None)

    def add_dict(self, d: dict[str, Any]) -> None:
        """Count one game from its line's JSON object (:func:`stream_lines`)."""
        pair = d.get("pair")
        variant = d["variant"]
        self.add_game(variant, d["white"]["name"], d["black"]["name"], d["result"],
                      d["termination"], d.get("forfeit"),
                      None if pair is None else (d.get("tournament"), variant, d.get("round"),
                                                 pair))

    def add_game(self, variant: str, white: str, black: str, result: str, termination: str,
                 forfeit: Optional[str], cluster: Optional[tuple[Any, ...]]) -> None:
        """Count one game from its fields (``cluster``: its pair's key, None for none)."""
        self.count += 1
        self._pooled = None
        t = self.variants.get(variant)
        if t is None:
            t = self.variants[variant] = VariantTally(variant)
        k = _RESULT_INDEX.get(result, 3)
        counts = t.results.get((white, black))
        if counts is None:  # a new pairing: its players may be new too (White first)
            self.players.setdefault(white, None)
            self.players.setdefault(black, None)
            t.players.setdefault(white, None)
            t.players.setdefault(black, None)
            counts = t.results[white, black] = [0, 0, 0, 0]
        counts[k] += 1
        t.all_games += 1
        if forfeit in ("white", "black"):
            side = 0 if forfeit == "white" else 1
            if _SCORES[k][side] == 0.0:  # a loss of the colour that forfeited
                loser = white if side == 0 else black
                t.forfeits.setdefault(loser, Counter())[termination] += 1
        if white == black:
            return
        t.games += 1
        if self.kept is not None:
            self.kept.add(variant, white, black, _SCORES[k][0], cluster,
                          cluster is not None and cluster in self._open)
        if cluster is None:
            self._close(t, [(white, black, k)])
            return
        first = self._open.pop(cluster, None)
        if first is None:
            self._open[cluster] = (white, black, k)
        else:
            self._close(t, [first, (white, black, k)])

    def _close(self, t: VariantTally, games: list[tuple[str, str, int]]) -> None:
        """Count a cluster's games (one or two) in ``t``."""
        w0, b0, _ = games[0]
        a, b = (w0, b0) if w0 < b0 else (b0, w0)
        if len(games) == 2 and not ((games[1][0] == a and games[1][1] == b)
                                    or (games[1][0] == b and games[1][1] == a)):
            t.mixed.append([(w, bl, _SCORES[k][0]) for w, bl, k in games])
            for w, bl, _k in games:
                t.pair(w, bl).loose += 1
            return
        rated = mine = theirs = 0
        for w, _bl, k in games:
            r, m, o = _HALVES[w == a][k]
            rated += r
            mine += m
            theirs += o
        complete = len(games) == 2 and games[0][0] == games[1][1]
        t.pair(a, b).clusters[len(games), rated, mine, theirs, complete] += 1

    def finish(self) -> GameTallies:
        """Close the clusters still open (lone games); returns itself."""
        for key, game in self._open.items():
            self._close(self.variants[key[1]], [game])
        self._open.clear()
        self._pooled = None
        return self

    def table(self, variant: Optional[str]) -> VariantTally:
        """The tallies of ``variant`` (an empty table for a variant without games), or all
        variants pooled (None; players in order of first appearance over all games)."""
        if self._open:
            self.finish()
        if variant is not None:
            return self.variants.get(variant) or VariantTally(variant)
        if self._pooled is None:
            pooled = VariantTally(None, players=dict(self.players))
            for t in self.variants.values():
                pooled.merge(t)
            self._pooled = pooled
        return self._pooled

    @property
    def variant_names(self) -> list[str]:
        """The variants in order of first appearance."""
        return list(self.variants)


class KeptGames:
    """The rated games of :class:`GameTallies` (``keep_games``) as parallel typed arrays:
    variant, White and Black (ids into ``variants`` and ``names``, in order of first
    appearance), White's score and the cluster (numbered as the games' pairs first appear),
    what :func:`arena.ratings.game_arrays` makes of the records."""

    def __init__(self) -> None:
        self.variants: dict[str, int] = {}
        self.names: dict[str, int] = {}
        self.variant = array("i")
        self.white = array("i")
        self.black = array("i")
        self.score = array("d")
        self.cluster = array("q")
        self._open: dict[tuple[Any, ...], int] = {}
        self._next = 0

    def add(self, variant: str, white: str, black: str, score: float,
            cluster: Optional[tuple[Any, ...]], second: bool) -> None:
        """One rated game (``second``: the second game of its open cluster)."""
        if second:
            cid = self._open.pop(cluster)  # type: ignore[arg-type]
        else:
            cid = self._next
            self._next += 1
            if cluster is not None:
                self._open[cluster] = cid
        names = self.names
        self.variant.append(self.variants.setdefault(variant, len(self.variants)))
        self.white.append(names.setdefault(white, len(names)))
        self.black.append(names.setdefault(black, len(names)))
        self.score.append(score)
        self.cluster.append(cid)


def tally_games(games: Iterable[Union[GameRecord, Game]], *,
                keep_games: bool = False) -> GameTallies:
    """:class:`GameTallies` of ``games`` (records or :class:`Game`), in one pass."""
    out = GameTallies(keep_games)
    for g in games:
        out.add(g)
    return out.finish()


def tally_file(path: str | os.PathLike[str], *, keep_games: bool = False) -> GameTallies:
    """:class:`GameTallies` of a ``games.jsonl`` file, read a line at a time
    (:func:`stream_lines`; its errors)."""
    out = GameTallies(keep_games)
    for item in stream_lines(path):
        if isinstance(item, GameRecord):
            out.add(item)
        else:
            out.add_dict(item)
    return out.finish()
