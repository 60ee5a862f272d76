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
from typing import TYPE_CHECKING, Optional, Union

import numpy as np
from scipy import sparse, special
from scipy.sparse import csgraph

from arena.errors import ArenaError
from arena.ratings.elo import ELO_PER_NAT, PRIOR_DRAWS, Z95
from arena.ratings.intervals import (IntervalMethod, bootstrap_covariance, floor_covariance,
                                     model_covariance, sandwich_covariance,
                                     sandwich_from_meat)
from arena.ratings.mle import (FitError, GameArrays, dense_ids, fit_theta, fit_theta_free,
                               is_strongly_connected, log_likelihood, pair_matrices)

if TYPE_CHECKING:
    from arena.ratings.counts import GameCounts

#: a table's games: one array entry per game, or tallied counts (:mod:`arena.ratings.counts`)
Games = Union[GameArrays, "GameCounts"]


def _matrices(games: Games) -> tuple[np.ndarray, np.ndarray]:
    """The count matrices ``(N, S)`` of ``games`` (:func:`pair_matrices`)."""
    if isinstance(games, GameArrays):
        return pair_matrices(len(games.players), games.white, games.black, games.score)
    return games.matrices()


def _n_clusters(games: Games) -> int:
    """How many clusters (pairs, lone games) ``games`` form."""
    if isinstance(games, GameArrays):
        return int(dense_ids(games.cluster)[1])
    return games.n_clusters


# ---------------------------------------------------------------------------------------
# The fit
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fit:
    """A Bradley-Terry fit: Elo per player (centred or anchored) and its covariance (Elo²).

    ``prior`` names the players whose Elo rests on the prior (:func:`fit_with_prior`); the
    others have their maximum-likelihood Elo.
    """

    players: tuple[str, ...]
    elo: np.ndarray
    cov: np.ndarray
    iterations: int
    log_likelihood: float
    method: str
    clusters: int
    prior: tuple[str, ...] = ()

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
        return float(special.ndtr(d / sd))


