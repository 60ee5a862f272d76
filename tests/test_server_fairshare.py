"""The ladder's fair share of games between participants (``claim_ladder`` in
``arena/server/ladder.py``): the library on a real SQLite file (and the claims at once on
PostgreSQL too, where it is installed), games handed out by ``claim_games`` and stored by
hand as the judge's dispatcher would, with records made here.  A ladder game is its pair's
first bot's owner's (the upload that queued it).  Skipped with a reason where the ``server``
extra is not installed."""

from __future__ import annotations

import random
import re
import sqlite3
import threading
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import pytest

pytest.importorskip("sqlalchemy", reason="the server extra is not installed "
                                         "(pip install -e '.[server]')")
pytest.importorskip("fastapi", reason="the server extra is not installed")

from arena.server.config import ServerConfig, UploadLimits  # noqa: E402
from arena.server.service import Competition, Viewer, init_competition  # noqa: E402
from tests.synth_records import make_record  # noqa: E402
from tests.test_server_final import _active, _labels, comp  # noqa: E402,F401 - comp: a fixture

try:  # PostgreSQL's throwaway cluster, where PostgreSQL and psycopg are installed
    from tests.test_server_postgres import postgres  # noqa: F401 - a fixture
except pytest.skip.Exception as missing:  # no psycopg: the PostgreSQL test skips, not these
    _NO_POSTGRES = str(missing)

    @pytest.fixture(scope="module")
    def postgres() -> Iterator[Callable[[str], str]]:
        pytest.skip(_NO_POSTGRES)
        yield lambda name: name  # never reached

Claimed = tuple[int, int, int, str, int, int, int]


def _people(comp: Competition, *names: str) -> list[Viewer]:
    return [comp.authenticate(comp.add_user(n)) for n in names]


def _owner_of(comp: Competition) -> Callable[[Claimed], str]:
    """A claimed game's owner (by name): its pair's first bot's (White of game 0, Black of
    game 1), the upload that queued it."""
    owners = {b["id"]: b["owner"] for b in comp.bots()}
    return lambda g: owners[g[1] if g[5] == 0 else g[2]]


def _store(comp: Competition, game: Claimed) -> None:
    """Store a claimed game's record (a draw), as the judge does when it comes back."""
    labels = _labels(comp)
    gid, w, b, variant, pair, _, _ = game
    assert comp.finish_game(gid, make_record(labels[w], labels[b], 0.5, variant=variant,
                                             game_id=f"g{gid}", pair=pair))


def _queue(comp: Competition) -> dict[str, int]:
    """Queued ladder games by owner (their pair's first bot's)."""
    from sqlalchemy import case, func, select

    from arena.server.models import Bot, Game, User

    first = case((Game.game == 0, Game.white_id), else_=Game.black_id)
    with comp.sessions() as s:
        return dict(s.execute(select(User.name, func.count()).select_from(Game)
                              .join(Bot, Bot.id == first).join(User, User.id == Bot.owner_id)
                              .where(Game.kind == "ladder", Game.status == "queued")
                              .group_by(User.name)).all())


def _early_and_late(comp: Competition) -> tuple[Viewer, Viewer]:
    """alice uploads six bots (of six names: 2 + 4 + ... + 10 = 30 ladder games between
    them, all hers), then bob one (12 games, his, against alice's six)."""
    alice, bob = _people(comp, "alice", "bob")
    for i in range(6):
        _active(comp, alice, f"a{i}")
    _active(comp, bob, "b0")
    assert _queue(comp) == {"alice": 30, "bob": 12}
    return alice, bob


# ---- the order games are handed out in ------------------------------------------------


def test_a_late_participants_games_start_at_once_beside_an_early_ones_many(
        comp: Competition) -> None:
    """alice queued 30 ladder games before bob's upload queued his 12: with two games at a
    time, bob's first is handed out with the first claim, and the two share the dispatcher
    game for game (each oldest first) until bob's are done; then alice's go on."""
    check_late_participant(comp)


def check_late_participant(comp: Competition) -> None:
    _early_and_late(comp)
    owner = _owner_of(comp)
    running = comp.claim_games(2)
    assert [owner(g) for g in running] == ["alice", "bob"]
    order = list(running)
    while running:  # the dispatcher: a game ends (the oldest running), one more starts
        _store(comp, running.pop(0))
        more = comp.claim_games(1)
        running += more
        order += more
    assert [owner(g) for g in order] == ["alice", "bob"] * 12 + ["alice"] * 18
    for who in ("alice", "bob"):  # each participant's games oldest first
        ids = [g[0] for g in order if owner(g) == who]
        assert ids == sorted(ids)
    assert _queue(comp) == {}


