"""The game viewer (issue 12.3): per-game pages from the rules engine's positions, untrusted
text kept inert, ``arena show`` in a terminal, and the page itself in a real browser (headless
Chromium through Selenium, skipped with a reason where they are missing) checked against the
rules engine ply by ply."""

from __future__ import annotations

import dataclasses
import json
import re
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.records import GameRecord, append_record, read_records
from arena.report import build_report
from arena.report.viewer import (game_data, game_titles, page_names, position_at, replay,
                                 script_json)
from arena.rules import Position
from tests.synth_records import make_record

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = "</script><!--<img src=x onerror=alert(1)>\u2028"

TOURNAMENT = f"""\
name: viewer
bots: [{ROOT}/bots/random, {ROOT}/bots/greedy]
variants: [six-mens-morris, nine-mens-morris-diagonals]
games_per_pairing: 2
openings: {{random: 1}}
time: {{movetime: 100, margin: 300}}
workers: 4
seed: 5
report: false
"""


def _forfeit_of(record: GameRecord) -> GameRecord:
    """``record`` cut short by an illegal move of the side to move, with hostile text."""
    moves = record.moves[:7]
    loser = "black" if len(moves) % 2 else "white"
    return dataclasses.replace(
        record, game_id="forfeit/" + record.game_id, moves=moves, forfeit=loser,
        result="1-0" if loser == "black" else "0-1", termination="illegal-move",
        detail=f"illegal move {HOSTILE}", offending_line=f"a1-a1 {HOSTILE}",
        stderr={loser: "thinking...\nTraceback: <b>boom</b>\x1b[31m\n"})


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[GameRecord]]:
    """A tiny real tournament (two variants, one a non-standard board) plus a forfeit, reported."""
    work = tmp_path_factory.mktemp("viewer")
    config = work / "viewer.yaml"
    config.write_text(TOURNAMENT + f"output: {work / 'results'}\n", encoding="utf-8")
    res = CliRunner().invoke(cli, ["run", str(config)])
    assert res.exit_code == 0, res.output
    folder = work / "results"
    target = work / "report"
    target.mkdir()
    records = read_records(folder / "games.jsonl")
    records.append(_forfeit_of(max(records, key=lambda r: r.plies)))
    for r in records:
        append_record(target / "games.jsonl", r)
    build_report(target, records)
    return target, records


# ---------------------------------------------------------------------------------------
# Without a browser
# ---------------------------------------------------------------------------------------


def test_pages_written_and_linked(tournament: tuple[Path, list[GameRecord]]) -> None:
    folder, records = tournament
    html = (folder / "report.html").read_text(encoding="utf-8")
    pages = page_names(records)
    assert len(set(pages.values())) == len(records)
    for r in records:
        page = folder / pages[r.game_id]
        assert page.is_file() and f'href="{pages[r.game_id]}"' in html
        text = page.read_text(encoding="utf-8")
        # self-contained: no file, script or style loaded from anywhere (a data: URL is
        # in the page: its empty icon)
        assert not re.search(r'(src|href)="(?!data:)', text.split('<script id="game-data"')[0])
        assert re.search(r'(src|href)="', text)  # the check above can see one
        assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
        assert "https://" not in text
    assert {r.variant for r in records} == {"six-mens-morris", "nine-mens-morris-diagonals"}


def test_hostile_text_stays_inert(tournament: tuple[Path, list[GameRecord]]) -> None:
    folder, records = tournament
    forfeit = records[-1]
    text = (folder / page_names(records)[forfeit.game_id]).read_text(encoding="utf-8")
    data_part = text.split('<script id="game-data" type="application/json">')[1]
    data_text = data_part.split("</script>")[0]
    assert "<" not in data_text and "\u2028" not in data_text
    data = json.loads(data_text)
    # control and format characters shown as escapes (arena.protocol.escape_controls)
    assert data["forfeit"]["line"] == "a1-a1 </script><!--<img src=x onerror=alert(1)>\\u2028"
    assert data["forfeit"]["stderr"].endswith("Traceback: <b>boom</b>\\x1b[31m\n")
    assert text.count("</script>") == 2


