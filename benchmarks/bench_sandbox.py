"""What isolation costs: each level next to ``none``, measured side by side in one run.

For every isolation this machine supports (with and without cgroups):

* start: spawning an instant bot through :class:`BotProcess` up to ``readyok`` (handshake and
  new game), then closing it; mean ms per bot;
* go: :meth:`BotProcess.go` round trips to the instant bot (best of five rounds), which now
  include reading the bot's CPU time twice; µs per move;
* CPU clock reading: :meth:`Sandbox.cpu_time` on a live sleeping bot; µs per reading.

Every figure is printed with its ratio to level ``none``.  Run alone with
``python benchmarks/bench_sandbox.py [--quick]``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arena.bot import BotProcess, BotSpec, load_bot  # noqa: E402
from arena.protocol import Go  # noqa: E402
from arena.rules import Position  # noqa: E402
from arena.sandbox import Isolation, Level, available_levels  # noqa: E402
from benchmarks.bench_referee import INSTANT_BOT  # noqa: E402


def _started(spec: BotSpec, iso: Isolation) -> BotProcess:
    bp = BotProcess(spec, isolation=iso)
    bp.start()
    bp.read_handshake(20.0)
    bp.new_game("nine-mens-morris", {}, {}, 20.0)
    return bp


def start_ms(spec: BotSpec, iso: Isolation, n: int) -> float:
    """Mean ms from spawn to ``readyok`` plus the shutdown."""
    t0 = time.perf_counter()
    for _ in range(n):
        _started(spec, iso).close()
    return (time.perf_counter() - t0) / n * 1000


def go_us(spec: BotSpec, iso: Isolation, n: int) -> float:
    """Best of five rounds: mean µs per ``go`` round trip."""
    text = Position("nine-mens-morris").to_text()
    go = Go(movetime=1000)
    with _started(spec, iso) as bp:
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(n):
                bp.go(text, [], go, 5.0)
            best = min(best, (time.perf_counter() - t0) / n * 1e6)
    return best


def cpu_read_us(spec: BotSpec, iso: Isolation, n: int) -> float:
    """Mean µs per CPU-time reading of a live bot."""
    with _started(spec, iso) as bp:
        t0 = time.perf_counter()
        for _ in range(n):
            bp.cpu_time()
        return (time.perf_counter() - t0) / n * 1e6


def bench(quick: bool = False, echo: Callable[[str], Any] = print) -> dict[str, float]:
    """Measure every available isolation; print one line each with ratios to ``none``."""
    n_starts, n_goes, n_reads = (3, 100, 200) if quick else (15, 1000, 2000)
    configs = [("none", Isolation(Level.NONE))]
    for level in available_levels()[1:]:
        configs.append((level.value, Isolation(level)))
        configs.append((f"{level.value}, no cgroups", Isolation(level, cgroups=False)))
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "instant"
        folder.mkdir()
        (folder / "bot.py").write_text(INSTANT_BOT)
        (folder / "bot.yaml").write_text('command: "{python} bot.py"\n')
        spec = load_bot(folder)
        echo(f"sandbox benchmark ({'quick' if quick else 'full'}; {n_starts} starts, best of 5 x "
             f"{n_goes} go round trips, {n_reads} CPU readings per isolation; ratios to none)")
        base: dict[str, float] = {}
        for name, iso in configs:
            row = {"start_ms": start_ms(spec, iso, n_starts), "go_us": go_us(spec, iso, n_goes),
                   "cpu_read_us": cpu_read_us(spec, iso, n_reads)}
            base = base or row
            figures.update({f"{name}: {k}": v for k, v in row.items()})
            echo(f"  {name:20} start {row['start_ms']:7.1f} ms ({row['start_ms'] / base['start_ms']:4.2f}x)"
                 f"   go {row['go_us']:7.1f} µs ({row['go_us'] / base['go_us']:4.2f}x)"
                 f"   cpu_time {row['cpu_read_us']:7.1f} µs ({row['cpu_read_us'] / base['cpu_read_us']:4.2f}x)")
    return figures


if __name__ == "__main__":
    from benchmarks.run import standalone

    sys.exit(standalone(bench, __doc__))
