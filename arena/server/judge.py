"""The judge: two threads of the server process working through the database's queue.

* The **checkers** (``check_workers`` threads) each take a queued check: the upload's
  ``build:`` step and ``arena check`` (:func:`arena.check.check_bot`, in the sandbox,
  against ``bots/random``) run in a process of their own (:func:`check_spec`), which is
  ended, with everything it started, when the check takes longer than ``check_timeout``
  seconds (a ``FAIL`` verdict); then the checker stores the verdict and, for a bot that
  passed, queues its ladder games (:meth:`~arena.server.service.Competition.finish_check`,
  which first weighs the built folder against its owner's disk quota: over it, rejected).
  Neither the web server's event loop nor the games wait for a check, and a hostile upload
  holds one checker for ``check_timeout`` at most.
* The **dispatcher** keeps the executor busy with queued games — test matches first, then
  the final's, then the ladder's (none after the deadline) — (each a
  :class:`~arena.jobs.GameJob` played by the tournament's referee through
  :func:`~arena.server.live.play_live`, which appends each ply to the game's live file as it
  is played, on the local process pool of :func:`arena.executors.process_pool` or a Dask
  scheduler's workers) and stores each record as it comes back.  Once a second (unless an
  admin paused the judge) it starts the final when the deadline has passed and the last
  checks are done, pairs a Swiss final's next round when the last game of the round before
  is stored, and freezes its standings when its last game is stored
  (:mod:`arena.server.final`).

Nothing lives only in memory: a killed server's running work is requeued at the next start
(:meth:`~arena.server.service.Competition.recover`) and a game counts once, when its record
is stored.  A bot's failure is its game's result; an exception of the referee or the
executor requeues the game (given up after a few attempts), never stops the judge.  On
Dask (:class:`arena.cluster.DaskPool`) no game is handed out while the cluster has no
worker or no scheduler (the log says so, and when it is back), and a game the scheduler
took with it is played again at once, without an attempt charged.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from typing import Any, Optional

from arena.sandbox.ownclock import TreeClock
from arena.server import live
from arena.server.config import ServerConfig
from arena.server.service import Competition

log = logging.getLogger("arena.server.judge")

#: seconds between looks at an empty queue
POLL_S = 0.2
#: characters of a check's text kept (its bot's own output is capped before)
MAX_LOG = 100_000
#: seconds between two looks at whether a running check was cancelled
CANCEL_POLL_S = 0.5
#: seconds between two looks at whether the final is to start or is done
FINAL_POLL_S = 1.0
#: a game the dispatcher claimed: (id, white, black, variant, pair, game, seed)
Claimed = tuple[int, int, int, str, int, int, int]
#: how a check's verdict starts when the machine was too busy to judge it (as ``arena
#: check`` says it): it is queued again, neither passed nor failed
NOT_JUDGED = "NOT JUDGED"
#: a check gets ``check_timeout`` seconds of its own time (wall time less its waits for a
#: CPU), and at most this many times that of wall time: past it, not judged
CHECK_WALL_FACTOR = 4


class Judge:
    """The checker and dispatcher threads of one competition (see the module docstring)."""

    def __init__(self, competition: Competition, executor: Optional[Executor] = None) -> None:
        self.competition = competition
        self._executor = executor
        self._own_executor = executor is None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        #: the checks' one-process pools in use (ended at stop)
        self._check_pools: set[Executor] = set()
        self._pools_lock = threading.Lock()
        #: what a Dask executor waits for, as last logged (None: it can play)
        self._stall_text: Optional[str] = None
        #: games on Dask submitted again after their scheduler went away, by game id
        self._requeued: dict[int, int] = {}

    def start(self) -> None:
        """Remove what a killed server left (its checks' processes, cgroups and scratch
        folders, progress files), requeue interrupted work, open the executor, start the
        threads."""
        _sweep_stale(self.competition)
        checks, games = self.competition.recover()
        if checks or games:
            log.info("resuming: %d check(s) and %d game(s) requeued", checks, games)
        if self._executor is None:
            self._executor = _open_executor(self.competition)
        loops = [(self._check_loop, f"judge-checker-{n}")
                 for n in range(self.competition.config.check_workers)]
        for target, name in (*loops, (self._game_loop, "judge-games")):
            t = threading.Thread(target=target, name=name, daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self) -> None:
        """Stop taking work; abandon checks and games in flight (they are requeued at the
        next start)."""
        from arena.executors import stop_pool

        self._stop.set()
        with self._pools_lock:
            pools = list(self._check_pools)
        for pool in pools:
            self._end_check_pool(pool)
        if self._own_executor and self._executor is not None:
            from concurrent.futures import ProcessPoolExecutor

            if isinstance(self._executor, ProcessPoolExecutor):
                stop_pool(self._executor)
            else:  # a DaskPool: cancels what is running or queued, closes the client
                self._executor.shutdown(wait=False, cancel_futures=True)
        for t in self._threads:
            t.join(10)

    # ---- checks --------------------------------------------------------------------

    def _check_loop(self) -> None:
        while not self._stop.is_set():
            try:
                if self.competition.paused() or not self._check_one():
                    self._stop.wait(POLL_S)
            except Exception:  # noqa: BLE001 - the judge never dies of one bad check
                log.exception("the checker failed; going on")
                self._stop.wait(1.0)

    def _check_one(self) -> bool:
        claimed = self.competition.claim_check()
        if claimed is None:
            return False
        job_id, bot_id = claimed
        passed, verdict, text = self._run_check(job_id, bot_id)
        if self._stop.is_set():
            return True  # interrupted: requeued at the next start
        if verdict.startswith(NOT_JUDGED):  # neither passed nor failed: again, later
            wait = self.competition.requeue_check(job_id, bot_id, verdict, text)
            log.warning("bot %d: %s; checked again in %.0f s", bot_id, verdict, wait)
            return True
        queued = self.competition.finish_check(job_id, bot_id, passed, verdict, text)
        log.info("bot %d: %s (%d games queued)", bot_id, verdict, queued)
        return True

    def _run_check(self, job_id: int, bot_id: int) -> tuple[bool, str, str]:
        """:func:`check_spec` of one upload in a process of its own, within
        ``check_timeout``, stopped at once when the check is cancelled: (passed, verdict
        line, the check's text).  However it ends, its processes, sandboxes and scratch
        folders go with it (:func:`_sweep`)."""
        from arena.executors import process_pool
        from arena.server.progress import progress_path

        comp = self.competition
        cfg = comp.config
        try:
            spec = comp.bot_spec(bot_id)
        except Exception as e:  # noqa: BLE001 - a vanished folder, a bad manifest: a verdict
            return False, comp.public_text(f"FAIL: the check could not run ({e})")[:500], ""
        progress = progress_path(comp.folder, job_id)
        pool = process_pool(1, threaded=True, nice=cfg.nice)
        with self._pools_lock:
            self._check_pools.add(pool)
        pids: set[int] = set()
        clock: Optional[TreeClock] = None
        try:
            future = pool.submit(check_spec, spec, cfg, str(comp.folder), str(progress))
            started = time.monotonic()
            cap = started + CHECK_WALL_FACTOR * cfg.check_timeout
            own = 0.0
            next_look = 0.0
            while not future.done():
                pids |= _pool_pids(pool)
                if clock is None and pids:  # the check's process: its tree's own time
                    clock = TreeClock(min(pids))
                now = time.monotonic()
                if self._stop.is_set():
                    return False, "FAIL: interrupted", ""
                if now >= next_look:  # a database read: twice a second is enough
                    next_look = now + CANCEL_POLL_S
                    reason = comp.check_cancel(job_id)
                    if reason:
                        log.info("bot %d: check cancelled (%s)", bot_id, reason)
                        return False, f"FAIL: cancelled ({reason})", self._so_far(
                            job_id, f"the check was cancelled ({reason})")
                    own = clock.read()[1] if clock is not None else now - started
                if own >= cfg.check_timeout or now >= cap:
                    waited = now - started - own
                    step = self._step(job_id)
                    if own < cfg.check_timeout:  # the machine's doing: not the bot's
                        log.warning("bot %d: the check could not be judged: %.0f s, of "
                                    "which %.0f s waiting for a CPU (%s)", bot_id,
                                    now - started, waited, step)
                        return False, (f"{NOT_JUDGED}: the check took {now - started:.0f} s "
                                       f"of which {waited:.0f} s waiting for a CPU (the "
                                       f"machine was too busy) and was stopped while "
                                       f"{step}")[:500], self._so_far(
                                           job_id, "the check was stopped: the machine was "
                                                   "too busy to judge it")
                    log.warning("bot %d: the check took longer than %d s (%s)", bot_id,
                                cfg.check_timeout, step)
                    spent = (f"its own time; {waited:.0f} s more spent waiting for a CPU "
                             f"were not counted" if waited >= 1 else "its own time")
                    return False, (f"FAIL: the check took longer than {cfg.check_timeout} s "
                                   f"(check_timeout, {spent}) and was stopped while "
                                   f"{step}")[:500], \
                        self._so_far(job_id, f"the check was stopped after "
                                             f"{cfg.check_timeout} s of its own time "
                                             f"(check_timeout)")
                wait([future], timeout=POLL_S)
            try:
                result: tuple[bool, str, str] = future.result()
                return result
            except Exception as e:  # noqa: BLE001 - its process died (killed, out of memory)
                log.warning("bot %d: the check's process failed: %r", bot_id, e)
                return False, f"FAIL: the check's process failed ({e!r}) while " \
                              f"{self._step(job_id)}"[:500], self._so_far(
                                  job_id, "the check's process ended before its verdict")
        finally:
            if clock is not None:
                clock.close()
            pids |= _pool_pids(pool)
            self._end_check_pool(pool)  # the process, and whatever the check left, end here
            _sweep(pids)

    def _end_check_pool(self, pool: Executor) -> None:
        """Stop a check's pool, once: its checker and :meth:`stop` may both try (two
        shutdowns of one pool close its pipes twice, and the second close can hit a
        descriptor that another pool or connection has reused since)."""
        from arena.executors import stop_pool

        with self._pools_lock:
            if pool not in self._check_pools:
                return
            self._check_pools.discard(pool)
        stop_pool(pool)

    def _step(self, job_id: int) -> str:
        """What check ``job_id`` was doing, as a phrase (from its progress file)."""
        from arena.server.progress import read_progress

        step, _ = read_progress(self.competition.folder, job_id)
        return self.competition.public_text(step) or "starting"

    def _so_far(self, job_id: int, why: str) -> str:
        """The text of a check that was stopped: why, what it was doing, its steps' lines
        and the build's output so far."""
        from arena.server.progress import read_progress

        step, text = read_progress(self.competition.folder, job_id)
        lines = [why + (f", while {step}" if step else ""), text]
        return _cap(self.competition.public_text("\n".join(x for x in lines if x)))

    # ---- games ---------------------------------------------------------------------

    def _game_loop(self) -> None:
        running: dict[Future[Any], Claimed] = {}
        workers = max(1, self.competition.config.workers)
        capacity = 2 * workers
        final_look = 0.0
        while not self._stop.is_set():
            try:
                paused = self.competition.paused()
                if not paused and time.monotonic() >= final_look:
                    final_look = time.monotonic() + FINAL_POLL_S
                    self._final()
                if not paused and not self._cluster_stalled():
                    for claimed in self.competition.claim_games(capacity - len(running)):
                        running[self._submit(claimed)] = claimed
                    if len(running) < workers and self.competition.queue_idle_games():
                        continue  # ladder.idle_games: hand them out at once
                self.competition.games_in_flight = len(running)
                if not running:
                    self._stop.wait(POLL_S)
                    continue
                done, _ = wait(list(running), timeout=POLL_S, return_when=FIRST_COMPLETED)
                for future in done:
                    claimed = running.pop(future)
                    if self._lost_with_scheduler(claimed[0], future):
                        running[self._submit(claimed)] = claimed  # at once: still running
                    else:
                        self._requeued.pop(claimed[0], None)
                        # the views are exact again before the last game's record is seen
                        self.competition.games_in_flight = len(running)
                        self._store(claimed[0], future)
                self.competition.games_in_flight = len(running)
            except Exception:  # noqa: BLE001 - the judge never dies of one bad game
                log.exception("the game dispatcher failed; going on")
                self._stop.wait(1.0)

    def _cluster_stalled(self) -> bool:
        """True while a Dask executor can play no game (no worker, or its scheduler gone:
        :meth:`arena.cluster.DaskPool.stalled`, which logs each change): no game is handed
        out meanwhile, so that none is charged an attempt for the cluster's state.  The
        server waits as long as it takes (it has no ``cluster.wait``)."""
        stalled = getattr(self._executor, "stalled", None)
        stall = stalled() if stalled is not None else None
        if stall is None:
            self._stall_text = None
            return False
        if stall[0] != self._stall_text:
            self._stall_text = stall[0]
            log.warning("the judge hands out no game while %s", stall[0].replace(
                "waiting for", "it waits for"))
        return True

    def _lost_with_scheduler(self, game_id: int, future: Future[Any]) -> bool:
        """True when a game on Dask was cancelled by the cluster (its scheduler went away,
        not a worker's death): it is submitted again, still ``running``, without an attempt
        charged (up to :data:`arena.cluster.MAX_REQUEUES` times; then, as any lost game, it
        goes back to the queue).  A game whose workers died (``KilledWorker``, after Dask
        gave it to other workers ``allowed-failures`` times) is stored as lost: requeued
        with an attempt charged, ``failed`` after ``MAX_ATTEMPTS`` of them."""
        from concurrent.futures import CancelledError

        if not hasattr(self._executor, "stalled") or not future.done() or future.cancelled():
            return False
        if not isinstance(future.exception(), CancelledError):
            return False
        from arena.cluster import MAX_REQUEUES

        again = self._requeued[game_id] = self._requeued.get(game_id, 0) + 1
        if again > MAX_REQUEUES:
            return False
        log.warning("game %d was lost with the Dask scheduler; it is played again", game_id)
        return True

    def _final(self) -> None:
        """Start the final when it is due; once none of its games is queued or running,
        pair a Swiss's next round, or freeze its standings when it is done
        (:meth:`~arena.server.final.Finals.advance_final`)."""
        queued = self.competition.start_final()
        if queued:
            swiss = self.competition.config.final.swiss
            log.info("the deadline has passed: the final %s starts (%d games)",
                     "Swiss's round 1" if swiss else "round robin", queued)
        step = self.competition.advance_final()
        if step.kind == "round":
            log.info("the final Swiss's round %d is paired (%d games)", step.number, step.games)
        elif step.kind == "done":
            log.info("the final is done: its standings are frozen")

    def _submit(self, claimed: Claimed) -> Future[Any]:
        from arena.jobs import GameJob
        from arena.schedule import Slot
        from arena.variants import get_variant

        game_id, white_id, black_id, variant, pair, game, seed = claimed
        comp = self.competition
        try:
            slot = Slot(index=game_id, game_id=f"g{game_id}", variant=get_variant(variant),
                        round=1, pair=pair, game=game, white=0, black=1, opening=(), seed=seed)
            job = GameJob(slot=slot, white=comp.bot_spec(white_id), black=comp.bot_spec(black_id),
                          time_control=comp.config.time_control, tournament=comp.config.name,
                          isolation=comp.config.isolation_object())
            assert self._executor is not None
            path = live.live_path(comp.folder, game_id)
            live.clear(path)  # played again after a restart: from an empty board
            return self._executor.submit(live.play_live, job, str(path))
        except Exception as e:  # noqa: BLE001 - a vanished folder, a bad manifest: a failure
            failed: Future[Any] = Future()
            failed.set_exception(e)
            return failed

    def _store(self, game_id: int, future: Future[Any]) -> None:
        try:
            record = future.result()
        except Exception as e:  # noqa: BLE001 - lost or failed: requeued
            log.warning("game %d was not played (%s); requeued", game_id, e)
            self.competition.finish_game(game_id, None)
            return
        if record.void:  # not a fair result (the machine starved a bot): played again
            log.warning("game %d: %s; requeued", game_id, record.void)
            self.competition.finish_game(game_id, None)
            return
        self.competition.finish_game(game_id, record)
        live.remove(live.live_path(self.competition.folder, game_id))


