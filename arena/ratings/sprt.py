"""The generalized SPRT (GSPRT) on pentanomial pair counts, logistic Elo, as in Fishtest.

:class:`SprtTest` is the running test ``arena sprt`` feeds one colour-swapped pair at a time;
the functions beneath it (bounds, the constrained maximum-likelihood distribution, the
log-likelihood ratio, the decision) are pure and tested one by one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, Optional, Sequence

import numpy as np
from scipy import optimize

from arena.errors import ArenaError
from arena.ratings.elo import (PENTANOMIAL_VALUES, TRINOMIAL_VALUES, pentanomial_index,
                               score_from_elo)


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


def mle_with_mean(probs: Sequence[float] | np.ndarray, values: Sequence[float],
                  mean: float) -> np.ndarray:
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
    x = float(optimize.brentq(secular, lo + eps * width, hi - eps * width, xtol=1e-15))
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
