"""Elo ratings fitted to all games jointly, with their covariance; which bots can be rated.

:func:`fit_bradley_terry` is the joint Bradley-Terry maximum-likelihood fit (a draw counts as
half a point) on the Elo scale, centred or anchored, with the covariance of
:mod:`arena.ratings.intervals`; :class:`Fit` gives each bot's 95 % half-width and the LOS of
one bot over another from the joint covariance.  :func:`find_rateable` splits the bots into
the group that has finite ratings and the flagged rest (100 % or 0 % scores, a group that
never lost a point to the others, bots never connected by games to the main group).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
from scipy import sparse, stats
from scipy.sparse import csgraph

from arena.errors import ArenaError
from arena.ratings.elo import ELO_PER_NAT, Z95
from arena.ratings.intervals import (IntervalMethod, bootstrap_covariance, floor_covariance,
                                     model_covariance, sandwich_covariance)
from arena.ratings.mle import (FitError, GameArrays, dense_ids, fit_theta, is_strongly_connected,
                               log_likelihood, pair_matrices)


# ---------------------------------------------------------------------------------------
# The fit
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fit:
    """A Bradley-Terry fit: Elo per player (centred or anchored) and its covariance (Elo²)."""

    players: tuple[str, ...]
    elo: np.ndarray
    cov: np.ndarray
    iterations: int
    log_likelihood: float
    method: str
    clusters: int

    def index(self, player: str) -> int:
        """Position of ``player`` in ``players``; raises ``KeyError``."""
        return self.players.index(player)

    def elo95(self) -> np.ndarray:
        """Half-widths of the 95 % intervals (0 for an anchor)."""
        half: np.ndarray = Z95 * np.sqrt(np.clip(np.diag(self.cov), 0.0, None))
        return half

    def diff_sd(self, i: int, j: int) -> float:
        """Standard deviation of ``elo[i] - elo[j]`` from the joint covariance."""
        v = self.cov[i, i] + self.cov[j, j] - 2 * self.cov[i, j]
        return math.sqrt(max(v, 0.0))

    def los(self, i: int, j: int) -> float:
        """Likelihood of superiority of player i over player j: ``Phi(diff / sd(diff))``."""
        sd = self.diff_sd(i, j)
        d = float(self.elo[i] - self.elo[j])
        if sd == 0.0:
            return 0.5 if d == 0 else float(d > 0)
        return float(stats.norm.cdf(d / sd))


def fit_bradley_terry(games: GameArrays, *, anchor: Optional[str] = None, anchor_elo: float = 0.0,
                      method: IntervalMethod = "sandwich", bootstrap_samples: int = 200,
                      seed: int = 0) -> Fit:
    """Fit Elo ratings to all ``games`` jointly (they must form one strongly connected group).

    Centred on mean 0, or with ``anchor`` (a player name) at ``anchor_elo``.  ``method``
    chooses the covariance: the pair-clustered ``sandwich`` (default) or a seeded
    ``bootstrap`` over pairs.

    :raises FitError: no finite maximum-likelihood ratings (see :func:`rate` for the version
        that flags such players instead).
    """
    n = len(games.players)
    n_mat, s_mat = pair_matrices(n, games.white, games.black, games.score)
    if n >= 2 and not is_strongly_connected(n_mat, s_mat):
        raise FitError("these games have no finite ratings (some bots were never beaten, never "
                       "scored, or never connected by games)")
    theta, hess, iters = fit_theta(n_mat, s_mat)
    ll = log_likelihood(theta, n_mat, s_mat)
    clusters = int(dense_ids(games.cluster)[1])
    if method == "sandwich":
        cov = sandwich_covariance(theta, hess, games.white, games.black, games.score, games.cluster)
    elif method == "bootstrap":
        cov, _ = bootstrap_covariance(n, games.white, games.black, games.score, games.cluster,
                                      theta, samples=bootstrap_samples, seed=seed)
        cov = floor_covariance(cov, model_covariance(hess), clusters)
    else:
        raise ArenaError(f"unknown interval method {method!r} (sandwich, bootstrap)")
    # re-centre: elo' = T elo and cov' = T cov T^T, written out in O(n^2)
    if anchor is None:
        elo = (theta - theta.mean()) * ELO_PER_NAT
        rows = cov.mean(axis=1)
        cov = cov - rows[:, None] - rows[None, :] + rows.mean()
    else:
        try:
            a = games.players.index(anchor)
        except ValueError:
            raise ArenaError(f"anchor bot {anchor!r} is not among the rated bots") from None
        elo = (theta - theta[a]) * ELO_PER_NAT + anchor_elo
        cov = cov - cov[:, a][:, None] - cov[a, :][None, :] + cov[a, a]
    cov_elo = cov * ELO_PER_NAT ** 2
    return Fit(players=games.players, elo=elo, cov=cov_elo, iterations=iters, log_likelihood=ll,
               method=method, clusters=clusters)


# ---------------------------------------------------------------------------------------
# Which bots can be rated: connectivity and perfect scores
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rateable:
    """Which players can be rated together, and why the others cannot (``flags``)."""

    core: tuple[int, ...]
    flags: dict[int, str]
    above: frozenset[int] = frozenset()


def find_rateable(n_mat: np.ndarray, s_mat: np.ndarray) -> Rateable:
    """Split the players into the rated core and flagged players.

    The core is the largest group (most players, then most games) that is connected by games
    and in which every player can be reached from every other by a chain of "scored at least
    a draw against" — exactly the condition for finite maximum-likelihood ratings.  Everyone
    else is flagged: a 100 % or 0 % score, a group always ahead of (or behind) the core, or
    not connected by games to it at all.
    """
    n = n_mat.shape[0]
    played = n_mat.sum(axis=1)
    scored = s_mat.sum(axis=1)
    flags: dict[int, str] = {}
    if n == 0:
        return Rateable((), flags)
    n_weak, weak = csgraph.connected_components(sparse.csr_matrix(n_mat > 0), directed=False)
    weak_sizes = np.bincount(weak, minlength=n_weak)
    weak_games = np.bincount(weak, weights=played, minlength=n_weak)
    main = max(range(n_weak), key=lambda c: (weak_sizes[c], weak_games[c], -c))
    members = np.flatnonzero(weak == main)
    sub = np.ix_(members, members)
    n_strong, strong = csgraph.connected_components(sparse.csr_matrix(s_mat[sub] > 0),
                                                    directed=True, connection="strong")
    sizes = np.bincount(strong, minlength=n_strong)
    games_in = np.bincount(strong, weights=played[members], minlength=n_strong)
    best = max(range(n_strong), key=lambda c: (sizes[c], games_in[c], -c))
    core = members[strong == best] if sizes[best] >= 2 else np.zeros(0, dtype=int)
    above: set[int] = set()
    in_core = set(core.tolist())
    if core.size:
        beats = sparse.csr_matrix(s_mat > 0)
        reach_from_core = _reachable(beats, core)       # the core scored against these (chains)
        reach_to_core = _reachable(beats.T.tocsr(), core)  # these scored against the core
    for i in range(n):
        if i in in_core:
            continue
        if weak[i] != main:
            flags[i] = (f"not connected by games to the main group (a separate group of "
                        f"{weak_sizes[weak[i]]} bot{'s' if weak_sizes[weak[i]] != 1 else ''}); "
                        "Elo not comparable")
        elif played[i] > 0 and scored[i] >= played[i]:
            flags[i] = "won every game (100%): no finite Elo"
            above.add(i)
        elif played[i] > 0 and scored[i] <= 0:
            flags[i] = "lost every game (0%): no finite Elo"
        elif not core.size:
            flags[i] = "no finite Elo: the results order the bots without any upset"
        elif reach_to_core[i] and not reach_from_core[i]:
            flags[i] = "never lost a point to the rated bots' group: no finite Elo"
            above.add(i)
        elif reach_from_core[i] and not reach_to_core[i]:
            flags[i] = "never took a point from the rated bots' group: no finite Elo"
        else:
            flags[i] = "no chain of results places it against the rated bots: no finite Elo"
    return Rateable(tuple(int(i) for i in core), flags, frozenset(above))


def _reachable(graph: sparse.csr_matrix, sources: np.ndarray) -> np.ndarray:
    """Boolean mask of nodes reachable from any of ``sources`` along ``graph``'s edges."""
    n = graph.shape[0]
    seen = np.zeros(n, dtype=bool)
    seen[sources] = True
    frontier = seen.copy()
    while frontier.any():
        nxt = np.asarray(graph[frontier].sum(axis=0)).ravel() > 0
        frontier = nxt & ~seen
        seen |= nxt
    return seen
