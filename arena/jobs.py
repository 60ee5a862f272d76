"""The unit of work of a tournament: one scheduled game, and how a worker plays it.

A :class:`GameJob` carries everything a worker needs to play one game of the schedule
(picklable, so that it can travel to a forked process or a Dask worker); :func:`play_job`
plays it and returns its :class:`~arena.records.GameRecord`.  Every executor
(:mod:`arena.executors`) runs :func:`play_job` on its jobs, wherever its workers are.

A worker process of the local pool is set up by :func:`init_worker`: it ignores SIGINT (the
runner decides when to stop), turns SIGTERM into a clean stop of the game in progress (the
referee's ``finally`` blocks stop the bots, then the worker exits), and asks the kernel
(``PR_SET_PDEATHSIG``) for a SIGTERM when the runner dies, so that even a ``kill -9`` of the
runner leaves no worker, and through the referees no bot, behind.
"""

from __future__ import annotations

import atexit
import os
import select
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from arena.records import GameRecord
from arena.schedule import Slot

__all__ = ["BOT_STOP_GRACE_S", "GameJob", "KEPT", "KeptBots", "init_worker",
           "play_job"]


@dataclass(frozen=True)
class GameJob:
    """Everything a worker needs to play one scheduled game (picklable).

    With ``restart="per-pairing"`` the worker keeps both bots' processes after the game for
    the next game of the same ``pairing`` (a key shared by that pairing's games), unless
    ``last`` (the pairing's last game: its processes are ended with it).  ``on_move`` is the
    referee's callback after every ply (picklable: it travels with the job), e.g. the
    server's live board."""

    slot: Slot
    white: Any  # BotSpec
    black: Any  # BotSpec
    time_control: Any  # TimeControl
    tournament: str
    isolation: Any = None  # arena.sandbox.Isolation, or None for the best available
    restart: str = "per-game"
    pairing: str = ""
    last: bool = False
    on_move: Any = None  # Callable[[Position, MoveInfo], None], or None
    adjudicate: Any = None  # arena.adjudication.Adjudication, or None (play to the end)


class KeptBots:
    """A worker's bot processes kept between the games of a pairing (``restart:
    per-pairing``), by pairing and bot.  A game takes its two bots out (so two threads
    never share one) and gives them back after it: a bot that failed its game, or whose
    pairing has ended, is closed; at most :attr:`limit` wait, the longest idle closed first
    (the other games of a pairing may be playing on other workers)."""

    def __init__(self, limit: int = 4) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._idle: list[tuple[tuple[str, Any], Any]] = []  # longest idle first

    def take(self, pairing: str, spec: Any, isolation: Any) -> Any:
        """A kept process of ``spec`` for ``pairing``, or a new one (not started yet)."""
        from arena.referee import KeptBotPlayer

        player = None
        with self._lock:
            for i, (key, idle) in enumerate(self._idle):
                if key == (pairing, spec):
                    player = self._idle.pop(i)[1]
                    break
        if player is not None and player.alive:
            return player
        if player is not None:
            player.close()
        return KeptBotPlayer(spec, label=f"{pairing}:{spec.name}", isolation=isolation)

    def give_back(self, pairing: str, spec: Any, player: Any, *, keep: bool) -> None:
        """After a game: keep ``player`` for the pairing's next game, or close it."""
        evicted = []
        if keep and player.alive:
            with self._lock:
                self._idle.append(((pairing, spec), player))
                while len(self._idle) > self.limit:
                    evicted.append(self._idle.pop(0)[1])
        else:
            evicted.append(player)
        for old in evicted:
            old.close()

    def close_all(self) -> None:
        """End every kept process (the run, or the worker, is over)."""
        with self._lock:
            players = [player for _, player in self._idle]
            self._idle.clear()
        for player in players:
            player.close()


#: this process's kept bots (a worker's; the runner's own when it plays games on threads)
KEPT = KeptBots()
atexit.register(KEPT.close_all)


#: in a worker: a game is being played (SIGTERM then unwinds it rather than exiting at once)
_in_game = False
#: in a worker: SIGTERM has come; the worker is on its way out
_terminated = threading.Event()
#: seconds a terminated worker's game gets to stop its bots before the watchdog takes over
#: (less than :data:`arena.executors.WORKER_STOP_GRACE_S`, after which the runner kills the
#: worker)
BOT_STOP_GRACE_S = 3.0
_TERM_STATUS = 128 + signal.SIGTERM


