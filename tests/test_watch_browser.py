"""``arena watch`` in headless Chromium (issue 40): on a running 4-bot tournament a board's
position changes and the standings' game count grows without a reload; on a running
``arena sprt --out`` the LLR chart gains points.  Real processes: ``arena run --watch`` and
``arena sprt --out --watch``, the page's own server, the browser."""

from __future__ import annotations

import csv
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.test_watch import ARENA, ROOT, _stop, _tournament, _until, _url_of
from tests.test_watch_follow import KNOCKOUT

pytestmark = pytest.mark.slow


def _start(args: list[str], cwd: Path) -> tuple[subprocess.Popen[bytes], str]:
    err = cwd / "run.err"
    with open(err, "wb") as stderr:
        run = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=stderr,
                               stdin=subprocess.DEVNULL)
    return run, _url_of(err, run, " ".join(args[3:5]))


@pytest.fixture
def tournament(tmp_path: Path) -> Iterator[str]:
    run, url = _start([*ARENA, "run", str(_tournament(tmp_path, "live", bots=4, games=2)),
                       "--watch"], tmp_path)
    try:
        yield url
    finally:
        _stop(run)


def _boards(driver: Any) -> dict[str, tuple[str, str]]:
    """Each board on the page: its game id -> (its ply, its men)."""
    return driver.execute_script(
        "var out = {}; document.querySelectorAll('#boards article.game').forEach(function (g) {"
        " out[g.dataset.game] = [g.dataset.ply, Array.prototype.map.call("
        "  g.querySelectorAll('circle.man'), function (m) {"
        "   return m.dataset.point + m.dataset.color; }).join(' ')]; }); return out;")


def test_the_page_follows_a_running_tournament_without_a_reload(driver: Any,
                                                                tournament: str) -> None:
    driver.get(tournament)
    driver.execute_script("window.notReloaded = true;")
    first = _until("a board", lambda: _boards(driver))
    game, (ply, men) = next(iter(first.items()))

    def moved() -> bool:
        now = _boards(driver)
        return any(g == game and (p, m) != (ply, men) for g, (p, m) in now.items()) or (
            game not in now and bool(now))

    _until("the board's position to change", moved)
    games = _until("a finished game in the status", lambda: int(
        driver.find_element("id", "status").get_attribute("data-games")) or None)
    _until("the game count to grow", lambda: int(
        driver.find_element("id", "status").get_attribute("data-games")) > games, 180)
    played = driver.execute_script(
        "var n = 0; document.querySelectorAll('#standings tbody tr').forEach(function (r) {"
        " n += Number(r.children[2].textContent); }); return n;")
    assert played >= 2 * (games + 1)
    assert driver.execute_script("return window.notReloaded === true;")
    # the projector layout: the boards without the controls
    driver.get(tournament + "?layout=projector")
    _until("a board in the projector layout", lambda: _boards(driver))
    assert "projector" in driver.find_element("tag name", "body").get_attribute("class")
    assert not driver.find_element("id", "controls").is_displayed()
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []


def test_the_page_draws_a_running_sprt(driver: Any, tmp_path: Path) -> None:
    run, url = _start([*ARENA, "sprt", str(ROOT / "bots" / "random"),  # equal: no verdict soon
                       str(ROOT / "bots" / "random"), "--movetime", "20", "--max-pairs", "2000",
                       "--elo0", "-5", "--elo1", "5", "--isolation", "none",
                       "--out", str(tmp_path / "sprt"), "--watch", "-j", "2"], tmp_path)
    try:
        driver.get(url)
        driver.execute_script("window.notReloaded = true;")

        def points() -> int:
            return int(driver.execute_script(
                "var l = document.querySelector('#llr-chart polyline.line');"
                "return l ? Number(l.getAttribute('data-points')) : 0;"))

        first = _until("the LLR chart", points)
        _until("more LLR points", lambda: points() > first)
        summary = driver.find_element("id", "sprt-summary").text
        assert "random vs random (B)" in summary and "LLR" in summary
        assert driver.execute_script("return window.notReloaded === true;")
    finally:
        _stop(run)


def test_a_knockouts_page_draws_its_bracket_and_places(driver: Any, tmp_path: Path) -> None:
    config = tmp_path / "cup.yaml"
    config.write_text(KNOCKOUT.replace("report: false", "report: false\nisolation: none"),
                      encoding="utf-8")
    played = subprocess.run([*ARENA, "run", str(config)], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300)
    assert played.returncode == 0, played.stderr[-2000:]
    with open(tmp_path / "results" / "cup" / "standings.csv", encoding="utf-8") as f:
        ranks = {r["bot"]: r["place"]
                 for r in csv.DictReader(f)}
    run, url = _start([*ARENA, "watch", str(tmp_path / "results" / "cup")], tmp_path)
    try:
        driver.get(url)
        _until("the bracket", lambda: driver.execute_script(
            "return document.querySelectorAll('#bracket svg title').length;") >= 5)
        champion = driver.find_element("id", "champion").text
        assert champion.startswith("Champion: ")
        assert driver.find_element("id", "standings-note").is_displayed()
        shown = driver.execute_script(
            "var out = {}; document.querySelectorAll('#standings tbody tr').forEach(function (r) {"
            " out[r.children[1].textContent] = r.children[0].textContent; }); return out;")
        assert shown == ranks and ranks[champion[len("Champion: "):]] == "1"
        assert "at least" not in driver.find_element("id", "status").text  # finished: counted
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []  # the bracket's inline style is not applied (the page's CSP)
        driver.save_screenshot(str(tmp_path / "bracket.png"))
    finally:
        _stop(run)
