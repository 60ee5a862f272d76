"""The deadline and the final round robin, and the results to hand to a grade book.

At the settings' ``deadline`` uploads are refused
(:meth:`~arena.server.uploads.Uploads.submit`), the ladder schedules and hands out no more
games, and once the checks of the uploads made before it are done the judge starts the
**final** (:meth:`Final.start_final`): a round robin among each participant's latest active
bot, per variant ``final.pairs`` colour-swapped pairs per meeting, queued as games of kind
``final`` on the same judge, executor and sandbox, in rounds (every meeting's first pair,
then every second pair...), so that the standings so far are fair at any time.

Its state is one row of ``settings`` (``final``: JSON).  When no final game is left to play
(:meth:`Final.finish_final`) its standings are computed (points = wins + draws/2, Elo and
intervals by :func:`arena.ratings.rate` on the final's games only) and stored in that row in
the same transaction that marks the final ``done``: from then on they are read back, never
computed again, whatever happens to the ladder or to the bots.  A server restarted
mid-final finds its games in the database: the finished ones stay, the interrupted ones are
played again (:meth:`~arena.server.uploads.Uploads.recover`).

:meth:`Final.results` gives the rows of ``arena server results``: the final's frozen
standings, or before the deadline the current ladder in the same columns.
"""

from __future__ import annotations

import itertools
import json
from datetime import datetime
from typing import Any, Optional

from sqlalchemy import delete, func, select

from arena.server.common import NotReady
from arena.server.ladder import SCORES, Ladder, queue_pair
from arena.server.models import Bot, Game, Job, Setting, User, utcnow

#: the settings row of the final's state
FINAL_KEY = "final"
#: the columns of ``arena server results`` (and of each row of ``GET /api/final``)
RESULT_COLUMNS = ("variant", "rank", "participant", "bot", "version", "points", "elo",
                  "elo95", "games", "score")


