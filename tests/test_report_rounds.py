"""The report shows a Swiss's rounds and a knockout's bracket (issue 38,
arena/report/rounds.py): a 5-bot knockout and a 5-bot Swiss of 2 rounds are played for real
(three men's morris, a few games each), and their report.html is checked against scores the
test computes from games.jsonl itself; a round-robin report has no such section; the bracket
is drawn right in a browser (names fit their boxes, type large enough, nothing wider than the
page).

``ARENA_DOCS_IMAGES=1`` makes the browser test save its screenshots of the bracket and the
rounds, at 1280 pixels wide, as docs/images/report-bracket.png and
docs/images/report-swiss-rounds.png (nothing depends on their pixels)."""

from __future__ import annotations

import html
import io
import json
import os
import re
from pathlib import Path
from typing import Any, Optional

import pytest

from arena.config import load_config
from arena.ratings import rate
from arena.records import GameRecord, MoveInfo, PlayerInfo
from arena.report import build_report
from arena.report.html import page_context, render_html
from arena.report.rounds import MatchRules, RoundsData, load_rounds, rounds_section
from arena.rounds import Round
from arena.tournament import run_tournament

ROOT = Path(__file__).resolve().parent.parent
BOTS = [("bots/random", "r1"), ("bots/greedy", "g1"), ("tests/bots/striker", "s1"),
        ("tests/bots/drawer", "d1"), ("bots/random", "r2")]
SEEDS = [name for _, name in BOTS]  # the seeds of the knockout: the order of the bots
SCORE = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


def _yaml(folder: Path, name: str, fmt: str) -> Path:
    bots = "\n".join(f"  - {{path: {ROOT / path}, name: {bot}}}" for path, bot in BOTS)
    path = folder / f"{name}.yaml"
    path.write_text(f"name: {name}\nseed: 11\nbots:\n{bots}\nvariants: [three-mens-morris]\n"
                    f"format: {fmt}\ntime: {{movetime: 2000, margin: 2000}}\nworkers: 2\n"
                    f"output: {folder / name}\n")
    return path


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The results folders (report included) of a knockout and of a Swiss of 2 rounds."""
    folder = tmp_path_factory.mktemp("rounds")
    out = {}
    for name, fmt in (("ko", "knockout"), ("swiss", "{type: swiss, rounds: 2}")):
        result = run_tournament(load_config(_yaml(folder, name, fmt)), console=io.StringIO())
        assert result.complete and result.report is not None
        out[name] = folder / name
    return out


# -- what the test knows from the files alone ----------------------------------------------
def _rounds(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "rounds.jsonl").read_text().splitlines()]


def _match_points(folder: Path) -> dict[tuple[int, frozenset[str]], dict[str, float]]:
    """Each pairing's points (round, its two players), every game of it summed."""
    out: dict[tuple[int, frozenset[str]], dict[str, float]] = {}
    for line in (folder / "games.jsonl").read_text().splitlines():
        r = json.loads(line)
        rnd = int(r["game_id"].split("/")[1][1:])
        w, b = r["white"]["name"], r["black"]["name"]
        points = out.setdefault((rnd, frozenset((w, b))), {w: 0.0, b: 0.0})
        points[w] += SCORE[r["result"]]
        points[b] += 1 - SCORE[r["result"]]
    return out


def _half(x: float) -> str:
    """Points as chess tables write them (1½, ½, 0), written here on its own."""
    text = {0.0: "", 0.5: "½"}[x - int(x)]
    return (str(int(x)) if int(x) or not text else "") + text


def _rows(page: str, table_class: str) -> list[str]:
    """The rows of the tables of ``table_class`` as ``cell|cell|...`` plain text."""
    out = []
    for table in re.findall(rf'<table class="[^"]*{table_class}[^"]*">(.*?)</table>', page, re.S):
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S):
            cells = re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)
            out.append("|".join(html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in cells))
    return out


# -- the knockout ---------------------------------------------------------------------------
def test_the_knockout_report_draws_the_bracket_with_each_match_and_the_champion(
        events: dict[str, Path]) -> None:
    folder = events["ko"]
    page = (folder / "report.html").read_text()
    rounds = _rounds(folder)
    points = _match_points(folder)
    assert '<h2>Bracket</h2>' in page and 'href="#bracket"' in page
    svg = re.search(r"<svg .*?</svg>", page, re.S)
    assert svg is not None
    drawn = svg.group()
    assert 'role="img"' in drawn and "<title" in drawn and "<desc" in drawn
    assert "<script" not in page.split('<section id="bracket"')[1].split("</section>")[0]
    for name in SEEDS:
        assert f">{name}</text>" in drawn, name
    rows = _rows(page, "bracket-table")
    byes = 0
    champion: Optional[str] = None
    for entry in rounds:
        lines = entry["lines"]
        for a, b in zip(lines[::2], lines[1::2]):
            if a is None or b is None:
                byes += 1
                assert any(f"|{a or b}|–|bye|" in row for row in rows), (a, b)
                continue
            p = points[(entry["round"], frozenset((a, b)))]
            assert any(f"|{a}|{_half(p[a])}–{_half(p[b])}|{b}|" in row for row in rows), (a, b)
            assert f">{_half(p[a])}</text>" in drawn and f">{_half(p[b])}</text>" in drawn
            if p[a] != p[b]:
                winner = a if p[a] > p[b] else b
            else:
                winner = min((a, b), key=SEEDS.index)
                assert any(f"{winner} through on seed" in row for row in rows)
            champion = winner
    assert byes == 3  # 5 players in a bracket of 8: the top three seeds
    assert drawn.count(">bye</text>") == 3
    assert rounds[-1]["lines"] and len(rounds[-1]["lines"]) == 2
    assert champion is not None
    assert f"Champion: <b>{champion}</b>" in page
    assert f"champion: {champion}." in drawn  # the picture's description
    # the champion's box at the right: the last name the picture draws
    assert re.findall(r">([^<>]+)</text>", drawn)[-1] == champion
    assert 'id="rounds"' not in page


