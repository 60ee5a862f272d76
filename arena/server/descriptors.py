"""The server's file descriptors: how many it may use, what it keeps for itself, and what it
does when they run out.

Every connection, live stream included, is a descriptor of the server process; so are the
database's files, the judge's pipes and the listening socket.  At the common soft limit of
1,024, a thousand live streams from one client used to take them all: ``accept()`` failed
with EMFILE (asyncio then logged a traceback for each of up to 2,048 attempts a second),
SQLite could not open its file, pages timed out.  So:

* :func:`raise_open_files` lifts the soft ``RLIMIT_NOFILE`` to the hard one (at most
  :data:`RAISED_AT_MOST`) when the server starts;
* :func:`budget_for` sizes the live streams and the connections open at once from that
  limit, after a reserve for the database, the judge and the rest (:class:`Budget`);
* :class:`SheddingSocket` is the listening socket: beyond the budget of connections, and
  when ``accept()`` fails for want of descriptors (it frees a spare one for that), it
  accepts the waiting connection, answers it ``503`` and closes it, instead of letting
  clients take the reserve or hang in the backlog;
* :data:`THROTTLE` logs each kind of trouble once per :data:`LOG_EVERY_S` seconds with a
  count (:class:`Throttle`), never a traceback per request; :func:`quiet_logs` routes
  asyncio's, uvicorn's and the judge's own lines about it there.
"""

from __future__ import annotations

import errno
import logging
import os
import resource
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from arena.errors import ConfigError

log = logging.getLogger("arena.server.descriptors")

#: the soft limit is raised to the hard one, but not beyond this (the judge's workers and
#: the bots inherit it; programs that close every descriptor up to the limit at start slow
#: down with a million)
RAISED_AT_MOST = 65536
#: descriptors kept for the database: SQLite's pool holds up to 48 connections (8 kept,
#: 40 more at busy times: :func:`arena.server.db.open_engine`), each up to 3 files (the
#: database, its WAL and its shared memory)
DATABASE_FDS = 160
#: descriptors kept for each of the judge's processes (game workers, checks): pipes,
#: sentinels, the pool's queues
PER_PROCESS_FDS = 16
#: descriptors kept for the rest: the listening socket, the event loop, logs, libraries
BASE_FDS = 64
#: live streams at most, however high the limit (each also costs a poll every half second)
MAX_STREAMS = 1000
#: the least the budget gives, however low the limit
MIN_STREAMS, MIN_CONNECTIONS = 8, 32
#: seconds between two log lines of one kind of trouble
LOG_EVERY_S = 10.0
#: connections answered 503 by one accept() call before the event loop gets a turn
_SHED_AT_ONCE = 64
_EXHAUSTED = (errno.EMFILE, errno.ENFILE)
_SHED_BODY = b"the server is busy: try again in a few seconds\n"
_SHED_ANSWER = (b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\n"
                b"Content-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n"
                b"X-Frame-Options: DENY\r\nX-Content-Type-Options: nosniff\r\n"
                b"Referrer-Policy: same-origin\r\nContent-Security-Policy: default-src 'none'"
                b"\r\nConnection: close\r\n\r\n%s" % (len(_SHED_BODY), _SHED_BODY))


