"""Formats played round by round: a Swiss and a knockout (issue 38).

Their rounds cannot be listed in advance: each is paired from the results of the rounds
before it.  A :class:`Planner` gives the runner the games to play next
(:meth:`Planner.next_slots`): the missing games of the last recorded round, else the next
round, which it pairs and **records** first (``rounds.jsonl`` in the results folder, one
line per round, written and synced before any of its games starts).  A run killed mid-round
resumes that round as recorded; a round is paired only once the one before is complete; and
everything else is derived from the records alone, so a resumed run plays what an
uninterrupted one did.  Game ids keep the form of every format,
``<variant>/r<round>/m<meeting>/p<pair>/g<0|1>`` (:func:`arena.schedule.pair_slots`), with
``r`` the Swiss round or the bracket's round.

**Swiss** (:func:`arena.swiss.pair_round`): players of equal or nearest scores, never the
same two twice; a pairing is ``games_per_pairing`` games per variant in colour-swapped
pairs, so colours are balanced inside every pairing (each player has White as often as
Black in every round).  An odd field's bye goes to the lowest score without one and scores
as a won pairing: ``games_per_pairing`` × variants points (:func:`bye_points`), as a bye is
a win in most chess Swiss events.  Scores are points, a win 1 and a draw ½ per game.

**Knockout**: a bracket of the next power of two, seeded by ``format.seeds`` in the
standard order (1 against the last, and seeds 1 and 2 meet at the earliest in the final:
:func:`bracket_lines`); the top seeds have the byes of a field that is not a power of two.
A match is ``games_per_pairing`` games per variant; the player with more points goes
through.  A tied match goes on, one colour-swapped pair per variant at a time, for up to
``format.tiebreak_pairs`` further pairs (2 by default); still tied, the better seed goes
through (stated in the bracket and the report).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

from arena.errors import ArenaError
from arena.records import GameRecord
from arena.schedule import Slot, pair_slots
from arena.swiss import pair_round

#: the file of a staged tournament's rounds, in its results folder
ROUNDS_FILE = "rounds.jsonl"
#: room for each round's and each match's slot indexes (a slot's index orders the games)
_ROUND_SPAN = 10 ** 9
_MATCH_SPAN = 10 ** 5


@dataclass(frozen=True)
class Round:
    """One recorded round.  A Swiss round: ``pairs`` (the better seed first), the player
    with the ``bye`` (empty for an even field) and the points it scores (``bye_points``).  A knockout round: ``lines``, the bracket's
    lines of that round in order (None for an empty line: the player beside it has a bye);
    its matches are the lines two by two."""

    number: int
    kind: str
    pairs: tuple[tuple[str, str], ...] = ()
    bye: tuple[str, ...] = ()
    lines: tuple[Optional[str], ...] = ()
    bye_points: float = 0.0

    def matches(self) -> list[tuple[str, str]]:
        """The pairings of the round, in order (a knockout's byes left out)."""
        if self.kind == "swiss":
            return list(self.pairs)
        return [(a, b) for a, b in zip(self.lines[::2], self.lines[1::2])
                if a is not None and b is not None]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"round": self.number, "format": self.kind}
        if self.kind == "swiss":
            out.update(pairs=[list(p) for p in self.pairs], bye=self.bye[0] if self.bye else None,
                       bye_points=self.bye_points)
        else:
            out.update(lines=list(self.lines))
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Round:
        kind = str(data["format"])
        if kind == "swiss":
            bye = data.get("bye")
            return cls(int(data["round"]), kind,
                       pairs=tuple((str(a), str(b)) for a, b in data["pairs"]),
                       bye=(str(bye),) if bye else (),
                       bye_points=float(data.get("bye_points", 0.0)))
        return cls(int(data["round"]), kind,
                   lines=tuple(None if x is None else str(x) for x in data["lines"]))


class RoundsFileError(ArenaError):
    """``rounds.jsonl`` is not what this tournament recorded."""