def fit_bradley_terry(games: Games, *, anchor: Optional[str] = None, anchor_elo: float = 0.0,
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
    n_mat, s_mat = _matrices(games)
    if n >= 2 and not is_strongly_connected(n_mat, s_mat):
        raise FitError("these games have no finite ratings (some bots were never beaten, never "
                       "scored, or never connected by games)")
    theta, hess, iters = fit_theta(n_mat, s_mat)
    ll = log_likelihood(theta, n_mat, s_mat)
    clusters = _n_clusters(games)
    if method == "sandwich" and isinstance(games, GameArrays):
        cov = sandwich_covariance(theta, hess, games.white, games.black, games.score, games.cluster)
    elif method == "sandwich" and not isinstance(games, GameArrays):
        cov = sandwich_from_meat(theta, hess, *games.meat(theta))
    elif method == "bootstrap":
        arrays = games if isinstance(games, GameArrays) else games.arrays()
        cov, _ = bootstrap_covariance(n, arrays.white, arrays.black, arrays.score,
                                      arrays.cluster, theta, samples=bootstrap_samples,
                                      seed=seed)
        cov = floor_covariance(cov, model_covariance(hess), clusters)
    else:
        raise ArenaError(f"unknown interval method {method!r} (sandwich, bootstrap)")
    # re-centre: elo' = T elo and cov' = T cov T^T, written out in O(n^2)
    if anchor is None:
        elo = (theta - theta.mean()) * ELO_PER_NAT
        cov = _centred(cov)
    else:
        a = _anchor_index(games, anchor)
        elo = (theta - theta[a]) * ELO_PER_NAT + anchor_elo
        cov = _anchored(cov, a)
    cov_elo = cov * ELO_PER_NAT ** 2
    return Fit(players=games.players, elo=elo, cov=cov_elo, iterations=iters, log_likelihood=ll,
               method=method, clusters=clusters)


def _centred(cov: np.ndarray) -> np.ndarray:
    """``cov`` of ratings re-centred on their mean: ``T cov T^T``, written out in O(n^2)."""
    rows = cov.mean(axis=1)
    out: np.ndarray = cov - rows[:, None] - rows[None, :] + rows.mean()
    return out


def _anchored(cov: np.ndarray, a: int) -> np.ndarray:
    """``cov`` of ratings measured from player ``a`` (whose variance becomes 0)."""
    out: np.ndarray = cov - cov[:, a][:, None] - cov[a, :][None, :] + cov[a, a]
    return out


def _anchor_index(games: Games, anchor: str) -> int:
    """The index of the anchor bot; raises :class:`ArenaError` when it is not rated here."""
    try:
        return games.players.index(anchor)
    except ValueError:
        raise ArenaError(f"anchor bot {anchor!r} is not among the rated bots") from None


def fit_with_prior(games: Games, core: tuple[int, ...], core_fit: Optional[Fit], *,
                   anchor: Optional[str] = None, anchor_elo: float = 0.0,
                   prior_draws: float = PRIOR_DRAWS) -> Fit:
    """Elo for every player: the core's maximum-likelihood fit kept, the others on the prior.

    ``core`` (indices into ``games.players``) are the players with finite maximum-likelihood
    ratings and ``core_fit`` their centred :func:`fit_bradley_terry` (None when there is no
    core).  Every other player gets ``prior_draws`` virtual draws against a virtual opponent
    at the centre of the scale (the core's mean, or 0 with no core), and their ratings
    maximise the likelihood of all games plus the virtual draws with the core held fixed
    (BayesElo's prior, applied only where the data alone have no finite maximum).

    The covariance of the prior-based players is the inverse of their information (the
    virtual draws included) plus the core's uncertainty carried through (they move with
    the core); centred on the core's mean (all players' without a core), or anchored.
    """
    n = len(games.players)
    n_mat, s_mat = _matrices(games)
    core_idx = np.asarray(core, dtype=np.int64)
    free = np.setdiff1d(np.arange(n), core_idx)
    v = n  # the virtual opponent
    big_n = np.zeros((n + 1, n + 1))
    big_s = np.zeros((n + 1, n + 1))
    big_n[:n, :n], big_s[:n, :n] = n_mat, s_mat
    big_n[free, v] = big_n[v, free] = prior_draws
    big_s[free, v] = big_s[v, free] = prior_draws / 2
    theta = np.zeros(n + 1)
    if core_fit is not None:
        theta[core_idx] = core_fit.elo / ELO_PER_NAT
    theta, hess, iters = fit_theta_free(big_n, big_s, theta, free)
    h_ff_inv = np.linalg.inv(hess[np.ix_(free, free)])
    # The information matrix alone understates how far out a bot without upsets may be (the
    # likelihood is flat on its far side): widen each prior-based bot's variance to its
    # profile-likelihood interval, the longer side taken (a congruence: stays a covariance).
    halves = np.array([_profile_half(big_n, big_s, theta, free, k) for k in range(free.size)])
    scale = np.maximum(halves / Z95 / np.sqrt(np.diag(h_ff_inv)), 1.0)
    h_ff_inv = h_ff_inv * scale[:, None] * scale[None, :]
    cov = np.zeros((n, n))
    if core_fit is not None and core_idx.size:
        cov_c = core_fit.cov / ELO_PER_NAT ** 2
        h_fc = hess[np.ix_(free, core_idx)] + hess[free, v][:, None] / core_idx.size
        jac = -h_ff_inv @ h_fc                   # how the prior-based players follow the core
        cross = jac @ cov_c
        cov[np.ix_(core_idx, core_idx)] = cov_c
        cov[np.ix_(free, core_idx)] = cross
        cov[np.ix_(core_idx, free)] = cross.T
        cov[np.ix_(free, free)] = h_ff_inv + cross @ jac.T
        elo = theta[:n] * ELO_PER_NAT             # the core is centred already
        method, clusters = core_fit.method, core_fit.clusters
    else:
        cov[np.ix_(free, free)] = h_ff_inv
        elo = (theta[:n] - theta[:n].mean()) * ELO_PER_NAT
        cov = _centred(cov)
        method, clusters = "prior", _n_clusters(games)
    if anchor is not None:
        a = _anchor_index(games, anchor)
        elo = elo - elo[a] + anchor_elo
        cov = _anchored(cov, a)
    return Fit(players=games.players, elo=elo, cov=cov * ELO_PER_NAT ** 2, iterations=iters,
               log_likelihood=log_likelihood(theta[:n], n_mat, s_mat), method=method,
               clusters=clusters, prior=tuple(games.players[i] for i in free))


def fit_every_bot(games: Games, *, anchor: Optional[str] = None, anchor_elo: float = 0.0,
                  method: IntervalMethod = "sandwich", bootstrap_samples: int = 200,
                  seed: int = 0) -> tuple[Optional[Fit], Rateable]:
    """A finite Elo for every player of ``games``, and which rest on the prior (the flagged).

    When the games have finite maximum-likelihood ratings this is exactly
    :func:`fit_bradley_terry`; otherwise its fit of the rated core is kept and
    :func:`fit_with_prior` rates the rest.  None with fewer than two players.
    """
    n = len(games.players)
    n_mat, s_mat = _matrices(games)
    part = find_rateable(n_mat, s_mat)
    if n < 2:
        return None, part
    if not part.flags:
        return fit_bradley_terry(games, anchor=anchor, anchor_elo=anchor_elo, method=method,
                                 bootstrap_samples=bootstrap_samples, seed=seed), part
    core_fit: Optional[Fit] = None
    if len(part.core) >= 2:
        core = np.asarray(part.core)
        sub: Games
        if isinstance(games, GameArrays):
            remap = np.full(n, -1)
            remap[core] = np.arange(core.size)
            keep = (remap[games.white] >= 0) & (remap[games.black] >= 0)
            sub = GameArrays(tuple(games.players[i] for i in core), remap[games.white[keep]],
                             remap[games.black[keep]], games.score[keep], games.cluster[keep])
        else:
            sub = games.subset(core)
        core_fit = fit_bradley_terry(sub, method=method, bootstrap_samples=bootstrap_samples,
                                     seed=seed)
    core_ids = part.core if core_fit is not None else ()
    return fit_with_prior(games, core_ids, core_fit, anchor=anchor, anchor_elo=anchor_elo), part


#: the drop of the log-likelihood that bounds a 95 % likelihood interval (chi-squared(1)/2)
_LR95 = Z95 * Z95 / 2


def _profile_half(n_mat: np.ndarray, s_mat: np.ndarray, theta: np.ndarray, free: np.ndarray,
                  k: int) -> float:
    """The longer side (natural units) of the 95 % profile-likelihood interval of player
    ``free[k]``, the other free players refitted at every point, the rest held fixed."""
    i = int(free[k])
    others = np.delete(free, k)
    top = log_likelihood(theta, n_mat, s_mat)

    def drop(x: float) -> float:
        t = theta.copy()
        t[i] = x
        if others.size:
            try:
                t, _, _ = fit_theta_free(n_mat, s_mat, t, others)
            except (FitError, np.linalg.LinAlgError):
                return 1.0  # so far out that the others cannot follow: outside the interval
        return top - log_likelihood(t, n_mat, s_mat) - _LR95

    longest = 0.0
    for side in (1.0, -1.0):
        near, far = 0.0, 0.5
        while drop(theta[i] + side * far) < 0 and far < 16.0:  # 16 nats: 2779 Elo
            near, far = far, 2 * far
        for _ in range(40):                       # bisection to 1e-4 nats at most
            if far - near < 1e-4:
                break
            mid = (near + far) / 2
            near, far = (mid, far) if drop(theta[i] + side * mid) < 0 else (near, mid)
        longest = max(longest, far)
    return longest


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
                        "Elo only through the prior")
        elif played[i] > 0 and scored[i] >= played[i]:
            flags[i] = "won every game (100%): no finite maximum-likelihood Elo"
            above.add(i)
        elif played[i] > 0 and scored[i] <= 0:
            flags[i] = "lost every game (0%): no finite maximum-likelihood Elo"
        elif not core.size:
            flags[i] = ("no finite maximum-likelihood Elo: the results order the bots without "
                        "any upset")
        elif reach_to_core[i] and not reach_from_core[i]:
            flags[i] = ("never lost a point to the other bots' group: no finite "
                        "maximum-likelihood Elo")
            above.add(i)
        elif reach_from_core[i] and not reach_to_core[i]:
            flags[i] = ("never took a point from the other bots' group: no finite "
                        "maximum-likelihood Elo")
        else:
            flags[i] = ("no chain of results places it against the other bots: no finite "
                        "maximum-likelihood Elo")
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
