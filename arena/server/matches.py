"""Test matches: a participant asks for one unrated game of their bot against any active
bot, played on demand by the same judge (before the ladder's and the final's games), shown
live and in the viewer, and counted in no standings (games of kind ``match``).

Each participant may ask for ``matches.per_hour`` an hour (counted in the database, so a
restart forgets nothing) and have at most :data:`MAX_WAITING` waiting at once; admins are
not limited.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import func, select

from arena.server.common import Forbidden, NotFound, RateLimited, Refused, State, Viewer, valid_id
from arena.server.ladder import new_seed
from arena.server.models import Bot, Game, utcnow

#: test matches of one participant queued or being played at once
MAX_WAITING = 2


class Matches(State):
    """Unrated test matches (a part of :class:`~arena.server.service.Competition`)."""

    def request_match(self, viewer: Viewer, bot_id: Any, opponent_id: Any,
                      variant: Any = None) -> int:
        """Queue one unrated game: ``bot_id`` (the viewer's own, active) plays White against
        ``opponent_id`` (any active bot) in ``variant`` (a name among the settings'
        variants; None: the first).  Returns the game's id.

        :raises Forbidden: nobody is logged in, or the bot is not the viewer's (admins may
            use any).
        :raises NotFound: no such bot or opponent.
        :raises Refused: a bot or the opponent not active, a bot against itself, an
            unknown variant, ids that are not numbers.
        :raises RateLimited: ``matches.per_hour`` in the last hour, or :data:`MAX_WAITING`
            not played yet.
        """
        if not viewer.known or viewer.id is None:
            raise Forbidden("log in to ask for a test match")
        for what, value in (("bot", bot_id), ("opponent", opponent_id)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise Refused(f"'{what}' must be a bot's id (a number)")
        names = [v.name for v in self.config.variants]
        if variant is None:
            variant = names[0]
        if not isinstance(variant, str) or variant not in names:
            raise Refused(f"'variant' must be one of this competition's variants: "
                          f"{', '.join(names)}")
        if bot_id == opponent_id:
            raise Refused("a bot cannot play a test match against itself")
        with self.changing() as s:
            bot = s.get(Bot, bot_id) if valid_id(bot_id) else None
            opponent = s.get(Bot, opponent_id) if valid_id(opponent_id) else None
            if bot is None:
                raise NotFound(f"no bot {bot_id}")
            if not self.may_see_private(viewer, bot.owner_id):
                raise Forbidden("a test match is played by one of your own bots")
            if opponent is None:
                raise NotFound(f"no bot {opponent_id}")
            for b in (bot, opponent):
                if b.status != "active":
                    raise Refused(f"bot {b.id} ({b.name} v{b.version}) is {b.status}: test "
                                  f"matches are played by active bots only")
            if not viewer.is_admin:
                limit = self.config.matches.per_hour
                recent = s.scalar(select(func.count(Game.id)).where(
                    Game.requested_by == viewer.id,
                    Game.created_at >= utcnow() - timedelta(hours=1))) or 0
                if recent >= limit:
                    raise RateLimited(f"at most {limit} test matches an hour "
                                      f"(matches.per_hour): try later")
                waiting = s.scalar(select(func.count(Game.id)).where(
                    Game.requested_by == viewer.id,
                    Game.status.in_(("queued", "running")))) or 0
                if waiting >= MAX_WAITING:
                    raise RateLimited(f"you have {waiting} test matches waiting to be played: "
                                      f"ask for another once one has ended")
            pair = (s.scalar(select(func.max(Game.pair))) or 0) + 1
            game = Game(white_id=bot.id, black_id=opponent.id, variant=variant, pair=pair,
                        game=0, seed=new_seed(), status="queued", kind="match",
                        requested_by=viewer.id)
            s.add(game)
            s.flush()
            game_id = int(game.id)
        return game_id