def read_rounds(folder: Path) -> list[Round]:
    """The rounds recorded in ``folder`` (none when there is no file).  A last line cut short
    (a run killed while writing it, before any of its games started) is ignored: that round
    is paired again, from the same results, to the same pairs.

    :raises RoundsFileError: a line other than the last cannot be read, or the rounds are
        not numbered 1, 2, 3...
    """
    path = folder / ROUNDS_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    rounds: list[Round] = []
    lines = text.split("\n")
    for k, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            entry = Round.from_json(json.loads(line))
        except (ValueError, KeyError, TypeError) as e:
            if k == len(lines) - 1:  # no newline after it: cut short
                break
            raise RoundsFileError(f"{path}: line {k + 1} cannot be read ({e})") from None
        if entry.number != len(rounds) + 1:
            raise RoundsFileError(f"{path}: line {k + 1} is round {entry.number}, expected "
                                  f"{len(rounds) + 1}")
        rounds.append(entry)
    return rounds


def append_round(folder: Path, entry: Round) -> None:
    """Add ``entry`` to ``folder``'s rounds file and sync it (before its games start)."""
    path = folder / ROUNDS_FILE
    data = (json.dumps(entry.to_json(), sort_keys=True) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        if os.fstat(fd).st_size:  # a last line cut short is ended first
            with open(path, "rb") as f:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    os.write(fd, b"\n")
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def bracket_lines(size: int) -> list[int]:
    """The seeds (from 1) on the lines of a bracket of ``size`` (a power of two), in order:
    ``[1, 2]``, ``[1, 4, 2, 3]``, ``[1, 8, 4, 5, 2, 7, 3, 6]``..., so that seed 1 meets the
    last seed first and seeds 1 and 2 can meet only in the final."""
    order = [1]
    while len(order) < size:
        n = 2 * len(order)
        order = [x for s in order for x in (s, n + 1 - s)]
    return order


def bye_points(config: Any) -> float:
    """What a Swiss bye scores: a won pairing, ``games_per_pairing`` × variants points."""
    return float(config.games_per_pairing * len(config.variants))


def match_winner(a: str, b: str, points: Mapping[str, float],
                 seed: Mapping[str, int]) -> tuple[str, bool]:
    """The winner of a complete knockout match between ``a`` and ``b`` with ``points``: more
    points, else the better (lower) ``seed``; and whether the seed decided it. One rule for
    the runner (:meth:`Planner.match`) and the report's bracket."""
    if points[a] != points[b]:
        return (a if points[a] > points[b] else b), False
    return min((a, b), key=lambda x: seed.get(x, math.inf)), True


@dataclass
class MatchState:
    """A knockout match as its games so far decide it (:meth:`Planner.match`)."""

    a: str
    b: str
    points: dict[str, float]
    pairs_played: int
    winner: Optional[str] = None
    by_seed: bool = False
    missing: list[Slot] = field(default_factory=list)


class Planner:
    """The games of a Swiss or knockout tournament ``config`` (a
    :class:`~arena.config.TournamentConfig`) with results folder ``folder``, round by round.

    :meth:`next_slots` gives the games to play now; :meth:`byes` the points of Swiss byes;
    :meth:`order` the records in playing order; :meth:`total` the number of games planned.

    ``done`` maps each finished game's id to its record, or to anything that has what a
    round needs of it, its players' names (``white.name``, ``black.name``) and its
    ``score(colour)``: the runner passes the outcomes it keeps
    (:class:`arena.runstate.Finished`, a few shared objects), never the records.
    """

    def __init__(self, config: Any, folder: Path) -> None:
        self.config = config
        self.folder = folder
        self.kind = config.format.kind
        self.index = {name: k for k, name in enumerate(config.players)}
        self.seeds: tuple[str, ...] = config.format.seeds or tuple(config.players)
        self.rounds = read_rounds(folder)
        for entry in self.rounds:
            if entry.kind != self.kind:
                raise RoundsFileError(f"{folder / ROUNDS_FILE}: round {entry.number} is a "
                                      f"{entry.kind}, the tournament a {self.kind}")
            unknown = {p for pair in entry.matches() for p in pair} - set(self.index)
            if unknown:
                raise RoundsFileError(f"{folder / ROUNDS_FILE}: round {entry.number} pairs "
                                      f"{', '.join(sorted(unknown))}, not in the tournament")
        self.ended = ""  # why a Swiss ended before its last round ("" while it has not)

    # -- the games of a pairing ------------------------------------------------------------
    def _pair(self, rnd: int, m: int, a: str, b: str, k: int) -> list[Slot]:
        c = self.config
        book = c.book
        span = 2 * len(c.variants)
        return pair_slots(rnd, self.index[a], self.index[b], k, c.variants, seed=c.seed,
                          opening_turns=c.opening_turns,
                          books=book.books if book is not None else None,
                          book_order=book.order if book is not None else "sequential",
                          index=rnd * _ROUND_SPAN + m * _MATCH_SPAN + (k - 1) * span)

    def _base_pairs(self) -> int:
        return self.config.games_per_pairing // 2

    def match(self, entry: Round, m: int, a: str, b: str,
              done: Mapping[str, GameRecord]) -> MatchState:
        """Match ``m`` (from 0) of ``entry``, players ``a`` and ``b``: its points so far, its
        winner once decided, the games it still needs (``missing``)."""
        points = {a: 0.0, b: 0.0}
        base = self._base_pairs()
        extra = self.config.format.tiebreak_pairs if self.kind == "knockout" else 0
        missing: list[Slot] = []
        pairs = 0
        for k in range(1, base + extra + 1):
            if k > base and (missing or points[a] != points[b]):
                break  # a further pair only once the match is complete and tied
            games = self._pair(entry.number, m, a, b, k)
            pairs = k
            gone = [s for s in games if s.game_id not in done]
            if gone:
                missing.extend(gone)
                continue
            for s in games:
                record = done[s.game_id]
                points[record.white.name] += record.score("white")
                points[record.black.name] += record.score("black")
        state = MatchState(a, b, points, pairs, missing=missing)
        if self.kind == "knockout" and not missing:
            state.winner, state.by_seed = match_winner(
                a, b, points, {name: k for k, name in enumerate(self.seeds)})
        return state

    def _round_states(self, entry: Round, done: Mapping[str, GameRecord]) -> list[MatchState]:
        return [self.match(entry, m, a, b, done) for m, (a, b) in enumerate(entry.matches())]

    # -- what to play next ----------------------------------------------------------------
    def next_slots(self, done: Mapping[str, GameRecord]) -> list[Slot]:
        """The games to play now: what the last recorded round still needs, else the next
        round's games (paired, recorded and synced first); empty once the tournament is
        over."""
        if self.rounds:
            missing = [s for st in self._round_states(self.rounds[-1], done) for s in st.missing]
            if missing:
                return missing
        entry = self._next_round(done)
        if entry is None:
            return []
        append_round(self.folder, entry)
        self.rounds.append(entry)
        return [s for st in self._round_states(entry, done) for s in st.missing]

    def _next_round(self, done: Mapping[str, GameRecord]) -> Optional[Round]:
        number = len(self.rounds) + 1
        if self.kind == "swiss":
            if number > self.config.format.rounds:
                return None
            met = [pair for entry in self.rounds for pair in entry.pairs]
            byes = [p for entry in self.rounds for p in entry.bye]
            try:
                pairing = pair_round(self.seeds, self.scores(done), met, byes)
            except ValueError as e:  # a small field that has met every way it can
                self.ended = f"the Swiss ends after round {number - 1}: {e}"
                return None
            return Round(number, "swiss", pairs=pairing.pairs,
                         bye=(pairing.bye,) if pairing.bye else (),
                         bye_points=bye_points(self.config) if pairing.bye else 0.0)
        if not self.rounds:
            size = 1 << (len(self.seeds) - 1).bit_length()
            lines = tuple(self.seeds[s - 1] if s <= len(self.seeds) else None
                          for s in bracket_lines(size))
            return Round(1, "knockout", lines=lines)
        through = self.through(self.rounds[-1], done)
        if len(through) < 2:
            return None
        return Round(number, "knockout", lines=tuple(through))

    def through(self, entry: Round, done: Mapping[str, GameRecord]) -> list[str]:
        """The players through to the next round from the knockout round ``entry`` (complete),
        in bracket order."""
        states = iter(self._round_states(entry, done))
        out = []
        for a, b in zip(entry.lines[::2], entry.lines[1::2]):
            if a is None or b is None:
                present = a if a is not None else b
                if present is not None:
                    out.append(present)
                continue
            winner = next(states).winner
            assert winner is not None
            out.append(winner)
        return out

    # -- standings ------------------------------------------------------------------------
    def byes(self) -> dict[str, float]:
        """The points each player got from Swiss byes (none in a knockout)."""
        if self.kind != "swiss":
            return {}
        return round_byes(self.rounds)

    def scores(self, done: Mapping[str, GameRecord]) -> dict[str, float]:
        """Points so far: the games of the recorded rounds and the byes."""
        points = {p: 0.0 for p in self.config.players}
        for record in self.records(done):
            points[record.white.name] += record.score("white")
            points[record.black.name] += record.score("black")
        for p, extra in self.byes().items():
            points[p] += extra
        return points

    def slots(self, done: Mapping[str, GameRecord]) -> list[Slot]:
        """Every game of the recorded rounds that is played or still needed, in order."""
        out: list[Slot] = []
        for entry in self.rounds:
            for m, (a, b) in enumerate(entry.matches()):
                state = self.match(entry, m, a, b, done)
                for k in range(1, state.pairs_played + 1):
                    out.extend(self._pair(entry.number, m, a, b, k))
        return out

    def records(self, done: Mapping[str, GameRecord]) -> list[GameRecord]:
        """The records of ``done`` that belong to the recorded rounds, in playing order."""
        return [done[s.game_id] for s in self.slots(done) if s.game_id in done]

    def total(self, done: Mapping[str, GameRecord]) -> int:
        """The games planned: those of the rounds recorded (played or not, with the tied
        knockout matches' further pairs) and, for the rounds still to pair, their usual
        number (:func:`arena.schedule.count_games`)."""
        from arena.schedule import count_games

        c = self.config
        usual = count_games(c.format, c.players, len(c.variants),
                            games_per_pairing=c.games_per_pairing)
        recorded = len(self.slots(done))
        per_pairing = c.games_per_pairing * len(c.variants)
        if self.kind == "swiss":
            left = max(0, c.format.rounds - len(self.rounds)) * (len(c.players) // 2)
        else:
            left = (len(c.players) - 1) - sum(len(e.matches()) for e in self.rounds)
        return max(recorded + left * per_pairing, min(usual, recorded))

    def finished(self, done: Mapping[str, GameRecord]) -> bool:
        """Whether every round is recorded and played (nothing left to pair)."""
        if self.rounds and any(st.missing for st in self._round_states(self.rounds[-1], done)):
            return False
        if self.kind == "swiss":
            return len(self.rounds) >= self.config.format.rounds or bool(self.ended)
        return bool(self.rounds) and len(self.through(self.rounds[-1], done)) < 2


def round_byes(rounds: Iterable[Round]) -> dict[str, float]:
    """The points each player got from the byes of the Swiss ``rounds`` (as recorded)."""
    out: dict[str, float] = {}
    for entry in rounds:
        for p in entry.bye:
            out[p] = out.get(p, 0.0) + entry.bye_points
    return out


def knockout_places(planner: Planner, done: Mapping[str, GameRecord]) -> dict[str, int]:
    """Each player's place in a knockout, as its bracket decides it: the champion 1st, the
    final's loser 2nd, the losers of the semi-finals share 3rd, those of the quarter-finals
    5th, and so on (a round's losers share the place after the players still in); players
    still in a bracket that is not finished share the best place left."""
    if planner.kind != "knockout" or not planner.rounds:
        return {}
    out: dict[str, int] = {}
    alive = [p for p in planner.rounds[0].lines if p is not None]
    for entry in planner.rounds:
        states = planner._round_states(entry, done)
        if any(st.missing for st in states):
            break
        losers = [st.b if st.winner == st.a else st.a for st in states]
        alive = [p for p in alive if p not in losers]
        for p in losers:
            out[p] = len(alive) + 1
    for p in alive:
        out[p] = 1
    return out


def bracket_standings(tables: Mapping[str, list[Any]], place: Mapping[str, int]
                      ) -> dict[str, list[Any]]:
    """The runner's standings (:func:`arena.standings.compute_standings`) of a knockout
    ranked by ``place`` (:func:`knockout_places`) instead of points: a round's losers share
    their place, ordered among themselves by the table's own order (points, tie-breaks)."""
    import dataclasses

    out: dict[str, list[Any]] = {}
    for variant, rows in tables.items():
        last = len(rows) + 1
        order = sorted(range(len(rows)), key=lambda k: (place.get(rows[k].name, last), k))
        counts: dict[int, int] = {}
        for row in rows:
            counts[place.get(row.name, last)] = counts.get(place.get(row.name, last), 0) + 1
        out[variant] = [dataclasses.replace(rows[k], rank=place.get(rows[k].name, last),
                                            shared=counts[place.get(rows[k].name, last)] > 1)
                        for k in order]
    return out


def staged_facts(folder: Path) -> tuple[Optional[str], dict[str, float]]:
    """A results folder's format (``config.json``'s ``format.type``; None where it has none)
    and the points of its Swiss byes (:func:`round_byes` of its ``rounds.jsonl``): what
    ``arena rate`` and ``arena report`` need to rank a Swiss as its runner did.

    :raises RoundsFileError: a broken ``rounds.jsonl``.
    """
    kind: Optional[str] = None
    try:
        data = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        fmt = data.get("config", data).get("format") if isinstance(data, dict) else None
        kind = str(fmt.get("type")) if isinstance(fmt, dict) and fmt.get("type") else None
    except (OSError, ValueError, AttributeError):
        pass
    rounds = read_rounds(folder)
    if kind is None and rounds:  # an exported competition's Swiss final: rounds, no config
        kind = rounds[0].kind
    return kind, round_byes(rounds)


def folder_ranking(folder: Path, tiebreaks: Optional[Any] = None
                   ) -> tuple[tuple[str, ...], dict[str, float]]:
    """How a results folder's tables are ranked as its run ranked them: ``tiebreaks``, else
    a Swiss's (:data:`arena.standings.SWISS_TIEBREAKS`) or the default, and the points of
    its Swiss byes (:func:`staged_facts`).  :raises RoundsFileError: a broken rounds file."""
    from arena.standings import DEFAULT_TIEBREAKS, SWISS_TIEBREAKS

    kind, byes = staged_facts(folder)
    if tiebreaks is None:
        tiebreaks = SWISS_TIEBREAKS if kind == "swiss" else DEFAULT_TIEBREAKS
    return tuple(tiebreaks), byes


def staged_records(config: Any, folder: Path, done: Mapping[str, GameRecord]) -> list[GameRecord]:
    """The records of a Swiss or knockout in ``folder`` in playing order."""
    return Planner(config, folder).records(done)


def champion(planner: Planner, done: Mapping[str, GameRecord]) -> Optional[str]:
    """A finished knockout's winner (None before the end, and for a Swiss)."""
    if planner.kind != "knockout" or not planner.finished(done) or not planner.rounds:
        return None
    through = planner.through(planner.rounds[-1], done)
    return through[0] if len(through) == 1 else None


def names_in(rounds: Iterable[Round]) -> set[str]:
    """Every player named by ``rounds``."""
    return {p for r in rounds for pair in r.matches() for p in pair} | {
        p for r in rounds for p in r.bye}


__all__ = ["ROUNDS_FILE", "Round", "RoundsFileError", "Planner", "read_rounds",
           "append_round", "bracket_lines", "bye_points", "staged_records", "champion",
           "knockout_places", "round_byes", "bracket_standings", "staged_facts",
           "folder_ranking",
           "names_in"]
