"""A ladder that scales (issue 26): uploads into a ladder of 1,000 bots with known strengths,
simulated without processes (each game's result drawn from the Elo model), scheduled by the
server's own choice of opponents (:func:`arena.server.ladder.choose_opponents`) and rated by
its own fit (:func:`arena.server.ladder.fit_standings`), for all-play-all and for
``ladder.opponents: 40``; then the server's leaderboard fit on a real SQLite file of 1,000
active bots and 200,000 finished games.

* The ladder is built by 1,000 uploads of new bots (true Elo drawn from N(0, 200)), then
  ``N`` more uploads are new versions of random participants' bots (their strength moves by
  N(+30, 60)); ``pairs: 2``, one variant.  Printed for each policy: games per upload (and
  the bound ``2 * K * pairs * variants``), the games played in all, and after the ``N``
  uploads the RMS error of the active bots' Elo against the truth (both centred) and the
  rank correlation.  As in the server, ratings are those of the latest fit (refitted every
  25 uploads here) and a new version starts from its previous version's rating.
* Equal budgets: all-play-all is information per game at its worst (most of its games are
  between bots hundreds of Elo apart); the line "K=40 at all-play-all's budget" gives the
  K = 40 policy as many pairs per opponent as make its games per upload equal.
* Idle games (``ladder.idle_games``): the K = 40 ladder after the same uploads, then rounds
  of idle games (:func:`idle_round`: a pair for every active bot, least played first,
  against one of the nearest in rating), and the RMS error after 10, 40, 160 and 640
  rounds beside the games played in all: how the error comes down to all-play-all's while
  each upload still costs at most ``2 * K * pairs * variants`` games.
* The leaderboard: :meth:`~arena.server.service.Competition.leaderboard` on 1,000 bots and
  200,000 games in SQLite, cold (every row read) and after one more game (rows read
  incrementally: the fit alone), beside one pass over the games (the count matrices).

Run alone with ``python benchmarks/bench_ladder.py [--quick]``.
"""

from __future__ import annotations

import os
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as bench_ratings: the algorithm, not BLAS
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from arena.server.ladder import IDLE_NEAREST, choose_opponents, fit_standings  # noqa: E402

PAIRS = 2
REFIT_EVERY = 25


class Ladder:
    """A simulated ladder: bots with true strengths, the games played, the latest fit."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.pick = random.Random(seed)
        self.truth: dict[int, float] = {}
        self.active: dict[int, int] = {}  # participant -> their active bot
        self.white: list[np.ndarray] = []
        self.black: list[np.ndarray] = []
        self.score: list[np.ndarray] = []
        self.pair: list[np.ndarray] = []
        self.pairs_played = 0
        self.ratings: dict[int, float] = {}
        self.per_upload: list[int] = []
        #: the games played when :meth:`fit` last ran (no fit again on the same games)
        self.fitted_at = -1

    def play(self, bot: int, opponents: list[int], pairs: int) -> None:
        """``pairs`` colour-swapped pairs of ``bot`` against each opponent, results drawn
        from the Elo model (30 % draws where the game is even)."""
        if not opponents:
            self.per_upload.append(0)
            return
        opp = np.repeat(np.asarray(opponents, dtype=np.int64), pairs)
        me = np.full(opp.size, bot, dtype=np.int64)
        truth = np.asarray([self.truth[o] for o in opp.tolist()])
        mine = self.truth[bot]
        cl = np.arange(self.pairs_played, self.pairs_played + opp.size)
        self.pairs_played += opp.size
        for w, b, sign in ((me, opp, 1.0), (opp, me, -1.0)):
            expect = 1.0 / (1.0 + 10.0 ** (-sign * (mine - truth) / 400.0))
            draw = np.minimum(0.3, 2 * np.minimum(expect, 1 - expect))
            u = self.rng.random(opp.size)
            self.white.append(w)
            self.black.append(b)
            self.score.append(np.where(u < expect - draw / 2, 1.0,
                                       np.where(u < expect + draw / 2, 0.5, 0.0)))
            self.pair.append(cl)
        self.per_upload.append(2 * opp.size)

    def fit(self) -> dict[int, float]:
        """The server's fit on the games between active bots."""
        white, black = np.concatenate(self.white), np.concatenate(self.black)
        live = np.zeros(max(self.truth) + 1, dtype=bool)
        live[list(self.active.values())] = True
        keep = live[white] & live[black]
        table = fit_standings(white[keep], black[keep], np.concatenate(self.score)[keep],
                              np.concatenate(self.pair)[keep])
        self.ratings = {b: t.elo for b, t in table.items() if t.elo is not None}
        self.fitted_at = self.games()
        return self.ratings

    def games(self) -> int:
        return int(sum(w.size for w in self.white))


