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
* Bots without a finite maximum-likelihood Elo (100 % or 0 % scores, a group that won or
  lost every game against the rest, results without an upset, bots never connected by games
  to the main group) are **flagged** and get their Elo from a **prior** (one virtual draw against the
  centre of the scale, :func:`~arena.ratings.fit.fit_with_prior`); the others keep their
  maximum-likelihood numbers.  Tables rank every bot by points, bots level on points, head
  to head and Sonneborn-Berger sharing a place (:func:`arena.standings.places`).
* Two-bot estimates never give a zero-width or infinite interval or a certain LOS from
  little data (the Wilson interval, cutechess's LOS, the same prior for perfect scores).
* Two-bot matches get the engine testers' **trinomial / pentanomial** statistics and the
  **generalized SPRT** (GSPRT) on pentanomial pair counts, as in Fishtest.

This package is the public face; one module per concern sits behind it, each importing only
the ones above it in this list:

* :mod:`~arena.ratings.elo`: Elo <-> score, trinomial and pentanomial estimates, LOS;
* :mod:`~arena.ratings.sprt`: the GSPRT (logistic and normalised Elo), :class:`SprtTest` and
  its :class:`SprtSummary`;
* :mod:`~arena.ratings.mle`: games as arrays, count matrices, the Newton fit of strengths;
* :mod:`~arena.ratings.intervals`: sandwich and bootstrap covariance;
* :mod:`~arena.ratings.fit`: :func:`fit_bradley_terry` (Elo and covariance), rateable bots;
* :mod:`~arena.ratings.tables`: :func:`rate` / :func:`rate_all` standings, match statistics,
  head to head, rows for CSV / JSON / pandas.
"""

from __future__ import annotations

from arena.ratings.elo import (ELO_PER_NAT, NELO_PER_T, PENTANOMIAL_VALUES, PRIOR_DRAWS,
                               TRINOMIAL_VALUES, Z95, ScoreEstimate, cutechess_los,
                               elo_from_score, pentanomial_estimate, pentanomial_index,
                               score_from_elo, trinomial_estimate, wilson_interval)
from arena.ratings.fit import (Fit, Rateable, find_rateable, fit_bradley_terry, fit_every_bot,
                              fit_with_prior)
from arena.ratings.intervals import (MIN_SANDWICH_CLUSTERS, IntervalMethod, bootstrap_covariance,
                                     sandwich_covariance)
from arena.ratings.mle import FitError, GameArrays, fit_theta, game_arrays, pair_matrices
from arena.ratings.sprt import (NELO_BOUND, SPRT_MODELS, SprtModel, SprtSummary, SprtTest, SprtVerdict,
                                mle_with_mean, mle_with_t_value, normalized_llr,
                                pentanomial_llr, sprt_bounds, sprt_decision, sprt_llr)
from arena.ratings.tables import (COLUMNS, BotStanding, Match, Standings, all_matches,
                                  head_to_head, match_stats, parse_anchor, rate, rate_all,
                                  ratings_table, standings_rows)

__all__ = [
    # elo
    "ELO_PER_NAT", "NELO_PER_T", "PENTANOMIAL_VALUES", "PRIOR_DRAWS", "TRINOMIAL_VALUES", "Z95",
    "ScoreEstimate", "cutechess_los", "elo_from_score", "pentanomial_estimate",
    "pentanomial_index", "score_from_elo", "trinomial_estimate", "wilson_interval",
    # sprt
    "NELO_BOUND", "SPRT_MODELS", "SprtModel", "SprtSummary", "SprtTest", "SprtVerdict", "mle_with_mean",
    "mle_with_t_value", "normalized_llr", "pentanomial_llr", "sprt_bounds", "sprt_decision",
    "sprt_llr",
    # mle
    "FitError", "GameArrays", "fit_theta", "game_arrays", "pair_matrices",
    # intervals
    "MIN_SANDWICH_CLUSTERS", "IntervalMethod", "bootstrap_covariance", "sandwich_covariance",
    # fit
    "Fit", "Rateable", "find_rateable", "fit_bradley_terry", "fit_every_bot", "fit_with_prior",
    # tables
    "COLUMNS", "BotStanding", "Match", "Standings", "all_matches", "head_to_head", "match_stats",
    "parse_anchor", "rate", "rate_all", "ratings_table", "standings_rows",
]
