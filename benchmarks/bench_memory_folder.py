"""``arena rate`` and ``arena report`` on a big results folder (issue 39): wall time, CPU time
and peak RSS against the number of games.

Writes a synthetic results folder of N games (default 1,000,000; ``--games``): records as
``tests/synth_records.py``'s ``make_record`` makes them (two plies each), 16 bots in
colour-swapped pairs over two variants, a few forfeits, written as JSON lines from
templates (a million in seconds).  Then runs ``arena rate`` and ``arena report`` on it, each
in its own process, started by a small wrapper process that reports the command's wall
time, its CPU time and its peak RSS (``resource.getrusage(RUSAGE_CHILDREN)``: ``ru_maxrss``
and ``ru_utime + ru_stime`` of that one command), printed side by side; ``--before DIR``
measures another checkout (``git worktree add /tmp/old-analysis <commit>``) on the same
folder first, for the before/after ratio.  The target: both within 60 s and 1 GB of RSS at
a million games (CPU time is printed too: on a loaded machine wall time says little).

Run alone with ``python benchmarks/bench_memory_folder.py [--quick] [--games N]
[--before DIR] [--keep DIR]``; ``bench()`` is also run by ``bench_memory.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # runnable alone from a checkout
sys.path.insert(0, str(ROOT / "tests"))

#: issue 39's targets for a million games
TARGET_S = 60.0
TARGET_MB = 1024.0
GAMES = 1_000_000
QUICK_GAMES = 20_000
BOTS = 16
VARIANTS = ("nine-mens-morris", "lasker-morris")

# the command, run by a wrapper that reports what it cost: RUSAGE_CHILDREN of the wrapper is
# the command's alone (its only child)
_WRAPPER = r"""
import json, resource, subprocess, sys, time
t0 = time.perf_counter()
rc = subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=open(sys.argv[1], "w"))
wall = time.perf_counter() - t0
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": rc, "wall_s": wall, "cpu_s": r.ru_utime + r.ru_stime,
                  "peak_mb": r.ru_maxrss / 1024}))
