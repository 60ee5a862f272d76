"""Rules engine speed: perft throughput, measured side by side in one run.

* perft from the start of nine men's morris (the placing phase) with bulk counting of the last
  turn (the leaf moves are counted from the move list, not played) against the same count
  without it (every leaf move pushed and popped): the ratio is what bulk counting saves; then
  depth 5 (5,140,800 turns, the first depth with captures) with bulk counting alone;
* the same from a position of the moving phase with flying and captures (taken from
  ``tests/data/perft.txt``), where move generation differs;
* the engine (bitmasks, push/pop) against ``tests/rules_reference.py``, the deliberately plain
  second implementation the tests check it with, on the same perft (both count the last turn
  from the move list);
* the referee's view: ``legal_moves()`` + ``outcome()`` per position of random games, against
  ``generate_raw()`` alone (what searches use).

Throughput is in turns (leaf move sequences) per second. Run alone with
``python benchmarks/bench_perft.py [--quick]``.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arena.rules import Position  # noqa: E402
from arena.variants import get_variant  # noqa: E402
from tests.rules_reference import RefState  # noqa: E402

#: a nine men's morris position of the moving phase: black flies (3 men), captures possible
MIDGAME = ".B...WB.W.B.W...WWW.W.W. b 0 0 0 - - 45"


def _timed(fn: Callable[[], int]) -> tuple[int, float]:
    t0 = time.perf_counter()
    n = fn()
    return n, time.perf_counter() - t0


def _best(fn: Callable[[], int], repeat: int) -> tuple[int, float]:
    runs = [_timed(fn) for _ in range(repeat)]
    return runs[0][0], min(t for _, t in runs)


def perft_pair(pos: Position, depth: int, repeat: int) -> dict[str, float]:
    """Turns/s of ``pos.perft(depth)`` with and without bulk counting."""
    n_bulk, t_bulk = _best(lambda: pos.perft(depth, bulk=True), repeat)
    n_full, t_full = _best(lambda: pos.perft(depth, bulk=False), repeat)
    if n_bulk != n_full:
        raise AssertionError(f"bulk {n_bulk} != full {n_full}")
    return {"turns": n_bulk, "bulk_per_s": n_bulk / t_bulk, "full_per_s": n_full / t_full,
            "bulk_s": t_bulk, "full_s": t_full}


def referee_view(games: int) -> dict[str, float]:
    """Positions/s of legal_moves()+outcome() against generate_raw() along random games."""
    texts = []
    for seed in range(games):
        rng = random.Random(seed)
        pos = Position("nine-mens-morris")
        while (moves := pos.legal_moves()):
            texts.append(pos.to_text())
            pos.push(rng.choice(moves))
    positions = [Position.from_text("nine-mens-morris", t) for t in texts]

    def referee() -> int:
        for p in positions:
            p.legal_moves()
            p.outcome()
        return len(positions)

    def raw() -> int:
        for p in positions:
            p.generate_raw()
        return len(positions)

    n, t_ref = _best(referee, 3)
    _, t_raw = _best(raw, 3)
    return {"positions": n, "referee_per_s": n / t_ref, "raw_per_s": n / t_raw}


def bench(quick: bool = False, echo: Callable[[str], Any] = print) -> dict[str, float]:
    """Run every measurement, print each figure with its ratio, and return the figures."""
    repeat = 1 if quick else 3
    pair_depth, mid_depth, ref_depth = (3, 3, 2) if quick else (4, 4, 3)
    echo(f"perft benchmark ({'quick' if quick else 'full'}; best of {repeat}; turns/s)")
    figures: dict[str, float] = {}

    start = perft_pair(Position("nine-mens-morris"), pair_depth, repeat)
    echo(f"  nine-mens-morris start, depth {pair_depth} ({start['turns']:,} turns): bulk "
         f"{start['bulk_per_s']:>10,.0f}/s | no bulk {start['full_per_s']:>10,.0f}/s | "
         f"bulk = {start['bulk_per_s'] / start['full_per_s']:.2f}x")
    figures.update({f"start_{k}": v for k, v in start.items()})
    if not quick:
        n5, t5 = _timed(lambda: Position("nine-mens-morris").perft(5))
        echo(f"  nine-mens-morris start, depth 5 ({n5:,} turns): bulk {n5 / t5:>10,.0f}/s, "
             f"{t5:.2f} s = {n5 / t5 / start['bulk_per_s']:.2f}x the depth-{pair_depth} rate")
        figures.update({"start5_bulk_per_s": n5 / t5, "start5_s": t5})

    mid = perft_pair(Position.from_text("nine-mens-morris", MIDGAME), mid_depth, repeat)
    echo(f"  moving phase (flying, captures), depth {mid_depth} ({mid['turns']:,} turns): bulk "
         f"{mid['bulk_per_s']:>10,.0f}/s | no bulk {mid['full_per_s']:>10,.0f}/s | "
         f"bulk = {mid['bulk_per_s'] / mid['full_per_s']:.2f}x")
    figures.update({f"midgame_{k}": v for k, v in mid.items()})

    variant = get_variant("nine-mens-morris")
    ref_n, t_ref = _timed(lambda: RefState.from_text(variant, MIDGAME).perft(ref_depth))
    eng_n, t_eng = _best(lambda: Position.from_text(variant, MIDGAME).perft(ref_depth), repeat)
    if ref_n != eng_n:
        raise AssertionError(f"reference {ref_n} != engine {eng_n}")
    echo(f"  engine vs plain reference, moving phase depth {ref_depth} ({eng_n:,} turns): "
         f"engine {eng_n / t_eng:>10,.0f}/s | reference {ref_n / t_ref:>8,.0f}/s | "
         f"engine = {t_ref / t_eng:.1f}x")
    figures.update({"engine_per_s": eng_n / t_eng, "reference_per_s": ref_n / t_ref})

    view = referee_view(10 if quick else 40)
    echo(f"  {view['positions']:,} positions of random games: legal_moves()+outcome() "
         f"{view['referee_per_s']:>9,.0f}/s | generate_raw() {view['raw_per_s']:>9,.0f}/s | "
         f"raw = {view['raw_per_s'] / view['referee_per_s']:.2f}x")
    figures.update(view)
    return figures


if __name__ == "__main__":
    from run import standalone  # benchmarks/run.py, next to this file

    sys.exit(standalone(bench, __doc__))