def play_job(job: GameJob) -> GameRecord:
    """Play one scheduled game (in a worker) and return its record, labelled with the
    tournament, round and pair.

    In a worker set up by :func:`init_worker`, a SIGTERM during the game unwinds it (the
    referee stops the bots) and the worker exits with status 128 + SIGTERM.
    """
    global _in_game
    from arena.referee import play_game

    slot = job.slot
    white: Any = job.white
    black: Any = job.black
    kept = job.restart == "per-pairing"
    try:
        _in_game = True
        if kept:
            white = KEPT.take(job.pairing, job.white, job.isolation)
            black = KEPT.take(job.pairing, job.black, job.isolation)
        try:
            record = play_game(white, black, slot.variant, job.time_control,
                               opening=slot.opening, game_id=slot.game_id, seed=slot.seed,
                               isolation=job.isolation, on_move=job.on_move,
                               adjudicate=job.adjudicate)
        finally:
            if kept:
                again = not job.last and not _terminated.is_set()
                KEPT.give_back(job.pairing, job.white, white, keep=again)
                KEPT.give_back(job.pairing, job.black, black, keep=again)
            _in_game = False
    except SystemExit:
        os._exit(_TERM_STATUS)  # terminated mid-game: the referee stopped the bots unwinding
    if _terminated.is_set():  # the SystemExit went astray, the game ended anyway: nobody waits
        os._exit(_TERM_STATUS)
    record.tournament = job.tournament
    record.round = slot.round
    record.pair = slot.pair
    return record


# --------------------------------------------------------------------------------------
# A worker process of the local pool
# --------------------------------------------------------------------------------------


def init_worker(parent_pid: int, runner_pid: int = 0, nice: int = 0) -> None:
    """Worker initializer: ignore SIGINT (the runner decides), turn SIGTERM into a clean stop,
    and die with the runner: the parent (``parent_pid``), or, for a worker of a fork server
    (``parent_pid`` 0), the process ``runner_pid``, watched by a thread.  ``nice``: added
    to the worker's niceness, which every process it starts inherits."""
    if nice > 0:
        os.nice(nice)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _on_sigterm)
    from multiprocessing import util

    util.Finalize(KEPT, KEPT.close_all, exitpriority=10)  # a pool worker exits without atexit
    threading.Thread(target=_watchdog, name="arena-worker-watchdog", daemon=True).start()
    _set_parent_death_signal(signal.SIGTERM)
    if parent_pid and os.getppid() != parent_pid:  # the runner died before the request took effect
        os._exit(1)
    if runner_pid:
        threading.Thread(target=_watch_runner, args=(runner_pid,), name="arena-runner-watch",
                         daemon=True).start()


def _watch_runner(pid: int) -> None:
    """In a fork server's worker, on a thread: once the runner ``pid`` has exited (killed,
    say), stop as on SIGTERM (the game unwinds, its bots are stopped).  The fork server
    is the worker's parent and outlives the runner while the worker lives, so the parent's
    death signal never comes."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd (or already gone): poll
        fd = -1
    if fd >= 0:
        select.select([fd], [], [])  # readable once the process has exited
    else:
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            except PermissionError:
                pass
            time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGTERM)


def _on_sigterm(signum: int, frame: Any) -> None:
    """In a worker: unwind the game (the referee's ``finally`` blocks stop its bots), or exit
    at once when idle.

    Only the first SIGTERM raises: a later one (the pool sends its own when it sees another
    worker exit) must not cut the bots' shutdown short.
    """
    if _terminated.is_set():
        return
    _terminated.set()
    if _in_game:
        raise SystemExit(_TERM_STATUS)
    _kill_children()  # idle: only bots kept for a pairing's next game are left
    os._exit(_TERM_STATUS)


def _watchdog() -> None:
    """In a worker, on a thread: once SIGTERM has come, wait (a little) for the game to stop,
    kill whatever child process is left, and exit.

    The main thread normally exits first (see :func:`play_job`); this covers a ``SystemExit``
    that never reached it (raised inside a ``__del__``, where Python ignores exceptions, or
    outside the game), which would otherwise leave the worker waiting for work forever.
    """
    _terminated.wait()
    deadline = time.monotonic() + BOT_STOP_GRACE_S
    while _in_game and time.monotonic() < deadline:
        time.sleep(0.02)
    _kill_children()
    os._exit(_TERM_STATUS)


def _kill_children() -> None:
    """SIGKILL every descendant of this process (bots a referee could not stop)."""
    import psutil

    try:
        children = psutil.Process().children(recursive=True)
    except psutil.Error:
        return
    for child in children:
        try:
            child.kill()
        except psutil.Error:
            pass


def _set_parent_death_signal(sig: int) -> None:
    """Ask Linux to send ``sig`` to this process when its parent dies (``PR_SET_PDEATHSIG``)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(sig), 0, 0, 0)  # 1 == PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
