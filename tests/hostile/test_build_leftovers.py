"""A build's scratch folder (``/tmp/morris-arena-<referee pid>-build-*``) never outlives its
referee for long, however the referee ends:

* the referee is SIGKILLed, its watchdog lives: the watchdog removes the folder;
* the referee and its watchdog are both SIGKILLed: the next referee process that makes a
  sandbox (or builds) removes it, root or not, at every level;
* the referee is a pool worker stopped by SIGTERM, as the server stops a check past its
  ``check_timeout`` (``arena.executors.stop_pool``): the worker kills its whole process tree
  (``arena.jobs``) and exits at once; its watchdog, outside that tree, removes the folder
  (before the watchdog was moved out of the referee's tree, it died with it and the folder
  stayed, every time).

Every referee here is a subprocess this test starts, and every process it kills is one of
them (or their watchdog), by pid.  They are given a temporary folder of the test's own
(``TMPDIR``), so that no other referee on the machine sweeps their folders meanwhile.  The
build leaves a folder it made unreadable and another read-only behind it, and keeps writing
until it is killed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import psutil
import pytest
import yaml

from arena.sandbox import Level
from arena.sandbox.watchdog import TAG_VARIABLE, TEMP_PREFIX, remove_tree, sweep_referee

from .conftest import LEVELS, wait_gone

ROOT = Path(__file__).resolve().parents[2]
#: a build that leaves folders it cannot be expected to tidy, says it is ready, then writes on
BUILD = ("mkdir -p shut/in open; echo x > shut/in/f; echo y > open/g; chmod 0 shut/in; "
         "chmod 500 shut open; touch ready; "
         "while :; do head -c 1000000 /dev/zero > busy; sleep 0.05; done")

#: a referee: makes sure its watchdog runs, says its pid and its watchdog's, then builds
REFEREE = r"""
import sys
from arena.build import ensure_built
from arena.manifest import load_bot
from arena.sandbox import Isolation
from arena.sandbox.watchdog import ensure_watchdog, watchdog_pid
ensure_watchdog()
print(watchdog_pid(), flush=True)
ensure_built(load_bot(sys.argv[1]), isolation=Isolation.parse(sys.argv[2]))
"""

#: a referee that makes one sandbox and closes it (what a new check or game does first)
NEXT_REFEREE = r"""
import sys
from arena.sandbox import Sandbox
Sandbox(sys.argv[2], sys.argv[1]).close()
"""

#: a pool worker builds (as the server's check does), and is stopped while the build runs
POOL = r"""
import glob, sys, tempfile, time
from arena.executors import process_pool, stop_pool
from arena.build import ensure_built
from arena.manifest import load_bot
from arena.sandbox import Isolation

pool = process_pool(1, threaded=True)
job = pool.submit(ensure_built, load_bot(sys.argv[1]), isolation=Isolation.parse(sys.argv[2]))
end = time.monotonic() + 60
while time.monotonic() < end and not job.done():
    workers = list(pool._processes)
    ready = f"{tempfile.gettempdir()}/morris-arena-{workers[0] if workers else 0}-build-*/bot/ready"
    if workers and glob.glob(ready):
        break
    time.sleep(0.05)
print(workers[0] if workers else 0, flush=True)
stop_pool(pool)
print("stopped", flush=True)
"""


def _level(level: Level) -> object:
    return pytest.param(level, id=level.value, marks=pytest.mark.skipif(
        level not in LEVELS, reason=f"isolation level {level.value} is not available here"))


BUILD_LEVELS = [_level(Level.BASIC), _level(Level.BWRAP)]


@pytest.fixture
def bot(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    folder = tmp_path / "slow-build"
    folder.mkdir(mode=0o755)
    (folder / "bot.yaml").write_text(yaml.safe_dump(
        {"name": "slow-build", "command": "./bot", "build": BUILD, "build_timeout": 300}))
    return folder


@pytest.fixture
def temp(tmp_path: Path) -> Path:
    """The referees' temporary folder (``TMPDIR``), as ``/tmp`` is: open to every uid."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    folder.chmod(0o1777)
    return folder


def _scratch(temp: Path, referee: int) -> list[Path]:
    """The build scratch folders of the process ``referee``."""
    return sorted(temp.glob(f"{TEMP_PREFIX}{referee}-build-*"))


