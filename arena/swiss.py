"""Swiss pairings, pure: scores and the pairs met so far in, one round's pairs out.

A Swiss ranks a large field in a few rounds: each round pairs players with equal or nearest
scores, never the same two twice.  Here a round is a **maximum-weight matching** (networkx's
``max_weight_matching``, with ``maxcardinality``: everyone who can be paired is) on the
graph of the pairs that have not met, each weighted so that, in this order:

1. as many players as possible are paired (the matching is of maximum cardinality);
2. the score differences are as small as possible (a pair's weight falls with the square of
   the difference of the two scores, in half points: one pair two points apart costs more
   than two pairs one point apart, as FIDE's Dutch system also prefers);
3. among equal scores, players are paired by rating order as the Dutch system does inside a
   score group: the top half against the bottom half (``seed`` order: 1 against k+1, 2
   against k+2, ...), a small preference that never outweighs a score difference.

In Morris Arena a pairing is a colour-swapped pair of games per variant, so colours are
balanced inside every pairing and the Dutch system's colour rules are not needed: that is
where this differs from FIDE C.04.3, besides its rules for floaters, which the matching's
squared differences stand in for.  For an odd field the **bye** goes to the lowest-scored
player who has not had one (the lowest in seed order among them), before the matching; it is
scored as the caller states (``arena.schedule``: a win's points by default, as in most
Swiss events).

:func:`pair_round` is deterministic: the same scores, history and seeds give the same pairs,
so a run resumed after a kill pairs its rounds as an uninterrupted one did.

**Ranking by Elo** (:func:`fit_elo`, :func:`rank_by_elo`): besides the classical standings
(points, then tie-breaks such as Buchholz), a Swiss's final order can be the Bradley–Terry
(Elo) fit of its games, as engine rating lists rank their fields.  A Swiss's games are
unusually informative for such a fit, since most pair players of nearly equal strength, and
the fit weighs every result by the strength of the opponent it was scored against, where
points and Buchholz only add them up.  On a simulated class of 40 bots
(``benchmarks/bench_formats.py``) 9 rounds of one pair ranked by Elo correlate with the true
order at 0.912 (Spearman), points then Buchholz at 0.889, a round robin of one pair (4.3
times the games) at 0.971.  The fit is a maximum a-posteriori one with BayesElo's prior:
``prior_draws`` virtual draws of every player against a virtual player at the centre, so
every player has a finite Elo (a Swiss often has a player with a 100 % score) and
few-game extremes are shrunk a little.  It is written out here, numpy only, because this
module sits below :mod:`arena.ratings` in the layers of docs/ARCHITECTURE.md; with
``prior_draws`` near 0 it is that package's maximum-likelihood fit (a test checks it).
A bye is not a game and does not enter the fit.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Iterable, Mapping, Optional, Sequence

__all__ = ["SwissRound", "fit_elo", "pair_round", "rank_by_elo", "rounds_for"]

#: Elo points per natural log-odds unit (400 / ln 10), as arena.ratings
_ELO_PER_NAT = 400.0 / math.log(10.0)


@dataclass(frozen=True)
class SwissRound:
    """One round's pairings: ``pairs`` (the better-seeded player first, pairs in seed order
    of their first player) and the player with the ``bye`` (None for an even field)."""

    pairs: tuple[tuple[str, str], ...]
    bye: Optional[str] = None


def rounds_for(players: int) -> int:
    """The usual number of Swiss rounds for a field: ⌈log₂ N⌉ + 2 (at least 1)."""
    if players < 2:
        return 1
    return (players - 1).bit_length() + 2


def pair_round(seeds: Sequence[str], scores: Mapping[str, float],
               met: Sequence[tuple[str, str]] = (), byes: Sequence[str] = ()) -> SwissRound:
    """The next round's pairs of the players ``seeds`` (best first: a rating list, or the
    order given), with their ``scores`` so far (missing: 0), the pairs that have ``met``
    (either order) and the players who had a ``bye``.

    :raises ValueError: a player twice in ``seeds``, or no pairing is left that does not
        repeat a pair (every pair has met: the field has played a full round robin).
    """
    import networkx as nx

    if len(set(seeds)) != len(seeds):
        raise ValueError("a player is named twice")
    order = {name: k for k, name in enumerate(seeds)}
    score = {name: float(scores.get(name, 0.0)) for name in seeds}
    players = list(seeds)
    bye = None
    if len(players) % 2:
        had = set(byes)
        candidates = [p for p in players if p not in had] or players
        bye = min(candidates, key=lambda p: (score[p], -order[p]))
        players.remove(bye)
    if not players:
        return SwissRound((), bye)
    seen = {frozenset(pair) for pair in met}
    # the top half of each score group against its bottom half: a player's place in its
    # group, and the group's size
    groups: dict[float, list[str]] = {}
    for p in players:
        groups.setdefault(score[p], []).append(p)
    place = {p: (k, len(g)) for g in groups.values() for k, p in enumerate(g)}
    n = len(players)
    spread = 4.0 * (max(score.values()) - min(score.values()) + 1) ** 2 * n
    graph = nx.Graph()
    graph.add_nodes_from(players)
    for i, a in enumerate(players):
        for b in players[i + 1:]:
            if frozenset((a, b)) in seen:
                continue
            diff = abs(score[a] - score[b]) * 2  # in half points
            (ka, size), (kb, _) = place[a], place[b]
            half = size // 2 or 1
            dutch = 0.0 if score[a] != score[b] else abs(abs(ka - kb) - half) / (n * n)
            graph.add_edge(a, b, weight=spread * n - diff * diff * n - dutch)
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    if 2 * len(matching) < len(players):
        raise ValueError(f"no pairing of {len(players)} players without a repeated pair: "
                         f"{len(players) - 2 * len(matching)} left unpaired")
    pairs = sorted((tuple(sorted(pair, key=order.__getitem__)) for pair in matching),
                   key=lambda pair: order[pair[0]])
    return SwissRound(tuple((a, b) for a, b in pairs), bye)


def fit_elo(players: Sequence[str], games: Iterable[tuple[str, str, float]], *,
            prior_draws: float = 1.0) -> dict[str, float]:
    """The Elo of each of ``players`` (mean 0) from ``games``, each ``(a, b, score of a)``
    with the score 1, ½ or 0 (colour plays no part; a colour-swapped pair is two games).

    The Bradley–Terry fit on the logistic Elo scale, maximised with BayesElo's prior:
    ``prior_draws`` (> 0) virtual draws of every player against a virtual player at 0, so
    every rating is finite; a player without games is rated where the virtual player is.
    Newton's method (damped).

    :raises ValueError: a game names a player not in ``players`` or against itself, a
        score outside [0, 1], ``prior_draws`` not positive, or a player named twice.
    """
    import numpy as np

    if len(set(players)) != len(players):
        raise ValueError("a player is named twice")
    if not prior_draws > 0:
        raise ValueError(f"prior_draws must be positive, not {prior_draws}")
    index = {name: k for k, name in enumerate(players)}
    n = len(players)
    if n == 0:
        return {}
    count = np.zeros((n, n))
    points = np.zeros((n, n))
    for a, b, score in games:
        if a not in index or b not in index:
            raise ValueError(f"a game of {a!r} against {b!r}: not a player of this field")
        if a == b:
            raise ValueError(f"a game of {a!r} against itself")
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"a score of {score} (1, 0.5 or 0 per game)")
        i, j = index[a], index[b]
        count[i, j] += 1
        count[j, i] += 1
        points[i, j] += score
        points[j, i] += 1.0 - score
    theta = np.zeros(n)
    for _ in range(200):
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # P(i beats j)
        prior = 1.0 / (1.0 + np.exp(-theta))                       # P(i beats the virtual 0)
        grad = (points - count * p).sum(axis=1) + prior_draws * (0.5 - prior)
        weight = count * p * (1.0 - p)
        hess = -weight
        hess[np.diag_indices(n)] = weight.sum(axis=1) + prior_draws * prior * (1.0 - prior)
        step = np.linalg.solve(hess, grad)
        biggest = float(np.abs(step).max())
        if biggest > 2.0:  # at most 2 nats (347 Elo) a step: Newton from far is damped
            step *= 2.0 / biggest
        theta += step
        if biggest < 1e-10:
            break
    elo = (theta - theta.mean()) * _ELO_PER_NAT
    return {name: float(elo[k]) for k, name in enumerate(players)}


def rank_by_elo(players: Sequence[str], games: Iterable[tuple[str, str, float]], *,
                prior_draws: float = 1.0) -> list[tuple[str, float]]:
    """``players`` ranked by :func:`fit_elo` of ``games``, best first, as ``(player, Elo)``;
    equal Elo (to a millionth of a point) keeps the order of ``players`` (the seeds)."""
    elo = fit_elo(players, games, prior_draws=prior_draws)
    order = {name: k for k, name in enumerate(players)}
    ranked = sorted(players, key=lambda name: (-round(elo[name], 6), order[name]))
    return [(name, elo[name]) for name in ranked]
