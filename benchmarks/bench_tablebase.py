"""Endgame tablebases: build speed and probe speed, each next to the rules engine doing the
same work in the same run.

* **build**: the 3-3 table of nine men's morris (``--quick``: six men's morris up to 4-3),
  computed into a temporary folder; its move generation in moves/s against the engine's
  ``generate_raw()`` on positions of the same table (what a build written with the engine
  would do per move, before any indexing), and the time of each step;
* **probe**: ``Tablebase.probe()`` per second on random 3-3 positions against the engine's
  ``legal_moves()`` + ``outcome()`` on the same positions (the referee's work per move, the
  budget adjudication adds to), then ``probe_moves()`` (every legal move probed, what the
  perfect bot and analysis call) against the same;
* **open**: opening the folder and the first probe (reading and checking the file) against
  reading the file's bytes.

Run alone with ``python benchmarks/bench_tablebase.py [--quick]``.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arena.board import get_topology  # noqa: E402
from arena.rules import Position  # noqa: E402
from arena.tablebase import TableRules, build_tables, open_tablebase, table_name  # noqa: E402
from arena.tablebase.fileformat import read_header  # noqa: E402
from arena.variants import Variant, get_variant  # noqa: E402


def _best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _fresh(texts: list[tuple[Variant, str]], fn: Callable[[Position], Any],
           repeat: int) -> float:
    """Seconds per position of ``fn`` on new positions each run (the engine remembers its
    last move list and outcome per position, so a second call on the same one is free)."""
    times = []
    for _ in range(repeat):
        positions = [Position.from_text(v, t) for v, t in texts]
        t0 = time.perf_counter()
        for p in positions:
            fn(p)
        times.append(time.perf_counter() - t0)
    return min(times) / len(texts)


def _positions(variant: Variant, men: tuple[int, int], count: int, seed: int) -> list[Position]:
    rng = random.Random(seed)
    n = get_topology(variant.board).size
    out = []
    for _ in range(count):
        pts = rng.sample(range(n), sum(men))
        text = ["."] * n
        for p in pts[:men[0]]:
            text[p] = "W"
        for p in pts[men[0]:]:
            text[p] = "B"
        out.append(Position.from_text(variant, f"{''.join(text)} {rng.choice('wb')} 0 0 0 - - 80"))
    return out


def bench(quick: bool = False, echo: Callable[[str], Any] = print) -> dict[str, float]:
    """Build, then probe; print each figure with its reference and return the figures."""
    variant = get_variant("six-mens-morris" if quick else "nine-mens-morris")
    top = (4, 3) if quick else (3, 3)
    rules = TableRules.of(variant)
    echo(f"tablebase benchmark ({'quick' if quick else 'full'}: {variant.name} up to "
         f"{top[0]}-{top[1]})")
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-tb-") as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        build_tables(variant, top, folder)
        built = time.perf_counter() - t0
        header = read_header(folder / table_name(rules, *top)).data
        edges = header["build"]["edges"]
        steps = header["build"]["seconds"]
        entries = sum(o["classes"] * o["per_class"] for o in header["orientations"])
        sample = [(variant, p.to_text()) for p in _positions(variant, top, 2000, 1)]
        per_position = _fresh(sample, Position.generate_raw, 3)
        engine_moves = sum(len(Position.from_text(v, t).generate_raw()) for v, t in sample)
        gen_rate = edges / steps["moves"]
        eng_rate = engine_moves / (per_position * len(sample))
        echo(f"  build of {top[0]}-{top[1]} ({entries:,} entries, {edges:,} moves kept): "
             f"{steps['moves']:.1f} s moves, {steps['reverse']:.1f} s reverse, "
             f"{steps['solve']:.1f} s solve; whole folder {built:.1f} s")
        echo(f"  move generation: build {gen_rate:>12,.0f} moves/s | engine generate_raw "
             f"{eng_rate:>10,.0f} moves/s | build = {gen_rate / eng_rate:.1f}x")
        figures.update(build_s=built, build_moves_per_s=gen_rate, engine_moves_per_s=eng_rate,
                       entries=entries)

        probe_men = (3, 3)
        positions = _positions(variant, probe_men, 300 if quick else 1000, 2)
        blob_s = _best(lambda: (folder / table_name(rules, 3, 3)).read_bytes(), 3)

        def first_probe() -> None:
            with open_tablebase(folder) as tb:
                tb.probe(positions[0])

        open_s = _best(first_probe, 3)
        echo(f"  open + first probe {open_s * 1000:8.2f} ms | read the 3-3 file "
             f"{blob_s * 1000:8.2f} ms | open = {open_s / blob_s:.1f}x")
        texts = [(variant, p.to_text()) for p in positions]
        with open_tablebase(folder) as tb:
            tb.probe(positions[0])
            probe_s = _fresh(texts, tb.probe, 3)
            moves_s = _fresh(texts, tb.probe_moves, 1)
        ref_s = _fresh(texts, lambda p: (p.legal_moves(), p.outcome()), 3)
        echo(f"  probe()       {probe_s * 1e6:9.1f} us | legal_moves()+outcome() "
             f"{ref_s * 1e6:7.1f} us | probe = {probe_s / ref_s:.1f}x")
        echo(f"  probe_moves() {moves_s * 1e6:9.1f} us | legal_moves()+outcome() "
             f"{ref_s * 1e6:7.1f} us | probe_moves = {moves_s / ref_s:.1f}x")
        figures.update(open_s=open_s, read_s=blob_s, probe_us=probe_s * 1e6,
                       probe_moves_us=moves_s * 1e6, referee_us=ref_s * 1e6)
    return figures


if __name__ == "__main__":
    from run import standalone  # benchmarks/run.py, next to this file

    sys.exit(standalone(bench, __doc__))
