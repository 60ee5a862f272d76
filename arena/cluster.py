"""Playing a tournament on a Dask cluster: the ``dask`` executor (see ``docs/CLUSTER.md``).

:class:`DaskExecutor` is a :class:`~arena.executors.GameExecutor` over a Dask ``Client``
(a :class:`DaskPool`, the competition server's judge's executor too), connected to a
scheduler given by address or to a ``LocalCluster`` started for the run (``workers``
processes of one thread each);
:func:`open_cluster` makes it (the registry in :mod:`arena.executors` calls it for
``executor: dask``), :func:`cluster_executor` is the same as a context manager.  The runner
submits one :class:`~arena.jobs.GameJob` per game and writes each record as its future
completes: only the client writes ``games.jsonl``.

On the workers, :func:`play_on_worker` plays each job: it points the job's bots at this
worker's copy of their folders when they were shipped (:class:`ShippedBots`, uploaded with
Dask's ``UploadFile`` worker plugin, which also reaches workers that join or restart later),
replaces the client's interpreter by the worker's own in bot commands (``{python}``), and
stamps the record with the worker's address (``GameRecord.worker``; the referee sets
``host``).

A worker that dies mid-game costs that game only: Dask gives its task to another worker
(up to ``distributed.scheduler.allowed-failures`` times, then ``KilledWorker``), and then
:meth:`DaskExecutor.after_loss` has the runner play it once more, watched move by move
(:class:`PlyTrace`), before it is given up as the forfeit of the bot that was to move
(:func:`given_up_record`).  The client itself (:class:`DaskPool`) is watched by a thread:
no worker, or no scheduler, is said (:meth:`DaskPool.stalled`) and waited for (the runner
stops after ``cluster.wait``); a client that lost its scheduler is made again.

This module imports ``distributed`` only inside functions, so it can always be imported;
:func:`require_distributed` turns a missing package into a one-line error that names the
``cluster`` extra.  It imports :mod:`arena.jobs` (the unit of work), never the runner.  It
is longer than the usual 700 lines because it is the one module that knows Dask: what runs
on the workers (shipped bots, a job, the move-by-move watch) and on the client (the watched
pool, the executor) is kept together, so that no other module depends on ``distributed``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import logging
import os
import re
import sys
import tarfile
import tempfile
import threading
import time
import uuid
from concurrent.futures import Executor, Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Optional, Sequence, Union

from arena.config import LOCAL_SCHEDULER
from arena.errors import ArenaError
from arena.jobs import GameJob, play_job
from arena.records import GameRecord

if TYPE_CHECKING:
    from arena.config import TournamentConfig
    from arena.manifest import BotSpec

log = logging.getLogger("arena.cluster")

#: how to install what the dask executor needs
EXTRA_HINT = "pip install 'morris-arena[cluster]'"
#: seconds to reach a scheduler, and then to see its first worker
CONNECT_TIMEOUT_S = 30.0
WORKER_WAIT_S = 60.0
#: seconds a task waits for the shipped bots to arrive on a worker that has just started
SHIPPED_WAIT_S = 30.0
#: the folder, under a worker's local directory, where shipped bots are unpacked
SHIPPED_DIR = "arena-bots"
#: seconds between two looks at the cluster (its workers and threads, whether the scheduler
#: answers), on a thread of the client's own
WATCH_S = 1.0
#: a scheduler that has not answered a look for this long counts as unreachable
PROBE_TIMEOUT_S = 30.0
#: seconds between two attempts to reach a scheduler once Dask's client has given up
RECONNECT_S = 5.0
#: times a game the scheduler took with it (not a worker's death) is played again in a run
MAX_REQUEUES = 20
#: the Dask event topic of the games watched move by move (:class:`PlyTrace`)
TRACE_TOPIC = "arena-trace"
#: a shipped bundle above this size gets a warning (every worker receives all of it)
LARGE_BUNDLE_BYTES = 100 << 20
_SKIPPED_NAMES = frozenset({".git", "__pycache__", ".pytest_cache", ".mypy_cache"})


class ClusterError(ArenaError):
    """The Dask cluster cannot be used: unreachable, no workers, or workers without arena."""


class ClusterUnavailable(ClusterError):
    """The ``distributed`` package (the ``cluster`` extra) is not installed."""


def require_distributed() -> None:
    """Check that Dask distributed can be imported.

    :raises ClusterUnavailable: it cannot, with the install command in the message.
    """
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ClusterUnavailable(f"the dask executor needs the 'distributed' package, "
                                 f"which the cluster extra installs: {EXTRA_HINT}") from None


def is_lost_game(error: BaseException) -> bool:
    """True when a game's future failed because the cluster lost it (its workers died:
    ``KilledWorker``; or the cluster cancelled it), not because the game itself failed."""
    from concurrent.futures import CancelledError

    distributed = sys.modules.get("distributed")
    killed = getattr(distributed, "KilledWorker", None) if distributed is not None else None
    return isinstance(error, CancelledError) or (killed is not None and isinstance(error, killed))


# --------------------------------------------------------------------------------------
# Shipping bot folders
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShippedBots:
    """Bot folders packed into one archive for the workers.

    ``archive`` is the archive's file name (it lands in each worker's local directory);
    ``folders`` maps each bot folder as the client knows it to its place inside the
    unpacked archive (``<content digest>/<folder name>``, so the folder keeps its name).
    """

    archive: str
    folders: Mapping[str, str]
    data: bytes = dataclasses.field(repr=False, compare=False, default=b"")

    @property
    def digest(self) -> str:
        """The archive's content digest (also the name of its unpacked folder)."""
        return self.archive[len("arena-bots-"):-len(".tar.gz")]


