"""Closing a class competition, on the library over a real SQLite file (games played by
hand, as the judge's workers would return them): results for the whole roster with shared
places and tie-breaks, finals as rows that a moved deadline never reopens and that are
played again explicitly, interim standings fair at every moment, the final entry a
participant chooses, refused uploads and similar code in the teacher's overview, the games
list's end, and the migration of a final played before finals had rows.  The same on real
server processes and in a browser: tests/test_server_class.py.  Skipped with a reason where
the ``server`` extra is not installed."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path
from typing import Iterator

import pytest
from click.testing import CliRunner

pytest.importorskip("sqlalchemy", reason="the server extra is not installed "
                                         "(pip install -e '.[server]')")
pytest.importorskip("fastapi", reason="the server extra is not installed")

from arena.cli import cli  # noqa: E402
from arena.server.config import FinalSettings, ServerConfig, UploadLimits  # noqa: E402
from arena.server.service import (OPERATOR, Competition, Forbidden, NotFound,  # noqa: E402
                                  Refused, init_competition)
from tests.test_server_final import SOON, _active, _labels, _passed  # noqa: E402
from tests.test_server_judge import _finish, _random_zip, _zip  # noqa: E402
from tests.synth_records import make_record  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def comp(tmp_path: Path) -> Iterator[Competition]:
    init_competition(tmp_path / "c", ServerConfig(pairs=1, deadline=SOON,
                                                  upload=UploadLimits(per_hour=100),
                                                  final=FinalSettings(pairs=1)))
    c = Competition(tmp_path / "c")
    try:
        yield c
    finally:
        c.close()


def _score(strength: dict[int, int], w: int, b: int) -> float:
    sw, sb = strength.get(w, 0), strength.get(b, 0)
    return 1.0 if sw > sb else 0.0 if sw < sb else 0.5


def _play_final(comp: Competition, strength: dict[int, int], n: int = 1000) -> int:
    labels = _labels(comp)
    played = 0
    for gid, w, b, variant, pair, _, _ in comp.claim_games(n):
        comp.finish_game(gid, make_record(labels[w], labels[b], _score(strength, w, b),
                                          variant=variant, game_id=f"g{gid}", pair=pair))
        played += 1
    return played


def _class_of_twelve(comp: Competition) -> tuple[dict[str, int], dict[int, int]]:
    """A roster of 12 and an admin: ten with an active bot (three of them level: they draw
    each other and score alike against the rest), one whose only upload was rejected, one
    who never uploaded.  Returns the bots by owner and their strengths."""
    users = {f"s{i:02d}": comp.authenticate(comp.add_user(f"s{i:02d}")) for i in range(1, 13)}
    comp.add_user("teacher", admin=True)
    bots = {name: _active(comp, users[name], f"bot-{name}") for name in list(users)[:10]}
    rejected = comp.submit(users["s11"], "x.zip", _random_zip("broken"))["id"]
    assert comp.claim_check() is not None
    _finish(comp, rejected, passed=False)
    # strengths: s01 strongest; s04, s05, s06 level; the others below in order
    strength = {bots["s01"]: 20, bots["s02"]: 19, bots["s03"]: 18, bots["s04"]: 10,
                bots["s05"]: 10, bots["s06"]: 10, bots["s07"]: 5, bots["s08"]: 4,
                bots["s09"]: 3, bots["s10"]: 2}
    return bots, strength


def test_the_results_list_the_whole_roster_with_shared_places(comp: Competition) -> None:
    bots, strength = _class_of_twelve(comp)
    _play_final(comp, strength)  # the ladder's games
    _passed(comp)
    assert comp.start_final() == 45 * 2
    assert _play_final(comp, strength) == 90 and comp.finish_final()
    result = CliRunner().invoke(cli, ["server", "results", str(comp.folder)])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 12 and "final 1 (the deadline, 1 pair(s) per meeting)" in result.stderr
    by = {r["participant"]: r for r in rows}
    level = [by[n] for n in ("s04", "s05", "s06")]
    assert {(r["rank"], r["place"], r["points"], r["h2h"], r["sb"]) for r in level} == {
        ("4", "4=", "10", "2", level[0]["sb"])}
    assert float(level[0]["sb"]) > 0
    assert [by[n]["place"] for n in ("s01", "s02", "s03", "s07", "s08", "s09", "s10")] == [
        "1", "2", "3", "7", "8", "9", "10"]
    assert all(by[n]["h2h"] == "" for n in ("s01", "s02", "s07"))  # nobody level with them
    assert (by["s11"]["status"], by["s11"]["rank"], by["s11"]["bot"]) == (
        "no accepted bot", "", "")
    assert (by["s12"]["status"], by["s12"]["rank"]) == ("no upload", "")
    assert "teacher" not in by  # an admin without a bot is no participant
    assert {r["final"] for r in rows} == {"1"}
    # the JSON says the same, with the rule it ranked by
    table = comp.public_final(comp.final_view())["tables"][0]
    assert table["ranked_by"] == "points" and "points" in table["ranking"]
    assert [(r["participant"], r["place"], r["status"]) for r in table["rows"]] == [
        (r["participant"], r["place"], r["status"]) for r in rows]


def test_a_final_is_not_changed_by_the_settings_and_is_played_again_explicitly(
        comp: Competition) -> None:
    import dataclasses

    bots, strength = _class_of_twelve(comp)
    _passed(comp)
    comp.config = dataclasses.replace(comp.config, deadline=comp.config.deadline)
    deadline = comp.config.deadline
    assert comp.start_final() == 90
    before = comp.final_state()
    played = {"deadline": deadline.isoformat(), "pairs": 1, "variants": ["nine-mens-morris"]}
    assert before["settings"] == {**played, "server_yaml": played}
    with pytest.raises(Refused, match="still being played"):
        comp.rerun_final(OPERATOR)
    _play_final(comp, strength)
    assert comp.finish_final()
    frozen = comp.results()
    # the deadline moves a week later: uploads stay closed, the server says what to do
    comp.config = dataclasses.replace(comp.config, deadline=SOON)
    assert not comp.deadline_passed() and comp.uploads_closed()
    alice = comp.authenticate(comp.add_user("late-alice"))
    with pytest.raises(Forbidden, match="do not reopen"):
        comp.submit(alice, "a.zip", _random_zip("late"))
    conflict = comp.settings_conflict()
    assert "deadline" in conflict and "arena server final" in conflict and "--rerun" in conflict
    assert comp.results() == frozen  # still final 1's
    assert comp.start_final() == 0 and comp.claim_games(10) == []  # no ladder either
    # only admins play a final again; with --pairs
    with pytest.raises(Forbidden):
        comp.rerun_final(comp.authenticate(comp.add_user("s13")))
    state = comp.rerun_final(OPERATOR, pairs=2)
    assert (state["number"], state["games_total"], state["bots"]) == (2, 180, before["bots"])
    assert "re-run of final 1" in state["reason"] and not comp.settings_conflict()
    assert comp.final_view()["status"] == "running"
    assert comp.final_view(1)["tables"] == before_tables(comp)
    _play_final(comp, {b: -s for b, s in strength.items()})  # the order turns over
    assert comp.finish_final()
    kind, rows = comp.results()
    assert kind == "final 2" and rows[0]["participant"] == "s10" and rows[0]["final"] == 2
    assert comp.results(1) == frozen
    with pytest.raises(NotFound):
        comp.final_view(7)


def before_tables(comp: Competition) -> list[dict[str, object]]:
    """Final 1's frozen tables, as stored."""
    return comp.final_state(number=1)["tables"]


