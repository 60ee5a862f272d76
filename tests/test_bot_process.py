""":class:`BotProcess` against real processes: handshake, moves, deadlines, caps, transcript,
logging and shutdown.  (Reading ``bot.yaml`` is tested in ``test_manifest.py``.)"""

from __future__ import annotations

import dataclasses
import logging
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

import psutil
import pytest

from arena.bot import LINE_CAP, STDERR_CAP, BotProcess, is_gone
from arena.errors import BotCrashed, BotStartError, BotTimeout, ProtocolError
from arena.manifest import BotSpec, load_bot
from arena.protocol import Go
from arena.rules import Position
from arena.sandbox.procs import run_delays_available
from arena.variants import get_variant
from tests.conftest import read_pids, test_bot

pytestmark = pytest.mark.usefixtures("no_leftover_children")

NMM = get_variant("nine-mens-morris")


# --------------------------------------------------------------------------------------
# Processes
# --------------------------------------------------------------------------------------


@pytest.fixture
def started() -> Iterator[Callable[[BotSpec], BotProcess]]:
    """Starts bots (handshake and new game done); closes them all at the end."""
    procs: list[BotProcess] = []

    def start(spec: BotSpec) -> BotProcess:
        bp = BotProcess(spec, quit_grace_s=0.2, term_grace_s=0.2)
        procs.append(bp)
        bp.start()
        bp.read_handshake(5.0)
        bp.new_game(NMM.name, NMM.to_params(), {"Seed": "1"}, 5.0)
        return bp

    yield start
    for bp in procs:
        bp.close()


def test_handshake_and_moves(random_bot: BotSpec, started: Callable[[BotSpec], BotProcess],
                             caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="arena.bot")
    bp = started(random_bot)
    hs = bp.handshake
    assert hs.id == {"name": "random", "author": "Morris Arena"}
    assert hs.option("seed") is not None and hs.option("seed").type == "spin"  # type: ignore
    assert 0 < hs.ms < 5000
    pos = Position(NMM)
    for _ in range(4):
        text, ms = bp.go(pos.to_text(), [str(m) for m in pos.move_stack], Go(movetime=1000), 2.0)
        assert 0 < ms < 2000
        pos.push(pos.parse_move(text))
    sent = [line for d, line in bp.transcript if d == "<<"]
    got = [line for d, line in bp.transcript if d == ">>"]
    assert sent[0] == "morris 1" and "setoption name Seed value 1" in sent
    assert sent[-1] == "go movetime 1000" and sent[-2].startswith("position ")
    assert sent[-2].endswith(" ".join(str(m) for m in pos.move_stack[:3]))
    assert got[-1] == f"bestmove {pos.move_stack[-1]}"
    messages = [r.getMessage() for r in caplog.records if r.name == "arena.bot"]
    assert any(m.endswith("<< go movetime 1000") for m in messages)
    assert any(m.endswith(f">> bestmove {pos.move_stack[-1]}") for m in messages)
    pid = bp.pid
    assert pid is not None
    bp.close("1-0", "blocked")
    assert is_gone(pid) and bp.returncode == 0  # it quit by itself
    assert ("<<", "gameover 1-0 blocked") in bp.transcript and ("<<", "quit") in bp.transcript
    bp.close()  # closing twice is fine


def play_until_error(bp: BotProcess, timeout_s: float = 1.0, moves: int = 10) -> Exception:
    """Ask ``bp`` for moves until it fails; returns the error."""
    pos = Position(NMM)
    for _ in range(moves):
        try:
            text, _ = bp.go(pos.to_text(), [], Go(movetime=100), timeout_s)
        except Exception as e:  # noqa: BLE001 - the test inspects it
            return e
        pos.push(pos.parse_move(text))
        pos.push(pos.legal_moves()[0])
    raise AssertionError("the bot never failed")


def test_timeout_is_enforced_by_the_referee(started: Callable[[BotSpec], BotProcess]) -> None:
    bp = started(test_bot("sleepy"))
    t0 = time.monotonic()
    error = play_until_error(bp, timeout_s=0.5)
    assert isinstance(error, BotTimeout) and "no bestmove within 500 ms" in str(error)
    assert 0.5 <= time.monotonic() - t0 < 2.5


def test_a_second_reply_between_requests_is_caught(started: Callable[[BotSpec], BotProcess]) -> None:
    bp = started(test_bot("twice-late"))
    pos = Position(NMM)
    for _ in range(2):
        text, _ = bp.go(pos.to_text(), [], Go(movetime=100), 1.0)
        pos.push(pos.parse_move(text))
        pos.push(pos.legal_moves()[0])
    text, _ = bp.go(pos.to_text(), [], Go(movetime=100), 1.0)  # the third: answered twice
    time.sleep(0.5)  # the late second line arrives while the referee is not asking
    with pytest.raises(ProtocolError, match="a second reply") as info:
        bp.go(pos.to_text(), [], Go(movetime=100), 1.0)
    assert info.value.line == f"bestmove {text}"


