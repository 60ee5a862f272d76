"""The generalized SPRT (GSPRT) on pentanomial pair counts, as in Fishtest and fastchess.

Two Elo models, as Fishtest offers them (``server/fishtest/stats/LLRcalc.py`` in
official-stockfish/fishtest; fastchess ``app/src/matchmaking/sprt/sprt.cpp``):

* ``logistic``: H0 and H1 are logistic Elo differences, i.e. expected scores
  ``1 / (1 + 10^(-elo/400))`` (Fishtest's ``LLR_logistic``);
* ``normalized``: H0 and H1 are normalised Elo, a t-value ``(score - 1/2) / sigma`` scaled by
  ``800 / ln 10``, with ``sigma`` the standard deviation of a game's score measured on the
  pairs (so the pentanomial variance) (Fishtest's ``LLR_normalized``, Van den Bergh,
  *Comments on normalized Elo*, section 4.1).

:class:`SprtTest` is the running test ``arena sprt`` feeds one colour-swapped pair at a time,
and :meth:`SprtTest.summary` its final figures (:class:`SprtSummary`); the functions beneath
it (bounds, the constrained maximum-likelihood distributions, the log-likelihood ratios, the
decision) are pure and tested one by one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, Optional, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.ratings.elo import (NELO_PER_T, PENTANOMIAL_VALUES, TRINOMIAL_VALUES,
                               ScoreEstimate, pentanomial_estimate, pentanomial_index,
                               score_from_elo)

#: the Elo model H0 and H1 are read in
SprtModel = Literal["logistic", "normalized"]
SPRT_MODELS: tuple[SprtModel, ...] = ("logistic", "normalized")
#: the largest normalised Elo a hypothesis may have: beyond about 230 no pentanomial
#: distribution near the uniform one (where the t-value iteration starts) reaches it, and
#: real tests use single digits
NELO_BOUND = 200.0


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


def _secular_root(p: np.ndarray, b: np.ndarray) -> float:
    """The root ``x`` of ``sum p_i b_i / (1 + x b_i) = 0`` with every ``1 + x b_i > 0``
    (Fishtest's ``secular``), found with :func:`scipy.optimize.brentq`.  Needs
    ``min(b) < 0 < max(b)``."""
    def secular(x: float) -> float:
        return float(np.sum(p * b / (1.0 + x * b)))

    eps = 1e-12
    lo, hi = -1.0 / b.max(), -1.0 / b.min()
    width = hi - lo
    from scipy import optimize  # here: a second to import, and only SPRT needs it

    return float(optimize.brentq(secular, lo + eps * width, hi - eps * width, xtol=1e-15))


def mle_with_mean(probs: Sequence[float] | np.ndarray, values: Sequence[float],
                  mean: float) -> np.ndarray:
    """The distribution on ``values`` closest in likelihood to ``probs`` with expectation ``mean``.

    It is ``p_i / (1 + x (a_i - mean))`` with ``x`` the root of the secular equation
    ``sum p_i (a_i - mean) / (1 + x (a_i - mean)) = 0`` (a Lagrange multiplier), found with
    :func:`scipy.optimize.brentq` (Fishtest's ``MLE_expected``).  Every ``probs`` entry must
    be positive and ``min(values) < mean < max(values)``.
    """
    p = np.asarray(probs, dtype=float)
    b = np.asarray(values, dtype=float) - mean
    if not (b.min() < 0.0 < b.max()) or np.any(p <= 0):
        raise ArenaError(f"no distribution on {list(values)} has mean {mean}")
    return p / (1.0 + _secular_root(p, b) * b)


def mle_with_t_value(probs: Sequence[float] | np.ndarray, values: Sequence[float], ref: float,
                     t: float) -> np.ndarray:
    """The distribution on ``values`` closest in likelihood to ``probs`` whose t-value
    ``(mean - ref) / sd`` is ``t``: Fishtest's ``MLE_t_value`` (Van den Bergh, *Comments on
    normalized Elo*, section 4.1), a fixed-point iteration from the uniform distribution,
    each step solving the secular equation for
    ``phi_i = a_i - ref - t sd (1 + ((a_i - mu) / sd)^2) / 2`` at the current ``mu``, ``sd``.

    :raises ArenaError: the iteration does not settle (it does within a few steps for any
        ``probs`` with every entry positive).
    """
    phat = np.asarray(probs, dtype=float)
    a = np.asarray(values, dtype=float)
    if np.any(phat <= 0):
        raise ArenaError("every probability must be positive")
    p = np.full(len(a), 1.0 / len(a))
    for _ in range(200):
        mu = float(p @ a)
        sd = math.sqrt(float(p @ (a - mu) ** 2))
        phi = a - ref - t * sd * (1.0 + ((a - mu) / sd) ** 2) / 2.0
        if not phi.min() < 0.0 < phi.max():
            raise ArenaError(f"no distribution on {list(values)} has t-value {t}")
        new = phat / (1.0 + _secular_root(phat, phi) * phi)
        step = float(np.max(np.abs(new - p)))
        p = new
        if step < 1e-10:  # Fishtest stops at 1e-9, fastchess at 1e-4
            break
    mu = float(p @ a)
    if abs((mu - ref) / math.sqrt(float(p @ (a - mu) ** 2)) - t) > 1e-6:
        raise ArenaError(f"the t-value {t} maximum-likelihood distribution did not settle")
    return p


def _empirical(counts: Sequence[float]) -> tuple[float, np.ndarray, tuple[float, ...]]:
    """``(N, phat, values)`` of regularised pentanomial (or trinomial) counts."""
    c = _regularize(counts)
    if c.shape not in ((5,), (3,)):
        raise ArenaError(f"expected 5 pentanomial (or 3 trinomial) counts, got {list(counts)}")
    values = PENTANOMIAL_VALUES if c.shape == (5,) else TRINOMIAL_VALUES
    n = float(c.sum())
    return n, c / n, values


def pentanomial_llr(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """The generalized log-likelihood ratio of H1 (Elo = elo1) against H0 (Elo = elo0),
    logistic Elo (Fishtest's ``LLR_logistic``).

    ``counts`` are pair counts ``[LL, LD, WL+DD, WD, WW]`` (zeros get Fishtest's 1e-3 prior);
    each hypothesis' distribution is the maximum-likelihood pentanomial distribution with the
    expected score of that logistic Elo (:func:`mle_with_mean`), and the LLR is
    ``N * sum_i phat_i * log(p1_i / p0_i)``.  Also accepts three trinomial counts ``[L, D, W]``.
    """
    n, phat, values = _empirical(counts)
    p0 = mle_with_mean(phat, values, score_from_elo(elo0))
    p1 = mle_with_mean(phat, values, score_from_elo(elo1))
    return n * float(np.sum(phat * (np.log(p1) - np.log(p0))))


def normalized_llr(counts: Sequence[float], nelo0: float, nelo1: float) -> float:
    """The generalized log-likelihood ratio of H1 (normalised Elo = nelo1) against H0
    (nelo0) (Fishtest's ``LLR_normalized``; fastchess's ``getLLR_normalized``).

    A normalised Elo is a t-value per game times ``800 / ln 10``; on pentanomial counts the
    t-value of a pair's average score is ``sqrt 2`` times the per-game one (a pair is two
    games), so H0 and H1 become the pair t-values ``sqrt 2 * nelo / (800 / ln 10)``, each
    hypothesis' distribution is the maximum-likelihood one with that t-value against a
    score of 1/2 (:func:`mle_with_t_value`), and the LLR is
    ``N * sum_i phat_i * log(p1_i / p0_i)``.  Three trinomial counts ``[L, D, W]`` use the
    per-game t-values directly.
    """
    n, phat, values = _empirical(counts)
    scale = math.sqrt(2.0) if len(values) == 5 else 1.0
    t0, t1 = (scale * nelo / NELO_PER_T for nelo in (nelo0, nelo1))
    p0 = mle_with_t_value(phat, values, 0.5, t0)
    p1 = mle_with_t_value(phat, values, 0.5, t1)
    return n * float(np.sum(phat * (np.log(p1) - np.log(p0))))


def sprt_llr(counts: Sequence[float], elo0: float, elo1: float,
             model: SprtModel = "logistic") -> float:
    """:func:`pentanomial_llr` (``logistic``) or :func:`normalized_llr` (``normalized``)."""
    if model == "logistic":
        return pentanomial_llr(counts, elo0, elo1)
    if model == "normalized":
        return normalized_llr(counts, elo0, elo1)
    raise ArenaError(f"unknown SPRT model {model!r} (expected one of {', '.join(SPRT_MODELS)})")


SprtVerdict = Literal["H0", "H1"]


def sprt_decision(llr: float, bounds: tuple[float, float]) -> Optional[SprtVerdict]:
    """``"H1"`` at or above the upper bound, ``"H0"`` at or below the lower one, else ``None``."""
    lower, upper = bounds
    if llr >= upper:
        return "H1"
    if llr <= lower:
        return "H0"
    return None


@dataclass(frozen=True)
class SprtSummary:
    """The figures of an SPRT so far, from A's side: what fishtest and fastchess print.

    ``wins``, ``draws``, ``losses`` count games; ``counts`` the pentanomial pair classes
    ``[LL, LD, WL+DD, WD, WW]``; ``estimate`` the pentanomial Elo (logistic) and normalised
    Elo with their 95 % intervals and LOS (:func:`~arena.ratings.elo.pentanomial_estimate`,
    the formulas of Fishtest's ``stat_util.get_elo`` and fastchess's ``EloPentanomial``),
    None before any pair; ``llr`` and ``bounds`` the test's, ``verdict`` ``"H0"``, ``"H1"``
    or None (undecided).  ``elo0``, ``elo1`` are read in ``model``.
    """

    model: SprtModel
    elo0: float
    elo1: float
    alpha: float
    beta: float
    pairs: int
    wins: int
    draws: int
    losses: int
    counts: tuple[int, ...]
    estimate: Optional[ScoreEstimate]
    llr: float
    bounds: tuple[float, float]
    verdict: Optional[SprtVerdict]

    @property
    def games(self) -> int:
        """Games counted (two per pair)."""
        return self.wins + self.draws + self.losses


@dataclass
class SprtTest:
    """A running GSPRT of "A is ``elo1`` better than B" against "only ``elo0`` better", the
    Elo read in ``model`` (``logistic`` or ``normalized``, see the module's docstring).

    Feed it each finished colour-swapped pair with :meth:`add_games` (A's score in each of
    the two games) or :meth:`add_pair` (A's total only: no W-D-L then); :attr:`verdict`
    becomes ``"H1"`` (A is better) or ``"H0"`` once the LLR leaves the bounds.
    """

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    counts: list[int] = field(default_factory=lambda: [0] * 5)
    model: SprtModel = "logistic"
    #: A's wins, draws and losses over the games given to :meth:`add_games`
    wdl: list[int] = field(default_factory=lambda: [0] * 3)

    def __post_init__(self) -> None:
        if not self.elo1 > self.elo0:
            raise ArenaError(f"elo1 must be greater than elo0 (got {self.elo0}, {self.elo1})")
        if self.model not in SPRT_MODELS:
            raise ArenaError(f"unknown SPRT model {self.model!r} (expected one of "
                             f"{', '.join(SPRT_MODELS)})")
        if self.model == "normalized" and max(abs(self.elo0), abs(self.elo1)) > NELO_BOUND:
            raise ArenaError(f"with the normalized model, elo0 and elo1 are normalised Elo, "
                             f"from -{NELO_BOUND:g} to {NELO_BOUND:g} (got {self.elo0:g}, "
                             f"{self.elo1:g})")
        self.bounds: tuple[float, float] = sprt_bounds(self.alpha, self.beta)

    def add_pair(self, a_points: float) -> None:
        """Count one pair in which A scored ``a_points`` (0, 0.5, ..., 2) over both games."""
        self.counts[pentanomial_index(a_points)] += 1

    def add_games(self, first: float, second: float) -> None:
        """Count one pair from A's score in each of its two games (0, 0.5 or 1 each)."""
        for score in (first, second):
            if score not in (0.0, 0.5, 1.0):
                raise ArenaError(f"not a game score: {score}")
            self.wdl[0 if score == 1.0 else 1 if score == 0.5 else 2] += 1
        self.add_pair(first + second)

    @property
    def pairs(self) -> int:
        """Pairs counted so far."""
        return sum(self.counts)

    @property
    def llr(self) -> float:
        """The current log-likelihood ratio (0 before any pair)."""
        return sprt_llr(self.counts, self.elo0, self.elo1, self.model) if self.pairs else 0.0

    @property
    def verdict(self) -> Optional[SprtVerdict]:
        """``"H0"``, ``"H1"`` or None while undecided."""
        return sprt_decision(self.llr, self.bounds) if self.pairs else None

    def summary(self) -> SprtSummary:
        """The test's figures now (see :class:`SprtSummary`)."""
        llr = self.llr
        return SprtSummary(
            model=self.model, elo0=self.elo0, elo1=self.elo1, alpha=self.alpha, beta=self.beta,
            pairs=self.pairs, wins=self.wdl[0], draws=self.wdl[1], losses=self.wdl[2],
            counts=tuple(self.counts),
            estimate=pentanomial_estimate(self.counts) if self.pairs else None,
            llr=llr, bounds=self.bounds,
            verdict=sprt_decision(llr, self.bounds) if self.pairs else None)
