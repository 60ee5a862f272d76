"""Elo and expected score; two-bot estimates from outcome counts.

The logistic Elo scale (a 400-point gap means 10:1 expected score) and, for one bot against
another, the engine testers' **trinomial** (W/D/L over games) and **pentanomial** (colour-
swapped pairs ``[LL, LD, WL+DD, WD, WW]``) estimates: Elo, its 95 % interval, LOS and
Fishtest's normalised Elo.  Pure computation (numpy, scipy); ``docs/RATINGS.md`` explains
every number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
# scipy.special, not scipy.stats: the normal CDF and quantile are ndtr and ndtri (what
# stats.norm calls), without the second and a half scipy.stats takes to import
from scipy import special

from arena.errors import ArenaError

#: Elo points per natural-log unit of odds: Elo = 400 * log10(odds) = ELO_PER_NAT * ln(odds).
ELO_PER_NAT: float = 400.0 / math.log(10.0)
#: the two-sided 95 % normal quantile, 1.959963984540054
Z95: float = float(special.ndtri(0.975))
#: Fishtest's normalised-Elo constant 800 / ln 10
NELO_PER_T: float = 800.0 / math.log(10.0)
#: a pair's average score per game for the pentanomial classes LL, LD, WL+DD, WD, WW
PENTANOMIAL_VALUES: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
#: a game's score for the trinomial classes L, D, W
TRINOMIAL_VALUES: tuple[float, ...] = (0.0, 0.5, 1.0)
#: the prior where the data alone give no finite Elo: this many virtual draws, against the
#: opponent for two bots, against a virtual opponent at the centre of the scale in the joint
#: fit (BayesElo uses 2; 1 keeps the intervals honest, docs/RATINGS.md, *The prior*)
PRIOR_DRAWS: float = 1.0


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
    return -400.0 * math.log10(1.0 / score - 1.0) + 0.0  # + 0.0: an even score is 0, not -0


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
    ``(score - 0.5) / sigma_per_game * 800 / ln 10``.  ``prior`` is True when the score
    was a perfect 100 % or 0 % and :data:`PRIOR_DRAWS` virtual draws made the Elo finite
    (``score`` and ``elo`` then include them).
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
    prior: bool = False

    @property
    def elo_interval(self) -> tuple[float, float]:
        """The 95 % Elo interval ``elo ± elo95``."""
        return self.elo - self.elo95, self.elo + self.elo95


def wilson_interval(score: float, games: float) -> tuple[float, float]:
    """The Wilson score interval (95 %) of a score per game over ``games`` games.

    It treats each game as a coin toss with the score as its chance (the largest spread a
    score in [0, 1] can have at that mean), so it is never narrower than the data allow; it
    stays inside [0, 1] and touches 1 (or 0) only for a perfect score.
    """
    z2 = Z95 * Z95
    centre = (score + z2 / (2 * games)) / (1 + z2 / games)
    half = Z95 / (1 + z2 / games) * math.sqrt(score * (1 - score) / games
                                             + z2 / (4 * games * games))
    return max(centre - half, 0.0), min(centre + half, 1.0)


def cutechess_los(wins: float, losses: float) -> float:
    """cutechess-cli's LOS from decisive games alone: ``1/2 + 1/2 erf((W - L) / sqrt(2 (W + L)))``.

    0.5 without a decisive game; 0.841 after a single win.
    """
    if wins + losses <= 0:
        return 0.5
    return 0.5 + 0.5 * math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses)))


#: decisive games in an observation of each class (trinomial L, D, W; pentanomial LL .. WW;
#: the middle pentanomial class, WL or DD, is counted as WL: more decisive games, a LOS
#: nearer to 50 %, the cautious side)
_DECISIVE = {1: (1.0, 0.0, 1.0), 2: (2.0, 1.0, 2.0, 1.0, 2.0)}


def _estimate(counts: Sequence[float], values: Sequence[float], per_obs_games: int) -> ScoreEstimate:
    """Mean score, its standard error and the Elo transforms, for counts over ``values``.

    Regular data (some spread, a score strictly between 0 and 1, a normal interval inside
    (0, 1)) get the textbook formulas.  At the edges (docs/RATINGS.md, *Two bots at the
    edges*): a perfect score takes :data:`PRIOR_DRAWS` virtual draws (``prior``); the
    interval is the Wilson score interval over the games when the observations show no
    spread or the normal interval leaves (0, 1); LOS is cutechess's when there is no spread.
    """
    c = np.asarray(counts, dtype=float)
    if c.shape != (len(values),) or np.any(c < 0) or not np.all(np.isfinite(c)):
        raise ArenaError(f"expected {len(values)} non-negative counts, got {list(counts)}")
    n = float(c.sum())
    if n <= 0:
        raise ArenaError("no games to estimate from")
    v = np.asarray(values, dtype=float)
    games = int(round(n)) * per_obs_games
    mu = float(c @ v / n)
    var = float(c @ (v - mu) ** 2 / n)
    sd = math.sqrt(var / n)
    prior = mu <= 0.0 or mu >= 1.0
    if prior:  # no finite Elo from the data: add the virtual draws
        mu = (mu * games + 0.5 * PRIOR_DRAWS) / (games + PRIOR_DRAWS)
    elo = elo_from_score(mu)
    lo, hi = mu - Z95 * sd, mu + Z95 * sd
    edge = sd <= 0 or lo <= 0.0 or hi >= 1.0
    if edge:  # no spread seen, or too few games for the normal approximation
        lo, hi = wilson_interval(mu, games + (PRIOR_DRAWS if prior else 0.0))
        decisive = float(c @ np.asarray(_DECISIVE[len(values) // 2]))
        margin = float(c @ v) * per_obs_games * 2 - games   # W - L over the games
        los = cutechess_los((decisive + margin) / 2, (decisive - margin) / 2)
    else:
        los = float(special.ndtr((mu - 0.5) / sd))
    elo95 = (elo_from_score(hi) - elo_from_score(lo)) / 2.0
    if sd > 0:
        sigma_pg = math.sqrt(per_obs_games * var)
        nelo = (mu - 0.5) / sigma_pg * NELO_PER_T
    else:  # every observation identical: no spread to measure
        nelo = 0.0 if mu == 0.5 else math.copysign(math.inf, mu - 0.5)
    nelo95 = Z95 * NELO_PER_T / math.sqrt(games)
    return ScoreEstimate(n=int(round(n)), games=games, score=mu, score_sd=sd, elo=elo,
                         elo95=elo95, los=los, nelo=nelo, nelo95=nelo95, prior=prior)


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


def pentanomial_index(pair_score: float) -> int:
    """The pentanomial class (0..4 = LL, LD, WL+DD, WD, WW) of one pair's total score 0..2."""
    k = int(round(pair_score * 2))
    if not 0 <= k <= 4 or abs(k - pair_score * 2) > 1e-9:
        raise ArenaError(f"not a pair score: {pair_score}")
    return k
