"""The competition as a library: what the CLI, the JSON API, the pages and the judge call.

:class:`Competition` opens a competition folder (settings, database, uploaded bots) and
offers participants, uploads, views of bots, games and the leaderboard, the admin's actions,
and the judge's queue operations.  Every view is plain data (dicts), the same for the API and
the pages; access rules live here, once: a bot's check log and its games' stderr go to its
owner and admins only.

A competition folder holds ``server.yaml`` (:mod:`arena.server.config`), ``secret`` (the key
of the forms' CSRF tokens), ``arena.db`` (unless the config names a database URL),
``uploads/`` (archives as received) and ``bots/<id>/`` (each upload unpacked).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, Optional, Sequence

from sqlalchemy import CursorResult, delete, func, or_, select, update
from sqlalchemy.orm import joinedload

from arena.errors import ArenaError, ConfigError
from arena.records import GameRecord
from arena.server.config import CONFIG_FILE, ServerConfig, load_server_config
from arena.server.db import database_url, migrate, open_engine, session_factory
from arena.server.models import Bot, Game, Job, Setting, User, utcnow
from arena.server.unpack import UnpackError, safe_unpack

SECRET_FILE = "secret"
UPLOADS = "uploads"
BOTS = "bots"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
#: attempts of a game whose executor keeps failing before it is given up
MAX_ATTEMPTS = 3
#: upload attempts (refused ones included) a participant may make per upload allowed
ATTEMPTS_PER_UPLOAD = 3


class NotFound(ArenaError):
    """No such bot, game or participant (or not one the viewer may know of)."""


class Forbidden(ArenaError):
    """The viewer may not do or see this."""


class Refused(ArenaError):
    """An upload was refused: archive, manifest or size (HTTP 400)."""


class RateLimited(ArenaError):
    """Too many uploads in the last hour (HTTP 429)."""


def hash_token(token: str) -> str:
    """The stored form of an access token (SHA-256: tokens are 256 random bits)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


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


def init_competition(folder: str | os.PathLike[str],
                     config: Optional[ServerConfig] = None) -> Path:
    """Make a new competition in ``folder`` (created; an existing competition is refused)
    with ``config`` (None: the defaults).

    :raises ConfigError: the folder already holds a competition.
    """
    import yaml

    out = Path(folder)
    if (out / CONFIG_FILE).exists():
        raise ConfigError(f"{out} already holds a competition ({CONFIG_FILE} exists)")
    if config is None:
        config = ServerConfig()
    out.mkdir(parents=True, exist_ok=True)
    (out / UPLOADS).mkdir(exist_ok=True)
    (out / BOTS).mkdir(exist_ok=True)
    fd = os.open(out / SECRET_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_hex(32))
    (out / CONFIG_FILE).write_text(yaml.safe_dump(config.to_dict(), sort_keys=False),
                                   encoding="utf-8")
    engine = open_engine(database_url(out, config.db_url))
    try:
        migrate(engine)
    finally:
        engine.dispose()
    return out


