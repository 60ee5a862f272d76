"""The own clock (``charge: own``, the default): a move is charged the bot's own time (wall
time less its waits for a CPU), the bot to move gets the CPU it asks for (a cgroup CPU
weight), and a verdict does not depend on the machine's load: a correct bot is never failed
and a broken one is never passed, on a quiet machine or a loaded one.

The loaded games here make their own load: the bot is pinned to one CPU together with busy
loops (each in a session of its own, as another user's jobs are), which this test starts
and ends by pid.  Whatever else the machine is doing adds to that load; no assertion here
depends on how much."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

from arena.check import check_bot, format_report
from arena.clock import TimeControl
from arena.manifest import load_bot
from arena.referee import play_game
from arena.sandbox import Isolation, Level, Sandbox, available_levels
from arena.sandbox.ownclock import OwnClock, OwnTime
from arena.sandbox.procs import run_delays_available
from arena.variants import get_variant
from arena.verdicts import IN_TIME, LATE, SHARE_MIN, UNJUDGED, judge_own

from .conftest import first_moves

ROOT = Path(__file__).resolve().parents[2]
needs_schedstat = pytest.mark.skipif(
    not run_delays_available(),
    reason="this kernel does not report run-queue waits (/proc/<pid>/schedstat)")

BOT = '''
"""Pinned to CPU {cpu}: before each move, {how}s for {factor} times its movetime."""
import os
import random
import threading
import time

from arena.botkit import run

os.sched_setaffinity(0, {{{cpu}}})
HOW, FACTOR = {how!r}, {factor}


def burn(seconds):
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


def choose(position, clock):
    budget = FACTOR * clock.go.movetime / 1000.0
    if HOW == "sleep":
        time.sleep(budget)
    elif HOW == "spin":  # watches the wall clock, as a student's loop does
        stop = time.time() + budget
        while time.time() < stop:
            pass
    elif HOW == "threads":  # three threads that each burn the budget at once
        workers = [threading.Thread(target=burn, args=(budget,)) for _ in range(3)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    else:
        burn(budget)
    return random.choice(position.legal_moves())


run(choose, name="{how}-{factor}")
'''


def _cpu() -> int:
    return min(os.sched_getaffinity(0))


def _bot(folder: Path, how: str, factor: float, *, pinned: bool = True) -> Path:
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    (folder / "bot.yaml").write_text(f'name: {how}-{factor:g}\ncommand: "{{python}} bot.py"\n')
    text = BOT.format(cpu=_cpu(), how=how, factor=factor)
    if not pinned:
        text = text.replace(f"os.sched_setaffinity(0, {{{_cpu()}}})", "")
    (folder / "bot.py").write_text(textwrap.dedent(text))
    return folder


@pytest.fixture
def hogs() -> Iterator[Callable[[int], list[int]]]:
    """``hogs(n)``: ``n`` busy loops pinned to the bots' CPU, each in its own session; all
    ended by pid afterwards."""
    started: list[subprocess.Popen[bytes]] = []

    def start(n: int) -> list[int]:
        for _ in range(n):
            started.append(subprocess.Popen(
                [sys.executable, "-c", f"import os\nos.sched_setaffinity(0, {{{_cpu()}}})\n"
                                       "while True: pass"], start_new_session=True))
        time.sleep(0.1)
        return [p.pid for p in started]

    try:
        yield start
    finally:
        for proc in started:
            proc.kill()
            proc.wait()


def _weighted_level() -> Level | None:
    """An isolation level whose bots get a CPU weight of their own here, or None."""
    for level in available_levels():
        if level is Level.NONE:
            continue
        with Sandbox(level, str(ROOT / "bots" / "random")) as sb:
            if sb.weighted:
                return level
    return None


WEIGHTED = _weighted_level()
needs_weight = pytest.mark.skipif(
    WEIGHTED is None, reason="no writable cgroup cpu controller here (a CPU weight for the "
                             "bot to move needs root or a delegated cgroup: arena doctor)")
RANDOM = ROOT / "bots" / "random"
TC = TimeControl(movetime_ms=100, handshake_ms=30000, margin_ms=100, clock="own")


def _t(wall: float, own: float, share: float, referee: float = 0.0,
       cpu: float | None = None) -> OwnTime:
    return OwnTime(wall_ms=wall, own_ms=own, bot_wait_ms=wall - own - referee,
                   referee_wait_ms=referee, cpu_ms=own if cpu is None else cpu, share=share)


def test_the_own_clock_judges_what_the_bot_did_and_says_when_it_cannot() -> None:
    """100 ms a move, 100 ms margin: the deadline is 200 ms of own time."""
    cases = [
        (_t(90, 60, 1.0), IN_TIME),           # a quiet machine
        (_t(210, 205, 1.0), LATE),            # over by its own time
        (_t(900, 150, 0.15), LATE),           # over its allowance, whatever the load
        (_t(190, 60, 0.3), IN_TIME),          # a slow machine, but within the deadline
        (_t(260, 200, 0.2, referee=80), IN_TIME),  # the referee read the reply late
        (_t(400, 90, 0.6), IN_TIME),          # a fair share of a CPU: its own time counts
        (_t(400, 90, 0.3), UNJUDGED),         # a spinner or a thinker? cannot be told
        (_t(1000, 199, 0.2), LATE),           # used more than its allowance
        # a correct bot's first move in a loaded suite (L4): 50 ms of CPU, 111 ms of own
        # time at 9 % of a CPU; on a quiet machine it answers in about 60 ms
        (_t(670, 111, 0.09, cpu=50), UNJUDGED),
        (_t(670, 150, 0.09, cpu=40), UNJUDGED),  # a sleeper or a slow page-in: cannot be told
        # the same bot's first move in another loaded run (L6): 54 ms of CPU, 219 ms of own
        # time (over the 200 ms limit) at 18 % of a CPU: its own time is not trusted there
        (_t(459, 219, 0.18, cpu=54), UNJUDGED),
        (_t(900, 360, 0.1, cpu=2), UNJUDGED),  # a starved sleeper: never passed, not failed
        (_t(360, 360, 1.0, cpu=2), LATE),      # a sleeper that got every CPU it asked for
        # a weighted sleeper under load (L8): 3 ms waited of 208, yet 16 % "of a CPU" (it
        # runs for a moment only): its own time is trusted, and over the limit
        (_t(208, 205, 0.16, cpu=1), LATE),
    ]
    for reading, expected in cases:
        verdict, why = judge_own(reading, 100, TC)
        assert verdict == expected, (reading, why)
        assert (why == "") == (verdict == IN_TIME)
    # the wall-clock cap (the bot never answered): late unless it cannot be judged
    assert judge_own(_t(600, 90, 0.7), 100, TC, answered=False)[0] == LATE
    assert judge_own(_t(600, 90, 0.1), 100, TC, answered=False)[0] == UNJUDGED
    assert judge_own(_t(600, 300, 0.1), 100, TC, answered=False)[0] == LATE
    assert "not judged" in judge_own(_t(400, 90, 0.3), 100, TC)[1]
    assert SHARE_MIN == 0.5


@needs_schedstat
def test_the_own_clock_counts_the_thinker_and_all_the_cpu() -> None:
    """A process with a thread that burns and one that sleeps: the move's own time is its
    wall time less the burning thread's wait, never less than all the CPU it used."""
    tids: list[int] = []

    def burner() -> None:
        tids.append(threading.get_native_id())
        until = time.thread_time() + 0.05
        while time.thread_time() < until:
            pass

    from arena.sandbox.procs import TaskTimes

    tasks = TaskTimes()
    me = os.getpid()
    clock = OwnClock(lambda fresh: tasks.read([me]), time.process_time)
    clock.start()
    began = time.monotonic()
    t = threading.Thread(target=burner)
    t.start()
    t.join()
    reading = clock.now(time.monotonic() - began, 0.0)
    assert reading.cpu_ms >= 45, reading
    assert reading.own_ms >= reading.cpu_ms - 1e-6
    assert reading.own_ms <= max(reading.wall_ms, reading.cpu_ms) + 1e-6
    assert 0.0 <= reading.share <= 1.0
    tasks.close()


