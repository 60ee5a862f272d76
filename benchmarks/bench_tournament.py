"""Tournament throughput: games per second with instant bots (random vs random) on a pool of
1 and of 2 workers, measured side by side, printed with their ratio.

Run alone with ``python benchmarks/bench_tournament.py [--quick]``.  A game here costs mostly
the start of two bot processes and the protocol round trips (see ``bench_referee.py``); the
ratio shows how well the pool spreads games over the cores (at most the number of free cores).
"""

from __future__ import annotations

import argparse
import io
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


def throughput(games: int, workers: int) -> float:
    """Games per second for ``games`` random-vs-random games on ``workers`` workers (the whole
    run: pool start, every game saved, the tables written)."""
    from arena.tournament import run_tournament

    with tempfile.TemporaryDirectory() as tmp:
        config = _config(Path(tmp), games, workers)
        t0 = time.perf_counter()
        result = run_tournament(config, console=io.StringIO())
        elapsed = time.perf_counter() - t0
    if not result.complete:
        raise RuntimeError(f"only {result.finished} of {result.total} games finished")
    return result.played / elapsed


def bench(quick: bool = False, echo: Callable[[str], Any] = print) -> dict[str, float]:
    """Measure 1 and 2 workers on the same games, alternating, best of the repeats."""
    games, repeat = (12, 1) if quick else (40, 2)
    one = two = 0.0
    for _ in range(repeat):
        one = max(one, throughput(games, 1))
        two = max(two, throughput(games, 2))
    echo(f"tournament benchmark ({'quick' if quick else 'full'}; {games} random-vs-random "
         f"games of nine men's morris, best of {repeat})")
    echo(f"  1 worker   {one:7.2f} games/s")
    echo(f"  2 workers  {two:7.2f} games/s   {two / one:5.2f}x one worker")
    return {"games_per_s_1_worker": one, "games_per_s_2_workers": two, "ratio_2_over_1": two / one}


def main(argv: Optional[list[str]] = None) -> int:
    """Command line: ``--quick`` for fewer games."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer games, one repeat")
    args = parser.parse_args(argv)
    bench(quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