def _wait_for_build(temp: Path, referee: int, proc: subprocess.Popen[str]) -> Path:
    """The scratch folder of ``referee`` once its build said it is ready."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = [p for p in _scratch(temp, referee) if (p / "bot" / "ready").exists()]
        if found:
            return found[0]
        assert proc.poll() is None, "the referee ended before its build was under way"
        time.sleep(0.05)
    raise AssertionError("the build did not start within 60 s")


def _wait_removed(folder: Path, within: float) -> bool:
    deadline = time.monotonic() + within
    while folder.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return not folder.exists()


def _tagged(referee: int) -> list[int]:
    found = []
    for p in psutil.process_iter():
        try:
            if p.environ().get(TAG_VARIABLE, "").startswith(f"{referee}-"):
                found.append(p.pid)
        except psutil.Error:
            continue
    return found


@pytest.fixture
def started(temp: Path) -> Iterator[list[int]]:
    """Pids of the referees (and watchdogs) a test starts; whatever of them and of their
    builds is left at the end is killed, by pid, and their cgroups and folders swept."""
    pids: list[int] = []
    yield pids
    referees = [p for p in pids if p > 0]
    for pid in referees + [-p for p in pids if p < 0]:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for pid in referees:
        for child in _tagged(pid):  # only processes of the referees this test started
            try:
                os.kill(child, signal.SIGKILL)
            except OSError:
                pass
        wait_gone(_tagged(pid))
        sweep_referee(pid)  # its cgroups
        for folder in temp.glob(f"{TEMP_PREFIX}{pid}-*"):
            remove_tree(str(folder))


def _start(temp: Path, code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                            text=True, cwd=ROOT, start_new_session=True,
                            env={**os.environ, "TMPDIR": str(temp)})


@pytest.mark.parametrize("level", BUILD_LEVELS)
def test_a_killed_referees_watchdog_removes_its_build_folder(
        level: Level, bot: Path, temp: Path, started: list[int]) -> None:
    referee = _start(temp, REFEREE, str(bot), level.value)
    started.append(referee.pid)
    assert referee.stdout is not None
    watchdog = int(referee.stdout.readline())
    started.append(-watchdog)  # killed at the end only if the test failed to see it exit
    folder = _wait_for_build(temp, referee.pid, referee)
    os.kill(referee.pid, signal.SIGKILL)
    referee.wait(10)
    assert _wait_removed(folder, 20.0), f"{folder} is still there 20 s after its referee died"
    assert wait_gone([watchdog], 10.0) == [], "the watchdog should exit after its sweep"


@pytest.mark.parametrize("level", BUILD_LEVELS)
def test_the_next_referee_removes_the_build_folder_of_a_referee_killed_with_its_watchdog(
        level: Level, bot: Path, tmp_path: Path, temp: Path, started: list[int]) -> None:
    referee = _start(temp, REFEREE, str(bot), level.value)
    started.append(referee.pid)
    assert referee.stdout is not None
    watchdog = int(referee.stdout.readline())
    started.append(-watchdog)
    folder = _wait_for_build(temp, referee.pid, referee)
    os.kill(watchdog, signal.SIGKILL)  # both, at once, as a killed process tree would be
    os.kill(referee.pid, signal.SIGKILL)
    referee.wait(10)
    assert wait_gone([watchdog], 10.0) == []
    time.sleep(0.5)
    assert folder.exists(), "nothing should have removed it yet: the test would prove nothing"
    following = _start(temp, NEXT_REFEREE, str(tmp_path), level.value)
    started.append(following.pid)
    following.wait(60)
    assert following.returncode == 0
    assert _wait_removed(folder, 5.0), f"{folder} outlived the next referee's first sandbox"


@pytest.mark.parametrize("level", BUILD_LEVELS)
def test_a_pool_worker_stopped_mid_build_leaves_no_build_folder(
        level: Level, bot: Path, temp: Path, started: list[int]) -> None:
    runner = _start(temp, POOL, str(bot), level.value)
    started.append(runner.pid)
    assert runner.stdout is not None
    worker = int(runner.stdout.readline())
    started.append(worker)
    folders = _scratch(temp, worker)
    assert folders, "the worker's build folder cannot be seen: the test would prove nothing"
    assert runner.stdout.readline().strip() == "stopped"
    runner.wait(30)
    assert wait_gone([worker], 10.0) == []
    left = [f for f in folders if not _wait_removed(f, 20.0)]
    assert left == [], f"left 20 s after the worker was stopped: {left}"
