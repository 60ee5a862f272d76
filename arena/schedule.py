"""Tournament schedules: pairings, colours and openings, pure and seeded.

A schedule is a list of :class:`Slot`\\s, one per game, in the order the games are started.
It depends only on the players (in the order they joined the tournament), the variants, the
format, the number of games per pairing, the openings and the seed, never on the number of
workers or the clock: the same configuration always plays the same games, with the same
colours and openings, in the same order.

Each slot has a stable ``game_id``, ``<variant>/r<round>/m<meeting>/p<pair>/g<0|1>``, which is
how a resumed tournament knows which games are already finished.  Every part of a game (its
id, colours, opening and seed) is computed from its own coordinates alone, never from the
number of players, variants, rounds or games per pairing, so a tournament that grows (more
games per pairing, more rounds, another bot appended, another variant) keeps every game it
already has, unchanged, and only adds games:

* the *meeting* of players ``i < j`` (0-based, in joining order) is number
  ``j(j-1)/2 + i + 1``: players 0-1 are meeting 1, 0-2 meeting 2, 1-2 meeting 3, 0-3 meeting 4,
  ... (appending a player never renumbers a meeting);
* ``p<pair>`` counts the colour-swapped pairs of one meeting in one round and variant, from 1;
* ``g0`` and ``g1`` of a pair have the same players, variant and opening, with the colours
  exchanged.

(Schedules of results folders created before tournaments could grow, ``scheme`` 1, numbered
games by their place in the whole schedule; :func:`build_schedule` still builds them so that
such a folder resumes, but it cannot grow.)
"""

from __future__ import annotations

import hashlib
import random
from collections import deque
from dataclasses import dataclass
from typing import (TYPE_CHECKING, Any, Callable, Container, Iterable, Iterator, Literal,
                    Mapping, MutableMapping, Optional, Sequence, TypeVar)

from arena.openings import Book, BookOrder, book_opening
from arena.protocol import SEED_MAX
from arena.ranges import GAMES_MAX
from arena.rules import Position
from arena.variants import Variant

if TYPE_CHECKING:
    from arena.records import GameRecord

R = TypeVar("R")
FormatKind = Literal["round-robin", "gauntlet", "match", "swiss", "knockout"]
FORMAT_KINDS: tuple[FormatKind, ...] = ("round-robin", "gauntlet", "match", "swiss", "knockout")
#: the formats played round by round, each round paired from the results of the ones before
#: (:mod:`arena.rounds`): their schedule is not known in advance
STAGED_KINDS: tuple[FormatKind, ...] = ("swiss", "knockout")


@dataclass(frozen=True)
class Format:
    """How players meet.

    ``round-robin``: every player meets every other one, ``rounds`` times.
    ``gauntlet``: each of the ``seeds`` (player display names) meets every other player
    (seeds do not meet each other), ``rounds`` times.
    ``match``: exactly two players, ``rounds`` times.
    ``swiss``: ``rounds`` rounds, each pairing players of equal or nearest scores who have
    not met (:mod:`arena.swiss`); ``seeds`` is every player, best first (the order of a
    rating list, or the order given).
    ``knockout``: a bracket seeded by ``seeds`` (every player, best first); a match is
    ``games_per_pairing`` games, a tied match goes on for up to ``tiebreak_pairs`` further
    pairs, then the better seed goes through; ``rounds`` is the bracket's number of rounds.
    """

    kind: FormatKind = "round-robin"
    rounds: int = 1
    seeds: tuple[str, ...] = ()
    tiebreak_pairs: int = 2

    @property
    def staged(self) -> bool:
        """Whether each round is paired from the results of the rounds before it."""
        return self.kind in STAGED_KINDS