def test_an_owner_with_games_running_is_passed_over_for_one_with_none(
        comp: Competition) -> None:
    """The participant with the fewest ladder games running goes first, even when the turn
    and the oldest queued game are another's."""
    alice, bob, carol = _people(comp, "alice", "bob", "carol")
    _active(comp, alice, "a0")
    _active(comp, alice, "a1")  # alice: 2 games, the oldest
    _active(comp, bob, "b0")  # bob: 4
    _active(comp, carol, "c0")  # carol: 6
    owner = _owner_of(comp)
    first = [comp.claim_games(1)[0] for _ in range(3)]  # one each, in the circle's order
    assert [owner(g) for g in first] == ["alice", "bob", "carol"]
    _store(comp, first[1])
    _store(comp, first[2])
    # the turn after carol's is alice's, and her game is the oldest queued, but hers is
    # still running and bob and carol have none
    assert owner(comp.claim_games(1)[0]) == "bob"
    assert owner(comp.claim_games(1)[0]) == "carol"
    assert owner(comp.claim_games(1)[0]) == "alice"  # one running each: her turn


def test_a_slow_participant_holds_no_more_than_their_share_of_the_workers(
        comp: Competition) -> None:
    """Four games at a time: alice's games take long (never end here), bob's end at once.
    While bob has games queued alice holds two of the four places, never more; once his
    are done, hers fill all four."""
    _early_and_late(comp)
    owner = _owner_of(comp)
    running: list[Claimed] = []
    for _ in range(20):
        running += comp.claim_games(4 - len(running))
        held = [owner(g) for g in running]
        if "bob" not in _queue(comp) and "bob" not in held:
            break
        assert held.count("alice") == 2, held
        for g in [g for g in running if owner(g) == "bob"]:
            _store(comp, g)
            running.remove(g)
    running += comp.claim_games(4 - len(running))
    assert [owner(g) for g in running] == ["alice"] * 4
    assert _queue(comp) == {"alice": 26}


def test_a_new_participants_first_game_waits_behind_at_most_one_game_of_each_other(
        comp: Competition) -> None:
    """One game at a time among four participants with games queued: a fifth's upload is
    served within the next five games, each of the five once (round-robin over the
    participants, not the oldest participant's queue first)."""
    alice, bob, carol, dave, eve = _people(comp, "alice", "bob", "carol", "dave", "eve")
    _active(comp, alice, "a0")
    for who, name in ((bob, "b0"), (carol, "c0"), (dave, "d0"), (alice, "a1")):
        _active(comp, who, name)
    assert _queue(comp) == {"bob": 2, "carol": 4, "dave": 6, "alice": 8}
    owner = _owner_of(comp)

    def play_one() -> str:
        g = comp.claim_games(1)[0]
        _store(comp, g)
        return owner(g)

    assert [play_one() for _ in range(3)] == ["alice", "bob", "carol"]
    _active(comp, eve, "e0")  # 10 games, against the five others
    owner = _owner_of(comp)
    nxt = [play_one() for _ in range(5)]
    assert nxt == ["dave", "eve", "alice", "bob", "carol"]
    rest = []
    while comp.status()["games"].get("queued"):
        rest.append(play_one())
    # bob's two are done: the others take turns (dave, eve, alice, carol) while they have some
    assert rest[:8] == ["dave", "eve", "alice", "carol"] * 2


def test_test_matches_and_the_final_come_before_the_ladder(comp: Competition) -> None:
    """A test match asked for while ladder games are queued is handed out first (the
    final's games too: tests/test_server_final.py)."""
    alice, bob = _early_and_late(comp)
    bots = {b["owner"]: b["id"] for b in comp.bots()}
    match = comp.request_match(bob, bots["bob"], bots["alice"])
    got = comp.claim_games(3)
    assert got[0][0] == match
    assert [_owner_of(comp)(g) for g in got[1:]] == ["alice", "bob"]