def test_interim_standings_are_fair_at_every_moment(comp: Competition) -> None:
    users = [comp.authenticate(comp.add_user(f"p{i}")) for i in range(10)]
    bots = [_active(comp, u, f"b{i}") for i, u in enumerate(users)]
    _play_final(comp, {})
    _passed(comp)
    assert comp.start_final() == 90  # 10 bots, pairs: 1
    labels = _labels(comp)
    spreads = []
    while True:
        claimed = comp.claim_games(2)  # two workers
        if not claimed:
            break
        for gid, w, b, variant, pair, _, _ in claimed:
            comp.finish_game(gid, make_record(labels[w], labels[b], 0.5, variant=variant,
                                              game_id=f"g{gid}", pair=pair))
        rows = comp.final_view()["tables"][0]["rows"]
        games = [r["games"] for r in rows if r["status"] == "entry"]
        assert len(games) == 10
        spreads.append(max(games) - min(games))
    assert len(spreads) == 45 and max(spreads) <= 2, spreads
    assert comp.finish_final()
    assert {r["games"] for r in comp.final_view()["tables"][0]["rows"]} == {18}
    assert len(bots) == 10


def test_a_participant_chooses_their_final_entry(comp: Competition) -> None:
    alice, bob = (comp.authenticate(comp.add_user(n)) for n in ("alice", "bob"))
    first = _active(comp, alice, "first")
    second = _active(comp, alice, "second")
    b = _active(comp, bob, "b")
    assert comp.entry_of(alice.id) == second  # by default the latest
    with pytest.raises(NotFound):
        comp.choose_entry(bob, first)  # not his bot
    comp.choose_entry(alice, first)
    assert comp.entry_of(alice.id) == first
    rejected = comp.submit(alice, "r.zip", _random_zip("third"))["id"]
    assert comp.claim_check() is not None
    _finish(comp, rejected, passed=False)
    with pytest.raises(Refused, match="rejected"):
        comp.choose_entry(alice, rejected)
    assert comp.entry_of(alice.id) == first  # a newer upload does not take it over
    _passed(comp)
    with pytest.raises(Forbidden, match="fixed"):
        comp.choose_entry(alice, second)
    assert comp.start_final() == 2
    assert comp.final_state()["bots"] == sorted([first, b])
    # the overview marks the entries
    uploads = {u["id"]: u for u in comp.overview(OPERATOR)["uploads"]}
    assert [i for i, u in uploads.items() if u["entry"]] == sorted([first, b], reverse=True)
    assert uploads[rejected]["verdict"] == "FAIL: x" and uploads[rejected]["status"] == "rejected"


