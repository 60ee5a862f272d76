"""Issue 25, a report a class can read: the report of a 40-bot, 2-variant tournament (records
from tests/synth_records.py, no game played) opened in Chromium at 1280 px has no sideways
page scroll, opens with the points table, explains every column (on hover and in the
glossary), keeps the method in a collapsed section, scrolls the crosstable inside its own box
(bot column fixed) and has a print stylesheet.  The browser tests need Chromium and
chromedriver (the ``driver`` fixture skips them with the reason otherwise); the words and the
console's table are checked without a browser."""

from __future__ import annotations

import random
import struct
import zlib
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterator

import pytest
from click.testing import CliRunner

from arena.ratings import Standings, rate_all, score_from_elo
from arena.records import GameRecord
from arena.report import format_standings
from arena.report.botpages import bot_context, bot_page_names, render_bot_page
from arena.report.charts import Chart
from arena.report.html import page_context, render_html
from arena.report.words import (COLUMNS, DEFAULT_RULE, elo_gap_sentence, gap_percent,
                                ranking_caption, ranking_rule)
from tests.synth_records import make_record, round_robin

WIDTH = 1280
#: the bot that loses every game: its Elo rests on the prior (the * column and its note)
LOSER = "zz-loses-every-game"


def _records() -> list[GameRecord]:
    rng = random.Random(25)
    names = [f"student-bot-{k:02d}" for k in range(37)] + [
        "a-rather-long-bot-name-for-the-width", "openspiel-mcts-wrapper"]
    elos = {n: rng.uniform(-900.0, 900.0) for n in names}
    elos[LOSER] = -4000.0
    recs = round_robin(elos, 1, seed=1) + round_robin(elos, 1, seed=2, variant="lasker")
    recs.append(make_record("openspiel-mcts-wrapper", "student-bot-01", 0.0, pair=None,
                            termination="timeout", forfeit="white", game_id="late-1",
                            detail="white (openspiel-mcts-wrapper) no bestmove within 300 ms"))
    return recs