def _bot_files(folder: Path) -> list[Path]:
    """The files of a bot folder to ship, sorted; version-control and cache folders are
    left out, links are followed."""
    out: list[Path] = []
    for root, dirs, files in os.walk(folder, followlinks=True):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_NAMES)
        out.extend(Path(root) / f for f in sorted(files) if not f.endswith(".pyc"))
    return out


def _folder_digest(folder: Path, files: Sequence[Path]) -> str:
    """A digest of the files' names, permission bits and contents."""
    h = hashlib.sha256()
    for f in files:
        h.update(f"{f.relative_to(folder)}\0{os.stat(f).st_mode & 0o777:o}\0".encode())
        h.update(f.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]


def pack_bots(folders: Sequence[str]) -> ShippedBots:
    """Pack the bot folders (absolute paths, duplicates allowed) into one gzipped tar.

    :raises ClusterError: a folder cannot be read.
    """
    members: dict[str, str] = {}
    buffer = io.BytesIO()
    try:
        with tarfile.open(fileobj=buffer, mode="w:gz", dereference=True) as tar:
            for text in dict.fromkeys(folders):
                folder = Path(text)
                files = _bot_files(folder)
                place = f"{_folder_digest(folder, files)}/{folder.name}"
                members[text] = place
                tar.add(folder, arcname=place, recursive=False)
                for f in files:
                    tar.add(f, arcname=f"{place}/{f.relative_to(folder)}", recursive=False)
    except OSError as e:
        raise ClusterError(f"cannot pack the bot folders to ship them: {e}") from None
    digest = hashlib.sha256("\n".join(sorted(members.values())).encode()).hexdigest()[:16]
    data = buffer.getvalue()
    if len(data) > LARGE_BUNDLE_BYTES:
        log.warning("the shipped bots weigh %.0f MB, sent to every worker: consider a shared "
                    "path instead of --ship-bots", len(data) / 2**20)
    return ShippedBots(f"arena-bots-{digest}.tar.gz", members, data)


_unpack_lock = threading.Lock()


def unpack_bots(shipped: ShippedBots, local_directory: str | os.PathLike[str], *,
                wait_s: float = SHIPPED_WAIT_S) -> Path:
    """Unpack the shipped archive found in ``local_directory`` (once per worker) and return
    the folder it was unpacked to.

    Waits up to ``wait_s`` for the archive (a worker that has just started may run a task
    before its plugins are set up).

    :raises ClusterError: the archive never arrived.
    """
    base = Path(local_directory)
    target = base / SHIPPED_DIR / shipped.digest
    if (target / ".complete").is_file():
        return target
    archive = base / shipped.archive
    deadline = time.monotonic() + wait_s
    while not archive.is_file():
        if time.monotonic() > deadline:
            raise ClusterError(f"the shipped bots ({shipped.archive}) did not reach this "
                               f"worker ({base}) within {wait_s:.0f} s")
        time.sleep(0.05)
    with _unpack_lock:
        if not (target / ".complete").is_file():
            tmp = Path(tempfile.mkdtemp(prefix=f".{shipped.digest}-", dir=_mkdir(target.parent)))
            with tarfile.open(archive, "r:gz") as tar:
                tar.extractall(tmp, filter="data")
            (tmp / ".complete").touch()
            try:
                os.rename(tmp, target)
            except OSError:  # another process of this machine unpacked it first
                import shutil

                shutil.rmtree(tmp, ignore_errors=True)
    return target


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def relocate(spec: BotSpec, folder: Optional[str] = None, *, python: str = "") -> BotSpec:
    """``spec`` with its folder moved to ``folder`` (its path, working directory and every
    command argument naming it) and the interpreter ``python`` (the client's, which
    ``{python}`` became) replaced by this process's own."""
    command = list(spec.command)
    path, cwd = spec.path, spec.cwd
    if folder is not None and folder != spec.path:
        inside = re.compile(re.escape(spec.path) + r"(?=/|$)")
        command = [inside.sub(lambda _: folder, a) for a in command]
        cwd = inside.sub(lambda _: folder, cwd)
        path = folder
    if python and python != sys.executable:
        command = [sys.executable if a == python else a for a in command]
    return dataclasses.replace(spec, path=path, cwd=cwd, command=tuple(command))


