"""Games as arrays, and the Bradley-Terry maximum-likelihood strengths.

Games become parallel index arrays (:class:`GameArrays`), then a bots-by-bots count matrix
(:func:`pair_matrices`), and :func:`fit_theta` runs Newton's method on those counts, so a
million games take about a second.  Strengths here are in natural log-odds units with the
first player fixed at 0; :mod:`arena.ratings.fit` turns them into Elo with intervals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Optional

import numpy as np
from scipy import sparse, special
from scipy.sparse import csgraph

from arena.errors import ArenaError

if TYPE_CHECKING:
    from arena.records import GameRecord


# ---------------------------------------------------------------------------------------
# Games as arrays
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GameArrays:
    """Games as parallel arrays: indices into ``players``, White's score, cluster ids.

    Games sharing a cluster id (the two colour-swapped games of a pair) are treated as one
    independent unit by the interval estimates.
    """

    players: tuple[str, ...]
    white: np.ndarray
    black: np.ndarray
    score: np.ndarray
    cluster: np.ndarray

    @property
    def n_games(self) -> int:
        """How many games."""
        return int(self.white.shape[0])


def game_arrays(records: Iterable[GameRecord], variant: Optional[str] = None) -> GameArrays:
    """The games of ``records`` (of one ``variant``, or all when None) as :class:`GameArrays`.

    Players are identified by display name.  The cluster of a game is its
    ``(tournament, variant, round, pair)`` when ``pair`` is set, else the game alone.
    """
    index: dict[str, int] = {}
    clusters: dict[tuple[Any, ...], int] = {}
    white: list[int] = []
    black: list[int] = []
    score: list[float] = []
    cluster: list[int] = []
    for n, r in enumerate(records):
        if variant is not None and r.variant != variant:
            continue
        w = index.setdefault(r.white.name, len(index))
        b = index.setdefault(r.black.name, len(index))
        if w == b:
            continue  # a bot against itself says nothing about ratings
        white.append(w)
        black.append(b)
        score.append(r.score("white"))
        key: tuple[Any, ...] = ((r.tournament, r.variant, r.round, r.pair) if r.pair is not None
                                else ("game", n))
        cluster.append(clusters.setdefault(key, len(clusters)))
    players = tuple(sorted(index, key=index.__getitem__))
    return GameArrays(players, np.asarray(white, dtype=np.int64), np.asarray(black, dtype=np.int64),
                      np.asarray(score, dtype=float), np.asarray(cluster, dtype=np.int64))


def pair_matrices(n: int, white: np.ndarray, black: np.ndarray, score: np.ndarray,
                  weights: Optional[np.ndarray] = None) -> tuple[np.ndarray, np.ndarray]:
    """``(N, S)``: ``N[i, j]`` games between i and j (symmetric), ``S[i, j]`` i's points in them.

    One vectorised pass (:func:`numpy.bincount`) over the games; ``weights`` (one per game)
    serve the bootstrap.
    """
    w = np.ones(white.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    size = n * n
    games = np.bincount(white * n + black, weights=w, minlength=size).reshape(n, n)
    points = np.bincount(white * n + black, weights=w * score, minlength=size).reshape(n, n)
    n_mat = games + games.T
    s_mat = points + (games - points).T
    return n_mat, s_mat


def dense_ids(ids: np.ndarray) -> tuple[np.ndarray, int]:
    """``ids`` renumbered ``0..g-1`` (same order), and ``g``, the number of distinct ids."""
    if ids.size and ids.min() >= 0 and ids.max() < 4 * ids.size:
        present = np.bincount(ids) > 0
        remap = np.cumsum(present) - 1
        return remap[ids], int(present.sum())
    uniq, inverse = np.unique(ids, return_inverse=True)
    return inverse.ravel(), int(uniq.shape[0])


# ---------------------------------------------------------------------------------------
# Bradley-Terry maximum likelihood
# ---------------------------------------------------------------------------------------


class FitError(ArenaError):
    """The Bradley-Terry fit did not converge (data with no finite maximum)."""


def is_strongly_connected(n_mat: np.ndarray, s_mat: np.ndarray) -> bool:
    """Whether every player played and reaches every other along "scored against" (``S > 0``):
    the condition for finite maximum-likelihood strengths."""
    k, _ = csgraph.connected_components(sparse.csr_matrix(s_mat > 0), directed=True,
                                        connection="strong")
    return bool(k == 1) and bool(np.all(n_mat.sum(axis=1) > 0))


def _pair_list(n_mat: np.ndarray, s_mat: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(i, j, games, points of i)`` for every pair ``i < j`` that played."""
    i, j = np.nonzero(np.triu(n_mat, 1))
    return i, j, n_mat[i, j], s_mat[i, j]