"""


def write_folder(folder: Path, games: int, *, bots: int = BOTS, seed: int = 0) -> float:
    """Write ``folder/games.jsonl`` with ``games`` synthetic records; returns the seconds.

    Each line is a ``make_record`` record's JSON with its id, round and pair filled in
    (templates per players, result and ending: no record object per game)."""
    from synth_records import make_record

    t0 = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    names = [f"bot{k:02d}" for k in range(bots)]
    rng = random.Random(seed)
    strength = {n: rng.gauss(0.0, 150.0) for n in names}
    templates: dict[tuple[str, str, float, str, bool], str] = {}

    def line(white: str, black: str, score: float, variant: str, forfeit: bool) -> str:
        key = (white, black, score, variant, forfeit)
        text = templates.get(key)
        if text is None:
            extra: dict[str, Any] = ({"termination": "timeout", "forfeit": "black",
                                      "detail": "black ran out of time after 1000 ms"}
                                     if forfeit else {})
            r = make_record(white, black, score, variant=variant, game_id="@ID@",
                            round=987654321, pair=123456789, **extra)
            text = templates[key] = (r.to_json().replace("{", "{{").replace("}", "}}")
                                     .replace("987654321", "{round}")
                                     .replace("123456789", "{pair}")
                                     .replace("@ID@", "{gid}") + "\n")
        return text

    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    with open(folder / "games.jsonl", "w", encoding="utf-8") as f:
        written = 0
        rnd = 0
        while written < games:
            rnd += 1
            for p, (a, b) in enumerate(pairs, 1):
                for v in VARIANTS:
                    m = 1 / (1 + 10 ** (-(strength[a] - strength[b]) / 400))
                    for g, (w, bl, mean) in enumerate(((a, b, m), (b, a, 1 - m))):
                        if written >= games:
                            break
                        u = rng.random()
                        score = 1.0 if u < mean - 0.15 else 0.5 if u < mean + 0.15 else 0.0
                        forfeit = score == 1.0 and rng.random() < 0.002
                        gid = f"{v}/r{rnd}/p{p}/g{g}"
                        f.write(line(w, bl, score, v, forfeit).format(gid=gid, round=rnd,
                                                                      pair=p))
                        written += 1
    return time.perf_counter() - t0


def measure(checkout: Path, args: list[str], log: Path) -> dict[str, float]:
    """``arena ARGS`` of ``checkout``, run by the wrapper: rc, wall_s, cpu_s, peak_mb."""
    env = dict(os.environ, PYTHONPATH=str(checkout), OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1")
    code = ("import sys; sys.path.insert(0, sys.argv.pop(1)); import arena; "
            "from arena.cli import main; sys.argv[0] = 'arena'; main()")
    out = subprocess.run([sys.executable, "-c", _WRAPPER, str(log), sys.executable, "-c", code,
                          str(checkout), *args], env=env, capture_output=True, text=True,
                         check=True)
    result: dict[str, float] = json.loads(out.stdout)
    return result


def _line(label: str, r: dict[str, float], games: int) -> str:
    ok = r["rc"] == 0
    return (f"  {label:<26} {r['wall_s']:8.1f} s wall {r['cpu_s']:8.1f} s CPU "
            f"{r['peak_mb']:8.1f} MB peak RSS {1e6 * r['cpu_s'] / games:7.1f} µs CPU/game"
            + ("" if ok else f"  FAILED (exit {r['rc']:.0f})"))


def bench(quick: bool = False, echo: Callable[[str], Any] = print, *,
          games: Optional[int] = None, before: Optional[Path] = None,
          keep: Optional[Path] = None) -> dict[str, float]:
    """Write the folder, measure ``arena rate`` and ``arena report`` (and ``before``'s),
    print them side by side and return the figures."""
    n = games or (QUICK_GAMES if quick else GAMES)
    tmp = Path(tempfile.mkdtemp(prefix="bench-memory-folder-"))
    folder = keep or tmp / "results"
    try:
        seconds = write_folder(folder, n)
        size = (folder / "games.jsonl").stat().st_size
        echo(f"arena rate / arena report on {n:,} games ({size / 2**20:,.0f} MB games.jsonl, "
             f"written in {seconds:.1f} s; {BOTS} bots, {len(VARIANTS)} variants); load "
             f"average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; target "
             f"{TARGET_S:g} s and {TARGET_MB:g} MB at 1M games")
        figures: dict[str, float] = {"games": float(n)}
        runs = [("before", before)] if before is not None else []
        runs.append(("now", ROOT))
        for label, checkout in runs:
            assert checkout is not None
            for command in ("rate", "report"):
                args = [command, str(folder)] + (["-o", str(tmp / f"report-{label}")]
                                                 if command == "report" else [])
                r = measure(checkout, args, tmp / f"{label}-{command}.log")
                echo(_line(f"{label}: arena {command}", r, n))
                if r["rc"] != 0:
                    echo("    " + (tmp / f"{label}-{command}.log").read_text()[-500:]
                         .replace("\n", "\n    "))
                for key in ("wall_s", "cpu_s", "peak_mb"):
                    figures[f"{label}_{command}_{key}"] = r[key]
        for command in ("rate", "report"):
            if f"before_{command}_peak_mb" in figures:
                echo(f"  arena {command}: {figures[f'before_{command}_peak_mb'] / figures[f'now_{command}_peak_mb']:.1f}x "
                     f"less memory, {figures[f'before_{command}_cpu_s'] / figures[f'now_{command}_cpu_s']:.1f}x "
                     "less CPU time than before")
            if n < GAMES:
                continue  # the target is for a million games
            met = (figures[f"now_{command}_wall_s"] <= TARGET_S
                   and figures[f"now_{command}_peak_mb"] <= TARGET_MB)
            echo(f"  arena {command}: {'within' if met else 'NOT within'} the target "
                 f"({TARGET_S:g} s wall, {TARGET_MB:g} MB); CPU time "
                 f"{figures[f'now_{command}_cpu_s']:.1f} s")
        return figures
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").strip().split("\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_GAMES:,} games")
    parser.add_argument("--games", type=int, default=None,
                        help=f"games in the folder (default {GAMES:,})")
    parser.add_argument("--before", type=Path, default=None, metavar="DIR",
                        help="also measure this checkout (the old behaviour) first")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="write the folder here (kept) instead of a temporary folder")
    args = parser.parse_args(argv)
    bench(quick=args.quick, games=args.games, before=args.before, keep=args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