class Competition:
    """An open competition folder (see the module's docstring)."""

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
        self._board_lock = threading.Lock()
        self._claim_lock = threading.Lock()
        self._board_fit = threading.Lock()
        #: each participant's recent upload attempts (monotonic times), refused ones too
        self._attempts: dict[int, list[float]] = {}
        self._board_cache: tuple[Any, list[dict[str, Any]]] = (None, [])

    def close(self) -> None:
        """Release the database connections."""
        self.engine.dispose()

    # ---- participants --------------------------------------------------------------

    def add_user(self, name: str, *, admin: bool = False) -> str:
        """Add a participant; returns their new access token (only its hash is kept).

        :raises ConfigError: a bad or taken name.
        """
        if not _NAME_RE.match(name):
            raise ConfigError(f"a participant's name is 1..64 letters, digits, '.', '_' or "
                              f"'-', got {name[:70]!r}")
        token = secrets.token_urlsafe(32)
        with self.sessions.begin() as s:
            if s.scalar(select(User).where(User.name == name)) is not None:
                raise ConfigError(f"participant {name!r} exists already")
            s.add(User(name=name, token_hash=hash_token(token), is_admin=admin))
        return token

    def authenticate(self, token: Optional[str]) -> Viewer:
        """The participant whose token this is, or :data:`ANONYMOUS`."""
        if not token or len(token) > 200:
            return ANONYMOUS
        with self.sessions() as s:
            user = s.scalar(select(User).where(User.token_hash == hash_token(token)))
            if user is None:
                return ANONYMOUS
            return Viewer(user.id, user.name, user.is_admin)

    def new_token(self, user: int | str, viewer: Viewer) -> str:
        """Give a participant (by id or name) a new access token, revoking the old one at
        once (its API calls get 401, its pages log out).  Returns the new token.

        :raises Forbidden: the viewer is not an admin.
        :raises NotFound: no such participant.
        """
        token = secrets.token_urlsafe(32)
        self._set_token_hash(user, viewer, hash_token(token))
        return token

    def revoke_token(self, user: int | str, viewer: Viewer) -> None:
        """Revoke a participant's token (by id or name) without giving a new one: they can
        no longer log in or call the API until an admin gives them a :meth:`new_token`.

        :raises Forbidden, NotFound:
        """
        self._set_token_hash(user, viewer, REVOKED + secrets.token_hex(16))

    def _set_token_hash(self, user: int | str, viewer: Viewer, token_hash: str) -> None:
        if not viewer.is_admin:
            raise Forbidden("only admins may change a participant's token")
        with self.sessions.begin() as s:
            found = s.scalar(select(User).where(
                User.id == user if isinstance(user, int) else User.name == user))
            if found is None:
                raise NotFound(f"no participant {user!r}")
            found.token_hash = token_hash

    def users(self) -> list[dict[str, Any]]:
        """Every participant with their number of uploads and whether their token is
        revoked (for the admin page)."""
        with self.sessions() as s:
            rows = s.execute(select(User.id, User.name, User.is_admin, User.token_hash,
                                    func.count(Bot.id))
                             .outerjoin(Bot, Bot.owner_id == User.id)
                             .group_by(User.id).order_by(User.name)).all()
        return [{"id": i, "name": n, "admin": a, "revoked": h.startswith(REVOKED),
                 "uploads": c} for i, n, a, h, c in rows]

    def csrf_token(self, viewer: Viewer) -> str:
        """The token a participant's forms carry (an HMAC of their id with the secret)."""
        return hmac.new(self.secret.encode(), f"csrf:{viewer.id}".encode(),
                        hashlib.sha256).hexdigest()

    def check_csrf(self, viewer: Viewer, token: Optional[str]) -> None:
        """:raises Forbidden: ``token`` is not this participant's form token."""
        if not viewer.known or not token or not hmac.compare_digest(
                token, self.csrf_token(viewer)):
            raise Forbidden("the form's security token is missing or wrong: reload the page")

    # ---- uploads -------------------------------------------------------------------

    def submit(self, viewer: Viewer, filename: str, data: bytes) -> dict[str, Any]:
        """Take an upload: unpack it safely into ``bots/<id>``, read its ``bot.yaml``,
        queue its check.  Returns ``{"id", "status": "checking"}``.

        :raises Forbidden: nobody is logged in.
        :raises RateLimited: the participant's uploads in the last hour reached the limit.
        :raises Refused: too big, a refused archive, or a bad ``bot.yaml``.
        """
        from arena.manifest import load_bot

        if not viewer.known:
            raise Forbidden("log in to upload a bot")
        limits = self.config.upload
        self._count_attempt(viewer)
        if len(data) > limits.max_bytes:
            raise Refused(f"the archive has {len(data)} bytes, over the limit of "
                          f"{limits.max_bytes}")
        lower = filename.lower()
        if not lower.endswith((".zip", ".tar.gz", ".tgz")):
            raise Refused("upload a .zip or .tar.gz archive of the bot's folder")
        with self.sessions.begin() as s:
            since = utcnow() - timedelta(hours=1)
            recent = s.scalar(select(func.count(Bot.id)).where(
                Bot.owner_id == viewer.id, Bot.created_at >= since)) or 0
            if recent >= limits.per_hour and not viewer.is_admin:
                raise RateLimited(f"at most {limits.per_hour} uploads an hour: try later")
            bot = Bot(owner_id=viewer.id, name="", version=0, status="checking",
                      sha256=hashlib.sha256(data).hexdigest())
            s.add(bot)
            s.flush()
            bot_id = bot.id
            suffix = ".zip" if lower.endswith(".zip") else ".tar.gz"
            archive = self.folder / UPLOADS / f"{bot_id}{suffix}"
            archive.write_bytes(data)
            target = self.folder / BOTS / str(bot_id)
            try:
                root = safe_unpack(archive, target, max_bytes=limits.max_unpacked_bytes,
                                   max_files=limits.max_files)
                spec = load_bot(root)
            except (UnpackError, ConfigError) as e:
                archive.unlink(missing_ok=True)
                shutil.rmtree(target, ignore_errors=True)
                raise Refused(str(e).replace(str(target), "<bot>")) from None
            name = spec.name if _NAME_RE.match(spec.name) else re.sub(
                r"[^A-Za-z0-9._-]", "-", spec.name)[:64].strip("-._") or "bot"
            last = s.scalar(select(func.max(Bot.version)).where(
                Bot.owner_id == viewer.id, Bot.name == name)) or 0
            bot.name, bot.version = name, last + 1
            bot.folder = str(root.relative_to(self.folder))
            s.add(Job(kind="check", bot_id=bot_id))
        return {"id": bot_id, "status": "checking"}

    def _count_attempt(self, viewer: Viewer) -> None:
        """Refused uploads cost unpacking too: at most :data:`ATTEMPTS_PER_UPLOAD` times
        ``per_hour`` attempts an hour (in memory: a restart forgets them).

        :raises RateLimited:"""
        if viewer.is_admin or viewer.id is None:
            return
        now = time.monotonic()
        with self._board_lock:
            recent = [t for t in self._attempts.get(viewer.id, []) if now - t < 3600]
            if len(recent) >= ATTEMPTS_PER_UPLOAD * self.config.upload.per_hour:
                raise RateLimited("too many upload attempts in the last hour: try later")
            recent.append(now)
            self._attempts[viewer.id] = recent

    # ---- views ---------------------------------------------------------------------

    def _bot(self, s: Any, bot_id: int) -> Bot:
        bot = s.get(Bot, bot_id)
        if bot is None:
            raise NotFound(f"no bot {bot_id}")
        return bot

    def may_see_private(self, viewer: Viewer, owner_id: int) -> bool:
        """The owner and admins see logs and stderr."""
        return viewer.is_admin or (viewer.known and viewer.id == owner_id)

    def bot_view(self, bot_id: int, viewer: Viewer, *, private: bool = True) -> dict[str, Any]:
        """A bot: public facts, its games; with its verdict and check log for its owner and
        admins.  ``private``: the caller wants the owner's view (the API): anyone else gets
        :class:`Forbidden`.

        :raises NotFound: no such bot.
        :raises Forbidden: ``private`` and the viewer is neither its owner nor an admin.
        """
        with self.sessions() as s:
            bot = self._bot(s, bot_id)
            mine = self.may_see_private(viewer, bot.owner_id)
            if private and not mine:
                raise Forbidden("only its owner and admins may see a bot's check")
            games = s.scalars(_with_players(select(Game)).where(
                or_(Game.white_id == bot_id, Game.black_id == bot_id)).order_by(Game.id)).all()
            forfeits = [g for g in games if g.status == "done" and _forfeited(g, bot_id)]
            out: dict[str, Any] = {
                "id": bot.id, "bot": bot.name, "version": bot.version,
                "owner": bot.owner.name, "status": bot.status,
                "uploaded": bot.created_at.isoformat(),
                "games": [_game_row(g) for g in games],
                "forfeits": len(forfeits),
            }
            if mine:
                out["verdict"] = bot.verdict
                out["check_log"] = bot.check_log
                out["forfeit_games"] = [_forfeit_row(g, bot_id) for g in forfeits]
            return out

    def bots(self, status: Optional[Sequence[str]] = None, *, owner: Optional[int] = None,
             ids: Optional[Sequence[int]] = None) -> list[dict[str, Any]]:
        """Every upload (newest first), optionally only of some statuses, of one owner (by
        id) or with some ids: public facts only."""
        with self.sessions() as s:
            q = select(Bot).options(joinedload(Bot.owner)).order_by(Bot.id.desc())
            if status:
                q = q.where(Bot.status.in_(status))
            if owner is not None:
                q = q.where(Bot.owner_id == owner)
            if ids is not None:
                q = q.where(Bot.id.in_(ids))
            return [{"id": b.id, "bot": b.name, "version": b.version, "owner": b.owner.name,
                     "owner_id": b.owner_id, "status": b.status}
                    for b in s.scalars(q).all()]

    def game_view(self, game_id: int, viewer: Viewer) -> dict[str, Any]:
        """A finished game's record (a :class:`~arena.records.GameRecord` as a dict), the
        bots' stderr kept only for the side(s) the viewer owns (all for an admin).

        :raises NotFound: no such game, or not finished yet.
        """
        with self.sessions() as s:
            game = s.get(Game, game_id)
            if game is None or game.status != "done" or not game.record:
                raise NotFound(f"no finished game {game_id}")
            record = json.loads(game.record)
            owners = {"white": game.white.owner_id, "black": game.black.owner_id}
        record["stderr"] = {color: text for color, text in record.get("stderr", {}).items()
                            if color in owners and self.may_see_private(viewer, owners[color])}
        return record

    def live_game(self, game_id: int) -> dict[str, Any]:
        """A game as the live page shows it, to anyone: its row (players, status, result)
        and the position after the moves played so far (:func:`~arena.server.live.live_board`:
        ``board``, ``hand``, ``turn``, ``plies``, ``last``, the board's geometry) with
        ``moves``.  A running game's moves are read from its ply file, a finished one's
        from its record; no stderr, no logs.

        :raises NotFound: no such game.
        """
        from arena.server.live import live_board, live_path, read_plies
        from arena.variants import get_variant

        with self.sessions() as s:
            game = s.get(Game, game_id)
            if game is None:
                raise NotFound(f"no game {game_id}")
            row = _game_row(game)
            record = game.record if game.status == "done" else ""
        if record:
            moves = [m["move"] for m in json.loads(record).get("moves", [])]
        elif row["status"] == "running":
            moves = [p["move"] for p in read_plies(live_path(self.folder, game_id))]
        else:
            moves = []
        try:
            variant = get_variant(row["variant"])
        except KeyError:
            raise NotFound(f"game {game_id}: unknown variant") from None
        row.update(live_board(variant, moves))
        row["moves"] = moves[:row["plies"]]
        return row

    def games(self, *, limit: int = 200) -> list[dict[str, Any]]:
        """The latest games, queued, running and finished (the live view)."""
        with self.sessions() as s:
            rows = s.scalars(_with_players(select(Game)).order_by(Game.id.desc())
                             .limit(limit)).all()
            return [_game_row(g) for g in rows]

    def records(self, between: set[int]) -> list[GameRecord]:
        """Every finished game between two of the bots ``between`` (ids), oldest first."""
        with self.sessions() as s:
            rows = s.execute(select(Game.white_id, Game.black_id, Game.record)
                             .where(Game.status == "done").order_by(Game.id)).all()
        return [GameRecord.from_dict(json.loads(r)) for w, b, r in rows
                if w in between and b in between and r]

    def leaderboard(self) -> list[dict[str, Any]]:
        """One row per active bot per variant: ``variant``, ``rank``, ``bot``, ``id``,
        ``owner``, ``elo``, ``elo95``, ``games``, ``score`` (points per game) and W/D/L,
        rated like ``arena rate`` (:func:`arena.ratings.rate`: Bradley-Terry, intervals)."""
        with self.sessions() as s:
            bots = {b.label: b for b in s.scalars(select(Bot).options(joinedload(Bot.owner))
                                                  .where(Bot.status == "active"))}
            # the done games by count and highest id: games end out of id order (two at
            # once), so the highest id alone can stay put while another game is counted
            key = (tuple(s.execute(select(func.count(Game.id), func.max(Game.id))
                                   .where(Game.status == "done")).one()),
                   tuple(sorted(bots)))
        with self._board_lock:
            if self._board_cache[0] == key:
                return self._board_cache[1]
        with self._board_fit:  # one fit at a time: concurrent requests wait for its result
            with self._board_lock:
                if self._board_cache[0] == key:
                    return self._board_cache[1]
            rows = self._fit_leaderboard(bots)
            with self._board_lock:
                self._board_cache = (key, rows)
            return rows

    def _fit_leaderboard(self, bots: dict[str, Bot]) -> list[dict[str, Any]]:
        """The leaderboard's rows, fitted from the records of the games between ``bots``
        (the active ones by label, their owners loaded; see :meth:`leaderboard`)."""
        from arena.ratings import rate

        records = self.records({b.id for b in bots.values()})
        rows: list[dict[str, Any]] = []
        for variant in self.config.variants:
            chosen = [r for r in records if r.variant == variant.name]
            rated = set()
            if chosen:
                for r in rate(chosen, variant=variant.name).rows:
                    bot = bots.get(r.bot)
                    if bot is None:
                        continue
                    rated.add(r.bot)
                    rows.append({
                        "variant": variant.name, "rank": r.rank, "bot": bot.name,
                        "id": bot.id, "version": bot.version, "owner": bot.owner.name,
                        "elo": None if r.rating is None else round(r.rating, 1),
                        "elo95": None if r.rating95 is None else round(r.rating95, 1),
                        "games": r.games, "score": round(r.score, 3) if r.games else None,
                        "wins": r.wins, "draws": r.draws, "losses": r.losses})
            for label in sorted(set(bots) - rated):  # active, no games yet
                bot = bots[label]
                rows.append({"variant": variant.name, "rank": None, "bot": bot.name,
                             "id": bot.id, "version": bot.version, "owner": bot.owner.name,
                             "elo": None, "elo95": None, "games": 0, "score": None,
                             "wins": 0, "draws": 0, "losses": 0})
        return rows

    # ---- admin ---------------------------------------------------------------------

    def retire(self, bot_id: int, viewer: Viewer) -> None:
        """Retire a bot (its owner or an admin): it leaves the ladder, its queued games go.

        :raises NotFound, Forbidden:
        """
        with self.sessions.begin() as s:
            bot = self._bot(s, bot_id)
            if not self.may_see_private(viewer, bot.owner_id):
                raise Forbidden("only its owner and admins may retire a bot")
            self._retire(s, [bot_id])

    def _retire(self, s: Any, ids: list[int]) -> None:
        if not ids:
            return
        s.execute(update(Bot).where(Bot.id.in_(ids)).values(status="retired"))
        s.execute(delete(Game).where(
            Game.status == "queued", or_(Game.white_id.in_(ids), Game.black_id.in_(ids))))

    def rejudge(self, bot_id: int, viewer: Viewer) -> None:
        """Check a bot again (admins): back to ``checking``, its queued games dropped.

        :raises NotFound, Forbidden:
        """
        if not viewer.is_admin:
            raise Forbidden("only admins may re-judge a bot")
        with self.sessions.begin() as s:
            bot = self._bot(s, bot_id)
            self._retire(s, [bot.id])
            bot.status = "checking"
            bot.verdict = ""
            s.add(Job(kind="check", bot_id=bot.id))

    def set_paused(self, paused: bool, viewer: Viewer) -> None:
        """Pause or resume the judge (admins).  :raises Forbidden:"""
        if not viewer.is_admin:
            raise Forbidden("only admins may pause the judge")
        with self.sessions.begin() as s:
            s.merge(Setting(key="paused", value="1" if paused else ""))

    def paused(self) -> bool:
        """Whether an admin paused the judge."""
        with self.sessions() as s:
            setting = s.get(Setting, "paused")
            return bool(setting and setting.value)

    def status(self) -> dict[str, Any]:
        """Counts for the pages and the tests: bots by status, games by status, paused."""
        with self.sessions() as s:
            bots = dict(s.execute(select(Bot.status, func.count()).group_by(Bot.status)).all())
            games = dict(s.execute(select(Game.status, func.count())
                                   .group_by(Game.status)).all())
        return {"bots": bots, "games": games, "paused": self.paused()}

    # ---- the judge's queue ---------------------------------------------------------

    def recover(self) -> tuple[int, int]:
        """At start: work left ``running`` by a killed server goes back to the queue (its
        results were never stored).  Returns (checks, games) requeued."""
        with self.sessions.begin() as s:
            jobs = s.execute(update(Job).where(Job.status == "running")
                             .values(status="queued"))
            games = s.execute(update(Game).where(Game.status == "running")
                              .values(status="queued"))
            assert isinstance(jobs, CursorResult) and isinstance(games, CursorResult)
            return jobs.rowcount or 0, games.rowcount or 0

    def claim_check(self) -> Optional[tuple[int, int]]:
        """The oldest queued check, now ``running``: (job id, bot id).  Several
        checkers may claim at once (threads here, or another process on PostgreSQL): a
        job is taken by the one whose conditional update finds it still queued."""
        with self._claim_lock:
            while True:
                with self.sessions.begin() as s:
                    job = s.scalar(select(Job).where(Job.status == "queued")
                                   .order_by(Job.id).limit(1))
                    if job is None:
                        return None
                    taken = s.execute(update(Job).where(Job.id == job.id,
                                                        Job.status == "queued")
                                      .values(status="running", attempts=Job.attempts + 1)
                                      .execution_options(synchronize_session=False))
                    assert isinstance(taken, CursorResult)
                    if taken.rowcount != 1:
                        continue  # another checker took it first
                    return job.id, job.bot_id

    def bot_spec(self, bot_id: int) -> Any:
        """The :class:`~arena.manifest.BotSpec` of an upload, named by its label."""
        from arena.manifest import load_bot

        with self.sessions() as s:
            bot = s.get(Bot, bot_id)
            if bot is None:
                raise NotFound(f"no bot {bot_id}")
            return load_bot(self.folder / bot.folder, name=bot.label)

    def finish_check(self, job_id: int, bot_id: int, passed: bool, verdict: str,
                     log: str) -> int:
        """Store a check's verdict; a passed bot becomes active (retiring its owner's older
        versions of the same name) and its games against every other active bot are
        queued: ``pairs`` colour-swapped pairs per variant.  Returns the games queued."""
        cfg = self.config
        with self.sessions.begin() as s:
            job, bot = s.get(Job, job_id), s.get(Bot, bot_id)
            if job is None or bot is None or job.status != "running":
                return 0
            job.status = "done"
            if bot.status != "checking":  # retired meanwhile
                return 0
            bot.verdict, bot.check_log, bot.judged_at = verdict, log, utcnow()
            if not passed:
                bot.status = "rejected"
                return 0
            older = s.scalars(select(Bot.id).where(
                Bot.owner_id == bot.owner_id, Bot.name == bot.name, Bot.id != bot.id,
                Bot.status == "active")).all()
            self._retire(s, list(older))
            bot.status = "active"
            others = s.scalars(select(Bot).where(Bot.status == "active", Bot.id != bot.id)
                               .order_by(Bot.id)).all()
            pair = (s.scalar(select(func.max(Game.pair))) or 0)
            queued = 0
            for other in others:
                for variant in cfg.variants:
                    for _ in range(cfg.pairs):
                        pair += 1
                        seed = int.from_bytes(secrets.token_bytes(4), "big") >> 1
                        for game, (w, b) in enumerate(((bot.id, other.id), (other.id, bot.id))):
                            s.add(Game(white_id=w, black_id=b, variant=variant.name, pair=pair,
                                       game=game, seed=seed, status="queued"))
                            queued += 1
            return queued

    def claim_games(self, n: int) -> list[tuple[int, int, int, str, int, int, int]]:
        """Up to ``n`` queued games, now ``running``: (id, white, black, variant, pair,
        game, seed)."""
        if n <= 0:
            return []
        with self.sessions.begin() as s:
            games = s.scalars(select(Game).where(Game.status == "queued")
                              .order_by(Game.id).limit(n)).all()
            for g in games:
                g.status, g.attempts = "running", g.attempts + 1
            return [(g.id, g.white_id, g.black_id, g.variant, g.pair, g.game, g.seed)
                    for g in games]

    def finish_game(self, game_id: int, record: Optional[GameRecord]) -> bool:
        """Store a game's record and mark it ``done`` in one transaction (so it counts
        once); None: the executor lost it, back to the queue (given up, ``failed``, after
        :data:`MAX_ATTEMPTS`).  False when the game was no longer running (dropped)."""
        with self.sessions.begin() as s:
            game = s.get(Game, game_id)
            if game is None or game.status != "running":
                return False
            if record is None:
                game.status = "failed" if game.attempts >= MAX_ATTEMPTS else "queued"
                return True
            game.status, game.result = "done", record.result
            game.record, game.finished_at = record.to_json(), utcnow()
            return True


