"""A Swiss ranked by Elo (arena.swiss.fit_elo / rank_by_elo, issue 38): the Bradley–Terry
fit of the games with BayesElo's prior (virtual draws against the centre), so every player
is rated, a result counts by the strength of the opponent it was scored against, and with a
vanishing prior the fit is arena.ratings' maximum-likelihood one."""

from __future__ import annotations

import random

import numpy as np
import pytest

from arena.ratings import GameArrays, fit_bradley_terry
from arena.swiss import fit_elo, rank_by_elo


def _random_games(names: list[str], games: int, seed: int) -> list[tuple[str, str, float]]:
    rng = random.Random(seed)
    strength = {n: rng.gauss(0, 1) for n in names}
    out = []
    for _ in range(games):
        a, b = rng.sample(names, 2)
        p = 1 / (1 + np.exp(strength[b] - strength[a]))
        u = rng.random()
        out.append((a, b, 0.5 if u < 0.2 else (1.0 if rng.random() < p else 0.0)))
    return out


def test_a_vanishing_prior_gives_the_maximum_likelihood_fit_of_arena_ratings() -> None:
    names = [f"b{k}" for k in range(8)]
    games = _random_games(names, 300, 1)
    index = {n: k for k, n in enumerate(names)}
    arrays = GameArrays(tuple(names), np.array([index[a] for a, _, _ in games]),
                        np.array([index[b] for _, b, _ in games]),
                        np.array([s for _, _, s in games]), np.arange(len(games)))
    mle = fit_bradley_terry(arrays)
    ours = fit_elo(names, games, prior_draws=1e-9)
    assert [ours[n] for n in names] == pytest.approx(list(mle.elo), abs=1e-3)
    # the default prior (one virtual draw each) only shrinks a little, and keeps the mean 0
    shrunk = fit_elo(names, games)
    assert sum(shrunk.values()) == pytest.approx(0.0, abs=1e-6)
    assert np.std(list(shrunk.values())) < np.std(list(ours.values()))
    assert max(abs(shrunk[n] - ours[n]) for n in names) < 30


def test_a_perfect_score_is_rated_and_first_and_a_player_without_games_sits_in_the_middle() -> None:
    games = [("a", "b", 1.0), ("b", "a", 0.0), ("a", "c", 1.0), ("b", "c", 0.5),
             ("c", "b", 1.0), ("d", "c", 0.0)]
    elo = fit_elo(["a", "b", "c", "d", "idle"], games)
    assert all(np.isfinite(v) for v in elo.values())
    ranked = [n for n, _ in rank_by_elo(["a", "b", "c", "d", "idle"], games)]
    assert ranked[0] == "a" and ranked[-1] == "d"
    assert elo["d"] < elo["idle"] < elo["a"]


def test_a_result_counts_by_the_strength_of_the_opponent() -> None:
    # a and b both score 1 of 2; a against the strong s, b against the weak w
    games = [("a", "s", 1.0), ("s", "a", 1.0), ("b", "w", 1.0), ("w", "b", 1.0),
             ("s", "w", 1.0), ("w", "s", 0.0), ("s", "w", 0.5), ("a", "b", 0.5),
             ("b", "a", 0.5)]
    ranked = [n for n, _ in rank_by_elo(["w", "b", "a", "s"], games)]
    assert ranked.index("a") < ranked.index("b")
    assert ranked[0] == "s" and ranked[-1] == "w"


def test_equal_ratings_keep_the_seed_order_and_bad_input_is_refused() -> None:
    games = [("p", "q", 1.0), ("q", "p", 1.0), ("r", "s", 0.5), ("s", "r", 0.5)]
    assert [n for n, _ in rank_by_elo(["s", "q", "r", "p"], games)] == ["s", "q", "r", "p"]
    assert fit_elo([], []) == {}
    assert fit_elo(["x", "y"], []) == {"x": 0.0, "y": 0.0}
    with pytest.raises(ValueError, match="not a player"):
        fit_elo(["p"], [("p", "z", 1.0)])
    with pytest.raises(ValueError, match="itself"):
        fit_elo(["p"], [("p", "p", 1.0)])
    with pytest.raises(ValueError, match="score"):
        fit_elo(["p", "q"], [("p", "q", 2.0)])
    with pytest.raises(ValueError, match="prior_draws"):
        fit_elo(["p", "q"], [], prior_draws=0)
    with pytest.raises(ValueError, match="twice"):
        fit_elo(["p", "p"], [])


def test_the_fit_is_deterministic_and_converges_from_lopsided_results() -> None:
    names = [f"b{k}" for k in range(12)]
    games = [(names[i], names[j], 1.0) for i in range(12) for j in range(i + 1, 12)] * 3
    first = rank_by_elo(names, games)
    assert first == rank_by_elo(names, games)
    assert [n for n, _ in first] == names  # a strict order with no upset is kept
    spread = first[0][1] - first[-1][1]
    assert 0 < spread < 5000
