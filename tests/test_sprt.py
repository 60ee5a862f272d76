"""``arena sprt`` (issue 13, item 7): the statistics of its summary and its two Elo models
checked against fishtest's and fastchess's formulas and reference values, and the command
with real bots: --clock, --book, the summary, the progress line, resuming after an
interruption."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import optimize, stats

from arena.cli import cli
from arena.ratings import SprtTest, normalized_llr, pentanomial_llr, sprt_llr
from arena.records import read_records

ROOT = Path(__file__).resolve().parent.parent
ARENA = str(Path(sys.executable).with_name("arena"))


def _penta(ll: int, ld: int, wl: int, dd: int, wd: int, ww: int) -> list[int]:
    """fastchess's six pair classes as our five ``[LL, LD, WL+DD, WD, WW]``."""
    return [ll, ld, wl + dd, wd, ww]


# -- the LLR: fastchess's test cases (app/tests/sprt_test.cpp), 2 decimals, 1 % --------------

@pytest.mark.parametrize("counts, elo0, elo1, expected", [
    (_penta(365, 16618, 36029, 200, 16974, 390), 0, 2, 2.25),
    (_penta(127, 4883, 10311, 401, 5150, 104), -1.75, 0.25, 3.01),
    (_penta(0, 0, 0, 0, 0, 5550), 0, 5, 111.82),
    ([36027, 68692, 36433], 0, 2, 0.92),          # trinomial [L, D, W]
    ([10650, 20431, 10871], -1.75, 0.25, 2.30),
    ([0, 0, 4250], 0, 10, 120.56),
])
def test_normalized_llr_matches_fastchess(counts: list[int], elo0: float, elo1: float,
                                          expected: float) -> None:
    assert normalized_llr(counts, elo0, elo1) == pytest.approx(expected, rel=0.01)
    assert sprt_llr(counts, elo0, elo1, "normalized") == normalized_llr(counts, elo0, elo1)


@pytest.mark.parametrize("counts, elo0, elo1, expected", [
    (_penta(223, 9863, 20279, 1000, 10037, 246), 0.5, 2.5, -3.07),
    (_penta(871, 26175, 55003, 980, 26678, 821), 0, 2, -4.98),
    ([57030, 106593, 57433], 0, 2, -2.59),
])
def test_logistic_llr_matches_fastchess(counts: list[int], elo0: float, elo1: float,
                                        expected: float) -> None:
    assert pentanomial_llr(counts, elo0, elo1) == pytest.approx(expected, rel=0.01)


def _normalized_llr_by_direct_optimisation(counts: list[float], nelo0: float,
                                           nelo1: float) -> float:
    """The normalised GLLR computed independently of the fixed-point iteration: for each
    hypothesis, the pentanomial distribution of largest likelihood whose pair t-value
    ``(mean - 1/2) / sd`` is ``sqrt 2 * nelo * ln 10 / 800``, by SLSQP."""
    c = np.where(np.asarray(counts, float) == 0, 1e-3, np.asarray(counts, float))
    n, phat = c.sum(), c / c.sum()
    a = np.array([0, 0.25, 0.5, 0.75, 1.0])

    def best(nelo: float) -> np.ndarray:
        t = math.sqrt(2) * nelo * math.log(10) / 800

        def t_gap(p: np.ndarray) -> float:
            mu = p @ a
            return float((mu - 0.5) - t * math.sqrt(p @ (a - mu) ** 2))

        res = optimize.minimize(lambda p: -float(phat @ np.log(p)), phat, method="SLSQP",
                                bounds=[(1e-12, 1)] * 5,
                                constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1},
                                             {"type": "eq", "fun": t_gap}],
                                options={"ftol": 1e-15, "maxiter": 1000})
        assert res.success, res.message
        return np.asarray(res.x)

    p0, p1 = best(nelo0), best(nelo1)
    return float(n * phat @ (np.log(p1) - np.log(p0)))


@pytest.mark.parametrize("counts, nelo0, nelo1", [
    ([3, 9, 20, 12, 6], 0, 10),
    ([10, 30, 50, 25, 8], -5, 5),
    ([0, 4, 10, 7, 1], 0, 20),
])
def test_normalized_llr_matches_direct_constrained_mle(counts: list[float], nelo0: float,
                                                       nelo1: float) -> None:
    assert normalized_llr(counts, nelo0, nelo1) == pytest.approx(
        _normalized_llr_by_direct_optimisation(counts, nelo0, nelo1), abs=1e-4)


def test_sprt_test_reads_its_bounds_in_its_model() -> None:
    counts = [5, 20, 40, 25, 10]
    logistic = pentanomial_llr(counts, 0, 10)
    normalized = normalized_llr(counts, 0, 10)
    assert logistic != pytest.approx(normalized, rel=0.05)
    test = SprtTest(0, 10, model="normalized")
    for k, n in enumerate(counts):
        for _ in range(n):
            test.add_pair(k / 2)
    assert test.llr == pytest.approx(normalized)
    with pytest.raises(Exception, match="unknown SPRT model"):
        SprtTest(0, 10, model="bayesian")  # type: ignore[arg-type]


