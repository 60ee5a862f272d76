"""Fair on a busy machine: moves are charged CPU time by default (wall-capped); a time
forfeit of a bot the machine starved (it waited on the run queue, not on its own clock) is
not counted but played again; a run says when the machine is overloaded; ``workers: auto``
leaves a core to the referees and the load.  The real games here starve a bot on purpose:
it shares one CPU with a busy loop (both pinned there), which this test starts and ends by
pid."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Iterator

import pytest

from arena.clock import TimeControl
from arena.errors import BotTimeout
from arena.manifest import load_bot
from arena.records import GameRecord, MoveInfo, PlayerInfo
from arena.referee import play_game, starved
from arena.sandbox import Isolation, Level, available_levels, default_charge, describe_charge
from arena.sandbox.procs import run_delays_available

from .conftest import HOSTILE_BOTS, first_moves

needs_schedstat = pytest.mark.skipif(
    not run_delays_available(),
    reason="this kernel does not report run-queue waits (/proc/<pid>/schedstat)")

PINNED = '''
"""Pinned to CPU {cpu}; burns {share} of its per-move time in CPU (or sleeps it), then moves."""
import os
import random
import time

from arena.botkit import run

os.sched_setaffinity(0, {{{cpu}}})


def choose(position, clock):
    budget = {share} * clock.go.movetime / 1000.0
    if {sleep}:
        time.sleep(budget)
    else:
        until = time.process_time() + budget
        while time.process_time() < until:
            pass
    return random.choice(position.legal_moves())


run(choose, name="pinned")
'''


def _cpu() -> int:
    return min(os.sched_getaffinity(0))


def _pinned(folder: Path, share: float, *, sleep: bool = False) -> Path:
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    (folder / "bot.yaml").write_text('name: pinned\ncommand: "{python} bot.py"\n')
    (folder / "bot.py").write_text(textwrap.dedent(PINNED.format(cpu=_cpu(), share=share,
                                                                  sleep=sleep)))
    return folder


@pytest.fixture
def hog() -> Iterator[int]:
    """A busy loop pinned to the bots' CPU (its own session); ended by pid afterwards."""
    proc = subprocess.Popen([sys.executable, "-c", f"import os\nos.sched_setaffinity(0, "
                             f"{{{_cpu()}}})\nwhile True: pass"], start_new_session=True)
    time.sleep(0.1)
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


def _timeout(wall: float, cpu: float, wait: float) -> BotTimeout:
    e = BotTimeout("no bestmove")
    e.wall_ms, e.cpu_ms, e.wait_ms = wall, cpu, wait
    return e


def test_a_starved_timeout_is_told_from_a_slow_or_sleeping_bot() -> None:
    cpu_tc = TimeControl(movetime_ms=100, margin_ms=10, clock="cpu", wall_factor=5)
    wall_tc = TimeControl(movetime_ms=100, margin_ms=10)
    # CPU clock, the wall cap (510 ms) hit: starved if most time off the CPU was a wait
    assert starved(_timeout(510, 60, 400), 100, cpu_tc)
    assert starved(_timeout(510, 60, 10), 100, cpu_tc) is None  # it slept or waited for input
    assert starved(_timeout(510, 130, 380), 100, cpu_tc) is None  # it overran its CPU time
    # wall clock: starved if it would have been in time without the wait
    assert starved(_timeout(160, 80, 90), 100, wall_tc)
    assert starved(_timeout(160, 80, 20), 100, wall_tc) is None
    assert starved(_timeout(160, 150, 0), 100, wall_tc) is None
    # nothing measured: never called starved
    assert starved(BotTimeout("x"), 100, cpu_tc) is None
    text = starved(_timeout(510, 60, 400), 100, cpu_tc)
    assert text is not None and "waited 400 ms for a CPU" in text


