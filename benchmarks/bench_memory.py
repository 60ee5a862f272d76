"""The runner's memory against the number of games (issue 39): the peak resident set (VmHWM)
of ``arena run`` for 1k, 10k and 100k games of instant bots (random against random, three
men's morris, bots kept for the pairing, two workers, no report), each run in its own
process, printed side by side with the growth per game (bytes) and the growth from the
smallest to the largest size against the target (< 50 MB from 1k to 100k games).

The runner process (``arena run``) is measured alone: its peak RSS is read from
``/proc/<pid>/status`` (``VmHWM``) just before it exits (an ``atexit`` hook writes it to a
file), and the peak of its children (workers and bots, the largest one) from
``getrusage(RUSAGE_CHILDREN)`` inside it.

Run alone with ``python benchmarks/bench_memory.py [--quick] [--sizes 1000,10000,100000]
[--play N] [--before DIR]``: every game is played, which takes a while for 100k games (the
sizes divided by the games per second the first one shows; hours on a loaded 2-core
machine).  ``--play N``: every size but the first plays only N games, the others being saved
before the run (the records of the first size's real games, given the schedule's ids), so
the run resumes them: what the runner holds per saved game is the same whether it played or
resumed it.  ``make bench`` (benchmarks/run.py) measures that way, with N = 200.
``--before DIR`` measures another checkout (``git worktree add /tmp/old <commit>``) at the
same sizes, side by side, for the before/after ratio.  When
``benchmarks/bench_memory_folder.py`` exists (``arena rate``/``report`` on a 1M-game folder)
it runs at the end unless ``--no-folder``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # runnable alone from a checkout

#: issue 39's target: the runner's peak RSS grows by less than this from 1k to 100k games
TARGET_MB = 50.0
SIZES = (1000, 10_000, 100_000)
QUICK_SIZES = (200, 1000)
#: for ``make bench`` (benchmarks/run.py): the larger sizes play this many games, the rest
#: saved before the run (the command line plays every game unless ``--play``)
DEFAULT_PLAY = 200

#: run in the measured process: ``arena run FILE`` of the checkout ``sys.argv[1]``, writing
#: its own VmHWM and its children's peak (ru_maxrss of the reaped workers and bots) at exit
_RUNNER = r"""
import atexit, json, resource, sys
checkout, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, checkout)
def _peak():
    hwm = rss = 0
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            hwm = int(line.split()[1])
        elif line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(out, "w") as f:
        json.dump({"hwm_kb": hwm, "rss_kb": rss, "children_kb": kids}, f)
atexit.register(_peak)
import arena
assert arena.__file__.startswith(checkout), arena.__file__
from arena.cli import cli
sys.argv = ["arena", "run", *sys.argv[3:]]
try:
    cli(prog_name="arena")
except SystemExit as e:
    if e.code:
        raise
"""


def write_config(folder: Path, games: int, workers: int = 2) -> Path:
    """The benchmark's tournament: one pairing of random bots, ``games`` games (even), three
    men's morris, kept bots, ``workers`` workers, no report and no sandbox (the fastest
    legal real games: a game is a few protocol round trips)."""
    path = folder / "memory.yaml"
    path.write_text(
        f"name: memory\n"
        f"bots: [{ROOT}/bots/random, {{path: {ROOT}/bots/random, name: random-2}}]\n"
        f"variants: [three-mens-morris]\nformat: match\n"
        f"games_per_pairing: {2 * max(1, games // 2)}\ntime: {{movetime: 1000, handshake: 60000}}\n"
        f"restart: per-pairing\nisolation: none\n"
        f"workers: {workers}\nreport: false\noutput: {folder / 'results'}\n",
        encoding="utf-8")
    return path


def _arena_run(checkout: Path, folder: Path, config: Path) -> dict[str, Any]:
    """``arena run config`` with ``checkout``'s runner in a fresh process: its peak."""
    out = folder / "peak.json"
    out.unlink(missing_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(checkout), str(out), str(config)],
        cwd=folder, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(checkout)})
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(f"arena run failed ({done.returncode}): "
                           f"{done.stderr[-2000:]}{done.stdout[-1000:]}")
    peak: dict[str, Any] = json.loads(out.read_text())
    return peak