def check_spec(spec: Any, config: ServerConfig, folder: str,
               progress: Optional[str] = None) -> tuple[bool, str, str]:
    """Build and check one upload (its :class:`~arena.manifest.BotSpec`) as ``config``
    says, in a check's process: (passed, verdict line, the check's text, at most
    :data:`MAX_LOG` characters, the competition ``folder`` shown as ``<competition>``).
    ``progress``: the check's progress file (:class:`~arena.server.progress.CheckProgress`:
    each step as it starts, each game as it ends, the build's output as it comes)."""
    from arena.check import DEFAULT_OPPONENT, check_bot, format_report
    from arena.server.progress import CheckProgress
    from arena.manifest import load_bot

    notes = CheckProgress(progress) if progress else None

    def on_game(record: Any) -> None:
        if notes is not None:
            notes.line(f"game {record.game_id}: {record.white.name} - {record.black.name} "
                       f"{record.result} ({record.termination}, {len(record.moves)} moves)")

    try:
        report = check_bot(spec, variants=config.variants, games=config.check_games,
                           time_control=config.time_control,
                           opponent=load_bot(DEFAULT_OPPONENT),
                           isolation=config.isolation_object(), kept_games=2,
                           on_game=on_game, on_step=notes.step if notes else None,
                           on_output=notes.output if notes else None)
        lines = format_report(report)
    except Exception as e:  # noqa: BLE001 - whatever the upload did, it is a verdict
        log.warning("%s: the check failed: %s", spec.name, traceback.format_exc())
        return False, f"FAIL: the check could not run ({e})"[:500].replace(
            folder, "<competition>"), ""
    text = _cap("\n".join(lines).replace(folder, "<competition>"))
    if report.passed:
        return True, lines[-1], text
    first = report.problems[0]
    return False, f"FAIL: {first.kind}: {first.text}".replace(folder, "<competition>")[:500], text


