"""Swiss pairings (arena.swiss, issue 38's first part): pure, scores and history in, pairs
out.  Round 1 pairs the top half of the seeds against the bottom half; later rounds pair
equal or nearest scores and never repeat a pair; an odd field's bye goes to the lowest score
without one; the same input gives the same pairs."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("networkx", reason="networkx is not installed (pip install -e .)")

from arena.swiss import pair_round, rounds_for  # noqa: E402


def _play(names: list[str], rounds: int, seed: int) -> list[tuple[tuple[tuple[str, str], ...],
                                                                 str | None]]:
    """``rounds`` rounds with random results (a win 1, a draw ½; a bye 1)."""
    rng = random.Random(seed)
    scores = {n: 0.0 for n in names}
    met: list[tuple[str, str]] = []
    byes: list[str] = []
    out = []
    for _ in range(rounds):
        r = pair_round(names, scores, met, byes)
        for a, b in r.pairs:
            x = rng.choice((0.0, 0.5, 1.0))
            scores[a] += 2 * x  # a colour-swapped pair: two games
            scores[b] += 2 * (1 - x)
        if r.bye:
            scores[r.bye] += 2.0
            byes.append(r.bye)
        met += list(r.pairs)
        out.append((r.pairs, r.bye))
    return out


def test_round_one_pairs_the_top_half_against_the_bottom_half() -> None:
    names = [f"p{k}" for k in range(1, 9)]
    assert pair_round(names, {}).pairs == (("p1", "p5"), ("p2", "p6"), ("p3", "p7"),
                                           ("p4", "p8"))


def test_no_pair_meets_twice_and_every_bye_is_new() -> None:
    for n, seed in ((9, 1), (40, 2), (13, 3)):
        names = [f"b{k:02d}" for k in range(n)]
        played = _play(names, rounds_for(n), seed)
        pairs = [frozenset(p) for ps, _ in played for p in ps]
        assert len(pairs) == len(set(pairs))
        byes = [b for _, b in played if b]
        assert len(byes) == len(set(byes)) == (rounds_for(n) if n % 2 else 0)
        for ps, bye in played:  # everyone plays once a round
            seen = [p for pair in ps for p in pair] + ([bye] if bye else [])
            assert sorted(seen) == sorted(names)


def test_equal_scores_are_paired_together_when_they_can_be() -> None:
    names = [f"p{k}" for k in range(8)]
    scores = {"p0": 2, "p1": 2, "p2": 2, "p3": 2, "p4": 0, "p5": 0, "p6": 0, "p7": 0}
    pairs = pair_round(names, scores).pairs
    assert all(scores[a] == scores[b] for a, b in pairs)
    # the two leaders have met: each leader meets another leader all the same
    again = pair_round(names, scores, met=[("p0", "p1"), ("p2", "p3")]).pairs
    assert all(scores[a] == scores[b] for a, b in again)
    assert not {frozenset(p) for p in again} & {frozenset(("p0", "p1")), frozenset(("p2", "p3"))}


def test_the_same_input_gives_the_same_pairs_and_a_full_field_says_so() -> None:
    names = [f"b{k}" for k in range(9)]
    assert _play(names, 5, 7) == _play(names, 5, 7)
    four = ["a", "b", "c", "d"]
    met = [("a", "b"), ("c", "d"), ("a", "c"), ("b", "d"), ("a", "d"), ("b", "c")]
    with pytest.raises(ValueError, match="repeated pair"):
        pair_round(four, {}, met)
    with pytest.raises(ValueError, match="twice"):
        pair_round(["a", "a"], {})
    assert rounds_for(40) == 8 and rounds_for(2) == 3 and rounds_for(1) == 1
