"""Executors of games: the interface the runner calls, the local process pool, and the
registry of the executors a tournament file can name (``executor.type``).

The runner (:mod:`arena.tournament`) knows executors only through :class:`GameExecutor`:
it submits one :class:`~arena.jobs.GameJob` per game, keeps :meth:`~GameExecutor.capacity`
games in flight, saves each record as its future completes, and asks the executor what a
failed future means (a game it lost, a broken executor, or else a failure of the referee).
It gets its executor from :func:`open_executor`, which looks up the configuration's
``executor.kind`` in :data:`EXECUTORS`:

* ``local``: :func:`process_pool`, forked worker processes on this machine
  (:class:`FuturesExecutor` over a ``ProcessPoolExecutor``);
* ``dask``: a Dask cluster (:mod:`arena.cluster`, imported only for a Dask run, so that the
  ``distributed`` package stays optional).

Adding an executor (the competition server's judge, say): implement :class:`GameExecutor`
in a module of its own, which imports :mod:`arena.jobs`, never the runner nor this module
(the registry below imports it: the interface is structural, nothing to inherit), add its
kind to :data:`EXECUTORS` here and to ``EXECUTOR_KINDS`` in :mod:`arena.config` (with its
settings, if any), and nothing in the runner changes.  See ``docs/CLUSTER.md``.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import time
from concurrent.futures import CancelledError, Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol, Union

from arena.config import TournamentConfig
from arena.errors import ConfigError
from arena.jobs import GameJob, init_worker, play_job
from arena.records import GameRecord

log = logging.getLogger("arena.executors")

#: seconds a terminated worker gets to stop its game (and bots) before SIGKILL
WORKER_STOP_GRACE_S = 5.0


class GameExecutor(Protocol):
    """What the runner needs of an executor of games (a structural type: implementations
    need not inherit from it).

    The runner calls :meth:`submit` from one thread, keeps at most :meth:`capacity` games
    submitted, and calls :meth:`close` once, at the end of the run, on an executor it opened.

    Two methods are optional (the runner looks for them; the local pool has neither), for
    executors whose workers come and go (:class:`arena.cluster.DaskExecutor`):

    * ``stalled() -> tuple[str, float] | None``: what games are waiting for and since when
      (``time.monotonic()``), e.g. ``("waiting for workers: 0 connected since 14:02", t)``,
      or None while games can be played.  The runner submits nothing meanwhile, shows the
      text on the progress line, and stops the run after ``cluster.wait``.
    * ``after_loss(job, error) -> GameJob | GameRecord | None``: for a game :meth:`is_lost`
      says was lost, the job to play again (the same one, or changed), the record to save
      instead (a forfeit: the game was given up), or None to leave it for the next run.
    """

    def submit(self, job: GameJob) -> Future[GameRecord]:
        """Start playing ``job`` (with :func:`arena.jobs.play_job`, wherever the executor's
        workers are); the future resolves, on the runner's side, to the game's record.

        :raises ArenaError: the executor cannot take games any more (the run stops).
        """
        ...

    def capacity(self) -> int:
        """How many games to keep submitted now (at least 1); asked again as games finish,
        so an executor that grows during the run gets more."""
        ...

    def is_lost(self, error: BaseException) -> bool:
        """True when a game's future failed with ``error`` because the executor lost the
        game (its worker died, it was cancelled): it was not played.  False for a failure
        of the referee.  A failed game is left for the next run; a lost one too, unless the
        executor's optional ``after_loss`` says otherwise (see the class)."""
        ...

    def broken(self, error: BaseException) -> Optional[str]:
        """Why the executor itself is broken, when a game's future failed with ``error``
        because of that (the run then stops: :class:`arena.tournament.WorkerFailure`); None
        otherwise."""
        ...

    def close(self, *, cancel: bool) -> None:
        """Release the executor.  ``cancel``: the run was stopped (or failed), abandon the
        games in flight and stop their bots rather than wait for them."""
        ...


# --------------------------------------------------------------------------------------
# concurrent.futures executors: the local process pool, or one passed in
# --------------------------------------------------------------------------------------


class FuturesExecutor:
    """A :class:`GameExecutor` over a ``concurrent.futures`` executor: each job is a call of
    :func:`~arena.jobs.play_job` on it.  The local pool (:func:`process_pool`) is one; any
    other (a ``ThreadPoolExecutor``) can be given to ``run_tournament``.

    ``games`` is the number of games to keep submitted (two per worker: a worker never waits
    for its next game).
    """

    def __init__(self, executor: Executor, *, games: int) -> None:
        self.executor = executor
        self.games = max(1, games)

    def submit(self, job: GameJob) -> Future[GameRecord]:
        """Call ``play_job(job)`` on the executor."""
        return self.executor.submit(play_job, job)

    def capacity(self) -> int:
        """The fixed number of games to keep submitted."""
        return self.games

    def is_lost(self, error: BaseException) -> bool:
        """Only a game whose future was cancelled was lost."""
        return isinstance(error, CancelledError)

    def broken(self, error: BaseException) -> Optional[str]:
        """A process pool whose worker died (outside a game's control) is broken."""
        if isinstance(error, BrokenProcessPool):
            return f"a worker process died ({error})"
        return None

    def close(self, *, cancel: bool) -> None:
        """Shut the executor down, waiting for its games; with ``cancel``, stop them first
        (:func:`stop_pool`)."""
        if cancel:
            stop_pool(self.executor)
        else:
            self.executor.shutdown(wait=True)