@needs_schedstat
@needs_weight
def test_the_bot_to_move_gets_the_cpu_it_asks_for(tmp_path: Path,
                                                  hogs: Callable[[int], list[int]]) -> None:
    """A bot burning half its movetime shares its CPU with four busy loops: weighted as the
    bot to move it still gets most of the CPU, so no move waits long enough to go unjudged,
    and none is late."""
    hogs(4)
    bot = load_bot(_bot(tmp_path / "half", "burn", 0.5))
    moves = first_moves(bot, load_bot(RANDOM), TC, 12, seed=3, replays=0,
                        isolation=Isolation(WEIGHTED))  # type: ignore[arg-type]
    assert len(moves) == 12, "the correct bot lost (or its game was not judged)"
    mine = moves[0::2]
    # at a fifth of a CPU each move would take 250 ms; weighted, about its 50 ms of CPU
    assert sum(m.wall_ms for m in mine) < 0.6 * 250 * len(mine), mine


@needs_schedstat
@needs_weight
def test_broken_bots_lose_on_time_under_load(tmp_path: Path,
                                             hogs: Callable[[int], list[int]]) -> None:
    """Beside four busy loops on their CPU: a bot that burns 10 times its movetime, one
    that spins on the wall clock for 10 times its movetime, one that sleeps 3.5 times it,
    and one whose three threads burn its movetime together all lose on time, counted."""
    hogs(4)
    for how, factor in (("burn", 10), ("spin", 10), ("sleep", 3.5), ("threads", 0.9)):
        bot = load_bot(_bot(tmp_path / how, how, factor))
        record = play_game(bot, load_bot(RANDOM), "nine-mens-morris", TC, seed=7,
                           quit_grace_s=0.1, term_grace_s=0.1, replays=0,
                           isolation=Isolation(WEIGHTED))  # type: ignore[arg-type]
        assert (record.termination, record.forfeit) == ("timeout", "white"), (how, record.detail)
        assert record.void == "", (how, record.void)


