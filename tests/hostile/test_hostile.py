"""Hostile bots against ``bots/random``, through the real referee, at every isolating level
this machine has (``basic`` and ``bwrap``; a missing level skips with its reason): every game
ends with the right forfeit recorded, the opponent wins, no process of either bot survives,
and at the levels that confine files (``bwrap``, and ``basic`` when the referee is root: see
docs/SECURITY.md) no file outside the bot's private ``/tmp`` changes, the opponent can be
neither killed nor traced, and the disk cannot be filled past ``tmp_mb``.

The fork bomb and the memory hog run only inside a containment this test checked first
(:func:`tests.hostile.conftest.containment`); they skip with the reason elsewhere.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
from pathlib import Path
from typing import Iterator, Optional

import pytest

from arena.bot import STDERR_CAP
from arena.clock import TimeControl
from arena.manifest import load_bot
from arena.records import GameRecord, append_record, read_records
from arena.referee import play_game
from arena.rules import Termination
from arena.sandbox import Isolation, Level, Limits, available_levels, best_level, bwrap_status

from .conftest import HOSTILE_BOTS, containment, processes_in, wait_gone

ROOT = Path(__file__).resolve().parents[2]
BEST = best_level()
#: small limits, so the hogs hit them fast
LIMITS = Limits(memory_mb=128, pids=64, tmp_mb=16)
#: the disk filler writes at most this much per folder (so a failed sandbox cannot hurt)
FILL_CAP_MB = 48
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
    "killer": T.ILLEGAL_MOVE,
    "tracer": T.ILLEGAL_MOVE,
    "disk-filler": T.ILLEGAL_MOVE,
}
#: bots that need a checked containment (process and memory limits) to run at all
CONTAINED = {"fork-bomb", "memory-hog"}
#: bots that only lose under the CPU clock (they answer within the wall clock)
CPU_CLOCK = {"cpu-threads"}
#: bots that attack files, other bots' processes or the disk: stopped where files are confined
CONFINED_ATTACKS = {"file-writer", "file-reader", "killer", "tracer", "disk-filler"}


def confines(level: Level) -> bool:
    """Whether ``level`` keeps a bot to its own files and processes here (docs/SECURITY.md):
    bwrap always; basic when the referee is root (a unique uid, read-only mounts)."""
    return level is Level.BWRAP or (level is Level.BASIC and os.geteuid() == 0)


def _level_param(level: Level) -> object:
    why = (f"bubblewrap is not usable here: {bwrap_status().detail}" if level is Level.BWRAP
           else f"isolation level {level.value} is not available here (see `arena doctor`)")
    return pytest.param(level, id=level.value, marks=pytest.mark.skipif(
        level not in available_levels(), reason=why))


#: the hostile suite runs at both isolating levels (skipping one this machine lacks)
SUITE_LEVELS = [_level_param(Level.BASIC), _level_param(Level.BWRAP)]


def test_every_hostile_bot_folder_is_covered() -> None:
    folders = {p.name for p in HOSTILE_BOTS.iterdir() if (p / "bot.yaml").is_file()}
    assert folders == set(EXPECTED)


def _digest(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with a hash of its content."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


class Arena:
    """A tmp layout: a copy of bots/random (the opponent and the victim, started with a unique
    marker argument that the kill and ptrace bots look for) and a results folder."""

    def __init__(self, tmp: Path) -> None:
        self.opponent_dir = tmp / "bots" / "random"
        shutil.copytree(ROOT / "bots" / "random", self.opponent_dir)
        self.marker = f"victim-{os.urandom(6).hex()}"
        manifest = self.opponent_dir / "bot.yaml"
        manifest.write_text(manifest.read_text().replace(
            'command: "{python} bot.py"', f'command: "{{python}} bot.py {self.marker}"'))
        self.results = tmp / "results" / "hostile"
        self.results.mkdir(parents=True)
        self.games = self.results / "games.jsonl"
        self.games.write_text("")
        self.before = (_digest(self.opponent_dir), _digest(self.results))

    def untouched(self) -> bool:
        """No file of the opponent's folder or the results folder changed or appeared."""
        return (_digest(self.opponent_dir), _digest(self.results)) == self.before

    def options_for(self, name: str) -> dict[str, object]:
        """What each attacking bot is told: where the results and the victim are."""
        if name in ("file-writer", "file-reader"):
            return {"Results": str(self.results), "Victim": str(self.opponent_dir)}
        if name in ("killer", "tracer"):
            return {"Victim": self.marker}
        if name == "disk-filler":
            return {"Results": str(self.results), "Marker": self.marker, "CapMb": FILL_CAP_MB}
        return {}

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
def arena(tmp_path: Path) -> Iterator[Arena]:
    """The layout; afterwards, whatever a failed sandbox let a bot plant on the host is
    removed (the test has already failed on it)."""
    layout = Arena(tmp_path)
    yield layout
    for planted in [*(Path(d, f"HOSTILE-{layout.marker}") for d in ("/tmp", "/var/tmp", "/dev/shm")),
                    *HOSTILE_BOTS.glob("*/HOSTILE-*")]:
        planted.unlink(missing_ok=True)


