"""What a runner keeps of the games it has saved: their ids and results, not their records
(issue 39: bounded memory at any number of games).

A record is 11-24 kB in memory; a runner needs of a finished game only that it is finished
(its ``game_id``), its result for the standings, the progress line, a Swiss's pairing and a
knockout's bracket, and where its record is in ``games.jsonl`` to read it again at the end.
:class:`Finished` holds exactly that, per game one id and one integer (about 160 bytes a
game, see docs/TOURNAMENTS.md), and maps each id to an *outcome*: a
:class:`~arena.records.GameRecord` that carries only the variant, the players' names, the
result, the termination and the forfeit, shared by every game with the same ones (so a
million games of two bots hold a few dozen of them).  Outcomes are what
:func:`arena.standings.compute_standings`, :class:`arena.standings.Tallies` and
:class:`arena.rounds.Planner` read, so the standings of outcomes are those of the records.

:func:`load_finished` reads ``games.jsonl`` line by line (never a list of its records),
moving the lines that are not records aside (:func:`arena.records.repair_lines`, the rules
of :func:`arena.records.repair_records`); :func:`read_at` reads the records back, in any
order, one at a time (:func:`arena.records.write_games_csv` writes ``games.csv`` from them
without holding them).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Iterable, Iterator, Mapping, MutableMapping, Optional

from arena.errors import ArenaError
from arena.records import GameRecord, PlayerInfo, parse_record, repair_lines, scan_records

__all__ = ["Finished", "load_finished", "outcome_key", "read_at"]

#: the packed integer of a game: ``((place + 1) << _PLACE_SHIFT) | (offset << _KIND_BITS) |
#: kind``: its place in the schedule (0: not known yet), where its record starts in
#: ``games.jsonl``, and which outcome it has
_KIND_BITS = 24
_KIND_MASK = (1 << _KIND_BITS) - 1
_OFFSET_BITS = 48
_PLACE_SHIFT = _KIND_BITS + _OFFSET_BITS
_LOW_MASK = (1 << _PLACE_SHIFT) - 1


def outcome_key(record: GameRecord) -> tuple[str, str, str, str, str, Optional[str]]:
    """What the standings read of a game: variant, White's and Black's names, result,
    termination and the colour that forfeited."""
    return (record.variant, record.white.name, record.black.name, record.result,
            record.termination, record.forfeit)


class _Places(MutableMapping[str, int]):
    """The schedule places of a :class:`Finished`'s games, as the mapping
    :class:`arena.schedule.PendingSlots` notes them in (``order[game_id] = index``)."""

    def __init__(self, finished: Finished) -> None:
        self._finished = finished

    def __getitem__(self, game_id: str) -> int:
        place = self._finished.place(game_id)
        if place is None:
            raise KeyError(game_id)
        return place

    def __setitem__(self, game_id: str, index: int) -> None:
        self._finished.set_place(game_id, index)

    def __delitem__(self, game_id: str) -> None:
        raise TypeError("a finished game keeps its place")

    def __iter__(self) -> Iterator[str]:
        return (g for g in self._finished if self._finished.place(g) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class Finished(Mapping[str, GameRecord]):
    """The finished games of a results folder, by ``game_id``: each id's outcome (a shared
    stand-in :class:`~arena.records.GameRecord` with the result, see the module's
    docstring), the offset of its record's line in ``games.jsonl`` (the first copy's: a
    game saved twice counts once) and, once the schedule has been walked past it, its place
    in the schedule (:attr:`places`).  Iteration is in the order the games were added
    (``games.jsonl``'s order)."""

    def __init__(self) -> None:
        self._games: dict[str, int] = {}
        self._outcomes: list[GameRecord] = []
        self._kinds: dict[tuple[str, str, str, str, str, Optional[str]], int] = {}
        #: the same games' places, as a mapping (for :class:`arena.schedule.PendingSlots`)
        self.places: MutableMapping[str, int] = _Places(self)

    # -- the mapping ------------------------------------------------------------------------
    def __getitem__(self, game_id: str) -> GameRecord:
        return self._outcomes[self._games[game_id] & _KIND_MASK]

    def __contains__(self, game_id: object) -> bool:
        return game_id in self._games

    def __iter__(self) -> Iterator[str]:
        return iter(self._games)

    def __len__(self) -> int:
        return len(self._games)

    # -- adding games -----------------------------------------------------------------------
    def add(self, record: GameRecord, offset: int) -> bool:
        """Count ``record``, whose line starts at ``offset`` in ``games.jsonl``; False (and
        nothing changes) when its game is already counted."""
        if record.game_id in self._games:
            return False
        if not 0 <= offset < 1 << _OFFSET_BITS:
            raise ValueError(f"offset {offset} out of range")
        self._games[record.game_id] = (offset << _KIND_BITS) | self._kind(record)
        return True

    def _kind(self, record: GameRecord) -> int:
        key = outcome_key(record)
        kind = self._kinds.get(key)
        if kind is None:
            if len(self._outcomes) > _KIND_MASK:
                raise ArenaError("too many different outcomes to count")
            kind = self._kinds[key] = len(self._outcomes)
            variant, white, black, result, termination, forfeit = key
            self._outcomes.append(GameRecord(
                game_id="", variant=variant, variant_params={}, white=PlayerInfo(white),
                black=PlayerInfo(black), result=result, termination=termination,
                forfeit=forfeit))
        return kind

    def set_place(self, game_id: str, index: int) -> None:
        """Note the schedule place (``Slot.index``) of the finished game ``game_id``."""
        packed = self._games[game_id]
        self._games[game_id] = ((index + 1) << _PLACE_SHIFT) | (packed & _LOW_MASK)

    # -- reading ----------------------------------------------------------------------------
    def place(self, game_id: str) -> Optional[int]:
        """The game's place in the schedule, None while not known."""
        place = self._games[game_id] >> _PLACE_SHIFT
        return place - 1 if place else None

    def offset(self, game_id: str) -> int:
        """Where the game's record starts in ``games.jsonl``."""
        return (self._games[game_id] & _LOW_MASK) >> _KIND_BITS

    def outcomes(self) -> list[GameRecord]:
        """The distinct outcomes counted so far (a few per pairing)."""
        return list(self._outcomes)

    def ordered(self, ids: Optional[Iterable[str]] = None, *,
                by_place: bool = False) -> list[int]:
        """The packed entries of the games ``ids`` (those counted; None: every game) in that
        order, or, ``by_place``, of every game with a place, in schedule order; else in
        ``games.jsonl``'s order.  Read them with :meth:`outcome_of` and :meth:`offset_of`
        (a list of integers: a few dozen bytes a game)."""
        if ids is not None:
            return [self._games[g] for g in ids if g in self._games]
        if by_place:
            return sorted(v for v in self._games.values() if v >> _PLACE_SHIFT)
        return sorted(self._games.values(), key=lambda v: v & _LOW_MASK)

    def outcome_of(self, packed: int) -> GameRecord:
        """The outcome of an entry of :meth:`ordered`."""
        return self._outcomes[packed & _KIND_MASK]

    @staticmethod
    def offset_of(packed: int) -> int:
        """The offset in ``games.jsonl`` of an entry of :meth:`ordered`."""
        return (packed & _LOW_MASK) >> _KIND_BITS


def read_at(path: Path, offsets: Iterable[int]) -> Iterator[GameRecord]:
    """The records of ``path`` whose lines start at ``offsets``, in that order, one at a time.

    :raises ArenaError: the file cannot be read, or an offset is not the start of a record.
    """
    wanted = iter(offsets)
    first = next(wanted, None)
    if first is None:
        return  # nothing asked for: a fresh run has no games.jsonl yet
    try:
        with open(path, "rb") as f:
            for offset in itertools.chain((first,), wanted):
                f.seek(offset)
                line = f.readline()
                try:
                    yield parse_record(line)
                except ValueError as e:
                    raise ArenaError(f"{path}: no record at byte {offset} ({e})") from None
    except OSError as e:
        raise ArenaError(f"cannot read {path}: {e.strerror}") from None


def load_finished(path: Path, side: Path) -> tuple[int, Finished]:
    """How many lines of ``games.jsonl`` at ``path`` that are not records were moved to
    ``side``, and the finished games of the file, read one line at a time (never a list of
    its records).  The lines are moved by :func:`arena.records.repair_lines`, by the rules
    of :func:`arena.records.repair_records`; the file is read once when nothing has to
    change, and read again after a rewrite (its offsets moved).  The caller owns the file
    (its lock).

    :raises ArenaError: a file cannot be read or written.
    """
    finished = Finished()
    moved, rewritten = repair_lines(path, side, finished.add)
    if rewritten:  # rare: a crash's torn line, a hand edit
        finished = Finished()
        for offset, _raw, record in scan_records(path):
            if record is not None:
                finished.add(record, offset)
    return moved, finished