def _png(width: int, height: int) -> bytes:
    """A plain grey PNG (a chart far wider than the page), without matplotlib."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    rows = b"".join(b"\x00" + b"\xc0" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0,
                                                                0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[GameRecord],
                                                              list[Standings]]:
    """report.html and one bot page of the 40-bot tournament (pages written directly: no
    charts drawn, no game pages)."""
    folder = tmp_path_factory.mktemp("class")
    records = _records()
    tables = rate_all(records)
    bots = bot_page_names(records)
    charts = [Chart("wide.png", "A chart wider than the page", _png(2400, 300))]
    context = page_context(records, tables, charts, "Class 4B spring tournament",
                           "pair-clustered sandwich", 200, None, bots)
    (folder / "report.html").write_text(render_html(context), encoding="utf-8")
    (folder / "bots").mkdir()
    page = folder / bots[LOSER]
    page.write_text(render_bot_page(bot_context(LOSER, records, tables, "Class 4B", None, None,
                                                bots)), encoding="utf-8")
    return folder, records, tables


@pytest.fixture
def page(driver: Any, built: tuple[Path, list[GameRecord], list[Standings]]) -> Iterator[Any]:
    """The report open at 1280 px (screen media)."""
    driver.set_window_size(WIDTH, 900)
    driver.get((built[0] / "report.html").resolve().as_uri())
    assert driver.execute_script("return window.innerWidth") == WIDTH
    yield driver
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})


def _standings_headers(driver: Any) -> list[dict[str, str]]:
    return driver.execute_script("""
        return [...document.querySelectorAll('table.standings th')].map(
            th => ({text: th.textContent.trim(), title: th.title || ''}));""")


def test_the_tournament_is_the_one_of_the_issue(
        built: tuple[Path, list[GameRecord], list[Standings]]) -> None:
    _, records, tables = built
    assert len({n for r in records for n in (r.white.name, r.black.name)}) == 40
    assert [t.label for t in tables] == ["nine-mens-morris", "lasker", "all variants"]
    assert all(t.row(LOSER).prior for t in tables)  # the * column is shown and explained


def test_no_sideways_page_scroll_at_1280_px(page: Any, built: tuple[Path, Any, Any],
                                            tmp_path: Path) -> None:
    assert page.execute_script("return document.documentElement.scrollWidth") <= WIDTH
    assert page.execute_script("return document.body.scrollWidth") <= WIDTH
    # the wide chart is shrunk to the page
    img = page.execute_script("const i = document.querySelector('figure img');"
                              "return [i.naturalWidth, i.getBoundingClientRect().right];")
    assert img[0] == 2400 and img[1] <= WIDTH
    # the screenshot a reader looks at (kept with the test's files)
    assert page.save_screenshot(str(tmp_path / "report-1280.png"))


def test_the_first_table_after_the_title_is_the_points_table(
        page: Any, built: tuple[Path, list[GameRecord], list[Standings]]) -> None:
    tables = built[2]
    first = page.execute_script("""
        const h1 = document.querySelector('h1');
        const t = [...document.querySelectorAll('table')].find(
            t => h1.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING);
        return {cls: t.className, rule: t.caption ? t.caption.textContent : '',
                heads: [...t.tHead.rows[0].cells].map(c => c.textContent.trim()),
                top: t.getBoundingClientRect().top};""")
    assert first["cls"] == "standings"
    assert first["heads"][:5] == ["#", "bot", "points", "W-D-L", "games"]
    assert "Elo" in first["heads"] and "±" in first["heads"]
    assert first["rule"].strip() == ranking_caption(tables[0])  # it says how it is ordered
    assert first["top"] < 900  # on the first screen
    # the * column has a header
    assert "guess" in first["heads"]


def test_every_column_is_explained_on_hover_and_in_the_glossary(page: Any) -> None:
    glossary = page.execute_script("""
        return [...document.querySelectorAll('#glossary dt')].map(
            dt => [dt.textContent.trim(), dt.nextElementSibling.textContent.trim()]);""")
    explained = dict(glossary)
    headers = _standings_headers(page)
    assert headers
    for th in headers:
        assert th["title"], f"column {th['text']!r} has no explanation on hover"
        assert explained.get(th["text"]), f"column {th['text']!r} is not in the glossary"
    # the plain-words line on Elo and ±, with the figure from the Elo formula
    words = page.find_element("id", "standings").find_element(
        "xpath", "following-sibling::ul").text
    assert f"about {round(100 * score_from_elo(100))} %" in words and "±" in words
    # the statistics are there, but folded away
    method = page.find_element("id", "method")
    assert method.tag_name == "details" and method.get_attribute("open") is None
    text = method.get_attribute("textContent")
    for word in ("Bradley–Terry", "sandwich", "Sonneborn–Berger", "prior"):
        assert word in text
    assert not page.execute_script(
        "return document.querySelector('#method table').checkVisibility()")


def test_the_crosstable_scrolls_inside_its_box_with_the_bot_column_fixed(page: Any) -> None:
    box = page.find_element("css selector", ".crosswrap")
    page.execute_script("arguments[0].scrollIntoView()", box)
    sizes = page.execute_script(
        "const b = arguments[0]; return [b.scrollWidth, b.clientWidth, "
        "getComputedStyle(b).overflowX];", box)
    assert sizes[0] > sizes[1] and sizes[2] == "auto"  # 40 columns: wider than the box
    name = page.find_element("css selector", ".cross tbody td.name")
    before = name.rect["x"]
    page.execute_script("arguments[0].scrollLeft = 600", box)
    assert page.execute_script("return arguments[0].scrollLeft", box) > 0
    assert abs(name.rect["x"] - before) < 1  # the bot names stay in place
    assert page.execute_script("return document.documentElement.scrollWidth") <= WIDTH


def test_the_print_stylesheet(page: Any) -> None:
    css = page.find_element("tag name", "style").get_attribute("textContent")
    assert "@media print" in css
    page.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    printed = page.execute_script("""
        const s = q => getComputedStyle(document.querySelector(q));
        return {nav: s('nav.toc').display, row: s('table.standings tbody tr').breakInside,
                method: document.querySelector('#method table').checkVisibility(),
                open: document.querySelector('#method').open,
                img: s('figure img').maxWidth, cross: s('.crosswrap').overflowX,
                page: s('.crossblock').page};""")
    assert printed["nav"] == "none"                   # no navigation chrome
    assert printed["row"] == "avoid"                  # rows not cut across pages
    assert printed["method"] and not printed["open"]  # the method printed, though folded
    assert printed["img"] == "100%"                   # charts fit the page
    assert printed["cross"] == "visible"              # no scroll box on paper
    assert printed["page"] == "wide"                  # the crosstable on a landscape page
    sizes = page.execute_script("return [...document.querySelectorAll('table.cross')].map("
                                "t => parseFloat(t.style.getPropertyValue('--print-size')))")
    assert sizes and all(4.5 <= s <= 9 for s in sizes)


def test_the_bot_page_reads_the_same_way(driver: Any,
                                         built: tuple[Path, list[GameRecord], Any]) -> None:
    folder, records, _ = built
    driver.set_window_size(WIDTH, 900)
    driver.get((folder / bot_page_names(records)[LOSER]).resolve().as_uri())
    assert driver.execute_script("return document.documentElement.scrollWidth") <= WIDTH
    headers = _standings_headers(driver)
    assert [h["text"] for h in headers][:4] == ["table", "#", "points", "W-D-L"]
    assert all(h["title"] for h in headers) and "guess" in [h["text"] for h in headers]
    notes = driver.execute_script("return [...document.querySelectorAll('table.standings "
                                  "td.flag')].map(td => td.textContent.trim())")
    assert notes and all(n == "lost every game (0%)" for n in notes)


# ---------------------------------------------------------------------------------------
# Without a browser: the words, the ranking rule, the console
# ---------------------------------------------------------------------------------------


def test_the_figures_in_the_words_come_from_the_elo_formula() -> None:
    for gap in (0, 100, 200, 400, -100):
        assert gap_percent(gap) == round(100 * score_from_elo(gap))
    assert gap_percent(100) == 64 and "about 64 %" in elo_gap_sentence()
    assert all(c.header and c.meaning for c in COLUMNS.values())


def test_the_ranking_rule_is_the_standings_own_when_they_give_one() -> None:
    from markupsafe import escape

    assert ranking_rule(SimpleNamespace()) == DEFAULT_RULE
    given = SimpleNamespace(caption="Ranked by score: the bots played different games.")
    assert ranking_rule(given) == given.caption
    recs = round_robin({"a": 0.0, "b": 0.0}, 1, seed=1)
    st = rate_all(recs)[0]
    html = render_html(page_context(recs, [st], [], "t", "sandwich", None))
    assert f"<caption>{escape(ranking_caption(st))}</caption>" in html
    assert ranking_caption(given) == given.caption
    assert ranking_caption(SimpleNamespace(caption="ranked by Elo")) == "Ranked by Elo."
    text = format_standings([st])
    first = " ".join(text[:text.index("\nrank ")].split())  # the line above the header
    assert first.startswith("nine-mens-morris: 2 games, ranked by ")
    assert ranking_rule(st, "ranked by points").lower().rstrip(".") in first.lower()


def test_the_console_table_reads_as_a_sports_table_with_one_legend() -> None:
    recs = round_robin({"alice": 100.0, "bob": 0.0, "carol": -100.0}, 2, seed=3)
    recs += round_robin({"alice": 0.0, "bob": 0.0}, 2, seed=4, variant="lasker")
    text = format_standings(rate_all(recs), recs)
    header = next(line for line in text.splitlines() if line.startswith("rank"))
    assert header.split()[:6] == ["rank", "bot", "points", "W-D-L", "games", "score"]
    assert text.count("rank  bot") == 3  # two variants and all of them
    words = " ".join(text.split())
    assert words.count("a 100-point gap") == 1 and "about 64 %" in words
    assert max(len(line) for line in text.splitlines()[-5:]) <= 92


def test_arena_run_prints_the_standings_once(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    import arena.cli.run as run_module
    import arena.config
    import arena.tournament
    from arena.cli import cli
    from arena.standings import compute_standings

    recs = round_robin({"alice": 100.0, "bob": 0.0, "carol": -100.0}, 2, seed=3)
    elo = format_standings(rate_all(recs), recs)
    result = arena.tournament.TournamentResult(
        total=len(recs), finished=len(recs), played=len(recs), interrupted=False,
        folder=tmp_path, standings=compute_standings(recs), elo=elo)
    config = SimpleNamespace(name="cup", isolation=None)
    monkeypatch.setattr(arena.config, "load_config", lambda *a, **k: config)
    monkeypatch.setattr(arena.tournament, "run_tournament", lambda *a, **k: result)
    monkeypatch.setattr(run_module, "warn_isolation", lambda isolation: None)
    out = CliRunner().invoke(cli, ["run", str(tmp_path / "cup.yaml")])
    assert out.exit_code == 0, out.output
    assert out.output.count("alice") == 1 and out.output.count("bob") == 1
    assert "Elo" in out.output and "W-D-L" in out.output
    # without the ratings table (no report): the runner's points table, once
    result.elo = None
    out = CliRunner().invoke(cli, ["run", str(tmp_path / "cup.yaml")])
    assert out.exit_code == 0, out.output
    assert out.output.count("alice") == 1 and "W-D-L" in out.output
