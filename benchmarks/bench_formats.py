"""Swiss against round robin on a simulated class (issue 38): ``python
benchmarks/bench_formats.py [--events N] [--bots N]``.

A field of ``--bots`` bots (40) with true Elo drawn from N(0, 200); each game's result drawn
from the Elo (Bradley–Terry) model with a draw share of 20 %; a pairing is a colour-swapped
pair of games, as in every Morris Arena format.  For each of ``--events`` events (200), the
same field plays a round robin of one pair per meeting and Swiss events of 7 and 9 rounds of
one pair, paired by :func:`arena.swiss.pair_round` (byes score a pair's two points).  Each
event's ranking (points, then Buchholz: the sum of the opponents' points) is compared with
the true order by Spearman's rank correlation.  Printed per format: games per event, the
mean correlation (± its standard error), and the share of round robin's games and
correlation.  The goal of issue 38: Swiss with 9 rounds at least 0.95 × round robin's
correlation with at most a quarter of its games.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from scipy.stats import spearmanr  # noqa: E402

from arena.swiss import pair_round  # noqa: E402

DRAW = 0.2


def _pair(rng: np.random.Generator, elo_a: float, elo_b: float) -> float:
    """Points of A in a colour-swapped pair (two games) against B."""
    expected = 1.0 / (1.0 + 10 ** ((elo_b - elo_a) / 400.0))
    points = 0.0
    for _ in range(2):
        if rng.random() < DRAW:
            points += 0.5
        elif rng.random() < (expected - DRAW / 2) / (1 - DRAW):
            points += 1.0
    return points


def _ranking(names: list[str], points: dict[str, float],
             opponents: dict[str, list[str]]) -> list[str]:
    buchholz = {n: sum(points[o] for o in opponents[n]) for n in names}
    return sorted(names, key=lambda n: (-points[n], -buchholz[n], n))


def round_robin(rng: np.random.Generator, elo: dict[str, float]) -> tuple[list[str], int]:
    names = list(elo)
    points = {n: 0.0 for n in names}
    opponents: dict[str, list[str]] = {n: [] for n in names}
    games = 0
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            p = _pair(rng, elo[a], elo[b])
            points[a] += p
            points[b] += 2 - p
            opponents[a].append(b)
            opponents[b].append(a)
            games += 2
    return _ranking(names, points, opponents), games


def swiss(rng: np.random.Generator, elo: dict[str, float], seeds: list[str],
          rounds: int) -> tuple[list[str], int]:
    points = {n: 0.0 for n in seeds}
    opponents: dict[str, list[str]] = {n: [] for n in seeds}
    met: list[tuple[str, str]] = []
    byes: list[str] = []
    games = 0
    for _ in range(rounds):
        r = pair_round(seeds, points, met, byes)
        for a, b in r.pairs:
            p = _pair(rng, elo[a], elo[b])
            points[a] += p
            points[b] += 2 - p
            opponents[a].append(b)
            opponents[b].append(a)
            games += 2
        if r.bye:
            points[r.bye] += 2
            byes.append(r.bye)
        met += list(r.pairs)
    return _ranking(seeds, points, opponents), games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--bots", type=int, default=40)
    args = parser.parse_args()
    rng = np.random.default_rng(38)
    formats = {"round robin, 1 pair": None, "Swiss, 7 rounds": 7, "Swiss, 9 rounds": 9}
    corr: dict[str, list[float]] = {f: [] for f in formats}
    games: dict[str, int] = {}
    start = time.monotonic()
    for _ in range(args.events):
        elo = {f"b{k:02d}": float(e) for k, e in enumerate(rng.normal(0, 200, args.bots))}
        truth = sorted(elo, key=lambda n: -elo[n])
        # a class has no rating list: Swiss seeds in a random order
        seeds = list(rng.permutation(list(elo)))
        for name, rounds in formats.items():
            ranked, played = (round_robin(rng, elo) if rounds is None
                              else swiss(rng, elo, seeds, rounds))
            rho = spearmanr([truth.index(n) for n in ranked], range(len(ranked))).statistic
            corr[name].append(float(rho))
            games[name] = played
    took = time.monotonic() - start
    base_games = games["round robin, 1 pair"]
    base = float(np.mean(corr["round robin, 1 pair"]))
    print(f"{args.bots} bots, true Elo ~ N(0, 200), draws {DRAW:.0%}; {args.events} events "
          f"per format ({took:.0f} s)")
    print(f"{'format':<22} {'games':>6} {'share':>6} {'Spearman':>16} {'of RR':>6}")
    for name in formats:
        values = np.array(corr[name])
        mean, err = float(values.mean()), float(values.std(ddof=1) / np.sqrt(len(values)))
        print(f"{name:<22} {games[name]:>6} {games[name] / base_games:>6.2f} "
              f"{mean:>9.3f} ± {err:.3f} {mean / base:>6.3f}")


if __name__ == "__main__":
    main()