# -- the summary: fishtest's stat_util.get_elo and fastchess's EloPentanomial, written out ---

def _fishtest_get_elo(results: list[float]) -> tuple[float, float, float]:
    """fishtest ``server/fishtest/stats/stat_util.py`` ``get_elo`` on pentanomial counts,
    written out here from its formulas: per-game score and variance from pair counts, the
    normal 95 % interval of the score mapped to Elo, LOS = Phi(z)."""
    results = [r if r else 1e-3 for r in results]
    n = sum(results)
    games = n * (len(results) - 1) / 2.0
    mu = sum(r * (i / 2.0) for i, r in enumerate(results)) / games
    mu_ = (len(results) - 1) / 2.0 * mu
    var = sum(r * (i / 2.0 - mu_) ** 2 for i, r in enumerate(results)) / games

    def elo(x: float) -> float:
        x = min(max(x, 1e-3), 1 - 1e-3)
        return -400 * math.log10(1 / x - 1)

    sd = math.sqrt(var)
    lo = mu + stats.norm.ppf(0.025) * sd / math.sqrt(games)
    hi = mu + stats.norm.ppf(0.975) * sd / math.sqrt(games)
    return elo(mu), (elo(hi) - elo(lo)) / 2, float(stats.norm.cdf((mu - 0.5) / (sd / math.sqrt(games))))


def _fastchess_nelo(counts: list[int]) -> tuple[float, float]:
    """fastchess ``elo_pentanomial.cpp``: nElo = (score - 1/2) / sqrt(2 var) * 800 / ln 10,
    var the variance of a pair's average score; its error maps the score's interval."""
    pairs = sum(counts)
    p = [c / pairs for c in counts]
    score = sum(pi * v for pi, v in zip(p, (0, 0.25, 0.5, 0.75, 1)))
    var = sum(pi * (v - score) ** 2 for pi, v in zip(p, (0, 0.25, 0.5, 0.75, 1)))

    def nelo(s: float) -> float:
        return (s - 0.5) / math.sqrt(2 * var) * (800 / math.log(10))

    half = 1.959963984540054 * math.sqrt(var / pairs)
    return nelo(score), (nelo(score + half) - nelo(score - half)) / 2


@pytest.mark.parametrize("games", [
    [(1, 1), (1, 0.5), (0.5, 0.5), (1, 0), (0, 0.5), (1, 1), (0.5, 1), (0, 0), (1, 0.5),
     (0.5, 0.5), (1, 0)] * 3,
    [(1, 0), (0.5, 0.5), (0, 0.5), (0.5, 1), (0, 1), (0.5, 0.5), (0, 0), (1, 1)] * 5,
])
def test_summary_figures_match_fishtest_and_fastchess(games: list[tuple[float, float]]) -> None:
    """Every pair class occurs (fishtest adds 1e-3 pairs to an empty class; arena does not,
    docs/RATINGS.md)."""
    test = SprtTest(0, 5, alpha=0.05, beta=0.05)
    for first, second in games:
        test.add_games(first, second)
    s = test.summary()
    scores = [x for pair in games for x in pair]
    assert (s.wins, s.draws, s.losses) == (scores.count(1), scores.count(0.5), scores.count(0))
    assert s.games == 2 * len(games) and s.pairs == len(games)
    counts = [0] * 5
    for first, second in games:
        counts[int(2 * (first + second))] += 1
    assert list(s.counts) == counts
    elo, elo95, los = _fishtest_get_elo([float(c) for c in counts])
    assert s.estimate is not None
    assert s.estimate.elo == pytest.approx(elo, abs=1e-6)
    assert s.estimate.elo95 == pytest.approx(elo95, abs=1e-6)
    assert s.estimate.los == pytest.approx(los, abs=1e-9)
    nelo, nelo95 = _fastchess_nelo(counts)
    assert s.estimate.nelo == pytest.approx(nelo, abs=1e-9)
    assert s.estimate.nelo95 == pytest.approx(nelo95, abs=1e-9)
    assert s.bounds == pytest.approx((math.log(0.05 / 0.95), math.log(0.95 / 0.05)))
    assert s.llr == pytest.approx(pentanomial_llr(counts, 0, 5))
    assert s.verdict is None if s.bounds[0] < s.llr < s.bounds[1] else s.verdict is not None


def test_summary_before_any_pair_and_bad_scores() -> None:
    s = SprtTest().summary()
    assert s.estimate is None and s.llr == 0 and s.verdict is None and s.games == 0
    with pytest.raises(Exception, match="not a game score"):
        SprtTest().add_games(1, 0.25)
