"""The CPU clock (``clock: cpu``): moves are charged the CPU time of the bot's whole process
tree; a bot using 80 % of its budget never loses on time on a loaded machine; a sleeping bot
still loses to the wall-clock cap; the record keeps wall and CPU ms for every move."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Iterator

import pytest

from arena.manifest import load_bot
from arena.clock import GameClock, TimeControl
from arena.errors import ConfigError
from arena.referee import play_game
from arena.sandbox import Isolation, Level
from arena.sandbox.procs import run_delays_available

from arena.records import MoveInfo
from arena.rules import Position

from .conftest import HOSTILE_BOTS, alive, first_moves


class _Enough(Exception):
    """Raised from on_move to stop a game after enough moves."""

BURNER = '''
"""Burns {share:.0%} of its per-move time in CPU (its own process clock), then moves."""
import random
import time

from arena.botkit import run


def choose(position, clock):
    until = time.process_time() + {share} * clock.go.movetime / 1000.0
    while time.process_time() < until:
        pass
    return random.choice(position.legal_moves())


run(choose, name="burner")
'''


def _burner(folder: Path, share: float) -> Path:
    folder.mkdir(parents=True)
    (folder / "bot.yaml").write_text('name: burner\ncommand: "{python} bot.py"\n')
    (folder / "bot.py").write_text(textwrap.dedent(BURNER.format(share=share)))
    return folder


@pytest.fixture
def loaded_machine() -> Iterator[list[int]]:
    """Two busy loops per core, each in its own session (so the scheduler's per-session
    groups cannot shield the bots from them); ended by pid afterwards."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
            for _ in range(2 * (os.cpu_count() or 1))]
    time.sleep(0.2)
    try:
        yield [h.pid for h in hogs]
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def test_time_control_knows_its_clock() -> None:
    tc = TimeControl.parse("200", clock="cpu")
    assert tc.clock == "cpu" and tc.to_dict()["clock"] == "cpu"
    assert "CPU" in tc.describe()
    clock = GameClock(tc)
    assert clock.deadline_ms(0) == 200 + tc.margin_ms
    assert clock.wall_deadline_ms(0) == 200 * tc.wall_factor + tc.margin_ms
    assert GameClock(TimeControl.parse("200")).wall_deadline_ms(0) == 200 + tc.margin_ms
    with pytest.raises(ConfigError, match="clock: expected one of own, wall, cpu"):
        TimeControl.parse("200", clock="sundial")
    with pytest.raises(ConfigError, match="wall_factor"):
        TimeControl(movetime_ms=100, clock="cpu", wall_factor=0.5)


def test_bot_using_80_percent_never_loses_on_a_loaded_machine(tmp_path: Path,
                                                              loaded_machine: list[int]) -> None:
    """At ``none``: without the CPU weight of the bot to move (which would shield it from the
    load), the busy loops slow it down."""
    bot = load_bot(_burner(tmp_path / "burner", 0.8))
    tc = TimeControl(movetime_ms=100, handshake_ms=20000, margin_ms=10, clock="cpu")
    moves: list[MoveInfo] = []

    def stop(position: Position, info: MoveInfo) -> None:
        if len(position.move_stack) == 1:  # a new play of the game
            moves.clear()
        moves.append(info)
        if len(moves) >= 16:
            raise _Enough

    try:
        record = play_game(bot, bot, "nine-mens-morris", tc, seed=3, on_move=stop,
                           isolation=Isolation(Level.NONE))
    except _Enough:
        record = None
    if record is not None:  # a loss on time: only if the machine starved it, and uncounted
        assert record.void and record.termination == "timeout", record.detail
        pytest.skip(f"the machine was too loaded for even the CPU clock's 5x cap: "
                    f"{record.void} (not counted, as it must be)")
    assert len(moves) == 16, "a bot lost on time"
    cpu = [m.cpu_ms for m in moves]
    # at none, CPU times are the processes' own, in clock ticks (10 ms here)
    assert all(c is not None and 60 <= c <= 120 for c in cpu), cpu  # type: ignore[operator]
    wall = sum(m.wall_ms for m in moves)
    assert wall > 1.3 * sum(cpu), f"the machine was not loaded: wall {wall:.0f} ms, cpu {cpu}"  # type: ignore[arg-type]
    assert alive(loaded_machine) == loaded_machine  # the load ran all along

    wall_tc = TimeControl(movetime_ms=100, handshake_ms=20000, margin_ms=10)
    record = play_game(bot, bot, "nine-mens-morris", wall_tc, seed=3, quit_grace_s=0.1,
                       term_grace_s=0.1, isolation=Isolation(Level.NONE))
    assert record.termination == "timeout", "the same bot must lose on the wall clock here"
    if run_delays_available():  # ... and the referee sees that the machine starved it
        assert record.replays and record.void, (record.replays, record.detail)


def test_a_sleeping_bot_still_loses_to_the_wall_cap() -> None:
    tc = TimeControl(movetime_ms=100, handshake_ms=20000, margin_ms=50, clock="cpu",
                     wall_factor=4)
    sleeper = load_bot(HOSTILE_BOTS / "sleeps-forever")
    random_bot = load_bot(Path(__file__).resolve().parents[2] / "bots" / "random")
    record = play_game(sleeper, random_bot, "nine-mens-morris", tc, seed=1,
                       quit_grace_s=0.1, term_grace_s=0.1)
    assert record.termination == "timeout" and record.forfeit == "white"
    assert "no bestmove within 450 ms" in record.detail


def test_wall_clock_records_cpu_time_too(tmp_path: Path) -> None:
    bot = load_bot(_burner(tmp_path / "burner", 0.5))
    tc = TimeControl(movetime_ms=100, handshake_ms=20000, margin_ms=60_000)  # never late
    moves = first_moves(bot, bot, tc, 4, seed=3)
    assert len(moves) == 4 and all(m.cpu_ms is not None and 45 <= m.cpu_ms <= 90 for m in moves), moves
