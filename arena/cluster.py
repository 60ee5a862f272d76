"""Playing a tournament on a Dask cluster: the ``dask`` executor (see ``docs/CLUSTER.md``).

:class:`DaskExecutor` is a :class:`~arena.executors.GameExecutor` over a Dask ``Client``
(Dask's own ``client.get_executor()``), connected to a scheduler given by address or to a
``LocalCluster`` started for the run (``workers`` processes of one thread each);
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
(up to ``distributed.scheduler.allowed-failures`` times, then ``KilledWorker``, which
:meth:`DaskExecutor.is_lost` reports as a lost game: the runner logs it and leaves it
unplayed for the next run).

This module imports ``distributed`` only inside functions, so it can always be imported;
:func:`require_distributed` turns a missing package into a one-line error that names the
``cluster`` extra.  It imports :mod:`arena.jobs` (the unit of work), never the runner.
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
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional, Sequence

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
#: seconds between two looks at the cluster's size (for the number of games kept in flight)
SIZE_REFRESH_S = 2.0
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
# The executor
# --------------------------------------------------------------------------------------


class DaskExecutor:
    """The ``dask`` :class:`~arena.executors.GameExecutor`: each game is a call of
    :func:`play_on_worker` on a Dask worker, through Dask's ``client.get_executor()``.

    :meth:`capacity` is the cluster's current thread count, looked up at most every
    :data:`SIZE_REFRESH_S` seconds: workers that join during a run get games too, and no game
    waits in a worker's queue, where a worker that dies would take it down as well (Dask
    counts a death against every task a worker holds, run or not).

    The executor owns what :func:`open_cluster` set up for it (the client, a local cluster,
    the bot upload plugin) and releases it on :meth:`close`.
    """

    def __init__(self, client: Any, context: WorkerContext, *, cluster: Any = None,
                 plugin: Optional[str] = None) -> None:
        self.client = client
        self.context = context
        self.cluster = cluster
        self.plugin = plugin
        self._inner = client.get_executor(pure=False)
        self._size = (0, -SIZE_REFRESH_S)
        self._closed = False

    def capacity(self) -> int:
        """The number of worker threads in the cluster now (at least 1)."""
        threads, seen = self._size
        if time.monotonic() - seen >= SIZE_REFRESH_S:
            try:
                info = self.client.scheduler_info(n_workers=0)
                threads = int(info.get("total_threads", threads))
            except Exception:  # keep the last figure while the scheduler is unreachable
                pass
            self._size = (threads, time.monotonic())
        return max(1, threads)

    def submit(self, job: GameJob) -> Future[GameRecord]:
        """Play ``job`` on a worker; the future resolves on this side.

        :raises ClusterError: the client is closed (the scheduler went away).
        """
        if self.client.status in ("closing", "closed"):
            raise ClusterError("the Dask client is closed: the scheduler went away; finished "
                               "games are saved, run again to resume")
        key = f"game {job.slot.game_id} {uuid.uuid4().hex[:8]}"
        future: Future[GameRecord] = self._inner.submit(play_on_worker, job, self.context,
                                                        key=key)
        return future

    def is_lost(self, error: BaseException) -> bool:
        """See :func:`is_lost_game`."""
        return is_lost_game(error)

    def broken(self, error: BaseException) -> Optional[str]:
        """Never: a cluster that cannot go on fails :meth:`submit` instead."""
        return None

    def close(self, *, cancel: bool = True) -> None:
        """Stop submitting and release the cluster: remove the bot upload plugin, close the
        client and a local cluster (which ends the games still running there).  Games running
        on an existing cluster run to their end there, whatever ``cancel``: Dask cannot stop
        a running task.  Closing twice does nothing."""
        if self._closed:
            return
        self._closed = True
        self._inner.shutdown(wait=False)
        _release(self.client, self.cluster, self.plugin)


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
    try:
        try:
            facts = check_workers(client, address)
            shipped = None
            if config.executor.ship_bots:
                shipped, plugin = ship_bots(client, [b.path for b in config.bots])
        except OSError as e:  # the scheduler went away (TimeoutError is an OSError)
            raise ClusterError(f"lost the Dask scheduler at {address}: {e}") from None
        executor = DaskExecutor(client, WorkerContext(shipped, sys.executable,
                                                      quiet=cluster is not None),
                                cluster=cluster, plugin=plugin)
    except BaseException:
        _release(client, cluster, plugin)
        raise
    log.info("dask executor: scheduler %s, %d workers on %s; bots %s",
             client.scheduler.address, len(facts),
             ", ".join(sorted({f["host"] for f in facts.values()})),
             "shipped" if shipped else "at a shared path")
    return executor


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


def check_workers(client: Any, address: str) -> dict[str, dict[str, str]]:
    """Wait for a first worker, check that every worker imports the same arena, and warn
    about workers with more than one thread.  Returns each worker's facts.

    :raises ClusterError: no worker within :data:`WORKER_WAIT_S`, or a worker cannot run
        arena's code.
    """
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT_S)
    except TimeoutError:
        raise ClusterError(f"no worker joined the Dask scheduler at {address} within "
                           f"{WORKER_WAIT_S:.0f} s: start some with `dask worker {address} "
                           f"--nthreads 1` (see docs/CLUSTER.md)") from None
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


def ship_bots(client: Any, folders: Sequence[str]) -> tuple[ShippedBots, str]:
    """Upload the bot folders to every worker, present and future (Dask's ``UploadFile``
    worker plugin, under a name of our own so that it can be removed after the run).

    Returns the shipped bots and the plugin's name.
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
    return dataclasses.replace(shipped, data=b""), name


__all__ = ["ClusterError", "ClusterUnavailable", "DaskExecutor", "ShippedBots", "WorkerContext",
           "cluster_executor", "is_lost_game", "open_cluster", "pack_bots", "play_on_worker",
           "relocate", "require_distributed", "start_local_cluster", "unpack_bots"]
