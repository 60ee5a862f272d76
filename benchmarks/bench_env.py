"""The learning environment's cost over the rules engine (issue 41), side by side in one run.

On one set of positions (reached by seeded random games of nine men's morris, every phase):

* ``arena perft``'s rate: moves per second of ``Position.perft(2, bulk=False)`` from each
  position (every move generated, pushed and popped);
* the engine playing random games on its own: turns per second of ``legal_moves()``,
  ``outcome()`` and ``push`` from each position (what a referee does per turn);
* the PettingZoo environment (:class:`arena.env.MorrisEnv`) playing random legal actions from
  each position: turns per second and actions (``step`` calls) per second, each with the
  observation and action mask an agent reads before it (``observe``).

Printed: the environment's turns/s ÷ perft's moves/s (the issue's figure) and ÷ the engine's
own random play (what the environment adds to a turn: the encoding, the mask, the
observation).  Run alone with ``python benchmarks/bench_env.py [--quick]``.
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

VARIANT = "nine-mens-morris"
TURNS = 30  # per position, at most


def positions(count: int, seed: int = 41) -> list[str]:
    """Position texts of random games, every few plies (placing, moving, flying)."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < count:
        pos = Position(VARIANT)
        while pos.outcome() is None and len(out) < count:
            if rng.random() < 0.25:
                out.append(pos.to_text())
            pos.push(rng.choice(pos.legal_moves()))
    return out


def perft_rate(texts: list[str]) -> tuple[int, float]:
    moves, t0 = 0, time.perf_counter()
    for text in texts:
        moves += Position.from_text(VARIANT, text).perft(2, bulk=False)
    return moves, time.perf_counter() - t0


def engine_rate(texts: list[str], seed: int = 1) -> tuple[int, float]:
    rng = random.Random(seed)
    turns, t0 = 0, time.perf_counter()
    for text in texts:
        pos = Position.from_text(VARIANT, text)
        for _ in range(TURNS):
            if pos.outcome() is not None:
                break
            pos.push(rng.choice(pos.legal_moves()))
            turns += 1
    return turns, time.perf_counter() - t0


def env_rate(texts: list[str], seed: int = 1) -> tuple[int, int, float]:
    import numpy as np

    from arena.env import MorrisEnv

    rng = np.random.default_rng(seed)
    e = MorrisEnv(VARIANT)
    turns = steps = 0
    t0 = time.perf_counter()
    for text in texts:
        e.reset(options={"position": text})
        start = len(e.position.move_stack)
        while not (e.terminations[e.agent_selection] or e.truncations[e.agent_selection]):
            if len(e.position.move_stack) - start >= TURNS:
                break
            seen = e.observe(e.agent_selection)
            e.step(int(rng.choice(np.flatnonzero(seen["action_mask"]))))
            steps += 1
        turns += len(e.position.move_stack) - start
    return turns, steps, time.perf_counter() - t0


def bench(quick: bool = False, echo: Callable[[str], Any] = print) -> dict[str, float]:
    try:
        import arena.env  # noqa: F401
        from arena.env import MorrisEnv  # noqa: F401
    except Exception as e:  # noqa: BLE001 - the rl extra is optional
        echo(f"env: skipped ({e})")
        return {}
    texts = positions(40 if quick else 300)
    moves, t_perft = perft_rate(texts)
    turns_e, t_engine = engine_rate(texts)
    turns, steps, t_env = env_rate(texts)
    perft_mps = moves / t_perft
    engine_tps = turns_e / t_engine
    env_tps, env_sps = turns / t_env, steps / t_env
    echo(f"env: {len(texts)} positions of {VARIANT}, up to {TURNS} random turns each")
    echo(f"  arena perft (depth 2, every move pushed): {perft_mps:10,.0f} moves/s")
    echo(f"  engine random play (legal_moves, outcome, push): {engine_tps:10,.0f} turns/s")
    echo(f"  MorrisEnv random play (observe, step): {env_tps:10,.0f} turns/s, "
         f"{env_sps:,.0f} actions/s ({steps / max(1, turns):.2f} actions a turn)")
    echo(f"  env turns/s / perft moves/s: {env_tps / perft_mps:.3f}")
    echo(f"  env turns/s / engine random play turns/s: {env_tps / engine_tps:.3f}")
    return {"perft_moves_per_s": perft_mps, "engine_turns_per_s": engine_tps,
            "env_turns_per_s": env_tps, "env_actions_per_s": env_sps,
            "env_over_perft": env_tps / perft_mps, "env_over_engine": env_tps / engine_tps}


if __name__ == "__main__":
    from benchmarks.run import standalone

    sys.exit(standalone(bench, __doc__))