def test_the_default_clock_is_the_own_clock_where_there_is_one(tmp_path: Path) -> None:
    from arena.cli.common import time_control
    from arena.config import parse_config
    from arena.server.config import ServerConfig, parse_server_config

    expected = default_charge()
    assert expected == ("own" if run_delays_available() else "wall")
    assert time_control(None, None, 5000, 100, default_movetime=200).clock == expected
    assert time_control(None, None, 5000, 100, default_movetime=200, charge="wall").clock == "wall"
    assert ServerConfig().time_control.clock == expected
    assert parse_server_config({"time": {"movetime": 100, "charge": "wall"}}
                               ).time_control.clock == "wall"
    bots = Path(__file__).resolve().parents[2] / "bots"
    base = {"name": "t", "bots": [str(bots / "random"), str(bots / "greedy")],
            "output": str(tmp_path / "out")}
    for time_value in (None, 100, {"movetime": 100}, {"movetime": 100, "charge": "auto"}):
        data = dict(base, **({} if time_value is None else {"time": time_value}))
        assert parse_config(data).time_control.clock == expected, time_value
    assert parse_config(dict(base, time={"movetime": 100, "charge": "wall"})
                        ).time_control.clock == "wall"
    info, _ = describe_charge("cpu", 5)
    assert "CPU time" in info and "5 times" in info
    info, _ = describe_charge("own", 5)
    assert "own time" in info and "5 times" in info


def test_workers_auto_leaves_a_core_and_the_load(monkeypatch: pytest.MonkeyPatch) -> None:
    from arena import config

    monkeypatch.setattr(config.R, "usable_cpus", lambda: 8)
    for load, expected in ((0.3, 7), (2.9, 5), (7.5, 1), (40.0, 1)):
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        assert config.default_workers() == expected


def test_the_progress_line_and_the_report_say_when_bots_starve() -> None:
    from arena.progress import LoadWatch
    from arena.report.html import clock_summary

    def record(wait: float, replays: list[str]) -> GameRecord:
        return GameRecord(game_id="g", variant="nine-mens-morris", variant_params={},
                          white=PlayerInfo("a"), black=PlayerInfo("b"), result="1-0",
                          termination="blocked", replays=replays,
                          time_control={"clock": "cpu", "wall_factor": 5.0},
                          moves=[MoveInfo("d6", 100.0, 50.0, wait_ms=wait)] * 10)

    watch = LoadWatch()
    watch.add(record(5.0, []))
    assert watch.note() == ""
    for _ in range(5):
        watch.add(record(60.0, ["white ran out of time: waited"]))
    assert "overloaded" in watch.note() and "5 starved games replayed" in watch.note()
    summary = clock_summary([record(5.0, []), record(45.0, ["x"])])
    assert summary["clocks"] == ["the bot's CPU time (wall-clock cap 5x): 2 games"]
    assert summary["waited"] == 25.0 and summary["replayed"] == [{"id": "g", "reasons": ["x"]}]


@needs_schedstat
def test_a_starved_bot_is_replayed_under_the_wall_clock_and_fine_under_the_cpu_clock(
        tmp_path: Path, hog: int) -> None:
    """A bot that burns 70 % of its 100 ms, sharing its CPU with a busy loop (at ``none``:
    without the CPU weight of the bot to move, which would shield it): charged wall time it
    times out, and every time it is starved (so replayed, then counted with the reason);
    charged CPU time it plays on."""
    bot = load_bot(_pinned(tmp_path / "pinned", 0.7))  # (at none CPU times come in 10 ms ticks)
    random_bot = load_bot(Path(__file__).resolve().parents[2] / "bots" / "random")
    wall_tc = TimeControl(movetime_ms=100, handshake_ms=20000, margin_ms=10)
    none = Isolation(Level.NONE)
    record = play_game(bot, random_bot, "nine-mens-morris", wall_tc, seed=3, quit_grace_s=0.1,
                       term_grace_s=0.1, replays=2, isolation=none)
    assert record.termination == "timeout" and record.forfeit == "white", record.detail
    assert len(record.replays) == 2 and all("for one" in r for r in record.replays), (
        record.replays, record.detail)
    assert "starved a bot in all 3 plays" in record.void and "not counted" in record.void, (
        record.void, record.replays)
    cpu_tc = TimeControl(movetime_ms=100, handshake_ms=20000, margin_ms=10, clock="cpu")
    moves = first_moves(bot, random_bot, cpu_tc, 10, seed=3, isolation=none)
    assert len(moves) == 10, ("the bot lost under the CPU clock", moves)
    mine = moves[0::2]
    assert all(m.wait_ms is not None for m in moves)
    assert sum(m.wait_ms or 0 for m in mine) > 0.3 * sum(m.cpu_ms or 0 for m in mine), (
        "the bot was not starved: the test measured nothing", mine)