def test_crash_carries_the_exit_code(started: Callable[[BotSpec], BotProcess]) -> None:
    error = play_until_error(started(test_bot("crash")))
    assert isinstance(error, BotCrashed) and error.returncode == 1
    assert "RuntimeError: misbehave: crashing on purpose" in str(error)


def test_endless_line_is_cut_without_eating_memory(
        started: Callable[[BotSpec], BotProcess]) -> None:
    me = psutil.Process()
    before = me.memory_info().rss
    error = play_until_error(started(test_bot("huge-line")))
    assert isinstance(error, ProtocolError) and f"longer than {LINE_CAP} bytes" in str(error)
    assert error.line is not None and error.line.startswith("bestmove xxx") and len(error.line) <= 300
    assert me.memory_info().rss - before < 32 * 2**20


SHAPES = r"""
import sys, time
out = sys.stdout.buffer
def send(data):
    out.write(data)
    out.flush()
shape = sys.argv[1]
for line in sys.stdin:
    word = line.split(" ", 1)[0].strip()
    if word == "morris":
        send(b"id name shapes\nmorrisok\n")
    elif word == "isready":
        send(b"readyok\n")
    elif word == "go" and shape == "split":
        send(b"best")
        time.sleep(0.05)
        send(b"move d6\n")
    elif word == "go":
        send({"plain": b"bestmove d6\n", "crlf": b"bestmove d6\r\n",
              "info": b"info depth 1\nbestmove d6\n",
              "long": b"bestmove d6 " + b"x" * 100 + b"\n"}[shape])
    elif word == "quit":
        break
"""


