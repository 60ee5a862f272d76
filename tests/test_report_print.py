"""The report for a class of 40 (issue 36): printed, it leaves out the game list (a summary
stands in for it), so 1,560 games do not print as 38 more pages; its head-to-head map keeps
labels that can be read at 40 bots."""

from __future__ import annotations

import base64
import random
import re
import struct
from pathlib import Path
from typing import Any

import pytest

from arena.ratings import rate
from arena.records import GameRecord
from arena.report.charts import (NUMBERED_FROM, PAGE_WIDTH_IN, chart_head_to_head,
                                 heat_map_layout)
from arena.report.html import game_endings, page_context, render_html
from tests.synth_records import round_robin


def _class_of(n: int) -> list[GameRecord]:
    rng = random.Random(4)
    return round_robin({f"student{k:02d}_{rng.choice('abcdef')}": rng.gauss(0, 300)
                        for k in range(n)}, 1, seed=3, draw=0.15)


@pytest.fixture(scope="module")
def class_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[GameRecord]]:
    """report.html (no charts, no viewer pages) of 40 bots, one colour-swapped pair each."""
    records = _class_of(40)
    html = render_html(page_context(records, [rate(records)], [], "class", "sandwich", None))
    path = tmp_path_factory.mktemp("print") / "report.html"
    path.write_text(html, encoding="utf-8")
    return path, records


def _pdf_pages(driver: Any) -> int:
    pdf = base64.b64decode(driver.execute_cdp_cmd("Page.printToPDF", {})["data"])
    return len(re.findall(rb"/Type\s*/Page[^s]", pdf))


def _shown(driver: Any, selector: str) -> bool:
    return bool(driver.execute_script(
        "const e = document.querySelector(arguments[0]);"
        "return e !== null && getComputedStyle(e).display !== 'none' && e.getClientRects().length > 0;",
        selector))


def test_the_printout_leaves_the_game_list_out_and_summarises_it(
        driver: Any, class_page: tuple[Path, list[GameRecord]]) -> None:
    path, records = class_page
    assert len(records) == 1560
    driver.get(path.as_uri())
    # on screen: the list, no summary
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "screen"})
    assert _shown(driver, "table.games") and not _shown(driver, "p.print-only")
    # printed: the summary, no list
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    assert not _shown(driver, "table.games") and _shown(driver, "p.print-only")
    summary = driver.execute_script("return document.querySelector('p.print-only').textContent")
    assert "1560 games" in summary and "left out of the printout" in summary
    ended = game_endings(records)[0]
    assert f"{ended['kinds'][0][0]} {ended['kinds'][0][1]}" in " ".join(summary.split())
    pages = _pdf_pages(driver)
    # the same page with the list printed: it alone takes dozens of pages
    driver.execute_script("const s = document.createElement('style');"
                          "s.textContent = '.gamelist { display: block !important; }';"
                          "document.head.append(s);")
    with_list = _pdf_pages(driver)
    assert pages <= 8 and with_list >= pages + 25, (pages, with_list)


def _png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def test_the_head_to_head_map_stays_readable_at_40_bots() -> None:
    records = _class_of(40)
    order = [r.bot for r in rate(records).rows]
    png = chart_head_to_head(records, order)
    assert png is not None
    width, height = _png_size(png)
    # shown at its own size on the page (not shrunk), labels of 8 points: 11 pixels
    assert width <= 100 * PAGE_WIDTH_IN and height <= 100 * PAGE_WIDTH_IN
    layout = heat_map_layout(40, 16)
    assert layout.numbered and layout.fontsize >= 8 and layout.shown_px() >= 10.5
    # every bot's row is at least as tall as its label
    assert layout.cell * 72 >= 1.5 * layout.fontsize


@pytest.mark.parametrize("n", [2, 8, 16, NUMBERED_FROM, 30, 40])
def test_the_map_labels_are_never_smaller_than_the_rest_of_the_page_can_show(n: int) -> None:
    layout = heat_map_layout(n, 28)
    assert layout.shown_px() >= 10.5, (n, layout)
    assert layout.numbered == (n > NUMBERED_FROM) and layout.figures == (n <= 16)