class Final(Ladder):
    """The deadline's final round robin (a part of
    :class:`~arena.server.service.Competition`; see the module's docstring)."""

    #: the running final's standings so far, by (final games done, the highest id)
    _final_cache: Optional[tuple[Any, tuple[int, int, list[dict[str, Any]]]]] = None

    def final_state(self, s: Any = None) -> dict[str, Any]:
        """The final's stored state: ``{}`` before it starts, else ``status`` (``running``
        or ``done``), ``bots`` (the ids that play it), ``started``, and once done
        ``finished``, ``games_done``, ``games_total`` and ``tables`` (the frozen
        standings)."""
        if s is None:
            with self.sessions() as session:
                return self.final_state(session)
        row = s.get(Setting, FINAL_KEY)
        if row is None or not row.value:
            return {}
        state: dict[str, Any] = json.loads(row.value)
        return state

    def final_due(self, now: Optional[datetime] = None) -> bool:
        """Whether the final should start now: the deadline has passed, it has not started,
        and no check of an upload is queued or running (an upload made just before the
        deadline is in the final once its check is done)."""
        if not self.deadline_passed(now):
            return False
        with self.sessions() as s:
            if self.final_state(s):
                return False
            return not s.scalar(select(func.count(Job.id))
                                .where(Job.status.in_(("queued", "running"))))

    def start_final(self, now: Optional[datetime] = None) -> int:
        """Start the final if it is due (:meth:`final_due`): its games queued, the ladder's
        queued games dropped (the ladder is over), its state ``running``, in one
        transaction.  Returns the games queued (0 when it was not due)."""
        if not self.final_due(now):
            return 0
        with self.writing() as s:
            if self.final_state(s):
                return 0
            latest = (select(Bot.owner_id, func.max(Bot.id).label("bot"))
                      .where(Bot.status == "active").group_by(Bot.owner_id).subquery())
            bots = sorted(s.scalars(select(latest.c.bot)).all())
            pair = s.scalar(select(func.max(Game.pair))) or 0
            queued = 0
            for _ in range(self.config.final.pairs):
                for variant in self.config.variants:
                    for a, b in itertools.combinations(bots, 2):
                        pair += 1
                        queued += queue_pair(s, a, b, variant.name, pair, kind="final")
            s.execute(delete(Game).where(Game.kind == "ladder", Game.status == "queued"))
            state = {"status": "running", "bots": bots, "started": utcnow().isoformat(),
                     "games_total": queued}
            s.merge(Setting(key=FINAL_KEY, value=json.dumps(state)))
        return queued

    def finish_final(self) -> bool:
        """If the final is running and none of its games is queued or running: its
        standings computed and stored, and its state ``done``, in one transaction (they
        are never computed again).  Returns whether it was done now."""
        with self.writing() as s:
            state = self.final_state(s)
            if state.get("status") != "running":
                return False
            left = s.scalar(select(func.count(Game.id)).where(
                Game.kind == "final", Game.status.in_(("queued", "running"))))
            if left:
                return False
            done, total, tables = self._final_tables(s, state["bots"])
            state.update(status="done", finished=utcnow().isoformat(), games_done=done,
                         games_total=total, tables=tables)
            s.merge(Setting(key=FINAL_KEY, value=json.dumps(state)))
        return True

    def _final_tables(self, s: Any, bot_ids: list[int]) -> tuple[int, int, list[dict[str, Any]]]:
        """(games done, games in all, one table per variant) of the final's games so far:
        rows ranked by points (then head to head, Sonneborn-Berger, Elo:
        :func:`arena.ratings.rate`) with ``rank``, ``participant``, ``bot``, ``version``,
        ``points``, ``elo``, ``elo95``, ``games``, ``score`` and the bot's ``id``."""
        from arena.ratings import rate
        from arena.records import GameRecord, PlayerInfo

        names = {i: (bot, version, owner) for i, bot, version, owner in s.execute(
            select(Bot.id, Bot.name, Bot.version, User.name)
            .join(User, User.id == Bot.owner_id).where(Bot.id.in_(bot_ids))).all()}
        rows = s.execute(select(Game.white_id, Game.black_id, Game.result, Game.pair,
                                Game.variant, Game.forfeit, Game.status)
                         .where(Game.kind == "final")).all()
        total = len(rows)
        played = [r for r in rows if r[6] == "done" and r[2] in SCORES]
        players = {i: PlayerInfo(str(i)) for i in bot_ids}
        tables = []
        for variant in self.config.variants:
            records = [GameRecord(game_id=str(n), variant=variant.name, variant_params={},
                                  white=players[w], black=players[b], result=result,
                                  termination="", forfeit=forfeit or None, tournament="final",
                                  round=0, pair=pair)
                       for n, (w, b, result, pair, v, forfeit, _) in enumerate(played)
                       if v == variant.name and w in players and b in players]
            table = []
            rated = rate(records, variant=variant.name).rows if records else ()
            for r in rated:
                bot, version, owner = names[int(r.bot)]
                table.append({"rank": r.rank, "participant": owner, "bot": bot,
                              "version": version, "points": r.points,
                              "elo": None if r.rating is None else round(r.rating, 1) + 0.0,
                              "elo95": None if r.rating95 is None else round(r.rating95, 1),
                              "games": r.games,
                              "score": round(r.score, 3) if r.games else None,
                              "id": int(r.bot)})
            for i in bot_ids:  # a bot without a final game yet (or alone in the final)
                if str(i) not in {r.bot for r in rated} and i in names:
                    bot, version, owner = names[i]
                    table.append({"rank": 1 if len(bot_ids) == 1 else None,
                                  "participant": owner, "bot": bot,
                                  "version": version, "points": 0.0, "elo": None,
                                  "elo95": None, "games": 0, "score": None, "id": i})
            tables.append({"variant": variant.name, "rows": table})
        return len(played), total, tables

    def final_view(self) -> dict[str, Any]:
        """The final as ``GET /api/final`` shows it: ``status`` (``none`` before it starts,
        ``running``, ``done``), ``games_done``, ``games_total`` and ``tables`` (per variant,
        ``rows`` of ``rank``, ``participant``, ``bot``, ``version``, ``points``, ``elo``,
        ``elo95``, ``games``, ``score``): while it runs, the standings so far; once done,
        the frozen standings."""
        return self.cached("final", self._final_view)

    def _final_view(self) -> dict[str, Any]:
        with self.sessions() as s:
            state = self.final_state(s)
            if not state:
                return {"status": "none", "games_done": 0, "games_total": 0, "tables": []}
            if state["status"] == "done":
                done, total, tables = (state["games_done"], state["games_total"],
                                       state["tables"])
            else:  # the standings so far, fitted again only when a final game has ended
                key = tuple(s.execute(select(func.count(Game.id), func.max(Game.id)).where(
                    Game.kind == "final", Game.status == "done")).one())
                with self._board_lock:
                    hit = self._final_cache
                if hit is not None and hit[0] == key:
                    done, total, tables = hit[1]
                else:
                    done, total, tables = self._final_tables(s, state["bots"])
                    with self._board_lock:
                        self._final_cache = (key, (done, total, tables))
        return {"status": state["status"], "games_done": done, "games_total": total,
                "tables": tables}

    @staticmethod
    def public_final(view: dict[str, Any]) -> dict[str, Any]:
        """:meth:`final_view` with exactly the API's keys (the pages also use the bots'
        ids)."""
        keys = RESULT_COLUMNS[1:]
        return {**view, "tables": [{"variant": t["variant"],
                                    "rows": [{k: r[k] for k in keys} for r in t["rows"]]}
                                   for t in view["tables"]]}

    def results(self) -> tuple[str, list[dict[str, Any]]]:
        """The rows of ``arena server results`` (:data:`RESULT_COLUMNS`): ``("final", the
        final's frozen standings)`` once it is done; before the deadline ``("ladder", the
        current leaderboard)`` in the same columns (``participant``: the owner; ``points``:
        wins + draws/2).

        :raises NotReady: the deadline has passed and the final is not done (the message
            says how far it is).
        """
        if self.deadline_passed():
            view = self.final_view()
            if view["status"] != "done":
                if view["status"] == "none":
                    raise NotReady(f"the deadline ({self.deadline_text()}) has passed but the "
                                   f"final has not started: the server's judge starts it "
                                   f"once the last checks are done (arena server run)")
                raise NotReady(f"the final is not done yet: {view['games_done']} of "
                               f"{view['games_total']} games played")
            return "final", [{"variant": t["variant"], **{k: r[k] for k in RESULT_COLUMNS[1:]}}
                             for t in view["tables"] for r in t["rows"]]
        rows = [{"variant": r["variant"], "rank": r["rank"], "participant": r["owner"],
                 "bot": r["bot"], "version": r["version"],
                 "points": r["wins"] + 0.5 * r["draws"], "elo": r["elo"], "elo95": r["elo95"],
                 "games": r["games"], "score": r["score"]} for r in self.leaderboard()]
        return "ladder", rows