@needs_schedstat
def test_without_a_cpu_weight_a_starved_bot_is_not_judged_never_failed_nor_passed(
        tmp_path: Path, hogs: Callable[[int], list[int]]) -> None:
    """At ``none`` (no cgroup, no CPU weight) with five busy loops on its CPU, a bot gets a
    sixth of it or less: a correct bot and a wall-clock spinner then look the same, so the
    check says NOT JUDGED for the first (never FAIL) and never PASS for the second."""
    hogs(5)
    level = Isolation(Level.NONE)
    opponent = load_bot(RANDOM)
    variants = [get_variant("three-mens-morris")]
    good = check_bot(load_bot(_bot(tmp_path / "good", "burn", 0.5)), variants=variants,
                     games=2, time_control=TC, opponent=opponent, isolation=level,
                     kept_games=0)
    assert good.verdict == "NOT JUDGED", "\n".join(format_report(good))
    assert not good.passed and "not judged" in good.unjudged[0]
    spinner = check_bot(load_bot(_bot(tmp_path / "spin", "spin", 10)), variants=variants,
                        games=2, time_control=TC, opponent=opponent, isolation=level,
                        kept_games=0)
    assert spinner.verdict in ("FAIL", "NOT JUDGED"), spinner.games
    assert not spinner.passed


@needs_schedstat
def test_the_same_verdicts_on_a_quiet_machine(tmp_path: Path) -> None:
    """No load of ours: the correct bots pass, the broken ones fail (at the default level)."""
    opponent = load_bot(RANDOM)
    variants = [get_variant("three-mens-morris")]
    for how, factor, passes in (("burn", 0.5, True), ("sleep", 0.5, True), ("burn", 10, False),
                                ("spin", 10, False), ("sleep", 3.5, False)):
        spec = load_bot(_bot(tmp_path / f"{how}-{factor}", how, factor, pinned=False))
        report = check_bot(spec, variants=variants, games=2, time_control=TC,
                           opponent=opponent, kept_games=0)
        if passes:  # a correct bot is never failed (a busy CI machine may leave it unjudged)
            assert report.verdict in ("PASS", "NOT JUDGED"), (how, factor, report.problems)
        else:
            assert report.verdict == "FAIL", (how, factor, report.games)
            assert all(p.kind == "timeout" for p in report.problems), report.problems