@pytest.mark.parametrize("shape", ["plain", "crlf", "info", "split", "long"])
def test_a_reply_reads_the_same_whichever_way_it_arrives(shape: str, tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(SHAPES)
    (tmp_path / "bot.yaml").write_text(f'command: "{{python}} bot.py {shape}"\n')
    with BotProcess(load_bot(tmp_path), line_cap=64, quit_grace_s=0.2) as bp:
        bp.start()
        bp.read_handshake(5.0)
        bp.new_game(NMM.name, NMM.to_params(), {}, 5.0)
        if shape == "long":  # one whole line in one read, but over the cap
            with pytest.raises(ProtocolError, match="a line longer than 64 bytes"):
                bp.go(Position(NMM).to_text(), [], Go(movetime=100), 2.0)
            return
        for _ in range(3):
            assert bp.go(Position(NMM).to_text(), [], Go(movetime=100), 2.0)[0] == "d6"
        got = [line for d, line in bp.transcript if d == ">>"]
        assert got[-1] == "bestmove d6"
        assert ("info depth 1" in got) == (shape == "info")


def test_stderr_is_drained_and_capped(started: Callable[[BotSpec], BotProcess]) -> None:
    bp = started(test_bot("stderr-flood"))
    pos = Position(NMM)
    for _ in range(5):  # each move writes ~240 KB of stderr first: more than a pipe holds
        text, _ = bp.go(pos.to_text(), [], Go(movetime=100), 2.0)
        pos.push(pos.parse_move(text))
        pos.push(pos.legal_moves()[0])
    bp.close()  # the reader has drained everything once the bot is gone (it races a live bot)
    tail = bp.stderr_tail()
    assert 0 < len(tail) <= STDERR_CAP and tail.rstrip().endswith("flood")


def test_a_bot_that_does_not_read_cannot_block_the_referee(
        started: Callable[[BotSpec], BotProcess]) -> None:
    bp = started(test_bot("sleepy"))
    # now it sleeps and reads nothing more
    assert isinstance(play_until_error(bp, timeout_s=0.5), BotTimeout)
    many = ["a1"] * 200_000  # a 600 KB position line: far more than a pipe holds
    t0 = time.monotonic()
    with pytest.raises(BotTimeout, match="not reading its input"):
        bp.go(Position(NMM).to_text(), many, Go(movetime=100), 0.3)
    assert time.monotonic() - t0 < 1.5


def test_start_failures() -> None:
    with pytest.raises(BotStartError, match="cannot run"):
        BotProcess(test_bot("missing-command")).start()
    bp = BotProcess(test_bot("bad-handshake"))
    bp.start()
    with pytest.raises(BotStartError, match="bad handshake") as info:
        bp.read_handshake(5.0)
    assert info.value.line == "hello referee"
    bp.close()
    assert bp.returncode is not None


def test_a_bot_that_exits_on_quit_waits_for_no_grace(random_bot: BotSpec) -> None:
    bp = BotProcess(random_bot, quit_grace_s=5.0, term_grace_s=5.0)
    bp.start()
    bp.read_handshake(5.0)
    t0 = time.monotonic()
    bp.close()
    assert time.monotonic() - t0 < 2.0 and bp.returncode == 0


def test_close_kills_the_process_group(pidfile: Path, started: Callable[[BotSpec], BotProcess],
                                       assert_all_gone: Callable[[list[int]], None]) -> None:
    bp = started(test_bot("setsid-grandchild"))
    pids = read_pids(pidfile)
    assert len(pids) == 3 and not any(is_gone(p) for p in pids)
    t0 = time.monotonic()
    bp.close("1/2-1/2", "repetition")
    assert time.monotonic() - t0 < 1.5
    assert_all_gone(pids)


#: starts bots that close their input at once, so that the ``morris`` line the spawner
#: thread writes after the spawn often meets a closed pipe (the crash path runs on the
#: spawner thread itself); prints how many start failures came back
_INSTANT_EXITS = r"""
import sys
from arena.bot import BotProcess
from arena.errors import BotStartError
from arena.manifest import BotSpec, load_bot
from arena.sandbox import Isolation, Level

spec = BotSpec(name="gone", path=sys.argv[1], command=("/bin/sh", "-c", "exec 0<&- 1>&-"),
               cwd=sys.argv[1])
failed = 0
for _ in range(40):
    with BotProcess(spec, isolation=Isolation(Level.NONE)) as bp:
        bp.start()
        try:
            bp.read_handshake(5.0)
        except BotStartError:
            failed += 1
print(failed)
"""


def test_a_bot_gone_before_its_first_line_is_a_start_failure_not_a_hang(tmp_path: Path) -> None:
    """The spawner thread writes ``morris``; a bot already gone makes that write fail, and
    the crash report it builds must not wait for the spawn it is part of (it did: the
    spawn waited for itself, forever, about one start in six)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _INSTANT_EXITS, str(tmp_path)],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["40"]


# --------------------------------------------------------------------------------------
# The own clock and the referee's other threads
# --------------------------------------------------------------------------------------


class _GilHolder:
    """An ``after_send`` that starts a thread keeping the GIL for about ``seconds``: the
    builtin ``sum`` of a ``range`` runs in C and never offers it (as a referee thread of a
    pool, a spawn or a stderr reader does when it gets no CPU on a busy machine)."""

    def __init__(self, seconds: float) -> None:
        # sized by the fastest of a few timings of a sum long enough to run at its long-run
        # speed (a short one runs slower per number, and one slowed by another process
        # would make the hold shorter than asked: the test would prove nothing)
        sample, fastest = 2_000_000, float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            sum(range(sample))
            fastest = min(fastest, time.perf_counter() - t0)
        self.n = int(sample * seconds / max(fastest, 1e-6))
        self.threads: list[threading.Thread] = []

    def __call__(self) -> None:
        thread = threading.Thread(target=sum, args=(range(self.n),), daemon=True)
        self.threads.append(thread)
        thread.start()
        time.sleep(0)  # let it take the GIL before the referee goes to wait


def _own_move(spec: BotSpec, started: Callable[[BotSpec], BotProcess], hold_s: float,
              movetime_ms: int) -> tuple[float, float]:
    bp = started(spec)
    pos = Position(NMM)
    bp.go(pos.to_text(), [], Go(movetime=movetime_ms), 10.0, own_limit_s=10.0)  # warmed up
    hold = _GilHolder(hold_s)
    bp.go(pos.to_text(), [], Go(movetime=movetime_ms), 10.0, own_limit_s=10.0,
          after_send=hold)
    for thread in hold.threads:
        thread.join()
    own = bp.last_own
    assert own is not None
    return own.wall_ms, own.own_ms


@pytest.mark.skipif(not run_delays_available(),
                    reason="this kernel does not report run-queue waits (/proc/<pid>/schedstat)")
def test_the_referees_wait_for_the_gil_is_not_the_bots_time(
        random_bot: BotSpec, started: Callable[[BotSpec], BotProcess]) -> None:
    """Another thread of the referee's process keeps the GIL for 0.6 s just after a request
    is written: the bot's instant reply is read 0.6 s late, which is the referee's delay, not
    the bot's time; a bot that sleeps 0.4 s before its reply is still charged that sleep."""
    wall, own = _own_move(random_bot, started, 0.6, 100)
    assert wall > 400, "the GIL was not held over the move (the test proves nothing)"
    assert own < 150, f"charged {own:.0f} ms of a {wall:.0f} ms move spent waiting for the GIL"
    sleeper = dataclasses.replace(test_bot("timed"),
                                  command=(sys.executable, "bot.py", "sleep", "4"))
    wall, own = _own_move(sleeper, started, 0.2, 100)
    assert own > 380, f"a 400 ms sleep charged as {own:.0f} ms (of {wall:.0f})"
