"""Tournament throughput: games per second with instant bots (random vs random) on a pool of
1 and of 2 workers, measured side by side, printed with their ratio; the time per game on one
worker against the start floor (the two bots started one after the other, bare: spawn,
handshake, exit; measured between the runs); and the CPU seconds per game (the referee, its
workers and every bot, from ``getrusage``) on 2 workers against 1.

Run alone with ``python benchmarks/bench_tournament.py [--quick]``.  A game here costs mostly
the start of two bot processes and the protocol round trips (see ``bench_referee.py``); the
ratio shows how well the pool spreads games over the cores (at most the number of free cores).
"""

from __future__ import annotations

import argparse
import io
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # runnable alone from a checkout


def _config(folder: Path, games: int, workers: int) -> Any:
    from arena.config import load_config

    path = folder / f"bench-{workers}.yaml"
    path.write_text(
        f"name: bench-{workers}\n"
        f"bots: [{ROOT}/bots/random, {{path: {ROOT}/bots/random, name: random-2}}]\n"
        f"variants: [nine-mens-morris]\nformat: match\n"
        f"games_per_pairing: {2 * max(1, games // 2)}\ntime: {{movetime: 1000}}\n"
        f"workers: {workers}\nreport: false\noutput: {folder / f'results-{workers}'}\n",
        encoding="utf-8")
    return load_config(path)


def _cpu_s() -> float:
    """CPU seconds used so far by this process and its reaped descendants (workers, bots)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def throughput(games: int, workers: int) -> tuple[float, float]:
    """Games per second and CPU seconds per game for ``games`` random-vs-random games on
    ``workers`` workers (the whole run: pool start, every game saved, the tables written)."""
    from arena.tournament import run_tournament

    with tempfile.TemporaryDirectory() as tmp:
        config = _config(Path(tmp), games, workers)
        cpu0 = _cpu_s()
        t0 = time.perf_counter()
        result = run_tournament(config, console=io.StringIO())
        elapsed = time.perf_counter() - t0
        cpu = _cpu_s() - cpu0
    if not result.complete:
        raise RuntimeError(f"only {result.finished} of {result.total} games finished")
    return result.played / elapsed, cpu / result.played


def floor_ms(n: int) -> float:
    """Mean ms to start the two bots of a game one after the other, bare (see
    ``bench_referee.start_floor_ms``)."""
    from benchmarks.bench_referee import start_floor_ms

    folder = ROOT / "bots" / "random"
    return sum(start_floor_ms(folder) for _ in range(n)) / n


def bench(quick: bool = False, echo: Callable[[str], Any] = print) -> dict[str, float]:
    """Measure 1 and 2 workers on the same games, alternating, best of the repeats."""
    games, repeat, starts = (12, 1, 3) if quick else (40, 2, 5)
    one = two = 0.0
    cpu_one = cpu_two = float("inf")
    floors = []
    floor_ms(1)  # warm the file cache
    for _ in range(repeat):
        floors.append(floor_ms(starts))
        speed, cpu = throughput(games, 1)
        one, cpu_one = max(one, speed), min(cpu_one, cpu)
        floors.append(floor_ms(starts))
        speed, cpu = throughput(games, 2)
        two, cpu_two = max(two, speed), min(cpu_two, cpu)
    floor = min(floors)
    per_game = 1000 / one
    echo(f"tournament benchmark ({'quick' if quick else 'full'}; {games} random-vs-random "
         f"games of nine men's morris, restart per-game, best of {repeat})")
    echo(f"  1 worker   {one:7.2f} games/s   {per_game:6.1f} ms/game   {per_game / floor:5.2f}x "
         f"the start floor {floor:.1f} ms (two bots one after the other; target <= 1.2x)")
    echo(f"  2 workers  {two:7.2f} games/s   {two / one:5.2f}x one worker")
    echo(f"  CPU per game: 1 worker {cpu_one * 1000:6.1f} ms, 2 workers {cpu_two * 1000:6.1f} ms   "
         f"{cpu_two / cpu_one:5.2f}x (target <= 1.10x)")
    return {"games_per_s_1_worker": one, "games_per_s_2_workers": two, "ratio_2_over_1": two / one,
            "ms_per_game_1_worker": per_game, "start_floor_ms": floor,
            "game_over_floor": per_game / floor, "cpu_s_per_game_1_worker": cpu_one,
            "cpu_s_per_game_2_workers": cpu_two, "cpu_ratio_2_over_1": cpu_two / cpu_one}


def main(argv: Optional[list[str]] = None) -> int:
    """Command line: ``--quick`` for fewer games."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer games, one repeat")
    args = parser.parse_args(argv)
    bench(quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
