"""Tournament schedules: pairings, colours and openings, pure and seeded.

A schedule is a list of :class:`Slot`\\s, one per game, in the order the games are started.
It depends only on the players' order, the variants, the format, the number of games per
pairing, the opening length and the seed, never on the number of workers or the clock: the
same configuration always plays the same games, with the same colours and openings, in the
same order.  Each slot has a stable ``game_id`` (``<variant>/r<round>/p<pair>/g<0|1>``), which
is how a resumed tournament knows which games are already finished.

Games come in colour-swapped pairs: games ``g0`` and ``g1`` of a pair have the same players,
variant and opening, with the colours exchanged.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import Literal, Sequence

from arena.protocol import SEED_MAX
from arena.ranges import GAMES_MAX
from arena.rules import Position
from arena.variants import Variant

FormatKind = Literal["round-robin", "gauntlet", "match"]
FORMAT_KINDS: tuple[FormatKind, ...] = ("round-robin", "gauntlet", "match")



@dataclass(frozen=True)
class Format:
    """How players meet.

    ``round-robin``: every player meets every other one, ``rounds`` times.
    ``gauntlet``: each of the ``seeds`` (player display names) meets every other player
    (seeds do not meet each other), ``rounds`` times.
    ``match``: exactly two players, ``rounds`` times.
    """

    kind: FormatKind = "round-robin"
    rounds: int = 1
    seeds: tuple[str, ...] = ()


@dataclass(frozen=True)
class Slot:
    """One scheduled game.

    ``white`` and ``black`` index the players; ``round`` and ``pair`` count from 1 (a pair
    number is shared by every variant: ``p3`` is the same two players in each variant of a
    round), ``game`` is 0 or 1 within the pair.  ``seed`` is the game's own seed (sent to bots
    that declare a ``Seed`` option).
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
    return count_pairings(fmt, players) * fmt.rounds * games_per_pairing * variants


def pairings(fmt: Format, players: Sequence[str]) -> list[tuple[int, int]]:
    """The unordered pairs of player indices that meet once per round, in a fixed order.

    :raises ValueError: when the format does not fit the players (the configuration layer
        checks this first and names the key).
    """
    count_pairings(fmt, players)
    n = len(players)
    if fmt.kind == "round-robin":
        return [(a, b) for a in range(n) for b in range(a + 1, n)]
    if fmt.kind == "match":
        return [(0, 1)]
    seeds = [players.index(s) for s in fmt.seeds]
    return [(s, f) for s in seeds for f in range(n) if f not in seeds]


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
                   games_per_pairing: int = 2, opening_turns: int = 0,
                   seed: int = 0) -> list[Slot]:
    """Every game of a tournament, in playing order.

    Order: round by round; within a round the pairings in a seeded shuffled order; for each
    pairing its colour-swapped pairs; for each pair every variant; ``g0`` then ``g1``.

    :raises ValueError: for an odd or non-positive ``games_per_pairing``, a format that does
        not fit the players, or more than :data:`arena.ranges.GAMES_MAX` games (counted
        before anything is built).
    """
    if games_per_pairing < 2 or games_per_pairing % 2:
        raise ValueError(f"games_per_pairing must be an even number >= 2, got {games_per_pairing}")
    total = count_games(fmt, players, len(variants), games_per_pairing=games_per_pairing)
    if total > GAMES_MAX:
        raise ValueError(f"the tournament has {total:,} games, over the cap of {GAMES_MAX:,}")
    meetings = pairings(fmt, players)
    pairs_per_pairing = games_per_pairing // 2
    slots: list[Slot] = []
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
                        slots.append(Slot(index=len(slots), game_id=game_id, variant=variant,
                                          round=rnd, pair=pair, game=game, white=white,
                                          black=black, opening=opening,
                                          seed=derive_seed(seed, "game", game_id)))
    return slots