def wrap_executor(executor: Executor, workers: int) -> FuturesExecutor:
    """A ``concurrent.futures`` executor as a :class:`GameExecutor`, kept two games per
    worker busy (its ``_max_workers`` when it tells, else ``workers``)."""
    return FuturesExecutor(executor, games=2 * max(1, getattr(executor, "_max_workers",
                                                              workers)))


#: what a fork server loads once, for the workers it forks (see :func:`process_pool`)
FORKSERVER_PRELOAD = ["arena.jobs", "arena.referee", "arena.check", "arena.live",
                      "arena.server.live"]


def process_pool(workers: int, *, threaded: bool = False, nice: int = 0) -> ProcessPoolExecutor:
    """The local pool: ``workers`` processes set up by :func:`arena.jobs.init_worker`
    (SIGINT ignored, SIGTERM a clean stop, dead with the runner).

    They are forked from the caller, the fastest start, unless ``threaded`` (a caller whose
    other threads keep working, such as the competition server): a fork copies every lock
    as it is at that moment, and a child that needs one another thread held (in the middle
    of an import, say) waits forever.  Those workers are forked by a fork server instead, a
    process of one thread that has loaded :data:`FORKSERVER_PRELOAD`.

    ``nice``: the workers, and so their games' referees and bots, run that much nicer (the
    competition server's judge: its web pages stay quick while games are played)."""
    methods = multiprocessing.get_all_start_methods()
    context: Any
    if threaded and "forkserver" in methods:
        _short_socket_folder()
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(FORKSERVER_PRELOAD)
        ids = (0, os.getpid())  # the workers' parent is the fork server: they watch this one
    else:
        context = multiprocessing.get_context("fork" if "fork" in methods else None)
        ids = (os.getpid(), 0)
    return ProcessPoolExecutor(max_workers=workers, mp_context=context,
                               initializer=init_worker, initargs=(*ids, nice))


#: the longest folder the fork server's socket may be made in: its path (the folder, then
#: ``pymp-XXXXXXXX/listener-XXXXXXXX``, about 40 characters) must fit a Unix socket's 107
_SOCKET_FOLDER_MAX = 60


def _short_socket_folder() -> None:
    """Give multiprocessing a short temporary folder when the usual one (``TMPDIR``) is too
    long for the fork server's Unix socket ("AF_UNIX path too long": a TMPDIR deep in a test
    or build tree stopped every check of the competition server)."""
    import tempfile

    config = multiprocessing.current_process()._config  # type: ignore[attr-defined]
    if config.get("tempdir") is not None or len(tempfile.gettempdir()) <= _SOCKET_FOLDER_MAX:
        return
    for base in ("/tmp", "/var/tmp", "/dev/shm"):
        if os.path.isdir(base) and os.access(base, os.W_OK | os.X_OK):
            import atexit
            import shutil

            folder = tempfile.mkdtemp(prefix="pymp-", dir=base)
            atexit.register(shutil.rmtree, folder, True)
            config["tempdir"] = folder
            return


