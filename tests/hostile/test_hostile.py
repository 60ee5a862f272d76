"""Hostile bots against ``bots/random``, through the real referee: every game ends with the
right forfeit recorded, the opponent wins, no process of either bot survives, and (at the
levels that promise it, see docs/SECURITY.md) no file outside the bot's folder changes and no
connection leaves the sandbox.

The fork bomb and the memory hog run only inside a containment this test checked first
(:func:`tests.hostile.conftest.containment`); they skip with the reason elsewhere.
"""

from __future__ import annotations

import hashlib
import shutil
import socket
from pathlib import Path
from typing import Optional

import pytest

from arena.bot import STDERR_CAP, load_bot
from arena.clock import TimeControl
from arena.records import GameRecord, append_record, read_records
from arena.referee import play_game
from arena.rules import Termination
from arena.sandbox import Isolation, Level, Limits, best_level

from .conftest import HOSTILE_BOTS, containment, first_moves, processes_in, wait_gone

ROOT = Path(__file__).resolve().parents[2]
BEST = best_level()
#: small limits, so the hogs hit them fast
LIMITS = Limits(memory_mb=128, pids=64, tmp_mb=16)
#: fast games; the handshake is generous for a loaded machine
TC = TimeControl(movetime_ms=300, handshake_ms=15000, margin_ms=100)
CPU_TC = TimeControl(movetime_ms=300, handshake_ms=15000, margin_ms=100, clock="cpu")
#: the memory hog needs time to fill its limit on a loaded machine (it crashes long before)
SLOW_TC = TimeControl(movetime_ms=3000, handshake_ms=15000, margin_ms=100)

T = Termination
#: hostile bot -> the forfeit its game must end with
EXPECTED: dict[str, Termination] = {
    "sleeps-forever": T.TIMEOUT,
    "busy-loop": T.TIMEOUT,
    "huge-line": T.PROTOCOL_ERROR,
    "stderr-flood": T.TIMEOUT,
    "closes-stdout": T.CRASH,
    "exits-mid-game": T.CRASH,
    "nul-bytes": T.PROTOCOL_ERROR,
    "early-reply": T.PROTOCOL_ERROR,
    "double-reply": T.PROTOCOL_ERROR,
    "lingering-child": T.ILLEGAL_MOVE,
    "setsid-daemon": T.ILLEGAL_MOVE,
    "fork-bomb": T.TIMEOUT,
    "memory-hog": T.CRASH,
    "file-writer": T.ILLEGAL_MOVE,
    "file-reader": T.ILLEGAL_MOVE,
    "network": T.ILLEGAL_MOVE,
    "ignores-sigterm": T.TIMEOUT,
    "cpu-threads": T.TIMEOUT,
}
#: bots that need a checked containment (process and memory limits) to run at all
CONTAINED = {"fork-bomb", "memory-hog"}
#: bots that only lose under the CPU clock (they answer within the wall clock)
CPU_CLOCK = {"cpu-threads"}


def test_every_hostile_bot_folder_is_covered() -> None:
    folders = {p.name for p in HOSTILE_BOTS.iterdir() if (p / "bot.yaml").is_file()}
    assert folders == set(EXPECTED)