@dataclass(frozen=True)
class Slot:
    """One scheduled game.

    ``white`` and ``black`` index the players; ``round`` counts from 1; ``meeting`` numbers the
    two players (see the module's docstring; the same two players in every round and
    variant); ``pair_in_meeting`` counts the meeting's colour-swapped pairs from 1; ``game`` is
    0 or 1 within the pair.  ``pair`` identifies the colour-swapped pair within its round and
    variant (it is the records' ``pair``: :func:`pair_number` of the meeting and its pair).
    ``seed`` is the game's own seed (sent to bots that declare a ``Seed`` option).
    """

    index: int
    game_id: str
    variant: Variant
    round: int
    pair: int
    game: int
    white: int
    black: int
    opening: tuple[str, ...]
    seed: int
    meeting: int = 0
    pair_in_meeting: int = 0


#: the scheme :func:`build_schedule` uses unless told otherwise (1: before tournaments grew)
SCHEME = 2
#: how far apart the book lines of consecutive rounds start (a prime, see :func:`book_index`)
ROUND_STRIDE = 1_000_003


def meeting_number(a: int, b: int) -> int:
    """The number of the meeting of players ``a`` and ``b`` (0-based, in joining order), from
    1: ``j(j-1)/2 + i + 1`` for ``i < j``, so that appending players never renumbers one."""
    lo, hi = sorted((a, b))
    if lo == hi or lo < 0:
        raise ValueError(f"a meeting needs two different players, got {a} and {b}")
    return hi * (hi - 1) // 2 + lo + 1


def pair_number(meeting: int, pair: int) -> int:
    """A number for the ``pair``-th colour-swapped pair of ``meeting`` (both from 1), unique
    within a round and variant and unchanged when meetings or pairs are added: the Cantor
    numbering of the two, from 1 (meeting 1's pairs are 1, 3, 6, ...; meeting 2's 2, 5, ...)."""
    d = meeting + pair - 2
    return d * (d + 1) // 2 + pair


def book_index(round_: int, meeting: int, pair: int) -> int:
    """Which line of an opening book (counted from 0, before wrapping around the book) the
    ``pair``-th pair of ``meeting`` in round ``round_`` plays: the meeting's own start
    (``meeting - 1``) plus its pair number, plus :data:`ROUND_STRIDE` per later round.

    So the pairs of a meeting take consecutive lines, consecutive meetings start on
    consecutive lines, and nothing depends on the size of the tournament: a tournament that
    grows keeps every opening it has played."""
    return (meeting - 1) + (pair - 1) + (round_ - 1) * ROUND_STRIDE


def derive_seed(seed: int, *parts: object) -> int:
    """A seed in ``0..SEED_MAX`` derived from ``seed`` and ``parts``, stable across runs.

    (A hash of the text, so it never depends on ``PYTHONHASHSEED`` or on call order.)
    """
    text = "/".join(str(p) for p in (seed, *parts)).encode("utf-8")
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") & SEED_MAX


def count_pairings(fmt: Format, players: Sequence[str]) -> int:
    """How many pairs of players meet once per round (the length of :func:`pairings`),
    computed without listing them.

    :raises ValueError: when the format does not fit the players.
    """
    n = len(players)
    if fmt.kind == "round-robin":
        if n < 2:
            raise ValueError("a round robin needs at least two players")
        return n * (n - 1) // 2
    if fmt.kind in STAGED_KINDS:
        if n < 2:
            raise ValueError(f"a {fmt.kind} needs at least two players")
        # a Swiss round pairs all but a bye; a knockout's matches, spread over its rounds
        return n // 2 if fmt.kind == "swiss" else n - 1
    if fmt.kind == "match":
        if n != 2:
            raise ValueError(f"a match needs exactly two players, got {n}")
        return 1
    if fmt.kind == "gauntlet":
        names = set(players)
        for seed in fmt.seeds:
            if seed not in names:
                raise ValueError(f"no player named {seed!r}")
        seeded = set(fmt.seeds)
        field = sum(1 for p in players if p not in seeded)
        if not fmt.seeds or not field:
            raise ValueError("a gauntlet needs at least one seed and one other player")
        return len(fmt.seeds) * field
    raise ValueError(f"unknown format {fmt.kind!r}")


