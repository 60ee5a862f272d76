"""A referee killed with SIGKILL leaves no process of its bots behind (at bwrap).

The referee here is a real subprocess that starts ``bots/random`` (a copy in a folder of its
own) through :class:`arena.bot.BotProcess` or :class:`arena.sandbox.Sandbox`, then is
SIGKILLed.  Survivors are looked for independently of the sandbox, by working directory,
and by the sandbox's environment tag (``<referee pid>-...``).

``mid-start`` holds bwrap's outer process inside the window between its ``clone()`` and the
release of its child (``--info-fd`` on a full pipe blocks it there): the child has no
parent-death signal yet, so before the watchdog it was left asleep forever with ppid 1.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from arena.sandbox.watchdog import TAG_VARIABLE, sweep_referee

from .conftest import needs_bwrap, processes_in, wait_gone

ROOT = Path(__file__).resolve().parents[2]

#: a referee in the middle of a game: handshake done, bot waiting for the next command
MID_GAME = r"""
import sys, time
from arena.bot import BotProcess
from arena.manifest import load_bot
from arena.sandbox import Isolation
bot = BotProcess(load_bot(sys.argv[1]), isolation=Isolation.parse("bwrap"))
bot.start()
bot.read_handshake(10.0)
print("ready", flush=True)
time.sleep(60)
"""

#: a referee whose bwrap is stopped right after clone(), before it lets its child run
MID_START = r"""
import fcntl, os, subprocess, sys, time
import psutil
from arena.sandbox import Level, Sandbox
sb = Sandbox(Level.BWRAP, sys.argv[1])
r, w = os.pipe()
fcntl.fcntl(w, fcntl.F_SETFL, os.O_NONBLOCK)
try:
    while True:
        os.write(w, b"x" * 65536)
except BlockingIOError:
    pass
fcntl.fcntl(w, fcntl.F_SETFL, 0)
args = sb.wrap([sys.executable, "bot.py"])
args[1:1] = ["--info-fd", str(w)]
proc = subprocess.Popen(args, cwd=sb.cwd, env=sb.env(), preexec_fn=sb.preexec, pass_fds=(w,),
                        start_new_session=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
sb.attach(proc.pid)
end = time.monotonic() + 10
while not psutil.Process(proc.pid).children():
    if time.monotonic() > end:
        sys.exit("bwrap did not clone")
    time.sleep(0.01)
print("ready", flush=True)
time.sleep(60)
"""


def _tagged(referee: int) -> list[int]:
    """Live processes carrying a sandbox tag of ``referee``."""
    found = []
    for p in psutil.process_iter():
        try:
            if (p.environ().get(TAG_VARIABLE, "").startswith(f"{referee}-")
                    and p.status() != psutil.STATUS_ZOMBIE):
                found.append(p.pid)
        except psutil.Error:
            continue
    return found


@needs_bwrap
@pytest.mark.parametrize("stage", ["mid-game", "mid-start"])
def test_sigkilled_referee_leaves_no_bot_process(tmp_path: Path, stage: str) -> None:
    folder = tmp_path / "random"
    shutil.copytree(ROOT / "bots" / "random", folder)
    code = MID_GAME if stage == "mid-game" else MID_START
    referee = subprocess.Popen([sys.executable, "-c", code, str(folder)], stdout=subprocess.PIPE,
                               text=True, start_new_session=True)
    try:
        assert referee.stdout is not None
        assert referee.stdout.readline().strip() == "ready"
        before = set(_tagged(referee.pid)) | set(processes_in(folder))
        assert before, "the bot's processes cannot be seen: the test would prove nothing"
        os.kill(referee.pid, signal.SIGKILL)
        referee.wait(5)
        time.sleep(2.0)
        left = sorted(set(_tagged(referee.pid)) | set(processes_in(folder)))
        described = []
        for pid in left:
            try:
                p = psutil.Process(pid)
                described.append(f"{pid} {p.name()} ppid {p.ppid()} {p.status()}")
            except psutil.Error:
                pass
        assert not described, f"processes of the killed referee's bot survived: {described}"
    finally:
        if referee.poll() is None:
            os.kill(referee.pid, signal.SIGKILL)
            referee.wait()
        for pid in _tagged(referee.pid):  # only processes of the referee we started
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        wait_gone(_tagged(referee.pid))
        sweep_referee(referee.pid)  # its cgroups, named after it
