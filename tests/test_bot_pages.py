"""A page per bot (issue 12.4): from a real tiny tournament, every bot has ``bots/<name>.html``
linked from the report's standings, with its standings, results by opponent and variant (summing
to its games), its games linked to their viewer pages, and its forfeits grouped by reason with
one stderr example; bot text is escaped; stale pages go on a rebuild."""

from __future__ import annotations

import html as htmllib
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.records import GameRecord, read_records
from arena.report import build_report
from arena.report.botpages import bot_page_names

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "tests" / "bots"
#: the display name of bots/greedy: markup and a control character
HOSTILE = "<script>alert(1)</script>\x07greedy"

TOURNAMENT = f"""\
name: botpages
bots:
  - {ROOT}/bots/random
  - {{path: {ROOT}/bots/greedy, name: "<script>alert(1)</script>\\x07greedy"}}
  - {BOTS}/exit-at-start
variants: [three-mens-morris, six-mens-morris]
games_per_pairing: 2
time: {{movetime: 100, margin: 300}}
workers: 4
seed: 5
isolation: none
report: false
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[GameRecord]]:
    work = tmp_path_factory.mktemp("botpages")
    config = work / "botpages.yaml"
    config.write_text(TOURNAMENT + f"output: {work / 'results'}\n", encoding="utf-8")
    res = CliRunner().invoke(cli, ["run", str(config)])
    assert res.exit_code == 0, res.output
    folder = work / "results"
    records = read_records(folder / "games.jsonl")
    build_report(folder, records)
    return folder, records


def _page(folder: Path, bot: str) -> str:
    return (folder / bot_page_names(read_records(folder / "games.jsonl"))[bot]).read_text(
        encoding="utf-8")


def _section(page: str, name: str) -> str:
    start = page.index(f'<h2 id="{name}">')
    end = page.find("<h2 ", start + 1)
    return page[start:end if end > 0 else len(page)]


def test_every_bot_has_a_page_linked_from_the_report(
        results: tuple[Path, list[GameRecord]]) -> None:
    folder, records = results
    names = bot_page_names(records)
    assert set(names) == {"random", HOSTILE, "exit-at-start"}
    report = (folder / "report.html").read_text(encoding="utf-8")
    standings = report[report.index('<h2 id="standings">'):report.index('<h2 id="charts">')]
    for bot, page in names.items():
        assert (folder / page).is_file()
        assert page.startswith("bots/") and f'<a href="{page}">' in standings
        text = (folder / page).read_text(encoding="utf-8")
        assert "<script" not in text.replace("&lt;script", "")  # no script of ours either
        assert 'href="../report.html"' in text


def test_opponent_table_sums_to_the_bots_games(results: tuple[Path, list[GameRecord]]) -> None:
    folder, records = results
    for bot in bot_page_names(records):
        mine = [r for r in records if bot in (r.white.name, r.black.name)]
        page = _page(folder, bot)
        table = _section(page, "opponents")
        rows = re.findall(r'<tr><td class="name">(.*?)</td><td class="name">(.*?)</td>'
                          r'<td>(\d+)</td>\s*<td>(\d+)-(\d+)-(\d+)</td>', table)
        assert rows and sum(int(r[2]) for r in rows) == len(mine)
        for _, _, n, w, d, lost in rows:
            assert int(w) + int(d) + int(lost) == int(n)
        # one row per opponent and variant
        assert len(rows) == len({(r.variant, r.black.name if r.white.name == bot else r.white.name)
                                 for r in mine})
        games = _section(page, "games")
        assert games.count("<tr") - 1 == len(mine)
        # the standings: one row per table the bot is in (each variant and all variants)
        standings = _section(page, "standings")
        assert standings.count(" of 3</td>") == 3


def test_forfeits_grouped_with_one_stderr_example(results: tuple[Path, list[GameRecord]]) -> None:
    folder, records = results
    starts = [r for r in records if r.termination == "start-failure"]
    assert len(starts) == 8  # exit-at-start: 2 opponents x 2 variants x 2 games
    forfeits = _section(_page(folder, "exit-at-start"), "forfeits")
    assert forfeits.count('<tr class="group">') == 1
    assert '<td class="name">start-failure</td><td>8</td>' in forfeits
    assert forfeits.count("<pre>") == 1 and forfeits.count("<pre>exit-at-start: bye") == 1
    assert "lost no game by forfeit" in _section(_page(folder, "random"), "forfeits")


def test_game_links_point_to_existing_pages(results: tuple[Path, list[GameRecord]]) -> None:
    folder, records = results
    for bot, page in bot_page_names(records).items():
        text = (folder / page).read_text(encoding="utf-8")
        links = re.findall(r'href="(\.\./games/[^"]+)"', text)
        mine = {r.game_id for r in records if bot in (r.white.name, r.black.name)}
        assert len(set(links)) == len(mine)
        for link in links:
            assert (folder / "bots" / htmllib.unescape(link)).resolve().is_file(), link


def test_bot_text_is_escaped(results: tuple[Path, list[GameRecord]]) -> None:
    folder, records = results
    for page in bot_page_names(records).values():
        text = (folder / page).read_text(encoding="utf-8")
        assert "<script>" not in text and "\x07" not in text
    page = _page(folder, HOSTILE)
    assert "<h1>&lt;script&gt;alert(1)&lt;/script&gt;\\x07greedy</h1>" in page
    report = (folder / "report.html").read_text(encoding="utf-8")
    assert "<script>" not in report and "\x07" not in report


def test_stale_bot_pages_are_removed(results: tuple[Path, list[GameRecord]],
                                     tmp_path: Path) -> None:
    _, records = results
    build_report(tmp_path, records)
    before = {p.name for p in (tmp_path / "bots").glob("*.html")}
    assert len(before) == 3
    build_report(tmp_path, [r for r in records if "exit-at-start" not in
                            (r.white.name, r.black.name)])
    after = {p.name for p in (tmp_path / "bots").glob("*.html")}
    assert len(after) == 2 and after < before
