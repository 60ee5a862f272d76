"""The ladder: games scheduled for each bot that passes its check, handed to the judge's
dispatcher and stored as they end, and the leaderboard fitted from them.

A bot that passes gets ``pairs`` colour-swapped pairs per variant against every other active
bot (:func:`schedule_games`); a game's record is stored in the same transaction that marks it
``done`` (:meth:`Ladder.finish_game`), so a game counts once however the server stops.
"""

from __future__ import annotations

import json
import secrets
from typing import Any, Optional

from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.orm import joinedload

from arena.records import GameRecord
from arena.server.common import State
from arena.server.config import ServerConfig
from arena.server.models import Bot, Game, utcnow

#: attempts of a game whose executor keeps failing before it is given up
MAX_ATTEMPTS = 3


def schedule_games(s: Any, bot: Bot, config: ServerConfig) -> int:
    """Queue ``bot``'s games against every other active bot: ``pairs`` colour-swapped pairs
    per variant, each pair with its own seed.  Returns the games queued."""
    others = s.scalars(select(Bot).where(Bot.status == "active", Bot.id != bot.id)
                       .order_by(Bot.id)).all()
    pair = (s.scalar(select(func.max(Game.pair))) or 0)
    queued = 0
    for other in others:
        for variant in config.variants:
            for _ in range(config.pairs):
                pair += 1
                seed = int.from_bytes(secrets.token_bytes(4), "big") >> 1
                for game, (w, b) in enumerate(((bot.id, other.id), (other.id, bot.id))):
                    s.add(Game(white_id=w, black_id=b, variant=variant.name, pair=pair,
                               game=game, seed=seed, status="queued"))
                    queued += 1
    return queued


def retire_bots(s: Any, ids: list[int]) -> None:
    """Mark the bots ``ids`` retired and drop their queued games (in session ``s``)."""
    if not ids:
        return
    s.execute(update(Bot).where(Bot.id.in_(ids)).values(status="retired"))
    s.execute(delete(Game).where(
        Game.status == "queued", or_(Game.white_id.in_(ids), Game.black_id.in_(ids))))


class Ladder(State):
    """The ladder's games and the leaderboard (a part of
    :class:`~arena.server.service.Competition`)."""

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
        :data:`MAX_ATTEMPTS`).  False when the game was no longer running (dropped).

        The record is stored without the server's folders (the players' paths are the
        bots' places in the competition folder, ``<competition>/bots/<id>``)."""
        with self.sessions.begin() as s:
            game = s.get(Game, game_id)
            if game is None or game.status != "running":
                return False
            if record is None:
                game.status = "failed" if game.attempts >= MAX_ATTEMPTS else "queued"
                return True
            game.status, game.result = "done", record.result
            game.record, game.finished_at = self.public_record(record.to_json()), utcnow()
            return True

    def public_record(self, text: str) -> str:
        """A record's JSON text without the competition folder's path (as JSON writes it)."""
        folder = json.dumps(str(self.folder))[1:-1]
        return text.replace(folder, "<competition>")

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