def _skip_unless_contained(name: str, level: Level) -> None:
    if name in CONTAINED:
        reason = containment(level)
        if reason:
            pytest.skip(f"{name} needs a checked containment: {reason}")


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("level", SUITE_LEVELS)
def test_hostile_bot_forfeits_and_leaves_nothing(arena: Arena, name: str, level: Level) -> None:
    """The right forfeit, no survivor; where the level confines files, nothing changed."""
    _skip_unless_contained(name, level)
    if name in CONFINED_ATTACKS and not confines(level):
        pytest.skip(f"{level.value} as a normal user does not confine files or processes "
                    "(bots run as you: see docs/SECURITY.md)")
    hostile_white = sorted(EXPECTED).index(name) % 2 == 0
    record = arena.play(name, level=level, hostile_white=hostile_white,
                        options=arena.options_for(name), cpu=name in CPU_CLOCK)
    arena.check(record, name, hostile_white, files_safe=confines(level))
    stderr = record.stderr.get("white" if hostile_white else "black", "")
    if name == "file-writer":
        planted = HOSTILE_BOTS / "file-writer" / "HOSTILE-WAS-HERE"
        if planted.exists():
            planted.unlink()
            pytest.fail("the file writer changed its own folder in the checkout")
        assert "BLOCKED" in stderr and "WROTE" not in stderr
    if name == "file-reader" and level is Level.BWRAP:  # basic: world-readable stays readable
        assert "BLOCKED" in stderr and "READ" not in stderr
    if name in ("killer", "tracer"):  # bwrap: the opponent is not even visible
        seen = "BLOCKED" in stderr or (level is Level.BWRAP and "NOTFOUND" in stderr)
        assert seen and "KILLED" not in stderr and "TRACED" not in stderr, stderr
    if name == "disk-filler":
        _check_disk_filler(arena, stderr)
    if name == "stderr-flood":
        assert 0 < len(stderr.encode()) <= STDERR_CAP + 4
    if name == "huge-line":
        assert record.offending_line is not None and len(record.offending_line) < 1000
    if name == "cpu-threads":  # caught by its CPU time, before the wall-clock cap
        assert "ms of CPU time" in record.detail
        assert all(m.cpu_ms is not None for m in record.moves)
    if name == "memory-hog":
        assert "memory limit reached" in record.detail


def _check_disk_filler(arena: Arena, stderr: str) -> None:
    """Every folder it filled held at most ``tmp_mb``; no marker reached the host."""
    filled = {m[1]: int(m[2]) for m in re.finditer(r"^FILLED (\S+) (\d+)$", stderr, re.M)}
    assert filled, stderr  # it found its private /tmp at least
    assert all(n <= LIMITS.tmp_mb << 20 for n in filled.values()), filled
    leaked = [Path(d, f"HOSTILE-{arena.marker}") for d in
              ("/tmp", "/var/tmp", "/dev/shm", HOSTILE_BOTS / "disk-filler", arena.results)]
    found = [p for p in leaked if p.exists()]
    for p in found:
        p.unlink()
    assert found == [], f"the disk filler wrote outside its sandbox: {found}"


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


# -- what basic does not promise as a normal user ---------------------------------------------


@pytest.mark.skipif(os.geteuid() == 0, reason="as root, basic confines files (tested above)")
def test_basic_as_a_normal_user_does_not_stop_file_writes(arena: Arena) -> None:
    """Documented: basic run by a normal user is no file system boundary."""
    record = arena.play("file-writer", level=Level.BASIC, hostile_white=True,
                        options=arena.options_for("file-writer"))
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
