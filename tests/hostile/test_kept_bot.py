"""A bot kept between the games of a pairing (``restart: per-pairing``) is frozen while it
waits, its children too: a background CPU spinner it forks uses no CPU between games, the
next game thaws it, and closing it (the pairing's end) ends it, frozen or not.

The kept bot here is played as ``restart: per-pairing`` plays it (and ``arena check``'s
games in a row): one :class:`arena.referee.KeptBotPlayer` given to :func:`play_game` for
each game.  The spinner's CPU time is read from outside the sandbox (the processes whose
working directory is the bot's folder, found independently of it), at every level this
machine has: with the cgroup freezer, and with SIGSTOP where the sandbox has no cgroups.
"""

from __future__ import annotations

import time
from pathlib import Path

import psutil
import pytest
import yaml

from arena.clock import TimeControl
from arena.manifest import load_bot
from arena.referee import KeptBotPlayer, play_game
from arena.sandbox import Isolation, Level, available_levels

from .conftest import processes_in, wait_gone

ROOT = Path(__file__).resolve().parents[2]
#: a generous margin: a frozen bot never answers at all, and a thawed one shares the CPU
#: with its own spinner (and, on a loaded machine, everything else)
TC = TimeControl(movetime_ms=500, handshake_ms=15000, margin_ms=14500)
#: seconds the spinner is watched while its bot waits for the next game
IDLE_S = 0.8

#: at its first game the bot forks a child that spins on the CPU for ever (ignoring
#: SIGTERM), then plays the first legal move, a little slowly
SPINNER = '''
import os, signal, time
from arena.botkit import Bot, run


class Spinner(Bot):
    name, author = "spinner", "tests"

    def __init__(self):
        super().__init__()
        self.spinning = False

    def new_game(self, variant):
        if not self.spinning:
            self.spinning = True
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                n = 0
                while True:
                    n += 1

    def choose(self, position, clock):
        time.sleep(0.005)
        return position.legal_moves()[0]


run(Spinner())
'''


def _param(level: Level, cgroups: bool) -> object:
    name = level.value + ("" if cgroups else "-no-cgroups")
    return pytest.param(Isolation(level, cgroups=cgroups), id=name, marks=pytest.mark.skipif(
        level not in available_levels(), reason=f"level {level.value} is not available here"))


ISOLATIONS = [_param(Level.BWRAP, True), _param(Level.BASIC, True), _param(Level.BWRAP, False),
              _param(Level.BASIC, False), _param(Level.NONE, False)]


def _cpu(pids: list[int]) -> float:
    """CPU seconds the live processes ``pids`` used so far."""
    total = 0.0
    for pid in pids:
        try:
            times = psutil.Process(pid).cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def _idle_cpu(pids: list[int]) -> float:
    """CPU seconds ``pids`` use in :data:`IDLE_S` of waiting."""
    before = _cpu(pids)
    time.sleep(IDLE_S)
    return _cpu(pids) - before


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_a_kept_bot_and_its_children_use_no_cpu_between_games(isolation: Isolation,
                                                              tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    folder = tmp_path / "spinner"
    folder.mkdir(mode=0o755)
    (folder / "bot.py").write_text(SPINNER)
    (folder / "bot.yaml").write_text(yaml.safe_dump({"name": "spinner",
                                                     "command": "{python} bot.py"}))
    opponent = load_bot(ROOT / "bots" / "random")
    player = KeptBotPlayer(load_bot(folder), label="kept-spinner", quit_grace_s=0.2,
                           term_grace_s=0.2, isolation=isolation)
    pids: list[int] = []
    try:
        first = play_game(player, opponent, "nine-mens-morris", TC, seed=1, isolation=isolation)
        assert first.forfeit is None, first.detail
        pids = processes_in(folder)
        assert len(pids) >= 2, "the bot and its spinner cannot be seen: this would prove nothing"
        assert _cpu(pids) > 0.02, "the spinner never ran: this would prove nothing"
        idle = _idle_cpu(pids)
        assert idle < 0.05, f"the kept bot used {idle:.2f} s of CPU in {IDLE_S} s between games"
        second = play_game(opponent, player, "nine-mens-morris", TC, seed=2,
                           isolation=isolation)
        assert second.forfeit is None, second.detail  # thawed: it plays its next game
        assert second.black.games_before == 1
        idle = _idle_cpu(pids)
        assert idle < 0.05, f"the kept bot used {idle:.2f} s of CPU after its last game"
    finally:
        started = time.monotonic()
        player.close()  # the pairing's end: frozen, it is still ended (its spinner too)
    took = time.monotonic() - started
    left = wait_gone(pids, 10.0) + wait_gone(processes_in(folder), 5.0)
    for pid in left:  # ours (started in this test's folder): killed before failing
        try:
            psutil.Process(pid).kill()
        except psutil.Error:
            pass
    assert left == [], "processes of the kept bot outlived it"
    assert took < 10.0, f"closing a frozen bot took {took:.1f} s"
