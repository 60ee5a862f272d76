"""What the pages and the API show: bots, games (finished and live) and the judge's state,
as plain data (dicts), the same for both.  Access rules live here, once: a bot's verdict,
check log and its games' stderr go to its owner and admins only; nothing shows the server's
folders."""

from __future__ import annotations

import json
from typing import Any, Optional, Sequence

from sqlalchemy import or_, select
from sqlalchemy.orm import joinedload

from arena.server.common import Forbidden, NotFound, State, Viewer, valid_id
from arena.server.models import Bot, Game, Job


class Views(State):
    """The read side of a competition (a part of
    :class:`~arena.server.service.Competition`)."""

    def _bot(self, s: Any, bot_id: int) -> Bot:
        bot = s.get(Bot, bot_id) if valid_id(bot_id) else None
        if bot is None:
            raise NotFound(f"no bot {bot_id}")
        return bot

    def bot_view(self, bot_id: int, viewer: Viewer, *, private: bool = True) -> dict[str, Any]:
        """A bot: public facts, its games; with its verdict and check log for its owner and
        admins (and, while it is checked, what its check is doing: ``check``).
        ``private``: the caller wants the owner's view (the API): anyone else gets
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
                "files_removed": bot.removed_at is not None,
                "games": [_game_row(g) for g in games],
                "forfeits": len(forfeits),
            }
            if mine:
                out["verdict"] = bot.verdict
                out["check_log"] = bot.check_log
                out["forfeit_games"] = [_forfeit_row(g, bot_id, self._public_json(g.record))
                                        for g in forfeits]
                job = s.scalar(select(Job).where(Job.bot_id == bot_id,
                                                 Job.status.in_(("queued", "running")))
                               .order_by(Job.id.desc()).limit(1))
                out["check"] = None if job is None else self._check_state(job)
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
        bots' stderr kept only for the side(s) the viewer owns (all for an admin).

        :raises NotFound: no such game, or not finished yet.
        """
        with self.sessions() as s:
            game = s.get(Game, game_id) if valid_id(game_id) else None
            if game is None or game.status != "done" or not game.record:
                raise NotFound(f"no finished game {game_id}")
            record = json.loads(self._public_json(game.record))
            owners = {"white": game.white.owner_id, "black": game.black.owner_id}
        record["stderr"] = {color: text for color, text in record.get("stderr", {}).items()
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

        with self.sessions() as s:
            game = s.get(Game, game_id) if valid_id(game_id) else None
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


def _forfeited(game: Game, bot_id: int) -> bool:
    try:
        forfeit = json.loads(game.record).get("forfeit")
    except ValueError:
        return False
    return (forfeit == "white" and game.white_id == bot_id) or (
        forfeit == "black" and game.black_id == bot_id)


def _forfeit_row(game: Game, bot_id: int, text: str) -> dict[str, Any]:
    """A game the bot lost by a referee ending (its record's JSON ``text``): what happened
    and its stderr tail."""
    record = json.loads(text)
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