def test_script_json_escapes_what_ends_a_script() -> None:
    out = script_json({"a": "</script><!-- & > \u2028"})
    assert "<" not in out and ">" not in out and "&" not in out and "\u2028" not in out
    assert json.loads(out) == {"a": "</script><!-- & > \u2028"}


def test_positions_are_the_rules_engines(tournament: tuple[Path, list[GameRecord]]) -> None:
    _, records = tournament
    for r in records:
        rep = replay(r)
        assert not rep.error and len(rep.plies) == r.plies + 1
        pos = Position(rep.variant)
        for n, ply in enumerate(rep.plies):
            if n:
                pos.push_text(r.moves[n - 1].move)
            assert ply.board == pos.to_text().split()[0]
            assert ply.hand == (pos.in_hand(0), pos.in_hand(1))
        assert position_at(r).to_text() == pos.to_text()


def test_titles_and_an_unreplayable_record() -> None:
    recs = [make_record("alice", "bob", 1.0, round=2, pair=1, game_id="x/a"),
            make_record("bob", "alice", 0.0, round=2, pair=1, game_id="x/b",
                        moves=("d6", "d6"))]
    titles = game_titles(recs)
    assert titles["x/a"] == "alice vs bob, nine men's morris, round 2, game 1"
    assert titles["x/b"] == "bob vs alice, nine men's morris, round 2, game 2"
    data = game_data(recs[1], titles["x/b"])
    assert len(data["plies"]) == 2 and "move 2 (d6) does not replay" in data["error"]


def test_arena_show(tournament: tuple[Path, list[GameRecord]]) -> None:
    folder, records = tournament
    r = next(r for r in records if r.variant == "six-mens-morris")
    res = CliRunner().invoke(cli, ["show", str(folder), r.game_id, "--ply", "3"])
    assert res.exit_code == 0, res.output
    assert game_titles(records)[r.game_id] in res.output
    assert position_at(r, 3).board_text() in res.output
    assert r.moves[-1].move in res.output
    forfeit = records[-1]
    res = CliRunner().invoke(cli, ["show", str(folder / "games.jsonl"),
                                   page_names(records)[forfeit.game_id][6:-5]])
    assert res.exit_code == 0, res.output
    assert "Forfeit by" in res.output and "It sent: a1-a1 </script>" in res.output
    assert "\x1b" not in res.output and "Traceback: <b>boom</b>" in res.output
    for args, message in (([r.game_id, "--ply", "999"], "--ply"),
                          (["nothing-like-it"], "no game"), (["r1"], "games match")):
        res = CliRunner().invoke(cli, ["show", str(folder), *args])
        assert res.exit_code == 2 and message in res.output


def test_arena_show_reads_the_folder_a_line_at_a_time_and_names_pages_as_the_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ids whose page names collide ("a/b" and "a:b" both make "a-b"): the second page is
    # "a-b-2", as the report names it; games numbered by pair within their round
    recs = [make_record("alice", "bob", 1.0, round=1, pair=2, game_id="a/b"),
            make_record("bob", "alice", 0.0, round=1, pair=1, game_id="a:b"),
            make_record("carol", "bob", 0.5, round=1, pair=1, game_id="z/c"),
            make_record("bob", "carol", 0.5, round=2, pair=1, game_id="z/d")]
    for r in recs:
        append_record(tmp_path / "games.jsonl", r)
    pages, titles = page_names(recs), game_titles(recs)
    assert pages["a:b"] == "games/a-b-2.html"

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("arena show read every record into a list")

    import arena.records
    import arena.report
    import arena.report.results

    for module, name in ((arena.records, "read_records"), (arena.report, "load_games"),
                         (arena.report.results, "read_records"),
                         (arena.report.results, "load_games")):
        monkeypatch.setattr(module, name, refused)
    for r in recs:
        for name in (r.game_id, pages[r.game_id][6:-5]):
            res = CliRunner().invoke(cli, ["show", str(tmp_path), name])
            assert res.exit_code == 0, (name, res.output)
            assert res.output.splitlines()[0] == titles[r.game_id]
            assert f"game {r.game_id}," in res.output
    res = CliRunner().invoke(cli, ["show", str(tmp_path), "games/"])  # in every page's path
    assert res.exit_code == 2 and "4 games match 'games/': a/b, a:b, z/c, z/d" in res.output
    res = CliRunner().invoke(cli, ["show", str(tmp_path), "a-b"])  # a page, part of another
    assert res.exit_code == 0 and res.output.splitlines()[0] == titles["a/b"]
    res = CliRunner().invoke(cli, ["show", str(tmp_path), "q"])
    assert res.exit_code == 2 and "no game 'q'" in res.output and "(e.g. a/b)" in res.output