def _cap(text: str) -> str:
    """A check's text, at most :data:`MAX_LOG` characters."""
    if len(text) > MAX_LOG:
        return text[:MAX_LOG] + "\n[... the rest of the check's log is cut]"
    return text


def _pool_pids(pool: Any) -> set[int]:
    """The pids of a process pool's worker processes (started so far)."""
    return set((getattr(pool, "_processes", None) or {}).keys())


def _sweep_stale(competition: Competition) -> None:
    """At the judge's start: what the processes of a killed server left (named after
    processes that no longer run), and every progress file (no check runs yet)."""
    from arena.sandbox.cgroups import sweep_stale
    from arena.sandbox.watchdog import sweep_stale_temp_once
    from arena.server.common import CHECKS

    try:
        sweep_stale_temp_once()
        sweep_stale()
    except Exception:  # noqa: BLE001 - logged, never fatal
        log.exception("cannot sweep what a killed server left")
    for path in (competition.folder / CHECKS).glob("*"):
        path.unlink(missing_ok=True)


def _sweep(pids: set[int]) -> None:
    """After a check's process ended (however: its verdict, a timeout, a cancel, a kill):
    kill what its sandboxes left and remove their cgroups and scratch folders (the build's
    copy of the bot, the bots' private temporary folders), which are named after the
    process that made them.  Its watchdog does the same, but may have been killed too."""
    from arena.sandbox import procs
    from arena.sandbox.watchdog import sweep_referee

    for pid in pids:
        if not procs.process_alive(pid):
            try:
                sweep_referee(pid)
            except Exception:  # noqa: BLE001 - a sweep that fails is logged, never fatal
                log.exception("cannot sweep what the check process %d left", pid)


def _open_executor(competition: Competition) -> Executor:
    cfg = competition.config
    if cfg.executor == "dask":  # a client that outlives its workers and its scheduler
        from arena.cluster import connect_pool

        assert cfg.scheduler is not None  # the settings' check: dask needs a scheduler
        return connect_pool(cfg.scheduler)
    from arena.executors import process_pool

    return process_pool(cfg.workers, threaded=True, nice=cfg.nice)