def raise_open_files(at_most: int = RAISED_AT_MOST) -> int:
    """Raise the soft ``RLIMIT_NOFILE`` to the hard one (at most ``at_most``; never
    lowered) and return the soft limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    ceiling = at_most if hard == resource.RLIM_INFINITY else min(hard, at_most)
    if soft != resource.RLIM_INFINITY and soft < ceiling:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))
            soft = ceiling
        except (ValueError, OSError):  # a container may refuse it: keep what there is
            pass
    return int(soft) if soft != resource.RLIM_INFINITY else at_most


@dataclass(frozen=True)
class Budget:
    """What the server lets its visitors hold, from its soft descriptor limit."""

    #: the soft ``RLIMIT_NOFILE`` the budget is made from
    soft: int
    #: descriptors kept for the server itself (:func:`budget_for`)
    reserve: int
    #: live streams open at once, all clients together
    streams: int
    #: connections open at once, live streams included (beyond: 503 at ``accept()``)
    connections: int


def budget_for(soft: int, processes: int) -> Budget:
    """The budget at soft limit ``soft`` with ``processes`` judge processes (game workers
    and checkers): ``reserve = 160 + 16 x processes + 64``; of the rest, a quarter for the
    live streams (at most :data:`MAX_STREAMS`) and a half for the connections (which
    include the streams); the other quarter is the margin.  At 1,024 with the default two
    workers and two checkers: reserve 288, 184 streams, 368 connections."""
    reserve = DATABASE_FDS + PER_PROCESS_FDS * max(0, processes) + BASE_FDS
    free = max(0, soft - reserve)
    return Budget(soft=soft, reserve=reserve,
                  streams=max(MIN_STREAMS, min(MAX_STREAMS, free // 4)),
                  connections=max(MIN_CONNECTIONS, free // 2))


def is_exhaustion(error: BaseException) -> bool:
    """Whether ``error`` (or what caused it, or one of its group) is a lack of
    descriptors: EMFILE or ENFILE, or SQLite's "unable to open database file"."""
    todo, seen = [error], set()
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in _EXHAUSTED:
            return True
        if type(e).__name__ == "OperationalError" and "unable to open database file" in str(e):
            return True
        if isinstance(e, BaseExceptionGroup):
            todo.extend(e.exceptions)
        todo.extend(x for x in (e.__cause__, e.__context__) if x is not None)
    return False


