"""Schedules: counts, colour balance, pairs, openings and determinism (pure, no processes)."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

from arena.rules import Position
from arena.openings import parse_book
from arena.schedule import (Format, build_schedule, count_games, count_pairings, derive_seed,
                            meeting_number, pair_number, pairings, random_opening)
from arena.variants import get_variant

PLAYERS = ["ann", "bob", "cid", "dee"]
VARIANTS = [get_variant("nine-mens-morris"), get_variant("six-mens-morris"),
            get_variant("lasker-morris")]


@pytest.mark.parametrize("n,rounds,gpp,variants", [(2, 1, 2, 1), (3, 2, 4, 2), (4, 3, 2, 3),
                                                   (5, 1, 6, 1)])
def test_round_robin_counts(n: int, rounds: int, gpp: int, variants: int) -> None:
    players = [f"p{i}" for i in range(n)]
    slots = build_schedule(players, VARIANTS[:variants], Format(rounds=rounds),
                           games_per_pairing=gpp)
    assert len(slots) == rounds * n * (n - 1) // 2 * gpp * variants
    meetings = Counter((s.variant.name, s.round, frozenset((s.white, s.black))) for s in slots)
    assert set(meetings.values()) == {gpp}
    assert len(meetings) == rounds * variants * n * (n - 1) // 2
    assert [s.index for s in slots] == list(range(len(slots)))


def test_gauntlet_counts_and_seeds_never_meet() -> None:
    fmt = Format(kind="gauntlet", rounds=2, seeds=("bob", "dee"))
    slots = build_schedule(PLAYERS, VARIANTS[:2], fmt, games_per_pairing=2)
    assert len(slots) == 2 * 2 * 2 * 2 * 2  # rounds * seeds * field * games * variants
    seeds = {PLAYERS.index("bob"), PLAYERS.index("dee")}
    for s in slots:
        assert len({s.white, s.black} & seeds) == 1


def test_match_counts() -> None:
    slots = build_schedule(["x", "y"], VARIANTS[:1], Format(kind="match", rounds=3),
                           games_per_pairing=10)
    assert len(slots) == 30
    assert Counter(s.white for s in slots) == {0: 15, 1: 15}


def test_colour_balance_per_player_and_variant() -> None:
    slots = build_schedule(PLAYERS, VARIANTS, Format(rounds=2), games_per_pairing=2, seed=5)
    whites = Counter((s.variant.name, s.white) for s in slots)
    blacks = Counter((s.variant.name, s.black) for s in slots)
    assert whites == blacks
    assert all(v == 2 * 3 for v in whites.values())  # rounds * opponents


def test_pairs_swap_colours_and_share_the_opening() -> None:
    slots = build_schedule(PLAYERS, VARIANTS, Format(), games_per_pairing=4, opening_turns=4,
                           seed=3)
    by_pair: dict[tuple[str, int, int], list] = {}
    for s in slots:
        by_pair.setdefault((s.variant.name, s.round, s.pair), []).append(s)
    assert len(by_pair) == len(slots) // 2
    for (variant, rnd, pair), games in by_pair.items():
        g0, g1 = sorted(games, key=lambda s: s.game)
        assert (g0.game, g1.game) == (0, 1)
        assert (g0.white, g0.black) == (g1.black, g1.white)
        assert g0.opening == g1.opening and len(g0.opening) == 4
        assert g0.game_id == f"{variant}/r{rnd}/m{g0.meeting}/p{g0.pair_in_meeting}/g0"
        assert pair == pair_number(g0.meeting, g0.pair_in_meeting)
        assert g1.index == g0.index + 1
    assert len({s.game_id for s in slots}) == len(slots)
    # a pair number is the same two players in every variant of a round
    players_of = {(s.round, s.pair): frozenset((s.white, s.black)) for s in slots}
    for s in slots:
        assert players_of[(s.round, s.pair)] == {s.white, s.black}


def test_schedule_is_deterministic_and_depends_on_the_seed() -> None:
    def make(seed: int) -> list:
        return build_schedule(PLAYERS, VARIANTS, Format(rounds=2), games_per_pairing=2,
                              opening_turns=3, seed=seed)

    a, b, c = make(11), make(11), make(12)
    assert a == b
    assert [(s.game_id, s.opening, s.seed) for s in a] != [(s.game_id, s.opening, s.seed)
                                                            for s in c]
    assert len({s.seed for s in a}) == len(a)


def test_openings_are_legal_and_do_not_end_the_game() -> None:
    for variant in (get_variant("three-mens-morris"), *VARIANTS):
        for seed in range(20):
            opening = random_opening(variant, 6, seed)
            pos = Position(variant)
            for move in opening:
                pos.push(pos.parse_move(move))
                assert pos.outcome() is None
            assert len(opening) == 6
            assert opening == random_opening(variant, 6, seed)


def test_round_order_is_shuffled_but_every_pairing_plays() -> None:
    slots = build_schedule([f"p{i}" for i in range(6)], VARIANTS[:1], Format(rounds=3),
                           games_per_pairing=2, seed=1)
    orders = []
    for rnd in (1, 2, 3):
        firsts = [frozenset((s.white, s.black)) for s in slots if s.round == rnd and s.game == 0]
        assert set(firsts) == {frozenset(p) for p in combinations(range(6), 2)}
        orders.append(firsts)
    assert orders[0] != orders[1] or orders[1] != orders[2]


def test_bad_shapes_raise() -> None:
    with pytest.raises(ValueError, match="even"):
        build_schedule(PLAYERS, VARIANTS, Format(), games_per_pairing=3)
    with pytest.raises(ValueError, match="exactly two"):
        pairings(Format(kind="match"), PLAYERS)
    with pytest.raises(ValueError, match="at least two"):
        pairings(Format(), ["solo"])
    with pytest.raises(ValueError, match="seed"):
        pairings(Format(kind="gauntlet", seeds=tuple(PLAYERS)), PLAYERS)


def test_derive_seed_is_stable_and_in_range() -> None:
    assert derive_seed(1, "game", "x") == derive_seed(1, "game", "x")
    assert derive_seed(1, "game", "x") != derive_seed(2, "game", "x")
    assert all(0 <= derive_seed(s, "k") < 2**31 for s in range(100))


@pytest.mark.parametrize("fmt,players", [
    (Format(rounds=3), PLAYERS), (Format(kind="match", rounds=2), PLAYERS[:2]),
    (Format(kind="gauntlet", rounds=2, seeds=("bob",)), PLAYERS),
    (Format(kind="gauntlet", seeds=("ann", "dee")), PLAYERS + ["eve"]),
])
def test_count_games_is_the_length_of_the_schedule(fmt: Format, players: list[str]) -> None:
    slots = build_schedule(players, VARIANTS[:2], fmt, games_per_pairing=4)
    assert count_games(fmt, players, 2, games_per_pairing=4) == len(slots)
    assert count_pairings(fmt, players) == len(pairings(fmt, players))


def test_a_schedule_over_the_cap_is_refused_before_it_is_built() -> None:
    """10**12 games are counted, not listed: the refusal is immediate and names the size."""
    many = [f"p{i}" for i in range(10_000)]
    assert count_pairings(Format(), many) == 49_995_000  # without listing 50 million pairs
    with pytest.raises(ValueError, match=r"has 1,000,000,000,000 games, over the cap of "
                                         r"10,000,000"):
        build_schedule(PLAYERS[:2], VARIANTS[:1], Format(kind="match", rounds=10**6),
                       games_per_pairing=10**6)
    with pytest.raises(ValueError, match="over the cap"):
        build_schedule(many, VARIANTS, Format(), games_per_pairing=2)


def _games(slots: list) -> dict[str, tuple]:
    """Everything a game is, by id, with players by name."""
    return {s.game_id: (s.variant.name, s.round, s.pair, s.players, s.opening, s.seed)
            for s in slots}


def _named(players: list[str], slots: list) -> list:
    class Named:
        def __init__(self, s) -> None:
            self.__dict__.update(s.__dict__)
            self.players = (players[s.white], players[s.black])
    return [Named(s) for s in slots]


@pytest.mark.parametrize("opening", ["random", "book"])
def test_growing_keeps_every_game(opening: str) -> None:
    """More games per pairing, more rounds, an appended player and another variant: every
    game of the smaller schedule is in the larger one with the same id, players, colours,
    opening and seed."""
    book_text = "a7\nd7\ng7 d6\nb6\n"

    def make(players: list[str], variants: list, rounds: int, gpp: int, kind: str = "round-robin",
             seeds: tuple = ()) -> dict[str, tuple]:
        extra: dict = ({"opening_turns": 3} if opening == "random" else
                       {"books": {v.name: parse_book(book_text, v) for v in variants},
                        "book_order": "random"})
        slots = build_schedule(players, variants, Format(kind, rounds, seeds),  # type: ignore[arg-type]
                               games_per_pairing=gpp, seed=9, **extra)
        return _games(_named(players, slots))

    small = make(PLAYERS[:3], VARIANTS[:1], 1, 2)
    for bigger in (make(PLAYERS[:3], VARIANTS[:1], 1, 6), make(PLAYERS[:3], VARIANTS[:1], 3, 2),
                   make(PLAYERS, VARIANTS[:1], 1, 2), make(PLAYERS[:3], VARIANTS[:2], 1, 2),
                   make(PLAYERS, VARIANTS, 2, 4)):
        assert len(bigger) > len(small)
        assert {k: bigger[k] for k in small} == small
    gauntlet = make(PLAYERS[:3], VARIANTS[:1], 1, 2, "gauntlet", ("ann",))
    grown = make(PLAYERS, VARIANTS[:1], 2, 4, "gauntlet", ("ann",))
    assert {k: grown[k] for k in gauntlet} == gauntlet and len(grown) == 3 * 2 * 2 * 2


def test_the_old_scheme_still_builds_the_old_ids() -> None:
    """A results folder made before tournaments could grow resumes with its own ids."""
    slots = build_schedule(PLAYERS[:3], VARIANTS[:1], Format(), games_per_pairing=4, seed=1,
                           scheme=1)
    assert sorted(s.game_id for s in slots)[:2] == ["nine-mens-morris/r1/p1/g0",
                                                     "nine-mens-morris/r1/p1/g1"]
    assert {s.pair for s in slots} == set(range(1, 7))
    with pytest.raises(ValueError, match="scheme"):
        build_schedule(PLAYERS, VARIANTS, Format(), scheme=7)


def test_meeting_and_pair_numbers_are_stable_and_unique() -> None:
    assert [meeting_number(a, b) for b in range(1, 4) for a in range(b)] == [1, 2, 3, 4, 5, 6]
    assert meeting_number(2, 0) == meeting_number(0, 2)
    numbers = {pair_number(m, k) for m in range(1, 60) for k in range(1, 60)}
    assert len(numbers) == 59 * 59 and min(numbers) == 1
    with pytest.raises(ValueError):
        meeting_number(1, 1)


def test_book_openings_are_shared_by_a_pair_and_consecutive_within_a_meeting() -> None:
    variant = VARIANTS[0]
    lines = [f"{p}" for p in ("a7", "d7", "g7", "b6", "d6")]
    book = parse_book("\n".join(lines), variant)
    slots = build_schedule(PLAYERS[:2], [variant], Format(kind="match"), games_per_pairing=8,
                           books={variant.name: book}, book_order="sequential")
    firsts = [s.opening for s in slots if s.game == 0]
    assert firsts == [(line,) for line in lines[:4]]
    assert all(s.opening == t.opening for s, t in zip(slots[::2], slots[1::2]))
