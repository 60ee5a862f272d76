"""Ratings and statistics from game records: Elo, intervals, LOS, pentanomial, SPRT.

Pure computation (numpy, scipy; pandas only through :func:`ratings_table`): no processes, no
printing, no files.  ``docs/RATINGS.md`` explains every number in words; the short version:

* **Elo** is the joint Bradley-Terry maximum-likelihood fit over all games, a draw counting as
  half a point, on the logistic Elo scale (a 400-point gap means 10:1 expected score).  Games
  are aggregated into a bots-by-bots count matrix first and the fit is Newton's method on those
  counts, so a million games take about a second.
* **95 % intervals** come from a pair-clustered sandwich covariance (or, optionally, a seeded
  bootstrap over game pairs): two colour-swapped games of a pair are one cluster, so the
  intervals stay honest when the first-move advantage or the opening makes the two games of a
  pair move together, and when draws make single games less variable than a coin toss.
* **LOS** (likelihood of superiority) of A over B is ``Phi((EloA - EloB) / sd(EloA - EloB))``
  with the difference's standard deviation taken from the joint covariance.
* Bots whose Elo is not finite (100 % or 0 % scores, or a group that never lost a point to the
  rest) and bots never connected by games to the main group are **flagged** and get no number.
* Two-bot matches get the engine testers' **trinomial / pentanomial** statistics and the
  **generalized SPRT** (GSPRT) on pentanomial pair counts, as in Fishtest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Literal, Optional, Sequence

import numpy as np
from scipy import optimize, sparse, special, stats
from scipy.sparse import csgraph

from arena.errors import ArenaError
from arena.standings import tally

if TYPE_CHECKING:
    from arena.records import GameRecord

#: Elo points per natural-log unit of odds: Elo = 400 * log10(odds) = ELO_PER_NAT * ln(odds).
ELO_PER_NAT: float = 400.0 / math.log(10.0)
#: the two-sided 95 % normal quantile, 1.959963984540054
Z95: float = float(stats.norm.ppf(0.975))
#: Fishtest's normalised-Elo constant 800 / ln 10
NELO_PER_T: float = 800.0 / math.log(10.0)
#: a pair's average score per game for the pentanomial classes LL, LD, WL+DD, WD, WW
PENTANOMIAL_VALUES: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
#: a game's score for the trinomial classes L, D, W
TRINOMIAL_VALUES: tuple[float, ...] = (0.0, 0.5, 1.0)

IntervalMethod = Literal["sandwich", "bootstrap"]


# ---------------------------------------------------------------------------------------
# Elo <-> score
# ---------------------------------------------------------------------------------------


def elo_from_score(score: float) -> float:
    """The Elo difference whose expected score is ``score``: ``-400 log10(1/score - 1)``.

    ``inf`` / ``-inf`` at a score of 1 / 0.
    """
    if score >= 1.0:
        return math.inf
    if score <= 0.0:
        return -math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_from_elo(elo: float) -> float:
    """The expected score of a player ``elo`` points stronger: ``1 / (1 + 10^(-elo/400))``."""
    return float(special.expit(elo / ELO_PER_NAT))


# ---------------------------------------------------------------------------------------
# Two-bot statistics: trinomial and pentanomial
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoreEstimate:
    """Elo and friends estimated from outcome counts of one bot against another.

    ``n`` is the number of observations (games for trinomial, pairs for pentanomial);
    ``games`` the number of games.  ``elo95`` is half the width of the 95 % interval obtained
    by mapping the score's normal interval to Elo; ``nelo`` is Fishtest's normalised Elo,
    ``(score - 0.5) / sigma_per_game * 800 / ln 10``.
    """

    n: int
    games: int
    score: float
    score_sd: float
    elo: float
    elo95: float
    los: float
    nelo: float
    nelo95: float

    @property
    def elo_interval(self) -> tuple[float, float]:
        """The 95 % Elo interval (its ends are asymmetric around ``elo``)."""
        lo = self.score - Z95 * self.score_sd
        hi = self.score + Z95 * self.score_sd
        return elo_from_score(lo), elo_from_score(hi)


def _estimate(counts: Sequence[float], values: Sequence[float], per_obs_games: int) -> ScoreEstimate:
    """Mean score, its standard error and the Elo transforms, for counts over ``values``."""
    c = np.asarray(counts, dtype=float)
    if c.shape != (len(values),) or np.any(c < 0) or not np.all(np.isfinite(c)):
        raise ArenaError(f"expected {len(values)} non-negative counts, got {list(counts)}")
    n = float(c.sum())
    if n <= 0:
        raise ArenaError("no games to estimate from")
    v = np.asarray(values, dtype=float)
    mu = float(c @ v / n)
    var = float(c @ (v - mu) ** 2 / n)
    sd = math.sqrt(var / n)
    elo = elo_from_score(mu)
    if sd > 0:
        lo, hi = mu - Z95 * sd, mu + Z95 * sd
        elo95 = (elo_from_score(hi) - elo_from_score(lo)) / 2.0
        los = float(stats.norm.cdf((mu - 0.5) / sd))
        sigma_pg = math.sqrt(per_obs_games * var)
        nelo = (mu - 0.5) / sigma_pg * NELO_PER_T
    else:  # every observation identical: no spread to measure
        elo95 = math.nan
        los = 0.5 if mu == 0.5 else float(mu > 0.5)
        nelo = 0.0 if mu == 0.5 else math.copysign(math.inf, mu - 0.5)
    games = int(round(n)) * per_obs_games
    nelo95 = Z95 * NELO_PER_T / math.sqrt(games)
    return ScoreEstimate(n=int(round(n)), games=games, score=mu, score_sd=sd, elo=elo,
                         elo95=elo95, los=los, nelo=nelo, nelo95=nelo95)


def trinomial_estimate(wins: float, draws: float, losses: float) -> ScoreEstimate:
    """Elo, 95 % half-width, LOS and normalised Elo from a W/D/L count (games independent).

    >>> round(trinomial_estimate(60, 20, 20).elo95, 1)
    66.0
    """
    return _estimate((losses, draws, wins), TRINOMIAL_VALUES, 1)


def pentanomial_estimate(counts: Sequence[float]) -> ScoreEstimate:
    """Elo, 95 % half-width, LOS and normalised Elo from pair counts ``[LL, LD, WL+DD, WD, WW]``.

    Each colour-swapped pair is one observation, its value the pair's average score, so the
    correlation between the two games of a pair is accounted for.
    """
    return _estimate(counts, PENTANOMIAL_VALUES, 2)


# ---------------------------------------------------------------------------------------
# Generalized SPRT on pentanomial counts (logistic Elo), as in Fishtest
# ---------------------------------------------------------------------------------------


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """The SPRT's LLR bounds ``(log(beta / (1 - alpha)), log((1 - beta) / alpha))``.

    Accept H0 when the LLR falls to the lower bound, H1 when it reaches the upper one.
    :raises ArenaError: alpha or beta outside (0, 0.5).
    """
    for name, x in (("alpha", alpha), ("beta", beta)):
        if not 0.0 < x < 0.5:
            raise ArenaError(f"{name} must be between 0 and 0.5, got {x}")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def _regularize(counts: Sequence[float]) -> np.ndarray:
    """Counts with every zero replaced by 1e-3 (Fishtest's small prior), so MLEs exist."""
    c = np.asarray(counts, dtype=float)
    return np.where(c == 0, 1e-3, c)


def mle_with_mean(probs: Sequence[float], values: Sequence[float], mean: float) -> np.ndarray:
    """The distribution on ``values`` closest in likelihood to ``probs`` with expectation ``mean``.

    It is ``p_i / (1 + x (a_i - mean))`` with ``x`` the root of the secular equation
    ``sum p_i (a_i - mean) / (1 + x (a_i - mean)) = 0`` (a Lagrange multiplier), found with
    :func:`scipy.optimize.brentq`.  Every ``probs`` entry must be positive and
    ``min(values) < mean < max(values)``.
    """
    p = np.asarray(probs, dtype=float)
    b = np.asarray(values, dtype=float) - mean
    if not (b.min() < 0.0 < b.max()) or np.any(p <= 0):
        raise ArenaError(f"no distribution on {list(values)} has mean {mean}")

    def secular(x: float) -> float:
        return float(np.sum(p * b / (1.0 + x * b)))

    eps = 1e-12
    lo, hi = -1.0 / b.max(), -1.0 / b.min()
    width = hi - lo
    x = optimize.brentq(secular, lo + eps * width, hi - eps * width, xtol=1e-15)
    return p / (1.0 + x * b)


def pentanomial_llr(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """The generalized log-likelihood ratio of H1 (Elo = elo1) against H0 (Elo = elo0).

    ``counts`` are pair counts ``[LL, LD, WL+DD, WD, WW]`` (zeros get Fishtest's 1e-3 prior);
    each hypothesis' distribution is the maximum-likelihood pentanomial distribution with the
    expected score of that logistic Elo (:func:`mle_with_mean`), and the LLR is
    ``N * sum_i phat_i * log(p1_i / p0_i)``.  Also accepts three trinomial counts ``[L, D, W]``.
    """
    c = _regularize(counts)
    if c.shape not in ((5,), (3,)):
        raise ArenaError(f"expected 5 pentanomial (or 3 trinomial) counts, got {list(counts)}")
    values = PENTANOMIAL_VALUES if c.shape == (5,) else TRINOMIAL_VALUES
    n = float(c.sum())
    phat = c / n
    p0 = mle_with_mean(phat, values, score_from_elo(elo0))
    p1 = mle_with_mean(phat, values, score_from_elo(elo1))
    return n * float(np.sum(phat * (np.log(p1) - np.log(p0))))


SprtVerdict = Literal["H0", "H1"]


def sprt_decision(llr: float, bounds: tuple[float, float]) -> Optional[SprtVerdict]:
    """``"H1"`` at or above the upper bound, ``"H0"`` at or below the lower one, else ``None``."""
    lower, upper = bounds
    if llr >= upper:
        return "H1"
    if llr <= lower:
        return "H0"
    return None


@dataclass
class SprtTest:
    """A running GSPRT of "A is ``elo1`` better than B" against "only ``elo0`` better".

    Feed it each finished colour-swapped pair with :meth:`add_pair`; :attr:`verdict` becomes
    ``"H1"`` (A is better) or ``"H0"`` once the LLR leaves the bounds.
    """

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    counts: list[int] = field(default_factory=lambda: [0] * 5)

    def __post_init__(self) -> None:
        if not self.elo1 > self.elo0:
            raise ArenaError(f"elo1 must be greater than elo0 (got {self.elo0}, {self.elo1})")
        self.bounds: tuple[float, float] = sprt_bounds(self.alpha, self.beta)

    def add_pair(self, a_points: float) -> None:
        """Count one pair in which A scored ``a_points`` (0, 0.5, ..., 2) over both games."""
        self.counts[pentanomial_index(a_points)] += 1

    @property
    def pairs(self) -> int:
        """Pairs counted so far."""
        return sum(self.counts)

    @property
    def llr(self) -> float:
        """The current log-likelihood ratio (0 before any pair)."""
        return pentanomial_llr(self.counts, self.elo0, self.elo1) if self.pairs else 0.0

    @property
    def verdict(self) -> Optional[SprtVerdict]:
        """``"H0"``, ``"H1"`` or None while undecided."""
        return sprt_decision(self.llr, self.bounds) if self.pairs else None


def pentanomial_index(pair_score: float) -> int:
    """The pentanomial class (0..4 = LL, LD, WL+DD, WD, WW) of one pair's total score 0..2."""
    k = int(round(pair_score * 2))
    if not 0 <= k <= 4 or abs(k - pair_score * 2) > 1e-9:
        raise ArenaError(f"not a pair score: {pair_score}")
    return k


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


# ---------------------------------------------------------------------------------------
# Bradley-Terry maximum likelihood
# ---------------------------------------------------------------------------------------


class FitError(ArenaError):
    """The Bradley-Terry fit did not converge (data with no finite maximum)."""


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
    theta = np.zeros(n) if start is None else start - start[0]
    if n == 1:
        return theta, np.zeros((1, 1)), 0
    pairs = _pair_list(n_mat, s_mat)
    ll = _loglik(theta, *pairs)
    for it in range(1, max_iter + 1):
        grad, hess = _grad_hess(theta, *pairs)
        step = np.zeros(n)
        step[1:] = np.linalg.solve(hess[1:, 1:], grad[1:])
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
    raise FitError(f"the rating fit did not converge in {max_iter} iterations")


def _dense_ids(ids: np.ndarray) -> tuple[np.ndarray, int]:
    """``ids`` renumbered ``0..g-1`` (same order), and ``g``, the number of distinct ids."""
    if ids.size and ids.min() >= 0 and ids.max() < 4 * ids.size:
        present = np.bincount(ids) > 0
        remap = np.cumsum(present) - 1
        return remap[ids], int(present.sum())
    uniq, inverse = np.unique(ids, return_inverse=True)
    return inverse.ravel(), int(uniq.shape[0])


def _sandwich_meat(theta: np.ndarray, white: np.ndarray, black: np.ndarray, score: np.ndarray,
                   cluster: np.ndarray) -> tuple[np.ndarray, int]:
    """``sum_c U_c U_c^T`` over clusters, ``U_c`` the cluster's score (gradient) vector.

    A cluster whose games are all between the same two bots a < b (the usual colour-swapped
    pair) has ``U_c = u_c (e_a - e_b)``, so those clusters add up to a weighted graph
    Laplacian built with one ``bincount``; other clusters go through a sparse product.
    """
    n = theta.shape[0]
    resid = score - special.expit(theta[white] - theta[black])
    cl, g = _dense_ids(cluster)
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
    n = theta.shape[0]
    cov = np.zeros((n, n))
    if n < 2:
        return cov
    meat, g = _sandwich_meat(theta, white, black, score, cluster)
    h_inv = np.linalg.inv(hessian[1:, 1:])
    factor = g / (g - 1) if g > 1 else 1.0
    robust = factor * (h_inv @ meat[1:, 1:] @ h_inv)
    # With few clusters the sandwich is unreliable and can even be zero (every pair split
    # 1-1): then fall back to the model-based covariance, the conservative choice.
    if g < MIN_SANDWICH_CLUSTERS and np.any(np.diag(robust) < np.diag(h_inv)):
        robust = h_inv
    cov[1:, 1:] = robust
    return cov


#: below this many clusters (game pairs) the sandwich may not be smaller than the model-based
#: covariance: a handful of pairs cannot show that colour-swapping makes results surer
MIN_SANDWICH_CLUSTERS = 30


def bootstrap_covariance(n: int, white: np.ndarray, black: np.ndarray, score: np.ndarray,
                         cluster: np.ndarray, theta: np.ndarray, *, samples: int = 200,
                         seed: int = 0) -> tuple[np.ndarray, int]:
    """Covariance of ``theta`` (first player fixed at 0) from a seeded bootstrap over clusters.

    Each replicate draws the clusters (game pairs) with replacement, refits, and the
    covariance of the replicates is returned with the number of replicates that had a finite
    fit (a replicate where some bot scores 100 % has none and is left out).
    """
    rng = np.random.default_rng(seed)
    cl, g = _dense_ids(cluster)
    reps: list[np.ndarray] = []
    for _ in range(samples):
        counts = rng.multinomial(g, np.full(g, 1.0 / g)).astype(float)
        n_mat, s_mat = pair_matrices(n, white, black, score, weights=counts[cl])
        if not _strongly_connected(n_mat, s_mat):
            continue
        try:
            th, _, _ = fit_theta(n_mat, s_mat, start=theta, max_iter=50)
        except FitError:
            continue
        reps.append(th)
    if len(reps) < 2:
        return np.full((n, n), np.nan), len(reps)
    return np.cov(np.asarray(reps), rowvar=False), len(reps)


def _strongly_connected(n_mat: np.ndarray, s_mat: np.ndarray) -> bool:
    k, _ = csgraph.connected_components(sparse.csr_matrix(s_mat > 0), directed=True,
                                        connection="strong")
    return bool(k == 1) and bool(np.all(n_mat.sum(axis=1) > 0))


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
        return Z95 * np.sqrt(np.clip(np.diag(self.cov), 0.0, None))

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
    if n >= 2 and not _strongly_connected(n_mat, s_mat):
        raise FitError("these games have no finite ratings (some bots were never beaten, never "
                       "scored, or never connected by games)")
    theta, hess, iters = fit_theta(n_mat, s_mat)
    ll = _loglik(theta, *_pair_list(n_mat, s_mat))
    clusters = int(_dense_ids(games.cluster)[1])
    if method == "sandwich":
        cov = sandwich_covariance(theta, hess, games.white, games.black, games.score, games.cluster)
    elif method == "bootstrap":
        cov, _ = bootstrap_covariance(n, games.white, games.black, games.score, games.cluster,
                                      theta, samples=bootstrap_samples, seed=seed)
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


# ---------------------------------------------------------------------------------------
# Standings: the full table for one variant or pooled
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BotStanding:
    """One row of a standings table.  ``elo`` / ``elo95`` / ``rank`` are None when flagged."""

    bot: str
    rank: Optional[int]
    elo: Optional[float]
    elo95: Optional[float]
    games: int
    wins: int
    draws: int
    losses: int
    los_next: Optional[float]
    forfeits: dict[str, int] = field(default_factory=dict)
    flag: str = ""

    @property
    def score(self) -> float:
        """Points per game, 0..1."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games else math.nan

    @property
    def draw_ratio(self) -> float:
        """Draws per game, 0..1."""
        return self.draws / self.games if self.games else math.nan

    @property
    def wdl(self) -> str:
        """``W-D-L`` text."""
        return f"{self.wins}-{self.draws}-{self.losses}"

    def forfeits_text(self) -> str:
        """``timeout 2, crash 1`` or empty."""
        return ", ".join(f"{k} {v}" for k, v in sorted(self.forfeits.items()))


@dataclass(frozen=True)
class Standings:
    """Ratings of every bot in one variant (or pooled over all variants when ``variant`` is None)."""

    variant: Optional[str]
    rows: tuple[BotStanding, ...]
    fit: Optional[Fit]
    games: int
    anchor: Optional[str]
    note: str = ""

    @property
    def label(self) -> str:
        """The variant name, or ``all variants``."""
        return self.variant if self.variant is not None else "all variants"

    def row(self, bot: str) -> BotStanding:
        """The row of ``bot``; raises ``KeyError``."""
        for r in self.rows:
            if r.bot == bot:
                return r
        raise KeyError(bot)

    def los(self, a: str, b: str) -> Optional[float]:
        """Likelihood that ``a`` is stronger than ``b`` (None if either is unrated)."""
        if self.fit is None or a not in self.fit.players or b not in self.fit.players:
            return None
        return self.fit.los(self.fit.index(a), self.fit.index(b))


def rate(records: Sequence[GameRecord], *, variant: Optional[str] = None,
         anchor: Optional[tuple[str, float]] = None, method: IntervalMethod = "sandwich",
         bootstrap_samples: int = 200, seed: int = 0) -> Standings:
    """Standings for the games of ``variant`` (all games pooled when None).

    Rated bots come first by Elo (each with the LOS over the next one), then the flagged
    bots.  With ``anchor=(bot, elo)`` the anchor bot gets that Elo exactly (and ± 0); if it is
    not rated in this table the table stays centred on 0 and ``note`` says so.
    """
    chosen = [r for r in records if variant is None or r.variant == variant]
    games = game_arrays(chosen)
    n = len(games.players)
    n_mat, s_mat = pair_matrices(n, games.white, games.black, games.score)
    part = find_rateable(n_mat, s_mat)
    counts = tally(chosen)
    fit: Optional[Fit] = None
    note = ""
    anchor_name = None
    if len(part.core) >= 2:
        core = np.asarray(part.core)
        remap = np.full(n, -1)
        remap[core] = np.arange(core.size)
        keep = (remap[games.white] >= 0) & (remap[games.black] >= 0)
        sub = GameArrays(tuple(games.players[i] for i in core), remap[games.white[keep]],
                         remap[games.black[keep]], games.score[keep], games.cluster[keep])
        if anchor is not None and anchor[0] in sub.players:
            anchor_name = anchor[0]
        elif anchor is not None:
            note = f"anchor {anchor[0]!r} is not rated here; Elo is centred on the mean"
        fit = fit_bradley_terry(sub, anchor=anchor_name,
                                anchor_elo=anchor[1] if anchor_name and anchor else 0.0,
                                method=method, bootstrap_samples=bootstrap_samples, seed=seed)
    elif anchor is not None:
        note = f"anchor {anchor[0]!r} is not rated here"
    rows: list[BotStanding] = []
    if fit is not None:
        order = sorted(range(len(fit.players)), key=lambda i: (-fit.elo[i], fit.players[i]))
        half = fit.elo95()
        for rank, i in enumerate(order, start=1):
            name = fit.players[i]
            c = counts[name]
            nxt = fit.los(i, order[rank]) if rank < len(order) else None
            rows.append(BotStanding(name, rank, float(fit.elo[i]), float(half[i]), c.games,
                                    c.wins, c.draws, c.losses, nxt, dict(c.forfeit_kinds)))
    flagged: list[BotStanding] = []
    for i, reason in part.flags.items():
        name = games.players[i]
        c = counts[name]
        flagged.append(BotStanding(name, None, None, None, c.games, c.wins, c.draws, c.losses,
                                   None, dict(c.forfeit_kinds), reason))
    flagged.sort(key=lambda r: (-r.score, r.bot))
    top = [r for r in flagged if games.players.index(r.bot) in part.above]
    rest = [r for r in flagged if games.players.index(r.bot) not in part.above]
    return Standings(variant, tuple(top + rows + rest), fit, games.n_games, anchor_name, note)


def rate_all(records: Sequence[GameRecord], **kwargs: Any) -> list[Standings]:
    """Standings per variant (in order of first appearance) and, with several, pooled last."""
    variants = list(dict.fromkeys(r.variant for r in records))
    out = [rate(records, variant=v, **kwargs) for v in variants]
    if len(variants) > 1:
        out.append(rate(records, variant=None, **kwargs))
    return out


def parse_anchor(text: str) -> tuple[str, float]:
    """``BOT=ELO`` (e.g. ``random=0``) as ``(bot, elo)``; raises :class:`ArenaError`."""
    name, sep, value = text.rpartition("=")
    try:
        elo = float(value)
    except ValueError:
        elo = math.nan
    if not sep or not name or not math.isfinite(elo):
        raise ArenaError(f"--anchor expects BOT=ELO (e.g. random=0), got {text!r}")
    return name, elo


# ---------------------------------------------------------------------------------------
# Head to head
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Match:
    """Everything about the games between two bots, from ``a``'s side.

    ``pentanomial`` counts complete colour-swapped pairs ``[LL, LD, WL+DD, WD, WW]``;
    ``unpaired`` games (no pair id, or a pair not completed) count only in W/D/L.
    ``estimate`` is pentanomial when there are pairs, else trinomial.
    """

    a: str
    b: str
    wins: int
    draws: int
    losses: int
    pentanomial: tuple[int, int, int, int, int]
    unpaired: int
    estimate: Optional[ScoreEstimate]

    @property
    def games(self) -> int:
        """Games played between the two."""
        return self.wins + self.draws + self.losses

    @property
    def draw_ratio(self) -> float:
        """Draws per game."""
        return self.draws / self.games if self.games else math.nan


def match_stats(records: Sequence[GameRecord], a: str, b: str,
                variant: Optional[str] = None) -> Match:
    """W/D/L, pentanomial pair counts and Elo estimate of ``a`` against ``b``."""
    between = [r for r in records if (variant is None or r.variant == variant)
               and (r.white.name, r.black.name) in ((a, b), (b, a))]
    return _match(between, a, b)


def all_matches(records: Sequence[GameRecord], variant: Optional[str] = None,
                order: Sequence[str] = ()) -> list[Match]:
    """:func:`match_stats` for every pair of bots that met, in one pass over ``records``.

    Each pair is seen from the bot that comes first in ``order`` (then by name).
    """
    rank = {name: k for k, name in enumerate(order)}
    groups: dict[tuple[str, str], list[GameRecord]] = {}
    for r in records:
        if (variant is not None and r.variant != variant) or r.white.name == r.black.name:
            continue
        a, b = sorted((r.white.name, r.black.name), key=lambda n: (rank.get(n, len(rank)), n))
        groups.setdefault((a, b), []).append(r)
    return [_match(games, a, b) for (a, b), games in
            sorted(groups.items(), key=lambda item: (rank.get(item[0][0], len(rank)), item[0][0],
                                                     rank.get(item[0][1], len(rank)), item[0][1]))]


def _match(between: Sequence[GameRecord], a: str, b: str) -> Match:
    """The :class:`Match` of ``a`` against ``b`` from the games they played each other."""
    wdl = [0, 0, 0]
    groups: dict[tuple[Any, ...], list[tuple[str, float]]] = {}
    unpaired = 0
    for r in between:
        color = "white" if r.white.name == a else "black"
        s = r.score(color)
        wdl[0 if s == 1.0 else 1 if s == 0.5 else 2] += 1
        if r.pair is None:
            unpaired += 1
        else:
            groups.setdefault((r.tournament, r.variant, r.round, r.pair), []).append((color, s))
    penta = [0] * 5
    for games in groups.values():
        if len(games) == 2 and {games[0][0], games[1][0]} == {"white", "black"}:
            penta[pentanomial_index(games[0][1] + games[1][1])] += 1
        else:
            unpaired += len(games)
    estimate: Optional[ScoreEstimate] = None
    if sum(penta):
        estimate = pentanomial_estimate(penta)
    elif sum(wdl):
        estimate = trinomial_estimate(wdl[0], wdl[1], wdl[2])
    return Match(a, b, wdl[0], wdl[1], wdl[2], (penta[0], penta[1], penta[2], penta[3], penta[4]),
                 unpaired, estimate)


def head_to_head(records: Sequence[GameRecord], variant: Optional[str] = None
                 ) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``(bots, points, games)``: ``points[i, j]`` bot i's points against bot j in ``games[i, j]``."""
    g = game_arrays(records, variant)
    n_mat, s_mat = pair_matrices(len(g.players), g.white, g.black, g.score)
    return list(g.players), s_mat, n_mat


# ---------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------

COLUMNS = ("variant", "rank", "bot", "elo", "elo95", "games", "score_pct", "wins", "draws",
           "losses", "draw_pct", "los_next_pct", "forfeits", "flag")


def standings_rows(standings: Sequence[Standings]) -> list[dict[str, Any]]:
    """One dict per bot per table, keyed by :data:`COLUMNS` (for CSV / JSON / pandas)."""
    out: list[dict[str, Any]] = []
    for st in standings:
        for r in st.rows:
            out.append({
                "variant": st.label, "rank": r.rank,
                "bot": r.bot,
                "elo": None if r.elo is None else round(r.elo, 1),
                "elo95": None if r.elo95 is None else round(r.elo95, 1),
                "games": r.games, "score_pct": round(100 * r.score, 1),
                "wins": r.wins, "draws": r.draws, "losses": r.losses,
                "draw_pct": round(100 * r.draw_ratio, 1),
                "los_next_pct": None if r.los_next is None else round(100 * r.los_next, 1),
                "forfeits": r.forfeits_text(), "flag": r.flag,
            })
    return out


def ratings_table(standings: Sequence[Standings]) -> Any:
    """:func:`standings_rows` as a pandas DataFrame (pandas imported lazily)."""
    import pandas as pd

    df = pd.DataFrame(standings_rows(standings), columns=list(COLUMNS))
    df["rank"] = df["rank"].astype("Int64")  # flagged bots have none
    return df
