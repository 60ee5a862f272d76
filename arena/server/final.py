"""The deadline, the finals, and the results to hand to a grade book.

At the settings' ``deadline`` uploads are refused
(:meth:`~arena.server.uploads.Uploads.submit`), the ladder schedules and hands out no more
games, and once the checks of the uploads made before it are done the judge starts the
**final** (:meth:`Finals.start_final`): a round robin among the participants' **entries**
(each participant's chosen active bot, :meth:`Finals.choose_entry`; by default their latest),
per variant ``final.pairs`` colour-swapped pairs per meeting, queued as games of kind
``final`` on the same judge, executor and sandbox.  Its games are queued in the rounds of a
Berger table (:func:`arena.schedule.berger_rounds`: in each round every entry plays once),
all the rounds once, then all once more for the next pair, so that at any moment every
entry has played as many games as every other, give or take one pair: the standings so far
are fair at any time, and ranked by the rule they say they are ranked by.

A final is a row of its own (:class:`~arena.server.models.Final`), numbered from 1, with the
settings it was played with (deadline, pairs, variants), its entries, and once no game of it
is left to play (:meth:`Finals.finish_final`) its standings, stored in the same transaction
that marks it ``done``: from then on they are read back, never computed again, whatever
happens to the ladder or to the bots.  A final is never changed by editing the settings:
once one was played, uploads stay closed whatever the deadline says
(:meth:`~arena.server.common.State.closed_because`), a server whose settings no longer
match the latest final's refuses to run (:meth:`Finals.settings_conflict`), and the teacher
plays a new final explicitly (:meth:`Finals.rerun_final`: ``arena server final DIR
--rerun``, or the admin page's button): the same entries, the settings as they are now.
Results name the final they come from.

**A Swiss final** (``final: {format: swiss, rounds: N}``; by default ⌈log₂ N⌉ + 2 rounds of
the N entries, at most what N entries can play without meeting twice) is played round by
round: round 1 is paired when the final opens, each further round once every game of the
one before is stored (:meth:`Finals.advance_final`, which the judge calls every second), by
:func:`arena.swiss.pair_round` (equal or nearest scores, never the same two twice; the bye
of an odd field to the lowest score without one).  The seeds are the entries ordered by
their ladder Elo when the final opens (the mean over the variants; entries without one after
them, in entry order), recorded in its settings; the scores are the points of its stored
games (a win 1, a draw ½, over every variant) and of its byes.  A pairing is ``final.pairs``
colour-swapped pairs per variant; a **bye** scores as a won pairing, ``pairs`` × 2 ×
variants points (as the offline runner's ``games_per_pairing`` × variants).  Each round is
recorded in the final's row (``rounds``, the shape of ``rounds.jsonl``) in the transaction
that queues its games, so a server killed at any moment resumes the round as recorded and
pairs the next one from the stored games alone: the same pairs.  Its standings are ranked by
points (byes included), then Buchholz cut-1, Buchholz, Sonneborn-Berger and the direct
encounter (:data:`arena.standings.SWISS_TIEBREAKS`), and its interim standings are those
after the last complete round (every entry has played as many rounds), said as such.

Standings list the whole roster: the entries ranked (points = wins + draws/2; bots level on
points, on the points between them and on Sonneborn-Berger share a place, shown ``5=``:
:func:`arena.standings.places`; Elo and its interval by :func:`arena.ratings.rate` on the
final's games only), then every participant without an entry, without a rank and with a
status (``no accepted bot``: they uploaded, nothing passed; ``no upload``).

:meth:`Finals.results` gives the rows of ``arena server results``: the latest final's frozen
standings (or an earlier final's), or before the deadline the current ladder in the same
columns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Optional

from sqlalchemy import delete, func, select

from arena.schedule import berger_rounds
from arena.server.common import Forbidden, NotFound, NotReady, Refused, Viewer
from arena.server.ladder import SCORES, Ladder, queue_pair
from arena.server.models import Bot, Entry, Final, Game, Job, Refusal, User, utcnow
from arena.server.swissfinal import (FinalGame, counted_games, next_round, rounds_view,
                                     swiss_places, variant_byes)
from arena.swiss import rounds_for

#: the columns of ``arena server results`` (and of each row of ``GET /api/final``, but
#: ``variant``): the first ten as they always were, then the shared place (``5=``), the
#: tie-breaks (points between the level bots, Sonneborn-Berger), the participant's status
#: (``entry``, ``no accepted bot``, ``no upload``; ``active`` on the ladder) and the
#: final's number (empty for the ladder); appended last, a Swiss final's tie-breaks Buchholz
#: and Buchholz cut-1 (empty for a round robin and the ladder)
RESULT_COLUMNS = ("variant", "rank", "participant", "bot", "version", "points", "elo",
                  "elo95", "games", "score", "place", "h2h", "sb", "status", "final",
                  "buchholz", "buchholz_cut1")
#: a participant's status in the results
ENTRY, NO_BOT, NO_UPLOAD = "entry", "no accepted bot", "no upload"
#: what server.yaml said, for a final whose settings do not name it (a round robin's, and
#: every final played before the Swiss): :meth:`Finals.settings_conflict`
_UNSAID = {"format": "round-robin", "rounds": None}
#: the settings :meth:`Finals.settings_conflict` compares
_COMPARED = ("deadline", "pairs", "variants", "format", "rounds")


@dataclass(frozen=True)
class Advance:
    """What :meth:`Finals.advance_final` did: ``kind`` ``""`` (nothing: no final running, or
    some of its games still queued or running), ``round`` (a Swiss's round ``number`` paired,
    its ``games`` queued) or ``done`` (its standings frozen)."""

    kind: str = ""
    number: int = 0
    games: int = 0


def _when(value: Optional[datetime]) -> Optional[str]:
    return value.isoformat() if value is not None else None


class Finals(Ladder):
    """The finals (a part of :class:`~arena.server.service.Competition`; see the module's
    docstring)."""

    #: the running final's standings so far, by (its number, games done, the highest id,
    #: a Swiss's rounds paired and counted)
    _final_cache: Optional[tuple[Any, tuple[int, int, list[dict[str, Any]],
                                            dict[str, Any]]]] = None

    # ---- the finals' rows ----------------------------------------------------------

    def _final_row(self, s: Any, number: Optional[int] = None) -> Optional[Final]:
        if number is not None:
            return s.get(Final, number)
        return s.scalars(select(Final).order_by(Final.id.desc()).limit(1)).first()

    @staticmethod
    def _state(row: Final) -> dict[str, Any]:
        return {"number": row.id, "status": row.status, "reason": row.reason,
                "settings": json.loads(row.settings or "{}"),
                "bots": json.loads(row.entries or "[]"),
                "started": _when(row.started_at), "finished": _when(row.finished_at),
                "games_done": row.games_done, "games_total": row.games_total,
                "tables": json.loads(row.tables or "[]")}

    def final_state(self, s: Any = None, number: Optional[int] = None) -> dict[str, Any]:
        """The latest final's state (or final ``number``'s): ``{}`` before the first
        starts, else ``number``, ``status`` (``running`` or ``done``), ``reason``,
        ``settings`` (those it was played with), ``bots`` (its entries' ids), ``started``,
        ``finished``, ``games_done``, ``games_total`` and once done ``tables`` (the frozen
        standings)."""
        if s is None:
            with self.sessions() as session:
                return self.final_state(session, number)
        row = self._final_row(s, number)
        return {} if row is None else self._state(row)

    def finals(self) -> list[dict[str, Any]]:
        """Every final, the first first: ``number``, ``status``, ``reason``, ``settings``,
        ``started``, ``finished``, ``games_done``, ``games_total``."""
        with self.sessions() as s:
            rows = s.execute(select(Final.id, Final.status, Final.reason, Final.settings,
                                    Final.started_at, Final.finished_at, Final.games_done,
                                    Final.games_total).order_by(Final.id)).all()
        return [{"number": n, "status": status, "reason": reason,
                 "settings": json.loads(settings or "{}"), "started": _when(started),
                 "finished": _when(finished), "games_done": done, "games_total": total}
                for n, status, reason, settings, started, finished, done, total in rows]

    def final_settings(self, pairs: Optional[int] = None) -> dict[str, Any]:
        """The settings a final started now is played with: ``deadline``, ``pairs``
        (``pairs`` replaces the settings' ``final.pairs``), ``variants``, for a Swiss
        ``format`` (``swiss``) and ``rounds`` (server.yaml's ``final.rounds``: None for the
        default; the final's row records the number it plays), and what server.yaml said
        (``server_yaml``: the same, for :meth:`settings_conflict`).  A round robin's name no
        format, as every final's did before the Swiss."""
        fin = self.config.final
        yaml: dict[str, Any] = {"deadline": self.deadline_text() or None, "pairs": fin.pairs,
                                "variants": [v.name for v in self.config.variants]}
        if fin.swiss:
            yaml.update(format="swiss", rounds=fin.rounds)
        return {**yaml, "pairs": pairs if pairs is not None else yaml["pairs"],
                "server_yaml": yaml}

    def settings_conflict(self) -> str:
        """Why the settings no longer fit the latest final ("" when they do): a deadline,
        ``final.pairs``, variants, ``final.format`` or a Swiss's ``final.rounds`` edited
        after it was played.  The server refuses to run on such settings; the message says
        how to go on."""
        state = self.final_state()
        played = (state.get("settings") or {}).get("server_yaml") or {}
        if not played:
            return ""
        now = self.final_settings()["server_yaml"]

        def said(settings: dict[str, Any], key: str) -> Any:
            return settings.get(key, _UNSAID.get(key))

        changed = [k for k in _COMPARED if said(played, k) != said(now, k)]
        if not changed:
            return ""
        words = ", ".join(f"{k} {said(played, k)!r} -> {said(now, k)!r}" for k in changed)
        return (f"server.yaml changed after final {state['number']} was played ({words}): "
                f"a final is not changed by editing the settings, and uploads stay closed. "
                f"Put the settings back, or play a new final among the same entries with "
                f"the settings as they are now: arena server final {self.folder} --rerun")

    # ---- entries -------------------------------------------------------------------

    def _entries(self, s: Any) -> list[int]:
        """Each participant's entry: the active bot they chose, else their latest active
        bot (sorted ids)."""
        latest = dict(s.execute(select(Bot.owner_id, func.max(Bot.id))
                                .where(Bot.status == "active").group_by(Bot.owner_id)).all())
        chosen = dict(s.execute(select(Bot.owner_id, Bot.id).join(Entry, Entry.bot_id == Bot.id)
                                .where(Bot.status == "active",
                                       Bot.owner_id == Entry.user_id)).all())
        return sorted({**latest, **chosen}.values())

    def entry_of(self, user_id: int) -> Optional[int]:
        """The bot that would play (or plays) the final for participant ``user_id``: in a
        final that started, its entry; before, their chosen active bot or their latest."""
        with self.sessions() as s:
            state = self.final_state(s)
            if state:
                owners = dict(s.execute(select(Bot.id, Bot.owner_id)
                                        .where(Bot.id.in_(state["bots"]))).all())
                return next((b for b, o in owners.items() if o == user_id), None)
            entries = self._entries(s)
            return s.scalar(select(Bot.id).where(Bot.id.in_(entries),
                                                 Bot.owner_id == user_id))

    def choose_entry(self, viewer: Viewer, bot_id: int) -> None:
        """Make active bot ``bot_id`` its owner's final entry (its owner, or an admin).

        :raises NotFound: no such bot (or not one the viewer may know of).
        :raises Forbidden: another participant's bot; uploads are closed (the entries were
            fixed at the deadline).
        :raises Refused: the bot is not active.
        """
        with self.changing() as s:
            bot = s.get(Bot, bot_id)
            if bot is None or not self.may_see_private(viewer, bot.owner_id):
                raise NotFound(f"no bot {bot_id}")
            closed = self.closed_because()
            if closed:
                raise Forbidden(f"the final entries are fixed: {closed}")
            if bot.status != "active":
                raise Refused(f"bot {bot_id} ({bot.name} v{bot.version}) is {bot.status}: "
                              f"only an active bot (one that passed its check) can be the "
                              f"final entry")
            s.merge(Entry(user_id=bot.owner_id, bot_id=bot.id))

    # ---- starting and ending a final -----------------------------------------------

    def final_due(self, now: Optional[datetime] = None) -> bool:
        """Whether the first final should start now: the deadline has passed, no final
        was played, and no check of an upload is queued or running (an upload made just
        before the deadline is in the final once its check is done)."""
        if not self.deadline_passed(now):
            return False
        with self.sessions() as s:
            if self._final_row(s) is not None:
                return False
            return not s.scalar(select(func.count(Job.id))
                                .where(Job.status.in_(("queued", "running"))))

    def start_final(self, now: Optional[datetime] = None) -> int:
        """Start the first final if it is due (:meth:`final_due`): its games queued, the
        ladder's queued games dropped (the ladder is over), in one transaction.  Returns
        the games queued (0 when it was not due)."""
        if not self.final_due(now):
            return 0
        ratings = self._seed_ratings() if self.config.final.swiss else None
        with self.writing() as s:
            if self._final_row(s) is not None:
                return 0
            return self._open_final(s, self._entries(s), "the deadline", ratings=ratings)

    def rerun_final(self, viewer: Viewer, pairs: Optional[int] = None) -> dict[str, Any]:
        """Play a new final among the latest final's entries with the settings as they
        are now (``pairs``: instead of ``final.pairs``), after it is done (admins).
        Returns the new final's state.

        :raises Forbidden: not an admin.
        :raises Refused: no final was played yet, or the latest is still being played.
        """
        if not viewer.is_admin:
            raise Forbidden("only admins may play a final again")
        if pairs is not None and not 1 <= pairs <= 1000:
            raise Refused(f"pairs must be between 1 and 1000, got {pairs}")
        ratings = self._seed_ratings() if self.config.final.swiss else None
        with self.writing() as s:
            last = self._final_row(s)
            if last is None:
                raise Refused("no final was played yet: the first starts at the deadline")
            if last.status != "done":
                raise Refused(f"final {last.id} is still being played "
                              f"({last.games_done} games stored so far): re-run it once it "
                              f"is done")
            who = viewer.name or "an admin"
            self._open_final(s, json.loads(last.entries), f"a re-run of final {last.id} "
                             f"asked for by {who}", pairs, ratings)
        self.touch()
        return self.final_state()

    def _seed_ratings(self) -> dict[int, float]:
        """Each active bot's ladder Elo, the mean over the variants it has one in (a Swiss
        final's seeds)."""
        elos: dict[int, list[float]] = {}
        for table in self.ladder_ratings().values():
            for bot, elo in table.items():
                elos.setdefault(bot, []).append(elo)
        return {bot: sum(v) / len(v) for bot, v in elos.items()}

    def _open_final(self, s: Any, entries: list[int], reason: str,
                    pairs: Optional[int] = None,
                    ratings: Optional[dict[int, float]] = None) -> int:
        settings = self.final_settings(pairs)
        swiss = settings.get("format") == "swiss"
        if swiss:  # the rounds it plays, and its seeds: by ladder Elo, else entry order
            n = len(entries)
            most = max(1, n - 1 + n % 2)  # without two entries meeting twice
            settings["rounds"] = min(settings["rounds"] or rounds_for(n), most)
            rated = ratings or {}
            settings["seeds"] = sorted(entries, key=lambda b: (b not in rated,
                                                               -rated.get(b, 0.0)))
        row = Final(status="running", reason=reason, settings=json.dumps(settings),
                    entries=json.dumps(entries), started_at=utcnow(), rounds="[]")
        s.add(row)
        s.flush()
        queued = 0
        if swiss:
            queued = self._pair_round(s, row, settings, []) if len(entries) > 1 else 0
        else:
            pair = s.scalar(select(func.max(Game.pair))) or 0
            rounds = berger_rounds(len(entries))
            for repeat in range(settings["pairs"]):
                for meetings in rounds:
                    for variant in self.config.variants:
                        for i, j in meetings:
                            a, b = (entries[i], entries[j]) if repeat % 2 == 0 else \
                                (entries[j], entries[i])
                            pair += 1
                            queued += queue_pair(s, a, b, variant.name, pair, kind="final",
                                                 final_id=row.id)
            row.games_total = queued
        s.execute(delete(Game).where(Game.kind == "ladder", Game.status == "queued"))
        self._final_seen = self._final_seen or row.id
        return queued

    def _pair_round(self, s: Any, row: Final, settings: dict[str, Any],
                    rounds: list[dict[str, Any]]) -> int:
        """Pair Swiss final ``row``'s next round (:func:`arena.server.swissfinal.next_round`)
        from its ``rounds`` recorded and its stored games, record it and queue its games, in
        write transaction ``s``.  Returns the games queued: 0 when every pairing left would
        repeat a pair (the Swiss ends there)."""
        per_pairing = 2 * settings["pairs"] * len(settings["variants"])  # games = bye points
        entry = next_round(settings["seeds"], self._final_games(s, row.id, done=True), rounds,
                           per_pairing)
        if entry is None:
            return 0
        row.rounds = json.dumps(rounds + [entry])
        pair = s.scalar(select(func.max(Game.pair))) or 0
        queued = 0
        for repeat in range(settings["pairs"]):
            for variant in settings["variants"]:
                for a, b in entry["pairs"]:
                    pair += 1
                    queued += queue_pair(s, *((a, b) if repeat % 2 == 0 else (b, a)),
                                         variant, pair, kind="final", final_id=row.id)
        s.flush()
        so_far = s.scalar(select(func.count(Game.id)).where(Game.final_id == row.id)) or 0
        row.games_total = so_far + (settings["rounds"] - entry["round"]) * (
            len(settings["seeds"]) // 2) * per_pairing
        return queued

    def advance_final(self) -> Advance:
        """Move the latest final on once none of its games is queued or running, in one
        write transaction (the only one meanwhile: two calls at once, or one after a kill,
        never pair a round twice): a Swiss with rounds left pairs and queues its next round
        (:meth:`_pair_round`); otherwise (a round robin, a Swiss's last round, or no
        pairing left without a repeat) its standings are computed and stored and it is
        ``done`` (they are never computed again).  The judge calls it every second."""
        with self.writing() as s:
            row = self._final_row(s)
            if row is None or row.status != "running":
                return Advance()
            left = s.scalar(select(func.count(Game.id)).where(
                Game.final_id == row.id, Game.status.in_(("queued", "running"))))
            if left:
                return Advance()
            settings = json.loads(row.settings or "{}")
            entries = json.loads(row.entries)
            rounds = json.loads(row.rounds or "[]") if settings.get("format") == "swiss" \
                else None
            if rounds is not None and len(entries) > 1 and len(rounds) < settings["rounds"]:
                queued = self._pair_round(s, row, settings, rounds)
                if queued:
                    return Advance("round", len(rounds) + 1, queued)
            done, total, tables = self._final_tables(s, row.id, entries, rounds)
            row.status, row.finished_at = "done", utcnow()
            row.games_done, row.games_total = done, total
            row.tables = json.dumps(tables)
        return Advance("done")

    def finish_final(self) -> bool:
        """:meth:`advance_final`: whether the latest final was done now (its standings
        frozen; a Swiss's next round may have been paired instead)."""
        return self.advance_final().kind == "done"

    # ---- standings -----------------------------------------------------------------

    def _roster(self, s: Any, entries: list[int]) -> list[tuple[str, str]]:
        """(name, status) of every participant without an entry among ``entries``: those
        who uploaded something (``no accepted bot``), then those who did not (``no
        upload``), by name.  Admins without an entry are not participants."""
        owners = set(s.scalars(select(Bot.owner_id).where(Bot.id.in_(entries))).all())
        uploaded = set(s.scalars(select(Bot.owner_id).distinct()).all()) | \
            set(s.scalars(select(Refusal.user_id).distinct()).all())
        out = []
        for uid, name, admin in s.execute(select(User.id, User.name, User.is_admin)
                                          .order_by(User.name)).all():
            if uid in owners or (admin and uid not in uploaded):
                continue
            out.append((name, NO_BOT if uid in uploaded else NO_UPLOAD))
        return sorted(out, key=lambda r: (r[1] != NO_BOT, r[0]))

    @staticmethod
    def _final_games(s: Any, number: int, done: bool = False) -> list[FinalGame]:
        """Final ``number``'s games (``done``: the stored ones only)."""
        query = select(Game.white_id, Game.black_id, Game.result, Game.pair, Game.variant,
                       Game.forfeit, Game.status).where(Game.final_id == number)
        if done:
            query = query.where(Game.status == "done")
        return [tuple(r) for r in s.execute(query).all()]

    def _final_tables(self, s: Any, number: int, bot_ids: list[int],
                      rounds: Optional[list[dict[str, Any]]] = None,
                      games: Optional[list[FinalGame]] = None
                      ) -> tuple[int, int, list[dict[str, Any]]]:
        """(games done, games in all, one table per variant) of final ``number``'s games so
        far (``games``: as :meth:`_final_games` read them): ``ranked_by`` (the rule applied,
        in words) and ``rows`` of ``rank``, ``place``, ``participant``, ``bot``,
        ``version``, ``points``, ``elo``, ``elo95``, ``games``, ``score``, ``h2h``, ``sb``,
        ``status``, ``final``, ``buchholz``, ``buchholz_cut1`` and the bot's ``id``, the
        whole roster.  ``rounds``: a Swiss's, the rounds to count (their games and byes;
        ranked by points, then :data:`arena.standings.SWISS_TIEBREAKS`); None: a round
        robin's, every game."""
        from arena.ratings import rate
        from arena.records import GameRecord, PlayerInfo
        from arena.standings import RANKINGS

        names = {i: (bot, version, owner) for i, bot, version, owner in s.execute(
            select(Bot.id, Bot.name, Bot.version, User.name)
            .join(User, User.id == Bot.owner_id).where(Bot.id.in_(bot_ids))).all()}
        rows = self._final_games(s, number) if games is None else games
        total = len(rows)
        played = [r for r in rows if r[6] == "done" and r[2] in SCORES]
        counted, byes = played, dict[str, float]()
        if rounds is not None:
            counted = counted_games(played, rounds)
            byes = variant_byes(rounds, len(self.config.variants))
        players = {i: PlayerInfo(str(i)) for i in bot_ids}
        roster = self._roster(s, bot_ids)
        tables = []
        for variant in self.config.variants:
            records = [GameRecord(game_id=str(n), variant=variant.name, variant_params={},
                                  white=players[w], black=players[b], result=result,
                                  termination="", forfeit=forfeit or None, tournament="final",
                                  round=0, pair=pair)
                       for n, (w, b, result, pair, v, forfeit, _) in enumerate(counted)
                       if v == variant.name and w in players and b in players]
            table = []
            if rounds is not None:
                ranked_by, ranking, placed = swiss_places(records, variant.name, byes)
            else:
                standings = rate(records, variant=variant.name) if records else None
                placed = [{"id": int(r.bot), "rank": r.rank, "place": r.place,
                           "points": r.points, "elo": r.rating, "elo95": r.rating95,
                           "games": r.games, "score": r.score if r.games else None,
                           "h2h": r.h2h, "sb": r.sb}
                          for r in (standings.rows if standings is not None else ())]
                ranked_by = standings.ranked_by if standings is not None else "points"
                ranking = RANKINGS[ranked_by]
            for r in placed:
                bot, version, owner = names[r["id"]]
                table.append(_row(number, **{
                    **r, "participant": owner, "bot": bot, "version": version,
                    "elo": None if r["elo"] is None else round(r["elo"], 1) + 0.0,
                    "elo95": None if r["elo95"] is None else round(r["elo95"], 1),
                    "score": None if r["score"] is None else round(r["score"], 3)}))
            seen = {row["id"] for row in table}
            alone = len(bot_ids) == 1
            for i in bot_ids:  # an entry without a final game yet (or alone in the final)
                if i not in seen and i in names:
                    bot, version, owner = names[i]
                    table.append(_row(number, rank=1 if alone else None,
                                      place="1" if alone else "", participant=owner, bot=bot,
                                      version=version, points=0.0, id=i))
            for owner, status in roster:
                table.append(_row(number, participant=owner, bot="", points=None,
                                  status=status))
            tables.append({"variant": variant.name, "ranked_by": ranked_by,
                           "ranking": ranking, "rows": table})
        return len(played), total, tables

    def _swiss_view(self, s: Any, row: Final, games: list[FinalGame]) -> dict[str, Any]:
        """What a Swiss final's view adds: ``rounds``
        (:func:`arena.server.swissfinal.rounds_view`: as recorded, with each pairing's
        ``results`` and whether the round is ``complete``), ``after_round`` (the rounds its
        standings count: the complete ones) and ``players`` (by bot id as text: its
        ``participant``, ``bot`` and ``version``)."""
        shown = rounds_view(json.loads(row.rounds or "[]"), games)
        players = {str(i): {"participant": owner, "bot": bot, "version": version}
                   for i, bot, version, owner in s.execute(
                       select(Bot.id, Bot.name, Bot.version, User.name)
                       .join(User, User.id == Bot.owner_id)
                       .where(Bot.id.in_(json.loads(row.entries or "[]")))).all()}
        after = sum(1 for r in shown if r["complete"]) if row.status != "done" else len(shown)
        return {"rounds": shown, "after_round": after, "players": players}

    def final_view(self, number: Optional[int] = None) -> dict[str, Any]:
        """A final as ``GET /api/final`` shows it (the latest, or final ``number``):
        ``status`` (``none`` before the first starts, ``running``, ``done``), ``number``,
        ``reason``, ``settings``, ``started``, ``finished``, ``games_done``,
        ``games_total``, ``finals`` (every final: number, status, reason) and ``tables``
        (per variant, ``ranked_by``, ``ranking`` and ``rows``: :data:`RESULT_COLUMNS` but
        ``variant``, the whole roster): while it runs, the standings so far; once done,
        the frozen standings.

        :raises NotFound: no final ``number``.
        """
        return self.cached(("final", number), lambda: self._final_view(number))

    def _final_view(self, number: Optional[int]) -> dict[str, Any]:
        finals = [{k: f[k] for k in ("number", "status", "reason")} for f in self.finals()]
        with self.sessions() as s:
            row = self._final_row(s, number)
            if row is None:
                if number is not None:
                    raise NotFound(f"no final {number}")
                return {"status": "none", "number": None, "reason": "", "settings": {},
                        "started": None, "finished": None, "games_done": 0,
                        "games_total": 0, "finals": finals, "tables": []}
            state = self._state(row)
            swiss = state["settings"].get("format") == "swiss"
            extra: dict[str, Any] = {}
            if row.status == "done":
                done, total, tables = row.games_done, row.games_total, state["tables"]
                if swiss:
                    extra = self._swiss_view(s, row, self._final_games(s, row.id))
            else:  # the standings so far, fitted again only when a final game has ended
                key = (row.id, *s.execute(select(func.count(Game.id), func.max(Game.id))
                                          .where(Game.final_id == row.id,
                                                 Game.status == "done")).one(),
                       len(row.rounds or ""))
                with self._board_lock:
                    hit = self._final_cache
                if hit is not None and hit[0] == key:
                    done, total, tables, extra = hit[1]
                else:
                    games = self._final_games(s, row.id)
                    if swiss:  # the complete rounds only: every entry played as many
                        extra = self._swiss_view(s, row, games)
                        counted = json.loads(row.rounds or "[]")[:extra["after_round"]]
                        done, total, tables = self._final_tables(s, row.id, state["bots"],
                                                                 counted, games)
                        total = max(total, row.games_total)
                    else:
                        done, total, tables = self._final_tables(s, row.id, state["bots"],
                                                                 games=games)
                    with self._board_lock:
                        self._final_cache = (key, (done, total, tables, extra))
        return {**{k: state[k] for k in ("status", "number", "reason", "settings",
                                         "started", "finished")},
                "games_done": done, "games_total": total, "finals": finals, "tables": tables,
                **extra}

    @staticmethod
    def public_final(view: dict[str, Any]) -> dict[str, Any]:
        """:meth:`final_view` with exactly the API's keys (the pages also use the bots'
        ids)."""
        keys = RESULT_COLUMNS[1:]
        return {**view, "tables": [{"variant": t["variant"], "ranked_by": t.get("ranked_by"),
                                    "ranking": t.get("ranking"),
                                    "rows": [{k: r.get(k) for k in keys} for r in t["rows"]]}
                                   for t in view["tables"]]}

    def results(self, number: Optional[int] = None) -> tuple[str, list[dict[str, Any]]]:
        """The rows of ``arena server results`` (:data:`RESULT_COLUMNS`, the whole roster):
        ``("final N", its frozen standings)`` for the latest final (or final ``number``)
        once it is done; before the first final ``("ladder", the current leaderboard)`` in
        the same columns (``participant``: the owner; ``points``: wins + draws/2).

        :raises NotReady: the final is not done, or the deadline has passed and it has not
            started (the message says how far it is).
        :raises NotFound: no final ``number``.
        """
        view = self.final_view(number)
        if view["status"] == "none" and self.deadline_passed():
            raise NotReady(f"the deadline ({self.deadline_text()}) has passed but the final "
                           f"has not started: the server's judge starts it once the last "
                           f"checks are done (arena server run)")
        if view["status"] == "running":
            earlier = [f["number"] for f in view["finals"] if f["status"] == "done"]
            hint = (f"; the results of final {earlier[-1]}: arena server results "
                    f"--final {earlier[-1]}" if earlier else "")
            raise NotReady(f"final {view['number']} is not done yet: {view['games_done']} "
                           f"of {view['games_total']} games played{hint}")
        if view["status"] == "done":
            return f"final {view['number']}", [
                {"variant": t["variant"], **{k: r.get(k) for k in RESULT_COLUMNS[1:]}}
                for t in view["tables"] for r in t["rows"]]
        rows = [{"variant": r["variant"], "rank": r["rank"], "participant": r["owner"],
                 "bot": r["bot"], "version": r["version"],
                 "points": r["wins"] + 0.5 * r["draws"], "elo": r["elo"], "elo95": r["elo95"],
                 "games": r["games"], "score": r["score"], "place": str(r["rank"] or ""),
                 "h2h": None, "sb": None, "status": "active", "final": None,
                 "buchholz": None, "buchholz_cut1": None}
                for r in self.leaderboard()]
        with self.sessions() as s:
            on_ladder = list(s.scalars(select(Bot.id).where(Bot.status == "active")).all())
            roster = self._roster(s, on_ladder)
        for variant in self.config.variants:
            rows += [{"variant": variant.name, "rank": None, "participant": owner, "bot": "",
                      "version": None, "points": None, "elo": None, "elo95": None,
                      "games": 0, "score": None, "place": "", "h2h": None, "sb": None,
                      "status": status, "final": None, "buchholz": None,
                      "buchholz_cut1": None} for owner, status in roster]
        return "ladder", rows


def _row(number: int, **values: Any) -> dict[str, Any]:
    """A row of final ``number``'s table: ``values``, and the others empty (an entry's
    status, no game)."""
    return {"rank": None, "place": "", "version": None, "elo": None, "elo95": None,
            "games": 0, "score": None, "h2h": None, "sb": None, "status": ENTRY,
            "buchholz": None, "buchholz_cut1": None, "id": None, **values, "final": number}