class Throttle:
    """Log lines of trouble that may come by the thousand: the first of each kind at once,
    then at most one per ``every`` seconds, with the count since the line before."""

    def __init__(self, logger: logging.Logger, every: float = LOG_EVERY_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.logger, self.every, self.clock = logger, every, clock
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._last: dict[str, float] = {}
        #: every event noted, by kind (for tests and the curious)
        self.totals: dict[str, int] = {}

    def note(self, kind: str, detail: str = "") -> None:
        """One event of ``kind`` (``detail``: the latest one's words)."""
        with self._lock:
            now = self.clock()
            self._counts[kind] = self._counts.get(kind, 0) + 1
            self.totals[kind] = self.totals.get(kind, 0) + 1
            last = self._last.get(kind)
            if last is not None and now - last < self.every:
                return
            count, self._counts[kind], self._last[kind] = self._counts[kind], 0, now
        since = "" if last is None else f" in the last {now - last:.0f} s"
        self.logger.warning("%s: %d time%s%s%s", kind, count, "" if count == 1 else "s", since,
                            f" (latest: {detail})" if detail else "")

    def flush(self) -> None:
        """Log what was counted since each kind's last line (the server stops)."""
        with self._lock:
            pending = {k: n for k, n in self._counts.items() if n}
            self._counts.clear()
        for kind, count in pending.items():
            self.logger.warning("%s: %d more time%s", kind, count, "" if count == 1 else "s")


#: the server's throttled log of descriptor trouble
THROTTLE = Throttle(log)
_SHED = "connections answered 503 at accept(): the server is out of descriptors"
_FULL = "connections answered 503 at accept(): the server holds its budget of connections"
_WAITING = "accept() failed: the server is out of descriptors (no spare left)"


class SheddingSocket(socket.socket):
    """A listening socket that keeps the server's descriptors for what it must do.

    * It counts the connections it has accepted and that are still open (each closes
      through :class:`_Connection`); at ``connections`` (:attr:`Budget.connections`; None:
      no limit) a new one is accepted, answered ``503`` with ``Retry-After`` and closed at
      once, so idle or slow clients cannot take the descriptors that the database and the
      judge need.  (uvicorn's ``limit_concurrency`` counts connections only once they are
      accepted, a whole backlog per turn of the loop, and never closes an idle one.)
    * When ``accept()`` fails for want of descriptors (EMFILE, ENFILE: the system's, or
      the process's spent elsewhere) it closes a spare one (``/dev/null``), accepts the
      waiting connection with it, answers it ``503`` and opens the spare again.  asyncio
      would otherwise log a traceback for each failed attempt, up to the backlog's 2,048
      a second, while the clients waited unanswered.  Without a spare (another thread
      took it) the error goes to asyncio once, which stops listening for a second.

    Each 503 is counted in :data:`THROTTLE` (one log line per 10 s)."""

    def __init__(self, family: int, connections: Optional[int] = None) -> None:
        super().__init__(family, socket.SOCK_STREAM)
        self.connections = connections
        #: connections accepted and not yet closed
        self.open = 0
        self._count = threading.Lock()
        self._spare: Optional[int] = None
        self._paused = False
        self._respare()

    def _respare(self) -> None:
        if self._spare is None:
            try:
                self._spare = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                self._spare = None

    def accept(self) -> tuple[socket.socket, Any]:
        if self._paused:  # asyncio stopped listening after our error: end its loop
            self._paused = False
            raise BlockingIOError(errno.EAGAIN, "paused")
        for _ in range(_SHED_AT_ONCE):
            try:
                fd, address = self._accept()  # type: ignore[attr-defined]
            except OSError as e:
                if e.errno not in _EXHAUSTED:
                    raise
                self._respare()
                if self._spare is None:
                    self._paused = True
                    THROTTLE.note(_WAITING, str(e))
                    raise
                self._shed_on_spare()
                continue
            with self._count:
                full = self.connections is not None and self.open >= self.connections
                if not full:
                    self.open += 1
            if full:
                _answer_busy(fd)
                THROTTLE.note(_FULL, f"{self.connections} open")
                continue
            conn = _Connection(self, self.family, self.type, self.proto, fileno=fd)
            if socket.getdefaulttimeout() is None and self.gettimeout():
                conn.setblocking(True)  # as socket.accept does
            return conn, address
        raise BlockingIOError(errno.EAGAIN, "the rest on the event loop's next turn")

    def _closed_one(self) -> None:
        with self._count:
            self.open -= 1

    def _shed_on_spare(self) -> None:
        """Accept one connection on the spare descriptor and answer it 503."""
        assert self._spare is not None
        os.close(self._spare)
        self._spare = None
        try:
            fd, _ = self._accept()  # type: ignore[attr-defined]
        except OSError:
            self._respare()
            raise
        _answer_busy(fd)
        self._respare()
        THROTTLE.note(_SHED, os.strerror(errno.EMFILE))

    def close(self) -> None:
        if self._spare is not None:
            os.close(self._spare)
            self._spare = None
        super().close()


class _Connection(socket.socket):
    """An accepted connection that tells its :class:`SheddingSocket` when it closes
    (asyncio closes it when the connection is lost; a lost object closes when collected)."""

    def __init__(self, listener: SheddingSocket, family: int, kind: int, proto: int,
                 fileno: int) -> None:
        super().__init__(family, kind, proto, fileno)
        self._listener: Optional[SheddingSocket] = listener

    def _release(self) -> None:
        listener, self._listener = getattr(self, "_listener", None), None
        if listener is not None:
            listener._closed_one()

    def close(self) -> None:
        self._release()
        super().close()

    def detach(self) -> int:
        self._release()
        return super().detach()

    def __del__(self) -> None:
        self._release()


def _answer_busy(fd: int) -> None:
    """Answer the connection of ``fd`` 503 (what came of its request read first: closing
    on unread data would reset it) and close it."""
    conn = socket.socket(fileno=fd)
    try:
        conn.setblocking(False)
        try:
            conn.recv(65536)
        except OSError:
            pass
        conn.send(_SHED_ANSWER)
        conn.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    finally:
        conn.close()


def listening_socket(host: str, port: int, connections: Optional[int] = None,
                     backlog: int = 2048) -> SheddingSocket:
    """A :class:`SheddingSocket` bound to ``host``:``port`` (IPv6 when ``host`` has a
    colon, as uvicorn does), answering 503 beyond ``connections`` open at once.

    :raises ConfigError: the address cannot be listened on (in use, not this machine's).
    """
    sock = SheddingSocket(socket.AF_INET6 if ":" in host else socket.AF_INET, connections)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError as e:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    return sock


class _Quiet(logging.Filter):
    """Turns asyncio's, uvicorn's and the judge's lines about exhausted descriptors into
    :data:`THROTTLE`'s counts."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        error = record.exc_info[1] if record.exc_info else None
        if error is not None and is_exhaustion(error):
            THROTTLE.note("out of descriptors", f"{message}: {error}")
            return False
        return True


def quiet_logs() -> None:
    """Throttle what asyncio, uvicorn and the judge log about exhausted descriptors (call
    it after uvicorn has set up its loggers)."""
    quiet = _Quiet()
    for name in ("asyncio", "uvicorn.error", "arena.server.judge"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _Quiet) for f in logger.filters):
            logger.addFilter(quiet)