@needs_weight
def test_the_weight_follows_the_move(tmp_path: Path) -> None:
    """The bot to move weighs THINKING_WEIGHT processes; a bot waiting for its opponent
    (pondering, or spinning to slow it down) weighs one."""
    from arena.sandbox import cgroups

    with Sandbox(WEIGHTED, str(RANDOM)) as sb:  # type: ignore[arg-type]
        path = sb._cgroups.dirs["weight"]  # type: ignore[union-attr]
        name, low, high = cgroups._WEIGHTS[sb._cgroups.versions["weight"]]  # type: ignore[union-attr]
        assert (path / name).read_text().strip() == high  # starting up is timed too
        assert sb.to_move(False) and (path / name).read_text().strip() == low
        assert sb.to_move(True) and (path / name).read_text().strip() == high
        assert int(high) == cgroups.THINKING_WEIGHT * int(low)
        assert (path.parent / name).read_text().strip() == high


@needs_schedstat
def test_a_run_plays_unjudged_games_once_more_then_leaves_them(
        tmp_path: Path, hogs: Callable[[int], list[int]]) -> None:
    """Games the machine was too busy to judge are not saved: the run plays them once more
    at its end, then leaves them for the next run (which plays them)."""
    import io

    from arena.config import parse_config
    from arena.records import read_records
    from arena.tournament import run_tournament

    hogs(5)
    good = _bot(tmp_path / "good", "burn", 0.5)
    config = parse_config({
        "name": "busy", "bots": [str(good), str(RANDOM)], "variants": ["three-mens-morris"],
        "games_per_pairing": 2, "time": {"movetime": 100, "handshake": 30000},
        "isolation": "none", "workers": 1, "report": False, "output": str(tmp_path / "out")})
    console = io.StringIO()
    result = run_tournament(config, console=console)
    # each game is judged or left for the next run, never saved unjudged; the hogs make at
    # least one unjudged (a fresh-clone run beside four more busy loops once judged one of
    # the two on its second try: saved, as it should be)
    assert result.void >= 1 and result.void + result.played == 2, (
        result, console.getvalue()[-2000:])
    assert "are played once more" in (tmp_path / "out" / "arena.log").read_text()
    saved = read_records(tmp_path / "out" / "games.jsonl")
    assert len(saved) == result.played and not any(r.void for r in saved)
    lost = [(r.game_id, r.detail, r.replays, [(m.move, m.wall_ms, m.cpu_ms, m.wait_ms)
                                               for m in r.moves[-3:]])
            for r in saved if r.termination == "timeout"]
    if lost:  # a correct bot: never (its verdict, replays and last moves shown in full)
        pytest.fail(f"a correct bot lost on time: {lost!r}")


@needs_schedstat
def test_a_checks_own_time_leaves_out_its_waits(hogs: Callable[[int], list[int]]) -> None:
    """The judge's clock of a whole check (TreeClock): a process tree whose busy child shares
    its CPU with three busy loops is charged about a quarter of its wall time; one that
    sleeps, all of it."""
    from arena.sandbox.ownclock import TreeClock

    hogs(3)
    for code, busy in ((f"import os\nos.sched_setaffinity(0, {{{_cpu()}}})\n"
                        "import time\nend = time.time() + 1.5\nwhile time.time() < end: pass",
                        True),
                       ("import time\ntime.sleep(1.5)", False)):
        parent = subprocess.Popen([sys.executable, "-c",
                                   f"import subprocess, sys\nsubprocess.run([sys.executable, "
                                   f"'-c', {code!r}])"])
        clock = TreeClock(parent.pid)
        try:
            while parent.poll() is None:
                clock.read()
                time.sleep(0.2)
            wall, own = clock.read()  # to the end
        finally:
            parent.wait()
            clock.close()
        if busy:  # a quarter of a CPU at most (whatever else runs there): most of it waited
            assert own < 0.7 * wall, (wall, own)
        else:  # its sleep is its own time (its start-up may have waited for a CPU)
            assert own > 1.4, (wall, own)
