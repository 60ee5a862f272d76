"""What the competition's library modules share: the typed errors, who is asking
(:class:`Viewer`), token hashing, the competition folder's layout, and :class:`State`: an
open competition folder (settings, database, sessions) that each part of
:class:`~arena.server.service.Competition` builds on.

A competition folder holds ``server.yaml`` (:mod:`arena.server.config`), ``secret`` (the key
of the forms' CSRF tokens), ``arena.db`` (unless the config names a database URL),
``uploads/`` (archives as received), ``bots/<id>/`` (each upload unpacked), ``checks/``
(the progress of the checks running now), ``live/`` (the games being played) and
``incoming/`` (uploads being unpacked, before they have an id).

**Private by default.**  Nobody but the server's user may read any of it: the folder and
its folders are 0700, its files 0600 (:func:`make_private`, at ``init`` and at every open,
which fixes and logs a looser mode).  Only each ``bots/<id>/`` stays readable by all (its
folders 0755, files 0644): as root, bots and builds run as an unprivileged uid, which the
sandbox lets through the closed folders to its own bot's folder alone (docs/SECURITY.md).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sqlite3
import stat
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Callable, Hashable, Iterator, Optional, TypeVar

from sqlalchemy import select

from arena.errors import ArenaError, ConfigError
from arena.server.config import CONFIG_FILE, load_server_config
from arena.server.db import (database_url, migrate, one_writer, open_engine,
                             session_factory)
from arena.server.live import LIVE

SECRET_FILE = "secret"
UPLOADS = "uploads"
BOTS = "bots"
#: the progress files of running checks (``<job id>.log``), written by the check's process
CHECKS = "checks"
#: uploads being unpacked, each in a folder of its own (:func:`arena.server.unpack.stage_upload`)
INCOMING = "incoming"
#: the folders of a competition folder that only the server reads (``bots/<id>`` inside
#: ``bots`` excepted: see :func:`make_private`)
PRIVATE_FOLDERS = (UPLOADS, BOTS, CHECKS, LIVE, INCOMING)
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
#: the largest id a row can have (SQLite and PostgreSQL integers are signed 64-bit)
MAX_ID = (1 << 63) - 1
#: results of the views kept per database version (beyond: the cache starts again)
CACHE_ENTRIES = 2048
#: seconds a request waits for another's computation of the same view before its own
FLIGHT_WAIT_S = 10.0
#: seconds a view may be kept after the judge's writes while it has games in flight
STALE_S = 1.0
#: what :meth:`State.peek` answers when nothing is kept
MISSING: Any = object()
T = TypeVar("T")


class NotFound(ArenaError):
    """No such bot, game or participant (or not one the viewer may know of)."""


class Forbidden(ArenaError):
    """The viewer may not do or see this."""


class Refused(ArenaError):
    """An upload was refused: archive, manifest, size or quota (HTTP 400)."""


class RateLimited(ArenaError):
    """Too many uploads (or test matches) in the last hour (HTTP 429)."""


class NotReady(ArenaError):
    """What was asked for does not exist yet: the final's standings before it is done."""