def prefill(games_file: Path, source: Path, count: int, name: str) -> None:
    """Write ``count`` saved games to ``games_file``: the records of ``source`` (real games
    of this benchmark's tournament, cycled) given the ids, colours, pair numbers and name
    of the first ``count`` games of the tournament ``name`` (a match of one pairing)."""
    with open(source, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    with open(games_file, "w", encoding="utf-8") as out:
        for n in range(count):
            k, game = n // 2 + 1, n % 2
            d = lines[n % len(lines)]
            first, second = ("random", "random-2") if (2 + k) % 2 == 1 else ("random-2", "random")
            white, black = (first, second) if game == 0 else (second, first)
            d["white"]["name"], d["black"]["name"] = white, black
            d["game_id"] = f"three-mens-morris/r1/m1/p{k}/g{game}"
            d["tournament"], d["round"], d["pair"] = name, 1, (k - 1) * k // 2 + k
            out.write(json.dumps(d, ensure_ascii=False, separators=(",", ":")) + "\n")


def measure(checkout: Path, games: int, workers: int = 2, *,
            saved_from: Optional[Path] = None, play: int = 200,
            keep: Optional[Path] = None) -> dict[str, float]:
    """Play ``games`` games with the runner of ``checkout`` in a fresh process; its peak
    RSS (MB), its children's largest peak (MB), the games played and the seconds taken.

    ``saved_from``: a ``games.jsonl`` of this benchmark's games; all but the last ``play``
    games are then saved before the run (records of ``saved_from``, see :func:`prefill`),
    the run resumes them and plays ``play`` (for sizes too large to play on a busy
    machine: what the runner holds per saved game is the same, played or resumed).
    ``keep``: where to copy the run's ``games.jsonl``."""
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        folder = Path(tmp)
        if saved_from is not None and games > play:
            config = write_config(folder, 2, workers)  # the folder: config.json, 2 games
            _arena_run(checkout, folder, config)
            prefill(folder / "results" / "games.jsonl", saved_from, games - play, "memory")
        config = write_config(folder, games, workers)  # (grown, when prefilled)
        t0 = time.perf_counter()
        peak = _arena_run(checkout, folder, config)
        elapsed = time.perf_counter() - t0
        with open(folder / "results" / "games.jsonl", "rb") as f:
            finished = sum(1 for _ in f)
        if keep is not None:
            shutil.copyfile(folder / "results" / "games.jsonl", keep)
    return {"games": float(finished), "seconds": elapsed, "peak_mb": peak["hwm_kb"] / 1024,
            "children_mb": peak["children_kb"] / 1024,
            "played": float(min(play, games) if saved_from is not None else finished)}


def _line(label: str, size: int, m: dict[str, float], base: Optional[dict[str, float]]) -> str:
    played = m.get("played", m["games"])
    how = "played" if played == m["games"] else f"{int(played)} played, the rest resumed"
    text = (f"  {label:<7}{size:>8,} games ({how})  runner peak {m['peak_mb']:7.1f} MB  "
            f"(children's largest {m['children_mb']:5.1f} MB)  {m['seconds']:6.0f} s")
    if base is not None and m["games"] > base["games"]:
        per_game = (m["peak_mb"] - base["peak_mb"]) * 1024 * 1024 / (m["games"] - base["games"])
        text += f"  {per_game:8.0f} bytes/game over {int(base['games']):,}"
    return text


def series(checkout: Path, sizes: tuple[int, ...], label: str,
           echo: Callable[[str], Any], *, source: Optional[Path] = None,
           play: int = 200, keep: Optional[Path] = None) -> list[dict[str, float]]:
    """Measure ``sizes`` with ``checkout``'s runner, echoing a line per size.  With
    ``source`` (real games of this tournament) every size but the first is prefilled from
    it and plays ``play`` games (:func:`measure`); ``keep`` gets the first size's games."""
    out: list[dict[str, float]] = []
    for k, size in enumerate(sizes):
        if k and source is not None:
            m = measure(checkout, size, saved_from=source, play=play)
        else:
            m = measure(checkout, size, keep=keep if k == 0 else None)
        out.append(m)
        echo(_line(label, size, m, out[0] if len(out) > 1 else None))
    return out


def bench(quick: bool = False, echo: Callable[[str], Any] = print,
          sizes: Optional[tuple[int, ...]] = None, before: Optional[Path] = None,
          folder_bench: bool = False, play: Optional[int] = DEFAULT_PLAY) -> dict[str, float]:
    """The runner's peak RSS at each size (this checkout, and ``before`` when given).
    ``play``: every size but the first plays only that many games, the rest being saved
    before the run from the first size's real games (see :func:`measure`); None: every
    game is played (the command line's default; hours for 100k games on a busy machine).
    ``folder_bench``: run ``bench_memory_folder.py`` after (``make bench`` runs it anyway)."""
    sizes = sizes or (QUICK_SIZES if quick else SIZES)
    echo(f"memory benchmark ({'quick' if quick else 'full'}; random v random, three men's "
         f"morris, per-pairing, 2 workers, no report; runner's peak RSS at "
         f"{', '.join(f'{s:,}' for s in sizes)} games)")
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-memory-source-") as tmp:
        source = Path(tmp) / "games.jsonl" if play is not None else None
        now = series(ROOT, sizes, "now", echo, source=source, play=play or 0, keep=source)
        old = (series(before, sizes, "before", echo, source=source, play=play or 0)
               if before is not None else None)
    for size, m in zip(sizes, now):
        figures[f"peak_mb_{size}"] = m["peak_mb"]
    if len(now) > 1:
        growth = now[-1]["peak_mb"] - now[0]["peak_mb"]
        span = now[-1]["games"] - now[0]["games"]
        per_game = growth * 1024 * 1024 / span if span else 0.0
        figures["growth_mb"] = growth
        figures["bytes_per_game"] = per_game
        # the target is stated from 1k to 100k games: scaled to the sizes measured
        allowed = TARGET_MB * span / 99_000
        echo(f"  growth {now[0]['games']:,.0f} -> {now[-1]['games']:,.0f} games: {growth:.1f} MB"
             f" = {per_game:.0f} bytes/game (target < {TARGET_MB:g} MB per 99k games, "
             f"{allowed:.1f} MB here: {'met' if growth < allowed else 'NOT met'})")
        if old is not None and len(old) > 1:
            old_growth = old[-1]["peak_mb"] - old[0]["peak_mb"]
            old_per_game = old_growth * 1024 * 1024 / span if span else 0.0
            figures["bytes_per_game_before"] = old_per_game
            echo(f"  before: {old_growth:.1f} MB = {old_per_game:.0f} bytes/game; now "
                 f"{old_per_game / per_game if per_game > 0 else float('inf'):.1f}x less"
                 if per_game > 0 else f"  before: {old_growth:.1f} MB = {old_per_game:.0f} "
                 f"bytes/game; now no measurable growth")
    other = Path(__file__).resolve().parent / "bench_memory_folder.py"
    if folder_bench and other.exists():
        spec = importlib.util.spec_from_file_location("benchmarks.bench_memory_folder", other)
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            if hasattr(module, "bench"):
                figures.update(module.bench(quick=quick, echo=echo))
    return figures


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").strip().split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run (200 and 1,000 games)")
    parser.add_argument("--sizes", default=None,
                        help="game counts, comma-separated (default 1000,10000,100000)")
    parser.add_argument("--before", type=Path, default=None, metavar="DIR",
                        help="also measure the runner of this checkout (the old behaviour)")
    parser.add_argument("--play", type=int, default=None, metavar="N",  # None: all played
                        help="every size but the first plays N games, the rest saved before "
                             "the run from the first size's games (a busy machine)")
    parser.add_argument("--no-folder", action="store_true",
                        help="skip bench_memory_folder.py (arena rate/report on 1M games)")
    args = parser.parse_args(argv)
    sizes = tuple(int(s) for s in args.sizes.split(",")) if args.sizes else None
    bench(quick=args.quick, sizes=sizes, before=args.before, folder_bench=not args.no_folder,
          play=args.play)
    return 0


if __name__ == "__main__":
    sys.exit(main())