# --------------------------------------------------------------------------------------
# On the workers
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkerContext:
    """What :func:`play_on_worker` needs besides the job: the shipped bots (None: the bot
    folders are at the same path on every worker), the client's interpreter, and whether to
    keep the referee's log off the worker's stderr (a local cluster shares the console)."""

    shipped: Optional[ShippedBots] = None
    python: str = ""
    quiet: bool = False


def play_on_worker(job: GameJob, context: WorkerContext) -> GameRecord:
    """Play ``job`` on a Dask worker (:func:`arena.jobs.play_job`) with this worker's bot
    folders, and stamp the record with the worker's address (the bot paths in it stay those
    of the client)."""
    from distributed import get_worker

    worker = get_worker()
    if context.quiet:
        logger = logging.getLogger("arena")
        if not logger.handlers:
            logger.addHandler(logging.NullHandler())
    root = (unpack_bots(context.shipped, worker.local_directory)
            if context.shipped is not None else None)

    def local(spec: BotSpec) -> BotSpec:
        place = context.shipped.folders.get(spec.path) if context.shipped and root else None
        return relocate(spec, str(root / place) if root and place else None,
                        python=context.python)

    if isinstance(job.on_move, PlyTrace):
        job.on_move.begin()
    record = play_job(dataclasses.replace(job, white=local(job.white), black=local(job.black)))
    record.worker = worker.address
    record.white.path, record.black.path = job.white.path, job.black.path  # as in a local run
    return record


def _worker_facts() -> dict[str, str]:
    """On a worker: what the client checks (arena's version and code digest, the host)."""
    import socket

    return {"arena": _arena_version(), "code": code_digest(), "host": socket.gethostname(),
            "python": sys.executable}


def _arena_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("morris-arena")
    except PackageNotFoundError:
        return "?"


@functools.cache
def code_digest() -> str:
    """A digest of the arena package's source files, its subpackages' included (the same on
    every machine that runs the same code, wherever it is installed)."""
    package = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for f in sorted(package.rglob("*.py")):
        h.update(f.relative_to(package).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:12]


# --------------------------------------------------------------------------------------
# The cluster: a client that outlives its workers and its scheduler
# --------------------------------------------------------------------------------------


def _clock(wall: float) -> str:
    """A wall-clock time as ``14:02`` (the local time zone, as a console shows it)."""
    return time.strftime("%H:%M", time.localtime(wall))