def stop_pool(executor: Executor) -> None:
    """Abandon the games in flight: SIGTERM every worker process (their games unwind, their
    bots are stopped), wait up to :data:`WORKER_STOP_GRACE_S`, SIGKILL stragglers, then shut
    the executor down, cancelling the games not started."""
    processes = list((getattr(executor, "_processes", None) or {}).values()) if isinstance(
        executor, ProcessPoolExecutor) else []
    for p in processes:
        if p.is_alive() and p.pid is not None:
            try:
                os.kill(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + WORKER_STOP_GRACE_S
    for p in processes:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive() and p.pid is not None:
            log.warning("worker %s did not stop in %.0f s; killing it", p.pid,
                        WORKER_STOP_GRACE_S)
            p.kill()
            p.join(1.0)
    executor.shutdown(wait=True, cancel_futures=True)


# --------------------------------------------------------------------------------------
# The runner's side of the optional methods
# --------------------------------------------------------------------------------------


def after_loss(games: GameExecutor, job: GameJob,
               error: BaseException) -> Union[GameJob, GameRecord, None]:
    """``games.after_loss(job, error)`` when the executor has it, else None (the game is
    left for the next run, as on the local pool); logged, but for a record (saved and
    logged as any game)."""
    after = getattr(games, "after_loss", None)
    verdict: Union[GameJob, GameRecord, None] = after(job, error) if after else None
    what = (f"game {job.slot.game_id} was lost on the cluster ({type(error).__name__}: "
            f"{one_line(error)})")
    if isinstance(verdict, GameJob):
        log.warning("%s; it is played again", what)
    elif verdict is None:
        log.error("%s; it is left unplayed for the next run", what)
    return verdict


class StallWatch:
    """The runner's side of an executor that can stall (its optional ``stalled()``): while
    it does, :meth:`check` is true (submit nothing), the live progress line (``progress``,
    an :class:`arena.progress.Progress`) carries the note, redrawn about once a second (the
    executor logs each change itself), and once ``wait_s`` (``cluster.wait``) has passed it
    logs and raises ``error`` (the runner's ``WorkerFailure``), saying what is saved (from
    ``result``, the run's ``TournamentResult``) and how to resume."""

    def __init__(self, games: GameExecutor, wait_s: float, progress: Any, result: Any,
                 error: Callable[[str], Exception]) -> None:
        self.stalled: Optional[Callable[[], Optional[tuple[str, float]]]] = getattr(
            games, "stalled", None)
        self.wait_s = wait_s
        self.progress = progress
        self.result = result
        self.error = error
        self.text: Optional[str] = None
        self._shown = 0.0

    def check(self) -> bool:
        """True while the executor cannot play games.

        :raises Exception: ``error(message)``, once it has not for ``wait_s``.
        """
        stall = self.stalled() if self.stalled is not None else None
        if stall is None:
            self.text = None
            return False
        text, since = stall
        self.text = text
        waited = time.monotonic() - since
        if waited >= self.wait_s:
            r = self.result
            message = (f"{text}, for longer than {wait_text(self.wait_s)} (cluster.wait): the "
                       f"run stops. {r.finished}/{r.total} games are saved in {r.folder}; start "
                       f"Dask workers (or the scheduler), then run the same command again to "
                       f"resume (docs/CLUSTER.md)")
            log.error("%s", message)
            raise self.error(message)
        if time.monotonic() - self._shown >= 1.0:
            self._shown = time.monotonic()
            self.show(f"{text}; the run stops in {wait_text(self.wait_s - waited)} without one")
        return True

    def show(self, note: str) -> None:
        """The live progress line with ``note`` after it (a terminal only)."""
        self.progress.redraw(note)


def one_line(error: BaseException) -> str:
    """An error's text on one line, cut to 200 characters."""
    text = " ".join(str(error).split())
    return text if len(text) <= 200 else text[:197] + "..."


def wait_text(seconds: float) -> str:
    """A wait for messages: ``10 min`` from 2 minutes on, else ``45 s``."""
    seconds = max(0.0, seconds)
    return f"{seconds / 60:.0f} min" if seconds >= 120 else f"{seconds:.0f} s"


# --------------------------------------------------------------------------------------
# The registry
# --------------------------------------------------------------------------------------


def _usable(config: TournamentConfig) -> None:
    """Nothing to check before the run."""


@dataclass(frozen=True)
class ExecutorKind:
    """One ``executor.type`` of a tournament file.

    ``open`` makes the executor for a configuration (the runner closes it);
    ``describe`` says where the games run, for the log (``"2 workers"``); ``require`` is
    called before anything is written and raises when the executor cannot be used at all
    (a missing optional package)."""

    open: Callable[[TournamentConfig], GameExecutor]
    describe: Callable[[TournamentConfig], str]
    require: Callable[[TournamentConfig], None] = _usable


def _open_local(config: TournamentConfig) -> GameExecutor:
    return FuturesExecutor(process_pool(config.workers), games=2 * max(1, config.workers))


def _open_dask(config: TournamentConfig) -> GameExecutor:
    from arena.cluster import open_cluster  # only for a Dask run

    return open_cluster(config)


def _require_dask(config: TournamentConfig) -> None:
    from arena.cluster import require_distributed

    require_distributed()


#: ``executor.kind`` (``executor.type`` in a tournament file) -> how to make that executor
EXECUTORS: dict[str, ExecutorKind] = {
    "local": ExecutorKind(_open_local, lambda config: f"{config.workers} workers"),
    "dask": ExecutorKind(_open_dask, lambda config: "a Dask cluster", require=_require_dask),
}


def executor_kind(config: TournamentConfig) -> ExecutorKind:
    """The registry's entry for ``config.executor.kind``.

    :raises ConfigError: no executor of that kind is registered.
    """
    kind = config.executor.kind
    try:
        return EXECUTORS[kind]
    except KeyError:
        raise ConfigError(f"expected one of {', '.join(EXECUTORS)}, got {kind!r}",
                          "executor.type") from None


def open_executor(config: TournamentConfig) -> GameExecutor:
    """The executor ``config.executor`` names, ready for games; close it after the run.

    :raises ArenaError: it cannot be used (``ClusterError`` for a Dask cluster).
    """
    return executor_kind(config).open(config)


__all__ = ["EXECUTORS", "ExecutorKind", "FuturesExecutor", "GameExecutor", "StallWatch",
           "WORKER_STOP_GRACE_S", "after_loss", "executor_kind", "one_line", "open_executor",
           "process_pool", "stop_pool", "wait_text", "wrap_executor"]