# -- the Swiss ------------------------------------------------------------------------------
def test_the_swiss_report_lists_each_round_with_scores_before_it_and_the_byes(
        events: dict[str, Path]) -> None:
    folder = events["swiss"]
    page = (folder / "report.html").read_text()
    rounds = _rounds(folder)
    points = _match_points(folder)
    assert len(rounds) == 2
    assert "<h2>Rounds</h2>" in page and 'href="#rounds"' in page
    assert 'id="bracket"' not in page and "<svg" not in page
    rows = _rows(page, "round")
    before = {name: 0.0 for name in SEEDS}
    for entry in rounds:
        assert f">Round {entry['round']}</caption>" in page
        after = dict(before)
        for board, (a, b) in enumerate(entry["pairs"], 1):
            p = points[(entry["round"], frozenset((a, b)))]
            expected = (f"{board}|{a} ({_half(before[a])})|{_half(p[a])}–{_half(p[b])}|"
                        f"{b} ({_half(before[b])})|")
            assert any(row.startswith(expected) for row in rows), (expected, rows)
            after[a] += p[a]
            after[b] += p[b]
        bye = entry["bye"]
        assert bye is not None  # 5 players: a bye every round
        line = (f"{bye} ({_half(before[bye])}): bye "
                f"(+{_half(entry['bye_points'])} points)")
        assert any(row.endswith(line) for row in rows), (line, rows)
        after[bye] += entry["bye_points"]
        before = after
    # every game is linked to its viewer page
    pages = re.findall(r'<a class="g" href="(games/[^"]+)"', page)
    assert len(pages) == sum(1 for _ in (folder / "games.jsonl").open())
    assert all((folder / p).is_file() for p in pages)


