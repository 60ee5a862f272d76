"""Rating fit speed on synthetic tournaments, next to one pass over the same data.

For 200 bots / 200,000 games and 1,000 bots / 1,000,000 games (colour-swapped pairs, seeded
strengths, draws), measured side by side in one run:

* the floor: one vectorised pass over the games (aggregating them into the bots-by-bots
  count matrices with ``numpy.bincount``), which any method must at least do;
* the Newton fit on the aggregated counts (:func:`arena.ratings.fit_theta`);
* the pair-clustered sandwich covariance (:func:`arena.ratings.sandwich_covariance`);
* the whole :func:`arena.ratings.fit_bradley_terry` (aggregation, connectivity check, fit,
  covariance, centring), as a ratio to the floor and the large case to the small one;
* for the small case, the whole :func:`arena.ratings.rate` from ``GameRecord`` objects (what
  ``arena rate`` does after reading ``games.jsonl``), against building those arrays alone.

Run alone with ``python benchmarks/bench_ratings.py [--quick]``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Dense linear algebra on a few hundred bots is too small to gain from BLAS threads, and on a
# busy machine OpenBLAS threads spinning against other processes make timings swing 10-fold.
# One thread (unless the caller chose otherwise) measures the algorithm; the header says which.
_NUMPY_WAS_LOADED = "numpy" in sys.modules
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from arena import ratings as R  # noqa: E402
from arena.records import GameRecord, PlayerInfo  # noqa: E402

SIZES = ((200, 200_000), (1000, 1_000_000))
QUICK_SIZES = ((50, 20_000), (200, 100_000))


def synthetic_games(bots: int, games: int, seed: int = 0) -> R.GameArrays:
    """``games`` games (in colour-swapped pairs) between ``bots`` bots of N(0, 200) Elo."""
    rng = np.random.default_rng(seed)
    elo = rng.normal(0.0, 200.0, bots)
    pairs = games // 2
    a = rng.integers(0, bots, pairs)
    b = (a + rng.integers(1, bots, pairs)) % bots  # never a bot against itself
    mean = 1.0 / (1.0 + 10.0 ** (-(elo[a] - elo[b]) / 400.0))

    def play(m: np.ndarray) -> np.ndarray:
        d = np.minimum(0.3, 2 * np.minimum(m, 1 - m))
        u = rng.random(m.size)
        return np.where(u < m - d / 2, 1.0, np.where(u < m + d / 2, 0.5, 0.0))

    s1, s2 = play(mean), play(1.0 - mean)  # a white, then b white
    cl = np.arange(pairs)
    return R.GameArrays(tuple(f"bot{i:04d}" for i in range(bots)), np.concatenate([a, b]),
                        np.concatenate([b, a]), np.concatenate([s1, s2]),
                        np.concatenate([cl, cl]))


def _best(fn: Callable[[], Any], repeat: int) -> float:
    """Best wall time of ``repeat`` calls, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def measure(bots: int, games: int, repeat: int) -> dict[str, float]:
    """Timings (seconds) of each stage for one synthetic tournament."""
    g = synthetic_games(bots, games)
    n = len(g.players)
    t_pass = _best(lambda: R.pair_matrices(n, g.white, g.black, g.score), repeat)
    n_mat, s_mat = R.pair_matrices(n, g.white, g.black, g.score)
    t_fit = _best(lambda: R.fit_theta(n_mat, s_mat), repeat)
    theta, hess, iters = R.fit_theta(n_mat, s_mat)
    t_cov = _best(lambda: R.sandwich_covariance(theta, hess, g.white, g.black, g.score, g.cluster),
                  repeat)
    t_total = _best(lambda: R.fit_bradley_terry(g), repeat)
    return {"pass_s": t_pass, "fit_s": t_fit, "cov_s": t_cov, "total_s": t_total,
            "iterations": float(iters)}


def records_from(g: R.GameArrays) -> list[GameRecord]:
    """The synthetic games as ``GameRecord`` objects (as read from ``games.jsonl``)."""
    result = {1.0: "1-0", 0.5: "1/2-1/2", 0.0: "0-1"}
    info = [PlayerInfo(name) for name in g.players]
    pairs = g.n_games // 2
    return [GameRecord(game_id=str(k), variant="nine-mens-morris", variant_params={},
                       white=info[w], black=info[b], result=result[s], termination="blocked",
                       tournament="bench", round=0, pair=int(c) if k < 2 * pairs else None)
            for k, (w, b, s, c) in enumerate(zip(g.white.tolist(), g.black.tolist(),
                                                 g.score.tolist(), g.cluster.tolist()))]


def bench(quick: bool = False, echo: Callable[[str], Any] = print) -> dict[str, float]:
    """Run every measurement, print the table and return the figures."""
    sizes = QUICK_SIZES if quick else SIZES
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    threads = ("library default (numpy was loaded first)" if _NUMPY_WAS_LOADED
               else os.environ["OPENBLAS_NUM_THREADS"])
    echo(f"ratings benchmark ({'quick' if quick else 'full'}; best of 2 (small), 1 (large); "
         f"synthetic colour-swapped pairs, 30% draws; load average {load:.1f} on "
         f"{os.cpu_count()} CPUs; BLAS threads: {threads})")
    figures: dict[str, float] = {}
    results = []
    for k, (bots, games) in enumerate(sizes):
        m = measure(bots, games, repeat=2 if k == 0 else 1)
        results.append(m)
        tag = f"{bots}x{games}"
        figures.update({f"{k}_{tag}": v for k, v in m.items()})
        echo(f"  {bots:>5} bots {games:>9,} games: one pass {1000 * m['pass_s']:8.1f} ms | "
             f"Newton fit {1000 * m['fit_s']:7.1f} ms ({m['iterations']:.0f} iterations) | "
             f"sandwich {1000 * m['cov_s']:7.1f} ms | whole fit {1000 * m['total_s']:8.1f} ms "
             f"= {m['total_s'] / m['pass_s']:5.1f}x one pass")
    small, large = results
    growth = large["total_s"] / small["total_s"]
    data_growth = (sizes[1][1] / sizes[0][1])
    echo(f"  large / small: whole fit {growth:.1f}x for {data_growth:.0f}x the games and "
         f"{sizes[1][0] / sizes[0][0]:.0f}x the bots; one pass {large['pass_s'] / small['pass_s']:.1f}x")
    figures["large_over_small"] = growth
    # from records, as `arena rate` does it
    g = synthetic_games(*sizes[0])
    recs = records_from(g)
    t_arrays = _best(lambda: R.game_arrays(recs), 1)
    t_rate = _best(lambda: R.rate(recs), 1)
    figures.update({"records_to_arrays_s": t_arrays, "rate_from_records_s": t_rate})
    echo(f"  rate() from {len(recs):,} GameRecords: {t_rate:.2f} s, of which building the "
         f"arrays {t_arrays:.2f} s ({t_rate / t_arrays:.1f}x the array building)")
    return figures


if __name__ == "__main__":
    from run import standalone  # benchmarks/run.py, next to this file

    sys.exit(standalone(bench, __doc__))
