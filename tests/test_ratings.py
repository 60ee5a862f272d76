"""Ratings: published vectors, exact Bradley-Terry cases, interval coverage, flags, SPRT."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from arena import ratings as R
from arena.errors import ArenaError
from tests.synth_records import make_record, round_robin

# ---------------------------------------------------------------------------------------
# Published vectors
# ---------------------------------------------------------------------------------------


def test_trinomial_published_vector() -> None:
    e = R.trinomial_estimate(60, 20, 20)
    assert e.elo == pytest.approx(147.2, abs=0.05)
    assert e.elo95 == pytest.approx(66.0, abs=0.05)
    assert e.games == 100 and e.score == pytest.approx(0.7)


def test_pentanomial_published_vector() -> None:
    e = R.pentanomial_estimate([34, 54, 31 + 32, 64, 75])
    assert e.elo == pytest.approx(55.58, abs=0.005)
    assert e.elo95 == pytest.approx(27.65, abs=0.005)
    assert e.n == 290 and e.games == 580


def test_normalised_elo_and_los_follow_their_definitions() -> None:
    counts = [34, 54, 63, 64, 75]
    e = R.pentanomial_estimate(counts)
    v = np.array(R.PENTANOMIAL_VALUES)
    c = np.array(counts, dtype=float)
    mu = c @ v / c.sum()
    var_pair = c @ (v - mu) ** 2 / c.sum()
    # Fishtest: sigma per game = sqrt(2) * sigma of the pair average
    assert e.nelo == pytest.approx((mu - 0.5) / math.sqrt(2 * var_pair) * 800 / math.log(10))
    assert e.los == pytest.approx(stats.norm.cdf((mu - 0.5) / math.sqrt(var_pair / c.sum())))


def test_elo_score_round_trip_and_limits() -> None:
    for elo in (-800.0, -190.85, 0.0, 55.5, 400.0):
        assert R.elo_from_score(R.score_from_elo(elo)) == pytest.approx(elo)
    assert R.score_from_elo(400) == pytest.approx(10 / 11)  # 400 points = 10:1
    assert R.elo_from_score(1.0) == math.inf and R.elo_from_score(0.0) == -math.inf


def test_estimate_rejects_bad_counts() -> None:
    with pytest.raises(ArenaError):
        R.pentanomial_estimate([1, 2, 3])
    with pytest.raises(ArenaError):
        R.trinomial_estimate(0, 0, 0)
    with pytest.raises(ArenaError):
        R.trinomial_estimate(-1, 2, 3)


# ---------------------------------------------------------------------------------------
# SPRT
# ---------------------------------------------------------------------------------------


def _llr_by_direct_optimisation(counts: list[float], elo0: float, elo1: float) -> float:
    """The GLLR computed independently: constrained maximum likelihood by SLSQP."""
    c = np.where(np.array(counts, dtype=float) == 0, 1e-3, counts)
    v = np.array(R.PENTANOMIAL_VALUES)

    def best_loglik(s: float) -> float:
        cons = [{"type": "eq", "fun": lambda p: p.sum() - 1}, {"type": "eq", "fun": lambda p: p @ v - s}]
        res = optimize.minimize(lambda p: -(c @ np.log(p)), np.full(5, 0.2), method="SLSQP",
                                constraints=cons, bounds=[(1e-12, 1)] * 5,
                                options={"ftol": 1e-14, "maxiter": 500})
        return -float(res.fun)

    return best_loglik(R.score_from_elo(elo1)) - best_loglik(R.score_from_elo(elo0))


@pytest.mark.parametrize("counts,elo0,elo1", [
    ([10, 20, 40, 20, 10], 0.0, 5.0),
    ([2, 8, 20, 30, 40], 0.0, 20.0),
    ([0, 0, 3, 5, 12], -5.0, 15.0),
    ([30, 20, 10, 4, 1], 0.0, 10.0),
])
def test_pentanomial_llr_matches_direct_constrained_mle(counts: list[float], elo0: float,
                                                       elo1: float) -> None:
    assert R.pentanomial_llr(counts, elo0, elo1) == pytest.approx(
        _llr_by_direct_optimisation(counts, elo0, elo1), abs=1e-4)


def test_pentanomial_llr_close_to_brownian_approximation_for_large_samples() -> None:
    counts = [400, 1800, 3000, 2000, 500]
    c = np.array(counts, dtype=float)
    v = np.array(R.PENTANOMIAL_VALUES)
    mu = c @ v / c.sum()
    var = c @ (v - mu) ** 2 / c.sum()
    s0, s1 = R.score_from_elo(0), R.score_from_elo(5)
    approx = c.sum() * (s1 - s0) * (2 * mu - s0 - s1) / (2 * var)
    assert R.pentanomial_llr(counts, 0, 5) == pytest.approx(approx, rel=0.01)


def test_llr_sign_and_symmetry() -> None:
    assert R.pentanomial_llr([5, 10, 30, 25, 30], 0, 10) > 0
    assert R.pentanomial_llr([30, 25, 30, 10, 5], 0, 10) < 0
    # swapping hypotheses negates the statistic
    assert R.pentanomial_llr([3, 9, 20, 12, 6], 0, 10) == pytest.approx(
        -R.pentanomial_llr([3, 9, 20, 12, 6], 10, 0))


def test_sprt_bounds_and_decision() -> None:
    lo, hi = R.sprt_bounds(0.05, 0.05)
    assert lo == pytest.approx(math.log(0.05 / 0.95)) and hi == pytest.approx(math.log(0.95 / 0.05))
    lo2, hi2 = R.sprt_bounds(0.05, 0.1)
    assert lo2 == pytest.approx(math.log(0.1 / 0.95)) and hi2 == pytest.approx(math.log(0.9 / 0.05))
    assert R.sprt_decision(3.0, (lo, hi)) == "H1"
    assert R.sprt_decision(-3.0, (lo, hi)) == "H0"
    assert R.sprt_decision(0.1, (lo, hi)) is None
    with pytest.raises(ArenaError):
        R.sprt_bounds(0.0, 0.05)


def test_sprt_reaches_the_right_verdict_on_simulated_pairs() -> None:
    rng = np.random.default_rng(7)
    bounds = R.sprt_bounds(0.05, 0.05)
    # pentanomial distributions with mean scores for +30 Elo and -20 Elo
    for true_elo, expected in ((30.0, "H1"), (-20.0, "H0")):
        s = R.score_from_elo(true_elo)
        base = np.array([0.05, 0.2, 0.5, 0.2, 0.05])
        probs = R.mle_with_mean(base, R.PENTANOMIAL_VALUES, s)
        counts = np.zeros(5)
        verdict = None
        for _ in range(20000):
            counts[rng.choice(5, p=probs / probs.sum())] += 1
            verdict = R.sprt_decision(R.pentanomial_llr(counts, 0, 10), bounds)
            if verdict:
                break
        assert verdict == expected


def test_mle_with_mean_has_that_mean() -> None:
    p = R.mle_with_mean([0.1, 0.2, 0.4, 0.2, 0.1], R.PENTANOMIAL_VALUES, 0.6)
    assert p.sum() == pytest.approx(1) and p @ np.array(R.PENTANOMIAL_VALUES) == pytest.approx(0.6)


# ---------------------------------------------------------------------------------------
# Bradley-Terry
# ---------------------------------------------------------------------------------------


def _games(rows: list[tuple[str, str, float, int]]) -> list:
    """``(white, black, white score, repeat)`` rows as records."""
    out = []
    for w, b, s, k in rows:
        out += [make_record(w, b, s, pair=None) for _ in range(k)]
    return out


def test_bradley_terry_exact_three_bot_case() -> None:
    recs = _games([("A", "B", 1.0, 75), ("A", "B", 0.0, 25), ("B", "C", 1.0, 75),
                   ("B", "C", 0.0, 25), ("A", "C", 1.0, 90), ("A", "C", 0.0, 10)])
    st = R.rate(recs)
    assert [r.bot for r in st.rows] == ["A", "B", "C"]
    assert [r.rank for r in st.rows] == [1, 2, 3]
    assert st.row("A").elo == pytest.approx(190.85, abs=0.01)
    assert st.row("B").elo == pytest.approx(0.0, abs=1e-6)
    assert st.row("C").elo == pytest.approx(-190.85, abs=0.01)
    anchored = R.rate(recs, anchor=("C", 1000.0))
    assert anchored.row("C").elo == 1000.0 and anchored.row("C").elo95 == 0.0
    assert anchored.row("A").elo == pytest.approx(1381.70, abs=0.01)
    # an anchor moves numbers, never the distance between two bots or its uncertainty
    assert anchored.los("A", "B") == pytest.approx(st.los("A", "B"))


def test_draws_count_half_a_point() -> None:
    # 50 wins + 50 draws + 0 losses = 75 % = +190.85; the draws alone keep it finite
    recs = _games([("A", "B", 1.0, 25), ("B", "A", 0.0, 25), ("A", "B", 0.5, 25), ("B", "A", 0.5, 25)])
    st = R.rate(recs)
    assert st.row("A").elo - st.row("B").elo == pytest.approx(190.85, abs=0.01)
    assert st.row("A").wdl == "50-50-0" and st.row("A").draw_ratio == pytest.approx(0.5)
    assert st.row("A").score == pytest.approx(0.75) and not st.row("A").flag


def test_two_bot_fit_interval_agrees_with_pentanomial_formula() -> None:
    recs = round_robin({"a": 60.0, "b": 0.0}, 300, seed=3, draw=0.4)
    st = R.rate(recs)
    m = R.match_stats(recs, "a", "b")
    assert sum(m.pentanomial) == 300 and m.unpaired == 0
    diff = st.row("a").elo - st.row("b").elo
    assert diff == pytest.approx(m.estimate.elo, abs=1e-6)  # both are the score's logit
    sd = st.fit.diff_sd(0, 1) if st.fit else math.nan
    # delta method vs. mapped interval: agree to a few percent
    assert Z95 * sd == pytest.approx(m.estimate.elo95, rel=0.05)


Z95 = R.Z95


def _simulate(rng: np.random.Generator, elos: np.ndarray, pairs: int, draw: float,
              colour: float) -> R.GameArrays:
    """A colour-swapped round robin as arrays; expected score is exactly logistic in Elo."""
    n = elos.size
    ii, jj = np.triu_indices(n, 1)
    a = np.repeat(ii, pairs)
    b = np.repeat(jj, pairs)
    m = 1 / (1 + 10 ** (-(elos[a] - elos[b]) / 400))
    c = np.minimum(colour, np.minimum(m, 1 - m) / 2)
    opening = rng.choice([-1.0, 1.0], size=m.size) * c / 2   # shared by both games of a pair

    def play(mean: np.ndarray) -> np.ndarray:
        d = np.minimum(draw, 2 * np.minimum(mean, 1 - mean))
        u = rng.random(mean.size)
        return np.where(u < mean - d / 2, 1.0, np.where(u < mean + d / 2, 0.5, 0.0))

    s1 = play(m + c / 2 + opening)            # a is white
    s2 = play(1 - m + c / 2 + opening)        # b is white: b's expectation
    cl = np.arange(m.size)
    return R.GameArrays(tuple(f"p{k}" for k in range(n)), np.concatenate([a, b]),
                        np.concatenate([b, a]), np.concatenate([s1, s2]), np.concatenate([cl, cl]))


def test_interval_coverage_on_simulated_tournaments() -> None:
    rng = np.random.default_rng(2024)
    elos = np.array([-150.0, -60.0, 0.0, 40.0, 80.0, 120.0])
    truth = elos - elos.mean()
    covered = total = 0
    naive_ratio = []
    for _ in range(200):
        g = _simulate(rng, elos, pairs=6, draw=0.6, colour=0.3)
        try:
            fit = R.fit_bradley_terry(g)
        except R.FitError:
            continue  # a simulated bot that never scored: no finite rating, not an interval
        covered += int(np.sum(np.abs(fit.elo - truth) <= fit.elo95()))
        total += elos.size
        # the plain (binomial, per-game independent) interval from the information matrix
        n_mat, s_mat = R.pair_matrices(elos.size, g.white, g.black, g.score)
        _, hess, _ = R.fit_theta(n_mat, s_mat)
        t = np.eye(elos.size) - 1 / elos.size
        cov0 = np.zeros_like(hess)
        cov0[1:, 1:] = np.linalg.inv(hess[1:, 1:])
        naive = np.sqrt(np.diag(t @ cov0 @ t.T)) * R.ELO_PER_NAT * Z95
        naive_ratio.append(float(np.mean(naive / fit.elo95())))
    assert total >= 190 * elos.size
    assert 0.90 <= covered / total <= 0.99
    # on draw-heavy, colour-swapped data the binomial formula overstates the interval
    assert np.mean(naive_ratio) > 1.25


def test_bootstrap_and_sandwich_agree() -> None:
    rng = np.random.default_rng(5)
    g = _simulate(rng, np.array([-100.0, 0.0, 50.0, 100.0]), pairs=40, draw=0.4, colour=0.1)
    sand = R.fit_bradley_terry(g)
    boot = R.fit_bradley_terry(g, method="bootstrap", bootstrap_samples=300, seed=1)
    assert np.allclose(sand.elo, boot.elo)
    assert np.allclose(boot.elo95(), sand.elo95(), rtol=0.2)
    again = R.fit_bradley_terry(g, method="bootstrap", bootstrap_samples=300, seed=1)
    assert np.array_equal(again.cov, boot.cov)  # seeded


def test_los_from_joint_covariance() -> None:
    recs = round_robin({"a": 50.0, "b": 0.0, "c": -50.0}, 30, seed=11)
    st = R.rate(recs)
    fit = st.fit
    assert fit is not None
    i, j = fit.index("a"), fit.index("c")
    expected = stats.norm.cdf((fit.elo[i] - fit.elo[j]) / math.sqrt(
        fit.cov[i, i] + fit.cov[j, j] - 2 * fit.cov[i, j]))
    assert st.los("a", "c") == pytest.approx(expected)
    assert st.los("a", "c") + st.los("c", "a") == pytest.approx(1.0)
    top, second = st.rows[0], st.rows[1]
    assert top.los_next == pytest.approx(st.los(top.bot, second.bot))
    assert st.rows[-1].los_next is None


# ---------------------------------------------------------------------------------------
# Flags: perfect scores, disconnected groups
# ---------------------------------------------------------------------------------------


def test_perfect_scores_and_disconnected_groups_rest_on_the_prior() -> None:
    recs = round_robin({"a": 100.0, "b": 0.0, "c": -100.0}, 10, seed=2)
    recs += _games([("ace", "a", 1.0, 2), ("b", "ace", 0.0, 2)])       # 100 %
    recs += _games([("dud", "c", 0.0, 1), ("a", "dud", 1.0, 1)])       # 0 %
    recs += _games([("x", "y", 1.0, 3), ("y", "x", 1.0, 2)])           # separate group
    st = R.rate(recs)
    by = {r.bot: r for r in st.rows}
    assert by["ace"].prior and "100%" in by["ace"].flag
    assert by["dud"].prior and "0%" in by["dud"].flag
    for name in ("x", "y"):
        assert by[name].prior and "not connected" in by[name].flag
    assert all(not by[n].prior and not by[n].flag for n in ("a", "b", "c"))
    # every bot has a rank (by points) and a finite Elo with a finite, non-zero interval
    assert [r.rank for r in st.rows] == list(range(1, len(st.rows) + 1))
    for r in st.rows:
        assert r.rating is not None and math.isfinite(r.rating)
        assert r.rating95 is not None and 0 < r.rating95 < math.inf
        assert (r.elo is None) == r.prior  # the maximum-likelihood Elo only where it exists
    assert by["ace"].rating > max(by[n].rating for n in "abc")   # unbeaten: above the rest
    assert by["dud"].rating < min(by[n].rating for n in "abc")
    assert by["ace"].games == 4 and by["ace"].wins == 4
    # the maximum-likelihood bots keep exactly the numbers of their fit alone
    alone = R.rate(round_robin({"a": 100.0, "b": 0.0, "c": -100.0}, 10, seed=2))
    for n in "abc":
        assert by[n].elo == alone.row(n).elo and by[n].elo95 == alone.row(n).elo95


def test_group_without_upsets_rests_on_the_prior() -> None:
    # {A, B} draw each other and always beat {C, D}, who draw each other: no finite gap
    recs = _games([("A", "B", 0.5, 4), ("C", "D", 0.5, 4), ("A", "C", 1.0, 2), ("B", "D", 1.0, 2),
                   ("C", "B", 0.0, 2)])
    st = R.rate(recs)
    ml = [r.bot for r in st.rows if not r.prior]
    prior = [r for r in st.rows if r.prior]
    assert len(ml) == 2 and len(prior) == 2
    assert all("no finite maximum-likelihood Elo" in r.flag for r in prior)
    assert [r.bot for r in st.rows][:2] in (["A", "B"], ["B", "A"])
    assert (min(st.row("A").rating, st.row("B").rating)
            > max(st.row("C").rating, st.row("D").rating))
    with pytest.raises(R.FitError):
        R.fit_bradley_terry(R.game_arrays(recs))


def test_two_bots_one_sided_rest_on_the_prior() -> None:
    st = R.rate(_games([("A", "B", 1.0, 3), ("B", "A", 0.0, 3)]))
    assert st.fit is not None and set(st.fit.prior) == {"A", "B"}
    assert {r.bot: r.flag.split(" ")[0] for r in st.rows} == {"A": "won", "B": "lost"}
    assert [r.bot for r in st.rows] == ["A", "B"] and [r.rank for r in st.rows] == [1, 2]
    a, b = st.row("A"), st.row("B")
    assert a.rating is not None and b.rating is not None and a.rating == pytest.approx(-b.rating)
    assert a.rating > 0 and a.los_next is not None and 0.5 < a.los_next < 0.999


def test_anchor_missing_from_a_table_keeps_it_centred() -> None:
    recs = round_robin({"a": 0.0, "b": 0.0}, 5, seed=1)
    st = R.rate(recs, anchor=("nobody", 0.0))
    assert st.anchor is None and "nobody" in st.note
    assert st.row("a").elo == pytest.approx(-st.row("b").elo)


def test_parse_anchor() -> None:
    assert R.parse_anchor("random=0") == ("random", 0.0)
    assert R.parse_anchor("my=bot=-12.5") == ("my=bot", -12.5)
    for bad in ("random", "=3", "random=x", "random=nan"):
        with pytest.raises(ArenaError):
            R.parse_anchor(bad)


# ---------------------------------------------------------------------------------------
# Per variant and pooled, pairs, forfeits
# ---------------------------------------------------------------------------------------


def test_rate_all_per_variant_and_pooled() -> None:
    recs = round_robin({"a": 100.0, "b": 0.0}, 20, seed=4, variant="v1", tournament="t1")
    recs += round_robin({"a": -100.0, "b": 0.0}, 20, seed=5, variant="v2", tournament="t1")
    tables = R.rate_all(recs)
    assert [t.label for t in tables] == ["v1", "v2", "all variants"]
    assert tables[0].row("a").elo > 0 > tables[1].row("a").elo
    assert tables[2].games == len(recs) and tables[0].games == len(recs) // 2
    # pairs in different variants with the same (round, pair) are separate clusters
    g = R.game_arrays(recs)
    assert np.unique(g.cluster).size == len(recs) // 2


def test_match_stats_pentanomial_from_records() -> None:
    recs = [
        make_record("A", "B", 1.0, round=0, pair=1), make_record("B", "A", 0.0, round=0, pair=1),  # WW
        make_record("A", "B", 1.0, round=0, pair=2), make_record("B", "A", 1.0, round=0, pair=2),  # WL
        make_record("A", "B", 0.5, round=0, pair=3), make_record("B", "A", 0.5, round=0, pair=3),  # DD
        make_record("A", "B", 0.0, round=0, pair=4), make_record("B", "A", 0.5, round=0, pair=4),  # LD
        make_record("A", "B", 0.5, round=0, pair=5),                                              # lone
        make_record("A", "B", 1.0, pair=None),
    ]
    m = R.match_stats(recs, "A", "B")
    assert m.pentanomial == (0, 1, 2, 0, 1)
    assert m.unpaired == 2
    assert (m.wins, m.draws, m.losses) == (4, 4, 2)
    assert m.draw_ratio == pytest.approx(0.4)
    assert m.estimate is not None and m.estimate.n == 4


def test_forfeits_are_losses_and_counted_by_kind() -> None:
    recs = round_robin({"a": 0.0, "b": 0.0}, 10, seed=9)
    recs += [make_record("a", "b", 0.0, termination="timeout", forfeit="white", pair=None),
             make_record("b", "a", 1.0, termination="crash", forfeit="black", pair=None),
             make_record("b", "a", 1.0, termination="timeout", forfeit="black", pair=None)]
    row = R.rate(recs).row("a")
    assert row.forfeits == {"timeout": 2, "crash": 1}
    assert row.forfeits_text() == "crash 1, timeout 2"
    assert R.rate(recs).row("b").forfeits == {}


def test_ratings_table_columns() -> None:
    recs = round_robin({"a": 50.0, "b": 0.0, "c": 0.0}, 5, seed=1)
    df = R.ratings_table(R.rate_all(recs))
    assert list(df.columns) == list(R.COLUMNS)
    assert len(df) == 3 and df["games"].sum() == 2 * len(recs)


def test_sandwich_meat_fast_path_equals_the_general_formula() -> None:
    from scipy import sparse, special

    from arena.ratings.intervals import _sandwich_meat

    rng = np.random.default_rng(0)
    n = 6
    theta = rng.normal(size=n)
    white = rng.integers(0, n, 300)
    black = (white + rng.integers(1, n, 300)) % n
    score = rng.choice([0.0, 0.5, 1.0], 300)
    same = np.arange(150)
    for cluster in (np.repeat(np.arange(150), 2), rng.integers(0, 40, 300), np.arange(300)):
        meat, g = _sandwich_meat(theta, white, black, score, cluster)
        resid = score - special.expit(theta[white] - theta[black])
        _, ci = np.unique(cluster, return_inverse=True)
        m = sparse.csr_matrix((np.r_[resid, -resid], (np.r_[ci, ci], np.r_[white, black])),
                              shape=(g, n))
        assert np.allclose(meat, (m.T @ m).toarray())
    # clusters of two colour-swapped games between the same bots (the fast path)
    a, b = white[:150], black[:150]
    meat, g = _sandwich_meat(theta, np.r_[a, b], np.r_[b, a], score, np.r_[same, same])
    resid = score - special.expit(theta[np.r_[a, b]] - theta[np.r_[b, a]])
    m = sparse.csr_matrix((np.r_[resid, -resid], (np.r_[same, same, same, same],
                                                  np.r_[a, b, b, a])), shape=(150, n))
    assert g == 150 and np.allclose(meat, (m.T @ m).toarray())


def test_all_matches_agrees_with_match_stats() -> None:
    recs = round_robin({"a": 50.0, "b": 0.0, "c": -50.0}, 4, seed=6)
    recs.append(make_record("c", "a", 1.0, pair=None))
    found = R.all_matches(recs, order=["c", "b", "a"])
    assert [(m.a, m.b) for m in found] == [("c", "b"), ("c", "a"), ("b", "a")]
    for m in found:
        assert m == R.match_stats(recs, m.a, m.b)
    assert sum(m.games for m in found) == len(recs)


def test_few_pairs_all_split_still_give_a_real_interval() -> None:
    """Two pairs, each won by White: the sandwich alone would say +-0; the interval must not."""
    recs = [make_record("A", "B", 1.0, round=1, pair=p) for p in (1, 2)]
    recs += [make_record("B", "A", 1.0, round=1, pair=p) for p in (1, 2)]
    st = R.rate(recs)
    assert st.row("A").elo == pytest.approx(0.0, abs=1e-6)
    assert st.row("A").elo95 > 100  # four games cannot pin a rating down to a few Elo


# ---------------------------------------------------------------------------------------
# Statistics at the edges (issue 12): never a zero-width or infinite interval, never a
# certainty the data cannot give
# ---------------------------------------------------------------------------------------


def _pairs(a: str, b: str, pairs: int, first: float, second: float) -> list:
    """``pairs`` colour-swapped pairs: a (White) scores ``first``, then b (White) ``second``."""
    out = []
    for p in range(pairs):
        out.append(make_record(a, b, first, round=0, pair=p))
        out.append(make_record(b, a, second, round=0, pair=p))
    return out


@pytest.mark.parametrize("pairs", [1, 2, 10, 29, 30, 31, 100])
@pytest.mark.parametrize("first,second", [(0.5, 0.5), (1.0, 1.0)])
@pytest.mark.parametrize("method", ["sandwich", "bootstrap"])
def test_all_drawn_or_all_split_pairs_get_a_real_interval(pairs: int, first: float,
                                                          second: float, method: str) -> None:
    recs = _pairs("A", "B", pairs, first, second)
    st = R.rate(recs, method=method, bootstrap_samples=50)  # type: ignore[arg-type]
    half = st.row("A").elo95
    assert half is not None and math.isfinite(half)
    # the model-based (coin-toss) interval: 2 * pairs games at an even score, per bot
    model = Z95 * math.sqrt(1 / (2 * pairs * 0.25)) / 2 * R.ELO_PER_NAT
    assert half == pytest.approx(model, rel=1e-6)
    m = R.match_stats(recs, "A", "B")
    assert m.estimate is not None and 0 < m.estimate.elo95 < math.inf
    assert m.estimate.los == 0.5 and m.estimate.elo == 0.0


def test_the_sandwich_floor_leaves_regular_data_alone() -> None:
    rng = np.random.default_rng(3)
    g = _simulate(rng, np.array([-100.0, 0.0, 100.0]), pairs=40, draw=0.9, colour=0.0)
    n_mat, s_mat = R.pair_matrices(3, g.white, g.black, g.score)
    theta, hess, _ = R.fit_theta(n_mat, s_mat)
    from arena.ratings.intervals import _sandwich_meat, model_covariance

    meat, clusters = _sandwich_meat(theta, g.white, g.black, g.score, g.cluster)
    h_inv = np.linalg.inv(hess[1:, 1:])
    raw = clusters / (clusters - 1) * (h_inv @ meat[1:, 1:] @ h_inv)
    cov = R.sandwich_covariance(theta, hess, g.white, g.black, g.score, g.cluster)
    assert np.array_equal(cov[1:, 1:], raw)  # 90 % draws: narrower than the model, kept
    assert np.all(np.diag(raw) < np.diag(model_covariance(hess))[1:])


def test_a_single_win_is_not_a_certainty() -> None:
    e = R.trinomial_estimate(1, 0, 0)
    assert e.los == pytest.approx(0.8413, abs=1e-4)  # cutechess: 1/2 + 1/2 erf(1/sqrt 2)
    assert e.prior and math.isfinite(e.elo) and 0 < e.elo95 < math.inf
    assert R.cutechess_los(1, 0) == pytest.approx(0.841344746)
    assert R.cutechess_los(0, 0) == 0.5
    p = R.pentanomial_estimate([0, 0, 0, 0, 1])
    assert p.prior and p.los < 0.99 and math.isfinite(p.elo95)


def test_a_single_draw_is_zero_not_minus_zero() -> None:
    e = R.trinomial_estimate(0, 1, 0)
    assert math.copysign(1.0, e.elo) == 1.0 and f"{e.elo:+.1f}" == "+0.0"
    assert 0 < e.elo95 < math.inf and e.los == 0.5 and not e.prior
    assert f"{R.elo_from_score(0.5):.1f}" == "0.0"


@pytest.mark.parametrize("counts", [[0, 0, 0, 1, 1], [0, 0, 0, 0, 2], [1, 0, 0, 0, 1],
                                    [0, 0, 1, 0, 1], [2, 0, 0, 0, 0], [0, 0, 0, 2, 0]])
def test_few_pairs_never_give_an_infinite_interval_or_a_certainty(counts: list[int]) -> None:
    e = R.pentanomial_estimate(counts)
    assert math.isfinite(e.elo) and 0 < e.elo95 < math.inf
    assert 0.01 < e.los < 0.99  # two pairs cannot make anyone 99 % sure
    lo, hi = e.elo_interval
    assert lo < e.elo < hi


def test_regular_two_bot_data_are_unchanged_by_the_edge_rules() -> None:
    # the published vectors again, now with every field that the edge rules could touch
    e = R.pentanomial_estimate([34, 54, 31 + 32, 64, 75])
    assert not e.prior and e.los == pytest.approx(stats.norm.cdf((e.score - 0.5) / e.score_sd))
    t = R.trinomial_estimate(60, 20, 20)
    assert not t.prior and t.elo == pytest.approx(147.19, abs=0.005)
    assert t.elo95 == pytest.approx(66.01, abs=0.005)


def test_prior_draws_constant_agrees_with_the_report() -> None:
    from arena.report import tables

    assert tables.PRIOR_DRAWS == R.PRIOR_DRAWS


# ---------------------------------------------------------------------------------------
# Every bot rated: the prior where the maximum-likelihood Elo does not exist
# ---------------------------------------------------------------------------------------


def _coverage(elos: list[float], pairs: int, draw: float, sims: int, seed: int
              ) -> tuple[float, float, int]:
    """(coverage of all bots, of the bots on the prior, perfect-order tournaments seen)."""
    from arena.ratings.fit import fit_every_bot

    rng = np.random.default_rng(seed)
    truth_all = np.asarray(elos)
    covered = total = on_prior = prior_covered = perfect = 0
    for _ in range(sims):
        fit, _ = fit_every_bot(_simulate(rng, truth_all, pairs=pairs, draw=draw, colour=0.0))
        assert fit is not None
        truth = truth_all[[int(p[1:]) for p in fit.players]]
        ml = [k for k, p in enumerate(fit.players) if p not in fit.prior]
        truth = truth - (truth[ml].mean() if ml else truth.mean())  # the fit's centring
        ok = np.abs(fit.elo - truth) <= fit.elo95()
        assert np.all(np.isfinite(fit.elo)) and np.all(fit.elo95() > 0)
        covered += int(ok.sum())
        total += ok.size
        prior = [k for k, p in enumerate(fit.players) if p in fit.prior]
        on_prior += len(prior)
        prior_covered += int(ok[prior].sum())
        perfect += len(prior) == len(elos)
    return covered / total, prior_covered / max(on_prior, 1), perfect


def test_perfect_order_tournaments_get_honest_intervals() -> None:
    """4 bots 400 Elo apart, one colour-swapped pair per match (12 games): more than half of
    these tournaments order the bots without an upset, so every Elo rests on the prior."""
    everyone, on_prior, perfect = _coverage([-600.0, -200.0, 200.0, 600.0], 1, 0.0, 60, 11)
    assert perfect >= 25
    assert everyone >= 0.90 and on_prior >= 0.90


def test_prior_intervals_with_draws_and_closer_bots() -> None:
    everyone, on_prior, _ = _coverage([-300.0, -100.0, 100.0, 300.0], 1, 0.3, 60, 12)
    assert everyone >= 0.90 and on_prior >= 0.90


def test_the_prior_is_one_virtual_draw_against_the_centre() -> None:
    # two bots, one game: each bot's only evidence besides its virtual draw against the
    # centre is the one game, so by symmetry the fit solves E(d) + 1/2 E(-d/2)... exactly:
    recs = _games([("A", "B", 1.0, 1)])
    fit = R.rate(recs).fit
    assert fit is not None and set(fit.prior) == {"A", "B"}
    a = fit.elo[fit.index("A")] / R.ELO_PER_NAT
    # stationarity for A at +a, B at -a, the virtual opponent at 0:
    # (1 - E(2a)) + 1 * (1/2 - E(a)) = 0
    expit = lambda x: 1 / (1 + math.exp(-x))  # noqa: E731
    assert (1 - expit(2 * a)) + (0.5 - expit(a)) == pytest.approx(0.0, abs=1e-7)
    assert R.PRIOR_DRAWS == 1.0


def test_rank_is_by_points_with_head_to_head_then_sonneborn_berger() -> None:
    from arena.standings import rank_bots, ranking

    # A and B both 2 points; B beat A head to head, so B ranks above A
    recs = _games([("B", "A", 1.0, 1), ("A", "C", 1.0, 2), ("B", "C", 1.0, 1)])
    assert rank_bots(recs) == ["B", "A", "C"]
    st = R.rate(recs)
    assert [r.bot for r in st.rows] == ["B", "A", "C"] and [r.rank for r in st.rows] == [1, 2, 3]
    # level on points and head to head (a draw): Sonneborn-Berger decides (a double round
    # robin of three where everyone is level: 2 points each)
    recs = _games([("A", "B", 1.0, 1), ("B", "C", 1.0, 1), ("C", "A", 1.0, 1),
                   ("B", "A", 0.5, 1), ("C", "B", 0.5, 1), ("A", "C", 0.5, 1)])
    assert ranking(recs) == "points"
    st = R.rate(recs)
    assert st.ranked_by == "points" and "points" in st.caption
    # head to head level too (1.5 each against the other two); SB equal; Elo decides
    assert sorted(r.bot for r in st.rows) == ["A", "B", "C"]
    # bots that played different numbers of games are ranked by Elo (or, without a fit,
    # by score per game), never by points: a bot's points grow with the games it plays
    recs = _games([("A", "B", 0.5, 1), ("A", "C", 1.0, 1), ("D", "B", 1.0, 1),
                   ("C", "D", 0.5, 1), ("C", "B", 1.0, 1)])
    assert ranking(recs) == "score" and rank_bots(recs)[:2] == ["A", "D"]  # 0.75 a game
    assert rank_bots(recs)[-1] == "B"
    st = R.rate(recs)
    assert st.ranked_by == "elo" and "Elo" in st.caption
    ratings = [r.rating if r.rating is not None else r.prior_elo for r in st.rows]
    # best Elo first; A and D are level on Elo (to a millionth: the fit is symmetric) and on
    # points, so Sonneborn-Berger orders them (A beat C, the stronger of their opponents)
    assert all(a >= b - 1e-6 for a, b in zip(ratings, ratings[1:]))  # type: ignore[operator]
    assert [r.bot for r in st.rows][:2] == ["A", "D"] and not st.rows[0].shared


def test_a_gauntlet_entrant_with_many_games_does_not_top_bots_with_better_results() -> None:
    """A third-party engine played 48 games against three bots that met nobody else (16
    each): it has the most points but not the best results; it is not ranked first."""
    from arena.standings import compute_standings

    recs = (_games([("X", "a", 0.0, 8), ("a", "X", 1.0, 8)])      # a beats X 16 of 16
            + _games([("X", "b", 1.0, 1), ("b", "X", 1.0, 15)])   # b 15 of 16
            + _games([("X", "c", 1.0, 16)]))                     # X beats c 16 of 16
    runner = compute_standings(recs)["nine-mens-morris"]
    assert runner[0].name != "X" and runner[0].name == "a"
    assert R.rate(recs).rows[0].bot != "X"


def test_runner_standings_rank_like_the_ratings_table() -> None:
    from arena.standings import compute_standings

    recs = _games([("B", "A", 1.0, 1), ("A", "C", 1.0, 2), ("B", "C", 1.0, 1)])
    runner = compute_standings(recs, players=("A", "B", "C", "idle"))["nine-mens-morris"]
    assert [t.name for t in runner] == [r.bot for r in R.rate(recs).rows] + ["idle"]


def test_every_small_two_bot_sample_has_a_finite_interval_and_an_uncertain_los() -> None:
    import itertools

    for pairs in range(1, 6):
        for counts in itertools.product(range(pairs + 1), repeat=5):
            if sum(counts) != pairs:
                continue
            e = R.pentanomial_estimate(list(counts))
            assert math.isfinite(e.elo) and 0 < e.elo95 < math.inf and 0 < e.los < 1, counts
            assert pairs > 2 or 0.01 < e.los < 0.99, counts
    for w, d, loss in itertools.product(range(6), repeat=3):
        if w + d + loss:
            e = R.trinomial_estimate(w, d, loss)
            assert math.isfinite(e.elo) and 0 < e.elo95 < math.inf and 0 < e.los < 1
