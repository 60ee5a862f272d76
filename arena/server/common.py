"""What the competition's library modules share: the typed errors, who is asking
(:class:`Viewer`), token hashing, the competition folder's layout, and :class:`State`: an
open competition folder (settings, database, sessions) that each part of
:class:`~arena.server.service.Competition` builds on.

A competition folder holds ``server.yaml`` (:mod:`arena.server.config`), ``secret`` (the key
of the forms' CSRF tokens), ``arena.db`` (unless the config names a database URL),
``uploads/`` (archives as received), ``bots/<id>/`` (each upload unpacked), ``checks/``
(the progress of the checks running now) and ``live/`` (the games being played).
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from arena.errors import ArenaError, ConfigError
from arena.server.config import CONFIG_FILE, load_server_config
from arena.server.db import database_url, migrate, open_engine, session_factory

SECRET_FILE = "secret"
UPLOADS = "uploads"
BOTS = "bots"
#: the progress files of running checks (``<job id>.log``), written by the check's process
CHECKS = "checks"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
#: the largest id a row can have (SQLite and PostgreSQL integers are signed 64-bit)
MAX_ID = (1 << 63) - 1


class NotFound(ArenaError):
    """No such bot, game or participant (or not one the viewer may know of)."""


class Forbidden(ArenaError):
    """The viewer may not do or see this."""


class Refused(ArenaError):
    """An upload was refused: archive, manifest, size or quota (HTTP 400)."""


class RateLimited(ArenaError):
    """Too many uploads in the last hour (HTTP 429)."""


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


class State:
    """An open competition folder: its settings, secret, database and sessions, and the
    locks the parts share.  :class:`~arena.server.service.Competition` is this plus its
    parts (participants, uploads and the judge's queue, the ladder, the views)."""

    def __init__(self, folder: str | os.PathLike[str], *, db_url: Optional[str] = None) -> None:
        self.folder = Path(folder).resolve()
        if not (self.folder / CONFIG_FILE).is_file():
            raise ConfigError(f"{folder} is not a competition folder (no {CONFIG_FILE}): "
                              f"make one with 'arena server init {folder}'")
        self.config = load_server_config(self.folder / CONFIG_FILE)
        self.secret = (self.folder / SECRET_FILE).read_text(encoding="utf-8").strip()
        self.engine = open_engine(database_url(self.folder, db_url or self.config.db_url))
        migrate(self.engine)
        self.sessions = session_factory(self.engine)
        #: guards the small in-memory state (upload attempts, the leaderboard's cache)
        self._board_lock = threading.Lock()
        self._claim_lock = threading.Lock()
        self._board_fit = threading.Lock()
        #: each participant's recent upload attempts (monotonic times), refused ones too
        self._attempts: dict[int, list[float]] = {}
        self._board_cache: tuple[Any, list[dict[str, Any]]] = (None, [])

    def close(self) -> None:
        """Release the database connections."""
        self.engine.dispose()

    def may_see_private(self, viewer: Viewer, owner_id: int) -> bool:
        """The owner and admins see logs and stderr."""
        return viewer.is_admin or (viewer.known and viewer.id == owner_id)

    def public_text(self, text: str) -> str:
        """``text`` without the competition folder's path (records, logs, messages that a
        participant reads): shown as ``<competition>``."""
        return text.replace(str(self.folder), "<competition>")