@needs_schedstat
def test_an_overrun_or_a_sleep_past_the_cap_still_forfeits_under_load(
        tmp_path: Path, hog: int) -> None:
    """The load excuses waiting for a CPU, nothing else: a bot that uses more CPU than its
    time, or sleeps past the wall cap, loses at once (no replay)."""
    random_bot = load_bot(Path(__file__).resolve().parents[2] / "bots" / "random")
    # a wall cap far above the CPU limit: however loaded the machine, the overrun bot's CPU
    # time passes its 110 ms before the cap (it needs 5 % of a CPU), while the sleeper sleeps
    tc = TimeControl(movetime_ms=100, handshake_ms=20000, margin_ms=10, clock="cpu",
                     wall_factor=20)
    for folder, share, sleep in (("overrun", 3.0, False), ("sleeper", 25.0, True)):
        bot = load_bot(_pinned(tmp_path / folder, share, sleep=sleep))
        record = play_game(bot, random_bot, "nine-mens-morris", tc, seed=5, quit_grace_s=0.1,
                           term_grace_s=0.1)
        assert (record.termination, record.forfeit) == ("timeout", "white"), record.detail
        assert record.replays == [], (folder, record.replays)
    sleeper = load_bot(HOSTILE_BOTS / "sleeps-forever")
    record = play_game(sleeper, random_bot, "nine-mens-morris", tc, seed=1, quit_grace_s=0.1,
                       term_grace_s=0.1)
    assert record.termination == "timeout" and record.replays == []


def test_a_reply_waiting_in_the_pipe_at_the_deadline_is_in_time() -> None:
    """A referee that got no CPU until past the deadline finds the bot's reply already in
    the pipe: the move was made in time (the wall cap is for bots that hang)."""
    from arena.bot import BotProcess
    from arena.protocol import format_go, format_position
    from arena.rules import Position
    from arena.variants import get_variant

    variant = get_variant("nine-mens-morris")
    bot = BotProcess(load_bot(Path(__file__).resolve().parents[2] / "bots" / "random"),
                     label="late-referee")
    try:
        bot.start()
        bot.read_handshake(20.0)
        bot.new_game(variant.name, variant.to_params(), {}, 20.0)
        bot._send((format_position(Position(variant).to_text()), format_go(movetime=100)),
                  time.monotonic() + 5)
        deadline = time.monotonic() + 10
        while not bot._poll_in.poll(50) and time.monotonic() < deadline:
            pass  # the reply is in the pipe now; the referee comes back after its deadline
        line = bot._read_line(time.monotonic() - 1.0)
        assert line.startswith("bestmove "), line
    finally:
        bot.close()


NICE_PROBE = '''
import os, sys
from arena.sandbox import Sandbox
os.nice(3)
with Sandbox(sys.argv[1], sys.argv[2]) as sb:
    proc = sb.popen(["/bin/sh", "-c", "cat /proc/self/autogroup; nice"])
    out, err = proc.communicate(timeout=60)
    sb.kill_all()
print(out.decode(), err.decode(), sep="")
'''


@pytest.mark.skipif(not os.path.exists("/proc/self/autogroup"),
                    reason="this kernel does not group processes by session (no autogroups)")
@pytest.mark.parametrize("level", [lv.value for lv in available_levels()])
def test_a_bot_in_its_own_session_stays_as_nice_as_its_referee(level: str,
                                                               tmp_path: Path) -> None:
    """A bot's new session is a new autogroup, whose CPU share would ignore the referee's
    niceness: the judge of a competition server (``nice: 10``) would then take the web
    server's CPU with every bot it starts."""
    base = os.getpriority(os.PRIO_PROCESS, 0)
    if base + 3 > 19:
        pytest.skip(f"this process is already at niceness {base}")
    folder = tmp_path / "bot"
    folder.mkdir(mode=0o755)
    done = subprocess.run([sys.executable, "-c", NICE_PROBE, level, str(folder)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert done.returncode == 0, done.stderr
    group, nice = done.stdout.split("\n")[:2]
    assert group.endswith(f" nice {base + 3}"), done.stdout
    assert int(nice) == base + 3
