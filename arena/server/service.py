"""The competition as a library: what the CLI, the JSON API, the pages and the judge call.

:class:`Competition` opens a competition folder (:class:`~arena.server.common.State`:
settings, database, uploaded bots) and is made of one part per concern, each a module:

* :mod:`arena.server.participants`: participants and their tokens;
* :mod:`arena.server.uploads`: uploads, the judge's queue of checks (fair share, stopping,
  verdicts) and the disk the uploads keep;
* :mod:`arena.server.ladder`: the ladder's games and the leaderboard;
* :mod:`arena.server.final`: the deadline, the finals, entries and the results;
* :mod:`arena.server.overview`: the admins' overview of uploads, refusals and similar code;
* :mod:`arena.server.matches`: unrated test matches asked for by participants;
* :mod:`arena.server.views`: what the pages and the API show, with the access rules.

Every view is plain data (dicts), the same for the API and the pages; access rules live in
the library, once.  The names the web layer and the CLI use are importable from here.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any, Optional

from sqlalchemy import func, select

from arena.errors import ConfigError
from arena.server.common import (ANONYMOUS, BOTS, CHECKS, OPERATOR, REVOKED, SECRET_FILE,
                                 UPLOADS, Forbidden, NotFound, NotReady, RateLimited, Refused,
                                 Viewer, hash_token, make_private)
from arena.server.config import CONFIG_FILE, ServerConfig
from arena.server.db import database_url, migrate, open_engine
from arena.server.final import RESULT_COLUMNS
from arena.server.ladder import MAX_ATTEMPTS
from arena.server.matches import Matches
from arena.server.overview import Overview
from arena.server.models import Bot, Game, Setting
from arena.server.participants import Participants
from arena.server.unpack import remove_stale_incoming
from arena.server.uploads import ATTEMPTS_PER_UPLOAD, MAX_CHECK_ATTEMPTS, Uploads
from arena.server.views import Views

__all__ = ["Competition", "init_competition", "ANONYMOUS", "OPERATOR", "REVOKED", "Viewer",
           "NotFound", "Forbidden", "Refused", "RateLimited", "NotReady", "hash_token",
           "MAX_ATTEMPTS", "MAX_CHECK_ATTEMPTS", "ATTEMPTS_PER_UPLOAD", "RESULT_COLUMNS"]


def init_competition(folder: str | os.PathLike[str],
                     config: Optional[ServerConfig] = None) -> Path:
    """Make a new competition in ``folder`` (created; an existing competition is refused)
    with ``config`` (None: the defaults).  The folder is private
    (:func:`~arena.server.common.make_private`: 0700, its files 0600).

    :raises ConfigError: the folder already holds a competition.
    """
    import yaml

    out = Path(folder)
    if (out / CONFIG_FILE).exists():
        raise ConfigError(f"{out} already holds a competition ({CONFIG_FILE} exists)")
    if config is None:
        config = ServerConfig()
    out.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(out, 0o700)
    for sub in (UPLOADS, BOTS, CHECKS):
        (out / sub).mkdir(mode=0o700, exist_ok=True)
    for name, text in ((SECRET_FILE, secrets.token_hex(32)),
                       (CONFIG_FILE, yaml.safe_dump(config.to_dict(), sort_keys=False))):
        fd = os.open(out / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
    engine = open_engine(database_url(out, config.db_url))
    try:
        migrate(engine)
    finally:
        engine.dispose()
    make_private(out)  # arena.db: SQLite made it as the umask said
    return out


class Competition(Participants, Uploads, Overview, Matches, Views):
    """An open competition folder (see the module's docstring)."""

    def __init__(self, folder: str | os.PathLike[str], *, db_url: Optional[str] = None) -> None:
        super().__init__(folder, db_url=db_url)
        (self.folder / CHECKS).mkdir(mode=0o700, exist_ok=True)
        remove_stale_incoming(self.folder)  # uploads a killed server was unpacking

    def set_paused(self, paused: bool, viewer: Viewer) -> None:
        """Pause or resume the judge (admins).  :raises Forbidden:"""
        if not viewer.is_admin:
            raise Forbidden("only admins may pause the judge")
        with self.changing() as s:
            s.merge(Setting(key="paused", value="1" if paused else ""))

    def paused(self) -> bool:
        """Whether an admin paused the judge."""
        with self.sessions() as s:
            setting = s.get(Setting, "paused")
            return bool(setting and setting.value)

    def status(self) -> dict[str, Any]:
        """Counts for the pages and the tests: bots by status, games by status, paused
        (kept until the database changes; always exact)."""
        return self.cached("status", self._status, stale_ok=False)

    def _status(self) -> dict[str, Any]:
        with self.sessions() as s:
            bots = dict(s.execute(select(Bot.status, func.count()).group_by(Bot.status)).all())
            games = dict(s.execute(select(Game.status, func.count())
                                   .group_by(Game.status)).all())
        return {"bots": bots, "games": games, "paused": self.paused()}
