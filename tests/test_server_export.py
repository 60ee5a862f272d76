"""A competition's games taken away (``arena server export``, and ``arena rate|report|export``
on a competition folder): a competition of three uploads whose ladder, test match and final
are real games (the judge's game job played here, in a thread pool), then exported and
rated.  The competition folder is only read: its files keep their bytes.  Skipped with a
reason where the ``server`` extra is not installed."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import os
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from click.testing import CliRunner, Result

pytest.importorskip("sqlalchemy", reason="the server extra is not installed "
                                         "(pip install -e '.[server]')")
pytest.importorskip("fastapi", reason="the server extra is not installed")

from arena.cli import cli  # noqa: E402
from arena.errors import ArenaError  # noqa: E402
from arena.records import read_records  # noqa: E402
from arena.server import export as export_module  # noqa: E402
from arena.server.config import parse_server_config  # noqa: E402
from arena.server.export import (competition_records, default_kind,  # noqa: E402
                                 export_competition, is_competition_folder)
from arena.server.service import OPERATOR, Competition, init_competition  # noqa: E402
from tests.test_server_judge import _finish, _random_zip  # noqa: E402

if importlib.util.find_spec("psycopg") is not None:  # the cluster of the PostgreSQL tests
    from tests.test_server_postgres import postgres  # noqa: E402, F401

BOTS = {"alice": "quick", "bob": "steady", "carol": "wild"}


def _play(comp: Competition, n: int) -> int:
    """Claim up to ``n`` queued games and play them for real, as the judge's workers do
    (a game the machine was too busy to judge is played again).  Returns how many were
    stored."""
    from arena.jobs import GameJob, play_job
    from arena.schedule import Slot
    from arena.variants import get_variant

    def job(claimed: tuple[int, int, int, str, int, int, int]) -> GameJob:
        gid, white, black, variant, pair, game, seed = claimed
        slot = Slot(index=gid, game_id=f"g{gid}", variant=get_variant(variant), round=1,
                    pair=pair, game=game, white=0, black=1, opening=(), seed=seed)
        return GameJob(slot=slot, white=comp.bot_spec(white), black=comp.bot_spec(black),
                       time_control=comp.config.time_control, tournament=comp.config.name,
                       isolation=comp.config.isolation_object())

    stored = 0
    with ThreadPoolExecutor(2) as pool:
        while stored < n and (claimed := comp.claim_games(n - stored)):
            for (gid, *_), record in zip(claimed, pool.map(lambda c: play_job(job(c)),
                                                           claimed)):
                comp.finish_game(gid, None if record.void else record)
                stored += not record.void
    return stored


@pytest.fixture(scope="module")
def competition(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A closed competition folder: three participants' bots, their ladder (6 games), a
    test match (1), the final (6) and a re-run of it (final 2, 6), all played."""
    folder = tmp_path_factory.mktemp("export") / "class"
    soon = datetime.now(timezone.utc) + timedelta(days=1)
    config = parse_server_config({"name": "class", "pairs": 1, "isolation": "none",
                                  "time": 2000, "final": {"pairs": 1},
                                  "deadline": soon.isoformat()})
    init_competition(folder, config)
    comp = Competition(folder)
    try:
        viewers = {name: comp.authenticate(comp.add_user(name)) for name in BOTS}
        ids = {}
        for name, bot in BOTS.items():
            ids[name] = comp.submit(viewers[name], f"{bot}.zip", _random_zip(bot))["id"]
            assert comp.claim_check() is not None
            _finish(comp, ids[name])
        assert _play(comp, 100) == 6  # the ladder: three meetings, one pair each
        comp.request_match(viewers["alice"], ids["alice"], ids["bob"])
        assert _play(comp, 100) == 1  # the test match
        comp.config = dataclasses.replace(
            comp.config, deadline=datetime.now(timezone.utc) - timedelta(seconds=1))
        assert comp.start_final() == 6
        assert _play(comp, 100) == 6
        assert comp.finish_final()
        assert comp.rerun_final(OPERATOR, 1)["number"] == 2
        assert _play(comp, 100) == 6
        assert comp.finish_final()
    finally:
        comp.close()
    yield folder


