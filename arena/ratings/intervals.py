"""The covariance of the fitted strengths: pair-clustered sandwich or seeded bootstrap.

Two colour-swapped games of a pair are one cluster, so the intervals stay honest when the
first-move advantage or the opening makes the two games of a pair move together, and when
draws make single games less variable than a coin toss.  Both work in natural units with
the first player fixed at 0 (as :func:`arena.ratings.mle.fit_theta` returns them).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy import sparse, special

from arena.ratings.mle import (FitError, dense_ids, fit_theta, is_strongly_connected,
                               pair_matrices)

#: how :func:`arena.ratings.fit.fit_bradley_terry` estimates the covariance
IntervalMethod = Literal["sandwich", "bootstrap"]
#: below this many clusters (game pairs) the sandwich may not be smaller than the model-based
#: covariance: a handful of pairs cannot show that colour-swapping makes results surer
MIN_SANDWICH_CLUSTERS = 30
#: from that many clusters on, the sandwich may be smaller than the model-based covariance,
#: but not below this many over G of it (``3 / G``: the rule of three, docs/RATINGS.md)
SPREAD_RULE_OF_THREE = 3.0


def model_covariance(hessian: np.ndarray) -> np.ndarray:
    """The model-based (information-matrix) covariance, first player fixed at 0: every game
    an independent coin toss with the fitted chances."""
    n = hessian.shape[0]
    cov = np.zeros((n, n))
    if n >= 2:
        cov[1:, 1:] = np.linalg.inv(hessian[1:, 1:])
    return cov


def floor_covariance(cov: np.ndarray, model: np.ndarray, clusters: int) -> np.ndarray:
    """``cov`` (sandwich or bootstrap), or ``model`` where ``cov`` is too small to trust.

    Below :data:`MIN_SANDWICH_CLUSTERS` clusters ``cov`` may not be narrower than the
    model-based covariance for any bot.  From then on it may, but not below
    ``3 / clusters`` of it: a smaller spread says that in effect fewer than three pairs
    varied at all (every pair drawn, or split 1-1), which measures nothing (the rule of
    three).  A covariance that could not be estimated (NaN) is replaced too.
    """
    d, m = np.diag(cov), np.diag(model)
    if not np.all(np.isfinite(cov)):
        return model
    if clusters < MIN_SANDWICH_CLUSTERS:
        return model if np.any(d < m) else cov
    return model if np.any(d < m * (SPREAD_RULE_OF_THREE / clusters)) else cov


def _sandwich_meat(theta: np.ndarray, white: np.ndarray, black: np.ndarray, score: np.ndarray,
                   cluster: np.ndarray) -> tuple[np.ndarray, int]:
    """``sum_c U_c U_c^T`` over clusters, ``U_c`` the cluster's score (gradient) vector.

    A cluster whose games are all between the same two bots a < b (the usual colour-swapped
    pair) has ``U_c = u_c (e_a - e_b)``, so those clusters add up to a weighted graph
    Laplacian built with one ``bincount``; other clusters go through a sparse product.
    """
    n = theta.shape[0]
    resid = score - special.expit(theta[white] - theta[black])
    cl, g = dense_ids(cluster)
    lo, hi = np.minimum(white, black), np.maximum(white, black)
    key = lo * n + hi
    kmin = np.full(g, np.iinfo(np.int64).max)
    kmax = np.full(g, -1)
    np.minimum.at(kmin, cl, key)
    np.maximum.at(kmax, cl, key)
    single = kmin == kmax
    u = np.bincount(cl, np.where(white == lo, resid, -resid), minlength=g)
    w = np.bincount(kmin[single], u[single] ** 2, minlength=n * n).astype(float).reshape(n, n)
    w = w + w.T
    meat = np.diag(w.sum(axis=1)) - w
    mixed = ~single[cl]
    if mixed.any():
        rows = np.concatenate([cl[mixed], cl[mixed]])
        cols = np.concatenate([white[mixed], black[mixed]])
        data = np.concatenate([resid[mixed], -resid[mixed]])
        m = sparse.csr_matrix((data, (rows, cols)), shape=(g, n))
        meat += np.asarray((m.T @ m).todense())
    return meat, g


def sandwich_covariance(theta: np.ndarray, hessian: np.ndarray, white: np.ndarray,
                        black: np.ndarray, score: np.ndarray, cluster: np.ndarray) -> np.ndarray:
    """Cluster-robust covariance of ``theta`` (first player fixed at 0), natural units.

    ``H^-1 B H^-1`` in the reduced coordinates, with ``B`` the outer products of the clusters'
    summed score vectors, times the small-sample factor ``G / (G - 1)`` for ``G`` clusters.
    """
    if theta.shape[0] < 2:
        return np.zeros((theta.shape[0],) * 2)
    meat, g = _sandwich_meat(theta, white, black, score, cluster)
    return sandwich_from_meat(theta, hessian, meat, g)


def sandwich_from_meat(theta: np.ndarray, hessian: np.ndarray, meat: np.ndarray,
                       g: int) -> np.ndarray:
    """:func:`sandwich_covariance` from its meat (``sum_c U_c U_c^T``) over ``g`` clusters:
    the games themselves, or their counts (:meth:`arena.ratings.counts.GameCounts.meat`)."""
    n = theta.shape[0]
    cov = np.zeros((n, n))
    if n < 2:
        return cov
    h_inv = np.linalg.inv(hessian[1:, 1:])
    factor = g / (g - 1) if g > 1 else 1.0
    cov[1:, 1:] = factor * (h_inv @ meat[1:, 1:] @ h_inv)
    # With few clusters the sandwich is unreliable and can even be zero (every pair split
    # 1-1, every game drawn): then the model-based covariance, the conservative choice
    # (model_covariance(hessian), without inverting the Hessian a second time).
    model = np.zeros((n, n))
    model[1:, 1:] = h_inv
    return floor_covariance(cov, model, g)


def bootstrap_covariance(n: int, white: np.ndarray, black: np.ndarray, score: np.ndarray,
                         cluster: np.ndarray, theta: np.ndarray, *, samples: int = 200,
                         seed: int = 0) -> tuple[np.ndarray, int]:
    """Covariance of ``theta`` (first player fixed at 0) from a seeded bootstrap over clusters.

    Each replicate draws the clusters (game pairs) with replacement, refits, and the
    covariance of the replicates is returned with the number of replicates that had a finite
    fit (a replicate where some bot scores 100 % has none and is left out).
    """
    rng = np.random.default_rng(seed)
    cl, g = dense_ids(cluster)
    reps: list[np.ndarray] = []
    for _ in range(samples):
        counts = rng.multinomial(g, np.full(g, 1.0 / g)).astype(float)
        n_mat, s_mat = pair_matrices(n, white, black, score, weights=counts[cl])
        if not is_strongly_connected(n_mat, s_mat):
            continue
        try:
            th, _, _ = fit_theta(n_mat, s_mat, start=theta, max_iter=50)
        except FitError:
            continue
        reps.append(th)
    if len(reps) < 2:
        return np.full((n, n), np.nan), len(reps)
    return np.cov(np.asarray(reps), rowvar=False), len(reps)
