"""The ladder: games scheduled for each bot that passes its check, handed to the judge's
dispatcher and stored as they end, and the leaderboard fitted from them.

A bot that passes gets ``pairs`` colour-swapped pairs per variant against ``K`` other active
bots (:func:`choose_opponents`: ``ladder.opponents``, by default every active bot while there
are at most 40, else 40): the nearest in rating to its estimate (its previous version's
rating, else the middle of the field) and a random spread of the rest, so that the graph of
who played whom stays connected and the ratings converge (``benchmarks/bench_ladder.py``
shows it on 1,000 simulated bots).  A game's record is stored in the same transaction that
marks it ``done`` (:meth:`Ladder.finish_game`), with its result in columns, so a game
counts once however the server stops, and the leaderboard is fitted from the columns
(:func:`fit_standings`), never from the records' JSON.

Only ``ladder`` games count on the leaderboard: the final's games (:mod:`arena.server.final`)
and test matches (``match``) never do.  After the deadline no ladder game is scheduled or
handed out.

**Fair share.**  The dispatcher is handed test matches first, then the final's games, each
oldest first, then ladder games shared between participants as the checks are
(:mod:`arena.server.uploads`).  A ladder game is *its pair's first bot's owner's*: the bot
that :func:`queue_pair` was given first (White of the pair's game 0, Black of its game 1),
which is the new version whose passed check queued the pair, or for an idle pair the bot
with the fewest games; never the opponent's owner, who asked for nothing.  The next ladder
game (:func:`claim_ladder`) is the oldest queued one of the participant with the fewest of
their ladder games running; among those tied, the first after the participant served last
in the order of their ids, round the circle (the one served last is kept in the
``settings`` table, so several dispatchers share the turn).  So a participant with queued
ladder games and none running gets one of the next ``P + 1`` games handed out, ``P`` the
other participants with games queued, however many games the others queued before (an
upload's first game waits behind at most one game of each of them); with ``C`` games
running at a time (``2 x workers``), a participant holds at most ``ceil(C / (P + 1))`` of
them while ``P`` others have games queued (a place that frees goes to the fewest running),
so one whose bots play slowly fills no more than their share of the workers.  A queued
game whose pair's first bot is no longer active (requeued after it was retired) comes
after all the others.  The final is not shared this way: its games are queued in rounds
so that its standings are fair at any time, every participant has as many as the others,
and a game's pair's first bot says nothing there (:mod:`arena.server.final`).
"""

from __future__ import annotations

import json
import math
import random
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from sqlalchemy import CursorResult, case, delete, func, literal_column, or_, select, update

from arena.records import GameRecord
from arena.server.common import State
from arena.server.config import ServerConfig
from arena.server.models import Bot, Game, Record, Setting, User, utcnow

#: attempts of a game whose executor keeps failing before it is given up
MAX_ATTEMPTS = 3
#: the share of a new version's ``K`` opponents taken nearest in rating (the rest: a
#: random spread over the others)
NEAREST_SHARE = 0.5
#: seconds between two fits of the leaderboard made in the background while games are
#: played (longer when a fit takes long: four times its time)
REFIT_EVERY_S = 1.0
#: an idle ladder's next meeting: the bot with the fewest games against one of this many
#: others nearest to it in rating (at random: the graph of who played whom stays connected)
IDLE_NEAREST = 4
#: White's score by result (other results are not counted)
SCORES = {"1-0": 1.0, "1/2-1/2": 0.5, "0-1": 0.0}
#: the order the dispatcher hands queued games out in: test matches (asked for now), then
#: the final (the ladder's games come after both, by fair share: :func:`claim_ladder`)
_PRIORITY = case((Game.kind == "match", 0), else_=1)
#: the settings row that keeps the participant (user id) the ladder's fair share served last
LADDER_TURN = "ladder_turn"
#: a queued ladder game, with literals (not bound parameters) so that the planners of both
#: databases see that the partial indexes of :data:`arena.server.models.QUEUED_LADDER` hold
#: it, also in a prepared statement's generic plan
_QUEUED_LADDER = (Game.kind == literal_column("'ladder'"),
                  Game.status == literal_column("'queued'"))
