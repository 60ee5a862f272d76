"""Restart modes: games per second of the same tournament (instant bots, one worker, the
default isolation) with a fresh pair of bot processes for every game (``restart: per-game``)
and with both processes kept for the pairing's games (``restart: per-pairing``), measured
side by side, alternating, printed with their ratio (issue 14's target: at least 5x).

Run alone with ``python benchmarks/bench_restart.py [--quick]``.
"""

from __future__ import annotations

import io
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # runnable alone from a checkout

#: the ratio issue 14 asks of per-pairing over per-game
TARGET = 5.0


def throughput(games: int, restart: str) -> float:
    """Games per second for ``games`` random-vs-random games of one pairing on one worker
    (the whole run: pool start, preflight, every game saved, the tables written)."""
    from arena.config import load_config
    from arena.tournament import run_tournament

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.yaml"
        path.write_text(
            f"name: bench-{restart}\n"
            f"bots: [{ROOT}/bots/random, {{path: {ROOT}/bots/random, name: random-2}}]\n"
            f"variants: [nine-mens-morris]\nformat: match\ngames_per_pairing: {games}\n"
            f"time: {{movetime: 1000}}\nworkers: 1\nreport: false\nrestart: {restart}\n"
            f"output: {Path(tmp) / 'results'}\n", encoding="utf-8")
        t0 = time.perf_counter()
        result = run_tournament(load_config(path), console=io.StringIO())
        elapsed = time.perf_counter() - t0
    if not result.complete:
        raise RuntimeError(f"only {result.finished} of {result.total} games finished")
    return result.played / elapsed


def bench(quick: bool = False, echo: Callable[[str], Any] = print) -> dict[str, float]:
    """Both modes on the same games, alternating, best of the repeats."""
    games, repeat = (20, 1) if quick else (60, 2)
    fresh = kept = 0.0
    for _ in range(repeat):
        fresh = max(fresh, throughput(games, "per-game"))
        kept = max(kept, throughput(games, "per-pairing"))
    ratio = kept / fresh
    echo(f"restart benchmark ({'quick' if quick else 'full'}; {games} random-vs-random games "
         f"of one pairing, 1 worker, best of {repeat})")
    echo(f"  restart: per-game     {fresh:7.2f} games/s")
    echo(f"  restart: per-pairing  {kept:7.2f} games/s   {ratio:5.2f}x per-game "
         f"(target >= {TARGET:g}x: {'met' if ratio >= TARGET else 'NOT met'})")
    return {"games_per_s_per_game": fresh, "games_per_s_per_pairing": kept,
            "ratio_per_pairing_over_per_game": ratio}


if __name__ == "__main__":
    from benchmarks.run import standalone

    sys.exit(standalone(bench, __doc__))