def test_refused_uploads_and_similar_code_are_in_the_teachers_overview(
        comp: Competition) -> None:
    alice, bob, carol, dave = (comp.authenticate(comp.add_user(n))
                               for n in ("alice", "bob", "carol", "dave"))
    with pytest.raises(Refused):
        comp.submit(alice, "nested.zip", _zip({"a/b/c/bot.yaml": "name: x\n"}))
    with pytest.raises(Refused):
        comp.submit(alice, "notes.txt", b"hello")
    with pytest.raises(Forbidden):
        comp.overview(alice)
    refused = comp.overview(OPERATOR)["refused"]
    assert [(r["participant"], r["filename"]) for r in refused] == [
        ("alice", "notes.txt"), ("alice", "nested.zip")]
    assert "a/b/c/bot.yaml" in refused[1]["reason"] and refused[1]["at"]

    def folder_zip(bot: str, name: str, rename: dict[str, str] | None = None) -> bytes:
        files = {}
        for f in ("bot.py", "bot.yaml"):
            text = (ROOT / "bots" / bot / f).read_text().replace(f"name: {bot}", f"name: {name}")
            for old, new in (rename or {}).items():
                text = text.replace(old, new)
            files[f] = text
        return _zip(files)

    # alice: greedy; bob: a byte-identical copy; carol: greedy with its names changed;
    # dave: random (an independent bot)
    uploads = {"alice": folder_zip("greedy", "mine"), "bob": folder_zip("greedy", "copy"),
               "carol": folder_zip("greedy", "disguised", {
                   "score_move": "evaluate", "open_twos": "count_pairs", "position": "pos",
                   "threat": "danger", "replies": "answers", "# the opponent's threats": ""}),
               "dave": folder_zip("random", "own")}
    for who, data in uploads.items():
        viewer = {"alice": alice, "bob": bob, "carol": carol, "dave": dave}[who]
        bot = comp.submit(viewer, f"{who}.zip", data)["id"]
        assert comp.claim_check() is not None
        _finish(comp, bot)
    with pytest.raises(Forbidden):
        comp.similar_uploads(bob)
    pairs = comp.similar_uploads(OPERATOR)
    flagged = {frozenset((p["a"].split(":")[0], p["b"].split(":")[0]))
               for p in pairs if p["suspect"]}
    assert flagged == {frozenset(("alice", "bob")), frozenset(("alice", "carol")),
                       frozenset(("bob", "carol"))}
    copy = next(p for p in pairs if {p["a"][:5], p["b"][:3]} == {"alice", "bob"})
    assert ["bot.py", "bot.py"] in copy["identical_files"] and copy["a_id"] and copy["b_id"]
    assert not any("dave" in p["a"] + p["b"] for p in pairs if p["suspect"])