def test_a_round_robin_report_has_no_rounds_or_bracket(tmp_path: Path) -> None:
    records = [_record(w, b, res, f"nine-mens-morris/r{k // 2 + 1}/m0/p1/g{k % 2}", k // 2 + 1)
               for k, (w, b, res) in enumerate([("a", "b", "1-0"), ("b", "a", "1/2-1/2"),
                                                ("a", "b", "0-1"), ("b", "a", "1-0")])]
    assert load_rounds(tmp_path) is None
    page = build_report(tmp_path, records).read_text()
    assert 'id="standings"' in page
    for absent in ('id="rounds"', 'id="bracket"', "<h2>Rounds</h2>", "<h2>Bracket</h2>",
                   "<svg", 'href="#rounds"', 'href="#bracket"'):
        assert absent not in page


# -- the pure parts, on made-up records ---------------------------------------------------
def _record(white: str, black: str, result: str, game_id: str, rnd: int) -> GameRecord:
    return GameRecord(game_id=game_id, variant=game_id.split("/")[0], variant_params={},
                      white=PlayerInfo(white, bot=white), black=PlayerInfo(black, bot=black),
                      result=result, termination="too-few-men", moves=[MoveInfo("a1", 1.0)],
                      round=rnd)


def _pair(rnd: int, a: str, b: str, results: list[str], first_pair: int = 1,
          meeting: int = 0) -> list[GameRecord]:
    """Colour-swapped games of ``a`` and ``b``: ``results`` from White's side, ``a`` White
    first."""
    out = []
    for k, res in enumerate(results):
        w, bl = (a, b) if k % 2 == 0 else (b, a)
        out.append(_record(w, bl, res, f"three-mens-morris/r{rnd}/m{meeting}/"
                                       f"p{first_pair + k // 2}/g{k % 2}", rnd))
    return out


def test_a_tied_match_goes_through_on_seed_and_an_unfinished_final_has_no_champion() -> None:
    # seeds 1..4: a, b, c, d -> bracket lines a, d, b, c
    rounds = (Round(1, "knockout", lines=("a", "d", "b", "c")),
              Round(2, "knockout", lines=("a", "b")))
    records = (_pair(1, "a", "d", ["1-0", "1-0"])
               # b and c level after the match and both tie-break pairs: b, the better seed
               + _pair(1, "b", "c", ["1-0", "1-0", "1/2-1/2", "1/2-1/2", "0-1", "0-1"])
               + _pair(2, "a", "b", ["1-0"]))  # the final: one game of two played
    data = RoundsData(rounds, MatchRules(games_per_pairing=2, variants=1, tiebreak_pairs=2))
    section = rounds_section(data, records, {})
    assert section is not None and section[0] == "bracket"
    text = section[2]
    rows = _rows(text, "bracket-table")
    assert any("|b|3–3|c|" in row and row.endswith("|b through on seed (tied)") for row in rows)
    assert "tied: through on seed" in text  # under the match in the picture
    assert "No champion yet." in text and ">not yet decided</text>" in text
    assert any("|a|1–0|b|" in row and row.endswith("|in play") for row in rows)
    # the final complete: a is the champion
    done = records + [_record("b", "a", "1/2-1/2", "three-mens-morris/r2/m0/p1/g1", 2)]
    final = rounds_section(data, done, {})
    assert final is not None and "Champion: <b>a</b>." in final[2]
    assert any("|a|1½–½|b|" in row for row in _rows(final[2], "bracket-table"))


def test_a_tied_match_is_decided_by_seed_only_after_its_tiebreak_pairs() -> None:
    rounds = (Round(1, "knockout", lines=("a", "b")),)
    data = RoundsData(rounds, MatchRules(games_per_pairing=2, variants=1, tiebreak_pairs=1))
    level = _pair(1, "b", "a", ["1-0", "1-0"])  # 1-1 after the match: a further pair is due
    section = rounds_section(data, level, {})
    assert section is not None and "No champion yet." in section[2]
    tied = _pair(1, "b", "a", ["1-0", "1-0", "1/2-1/2", "1/2-1/2"])
    section = rounds_section(data, tied, {})
    assert section is not None
    assert "Champion: <b>a</b>." in section[2] and "a through on seed (tied)" in section[2]
    assert any("|a|2–2|b|" in row for row in _rows(section[2], "bracket-table"))


def test_names_are_escaped_and_games_link_to_their_pages() -> None:
    bad = '<script>alert("x")</script>\x1b'
    rounds = (Round(1, "swiss", pairs=((bad, "b"),), bye=("c",), bye_points=1.0),)
    records = _pair(1, bad, "b", ["1-0", "1/2-1/2"])
    pages = {records[0].game_id: "games/one.html"}
    section = rounds_section(RoundsData(rounds), records, pages)
    assert section is not None
    text = section[2]
    assert "<script>" not in text and "&lt;script&gt;" in text and "\\x1b" in text
    assert 'href="games/one.html"' in text and text.count('<a class="g"') == 1
    assert "c <span class=\"pts\">(0)</span>: bye (+1 point)" in text
    # and in the page, through the template, unchanged (not escaped twice)
    page = render_html(page_context(records, [rate(records)], [], "t", "sandwich", None,
                                    pages, rounds=RoundsData(rounds)))
    assert text in page and 'href="#rounds">Rounds</a>' in page


# -- in a browser ----------------------------------------------------------------------------
def test_the_bracket_and_the_rounds_read_well_in_a_browser(
        driver: Any, events: dict[str, Path], tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    driver.set_window_size(1280, 1000)
    save = os.environ.get("ARENA_DOCS_IMAGES") == "1"
    for name, section in (("ko", "bracket"), ("swiss", "rounds")):
        driver.get((events[name] / "report.html").as_uri())
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "screen"})
        # nothing wider than the page
        assert driver.execute_script(
            "return document.documentElement.scrollWidth <= window.innerWidth")
        if section == "bracket":
            # every name fits its box, left of the points; type at 12 px or more
            problems = driver.execute_script("""
                const svg = document.querySelector('#bracket svg');
                const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
                const out = [];
                if (15 * scale < 12) out.push('type too small: ' + 15 * scale);
                for (const g of svg.querySelectorAll('g.match')) {
                  const box = g.querySelector('rect').getBBox();
                  for (const t of g.querySelectorAll('text')) {
                    const b = t.getBBox();
                    if (b.x < box.x || b.x + b.width > box.x + box.width + 0.5)
                      out.push('outside its box: ' + t.textContent);
                  }
                  const names = [...g.querySelectorAll('text[clip-path]')];
                  const points = [...g.querySelectorAll('text[text-anchor=end]')];
                  for (const n of names) for (const p of points) {
                    const a = n.getBBox(), c = p.getBBox();
                    if (Math.abs(a.y - c.y) < 2 && a.x + a.width > c.x - 4)
                      out.push('name meets its points: ' + n.textContent);
                  }
                }
                return out;""")
            assert problems == []
        shot = f"report-{'bracket' if name == 'ko' else 'swiss-rounds'}.png"
        target = ROOT / "docs" / "images" / shot if save else tmp_path / shot
        target.parent.mkdir(exist_ok=True)
        assert driver.find_element(By.ID, section).screenshot(str(target))
    # printed: the rounds' tables are there, each kept whole
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    assert driver.execute_script(
        "return [...document.querySelectorAll('.rounds table.round')].every("
        "t => getComputedStyle(t.parentElement).breakInside === 'avoid'"
        " && t.getClientRects().length > 0)")
    errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    assert errors == []