def _done(folder: Path, *kinds: str, final: int | None = None) -> int:
    """Finished games of these kinds (of final ``final``), counted by SQLite itself (read
    as immutable: no -wal or -shm made beside a database no server has open)."""
    with sqlite3.connect(f"file:{folder / 'arena.db'}?immutable=1", uri=True) as db:
        marks = ", ".join("?" * len(kinds))
        which = "" if final is None else f" AND final_id = {final:d}"
        (n,) = db.execute(f"SELECT count(*) FROM games WHERE status = 'done' AND kind IN "
                          f"({marks}){which}", kinds).fetchone()
    return int(n)


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` and its SHA-256 (SQLite's -shm excepted: a reader of a
    database a server has open shares its index)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.name.endswith("-shm")}


def _arena(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def _one_line_error(result: Result) -> str:
    assert result.exit_code != 0, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


def test_the_export_is_a_results_folder_that_arena_rate_reads_as_the_competition(
        competition: Path, tmp_path: Path) -> None:
    before = _snapshot(competition)
    out = tmp_path / "final"
    done = _arena("server", "export", competition, out)
    assert done.exit_code == 0, done.output
    assert "wrote 6 games (final 2)" in done.output  # the latest final
    assert sorted(os.listdir(out)) == ["games.csv", "games.jsonl", "games.pgn", "standings.csv"]
    records = read_records(out / "games.jsonl")
    assert len(records) == _done(competition, "final", final=2) == 6
    assert {r.tournament for r in records} == {"class"}
    # the players as the site names them: whose bot it is
    assert {r.white.name for r in records} == {"quick v1 (alice)", "steady v1 (bob)",
                                               "wild v1 (carol)"}
    assert (out / "games.pgn").read_text().count("[Event ") == 6
    assert len((out / "games.csv").read_text().splitlines()) == 7
    # arena rate on the competition folder itself gives the same tables as on the export
    for fmt in ("table", "json", "csv"):
        exported = _arena("rate", out, "--format", fmt)
        direct = _arena("rate", competition, "--format", fmt)
        assert exported.exit_code == 0 and direct.exit_code == 0, direct.output
        assert direct.output == exported.output
    table = json.loads(_arena("rate", competition, "--format", "json").output)
    assert json.dumps(table).count("wild v1 (carol)") >= 1
    # the same as the final's standings the server froze: points per participant
    from arena.server.service import Competition as Comp

    comp = Comp(competition)
    try:
        frozen = {r["participant"]: r["points"] for r in comp.final_view()["tables"][0]["rows"]}
    finally:
        comp.close()
    points = {n: 0.0 for n in BOTS}
    for r in records:
        for side in ("white", "black"):
            owner = getattr(r, side).name.rsplit("(", 1)[1].rstrip(")")
            points[owner] += r.score(side)
    assert points == frozen
    # and arena rate's table is the server's: the same places, points and games per
    # participant (Elo too: the same fit of the same games)
    with_rows = {r["participant"]: r for r in comp_rows(competition)}
    rated = {row["bot"].rsplit("(", 1)[1].rstrip(")"): row for row in table["tables"][0]["rows"]}
    assert {n: (r["place"], r["points"], r["games"]) for n, r in rated.items()} == {
        n: (r["place"], r["points"], r["games"]) for n, r in with_rows.items()}
    for name, row in rated.items():
        assert row["elo"] == pytest.approx(with_rows[name]["elo"], abs=0.11)
    assert _snapshot(competition) == before


def comp_rows(competition: Path) -> list[dict[str, object]]:
    """The latest final's rows as ``GET /api/final`` gives them (its entries)."""
    from arena.server.service import Competition as Comp

    comp = Comp(competition)
    try:
        view = comp.public_final(comp.final_view())
    finally:
        comp.close()
    return [r for r in view["tables"][0]["rows"] if r["status"] == "entry"]


def test_kinds_count_the_databases_finished_games_and_never_test_matches(
        competition: Path, tmp_path: Path) -> None:
    before = _snapshot(competition)
    assert default_kind(competition) == "final"
    for args, kinds, final in ((["--kind", "ladder"], ("ladder",), None),
                               (["--kind", "final"], ("final",), 2),
                               (["--final", "1"], ("final",), 1),
                               (["--kind", "all"], ("ladder", "final"), None)):
        out = tmp_path / "-".join(args)
        result = _arena("server", "export", competition, out, *args)
        assert result.exit_code == 0, result.output
        assert len(read_records(out / "games.jsonl")) == _done(competition, *kinds,
                                                               final=final)
    assert _done(competition, "match") == 1
    assert len(list(competition_records(competition, "all"))) == 18 == _done(
        competition, "ladder", "final")
    assert "no final 3 in this competition (finals: 1, 2)" in _one_line_error(
        _arena("server", "export", competition, tmp_path / "3", "--final", "3"))
    assert _snapshot(competition) == before


def test_arena_export_and_report_take_a_competition_folder_and_write_nothing_there(
        competition: Path, tmp_path: Path) -> None:
    before = _snapshot(competition)
    pgn = _arena("export", competition)
    assert pgn.exit_code == 0 and pgn.output.count("[Event \"class\"]") == 6, pgn.output
    refused = _one_line_error(_arena("report", competition))
    assert "competition folder" in refused and "-o DIR" in refused
    report = _arena("report", competition, "-o", tmp_path / "report")
    assert report.exit_code == 0, report.output
    assert (tmp_path / "report" / "report.html").is_file()
    assert _snapshot(competition) == before


def test_a_server_running_on_the_competition_meanwhile(competition: Path,
                                                        tmp_path: Path) -> None:
    """With the database open (its -wal there) it is read read-only; with it closed, as
    immutable: neither leaves a file behind or changes one."""
    names = sorted(os.listdir(competition))
    comp = Competition(competition)  # as a running server holds it
    try:
        assert (competition / "arena.db-wal").exists()
        rows = comp.final_view()["games_done"]
        before = _snapshot(competition)
        assert len(list(competition_records(competition))) == rows == 6
        assert _snapshot(competition) == before
    finally:
        comp.close()
    assert not (competition / "arena.db-wal").exists()
    before = _snapshot(competition)
    export_competition(competition, tmp_path / "out")
    assert sorted(os.listdir(competition)) == names
    assert _snapshot(competition) == before


def test_what_is_not_a_competition_or_not_a_place_to_write_is_one_line(
        competition: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert not is_competition_folder(plain)
    message = _one_line_error(_arena("server", "export", plain, tmp_path / "o"))
    assert "not a competition folder" in message
    assert "no games.jsonl" in _one_line_error(_arena("rate", plain))
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    assert "not empty" in _one_line_error(_arena("server", "export", competition, full))
    assert (full / "keep.txt").read_text() == "mine" and len(os.listdir(full)) == 1
    assert "inside the competition" in _one_line_error(
        _arena("server", "export", competition, competition / "out"))
    # a results folder is not a competition
    _arena("server", "export", competition, tmp_path / "res")
    assert "results folder" in _one_line_error(
        _arena("server", "export", tmp_path / "res", tmp_path / "again"))
    # an empty folder is fine; a failed export leaves no folder and no temporary one
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _arena("server", "export", competition, empty).exit_code == 0
    with pytest.raises(ArenaError, match="unknown kind"):
        export_competition(competition, tmp_path / "x", "match")  # type: ignore[arg-type]
    assert sorted(os.listdir(tmp_path)) == ["empty", "full", "plain", "res"]


def test_an_export_that_fails_midway_leaves_nothing(competition: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import arena.standings

    def full_disk(*_: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(arena.standings, "write_standings_csv", full_disk)
    message = _one_line_error(_arena("server", "export", competition, tmp_path / "out"))
    assert "No space left on device" in message
    assert os.listdir(tmp_path) == []


def test_without_sqlalchemy_a_competition_folder_says_so_in_one_line(
        competition: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = export_module.importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "sqlalchemy" else real(name, *args)

    monkeypatch.setattr(export_module.importlib.util, "find_spec", find_spec)
    for command in ("rate", "export"):
        message = _one_line_error(_arena(command, competition))
        assert message == f"Error: {export_module.EXTRA_HINT}"
    assert "pip install morris-arena[server]" in export_module.EXTRA_HINT


def test_the_names_it_keeps_apart_from_the_server_agree_with_it() -> None:
    from arena.server.db import DB_FILE
    from arena.tournament import GAMES_FILE

    assert export_module.DB_FILE == DB_FILE and export_module.GAMES_FILE == GAMES_FILE


@pytest.mark.skipif(importlib.util.find_spec("psycopg") is None, reason="no psycopg")
def test_a_competition_on_postgresql_is_read_in_a_read_only_transaction(
        postgres: Callable[[str], str], tmp_path: Path) -> None:
    from sqlalchemy import text

    from tests.synth_records import make_record

    folder = tmp_path / "pg"
    init_competition(folder, parse_server_config({"pairs": 1, "db_url": postgres("export")}))
    comp = Competition(folder)
    try:
        ids = {}
        for name in ("alice", "bob"):
            viewer = comp.authenticate(comp.add_user(name))
            ids[name] = comp.submit(viewer, f"{name}.zip", _random_zip(name))["id"]
            assert comp.claim_check() is not None
            _finish(comp, ids[name])
        labels = {ids["alice"]: f"alice#{ids['alice']}", ids["bob"]: f"bob#{ids['bob']}"}
        for gid, white, black, variant, pair, _, _ in comp.claim_games(10):
            comp.finish_game(gid, make_record(labels[white], labels[black], 1.0,
                                              game_id=f"g{gid}", pair=pair))
    finally:
        comp.close()
    assert not (folder / "arena.db").exists()  # the settings' db_url is what is read
    result = _arena("server", "export", folder, tmp_path / "out")
    assert result.exit_code == 0 and "wrote 2 games (ladder)" in result.output, result.output
    names = {r.white.name for r in read_records(tmp_path / "out" / "games.jsonl")}
    assert names == {"alice v1 (alice)", "bob v1 (bob)"}
    assert _arena("rate", folder).output == _arena("rate", tmp_path / "out").output
    with export_module._database(folder, None) as read:
        with read() as conn:
            with pytest.raises(Exception, match="read-only transaction"):
                conn.execute(text("DELETE FROM records"))
