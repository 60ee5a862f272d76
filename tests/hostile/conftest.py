"""Helpers for the sandbox and hostile-bot tests: run code in a sandbox, check containment,
list leftover processes.  Every process these helpers start is ended by its id."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import psutil
import pytest

from arena.manifest import BotSpec
from arena.clock import TimeControl
from arena.records import MoveInfo
from arena.referee import play_game
from arena.rules import Position
from arena.sandbox import Level, Limits, Sandbox, available_levels, bwrap_status

HOSTILE_BOTS = Path(__file__).resolve().parent / "bots"
LEVELS = available_levels()
ISOLATING = [lv for lv in LEVELS if lv is not Level.NONE]

needs_bwrap = pytest.mark.skipif(
    Level.BWRAP not in LEVELS,
    reason=f"bubblewrap is not usable here: {bwrap_status().detail} "
           "(CI: apt-get install -y bubblewrap)")


@pytest.fixture
def tmp_path(tmp_path: Path) -> Path:
    """pytest's ``tmp_path``, readable by other users: as root, ``basic`` and ``bwrap`` run a
    bot as an unprivileged uid, which must be able to read its folder (pytest makes 0700)."""
    tmp_path.chmod(0o755)
    return tmp_path


@dataclass
class Run:
    """What a snippet run in a sandbox did."""

    returncode: Optional[int]
    stdout: str
    stderr: str
    pids: list[int]

    def json(self) -> Any:
        """The last stdout line, parsed as JSON."""
        return json.loads(self.stdout.strip().splitlines()[-1])


def start_in(sb: Sandbox, code: str) -> subprocess.Popen[str]:
    """Start ``python -c code`` in ``sb``, in its own session, with text pipes for output."""
    proc = subprocess.Popen(sb.wrap([sys.executable, "-c", code]), cwd=sb.cwd, env=sb.env(),
                            preexec_fn=sb.preexec, start_new_session=True, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    sb.attach(proc.pid)
    return proc


def run_in(sb: Sandbox, code: str, *, timeout: float = 10.0, close: bool = True) -> Run:
    """Run ``python -c code`` in ``sb`` (its own session), wait for it, then kill its tree.

    ``pids`` are the sandbox's processes seen just before the kill (for leftover checks).
    """
    proc = start_in(sb, code)
    try:
        out, err = proc.communicate(timeout=timeout)
        pids = sb.processes()
        sb.kill_all()
    except subprocess.TimeoutExpired:
        pids = sb.processes()
        sb.kill_all()
        out, err = proc.communicate()
        err += "\n[timeout]"
    proc.wait()
    if close:
        sb.close()
    return Run(proc.returncode, out, err, pids)


def alive(pids: list[int]) -> list[int]:
    """The pids in ``pids`` that still run (zombies count as ended)."""
    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.Error:
            continue
    return out


def processes_in(folder: Path | str) -> list[int]:
    """Live processes whose working directory is ``folder`` or below: found independently of
    the sandbox (forks inherit the directory, so a bot's daemons and children show up)."""
    root = os.path.realpath(folder)
    found = []
    for proc in psutil.process_iter():
        try:
            cwd = proc.cwd()
            if (cwd == root or cwd.startswith(root + "/")) and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc.pid)
        except psutil.Error:
            continue
    return found


class _Enough(Exception):
    """Stops a game after enough moves."""


def first_moves(white: BotSpec, black: BotSpec, tc: TimeControl, n: int,
                **kwargs: Any) -> list[MoveInfo]:
    """The first ``n`` moves of a nine men's morris game, which is then stopped (fewer if the
    game ended before: a forfeit; a game played again because a bot was starved counts
    from its last play).  ``kwargs`` go to :func:`play_game`."""
    moves: list[MoveInfo] = []

    def stop(position: Position, info: MoveInfo) -> None:
        if len(position.move_stack) == 1:  # a new play of the game
            moves.clear()
        moves.append(info)
        if len(moves) >= n:
            raise _Enough

    try:
        play_game(white, black, "nine-mens-morris", tc, on_move=stop, **kwargs)
    except _Enough:
        pass
    return moves


def wait_gone(pids: list[int], timeout: float = 2.0) -> list[int]:
    """Wait until none of ``pids`` runs; the ones still running after ``timeout``."""
    end = time.monotonic() + timeout
    left = alive(pids)
    while left and time.monotonic() < end:
        time.sleep(0.01)
        left = alive(left)
    return left


#: a child that forks ``n`` sleepers and prints how many forks succeeded, as JSON
FORK_COUNT = r"""
import json, os, time
made = 0
for _ in range({n}):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        null = os.open(os.devnull, os.O_RDWR)  # let the parent's reader see EOF
        os.dup2(null, 1)
        os.dup2(null, 2)
        time.sleep(30)
        os._exit(0)
    made += 1
print(json.dumps({{"made": made}}), flush=True)
"""

#: a child that writes ``mb`` MiB into memory and prints "survived"
MEMORY_HOG = r"""
block = b"\x01" * ({mb} << 20)
print("survived", len(block), flush=True)
"""


def containment(level: Level) -> Optional[str]:
    """Why a fork bomb or a memory hog cannot safely run at ``level`` here (None: it can).

    Checked for real, in this process, before any hostile test relies on it: a sandbox with
    small limits must refuse forks past its process limit and kill a process past its
    memory limit.  RLIMIT_NPROC alone does not count (root ignores it).
    """
    key = level.value
    if key not in _CONTAINMENT:
        _CONTAINMENT[key] = _check_containment(level)
    return _CONTAINMENT[key]


_CONTAINMENT: dict[str, Optional[str]] = {}


def _check_containment(level: Level) -> Optional[str]:
    if level is Level.NONE:
        return "level none sets no limits"
    limits = Limits(pids=24, memory_mb=96)
    sb = Sandbox(level, HOSTILE_BOTS, limits=limits, label="probe")
    if "pids" not in sb.cgroups or "memory" not in sb.cgroups:
        sb.close()
        return f"no pids+memory cgroup at level {level.value} here (see `arena doctor`)"
    made = run_in(sb, FORK_COUNT.format(n=60)).json()["made"]
    if made >= limits.pids:
        return f"the pids cgroup did not stop forks ({made} of 60 made, limit {limits.pids})"
    sb = Sandbox(level, HOSTILE_BOTS, limits=limits, label="probe")
    hog = run_in(sb, MEMORY_HOG.format(mb=400))
    if "survived" in hog.stdout or hog.returncode not in (-9, 128 + 9):
        return f"the memory cgroup did not kill a 400 MiB hog (exit {hog.returncode})"
    return None