def idle_round(ladder: Ladder) -> None:
    """One round of ``ladder.idle_games`` for every active bot, least played first: a pair
    against one of :data:`~arena.server.ladder.IDLE_NEAREST` neighbours in the latest
    ratings' order.  It approximates the server's rule
    (:func:`~arena.server.ladder.choose_idle_pair`: the nearest by rating distance, one pair
    whenever its queue is empty, over a round reaching every bot in this order) without
    sorting the field once per pair."""
    for games in (ladder.white, ladder.black, ladder.score, ladder.pair):
        games[:] = [np.concatenate(games)]  # one array each: the rounds add many small ones
    active = list(ladder.active.values())
    played: dict[int, int] = dict.fromkeys(active, 0)
    for side in (ladder.white[0], ladder.black[0]):
        counts = np.bincount(side, minlength=max(ladder.truth) + 1)
        for b in active:
            played[b] += int(counts[b])
    known = sorted(ladder.ratings[b] for b in active if b in ladder.ratings)
    middle = known[len(known) // 2] if known else 0.0
    by_rating = sorted(active, key=lambda b: ladder.ratings.get(b, middle))
    where = {b: i for i, b in enumerate(by_rating)}
    half = IDLE_NEAREST // 2
    for bot in sorted(active, key=lambda b: (played[b], ladder.pick.random())):
        i = where[bot]
        lo = max(0, min(i - half, len(by_rating) - IDLE_NEAREST - 1))
        near = [b for b in by_rating[lo:lo + IDLE_NEAREST + 1] if b != bot][:IDLE_NEAREST]
        ladder.play(bot, [ladder.pick.choice(near)], 1)
        ladder.per_upload.pop()  # not an upload's games


def _errors(ladder: Ladder) -> tuple[float, float]:
    """The RMS error of the active bots' fitted Elo against the truth (both centred), and
    the rank correlation."""
    ratings = ladder.fit()
    active = list(ladder.active.values())
    fitted = np.asarray([ratings.get(b, 0.0) for b in active])
    true = np.asarray([ladder.truth[b] for b in active])
    fitted, true = fitted - fitted.mean(), true - true.mean()
    rank = np.corrcoef(np.argsort(np.argsort(fitted)), np.argsort(np.argsort(true)))[0, 1]
    return float(np.sqrt(np.mean((fitted - true) ** 2))), float(rank)


def simulate(bots: int, uploads: int, k: Optional[int], seed: int = 26,
             pairs: int = PAIRS, idle: tuple[int, ...] = ()) -> dict[str, float]:
    """Build a ladder of ``bots`` uploads, then ``uploads`` new versions, each playing
    ``pairs`` pairs against every active bot (``k`` None) or ``k`` chosen by the server's
    rule; the figures after the last upload.  ``idle``: then rounds of idle games
    (:func:`idle_round`), the RMS error after each number of idle rounds given
    (``idle_<n>_rms``, ``idle_<n>_games``: the games in all then)."""
    ladder = Ladder(seed)
    strengths = ladder.rng.normal(0.0, 200.0, bots)
    next_id = 0

    def upload(participant: int, strength: float, previous: Optional[int]) -> None:
        nonlocal next_id
        bot = next_id
        next_id += 1
        ladder.truth[bot] = strength
        others = sorted(b for p, b in ladder.active.items() if p != participant)
        if previous is not None:
            del ladder.active[participant]
        if k is None:
            chosen = others
        else:
            estimate = ladder.ratings.get(previous) if previous is not None else None
            chosen = choose_opponents(others, ladder.ratings, estimate, min(k, len(others)),
                                      ladder.pick)
        ladder.active[participant] = bot
        ladder.play(bot, chosen, pairs)

    started = time.perf_counter()
    for p in range(bots):
        upload(p, float(strengths[p]), None)
        if k is not None and (p + 1) % (4 * REFIT_EVERY) == 0:
            ladder.fit()
    build = len(ladder.per_upload)
    for n in range(uploads):
        if k is not None and n % REFIT_EVERY == 0 and ladder.fitted_at != ladder.games():
            ladder.fit()
        p = ladder.pick.randrange(bots)
        previous = ladder.active[p]
        upload(p, ladder.truth[previous] + ladder.rng.normal(30.0, 60.0), previous)
    rms, rank = _errors(ladder)
    later = ladder.per_upload[build:]
    out = {"rms": rms, "rank": rank,
           "per_upload": float(np.mean(later)), "max_per_upload": float(max(later)),
           "games": float(ladder.games()), "seconds": time.perf_counter() - started}
    rounds = 0
    for target in idle:
        while rounds < target:
            if rounds % 5 == 0 and ladder.fitted_at != ladder.games():
                ladder.fit()  # the server refits at most every second: many pairs a fit
            idle_round(ladder)
            rounds += 1
        out[f"idle_{target}_rms"], out[f"idle_{target}_rank"] = _errors(ladder)
        out[f"idle_{target}_games"] = float(ladder.games())
    return out


def leaderboard_fit(bots: int, games: int) -> dict[str, float]:
    """The server's leaderboard on a real SQLite file of ``bots`` active bots and ``games``
    finished ladder games: cold, and after one more game (the rows read incrementally)."""
    from arena.ratings import pair_matrices
    from arena.server.config import ServerConfig
    from arena.server.service import Competition, init_competition

    rng = np.random.default_rng(7)
    elo = rng.normal(0.0, 200.0, bots)
    pairs = games // 2
    a = rng.integers(0, bots, pairs)
    b = (a + rng.integers(1, bots, pairs)) % bots
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "c"
        init_competition(folder, ServerConfig())
        comp = Competition(folder)
        owner = comp.authenticate(comp.add_user("owner"))
        comp.close()
        db = sqlite3.connect(folder / "arena.db")
        db.executemany("INSERT INTO bots (id, owner_id, name, version, status, verdict, "
                       "check_log, folder, sha256, created_at) VALUES (?, ?, ?, 1, 'active', "
                       "'', '', '', '', '2026-01-01')",
                       [(i + 1, owner.id, f"b{i}") for i in range(bots)])
        rows = []
        for n in range(pairs):
            m = 1 / (1 + 10 ** ((elo[b[n]] - elo[a[n]]) / 400))
            for game, (w, k, mean) in enumerate(((a[n], b[n], m), (b[n], a[n], 1 - m))):
                u = rng.random()
                result = "1-0" if u < mean - 0.1 else "0-1" if u > mean + 0.1 else "1/2-1/2"
                rows.append((int(w) + 1, int(k) + 1, n + 1, game, result))
        db.executemany("INSERT INTO games (white_id, black_id, variant, pair, game, seed, status, "
                       "attempts, result, created_at, kind, forfeit) VALUES (?, ?, "
                       "'nine-mens-morris', ?, ?, 0, 'done', 1, ?, '2026-01-01', 'ladder', '')",
                       rows)
        db.commit()
        comp = Competition(folder)
        try:
            t0, c0 = time.perf_counter(), time.process_time()
            board = comp.leaderboard()
            cold, cold_cpu = time.perf_counter() - t0, time.process_time() - c0
            db.execute("INSERT INTO games (white_id, black_id, variant, pair, game, seed, status, "
                       "attempts, result, created_at, kind, forfeit) VALUES (1, 2, "
                       "'nine-mens-morris', ?, 0, 0, 'done', 1, '1-0', '2026-01-01', 'ladder', "
                       "'')", (pairs + 1,))
            db.commit()
            t0, c0 = time.perf_counter(), time.process_time()
            again = comp.leaderboard()
            warm, warm_cpu = time.perf_counter() - t0, time.process_time() - c0
        finally:
            comp.close()
            db.close()
    assert len(board) == bots and sum(r["games"] for r in again) == 2 * (games + 1)
    white = np.concatenate([a, b])
    black = np.concatenate([b, a])
    score = rng.random(white.size)
    t0 = time.perf_counter()
    pair_matrices(bots, white, black, score)
    one_pass = time.perf_counter() - t0
    return {"cold_s": cold, "cold_cpu_s": cold_cpu, "one_more_game_s": warm,
            "one_more_game_cpu_s": warm_cpu, "one_pass_s": one_pass}


def bench(quick: bool = False, echo: Callable[[str], Any] = print) -> dict[str, float]:
    """The simulation for both policies, then the leaderboard fit."""
    bots, uploads = (200, 100) if quick else (1000, 200)
    k = 40
    load = os.getloadavg()[0]
    echo(f"ladder benchmark ({'quick' if quick else 'full'}; {bots} bots built by uploads, then "
         f"{uploads} new versions; pairs {PAIRS}, 1 variant; results drawn from the Elo model; "
         f"load average {load:.1f} on {os.cpu_count()} CPUs)")
    figures: dict[str, float] = {}
    results = {}
    checkpoints = (10, 40, 160) if quick else (10, 40, 160, 640)
    for label, policy, idle_at in (("all-play-all", None, ()), (f"K={k}", k, checkpoints)):
        results[label] = r = simulate(bots, uploads, policy, idle=idle_at)
        bound = "" if policy is None else f" (bound 2*K*pairs*variants = {2 * k * PAIRS})"
        echo(f"  {label:<28} {r['per_upload']:7.0f} games per upload (max "
             f"{r['max_per_upload']:.0f}){bound}, {r['games']:>10,.0f} games in all | RMS error "
             f"{r['rms']:5.1f} Elo, rank correlation {r['rank']:.3f} ({r['seconds']:.0f} s)")
        figures.update({f"{label}_{key}": v for key, v in r.items()
                        if not key.startswith("idle_")})
    apa, kk = results["all-play-all"], results[f"K={k}"]
    echo(f"  K={k} / all-play-all: {kk['per_upload'] / apa['per_upload']:.3f}x the games per "
         f"upload, {kk['rms'] / apa['rms']:.2f}x the RMS error")
    # the same budget per upload: how informative each policy's games are
    budget = max(1, round(PAIRS * apa["per_upload"] / max(1.0, kk["per_upload"])))
    same = simulate(bots, uploads, k, pairs=budget)
    echo(f"  {f'K={k} at all-play-all budget':<28} {same['per_upload']:7.0f} games per upload "
         f"({budget} pairs per opponent) | RMS error {same['rms']:5.1f} Elo "
         f"({same['rms'] / apa['rms']:.2f}x all-play-all's)")
    # ladder.idle_games: the K = 40 ladder, then rounds of idle games (a pair per bot each)
    idle = kk
    for n in checkpoints:
        ratio = idle[f"idle_{n}_rms"] / apa["rms"]
        echo(f"  {f'K={k}, then {n} idle rounds':<28} {idle[f'idle_{n}_games']:>10,.0f} games "
             f"in all ({idle[f'idle_{n}_games'] / apa['games']:.2f}x all-play-all's) | RMS "
             f"error {idle[f'idle_{n}_rms']:5.1f} Elo ({ratio:.2f}x all-play-all's), rank "
             f"correlation {idle[f'idle_{n}_rank']:.3f}")
        figures.update({f"idle_{n}_rms": idle[f"idle_{n}_rms"], f"idle_{n}_ratio": ratio,
                        f"idle_{n}_games": idle[f"idle_{n}_games"]})
    figures.update({"ratio_games": kk["per_upload"] / apa["per_upload"],
                    "ratio_rms": kk["rms"] / apa["rms"], "same_budget_rms": same["rms"],
                    "same_budget_ratio": same["rms"] / apa["rms"]})
    fit_bots, fit_games = (200, 40_000) if quick else (1000, 200_000)
    lb = leaderboard_fit(fit_bots, fit_games)
    echo(f"  leaderboard of {fit_bots} bots, {fit_games:,} games in SQLite: cold "
         f"{lb['cold_s']:.2f} s ({lb['cold_cpu_s']:.2f} s of CPU: every row read and fitted), "
         f"after one more game {lb['one_more_game_s']:.2f} s ({lb['one_more_game_cpu_s']:.2f} s "
         f"of CPU: the fit); one pass over the games {1000 * lb['one_pass_s']:.1f} ms")
    figures.update({f"leaderboard_{key}": v for key, v in lb.items()})
    return figures


if __name__ == "__main__":
    from run import standalone  # benchmarks/run.py, next to this file

    sys.exit(standalone(bench, __doc__))