def _forfeited(game: Game, bot_id: int) -> bool:
    try:
        forfeit = json.loads(game.record).get("forfeit")
    except ValueError:
        return False
    return (forfeit == "white" and game.white_id == bot_id) or (
        forfeit == "black" and game.black_id == bot_id)


def _forfeit_row(game: Game, bot_id: int) -> dict[str, Any]:
    """A game the bot lost by a referee ending: what happened and its stderr tail."""
    record = json.loads(game.record)
    color = "white" if game.white_id == bot_id else "black"
    return {"id": game.id, "termination": record.get("termination", ""),
            "detail": record.get("detail", ""),
            "stderr": record.get("stderr", {}).get(color, "")}


def _with_players(query: Any) -> Any:
    """``query`` (of games) loading both players and their owners with the games, for
    :func:`_game_row` (not one query per game)."""
    return query.options(joinedload(Game.white).joinedload(Bot.owner),
                         joinedload(Game.black).joinedload(Bot.owner))


def _game_row(g: Game) -> dict[str, Any]:
    return {"id": g.id, "white": g.white.name, "white_id": g.white_id,
            "white_owner": g.white.owner.name, "black": g.black.name, "black_id": g.black_id,
            "black_owner": g.black.owner.name, "variant": g.variant, "pair": g.pair,
            "status": g.status, "result": g.result}
