"""Endgame analysis (arena analyse): every move played in a position the tables cover is
marked kept or thrown away (win→draw, win→loss, draw→loss) with the moves that keep the
value; the per-bot summary; the command's file and output.  Uses nine men's morris with
three men each, whose moving phase starts in the 3-3 table (built once here)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Iterator

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.records import GameRecord, MoveInfo, PlayerInfo, append_record
from arena.rules import Position
from arena.variants import Variant, get_variant

pytest.importorskip("numpy", reason="the tablebase build needs numpy")

THREE = Variant(**{**get_variant("nine-mens-morris").to_dict(), "men": 3,
                   "name": "three-each"})


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from arena.tablebase import build_tables, open_tablebase

    folder = tmp_path_factory.mktemp("tables")
    build_tables(get_variant("nine-mens-morris"), (3, 3), folder)
    with open_tablebase(folder) as tb:
        tb.folder = folder
        yield tb


def _record(moves: list[str], game_id: str) -> GameRecord:
    return GameRecord(game_id=game_id, variant=THREE.name, variant_params=THREE.to_dict(),
                      white=PlayerInfo("alice"), black=PlayerInfo("bob"), result="*",
                      termination="", moves=[MoveInfo(m, 1.0) for m in moves])


def _thrown_game(tables: Any, seed: int) -> tuple[list[str], str]:
    """Placements to a covered position the mover wins, then a move that throws the win
    away; (the moves, what it threw)."""
    rng = random.Random(seed)
    for _ in range(500):
        pos = Position(THREE)
        moves: list[str] = []
        while (pos.hand[0] or pos.hand[1]) and pos.outcome() is None:
            move = rng.choice(pos.legal_moves())
            pos.push(move)
            moves.append(str(move))
        if pos.outcome() is not None or tables.probe(pos).value != "win":
            continue
        probes = tables.probe_moves(pos)
        worse = [p for p in probes if p.value != "win"]
        if worse:
            return moves + [str(worse[0].move)], f"win→{worse[0].value}"
    raise AssertionError("no won 3-3 position with a losing move found")


def test_a_thrown_away_win_is_marked_with_the_moves_that_kept_it(tables: Any) -> None:
    from arena.report.endgames import analyse_game, summarise

    moves, thrown = _thrown_game(tables, 1)
    game = analyse_game(_record(moves, "g1"), tables)
    last = game.marks[-1]
    assert (last.ply, last.move, last.before, last.thrown) == (len(moves), moves[-1], "win",
                                                               thrown)
    assert last.best and moves[-1] not in last.best
    pos = Position(THREE)
    for m in moves[:-1]:
        pos.push_text(m)
    for best in last.best:  # every move offered keeps the win
        assert any(str(p.move) == best and p.value == "win" for p in tables.probe_moves(pos))
    mover = "alice" if last.color == "white" else "bob"
    row = next(r for r in summarise([game]) if r.bot == mover)
    assert row.thrown == [("g1", len(moves), thrown)] and row.wins_thrown == 1
    assert row.accuracy is not None and row.accuracy < 1


def test_arena_analyse_writes_the_analysis_and_prints_each_bot(tmp_path: Path,
                                                               tables: Any) -> None:
    from arena.report.endgames import read_analysis

    moves, thrown = _thrown_game(tables, 2)
    kept = list(moves[:-1])
    pos = Position(THREE)
    for m in kept:
        pos.push_text(m)
    kept.append(str(tables.probe_moves(pos)[0].move))  # the best move: the win kept
    results = tmp_path / "results"
    results.mkdir()
    append_record(results / "games.jsonl", _record(moves, "thrown"))
    append_record(results / "games.jsonl", _record(kept, "kept"))
    append_record(results / "games.jsonl", _record(["a1"], "short"))  # never covered
    out = CliRunner().invoke(cli, ["analyse", str(results), "--tables", str(tables.folder)])
    assert out.exit_code == 0, out.output
    assert "2 of 3 games reached an endgame the tables cover" in out.output
    assert f"{thrown} at ply {len(moves)} of thrown" in out.output
    stored = read_analysis(results)
    assert set(stored) == {"thrown", "kept"}
    assert stored["kept"].marks[-1].thrown == "" and stored["thrown"].marks[-1].thrown == thrown
    report = CliRunner().invoke(cli, ["report", str(results)])
    assert report.exit_code == 0, report.output
    html = (results / "report.html").read_text()
    assert 'id="endgames"' in html and f"{thrown}, move {len(moves)} of thrown" in html
    missing = CliRunner().invoke(cli, ["analyse", str(results), "--tables",
                                       str(tmp_path / "none")])
    assert missing.exit_code == 2 and "arena tablebase build" in missing.output


def test_the_viewer_shows_the_badge_of_a_thrown_endgame(tmp_path: Path, tables: Any,
                                                         driver: Any) -> None:
    from selenium.webdriver.common.by import By

    from arena.report.endgames import analyse, write_analysis
    from arena.report.viewer import write_game_pages

    moves, thrown = _thrown_game(tables, 3)
    record = _record(moves, "thrown")
    write_analysis(tmp_path, analyse([record], tables))
    from arena.report.endgames import read_analysis

    write_game_pages(tmp_path, [record], {"thrown": "games/thrown.html"},
                     {"thrown": "a thrown endgame"}, read_analysis(tmp_path))
    driver.get((tmp_path / "games" / "thrown.html").as_uri() + f"#ply={len(moves)}")
    badge = driver.find_element(By.CSS_SELECTOR, ".movelist .tb.thrown")
    assert badge.text == thrown
    assert "the tables' best" in badge.get_attribute("title")
    note = driver.find_element(By.ID, "tbnote").text
    assert note.startswith("This move threw a win away") and thrown in note
    kept = driver.find_elements(By.CSS_SELECTOR, ".movelist .tb.kept")
    assert len(kept) == len(read_analysis(tmp_path)["thrown"].marks) - 1
    driver.save_screenshot(str(tmp_path / "viewer.png"))
    errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    assert not errors, errors