# ---------------------------------------------------------------------------------------
# In a real browser
# ---------------------------------------------------------------------------------------


def _board(driver: Any) -> dict[str, str]:
    from selenium.webdriver.common.by import By

    return {m.get_attribute("data-point"): m.get_attribute("data-color")
            for m in driver.find_elements(By.CSS_SELECTOR, "svg.board circle.man")}


def _engine_board(pos: Position) -> dict[str, str]:
    return {p: "WB"[c] for p in pos.topology.points if (c := pos.occupant(p)) is not None}


def _click_ply(driver: Any, ply: int) -> None:
    """Click ply ``ply``'s row of the move list (scrolled to the middle of the list first)."""
    row = driver.find_element("css selector", f'tr[data-ply="{ply}"]')
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", row)
    row.click()


def _at(driver: Any, ply: int) -> None:
    deadline = time.monotonic() + 5
    while driver.find_element("id", "viewer").get_attribute("data-ply") != str(ply):
        assert time.monotonic() < deadline, f"the viewer did not reach ply {ply}"
        time.sleep(0.02)


def test_viewer_in_chromium_matches_the_rules_engine(
        driver: Any, tournament: tuple[Path, list[GameRecord]]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    folder, records = tournament
    pages = page_names(records)
    for variant in ("nine-mens-morris-diagonals", "six-mens-morris"):
        r = max((r for r in records if r.variant == variant and not r.forfeit),
                key=lambda r: r.plies)
        driver.get((folder / pages[r.game_id]).resolve().as_uri())
        _at(driver, r.plies)  # opens on the final position
        assert _board(driver) == _engine_board(position_at(r))
        assert driver.title == game_titles(records)[r.game_id]
        body = driver.find_element(By.TAG_NAME, "body")
        body.send_keys(Keys.HOME)
        _at(driver, 0)
        assert _board(driver) == {}
        forward = driver.find_element(By.ID, "forward")
        pos = Position(replay(r).variant)
        for n in range(1, min(r.plies, 14) + 1):
            if n % 2:
                forward.click()
            else:
                body.send_keys(Keys.ARROW_RIGHT)
            _at(driver, n)
            pos.push_text(r.moves[n - 1].move)
            assert _board(driver) == _engine_board(pos), f"ply {n}"
            hand = driver.find_element(By.ID, "hand-white").text
            assert f"{pos.in_hand(0)} in hand" in hand
        body.send_keys(Keys.ARROW_LEFT)
        _at(driver, min(r.plies, 14) - 1)
        # jump: a click on a move in the list, then the slider's number box
        target = r.plies // 2
        _click_ply(driver, target)
        _at(driver, target)
        assert _board(driver) == _engine_board(position_at(r, target))
        captured = next((n for n in range(1, r.plies + 1) if "x" in r.moves[n - 1].move), None)
        if captured is not None:
            _click_ply(driver, captured)
            _at(driver, captured)
            marked = {e.get_attribute("data-captured") for e in
                      driver.find_elements(By.CSS_SELECTOR, "circle.captured")}
            assert marked == set(r.moves[captured - 1].move.split("x")[1:])
            assert driver.find_elements(By.CSS_SELECTOR, "svg.board line.mill")  # its mill
    # a forfeit: who, why, the offending line and the stderr tail, shown as text
    forfeit = records[-1]
    driver.get((folder / pages[forfeit.game_id]).resolve().as_uri())
    _at(driver, forfeit.plies)
    final = driver.find_element(By.ID, "final").text
    assert f"Forfeit by {forfeit.forfeit}" in final and "illegal-move" in final
    assert driver.find_element(By.ID, "offending").text.startswith("a1-a1 </script><!--<img")
    assert "Traceback: <b>boom</b>" in driver.find_element(By.ID, "stderr").text
    assert not driver.find_elements(By.CSS_SELECTOR, "#viewer img, #viewer b")
    assert _board(driver) == _engine_board(position_at(forfeit))
    shot = folder / "viewer.png"
    driver.save_screenshot(str(shot))
    assert shot.stat().st_size > 1000


def test_many_games_leave_their_moves_to_the_viewer(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.report import charts, html as report_html

    monkeypatch.setattr(charts, "build_charts", lambda records, tables: [])
    monkeypatch.setattr("arena.report.folder.build_charts", lambda records, tables: [])
    monkeypatch.setattr(report_html, "MAX_MOVES_INLINE", 3)
    recs = [make_record("a", "b", 1.0, round=1, pair=k, game_id=f"g{k}",
                        moves=("d6", "f4", "a1")) for k in range(5)]
    html = build_report(tmp_path, recs).read_text(encoding="utf-8")
    assert html.count('<tr id="game-') == 5 and html.count('class="view"') == 5
    assert "<details><summary>g1" not in html and "moves are on the viewer's pages only" in html
    assert "2.&nbsp;<span>a1</span>" not in html
    page = (tmp_path / "games" / "g1.html").read_text(encoding="utf-8")
    assert '"m":"a1"' in page
    html = build_report(tmp_path, recs[:3]).read_text(encoding="utf-8")
    assert "2.&nbsp;<span>a1</span>" in html and "viewer's pages only" not in html
    assert sorted(p.name for p in (tmp_path / "games").iterdir()) == ["g0.html", "g1.html",
                                                                       "g2.html"]


def test_mills_formed_are_marked() -> None:
    # white closes a1-a4-a7 with its third man: the mill, then its capture
    rec = make_record("a", "b", 1.0, moves=("a1", "d6", "a4", "f4", "a7xd6"))
    plies = game_data(rec, "t")["plies"]
    assert "ml" not in plies[3]
    points = game_data(rec, "t")["points"]
    assert [[points[i] for i in ends] for ends in plies[5]["ml"]] == [["a1", "a7"]]
    assert [points[i] for i in plies[5]["c"]] == ["d6"]


# ---------------------------------------------------------------------------------------
# Sanmill's rule families: marked points, captures from the hand, removal-only turns
# ---------------------------------------------------------------------------------------

def _placements(board: str, last: str, points: tuple[str, ...]) -> list[str]:
    """Placements that build ``board`` (W/B per point) turn by turn, black placing ``last``."""
    white = [p for p, ch in zip(points, board) if ch == "W"]
    black = [p for p, ch in zip(points, board) if ch == "B" and p != last] + [last]
    return [m for pair in zip(white, black) for m in pair]


def _random_until(variant: str, seed: int, found: Any, extra: int = 4) -> list[str]:
    """A random game of ``variant`` played until ``found(position, move)`` holds, then
    ``extra`` more moves (or the end)."""
    import random

    rng = random.Random(seed)
    pos, moves, left = Position(variant), [], None
    while pos.legal_moves() and left != 0:
        move = rng.choice(pos.legal_moves())
        if left is None and found(pos, move):
            left = extra + 1
        pos.push(move)
        moves.append(str(move))
        left = None if left is None else left - 1
    assert left is not None, f"no such move in a random game of {variant}"
    return moves


STANDARD_POINTS = Position("nine-mens-morris").topology.points
#: zhi-qi: black's last man fills the board (no mill anywhere); white, then black, removes one
ZHI_GAME = _placements("BWBWBWBWBBBWBWWBWWWWBWBB", "f6", STANDARD_POINTS) + ["xa1", "xa4", "b2-a1"]
#: el-filja: placement ends with no mill: each side removes one of its own men
FILJA_GAME = _placements("WWBBBWWBBBWBWWBBBWWWBBWW", "f6", STANDARD_POINTS) + ["xa1", "xa7", "a4-a1"]


def family_records() -> dict[str, GameRecord]:
    """A record per new move shape, replayable by the engine."""
    return {
        "dooz": make_record("a", "b", 1.0, variant="dooz", game_id="dooz", moves=_random_until(
            "dooz", 1, lambda pos, m: "*" in m.captures)),
        "cheng-san-qi": make_record("a", "b", 1.0, variant="cheng-san-qi", game_id="cheng",
                                    moves=_random_until("cheng-san-qi", 1, lambda pos, m:
                                                        m.src is None and bool(m.captures))),
        "zhi-qi": make_record("a", "b", 1.0, variant="zhi-qi", game_id="zhi", moves=ZHI_GAME),
        "el-filja": make_record("a", "b", 1.0, variant="el-filja", game_id="filja",
                                moves=FILJA_GAME),
    }


def test_game_data_shows_marks_hand_captures_and_removal_turns() -> None:
    recs = family_records()
    data = {name: game_data(r, name) for name, r in recs.items()}
    points = data["dooz"]["points"]
    # dooz: x* captures are counted (hc), not drawn on the board, and the hand shrinks
    dooz = data["dooz"]["plies"]
    n = next(k for k, p in enumerate(dooz) if "*" in p.get("m", ""))
    assert dooz[n]["hc"] == dooz[n]["m"].count("*") and dooz[n]["v"] == 1 - dooz[n]["by"]
    assert dooz[n]["h"][1 - dooz[n]["by"]] == dooz[n - 1]["h"][1 - dooz[n]["by"]] - dooz[n]["hc"]
    # cheng-san-qi: the captured man's point is marked X until placement ends
    cheng = data["cheng-san-qi"]["plies"]
    n = next(k for k, p in enumerate(cheng) if k and p["c"])
    assert all(cheng[n]["b"][i] == "X" for i in cheng[n]["c"])
    assert "X" not in cheng[-1]["b"] or sum(cheng[-1]["h"]) > 0
    # zhi-qi: the full board's removals take the other side's men, then white moves
    zhi = data["zhi-qi"]["plies"]
    assert zhi[24]["t"] == 0 and "X" not in zhi[24]["b"] and "." not in zhi[24]["b"]
    assert (zhi[25]["m"], zhi[25]["d"], zhi[25]["v"], zhi[25]["t"]) == ("xa1", None, 1, 1)
    assert (zhi[26]["m"], zhi[26]["d"], zhi[26]["v"], zhi[26]["t"]) == ("xa4", None, 0, 0)
    assert [points[i] for i in zhi[26]["c"]] == ["a4"] and "ml" not in zhi[26]
    assert zhi[27]["m"] == "b2-a1" and not data["zhi-qi"]["error"]
    # el-filja: with no mill each removes one of its own men (v is the mover)
    filja = data["el-filja"]["plies"]
    assert (filja[25]["by"], filja[25]["v"], filja[26]["by"], filja[26]["v"]) == (0, 0, 1, 1)
    assert filja[26]["t"] == 0 and not data["el-filja"]["error"]
    for r in recs.values():  # every shape replays to the end
        assert len(game_data(r, "t")["plies"]) == len(r.moves) + 1


@pytest.mark.slow
def test_viewer_in_chromium_draws_marks_hand_captures_and_removals(
        driver: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    from arena.report.viewer import write_game_pages

    recs = family_records()
    write_game_pages(tmp_path, list(recs.values()))  # the pages alone: no charts needed
    pages = page_names(list(recs.values()))
    for name, r in recs.items():
        driver.get((tmp_path / pages[r.game_id]).resolve().as_uri())
        _at(driver, r.plies)
        pos = Position(replay(r).variant)
        shown = 0
        for n, info in enumerate(r.moves, 1):
            move = pos.parse_move(info.move)
            owed = pos.pending[pos.turn]
            victim = "WB"[pos.turn if owed < 0 else 1 - pos.turn]
            pos.push(move)
            shaped = "*" in move.captures or move.dst is None or pos.marks
            if (not shaped or shown == 3) and n != r.plies:
                continue  # the first three plies of each new shape, and the last
            shown += 1
            _click_ply(driver, n)
            _at(driver, n)
            assert _board(driver) == _engine_board(pos), (name, n)
            marked = {e.get_attribute("data-marked")
                      for e in driver.find_elements(By.CSS_SELECTOR, "rect.marked")}
            assert marked == {p for i, p in enumerate(pos.topology.points) if pos.marks >> i & 1}
            status = driver.find_element(By.ID, "status").text
            captured = driver.find_elements(By.CSS_SELECTOR, "circle.captured")
            assert {c.get_attribute("data-color") for c in captured} <= {victim}
            if "*" in move.captures:
                assert f"from {'black' if victim == 'B' else 'white'}'s hand" in status
                assert driver.find_elements(By.CSS_SELECTOR, ".dot.taken")
            if move.dst is None:
                assert "Removed " + ", ".join(move.captures) in status
                assert not driver.find_elements(By.CSS_SELECTOR, "circle.last")
            if marked:
                assert "Marked, blocked until placement ends" in status
            if n < r.plies:
                assert f"{('White', 'Black')[pos.turn]} to move" in status


# ---------------------------------------------------------------------------------------
# Engine output: eval and depth per move, the evaluation graph, the pv (issue 27)
# ---------------------------------------------------------------------------------------

#: collects the page's errors, console errors and CSP violations in window.pageErrors (run
#: by the browser before the page's own script, not subject to its CSP)
WATCH_ERRORS = """
if (!window.pageErrors) {
  window.pageErrors = [];
  window.addEventListener("error", function (e) { window.pageErrors.push("error " + e.message); });
  document.addEventListener("securitypolicyviolation", function (e) {
    window.pageErrors.push("csp " + e.violatedDirective);
  });
  var original = console.error;
  console.error = function () {
    window.pageErrors.push("console " + Array.prototype.join.call(arguments, " "));
    return original.apply(console, arguments);
  };
}
"""
#: the competition server's policy for its pages (arena/server/web.py), with a fixed nonce
CSP = ("default-src 'none'; script-src 'nonce-n0nce'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'")


def _scored(record: GameRecord) -> list[int]:
    """The plies whose bot sent a score."""
    return [n for n, m in enumerate(record.moves, 1) if m.info and "score" in m.info]


def _without_info(record: GameRecord) -> GameRecord:
    return dataclasses.replace(record, game_id="plain/" + record.game_id,
                               moves=[dataclasses.replace(m, info=None) for m in record.moves])


def test_game_data_carries_each_moves_search_escaped() -> None:
    from arena.records import MoveInfo

    rec = make_record("a", "b", 1.0, moves=("a1", "d6", "a4"))
    rec.moves[0].info = {"depth": 5, "seldepth": 9, "score": 120, "nodes": 24000, "nps": 1000,
                         "time": 18, "pv": ["a1", "</script>", "d6\x1b"], "string": HOSTILE}
    rec.moves[1].info = {"score": {"loss": 4}, "depth": True, "nodes": -1, "pv": []}
    rec.moves[2] = MoveInfo("a4", 1.0, info={"score": {"win": 2}, "other": "currmove a4"})
    plies = game_data(rec, "t")["plies"]
    assert "e" not in plies[0]
    assert plies[1]["e"] == {"s": 120, "d": 5, "sd": 9, "n": 24000, "nps": 1000, "t": 18,
                             "pv": "a1 </script> d6\\x1b",
                             "str": "</script><!--<img src=x onerror=alert(1)>\\u2028"}
    assert plies[2]["e"] == {"l": 4} and plies[3]["e"] == {"w": 2}
    assert "<" not in script_json(game_data(rec, "t"))
    assert "e" not in game_data(_without_info(rec), "t")["plies"][1]


def _watch(driver: Any) -> str:
    return str(driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument",
                                      {"source": WATCH_ERRORS})["identifier"])


def test_viewer_in_chromium_shows_the_bots_search_and_an_eval_graph(
        driver: Any, tournament: tuple[Path, list[GameRecord]], tmp_path: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    from arena.export import score_text
    from arena.report.viewer import render_game_page

    folder, records = tournament
    record = max((r for r in records if not r.forfeit), key=lambda r: len(_scored(r)))
    scored = _scored(record)
    assert len(scored) >= 3  # greedy sends its score with every move
    plain = _without_info(record)
    html = render_game_page(record, "with info")
    pages = {"info.html": html, "plain.html": render_game_page(plain, "without info"),
             # as the competition server serves it: a nonce for the script, its CSP
             "csp.html": html.replace("<head>\n", "<head>\n<meta http-equiv=\"Content-Security-"
                                      f"Policy\" content=\"{CSP}\">\n", 1)
             .replace("\n<script>\n", '\n<script nonce="n0nce">\n', 1)}
    pages["no-nonce.html"] = pages["csp.html"].replace(' nonce="n0nce"', "")
    for name, text in pages.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    watch = _watch(driver)
    try:
        for name in ("info.html", "csp.html"):
            driver.get((tmp_path / name).resolve().as_uri())
            _at(driver, record.plies)
            dots = driver.find_elements(By.CSS_SELECTOR, "#evalgraph circle.pt")
            assert sorted(int(d.get_attribute("data-ply")) for d in dots) == scored
            headers = [th.text for th in driver.find_elements(By.CSS_SELECTOR, ".movelist th")]
            assert headers[3:5] == ["eval", "depth"]
            # hovering a point goes to its move; the bot's search is shown, its pv too
            target = scored[len(scored) // 2]
            dot = next(d for d in dots if d.get_attribute("data-ply") == str(target))
            ActionChains(driver).move_to_element(dot).perform()
            _at(driver, target)
            info = record.moves[target - 1].info
            assert info is not None
            engine = driver.find_element(By.ID, "engine").text
            assert f"depth {info['depth']}" in engine
            assert driver.find_element(By.ID, "pv").text == " ".join(info["pv"])
            row = driver.find_element(By.CSS_SELECTOR, f'tr[data-ply="{target}"]')
            cells = [td.text for td in row.find_elements(By.TAG_NAME, "td")]
            assert cells[3:5] == [score_text(info["score"]), str(info["depth"])]
            assert "pv " + " ".join(info["pv"]) in row.get_attribute("title")
            # a click elsewhere on the graph goes there; the marker follows
            first = next(d for d in dots if d.get_attribute("data-ply") == str(scored[0]))
            ActionChains(driver).move_to_element(first).click().perform()
            _at(driver, scored[0])
            assert "on" in first.get_attribute("class")
            assert driver.execute_script("return window.pageErrors") == [], name
        # a record without info (an old one): no graph, no columns, no error
        driver.get((tmp_path / "plain.html").resolve().as_uri())
        _at(driver, record.plies)
        assert not driver.find_elements(By.ID, "evalgraph")
        assert not driver.find_elements(By.ID, "engine")
        assert "eval" not in [th.text for th in driver.find_elements(By.CSS_SELECTOR, "th")]
        _click_ply(driver, 3)
        _at(driver, 3)
        assert driver.execute_script("return window.pageErrors") == []
        # the policy is in force: without the nonce the script does not run
        driver.get((tmp_path / "no-nonce.html").resolve().as_uri())
        assert driver.find_element(By.ID, "viewer").get_attribute("data-ply") is None
        assert any(e.startswith("csp script-src") for e in
                   driver.execute_script("return window.pageErrors"))
        driver.get((tmp_path / "info.html").resolve().as_uri())
        _at(driver, record.plies)
        driver.save_screenshot(str(folder / "viewer-eval.png"))
    finally:
        driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": watch})
