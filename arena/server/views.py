"""What the pages and the API show: bots, games (finished and live, paged and filtered) and
the judge's state, as plain data (dicts), the same for both.  Access rules live here, once:
a bot's verdict, check log, archive and its games' stderr go to its owner and admins only;
nothing shows the server's folders.

The public views are kept until the database changes (:meth:`~arena.server.common.State.cached`)
and read their rows with one query per page (players joined in), never one per row."""

from __future__ import annotations

import json
import threading
from typing import Any, Optional, Sequence

from sqlalchemy import and_, false, func, or_, select
from sqlalchemy.orm import aliased, joinedload, selectinload

from arena.server.common import Forbidden, NotFound, Viewer, valid_id
from arena.server.ladder import Ladder
from arena.server.models import Bot, Game, Job, Record, User

#: rows of the games page
GAMES_PER_PAGE = 50
#: a bot's forfeited games shown to its owner (the latest)
FORFEITS_SHOWN = 20
#: finished games' records kept parsed (a game's page is read by many)
RECORDS_KEPT = 512


class Views(Ladder):
    """The read side of a competition (a part of
    :class:`~arena.server.service.Competition`)."""

    def __init__(self, folder: Any, *, db_url: Optional[str] = None) -> None:
        super().__init__(folder, db_url=db_url)
        self._records_lock = threading.Lock()
        #: finished games' parsed records and their players' owners, by game id
        self._records: dict[int, tuple[dict[str, Any], dict[str, int]]] = {}

    def _bot(self, s: Any, bot_id: int) -> Bot:
        bot = s.get(Bot, bot_id) if valid_id(bot_id) else None
        if bot is None:
            raise NotFound(f"no bot {bot_id}")
        return bot

    def bot_view(self, bot_id: int, viewer: Viewer, *, private: bool = True,
                 games_limit: Optional[int] = None) -> dict[str, Any]:
        """A bot: public facts (with ``ladder``: its leaderboard rows), its games (newest
        first when ``games_limit`` keeps only the latest; ``game_count`` all of them); with
        its verdict and check log for its owner and admins (and, while it is checked, what
        its check is doing: ``check``).  ``private``: the caller wants the owner's view
        (the API): anyone else gets :class:`Forbidden`.  The public part is kept until the
        database changes.

        :raises NotFound: no such bot.
        :raises Forbidden: ``private`` and the viewer is neither its owner nor an admin.
        """
        if not valid_id(bot_id):
            raise NotFound(f"no bot {bot_id}")
        public = self.cached(("bot", bot_id, games_limit),
                             lambda: self._public_bot(bot_id, games_limit))
        mine = self.may_see_private(viewer, public["owner_id"])
        if private and not mine:
            raise Forbidden("only its owner and admins may see a bot's check")
        out = {k: v for k, v in public.items() if k != "owner_id"}
        out["ladder"] = [r for r in self.leaderboard(fresh=False) if r["id"] == bot_id]
        if mine:
            with self.sessions() as s:
                bot = self._bot(s, bot_id)
                out["verdict"] = bot.verdict
                out["check_log"] = bot.check_log
                forfeits = s.scalars(select(Game).where(
                    _forfeited_by(bot_id), Game.status == "done").order_by(Game.id.desc())
                    .limit(FORFEITS_SHOWN).options(selectinload(Game.stored))).all()
                out["forfeit_games"] = [_forfeit_row(g, bot_id, self._public_json(g.record))
                                        for g in forfeits]
                job = s.scalar(select(Job).where(Job.bot_id == bot_id,
                                                 Job.status.in_(("queued", "running")))
                               .order_by(Job.id.desc()).limit(1))
                out["check"] = None if job is None else self._check_state(job)
                out["archive"] = bot.archive_bytes > 0
        return out

    def bot_owner(self, bot_id: int) -> int:
        """The id of a bot's owner (kept until the database changes).

        :raises NotFound: no such bot."""
        if not valid_id(bot_id):
            raise NotFound(f"no bot {bot_id}")

        def owner() -> int:
            with self.sessions() as s:
                found = s.scalar(select(Bot.owner_id).where(Bot.id == bot_id))
            if found is None:
                raise NotFound(f"no bot {bot_id}")
            return int(found)

        return self.cached(("owner", bot_id), owner)

    def _public_bot(self, bot_id: int, games_limit: Optional[int]) -> dict[str, Any]:
        with self.sessions() as s:
            bot = self._bot(s, bot_id)
            mine = or_(Game.white_id == bot_id, Game.black_id == bot_id)
            query = _game_rows().where(mine)
            query = (query.order_by(Game.id) if games_limit is None
                     else query.order_by(Game.id.desc()).limit(games_limit))
            games = [_row_dict(r) for r in s.execute(query).all()]
            count = s.scalar(select(func.count(Game.id)).where(mine)) or 0
            forfeits = s.scalar(select(func.count(Game.id)).where(
                _forfeited_by(bot_id), Game.status == "done")) or 0
            out: dict[str, Any] = {
                "id": bot.id, "bot": bot.name, "version": bot.version,
                "owner": bot.owner.name, "owner_id": bot.owner_id, "status": bot.status,
                "uploaded": bot.created_at.isoformat(),
                "files_removed": bot.removed_at is not None,
                "games": games, "game_count": count, "forfeits": forfeits,
            }
        return out

    def _check_state(self, job: Job) -> dict[str, Any]:
        """A queued or running check as its owner sees it: ``state``, ``attempt`` and, while
        it runs, ``step`` (what it is doing) and ``progress`` (its log so far)."""
        from arena.server.progress import read_progress

        out: dict[str, Any] = {"state": job.status, "attempt": job.attempts}
        if job.status == "running":
            step, text = read_progress(self.folder, job.id)
            out.update(step=step, progress=self.public_text(text))
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
                q = q.where(Bot.id.in_([i for i in ids if valid_id(i)]))
            return [{"id": b.id, "bot": b.name, "version": b.version, "owner": b.owner.name,
                     "owner_id": b.owner_id, "status": b.status}
                    for b in s.scalars(q).all()]

    def game_view(self, game_id: int, viewer: Viewer) -> dict[str, Any]:
        """A finished game's record (a :class:`~arena.records.GameRecord` as a dict), the
        bots' stderr kept only for the side(s) the viewer owns (all for an admin).  A
        finished game never changes: its parsed record is kept (the latest
        :data:`RECORDS_KEPT`).

        :raises NotFound: no such game, or not finished yet.
        """
        seen = self.kept_game_view(game_id, viewer)
        if seen is not None:
            return seen
        found = None
        if valid_id(game_id):
            with self.sessions() as s:
                found = s.execute(select(Game.status, Record.record, _WHITE.owner_id,
                                         _BLACK.owner_id)
                                  .outerjoin(Record, Record.game_id == Game.id)
                                  .join(_WHITE, _WHITE.id == Game.white_id)
                                  .join(_BLACK, _BLACK.id == Game.black_id)
                                  .where(Game.id == game_id)).first()
        if found is None or found[0] != "done" or not found[1]:
            raise NotFound(f"no finished game {game_id}")
        hit = (json.loads(self._public_json(found[1])), {"white": found[2], "black": found[3]})
        with self._records_lock:
            if len(self._records) >= RECORDS_KEPT:
                self._records.clear()
            self._records[game_id] = hit
        return self._as_seen(hit, viewer)

    def kept_game_view(self, game_id: int, viewer: Viewer) -> Optional[dict[str, Any]]:
        """:meth:`game_view` if the game's record is kept (no database read), else None."""
        with self._records_lock:
            hit = self._records.get(game_id)
        return None if hit is None else self._as_seen(hit, viewer)

    def _as_seen(self, hit: tuple[dict[str, Any], dict[str, int]],
                 viewer: Viewer) -> dict[str, Any]:
        """A kept record as ``viewer`` may see it: stderr only of the sides it owns."""
        full, owners = hit
        record = dict(full)
        record["stderr"] = {color: text for color, text in full.get("stderr", {}).items()
                            if color in owners and self.may_see_private(viewer, owners[color])}
        return record

    def _public_json(self, text: str) -> str:
        """Stored JSON without the competition folder's path (records stored before the
        ladder removed it as it stores them)."""
        return text.replace(json.dumps(str(self.folder))[1:-1], "<competition>")

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

        if not valid_id(game_id):
            raise NotFound(f"no game {game_id}")
        with self.sessions() as s:
            found = s.execute(_game_rows().add_columns(Record.record)
                              .outerjoin(Record, Record.game_id == Game.id)
                              .where(Game.id == game_id)).first()
            if found is None:
                raise NotFound(f"no game {game_id}")
            row = _row_dict(found[:-1])
            record = (found[-1] or "") if row["status"] == "done" else ""
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

    def games(self, *, limit: int = 200, page: int = 1, bot: Optional[int] = None,
              participant: Optional[str] = None, variant: Optional[str] = None,
              kind: Optional[str] = None) -> list[dict[str, Any]]:
        """The latest games, queued, running and finished (``limit`` a page, ``page`` 1
        the newest; past the last page none), of one bot, of one participant's bots, of
        one variant, of one kind (ladder, final, match) when asked."""
        return self.games_page(page=page, per_page=limit, bot=bot, participant=participant,
                               variant=variant, kind=kind, clamp=False)["games"]

    def games_page(self, *, page: int = 1, per_page: int = GAMES_PER_PAGE,
                   bot: Optional[int] = None, participant: Optional[str] = None,
                   variant: Optional[str] = None, kind: Optional[str] = None,
                   clamp: bool = True) -> dict[str, Any]:
        """One page of the games list, newest first: ``games`` (rows with the players'
        names, versions and owners, ``kind``), ``page``, ``pages``, ``total``,
        ``per_page`` and the ``filters`` applied (``bot``, ``participant``, ``variant``,
        ``kind``: None for none).  A page past the last is the last (``clamp``: the pages'
        links) or empty (the API: a script paging to the end stops).  One query for the
        page and one for the count, whatever the page; kept until the database changes."""
        key = ("games", page, per_page, bot, participant, variant, kind, clamp)
        return self.cached(key, lambda: self._games_page(page, per_page, bot, participant,
                                                         variant, kind, clamp))

    def _games_page(self, page: int, per_page: int, bot: Optional[int],
                    participant: Optional[str], variant: Optional[str],
                    kind: Optional[str], clamp: bool) -> dict[str, Any]:
        where = []
        if bot is not None:
            where.append(or_(Game.white_id == bot, Game.black_id == bot) if valid_id(bot)
                         else false())
        if participant is not None:
            owned = select(Bot.id).join(User, User.id == Bot.owner_id).where(
                User.name == participant).scalar_subquery()
            where.append(or_(Game.white_id.in_(owned), Game.black_id.in_(owned)))
        if variant is not None:
            where.append(Game.variant == variant)
        if kind is not None:
            where.append(Game.kind == kind)
        per_page = max(1, per_page)
        with self.sessions() as s:
            total = s.scalar(select(func.count(Game.id)).where(*where)) or 0
            pages = max(1, -(-total // per_page))
            page = max(1, page)
            if clamp:
                page = min(page, pages)
            rows = [] if page > pages else s.execute(_game_rows().where(*where).order_by(Game.id.desc())
                             .limit(per_page).offset((page - 1) * per_page)).all()
        return {"games": [_row_dict(r) for r in rows], "page": page, "pages": pages,
                "total": total, "per_page": per_page,
                "filters": {"bot": bot, "participant": participant, "variant": variant,
                            "kind": kind}}

    def game_row(self, game_id: int) -> dict[str, Any]:
        """One game's row as the games list shows it (players, ``kind``, status, result).

        :raises NotFound:"""
        if not valid_id(game_id):
            raise NotFound(f"no game {game_id}")
        with self.sessions() as s:
            row = s.execute(_game_rows().where(Game.id == game_id)).first()
        if row is None:
            raise NotFound(f"no game {game_id}")
        return _row_dict(row)


def _forfeited_by(bot_id: int) -> Any:
    """The games that ``bot_id`` lost by a referee ending (the ``forfeit`` column)."""
    return or_(and_(Game.white_id == bot_id, Game.forfeit == "white"),
               and_(Game.black_id == bot_id, Game.forfeit == "black"))


_WHITE, _BLACK = aliased(Bot), aliased(Bot)
_WHITE_OWNER, _BLACK_OWNER = aliased(User), aliased(User)
_ROW_COLUMNS = ("id", "white_id", "white", "white_version", "white_owner", "black_id", "black",
                "black_version", "black_owner", "variant", "pair", "status", "result", "kind")


def _game_rows() -> Any:
    """The query of games as rows of :data:`_ROW_COLUMNS` (the players' names, versions and
    owners joined in: one query for a whole page, no object per row)."""
    return (select(Game.id, Game.white_id, _WHITE.name, _WHITE.version, _WHITE_OWNER.name,
                   Game.black_id, _BLACK.name, _BLACK.version, _BLACK_OWNER.name,
                   Game.variant, Game.pair, Game.status, Game.result, Game.kind)
            .join(_WHITE, _WHITE.id == Game.white_id)
            .join(_WHITE_OWNER, _WHITE_OWNER.id == _WHITE.owner_id)
            .join(_BLACK, _BLACK.id == Game.black_id)
            .join(_BLACK_OWNER, _BLACK_OWNER.id == _BLACK.owner_id))


def _row_dict(row: Any) -> dict[str, Any]:
    return dict(zip(_ROW_COLUMNS, row))


def _forfeit_row(game: Game, bot_id: int, text: str) -> dict[str, Any]:
    """A game the bot lost by a referee ending (its record's JSON ``text``): what happened
    and its stderr tail."""
    record = json.loads(text)
    color = "white" if game.white_id == bot_id else "black"
    return {"id": game.id, "termination": record.get("termination", ""),
            "detail": record.get("detail", ""),
            "stderr": record.get("stderr", {}).get(color, "")}