def _digest(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with a hash of its content."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


class Arena:
    """A tmp layout: a copy of bots/random (the opponent and the victim) and a results folder."""

    def __init__(self, tmp: Path) -> None:
        self.opponent_dir = tmp / "bots" / "random"
        shutil.copytree(ROOT / "bots" / "random", self.opponent_dir)
        self.results = tmp / "results" / "hostile"
        self.results.mkdir(parents=True)
        self.games = self.results / "games.jsonl"
        self.games.write_text("")
        self.before = (_digest(self.opponent_dir), _digest(self.results))

    def untouched(self) -> bool:
        """No file of the opponent's folder or the results folder changed or appeared."""
        return (_digest(self.opponent_dir), _digest(self.results)) == self.before

    def play(self, name: str, *, level: Level, hostile_white: bool,
             options: Optional[dict[str, object]] = None, cpu: bool = False) -> GameRecord:
        hostile = load_bot(HOSTILE_BOTS / name, options=options)
        opponent = load_bot(self.opponent_dir)
        white, black = (hostile, opponent) if hostile_white else (opponent, hostile)
        tc = CPU_TC if cpu else SLOW_TC if name == "memory-hog" else TC
        record = play_game(white, black, "nine-mens-morris", tc, seed=7,
                           game_id=f"{name}-{level.value}", quit_grace_s=0.2, term_grace_s=0.2,
                           isolation=Isolation(level, LIMITS))
        return record

    def check(self, record: GameRecord, name: str, hostile_white: bool, *,
              files_safe: bool = True) -> None:
        """The forfeit, the winner, no survivor, (``files_safe``) no file of the opponent or
        the results changed, and the record's round trip through ``games.jsonl``."""
        color, other = ("white", "black") if hostile_white else ("black", "white")
        assert record.termination == EXPECTED[name].value, record.detail
        assert record.forfeit == color
        assert record.winner == other
        assert record.detail.startswith(f"{color} ({name})")
        assert wait_gone(processes_in(HOSTILE_BOTS / name)) == []
        assert wait_gone(processes_in(self.opponent_dir)) == []
        if files_safe:
            assert self.untouched()
        append_record(self.games, record)
        assert read_records(self.games)[-1] == record


@pytest.fixture
def arena(tmp_path: Path) -> Arena:
    return Arena(tmp_path)


def _skip_unless_contained(name: str, level: Level) -> None:
    if name in CONTAINED:
        reason = containment(level)
        if reason:
            pytest.skip(f"{name} needs a checked containment: {reason}")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hostile_bot_forfeits_and_leaves_nothing(arena: Arena, name: str) -> None:
    """At the default (best) level: the right forfeit, no survivor, no file changed."""
    _skip_unless_contained(name, BEST)
    hostile_white = sorted(EXPECTED).index(name) % 2 == 0
    options: dict[str, object] = {}
    if name in ("file-writer", "file-reader"):
        options = {"Results": str(arena.results), "Victim": str(arena.opponent_dir)}
    record = arena.play(name, level=BEST, hostile_white=hostile_white, options=options,
                        cpu=name in CPU_CLOCK)
    arena.check(record, name, hostile_white, files_safe=BEST is Level.BWRAP or name != "file-writer")
    stderr = record.stderr.get("white" if hostile_white else "black", "")
    if name == "file-writer" and BEST is Level.BWRAP:
        assert "BLOCKED" in stderr and "WROTE" not in stderr
    if name == "file-reader" and BEST is Level.BWRAP:
        assert "BLOCKED" in stderr and "READ" not in stderr
    if name == "stderr-flood":
        assert 0 < len(stderr.encode()) <= STDERR_CAP + 4
    if name == "huge-line":
        assert record.offending_line is not None and len(record.offending_line) < 1000
    if name == "cpu-threads":  # caught by its CPU time, before the wall-clock cap
        assert "ms of CPU time" in record.detail
        assert all(m.cpu_ms is not None for m in record.moves)
    if name == "memory-hog" and BEST is not Level.NONE:
        assert "memory limit reached" in record.detail


@pytest.mark.skipif(BEST is not Level.BWRAP, reason="only bwrap promises no network")
def test_no_connection_leaves_the_sandbox(arena: Arena) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        listener.settimeout(0)
        port = listener.getsockname()[1]
        record = arena.play("network", level=Level.BWRAP, hostile_white=True,
                            options={"Port": port})
        with pytest.raises(BlockingIOError):
            listener.accept()
    arena.check(record, "network", True)
    assert f"BLOCKED 127.0.0.1:{port}" in record.stderr["white"]
    assert "CONNECTED" not in record.stderr["white"]


# -- the same bots at basic: no survivor either; what basic does not promise ----------------

BASIC_SURVIVORS = ["lingering-child", "setsid-daemon", "ignores-sigterm", "fork-bomb",
                   "memory-hog"]


@pytest.mark.parametrize("name", BASIC_SURVIVORS)
def test_basic_level_leaves_no_process(arena: Arena, name: str) -> None:
    _skip_unless_contained(name, Level.BASIC)
    record = arena.play(name, level=Level.BASIC, hostile_white=False)
    arena.check(record, name, False)


def test_basic_level_does_not_stop_file_writes(arena: Arena) -> None:
    """Documented: basic is no file system boundary (so the bwrap check above can fail)."""
    record = arena.play("file-writer", level=Level.BASIC, hostile_white=True,
                        options={"Results": str(arena.results), "Victim": str(arena.opponent_dir)})
    assert record.termination == T.ILLEGAL_MOVE.value and record.forfeit == "white"
    assert "WROTE" in record.stderr["white"]
    assert not arena.untouched()
    assert wait_gone(processes_in(HOSTILE_BOTS / "file-writer")) == []


# -- through the command line, at the default level -------------------------------------------


def test_arena_play_with_a_daemonizing_bot_leaves_nothing(tmp_path: Path) -> None:
    """``arena play`` (default isolation): the forfeit is shown and saved; no survivor."""
    import json

    from click.testing import CliRunner

    from arena.cli import cli

    path = tmp_path / "game.json"
    opponent = tmp_path / "random"
    shutil.copytree(ROOT / "bots" / "random", opponent)
    result = CliRunner().invoke(cli, ["play", str(HOSTILE_BOTS / "setsid-daemon"), str(opponent),
                                      "--quiet", "--movetime", "300", "--handshake", "15000",
                                      "--record", str(path)])
    assert result.exit_code == 0, result.output
    assert "result: 0-1 (illegal-move): white (setsid-daemon) played an illegal move" \
        in result.output
    record = GameRecord.from_dict(json.loads(path.read_text()))
    assert record.forfeit == "white" and record.offending_line == "zz9"
    assert wait_gone(processes_in(HOSTILE_BOTS / "setsid-daemon")) == []
    assert wait_gone(processes_in(opponent)) == []


# -- well-behaved bots still work in the strongest sandbox ------------------------------------

EXAMPLES = sorted(p.name for p in (ROOT / "bots").iterdir() if (p / "bot.yaml").is_file())


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_bots_play_at_the_best_level(name: str) -> None:
    """Every example bot (Python and node) starts and moves with the best isolation."""
    tc = TimeControl(movetime_ms=200, handshake_ms=15000, margin_ms=300)
    seen = first_moves(load_bot(ROOT / "bots" / name), load_bot(ROOT / "bots" / "random"), tc, 6,
                       seed=2, isolation=Isolation(BEST))
    assert len(seen) == 6 and all(m.cpu_ms is not None for m in seen)