def _loglik(theta: np.ndarray, i: np.ndarray, j: np.ndarray, games: np.ndarray,
            points: np.ndarray) -> float:
    # s ln E(d) + (n - s) ln E(-d)  with  ln E(-d) = ln E(d) - d
    d = theta[i] - theta[j]
    return float(np.sum(games * special.log_expit(d) - (games - points) * d))


def _grad_hess(theta: np.ndarray, i: np.ndarray, j: np.ndarray, games: np.ndarray,
               points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gradient of the log-likelihood and Hessian of its negative (dense, a Laplacian)."""
    n = theta.shape[0]
    p = special.expit(theta[i] - theta[j])
    r = points - games * p
    grad = np.bincount(i, r, minlength=n) - np.bincount(j, r, minlength=n)
    w = games * p * (1.0 - p)
    hess = np.zeros((n, n))
    hess[i, j] = -w
    hess[j, i] = -w
    hess[np.diag_indices(n)] = np.bincount(i, w, minlength=n) + np.bincount(j, w, minlength=n)
    return grad, hess


def log_likelihood(theta: np.ndarray, n_mat: np.ndarray, s_mat: np.ndarray) -> float:
    """The log-likelihood of strengths ``theta`` for the matrices of :func:`pair_matrices`."""
    return _loglik(theta, *_pair_list(n_mat, s_mat))


def fit_theta(n_mat: np.ndarray, s_mat: np.ndarray, *, start: Optional[np.ndarray] = None,
              tol: float = 1e-7, max_iter: int = 100) -> tuple[np.ndarray, np.ndarray, int]:
    """Maximum-likelihood strengths (natural log-odds units, first player fixed at 0).

    Newton's method with step halving on the aggregated matrices of :func:`pair_matrices`
    (only the pairs that played enter); the graph of "scored against" must be strongly
    connected (else no finite maximum exists).  Returns ``(theta, hessian, iterations)``;
    the hessian is that of minus the log-likelihood at ``theta`` (a weighted graph Laplacian).

    :raises FitError: no convergence within ``max_iter`` iterations.
    """
    n = n_mat.shape[0]
    theta = np.zeros(n) if start is None else np.asarray(start - start[0], dtype=float)
    if n == 1:
        return theta, np.zeros((1, 1)), 0
    return _newton(n_mat, s_mat, theta, np.arange(1, n), tol, max_iter, "the rating fit")


def fit_theta_free(n_mat: np.ndarray, s_mat: np.ndarray, theta: np.ndarray, free: np.ndarray, *,
                   tol: float = 1e-7, max_iter: int = 100) -> tuple[np.ndarray, np.ndarray, int]:
    """Maximise the log-likelihood over the strengths ``theta[free]``, the others held fixed.

    For the prior's fit (:func:`arena.ratings.fit.fit_with_prior`): the matrices include
    virtual draws of every free player against a fixed player, so the maximum is finite and
    unique.  Returns ``(theta, hessian, iterations)``, the hessian (of minus the
    log-likelihood, all players) at the maximum.

    :raises FitError: no convergence within ``max_iter`` iterations.
    """
    return _newton(n_mat, s_mat, np.array(theta, dtype=float), free, tol, max_iter,
                   "the rating fit with the prior")


def _spd_solve(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``matrix^-1 rhs`` for the Hessian of a connected fit (symmetric positive definite):
    by Cholesky, half the work of a general solve (a thousand bots: eight of them per fit);
    a general solve where it is not positive definite."""
    from scipy import linalg

    try:
        return np.asarray(linalg.cho_solve(linalg.cho_factor(matrix, check_finite=False), rhs,
                                           check_finite=False))
    except linalg.LinAlgError:
        return np.asarray(np.linalg.solve(matrix, rhs))


def _newton(n_mat: np.ndarray, s_mat: np.ndarray, theta: np.ndarray, free: np.ndarray,
            tol: float, max_iter: int, what: str) -> tuple[np.ndarray, np.ndarray, int]:
    """Newton's method with step halving over ``theta[free]`` (the rest held fixed); returns
    ``(theta, hessian, iterations)``.  :raises FitError: no convergence (naming ``what``)."""
    pairs = _pair_list(n_mat, s_mat)
    ll = _loglik(theta, *pairs)
    sub = np.ix_(free, free)
    for it in range(1, max_iter + 1):
        grad, hess = _grad_hess(theta, *pairs)
        step = np.zeros_like(theta)
        step[free] = _spd_solve(hess[sub], grad[free])
        t = 1.0
        while True:
            cand = theta + t * step
            cand_ll = _loglik(cand, *pairs)
            if cand_ll >= ll - 1e-12 * abs(ll) or t < 1e-6:
                break
            t /= 2
        theta, ll = cand, cand_ll
        if np.max(np.abs(t * step)) < tol:
            return theta, _grad_hess(theta, *pairs)[1], it
    raise FitError(f"{what} did not converge in {max_iter} iterations")