def test_a_requeued_game_of_a_retired_bot_is_still_handed_out(comp: Competition) -> None:
    """A game whose pair's first bot was retired while it ran, then lost by the executor,
    is back in the queue: it comes after the active bots' games, and is not left behind."""
    alice, bob = _people(comp, "alice", "bob")
    _active(comp, alice, "a0")
    _active(comp, bob, "b0")  # bob: 2 games
    bobs = comp.claim_games(2)
    b0 = next(b["id"] for b in comp.bots() if b["owner"] == "bob")
    comp.retire(b0, bob)  # his running games go on
    for g in bobs:
        assert comp.finish_game(g[0], None)  # the executor lost it: queued again
    _active(comp, alice, "a1")  # alice: 2 games against a0 (b0 is retired)
    got = comp.claim_games(10)
    owner = _owner_of(comp)
    assert [owner(g) for g in got] == ["alice", "alice", "bob", "bob"]
    assert [g[0] for g in got[2:]] == [g[0] for g in bobs]
    assert comp.claim_games(10) == []


# ---- at once, and its cost ---------------------------------------------------------------


def test_claims_at_once_never_hand_a_game_out_twice(tmp_path: Path) -> None:
    check_claims_at_once(tmp_path, None)


def test_claims_at_once_on_postgresql(postgres: Callable[[str], str], tmp_path: Path) -> None:
    check_claims_at_once(tmp_path, postgres("fairshare"))


def check_claims_at_once(tmp_path: Path, url: Optional[str]) -> None:
    """Two competitions open on one database (as two server processes would be), each
    with two dispatcher threads claiming one to three games at a time until none is left:
    every queued game is handed out exactly once, with one attempt."""
    from sqlalchemy import func, select

    from arena.server.models import Game

    init_competition(tmp_path / "c", ServerConfig(pairs=1, db_url=url,
                                                  upload=UploadLimits(per_hour=100)))
    comps = [Competition(tmp_path / "c"), Competition(tmp_path / "c")]
    try:
        check_late_participant(comps[0])  # the order on this database too
        carol, dave = _people(comps[0], "carol", "dave")
        for who, name in ((carol, "c0"), (dave, "d0"), (carol, "c1")):
            _active(comps[0], who, name)
        queued = sum(_queue(comps[0]).values())
        assert queued == 14 + 16 + 18
        got: list[list[int]] = [[] for _ in range(4)]
        errors: list[BaseException] = []

        def dispatcher(k: int) -> None:
            rng = random.Random(k)
            try:
                while True:
                    claimed = comps[k % 2].claim_games(rng.randint(1, 3))
                    if not claimed:
                        return
                    got[k] += [g[0] for g in claimed]
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=dispatcher, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not errors and not any(t.is_alive() for t in threads)
        every = [g for ids in got for g in ids]
        assert len(every) == len(set(every)) == queued
        with comps[0].sessions() as s:
            assert s.execute(select(Game.attempts, func.count()).where(
                Game.status == "running").group_by(Game.attempts)).all() == [
                    (1, queued)]
    finally:
        for c in comps:
            c.close()


def test_a_claim_reads_the_queue_by_its_indexes_whatever_its_length(
        comp: Competition) -> None:
    """A claim's statements are as many with 2,042 games queued as with 42, and none of
    them scans the games (SQLite's plans): the participants' oldest games come from the
    partial indexes of the queued ladder games, a step per active bot."""
    from sqlalchemy import event

    from arena.server.ladder import queue_pair

    _early_and_late(comp)
    statements: list[tuple[str, Any]] = []

    def seen(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        statements.append((statement, parameters))

    def claim() -> list[tuple[str, Any]]:
        statements.clear()
        event.listen(comp.engine, "before_cursor_execute", seen)
        try:
            assert len(comp.claim_games(1)) == 1
        finally:
            event.remove(comp.engine, "before_cursor_execute", seen)
        return list(statements)

    few = claim()
    bots = [b["id"] for b in comp.bots()]
    with comp.writing() as s:  # 1,000 more pairs, of every bot's
        for pair in range(1, 1001):
            queue_pair(s, bots[pair % len(bots)], bots[(pair + 1) % len(bots)],
                       "nine-mens-morris", 10_000 + pair)
    many = claim()
    assert len(many) == len(few) <= 10
    db = sqlite3.connect(str(comp.folder / "arena.db"))
    try:
        plans = {statement: [row[3] for row in db.execute("EXPLAIN QUERY PLAN " + statement,
                                                           parameters)]
                 for statement, parameters in many if statement.lstrip().startswith("SELECT")}
    finally:
        db.close()
    for statement, plan in plans.items():
        assert not [step for step in plan if re.match(r"SCAN games\b", step)], (statement,
                                                                                 plan)
    used = " ".join(step for plan in plans.values() for step in plan)
    assert "ix_games_queued_white" in used and "ix_games_queued_black" in used