def test_the_games_list_of_the_api_ends(comp: Competition) -> None:
    alice, bob = (comp.authenticate(comp.add_user(n)) for n in ("alice", "bob"))
    _active(comp, alice, "a")
    _active(comp, bob, "b")
    games = []
    page = 1
    while True:
        got = comp.games(limit=1, page=page)
        if not got:
            break
        games += got
        page += 1
        assert page < 10
    assert len(games) == 2 and len({g["id"] for g in games}) == 2
    assert comp.games(limit=1, page=50) == []
    assert comp.games_page(per_page=1, page=50)["games"] == [games[-1]]  # the pages' clamp


def test_migration_0006_makes_a_final_played_before_final_1(tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config

    from arena.server.db import MIGRATIONS, migrate, open_engine

    engine = open_engine(f"sqlite:///{tmp_path / 'old.db'}")
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0005")
    state = {"status": "done", "bots": [1, 2], "started": "2026-06-01T10:00:00+00:00",
             "finished": "2026-06-01T11:00:00+00:00", "games_done": 2, "games_total": 2,
             "tables": [{"variant": "nine-mens-morris", "rows": []}]}
    with sqlite3.connect(tmp_path / "old.db") as db:
        db.execute("INSERT INTO users VALUES (1, 'a', 'x', 0, '2026-01-01')")
        for i in (1, 2):
            db.execute("INSERT INTO bots (id, owner_id, name, version, status, verdict, "
                       "check_log, folder, sha256, created_at, archive_bytes, folder_bytes) "
                       "VALUES (?, 1, 'b', ?, 'active', '', '', '', '', '2026-01-01', 0, 0)",
                       (i, i))
        for i, kind in ((1, "ladder"), (2, "final"), (3, "final")):
            db.execute("INSERT INTO games (id, white_id, black_id, variant, pair, game, seed, "
                       "status, attempts, result, created_at, kind, forfeit) VALUES (?, 1, 2, "
                       "'nine-mens-morris', ?, 0, 0, 'done', 1, '1-0', '2026-01-01', ?, '')",
                       (i, i, kind))
        db.execute("INSERT INTO settings VALUES ('final', ?)", (json.dumps(state),))
    migrate(engine)
    engine.dispose()
    with sqlite3.connect(tmp_path / "old.db") as db:
        assert db.execute("SELECT id, final_id FROM games ORDER BY id").fetchall() == [
            (1, None), (2, 1), (3, 1)]
        row = db.execute("SELECT id, status, entries, games_done, tables FROM finals").fetchall()
        assert row == [(1, "done", "[1, 2]", 2, json.dumps(state["tables"]))]
        assert db.execute("SELECT count(*) FROM settings WHERE key = 'final'").fetchone() == (0,)