def count_games(fmt: Format, players: Sequence[str], variants: int, *,
                games_per_pairing: int) -> int:
    """How many games :func:`build_schedule` would list, by arithmetic alone (a tournament
    too big to build is refused before anything is built).

    :raises ValueError: when the format does not fit the players.
    """
    if fmt.kind == "knockout":  # each match eliminates one player; a tied match plays on
        return count_pairings(fmt, players) * games_per_pairing * variants
    return count_pairings(fmt, players) * fmt.rounds * games_per_pairing * variants


def pairings(fmt: Format, players: Sequence[str]) -> list[tuple[int, int]]:
    """The unordered pairs of player indices that meet once per round, in a fixed order.

    :raises ValueError: when the format does not fit the players (the configuration layer
        checks this first and names the key).
    """
    count_pairings(fmt, players)
    n = len(players)
    if fmt.staged:
        raise ValueError(f"a {fmt.kind}'s pairings are made round by round (arena.rounds)")
    if fmt.kind == "round-robin":
        return [(a, b) for a in range(n) for b in range(a + 1, n)]
    if fmt.kind == "match":
        return [(0, 1)]
    seeds = [players.index(s) for s in fmt.seeds]
    return [(s, f) for s in seeds for f in range(n) if f not in seeds]


def berger_rounds(n: int) -> list[list[tuple[int, int]]]:
    """A round robin of ``n`` players (indices) in rounds, by the circle method of Berger
    tables: every player meets every other once, in ``n - 1`` rounds (``n`` when ``n`` is
    odd: each round one player rests), and in each round every player plays at most once.
    Playing the rounds in order keeps every player's games within one of each other's at
    any moment."""
    if n < 2:
        return []
    ring = list(range(n)) + ([-1] if n % 2 else [])  # -1: the rest
    size = len(ring)
    rounds = []
    for r in range(size - 1):
        meetings = []
        for k in range(size // 2):
            a, b = ring[k], ring[size - 1 - k]
            if a >= 0 and b >= 0:
                meetings.append((a, b) if (r + k) % 2 == 0 else (b, a))
        rounds.append(meetings)
        ring = [ring[0], ring[-1], *ring[1:-1]]
    return rounds


def random_opening(variant: Variant, turns: int, seed: int) -> tuple[str, ...]:
    """``turns`` uniformly random legal turns from the start of ``variant``.

    Turns that would end the game are avoided; the opening is shorter when no other turn
    exists.  The same arguments always give the same opening.
    """
    rng = random.Random(seed)
    pos = Position(variant)
    moves: list[str] = []
    for _ in range(turns):
        candidates = pos.legal_moves()
        rng.shuffle(candidates)
        for move in candidates:
            pos.push(move)
            if pos.outcome() is None:
                moves.append(str(move))
                break
            pos.pop()
        else:
            break
    return tuple(moves)


def build_schedule(players: Sequence[str], variants: Sequence[Variant], fmt: Format, *,
                   games_per_pairing: int = 2, opening_turns: int = 0, seed: int = 0,
                   books: Optional[Mapping[str, Book]] = None,
                   book_order: BookOrder = "sequential", scheme: int = SCHEME) -> list[Slot]:
    """Every game of a tournament, in playing order: :func:`iter_schedule` as a list.

    :raises ValueError: as :func:`iter_schedule`.
    """
    return list(iter_schedule(players, variants, fmt, games_per_pairing=games_per_pairing,
                              opening_turns=opening_turns, seed=seed, books=books,
                              book_order=book_order, scheme=scheme))


def iter_schedule(players: Sequence[str], variants: Sequence[Variant], fmt: Format, *,
                  games_per_pairing: int = 2, opening_turns: int = 0, seed: int = 0,
                  books: Optional[Mapping[str, Book]] = None,
                  book_order: BookOrder = "sequential",
                  scheme: int = SCHEME, by_pairing: bool = False) -> Iterator[Slot]:
    """Every game of a tournament, in playing order, one :class:`Slot` at a time (the
    slots of :func:`build_schedule`, the same ids in the same order, without holding them:
    a runner near the game cap keeps only the games in flight).

    ``by_pairing``: the same slots (the same indexes) with each pairing's games together
    (:func:`pairing_key`: with several variants, a meeting's games of one variant, then of
    the next), for ``restart: per-pairing``; made as lazily in the current scheme.

    The arguments are checked at the call, before the first slot is made.

    ``players`` are in joining order (a player added to a tournament comes last).  Openings:
    ``opening_turns`` random legal turns, or, with ``books`` (each variant's name to its
    :data:`~arena.openings.Book`, the same lines checked in every variant), the book line
    :func:`book_index` names, in ``book_order``.

    Order: round by round; within a round the meetings in a seeded shuffled order; for each
    meeting its colour-swapped pairs; for each pair every variant; ``g0`` then ``g1``.

    :raises ValueError: for an odd or non-positive ``games_per_pairing``, a format that does
        not fit the players, or more than :data:`arena.ranges.GAMES_MAX` games (counted
        before anything is built), or an unknown ``scheme``.
    """
    if games_per_pairing < 2 or games_per_pairing % 2:
        raise ValueError(f"games_per_pairing must be an even number >= 2, got {games_per_pairing}")
    total = count_games(fmt, players, len(variants), games_per_pairing=games_per_pairing)
    if total > GAMES_MAX:
        raise ValueError(f"the tournament has {total:,} games, over the cap of {GAMES_MAX:,}")
    if scheme == 1:
        old = _scheme_1(players, variants, fmt, games_per_pairing=games_per_pairing,
                        opening_turns=opening_turns, seed=seed)
        return iter(pairing_order(list(old))) if by_pairing else old
    if scheme != SCHEME:
        raise ValueError(f"unknown schedule scheme {scheme}")
    return _scheme_2(players, variants, fmt, games_per_pairing=games_per_pairing,
                     opening_turns=opening_turns, seed=seed, books=books, book_order=book_order,
                     by_pairing=by_pairing)


def _scheme_2(players: Sequence[str], variants: Sequence[Variant], fmt: Format, *,
              games_per_pairing: int, opening_turns: int, seed: int,
              books: Optional[Mapping[str, Book]], book_order: BookOrder,
              by_pairing: bool = False) -> Iterator[Slot]:
    """The slots of the current scheme (see :func:`iter_schedule`), made as they are asked
    for."""
    meetings = pairings(fmt, players)
    index = 0
    pairs = games_per_pairing // 2
    span = 2 * len(variants)  # the games of one pair, every variant
    for rnd in range(1, fmt.rounds + 1):
        order = list(range(len(meetings)))
        random.Random(derive_seed(seed, "order", rnd)).shuffle(order)
        for m in order:
            a, b = meetings[m]
            if by_pairing:  # a variant's pairs at a time, each game at its own index
                for v, variant in enumerate(variants):
                    for k in range(1, pairs + 1):
                        yield from pair_slots(rnd, a, b, k, [variant], seed=seed,
                                              opening_turns=opening_turns, books=books,
                                              book_order=book_order,
                                              index=index + (k - 1) * span + 2 * v)
                index += pairs * span
                continue
            for k in range(1, pairs + 1):
                for slot in pair_slots(rnd, a, b, k, variants, seed=seed,
                                       opening_turns=opening_turns, books=books,
                                       book_order=book_order, index=index):
                    yield slot
                    index += 1


def pair_slots(rnd: int, a: int, b: int, k: int, variants: Sequence[Variant], *, seed: int,
               opening_turns: int = 0, books: Optional[Mapping[str, Book]] = None,
               book_order: BookOrder = "sequential", index: int = 0) -> list[Slot]:
    """The games of the ``k``-th colour-swapped pair (from 1) of players ``a`` and ``b``
    (indices in joining order) in round ``rnd``: for each variant ``g0`` then ``g1``, with
    indexes from ``index``.  Ids, colours, openings and seeds depend on these coordinates
    alone (see the module's docstring), in every format."""
    a, b = sorted((a, b))
    meeting = meeting_number(a, b)
    first, second = (a, b) if (rnd + meeting + k) % 2 == 1 else (b, a)
    pair = pair_number(meeting, k)
    out: list[Slot] = []
    for variant in variants:
        if books is not None:
            opening = book_opening(books[variant.name], book_index(rnd, meeting, k),
                                   seed=derive_seed(seed, "book"), order=book_order)
        elif opening_turns:
            opening = random_opening(variant, opening_turns, derive_seed(
                seed, "opening", variant.name, rnd, meeting, k))
        else:
            opening = ()
        for game, (white, black) in enumerate(((first, second), (second, first))):
            game_id = f"{variant.name}/r{rnd}/m{meeting}/p{k}/g{game}"
            out.append(Slot(index=index + len(out), game_id=game_id, variant=variant,
                            round=rnd, pair=pair, game=game, white=white, black=black,
                            opening=opening, seed=derive_seed(seed, "game", game_id),
                            meeting=meeting, pair_in_meeting=k))
    return out


def _scheme_1(players: Sequence[str], variants: Sequence[Variant], fmt: Format, *,
              games_per_pairing: int, opening_turns: int, seed: int) -> Iterator[Slot]:
    """The schedule of results folders created before tournaments could grow (ids
    ``<variant>/r<round>/p<pair>/g<0|1>``, pairs numbered through the whole round, colours by
    the place in the round's shuffled order): kept, unchanged, so that such a folder
    resumes."""
    meetings = pairings(fmt, players)
    pairs_per_pairing = games_per_pairing // 2
    index = 0
    for rnd in range(1, fmt.rounds + 1):
        order = list(range(len(meetings)))
        random.Random(derive_seed(seed, "order", rnd)).shuffle(order)
        for k, m in enumerate(order):
            a, b = meetings[m]
            for q in range(pairs_per_pairing):
                pair = m * pairs_per_pairing + q + 1
                first, second = (a, b) if (rnd + k + q) % 2 == 0 else (b, a)
                for variant in variants:
                    opening = (random_opening(variant, opening_turns,
                                              derive_seed(seed, "opening", variant.name, rnd, pair))
                               if opening_turns else ())
                    for game, (white, black) in enumerate(((first, second), (second, first))):
                        game_id = f"{variant.name}/r{rnd}/p{pair}/g{game}"
                        yield Slot(index=index, game_id=game_id, variant=variant, round=rnd,
                                   pair=pair, game=game, white=white, black=black,
                                   opening=opening, seed=derive_seed(seed, "game", game_id))
                        index += 1


def pairing_key(slot: Slot) -> str:
    """The games that share kept bot processes (``restart: per-pairing``): a meeting of two
    bots in one variant and round (its game id without the pair and game)."""
    low, high = sorted((slot.white, slot.black))
    return f"{slot.variant.name}/r{slot.round}/{low}-{high}"


def pairing_order(slots: Sequence[Slot]) -> deque[Slot]:
    """``slots`` with each pairing's games together (in the order of each pairing's first
    game, then their own), so that kept processes play them one after another."""
    groups: dict[str, list[Slot]] = {}
    for slot in slots:
        groups.setdefault(pairing_key(slot), []).append(slot)
    return deque(slot for group in groups.values() for slot in group)


def last_of_pairings(slots: Sequence[Slot]) -> set[int]:
    """The indexes of the last game of each pairing in ``slots`` (its bots end with it)."""
    return {slot.index for slot in {pairing_key(s): s for s in slots}.values()}


class PendingSlots:
    """The games of a schedule left to play, in its order, taken from ``slots`` (an
    :func:`iter_schedule`) as they are asked for: a runner near the game cap never holds
    its schedule (about 350 bytes a game when listed).

    Games whose id is in ``done`` are skipped, their places noted in ``order`` (id ->
    index); ``limit`` stops after that many games.  ``exhausted`` once the schedule is
    walked to its end; :meth:`finish` walks the rest (only noting places).  ``grouped``:
    ``slots`` come with each pairing's games together (``iter_schedule(by_pairing=True)``),
    so that :meth:`ends_pairing` can tell a pairing's last game by looking one game ahead.
    With ``regroup`` (a function of the games left, such as :func:`pairing_order`; for a
    short list, such as a round) the slots are listed at once instead, and ``listed`` holds
    the games left, regrouped."""

    def __init__(self, slots: Iterator[Slot], done: Container[str],
                 order: MutableMapping[str, int], limit: Optional[int] = None, *,
                 regroup: Optional[Callable[[list[Slot]], Iterable[Slot]]] = None,
                 grouped: bool = False) -> None:
        self._slots = slots
        self._done = done
        self._order = order
        self._next: Optional[Slot] = None
        self.left = limit
        self.exhausted = False
        self.grouped = grouped
        self.listed: Optional[deque[Slot]] = None
        self._last: set[int] = set()
        if regroup is not None:
            every = list(slots)
            order.update((s.game_id, s.index) for s in every if s.game_id in done)
            games = list(regroup([s for s in every if s.game_id not in done]))
            self.listed = deque(games if limit is None else games[:limit])
            self._last = last_of_pairings(self.listed)
            self.exhausted = True

    def ends_pairing(self, slot: Slot) -> bool:
        """Whether ``slot``, just taken (:meth:`popleft`), is the last game of its pairing
        left to play in this run (its kept bots end with it); always False when the games
        are neither ``grouped`` nor regrouped."""
        if self.listed is not None:
            return slot.index in self._last
        if not self.grouped:
            return False
        if not self:  # nothing after it (or the limit is reached)
            return True
        assert self._next is not None
        return pairing_key(self._next) != pairing_key(slot)

    def _fill(self) -> None:
        while self._next is None and not self.exhausted:
            slot = next(self._slots, None)
            if slot is None:
                self.exhausted = True
            elif slot.game_id in self._done:
                self._order[slot.game_id] = slot.index
            else:
                self._next = slot

    def __bool__(self) -> bool:
        if self.listed is not None:
            return bool(self.listed)
        if self.left is not None and self.left <= 0:
            return False
        self._fill()
        return self._next is not None

    def popleft(self) -> Slot:
        """The next game to play (call while true)."""
        if self.listed is not None:
            return self.listed.popleft()
        self._fill()
        slot, self._next = self._next, None
        if slot is None:
            raise IndexError("no game left to play")
        if self.left is not None:
            self.left -= 1
        return slot

    def count(self, unsaved: int) -> int:
        """How many games are to be played, of the ``unsaved`` ones (the limit's share)."""
        if self.listed is not None:
            return len(self.listed)
        return unsaved if self.left is None else min(unsaved, self.left)

    def finish(self) -> None:
        """Walk the rest of the schedule, noting the places of the games in ``done``."""
        self._next = None
        for slot in self._slots:
            if slot.game_id in self._done:
                self._order[slot.game_id] = slot.index
        self.exhausted = True

    def in_order(self, records: Mapping[str, R]) -> list[R]:
        """``records`` (by game id) of the schedule's games in its order, once it is walked
        to its end; before, all of them as they are (a run stopped early)."""
        if not self.exhausted:
            return list(records.values())
        return sorted((r for i, r in records.items() if i in self._order),
                      key=lambda r: self._order[getattr(r, "game_id")])


def config_slots(config: Any, *, by_pairing: bool = False) -> Iterator[Slot]:
    """``config.schedule()`` of an :class:`arena.config.TournamentConfig` (a layer above
    this one) made one slot at a time (:func:`iter_schedule`; ``by_pairing``: each
    pairing's games together)."""
    book = config.book
    return iter_schedule(config.players, config.variants, config.format,
                         games_per_pairing=config.games_per_pairing,
                         opening_turns=config.opening_turns, seed=config.seed,
                         books=book.books if book is not None else None,
                         book_order=book.order if book is not None else "sequential",
                         scheme=config.scheme, by_pairing=by_pairing)


def in_schedule_order(config: Any, records: Mapping[str, GameRecord]) -> list[GameRecord]:
    """The ``records`` (by game id) of games in ``config``'s schedule, in its order (one
    walk of the schedule, holding only the records' places)."""
    places = {s.game_id: s.index for s in config_slots(config) if s.game_id in records}
    return sorted((records[i] for i in places), key=lambda r: places[r.game_id])