#: a ladder game's owner's bot: its pair's first bot (:func:`queue_pair`'s ``a``)
_FIRST_BOT = case((Game.game == 0, Game.white_id), else_=Game.black_id)


def new_seed() -> int:
    """A game pair's seed (31 random bits)."""
    return int.from_bytes(secrets.token_bytes(4), "big") >> 1


def choose_opponents(candidates: Sequence[int], ratings: Mapping[int, float],
                     estimate: Optional[float], k: int, rng: random.Random) -> list[int]:
    """``k`` of ``candidates`` (all of them when there are no more): the
    ``ceil(k * NEAREST_SHARE)`` nearest to ``estimate`` in ``ratings`` (a candidate without
    a rating counts as at the estimate: it needs games), then a uniformly random spread of
    the rest.  ``estimate`` None: the median rating (the middle of the field).  Returns them
    in the order of ``candidates``."""
    if k >= len(candidates):
        return list(candidates)
    if k <= 0:
        return []
    if estimate is None:
        known = sorted(ratings[c] for c in candidates if c in ratings)
        estimate = known[len(known) // 2] if known else 0.0
    nearest = math.ceil(k * NEAREST_SHARE)
    ranked = sorted(candidates, key=lambda c: (abs(ratings.get(c, estimate) - estimate),
                                               rng.random()))
    chosen = set(ranked[:nearest])
    rest = ranked[nearest:]
    chosen.update(rng.sample(rest, k - nearest))
    return [c for c in candidates if c in chosen]


def choose_idle_pair(games: Mapping[int, int], ratings: Mapping[int, float],
                     rng: random.Random) -> Optional[tuple[int, int]]:
    """The meeting an idle ladder plays next (``ladder.idle_games``): the bot with the fewest
    ladder ``games`` (a random one of them), against one of the :data:`IDLE_NEAREST` others
    nearest to it in ``ratings`` (at random; a bot without a rating counts as at the median).
    None with fewer than two bots."""
    if len(games) < 2:
        return None
    fewest = min(games.values())
    bot = rng.choice(sorted(b for b, n in games.items() if n == fewest))
    known = sorted(ratings[b] for b in games if b in ratings)
    middle = known[len(known) // 2] if known else 0.0
    mine = ratings.get(bot, middle)
    others = sorted((b for b in games if b != bot),
                    key=lambda b: (abs(ratings.get(b, middle) - mine), rng.random()))
    return bot, rng.choice(others[:IDLE_NEAREST])


def queue_pair(s: Any, a: int, b: int, variant: str, pair: int, kind: str = "ladder",
               final_id: Optional[int] = None) -> int:
    """Queue one colour-swapped pair (``a`` White first) with a seed of its own, as pair
    number ``pair`` (in session ``s``; a final's games name it: ``final_id``).  Returns the
    games queued (2)."""
    seed = new_seed()
    for game, (w, k) in enumerate(((a, b), (b, a))):
        s.add(Game(white_id=w, black_id=k, variant=variant, pair=pair, game=game, seed=seed,
                   status="queued", kind=kind, final_id=final_id))
    return 2


def schedule_games(s: Any, bot: Bot, config: ServerConfig,
                   ratings: Optional[Mapping[str, Mapping[int, float]]] = None,
                   estimate: Optional[Mapping[str, float]] = None) -> int:
    """Queue ``bot``'s ladder games: per variant, ``pairs`` colour-swapped pairs against each
    of its opponents (:func:`choose_opponents` from the active bots, with ``ratings`` per
    variant and ``bot``'s ``estimate`` per variant), each pair with its own seed.  Returns the
    games queued."""
    others = list(s.scalars(select(Bot.id).where(Bot.status == "active", Bot.id != bot.id)
                            .order_by(Bot.id)).all())
    pair = (s.scalar(select(func.max(Game.pair))) or 0)
    k = config.ladder.opponents_for(len(others))
    rng = random.Random(secrets.randbits(64))
    queued = 0
    for variant in config.variants:
        opponents = choose_opponents(others, (ratings or {}).get(variant.name, {}),
                                     (estimate or {}).get(variant.name), k, rng)
        for other in opponents:
            for _ in range(config.pairs):
                pair += 1
                queued += queue_pair(s, bot.id, other, variant.name, pair)
    return queued


def retire_bots(s: Any, ids: list[int]) -> None:
    """Mark the bots ``ids`` retired and drop their queued ladder games and test matches (in
    session ``s``); the final's games are played whatever happens to its bots."""
    if not ids:
        return
    s.execute(update(Bot).where(Bot.id.in_(ids)).values(status="retired"))
    s.execute(delete(Game).where(
        Game.status == "queued", Game.kind != "final",
        or_(Game.white_id.in_(ids), Game.black_id.in_(ids))))


def _oldest_queued(owner: Optional[int] = None) -> Any:
    """The query of each participant's oldest queued ladder game: (owner, the oldest as
    White of a pair's game 0, the oldest as Black of a pair's game 1; None: none), one row
    per participant with an active bot (``owner``: that participant only).  Two index steps
    per active bot (``ix_games_queued_white``, ``ix_games_queued_black``), whatever the
    number of games queued."""
    def first(side: Any, game: int) -> Any:
        return (select(func.min(Game.id))
                .where(*_QUEUED_LADDER, side == Bot.id, Game.game == literal_column(str(game)))
                .correlate(Bot).scalar_subquery())

    per_bot = select(Bot.owner_id.label("owner"), first(Game.white_id, 0).label("white"),
                     first(Game.black_id, 1).label("black")).where(Bot.status == "active")
    if owner is not None:
        per_bot = per_bot.where(Bot.owner_id == owner)
    bots = per_bot.subquery()
    return (select(bots.c.owner, func.min(bots.c.white), func.min(bots.c.black))
            .group_by(bots.c.owner))


def _take(s: Any, game_id: int) -> bool:
    """Mark queued game ``game_id`` running (one more attempt); False when it was no longer
    queued (then it is another claim's)."""
    taken = s.execute(update(Game).where(Game.id == game_id, Game.status == "queued")
                      .values(status="running", attempts=Game.attempts + 1)
                      .execution_options(synchronize_session=False))
    assert isinstance(taken, CursorResult)
    return taken.rowcount == 1


def claim_ladder(s: Any, n: int) -> list[int]:
    """Up to ``n`` queued ladder games by fair share (see the module's docstring), now
    ``running`` (in write transaction ``s``): their ids, in the order handed out.

    Its cost does not grow with the games queued: a look for any queued ladder game, the
    running ladder games counted by owner (at most the dispatchers' capacity), the turn,
    each participant's oldest queued game (two index steps per active bot), then per game
    handed out its update and its owner's next game (two index steps per bot of theirs)."""
    if n <= 0 or s.scalar(select(Game.id).where(*_QUEUED_LADDER).limit(1)) is None:
        return []
    running: dict[int, int] = dict(s.execute(
        select(Bot.owner_id, func.count()).select_from(Game).join(Bot, Bot.id == _FIRST_BOT)
        .where(Game.kind == "ladder", Game.status == "running").group_by(Bot.owner_id))
        .all())

    def oldest(white: Optional[int], black: Optional[int]) -> Optional[int]:
        return min((g for g in (white, black) if g is not None), default=None)

    queued = {owner: game for owner, game in ((o, oldest(w, b)) for o, w, b in
                                              s.execute(_oldest_queued()).all())
              if game is not None}
    turn = s.get(Setting, LADDER_TURN)
    last = int(turn.value) if turn is not None and turn.value.isdigit() else 0
    taken: list[int] = []
    while queued and len(taken) < n:
        fewest = min(running.get(o, 0) for o in queued)
        tied = sorted(o for o in queued if running.get(o, 0) == fewest)
        owner = next((o for o in tied if o > last), tied[0])
        if _take(s, queued[owner]):
            taken.append(queued[owner])
            running[owner] = running.get(owner, 0) + 1
            last = owner
        if len(taken) == n:
            break
        row = s.execute(_oldest_queued(owner)).first()
        game = oldest(row[1], row[2]) if row is not None else None
        if game is None:
            del queued[owner]
        else:
            queued[owner] = game
    if len(taken) < n:
        # games whose pair's first bot is no longer active (requeued after its retirement):
        # after everyone's, oldest first (the only queued ladder games left)
        for game_id in s.scalars(select(Game.id).where(*_QUEUED_LADDER).order_by(Game.id)
                                 .limit(n - len(taken))).all():
            if _take(s, game_id):
                taken.append(game_id)
    if taken and (turn is None or turn.value != str(last)):
        if turn is None:
            s.add(Setting(key=LADDER_TURN, value=str(last)))
        else:
            turn.value = str(last)
    return taken


@dataclass(frozen=True)
class Standing:
    """One bot's line in a table fitted from game columns (:func:`fit_standings`)."""

    bot: int
    games: int
    wins: int
    draws: int
    losses: int
    #: Elo and the half-width of its 95 % interval (the prior's for a flagged bot), as
    #: :func:`arena.ratings.rate` gives them; None for a bot alone in its table
    elo: Optional[float]
    elo95: Optional[float]

    @property
    def points(self) -> float:
        """A win 1, a draw 1/2."""
        return self.wins + 0.5 * self.draws

    @property
    def score(self) -> Optional[float]:
        """Points per game (None before any game)."""
        return self.points / self.games if self.games else None


def fit_standings(white: Sequence[int], black: Sequence[int], score: Sequence[float],
                  pair: Sequence[int]) -> dict[int, Standing]:
    """W/D/L and Elo of every bot (by id) of the games given as columns (White's id,
    Black's id, White's score, the colour-swapped pair each belongs to): the same
    Bradley-Terry fit, prior for flagged bots and pair-clustered intervals as
    :func:`arena.ratings.rate` (:func:`arena.ratings.fit_every_bot`), on arrays, so that
    200,000 games take no more than their fit."""
    import numpy as np

    from arena.ratings import GameArrays, fit_every_bot

    w = np.asarray(white, dtype=np.int64)
    b = np.asarray(black, dtype=np.int64)
    sc = np.asarray(score, dtype=float)
    keep = w != b
    w, b, sc, cl = w[keep], b[keep], sc[keep], np.asarray(pair, dtype=np.int64)[keep]
    ids, inverse = np.unique(np.concatenate([w, b]), return_inverse=True)
    n = ids.size
    wi, bi = inverse[:w.size], inverse[w.size:]
    wins = np.bincount(wi, sc == 1.0, n) + np.bincount(bi, sc == 0.0, n)
    draws = np.bincount(wi, sc == 0.5, n) + np.bincount(bi, sc == 0.5, n)
    games = np.bincount(wi, minlength=n) + np.bincount(bi, minlength=n)
    fit, _ = fit_every_bot(GameArrays(tuple(str(i) for i in ids), wi, bi, sc, cl))
    half = fit.elo95() if fit is not None else None
    out = {}
    for k, bot in enumerate(ids.tolist()):
        out[bot] = Standing(bot, int(games[k]), int(wins[k]), int(draws[k]),
                            int(games[k] - wins[k] - draws[k]),
                            None if fit is None else float(fit.elo[k]),
                            None if half is None else float(half[k]))
    return out


class LadderGames:
    """The finished ladder games' result columns, kept in memory: each :meth:`refresh`
    reads only the games at or past the lowest id that was still queued or running at the
    one before (a game is done once and never changes afterwards), from the index that
    holds those columns (``ix_games_standings``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: game id -> (white, black, White's score, pair, variant)
        self._rows: dict[int, tuple[int, int, float, int, str]] = {}
        #: games below this id were done (or will never be) at the last refresh
        self._low = 0
        #: changes whenever the rows do
        self.revision = 0

    def refresh(self, s: Any) -> bool:
        """Read what changed in session ``s``; returns whether ladder games are still
        queued or running.  The unsettled games are looked at before the finished ones,
        so a game that ends in between is read now or at the next refresh, never lost."""
        pending = s.scalar(select(func.min(Game.id)).where(
            Game.kind == "ladder", Game.status.in_(("queued", "running"))))
        top = s.scalar(select(func.max(Game.id))) or 0
        with self._lock:
            low = self._low
        # on the session's own DB-API connection (its transaction), all rows at once: no
        # ORM nor Core row handling for 200,000 rows (the statement is compiled for the
        # dialect, ``low`` is an int of ours)
        query = (select(Game.id, Game.white_id, Game.black_id, Game.result, Game.pair,
                        Game.variant)
                 .where(Game.kind == "ladder", Game.status == "done", Game.id >= int(low))
                 .compile(s.get_bind(), compile_kwargs={"literal_binds": True}))
        cursor = s.connection().connection.cursor()
        try:
            cursor.execute(str(query))
            rows = cursor.fetchall()
        finally:
            cursor.close()
        fetched = {gid: (w, b, SCORES[result], pair, variant)
                   for gid, w, b, result, pair, variant in rows if result in SCORES}
        with self._lock:
            if self._low == low:
                before = {gid for gid in self._rows if gid >= low}
                if before != set(fetched):
                    for gid in before:
                        del self._rows[gid]
                    self._rows.update(fetched)
                    self.revision += 1
                self._low = min(pending if pending is not None else top + 1, top + 1)
        return pending is not None

    def snapshot(self) -> list[tuple[int, int, float, int, str]]:
        """The finished games' rows, oldest first."""
        with self._lock:
            return [self._rows[gid] for gid in sorted(self._rows)]


class Ladder(State):
    """The ladder's games and the leaderboard (a part of
    :class:`~arena.server.service.Competition`)."""

    def __init__(self, folder: Any, *, db_url: Optional[str] = None) -> None:
        super().__init__(folder, db_url=db_url)
        self._ladder_games = LadderGames()
        #: a fit in the background is running; none starts before this (monotonic) time
        self._refitting = False
        self._refit_after = 0.0

    def claim_games(self, n: int) -> list[tuple[int, int, int, str, int, int, int]]:
        """Up to ``n`` queued games, now ``running``: (id, white, black, variant, pair,
        game, seed).  Test matches first, then the final's games, each oldest first, then
        the ladder's by fair share (:func:`claim_ladder`; none after the deadline).
        Several dispatchers may claim at once (threads here, or other processes on
        PostgreSQL): each claim is a write transaction of its own, the only one meanwhile
        (:meth:`writing`), and a game is taken by the conditional update that finds it
        still queued."""
        if n <= 0:
            return []
        with self.writing() as s:
            first = s.scalars(select(Game.id).where(Game.status == "queued",
                                                    Game.kind.in_(("match", "final")))
                              .order_by(_PRIORITY, Game.id).limit(n)).all()
            ids = [g for g in first if _take(s, g)]
            if len(ids) < n and not self.uploads_closed():
                ids += claim_ladder(s, n - len(ids))
            if not ids:
                return []
            rows = {i: (i, w, b, v, p, g, seed) for i, w, b, v, p, g, seed in s.execute(
                select(Game.id, Game.white_id, Game.black_id, Game.variant, Game.pair,
                       Game.game, Game.seed).where(Game.id.in_(ids))).all()}
            return [rows[g] for g in ids]

    def finish_game(self, game_id: int, record: Optional[GameRecord]) -> bool:
        """Store a game's record and mark it ``done`` in one transaction (so it counts
        once); None: the executor lost it, back to the queue (given up, ``failed``, after
        :data:`MAX_ATTEMPTS`).  False when the game was no longer running (dropped).

        The record is stored without the server's folders (the players' paths are the
        bots' places in the competition folder, ``<competition>/bots/<id>``); its result
        and the side that forfeited, if any, go in columns too (the standings' input)."""
        with self.writing() as s:
            game = s.get(Game, game_id)
            if game is None or game.status != "running":
                return False
            if record is None:
                game.status = "failed" if game.attempts >= MAX_ATTEMPTS else "queued"
                return True
            game.status, game.result = "done", record.result
            game.forfeit = record.forfeit if record.forfeit in ("white", "black") else ""
            game.finished_at = utcnow()
            # a running game has no record yet: added, not looked up first
            s.add(Record(game_id=game_id, record=self.public_record(record.to_json())))
            return True

    def public_record(self, text: str) -> str:
        """A record's JSON text without the competition folder's path (as JSON writes it)."""
        folder = json.dumps(str(self.folder))[1:-1]
        return text.replace(folder, "<competition>")

    def records(self, between: set[int]) -> list[GameRecord]:
        """Every finished ladder game between two of the bots ``between`` (ids), oldest
        first, as records (parsed from their JSON: for exports, not for the pages)."""
        with self.sessions() as s:
            rows = s.execute(select(Game.white_id, Game.black_id, Record.record)
                             .join(Record, Record.game_id == Game.id)
                             .where(Game.status == "done", Game.kind == "ladder")
                             .order_by(Game.id)).all()
        return [GameRecord.from_dict(json.loads(r)) for w, b, r in rows
                if w in between and b in between and r]

    def leaderboard(self, *, fresh: bool = True) -> list[dict[str, Any]]:
        """One row per active bot per variant: ``variant``, ``rank``, ``bot``, ``id``,
        ``version``, ``owner``, ``elo``, ``elo95``, ``games``, ``score`` (points per game)
        and W/D/L, from the ladder games between active bots, rated like ``arena rate``
        (Bradley-Terry, the prior for flagged bots, pair-clustered intervals:
        :func:`fit_standings`) and ranked by Elo (bots play different numbers of games on
        a ladder; bots without a game have no rank).

        The finished games' result columns are kept in memory and read incrementally
        (:class:`LadderGames`); the fit is kept until they or the active bots change.
        ``fresh`` False (the pages): while games are being played, the latest fit is
        returned at once and a new one is made in the background (at most one at a time,
        at most every :data:`REFIT_EVERY_S`): a page never waits for a fit, and shows one
        that is at most a moment behind.  When no game is queued or running, and always
        with ``fresh``, the rows are exact."""
        if fresh:
            return self.cached("leaderboard", lambda: self._leaderboard(True), stale_ok=False)
        return self.cached("leaderboard-shown", lambda: self._leaderboard(False))

    def _leaderboard(self, fresh: bool) -> list[dict[str, Any]]:
        with self.sessions() as s:
            bots = {i: (name, version, owner) for i, name, version, owner in s.execute(
                select(Bot.id, Bot.name, Bot.version, User.name)
                .join(User, User.id == Bot.owner_id).where(Bot.status == "active")).all()}
            playing = self._ladder_games.refresh(s)
        key = (self._ladder_games.revision, tuple(sorted(bots.items())))
        with self._board_lock:
            if self._board_cache[0] == key:
                return list(self._board_cache[1])
            stale = self._board_cache[1] if self._board_cache[0] is not None else None
        if not fresh and playing and stale is not None:
            self._refit_later()
            return list(stale)
        with self._board_fit:  # one fit at a time: concurrent requests wait for its result
            with self._board_lock:
                if self._board_cache[0] == key:
                    return list(self._board_cache[1])
            rows = self._fit_leaderboard(bots, self._ladder_games.snapshot())
            with self._board_lock:
                self._board_cache = (key, rows)
            return rows

    def _refit_later(self) -> None:
        """Fit the leaderboard again in a thread of its own (one at a time, at most every
        :data:`REFIT_EVERY_S`), then let the pages see it."""
        with self._board_lock:
            if self._refitting or time.monotonic() < self._refit_after:
                return
            self._refitting = True

        def refit() -> None:
            started = time.monotonic()
            try:
                self._leaderboard(True)
            except Exception:  # noqa: BLE001 - the next page asks again
                pass
            finally:
                with self._board_lock:
                    self._refitting = False
                    took = time.monotonic() - started
                    self._refit_after = time.monotonic() + max(REFIT_EVERY_S, 4 * took)
                self.uncache("leaderboard-shown")

        threading.Thread(target=refit, name="leaderboard-fit", daemon=True).start()

    def _fit_leaderboard(self, bots: dict[int, tuple[str, int, str]],
                         games: list[tuple[int, int, float, int, str]]) -> list[dict[str, Any]]:
        """The leaderboard's rows for the active ``bots`` (id -> name, version, owner) from
        the finished ladder ``games`` (white, black, White's score, pair, variant)."""
        games = [g for g in games if g[0] in bots and g[1] in bots]
        rows: list[dict[str, Any]] = []
        for variant in self.config.variants:
            chosen = [g for g in games if g[4] == variant.name]
            table = fit_standings([g[0] for g in chosen], [g[1] for g in chosen],
                                  [g[2] for g in chosen], [g[3] for g in chosen])
            ranked = sorted(table.values(), key=lambda t: (-(t.elo or 0.0), bots[t.bot][0],
                                                           t.bot))
            for rank, t in enumerate(ranked, 1):
                name, version, owner = bots[t.bot]
                rows.append({
                    "variant": variant.name, "rank": rank, "bot": name, "id": t.bot,
                    "version": version, "owner": owner,
                    "elo": None if t.elo is None else round(t.elo, 1) + 0.0,
                    "elo95": None if t.elo95 is None else round(t.elo95, 1),
                    "games": t.games, "score": None if t.score is None else round(t.score, 3),
                    "wins": t.wins, "draws": t.draws, "losses": t.losses})
            for bot in sorted(set(bots) - set(table), key=lambda i: (bots[i][0], i)):
                name, version, owner = bots[bot]  # active, no games yet
                rows.append({"variant": variant.name, "rank": None, "bot": name, "id": bot,
                             "version": version, "owner": owner, "elo": None, "elo95": None,
                             "games": 0, "score": None, "wins": 0, "draws": 0, "losses": 0})
        return rows

    def queue_idle_games(self) -> int:
        """With ``ladder.idle_games`` on, while nothing is queued: per variant one
        colour-swapped pair between the active bot with the fewest ladder games and one of
        those nearest to it in rating (:func:`choose_idle_pair`), so that the ratings keep
        converging while the judge has nothing else to do (the judge asks when it is not
        paused).  Nothing after the deadline or with fewer than two active bots.  Returns
        the games queued."""
        if not self.config.ladder.idle_games or self.uploads_closed():
            return 0
        with self.sessions() as s:  # the judge asks often: the cheap reasons first
            if s.scalar(select(func.count(Game.id)).where(Game.status == "queued")) or (
                    s.scalar(select(func.count(Bot.id)).where(Bot.status == "active")) or 0) < 2:
                return 0
        rows = self.leaderboard(fresh=False)
        rng = random.Random(secrets.randbits(64))
        queued = 0
        with self.writing() as s:
            if s.scalar(select(func.count(Game.id)).where(Game.status == "queued")):
                return 0  # uploads' games, the final, test matches: theirs first
            active = set(s.scalars(select(Bot.id).where(Bot.status == "active")).all())
            # the games being played count too (the leaderboard has only the finished ones)
            running = s.execute(select(Game.white_id, Game.black_id, Game.variant).where(
                Game.status == "running", Game.kind == "ladder")).all()
            pair = s.scalar(select(func.max(Game.pair))) or 0
            for variant in self.config.variants:
                mine = [r for r in rows if r["variant"] == variant.name and r["id"] in active]
                games = {r["id"]: r["games"] for r in mine}
                for w, b, v in running:
                    for bot in (w, b):
                        if v == variant.name and bot in games:
                            games[bot] += 1
                chosen = choose_idle_pair(
                    games, {r["id"]: r["elo"] for r in mine if r["elo"] is not None}, rng)
                if chosen is not None:
                    pair += 1
                    queued += queue_pair(s, chosen[0], chosen[1], variant.name, pair)
        return queued

    def ladder_ratings(self) -> dict[str, dict[int, float]]:
        """Per variant, the Elo of every active bot that has one (from the leaderboard)."""
        out: dict[str, dict[int, float]] = {v.name: {} for v in self.config.variants}
        for row in self.leaderboard():
            if row["elo"] is not None:
                out.setdefault(row["variant"], {})[row["id"]] = row["elo"]
        return out