def hash_token(token: str) -> str:
    """The stored form of an access token (SHA-256: tokens are 256 random bits)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def valid_id(value: int) -> bool:
    """True when ``value`` can be a row's id (ids past 64 bits are nobody's)."""
    return 0 < value <= MAX_ID


@dataclass(frozen=True)
class Viewer:
    """Who is asking: a participant, or nobody (``id`` None)."""

    id: Optional[int] = None
    name: str = ""
    is_admin: bool = False

    @property
    def known(self) -> bool:
        return self.id is not None


ANONYMOUS = Viewer()
#: whoever runs ``arena server`` commands on the competition's machine (an admin)
OPERATOR = Viewer(name="(the server's operator)", is_admin=True)
#: the start of a revoked participant's stored token hash (no SHA-256 hex digest has it)
REVOKED = "revoked:"


log = logging.getLogger("arena.server")


def make_private(folder: Path) -> list[str]:
    """Close the competition ``folder`` to other users: the folder and its folders
    (:data:`PRIVATE_FOLDERS`) 0700, the files at its top (``arena.db`` and its journals,
    ``secret``, ``server.yaml``) and in ``uploads/``, ``checks/``, ``live/`` 0600.  Each
    ``bots/<id>`` keeps its modes (readable by all, for the sandbox's uids, and reached by
    nobody else through the closed ``bots/``).  Links are left alone.  Returns what was
    changed, as ``name 644 -> 600`` (also what could not be, as ``name 644: why``).
    """
    changed: list[str] = []

    def close(path: Path, mode: int, shown: str) -> None:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return  # gone meanwhile (a finished game's ply file)
        except OSError as e:
            changed.append(f"{shown}: {e.strerror}")
            return
        now = stat.S_IMODE(st.st_mode)
        if stat.S_ISLNK(st.st_mode) or not now & 0o077:
            return
        try:
            os.chmod(path, mode)
        except FileNotFoundError:
            return
        except OSError as e:
            changed.append(f"{shown} {now:o}: {e.strerror}")
            return
        changed.append(f"{shown} {now:o} -> {mode:o}")

    close(folder, 0o700, ".")
    try:
        top = list(os.scandir(folder))
    except OSError:
        return changed
    for entry in top:
        if entry.is_file(follow_symlinks=False):
            close(Path(entry.path), 0o600, entry.name)
        elif entry.name in PRIVATE_FOLDERS and entry.is_dir(follow_symlinks=False):
            close(Path(entry.path), 0o700, f"{entry.name}/")
            if entry.name in (BOTS, INCOMING):
                continue  # bots/<id> stay readable; incoming/ holds the same, unplaced
            try:
                inside = list(os.scandir(entry.path))
            except OSError:
                continue
            for item in inside:
                if item.is_file(follow_symlinks=False):
                    close(Path(item.path), 0o600, f"{entry.name}/{item.name}")
    return changed


def _report_private(folder: Path, changed: list[str]) -> None:
    """One warning line for what :func:`make_private` changed at an open."""
    if not changed:
        return
    shown = ", ".join(changed[:6]) + (f" and {len(changed) - 6} more" if len(changed) > 6
                                      else "")
    log.warning("the competition folder %s was open to other users: %s; made private "
                "(folders 0700, files 0600: docs/SECURITY.md)", folder, shown)


class _Flight:
    """One computation of a cached view that other requests wait for."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.ok = False
        self.value: Any = None