class DaskPool(Executor):
    """A ``concurrent.futures`` executor over a Dask client that survives what clusters do.

    Each call is one Dask task (``client.submit``, ``pure=False``); its future here resolves
    when the task ends, and the Dask future is then released at once (so that a worker's
    death never makes Dask play a finished game again for a result nobody holds).

    A thread looks at the cluster every :data:`WATCH_S` seconds (the runner never waits on
    the scheduler): the workers and threads connected, and whether the scheduler answers.
    :meth:`stalled` says what games are waiting for, and since when: no worker connected
    (``waiting for workers: 0 connected since 14:02``), or the scheduler unreachable
    (Dask's client tries to reconnect for :data:`CONNECT_TIMEOUT_S`; then this pool makes a
    new client every :data:`RECONNECT_S` seconds, and registers the bot upload plugin again
    on a scheduler that restarted).  The games a lost scheduler took with it fail as
    cancelled (:func:`is_lost_game`): their caller plays them again.

    ``address`` is the scheduler's address to reconnect to (None: a local cluster, started
    and closed with this pool as ``cluster``).  The pool owns the client, the local cluster
    and the bot upload plugin (``plugin``: its name, ``upload``: the plugin itself) and
    releases them on :meth:`shutdown`.
    """

    def __init__(self, client: Any, address: Optional[str] = None, *, cluster: Any = None,
                 plugin: Optional[str] = None, upload: Any = None) -> None:
        self.client = client
        self.address = address
        self.cluster = cluster
        self.plugin = plugin
        self._upload = upload
        self._lock = threading.Lock()
        self._live: dict[str, Any] = {}  # key -> Dask future
        self._closed = threading.Event()
        self.workers = 0
        self.threads = 0
        self._seen = time.monotonic()  # the scheduler's last answer
        self._stall: Optional[tuple[str, float, float]] = None  # (kind, monotonic, wall)
        self._scheduler_id: Optional[str] = None
        self._next_connect = 0.0
        self._look()
        self._thread = threading.Thread(target=self._watch, name="arena-cluster-watch",
                                        daemon=True)
        self._thread.start()

    @property
    def where(self) -> str:
        """The scheduler's address, for messages."""
        return self.address or "local"

    # ---- the watch ---------------------------------------------------------------------

    def _watch(self) -> None:
        while not self._closed.wait(WATCH_S):
            try:
                self._look()
            except Exception as e:  # noqa: BLE001 - the watch never dies
                log.debug("the cluster watch failed: %r", e)

    def _look(self) -> None:
        """One look at the cluster (on the watch thread; once at the start)."""
        client = self.client
        if client.status == "closed" and self.address is not None:
            self._reconnect()
            client = self.client
        if client.status != "running":
            self._stalled_on("scheduler")
            return
        try:
            info = client.scheduler_info(n_workers=0)
        except Exception:  # noqa: BLE001 - unreachable, or going away
            self._stalled_on("scheduler")
            return
        if self._closed.is_set() or not info.get("id"):  # shut down meanwhile: no news
            return
        self._seen = time.monotonic()
        self.workers = int(info.get("n_workers", len(info.get("workers", ()))))
        self.threads = int(info.get("total_threads", self.workers))
        identity = info.get("id")
        if self._scheduler_id is not None and identity != self._scheduler_id:
            log.warning("the Dask scheduler at %s restarted: the games it held are played "
                        "again", self.where)
            self._register_upload()
        self._scheduler_id = identity
        if self.workers == 0:
            self._stalled_on("workers")
        elif self._stall is not None:
            kind, _, wall = self._stall
            self._stall = None
            log.warning("the cluster is back (%d worker%s, %d thread%s) after waiting for "
                        "%s since %s: the run goes on", self.workers,
                        "" if self.workers == 1 else "s", self.threads,
                        "" if self.threads == 1 else "s",
                        "workers" if kind == "workers" else "the scheduler", _clock(wall))

    def _stalled_on(self, kind: str) -> None:
        if self._closed.is_set():
            return
        if kind == "scheduler":
            self.workers = self.threads = 0
        if self._stall is None:
            self._stall = (kind, time.monotonic(), time.time())
            log.warning("%s", self._describe(self._stall))
        elif self._stall[0] != kind:  # the scheduler came back without workers, or the reverse
            self._stall = (kind, self._stall[1], self._stall[2])
            log.warning("%s", self._describe(self._stall))

    def _describe(self, stall: tuple[str, float, float]) -> str:
        kind, _, wall = stall
        if kind == "workers":
            return f"waiting for workers: 0 connected since {_clock(wall)}"
        return f"waiting for the scheduler at {self.where}: unreachable since {_clock(wall)}"

    def _reconnect(self) -> None:
        """Dask's client gave up reconnecting: try a new one (every :data:`RECONNECT_S`)."""
        from distributed import Client

        if time.monotonic() < self._next_connect or self._closed.is_set():
            return
        self._next_connect = time.monotonic() + RECONNECT_S
        try:
            client = Client(self.address, timeout=RECONNECT_S, set_as_default=False)
        except Exception:  # noqa: BLE001 - still unreachable
            return
        with self._lock:
            old, self.client = self.client, client
        try:
            old.close()
        except Exception:  # noqa: BLE001 - it was closed already
            pass
        log.warning("reconnected to the Dask scheduler at %s", self.where)
        self._register_upload()

    def _register_upload(self) -> None:
        """Register the bot upload plugin again (a new scheduler does not know it)."""
        if self._upload is None or self.plugin is None:
            return
        try:
            self.client.register_plugin(self._upload, name=self.plugin)
        except Exception as e:  # noqa: BLE001 - the next look tries nothing more: say so
            log.error("could not ship the bots to the new scheduler's workers: %r", e)

    def stalled(self) -> Optional[tuple[str, float]]:
        """What games are waiting for (``waiting for workers: 0 connected since 14:02``) and
        since when (``time.monotonic()``), or None while the cluster can play them."""
        stall = self._stall
        if stall is None and time.monotonic() - self._seen > PROBE_TIMEOUT_S:
            # the watch is stuck in a call the scheduler does not answer
            wall = time.time() - (time.monotonic() - self._seen)
            return (f"waiting for the scheduler at {self.where}: not answering since "
                    f"{_clock(wall)}", self._seen)
        if stall is None:
            return None
        return self._describe(stall), stall[1]

    # ---- calls -------------------------------------------------------------------------

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """Run ``fn(*args, **kwargs)`` as a Dask task (``key=`` names it).  Never raises for
        the cluster's state: while the scheduler is gone the future fails at once as
        cancelled (a lost call, to be made again)."""
        from concurrent.futures import CancelledError

        if self._closed.is_set():
            raise RuntimeError("cannot submit to a closed Dask pool")
        key = kwargs.pop("key", None) or f"{getattr(fn, '__name__', 'call')}-{uuid.uuid4().hex}"
        out: Future[Any] = Future()
        with self._lock:
            client = self.client
        try:
            if client.status not in ("running", "connecting"):
                raise OSError(f"the client is {client.status}")
            task = client.submit(fn, *args, key=key, pure=False, **kwargs)
        except Exception as e:  # noqa: BLE001 - the scheduler went away meanwhile
            out.set_exception(CancelledError(f"the Dask scheduler at {self.where} is "
                                             f"unreachable ({e})"))
            return out
        self._live[key] = task
        task.add_done_callback(lambda done: self._deliver(done, out))
        return out

    def _deliver(self, task: Any, out: Future[Any]) -> None:
        """A task ended (on Dask's callback thread): its outcome to ``out``, then release."""
        from concurrent.futures import InvalidStateError

        try:
            value = task.result()
        except BaseException as e:  # noqa: BLE001 - KilledWorker, cancelled, the game's own
            try:
                out.set_exception(e)
            except InvalidStateError:  # abandoned meanwhile
                pass
        else:
            try:
                out.set_result(value)
            except InvalidStateError:
                pass
        finally:
            self._live.pop(task.key, None)
            try:
                task.release()
            except Exception:  # noqa: BLE001 - its client is closed
                pass

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop the watch, cancel the calls still running when ``cancel_futures`` (or when
        not ``wait``), and release the cluster (see :func:`_release`).  Dask cannot stop a
        task that runs on a worker of an existing cluster: it runs to its end there, its
        result dropped.  Twice does nothing."""
        if self._closed.is_set():
            return
        self._closed.set()
        if self._thread is not threading.current_thread():
            self._thread.join(2 * WATCH_S)  # a look under way ends first (it says nothing)
        live = list(self._live.values())
        if live and wait and not cancel_futures:
            from distributed import wait as dask_wait

            try:
                dask_wait(live)
            except Exception:  # noqa: BLE001 - the scheduler went away
                pass
        elif live:
            try:
                self.client.cancel(live)
            except Exception:  # noqa: BLE001 - the scheduler went away
                pass
        _release(self.client, self.cluster, self.plugin)


@dataclass(frozen=True)
class PlyTrace:
    """A game watched move by move (the job's ``on_move``): each event names the side to
    move, sent to the scheduler as a Dask event (``log_event`` on :data:`TRACE_TOPIC`), so
    that when the worker playing it dies the client knows which bot was thinking.  Used
    only for a game whose workers have died (one message per ply)."""

    game_id: str

    def begin(self) -> None:
        """The attempt starts (the bots start; White's first move follows)."""
        _trace_event(self.game_id, None, 0)

    def __call__(self, position: Any, info: Any) -> None:
        _trace_event(self.game_id, ("white", "black")[position.turn],
                     int(getattr(position, "ply", -1)))


def _trace_event(game_id: str, side: Optional[str], ply: int) -> None:
    from distributed import get_worker

    try:
        worker = get_worker()
        worker.log_event(TRACE_TOPIC, {"game": game_id, "side": side, "ply": ply,
                                       "worker": worker.address})
    except Exception:  # noqa: BLE001 - not on a worker (a test), or leaving
        pass


def given_up_record(job: GameJob, side: str, deaths: int, worker: str) -> GameRecord:
    """The forfeit of the bot that was to move (``side``) each time a worker playing ``job``
    died, given up after ``deaths`` deaths: its record, as the referee would write a crash
    (``termination`` crash, the other side wins), without moves."""
    from datetime import datetime, timezone

    from arena.records import PlayerInfo

    slot = job.slot
    spec = job.white if side == "white" else job.black

    def info(bot: Any) -> PlayerInfo:
        return PlayerInfo(name=bot.name, bot=getattr(bot, "folder_name", ""), path=bot.path,
                          options=dict(bot.options))

    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    level = getattr(getattr(job.isolation, "level", None), "value", "")
    return GameRecord(
        game_id=slot.game_id, variant=slot.variant.name, variant_params=slot.variant.to_dict(),
        white=info(job.white), black=info(job.black),
        result="0-1" if side == "white" else "1-0", termination="crash", forfeit=side,
        detail=(f"{side} ({spec.name}) was to move when the worker playing this game died; "
                f"{deaths} workers died playing it, so it was given up (a bot that takes its "
                f"machine down: try it alone with arena play and watch its memory and "
                f"processes)"),
        opening=list(slot.opening), time_control=job.time_control.to_dict(), seed=slot.seed,
        tournament=job.tournament, round=slot.round, pair=slot.pair, started=now,
        finished=now, worker=worker, isolation=level or "", restart=job.restart)


# --------------------------------------------------------------------------------------
# The executor
# --------------------------------------------------------------------------------------


class DaskExecutor:
    """The ``dask`` :class:`~arena.executors.GameExecutor`: each game is a call of
    :func:`play_on_worker` on a Dask worker, through a :class:`DaskPool`.

    :meth:`capacity` is the cluster's thread count as the pool last saw it (every
    :data:`WATCH_S` seconds): workers that join during a run get games at once, and no game
    waits in a worker's queue, where a worker that dies would take it down as well.
    :meth:`stalled` is the pool's: the runner shows it and stops after ``cluster.wait``.

    A lost game (:meth:`after_loss`): a game the scheduler took with it is played again (up
    to :data:`MAX_REQUEUES` times in a run).  A game whose worker died is played again by
    Dask itself on another worker, up to ``allowed-failures`` times (the scheduler's
    ``distributed.scheduler.allowed-failures``, 3 by default), then ``KilledWorker``; the
    runner then plays it once more, watched move by move (:class:`PlyTrace`), and if that
    attempt's workers die as often, the bot that was to move forfeits it
    (:func:`given_up_record`): ``2 x (allowed-failures + 1)`` deaths in all, 8 by default.
    Died before its first move (the bots starting), it is left unplayed, logged, for the
    next run.

    The executor owns its pool and releases it on :meth:`close`.
    """

    def __init__(self, pool: DaskPool, context: WorkerContext, *,
                 allowed_failures: int = 3) -> None:
        self.pool = pool
        self.context = context
        self.allowed_failures = allowed_failures
        self._deaths: dict[str, int] = {}
        self._requeued: dict[str, int] = {}

    @property
    def client(self) -> Any:
        """The Dask client in use now (a new one after the scheduler came back)."""
        return self.pool.client

    @property
    def cluster(self) -> Any:
        """The local cluster started for the run (None on an existing cluster)."""
        return self.pool.cluster

    def capacity(self) -> int:
        """The number of worker threads in the cluster now (at least 1)."""
        return max(1, self.pool.threads)

    def stalled(self) -> Optional[tuple[str, float]]:
        """See :meth:`DaskPool.stalled`."""
        return self.pool.stalled()

    def submit(self, job: GameJob) -> Future[GameRecord]:
        """Play ``job`` on a worker; the future resolves on this side (as a lost game while
        the scheduler is unreachable)."""
        key = f"game {job.slot.game_id} {uuid.uuid4().hex[:8]}"
        future: Future[GameRecord] = self.pool.submit(play_on_worker, job, self.context,
                                                      key=key)
        return future

    def is_lost(self, error: BaseException) -> bool:
        """See :func:`is_lost_game`."""
        return is_lost_game(error)

    def broken(self, error: BaseException) -> Optional[str]:
        """Never: a cluster that cannot play is :meth:`stalled`, which the runner waits for
        up to ``cluster.wait``."""
        return None

    def after_loss(self, job: GameJob, error: BaseException) -> Union[GameJob, GameRecord,
                                                                     None]:
        """What to do with ``job``, lost with ``error`` (see the class): the job to play
        again, the record of its forfeit, or None (left unplayed for the next run)."""
        game = job.slot.game_id
        killed = _killed_worker_type()
        if killed is None or not isinstance(error, killed):
            self._requeued[game] = self._requeued.get(game, 0) + 1
            return job if self._requeued[game] <= MAX_REQUEUES else None
        allowed = getattr(error, "allowed_failures", self.allowed_failures)
        deaths = self._deaths[game] = self._deaths.get(game, 0) + int(allowed) + 1
        worker = str(getattr(getattr(error, "last_worker", None), "address", "") or "")
        if not isinstance(job.on_move, PlyTrace):
            log.warning("game %s: %d worker%s died playing it (the last %s); it is played "
                        "once more, watched move by move, to tell which bot takes its worker "
                        "down", game, deaths, "" if deaths == 1 else "s", worker or "?")
            return dataclasses.replace(job, on_move=PlyTrace(game))
        side = self._last_side(game)
        if side is None:
            log.error("game %s: %d workers died playing it, before its first move (its bots "
                      "starting): it is given up for this run and left unplayed", game, deaths)
            return None
        return given_up_record(job, side, deaths, worker)

    def _last_side(self, game: str) -> Optional[str]:
        """The side to move in the last event of ``game``'s trace (None: before a move)."""
        for attempt in range(3):
            try:
                events = self.pool.client.get_events(TRACE_TOPIC)
            except Exception:  # noqa: BLE001 - the scheduler went away
                return None
            mine = [msg for _, msg in events if isinstance(msg, dict) and msg.get("game") == game]
            if mine:
                side = mine[-1].get("side")
                return side if side in ("white", "black") else None
            time.sleep(0.5)
        return None

    def close(self, *, cancel: bool = True) -> None:
        """Stop submitting and release the cluster: remove the bot upload plugin, close the
        client and a local cluster (which ends the games still running there).  Games running
        on an existing cluster run to their end there, whatever ``cancel``: Dask cannot stop
        a running task.  Closing twice does nothing."""
        self.pool.shutdown(wait=not cancel, cancel_futures=cancel)


def _killed_worker_type() -> Optional[type]:
    distributed = sys.modules.get("distributed")
    return getattr(distributed, "KilledWorker", None) if distributed is not None else None


def _release(client: Any, cluster: Any, plugin: Optional[str]) -> None:
    """Remove the bot upload plugin (when there is one), close the client, then the local
    cluster (when there is one)."""
    if plugin is not None:
        try:
            client.unregister_worker_plugin(plugin)
        except Exception as e:  # the cluster may be gone already
            log.info("could not remove the bot upload plugin %s: %r", plugin, e)
    client.close()
    if cluster is not None:
        cluster.close()


def open_cluster(config: TournamentConfig) -> DaskExecutor:
    """A :class:`DaskExecutor` for ``config.executor``: connected to its scheduler, or to a
    local cluster of ``config.workers`` single-threaded processes started here.  Shipped
    bots are uploaded first.  Close it after the run (:meth:`DaskExecutor.close`).

    :raises ClusterUnavailable: distributed is not installed.
    :raises ClusterError: the scheduler cannot be reached, no worker joins it, or a worker
        cannot import arena.
    """
    require_distributed()
    from distributed import Client

    address = config.executor.scheduler
    cluster: Any = None
    client: Any
    try:
        if address == LOCAL_SCHEDULER:
            cluster = start_local_cluster(config.workers)
            client = Client(cluster)
        else:
            client = Client(address, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError) as e:
        if cluster is not None:
            cluster.close()
        where = ("start a local Dask cluster" if address == LOCAL_SCHEDULER
                 else f"reach the Dask scheduler at {address}")
        raise ClusterError(f"cannot {where}: {e}") from None
    plugin: Optional[str] = None
    upload: Any = None
    try:
        try:
            facts = check_workers(client, address, wait_s=config.cluster_wait)
            shipped = None
            if config.executor.ship_bots:
                shipped, plugin, upload = ship_bots(client, [b.path for b in config.bots])
            allowed = allowed_failures(client)
        except OSError as e:  # the scheduler went away (TimeoutError is an OSError)
            raise ClusterError(f"lost the Dask scheduler at {address}: {e}") from None
        pool = DaskPool(client, None if cluster is not None else address, cluster=cluster,
                        plugin=plugin, upload=upload)
        executor = DaskExecutor(pool, WorkerContext(shipped, sys.executable,
                                                    quiet=cluster is not None),
                                allowed_failures=allowed)
    except BaseException:
        _release(client, cluster, plugin)
        raise
    log.info("dask executor: scheduler %s, %d workers on %s; bots %s; a game whose worker "
             "dies is played again, and given up as a forfeit after %d deaths (2 x "
             "(allowed-failures %d + 1)); no worker for %s (cluster.wait) stops the run",
             client.scheduler.address, len(facts),
             ", ".join(sorted({f["host"] for f in facts.values()})),
             "shipped" if shipped else "at a shared path", 2 * (allowed + 1), allowed,
             _duration(config.cluster_wait))
    return executor


def connect_pool(address: str) -> DaskPool:
    """A :class:`DaskPool` connected to the scheduler at ``address`` (the competition
    server's judge: its games are calls of its own; no worker is waited for).

    :raises ClusterUnavailable: distributed is not installed.
    :raises ClusterError: the scheduler cannot be reached within :data:`CONNECT_TIMEOUT_S`.
    """
    require_distributed()
    from distributed import Client

    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {e}") from None
    return DaskPool(client, address)


def allowed_failures(client: Any) -> int:
    """The scheduler's ``distributed.scheduler.allowed-failures`` (this process's Dask
    setting when the scheduler does not tell)."""
    def read(dask_scheduler: Any) -> int:
        return int(dask_scheduler.allowed_failures)

    try:
        return int(client.run_on_scheduler(read))
    except Exception:  # noqa: BLE001 - an older or locked-down scheduler
        import dask

        return int(dask.config.get("distributed.scheduler.allowed-failures", 3))


def _duration(seconds: float) -> str:
    """``10 min``, ``45 s``, ``1.5 h``."""
    if seconds >= 3600:
        return f"{seconds / 3600:g} h"
    if seconds >= 60:
        return f"{seconds / 60:g} min"
    return f"{seconds:g} s"


@contextmanager
def cluster_executor(config: TournamentConfig) -> Iterator[DaskExecutor]:
    """:func:`open_cluster` as a context manager: the executor is closed on exit (to run
    several tournaments on one cluster, or to reach the cluster during a run).

    :raises ClusterUnavailable: distributed is not installed.
    :raises ClusterError: as :func:`open_cluster`.
    """
    executor = open_cluster(config)
    try:
        yield executor
    finally:
        executor.close(cancel=True)




def start_local_cluster(workers: int) -> Any:
    """A Dask ``LocalCluster`` on this machine: ``workers`` processes of one thread each,
    every server bound to 127.0.0.1, Dask's own log kept to errors, and workers that ignore
    Ctrl-C."""
    from distributed import LocalCluster

    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                        host="127.0.0.1", dashboard_address="127.0.0.1:0",
                        silence_logs=logging.ERROR, preload=[_LOCAL_WORKER_SETUP])


#: run in each worker process of a local cluster (a Dask preload, given as source text):
#: Ctrl-C reaches the whole foreground process group, but the runner decides (it closes
#: the cluster), as with the process pool's workers
_LOCAL_WORKER_SETUP = "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN)\n"


def check_workers(client: Any, address: str, *,
                  wait_s: float = WORKER_WAIT_S) -> dict[str, dict[str, str]]:
    """Wait for a first worker (up to ``wait_s``, saying so at once when there is none),
    check that every worker imports the same arena, and warn about workers with more than
    one thread.  Returns each worker's facts.

    :raises ClusterError: no worker within ``wait_s``, or a worker cannot run arena's code.
    """
    if not client.scheduler_info(n_workers=0).get("n_workers", 1):
        log.warning("waiting for workers: 0 connected since %s (up to %s, cluster.wait): "
                    "start some with `dask worker %s --nthreads 1`", _clock(time.time()),
                    _duration(wait_s), address)
    try:
        client.wait_for_workers(1, timeout=wait_s)
    except TimeoutError:
        raise ClusterError(f"no worker joined the Dask scheduler at {address} within "
                           f"{_duration(wait_s)} (cluster.wait): start some with `dask worker "
                           f"{address} --nthreads 1` (see docs/CLUSTER.md), then run the same "
                           f"command again") from None
    answers = client.run(_worker_facts, on_error="return")
    facts: dict[str, dict[str, str]] = {}
    for worker, answer in sorted(answers.items()):
        if isinstance(answer, BaseException):
            raise ClusterError(f"worker {worker} cannot run arena's code ({answer!r}): install "
                               f"the same morris-arena on every worker ({EXTRA_HINT})")
        facts[worker] = answer
        if answer["code"] != code_digest():
            log.warning("worker %s (%s) runs other arena code (version %s, code %s; here %s, "
                        "code %s): install the same version everywhere", worker,
                        answer["host"], answer["arena"], answer["code"], _arena_version(),
                        code_digest())
    for worker, info in client.scheduler_info()["workers"].items():
        if info.get("nthreads", 1) > 1:
            log.warning("worker %s runs %d threads: its games share a core and their clocks; "
                        "start workers with --nthreads 1 (docs/CLUSTER.md)", worker,
                        info["nthreads"])
    return facts


def ship_bots(client: Any, folders: Sequence[str]) -> tuple[ShippedBots, str, Any]:
    """Upload the bot folders to every worker, present and future (Dask's ``UploadFile``
    worker plugin, under a name of our own so that it can be removed after the run).

    Returns the shipped bots, the plugin's name and the plugin (to register it again on a
    scheduler that restarts during the run).
    """
    from distributed.diagnostics.plugin import UploadFile

    shipped = pack_bots(folders)
    with tempfile.TemporaryDirectory(prefix="arena-ship-") as tmp:
        path = Path(tmp) / shipped.archive
        path.write_bytes(shipped.data)
        plugin = UploadFile(str(path), load=False)
    name = f"arena-{shipped.archive}"
    client.register_plugin(plugin, name=name)
    log.info("shipped %d bot folders (%.1f kB) to the workers as %s", len(shipped.folders),
             len(shipped.data) / 1024, shipped.archive)
    return dataclasses.replace(shipped, data=b""), name, plugin


__all__ = ["ClusterError", "ClusterUnavailable", "DaskExecutor", "DaskPool", "PlyTrace",
           "ShippedBots", "WorkerContext", "allowed_failures", "cluster_executor",
           "connect_pool", "given_up_record", "is_lost_game", "open_cluster", "pack_bots",
           "play_on_worker", "relocate", "require_distributed", "start_local_cluster",
           "unpack_bots"]