class State:
    """An open competition folder: its settings, secret, database and sessions, and the
    locks the parts share.  :class:`~arena.server.service.Competition` is this plus its
    parts (participants, uploads and the judge's queue, the ladder, the views)."""

    def __init__(self, folder: str | os.PathLike[str], *, db_url: Optional[str] = None) -> None:
        self.folder = Path(folder).resolve()
        if not (self.folder / CONFIG_FILE).is_file():
            raise ConfigError(f"{folder} is not a competition folder (no {CONFIG_FILE}): "
                              f"make one with 'arena server init {folder}'")
        _report_private(self.folder, make_private(self.folder))
        self.config = load_server_config(self.folder / CONFIG_FILE)
        self.secret = (self.folder / SECRET_FILE).read_text(encoding="utf-8").strip()
        self.engine = open_engine(database_url(self.folder, db_url or self.config.db_url))
        migrate(self.engine)
        self.sessions = session_factory(self.engine)
        #: guards the small in-memory state (upload attempts, the leaderboard's cache)
        self._board_lock = threading.Lock()
        self._claim_lock = threading.Lock()
        #: held for the short part of an upload (its transaction and files): on SQLite a
        #: refused upload's id is the next upload's, whose files must not be removed
        self._upload_lock = threading.Lock()
        self._board_fit = threading.Lock()
        #: each participant's recent upload attempts (monotonic times), refused ones too
        self._attempts: dict[int, list[float]] = {}
        self._board_cache: tuple[Any, Any] = (None, [])
        #: the views' results for the database's current version (:meth:`cached`)
        self._cache_lock = threading.Lock()
        #: key -> (database version, generation, monotonic time, result)
        self._cache: dict[Hashable, tuple[int, int, float, Any]] = {}
        #: bumped by :meth:`touch` (what people do through this library)
        self._generation = 0
        #: the first final's number once one was seen (uploads never reopen after it)
        self._final_seen = 0
        self._flights: dict[tuple[int, int, Hashable], _Flight] = {}
        #: games the judge of this process has handed out and not stored yet (it sets it)
        self.games_in_flight = 0
        self._version_lock = threading.Lock()
        self._version_db: Optional[sqlite3.Connection] = None
        if self.engine.dialect.name == "sqlite" and self.engine.url.database not in (
                None, "", ":memory:"):
            self._version_db = sqlite3.connect(str(self.engine.url.database),
                                               check_same_thread=False)

    @contextmanager
    def writing(self) -> Iterator[Any]:
        """A session in a write transaction, committed at the end (rolled back on an
        error), and the only writing one on the database meanwhile
        (:func:`~arena.server.db.one_writer`).  Every change goes through here."""
        with self.sessions.begin() as s:
            one_writer(s)
            yield s

    @contextmanager
    def changing(self) -> Iterator[Any]:
        """:meth:`writing`, for a change a person made (an upload, a retire, a new
        participant...): once it commits, every kept view is computed again (:meth:`touch`)."""
        with self.writing() as s:
            yield s
        self.touch()

    def close(self) -> None:
        """Release the database connections."""
        with self._version_lock:
            if self._version_db is not None:
                self._version_db.close()
                self._version_db = None
        self.engine.dispose()

    # ---- the views' cache ------------------------------------------------------------

    def data_version(self) -> Optional[int]:
        """A number that changes whenever anything is committed to the database, by any
        connection of any process (SQLite's ``PRAGMA data_version`` on a connection of its
        own that never writes); None where there is no such number (PostgreSQL)."""
        with self._version_lock:
            if self._version_db is None:
                return None
            row = self._version_db.execute("PRAGMA data_version").fetchone()
        return int(row[0])

    def cached(self, key: Hashable, compute: Callable[[], T], *, stale_ok: bool = True) -> T:
        """``compute()``, kept until the database changes (:meth:`data_version`): the
        pages read the same rows many times between two games.  The version is read before
        computing, so a result is never kept under a version newer than its rows; requests
        that miss at once wait for one computation (fifty visitors after a game ends cost
        one query, not fifty).

        While the judge of this process has games in flight (:attr:`games_in_flight`), a
        result younger than :data:`STALE_S` is kept even though the judge's writes changed
        the database (``stale_ok``): a finished game shows within a second, and the views
        are not computed again at every claim and every stored record.  Then too, while one
        request computes a view again, the others get the one kept (they do not all wait
        for it).  An action of a participant or an admin through this library
        (:meth:`touch`: an upload, a retire, a test match...) is seen at once, and with no
        game in flight every result is exact.  Without a version (PostgreSQL) every call
        computes.  Callers must not change the result."""
        version = self.data_version()
        if version is None:
            return compute()
        now = time.monotonic()
        with self._cache_lock:
            hit = self._kept(key, version, now, stale_ok)
            if hit is not MISSING:
                found: T = hit
                return found
            generation = self._generation
            flight = self._flights.get((version, generation, key))
            leader = flight is None
            if flight is None:
                flight = self._flights[(version, generation, key)] = _Flight()
        if not leader:
            if flight.done.wait(FLIGHT_WAIT_S) and flight.ok:
                shared: T = flight.value
                return shared
            return compute()  # the computation failed (or is slow): on our own
        try:
            value = compute()
            flight.value, flight.ok = value, True
        finally:
            with self._cache_lock:
                del self._flights[(version, generation, key)]
                old = self._cache.get(key)
                if flight.ok and (old is None or (old[1], old[0]) <= (generation, version)):
                    if len(self._cache) >= CACHE_ENTRIES:
                        self._cache = {}
                    self._cache[key] = (version, generation, now, value)
            flight.done.set()
        return value

    def peek(self, key: Hashable, *, stale_ok: bool = True) -> Any:
        """What :meth:`cached` would answer for ``key`` without computing anything (one
        read of the data version, no waiting): the kept value, or :data:`MISSING` (the
        event loop answers a kept view itself and leaves a miss to a worker thread)."""
        version = self.data_version()
        if version is None:
            return MISSING
        with self._cache_lock:
            return self._kept(key, version, time.monotonic(), stale_ok)

    def _kept(self, key: Hashable, version: int, now: float, stale_ok: bool) -> Any:
        """The value kept for ``key`` that may answer now, or :data:`MISSING` (the caller
        holds ``_cache_lock``)."""
        entry = self._cache.get(key)
        if entry is None or entry[1] != self._generation:
            return MISSING
        if entry[0] == version or (stale_ok and self.games_in_flight and (
                now - entry[2] < STALE_S or any(k == key for _, _, k in self._flights))):
            return entry[3]
        return MISSING

    def touch(self) -> None:
        """Something a person did changed the database: every kept view is computed again
        at its next call (:meth:`cached` keeps none of them for a moment longer)."""
        with self._cache_lock:
            self._generation += 1

    def uncache(self, key: Hashable) -> None:
        """Forget ``key``'s kept result (it is computed again at the next call)."""
        with self._cache_lock:
            self._cache.pop(key, None)

    # ---- the deadline ----------------------------------------------------------------

    def deadline_passed(self, now: Optional[datetime] = None) -> bool:
        """Whether the settings' ``deadline`` has come (never without one)."""
        deadline = self.config.deadline
        return deadline is not None and (now or datetime.now(timezone.utc)) >= deadline

    def uploads_closed(self, now: Optional[datetime] = None) -> bool:
        """Whether uploads are closed and the ladder is over: the deadline has come, or a
        final was played (a deadline moved later afterwards never reopens them)."""
        return bool(self.closed_because(now))

    def closed_because(self, now: Optional[datetime] = None) -> str:
        """Why uploads are closed, in words ("" while they are open)."""
        if self.deadline_passed(now):
            return (f"uploads closed at the deadline, {self.deadline_text()}: the final "
                    f"round robin plays the bots uploaded before it")
        if not self._final_seen:
            from arena.server.models import Final

            with self.sessions() as s:
                first = s.scalars(select(Final).order_by(Final.id).limit(1)).first()
            if first is None:
                return ""
            self._final_seen = first.id
        return (f"uploads closed when final {self._final_seen} started; they do not reopen "
                f"when the deadline is moved (a new final among the same entries: "
                f"arena server final --rerun)")

    def deadline_text(self) -> str:
        """The deadline as the settings give it (ISO 8601 with its offset), or ""."""
        return "" if self.config.deadline is None else self.config.deadline.isoformat()

    def deadline_shown(self) -> str:
        """The deadline for people: ``Tue 15 Dec 2026, 18:00 UTC+01:00``, or ""."""
        d = self.config.deadline
        if d is None:
            return ""
        offset = d.isoformat()[-6:] if d.utcoffset() else ""
        clock = f"{d:%H:%M:%S}" if d.second or d.microsecond else f"{d:%H:%M}"
        return f"{d:%a} {d.day} {d:%b %Y}, {clock} UTC{offset}"

    def may_see_private(self, viewer: Viewer, owner_id: int) -> bool:
        """The owner and admins see logs and stderr."""
        return viewer.is_admin or (viewer.known and viewer.id == owner_id)

    def public_text(self, text: str) -> str:
        """``text`` without the competition folder's path (records, logs, messages that a
        participant reads): shown as ``<competition>``."""
        return text.replace(str(self.folder), "<competition>")
