"""Issue 12's report parts: forfeits grouped by bot and reason (on the page and on the
console), the score-over-rounds chart, and charts that say in one line why there is nothing to
draw instead of showing an empty frame.  Ends with a small real tournament with misbehaving
bots."""

from __future__ import annotations

import io
import logging
import re
from dataclasses import replace
from pathlib import Path

import pytest

from arena import report as RP
from arena.config import load_config
from arena.ratings import Standings, rate_all
from arena.records import read_records
from arena.report import charts
from arena.report.charts import score_over_rounds
from arena.report.forfeits import forfeit_reason, group_forfeits
from arena.tournament import run_tournament
from tests.synth_records import make_record, round_robin

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "tests" / "bots"
PNG = b"\x89PNG\r\n\x1a\n"


def _crash(game_id: str, white: str, black: str, move: int, color: str = "white") -> object:
    bot = white if color == "white" else black
    return make_record(white, black, 0.0 if color == "white" else 1.0, termination="crash",
                       forfeit=color, pair=None, game_id=game_id,
                       detail=f"{color} ({bot}) crashed on move {move}: exit code 1 after 12.5 ms",
                       stderr={color: f"Traceback {game_id}\nRuntimeError: boom"})


def test_forfeits_group_by_reason_with_game_specific_parts_normalised() -> None:
    recs = [_crash(f"g{k}", "alice", "bob", 5 + k, "white" if k % 2 else "black")
            if k % 2 else _crash(f"g{k}", "bob", "alice", 5 + k, "black") for k in range(6)]
    recs.append(make_record("alice", "bob", 0.0, termination="timeout", forfeit="white",
                            pair=None, game_id="t1", detail="white (alice) took 900 ms"))
    recs.append(make_record("alice", "bob", 1.0, pair=None, game_id="ok"))  # no forfeit
    assert forfeit_reason(recs[0]) == forfeit_reason(recs[1])
    assert "N" in forfeit_reason(recs[0]) and "5" not in forfeit_reason(recs[0])
    groups = group_forfeits(recs)
    assert list(groups) == ["alice"]
    crash, timeout = groups["alice"]
    assert (crash.termination, crash.count, crash.games[0]) == ("crash", 6, "g0")
    assert crash.stderr == "Traceback g0\nRuntimeError: boom"  # the first game's, once
    assert (timeout.termination, timeout.count) == ("timeout", 1)


def test_the_page_shows_one_row_per_group_with_its_count_and_one_stderr(tmp_path: Path) -> None:
    recs = [_crash(f"g{k}", "alice", "bob", 5 + k) for k in range(20)]
    recs += round_robin({"alice": 0.0, "bob": 0.0}, 3, seed=2)  # not one-sided
    html = RP.build_report(tmp_path, recs).read_text(encoding="utf-8")
    forfeits = html[html.index('<h2 id="forfeits">'):html.index('<h2 id="games">')]
    assert "(20 forfeits: crash 20)" in forfeits
    assert forfeits.count("<td>20</td>") == 1 and forfeits.count("crashed on move") == 1
    assert forfeits.count("RuntimeError: boom") == 1  # one stderr example, not twenty
    assert all(f'href="#game-g{k}"' in forfeits for k in range(RP.MAX_FORFEITS_LISTED))


def _unrated(st: Standings) -> Standings:
    """``st`` with no bot rated (as when every bot won, lost or drew all its games)."""
    return replace(st, rows=tuple(replace(r, elo=None, elo95=None) for r in st.rows))


def test_nothing_rateable_says_why_in_one_line_and_draws_no_empty_chart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    recs = round_robin({"alice": 0.0, "bob": 0.0}, 2, seed=3)
    tables = [_unrated(st) for st in rate_all(recs)]
    assert RP.chart_elo(tables[0]) is None
    assert RP.chart_variant_comparison(tables) is None  # one variant: nothing to compare
    assert RP.chart_score_over_rounds([]) is None and RP.chart_game_lengths([]) is None
    assert RP.chart_head_to_head([]) is None
    # the page: whatever the ratings make of these games, a chart with nothing to draw is
    # one line saying why, and no image
    monkeypatch.setattr(charts, "chart_elo", lambda st: None)
    (tmp_path / "elo-nine-mens-morris.png").write_bytes(b"an older report's chart")
    html = RP.build_report(tmp_path, recs).read_text(encoding="utf-8")
    section = html[html.index('<h2 id="charts">'):html.index('<h2 id="crosstable">')]
    assert "No Elo chart for nine-mens-morris: no bot could be rated yet" in section
    assert section.count('<p class="nochart">') == 1
    assert not (tmp_path / "elo-nine-mens-morris.png").exists()
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert pngs == ["game-lengths.png", "head-to-head.png", "score-over-rounds.png"]
    assert section.count('src="data:image/png;base64,') == 3 and 'src=""' not in section


def test_score_over_rounds_by_round_or_by_game() -> None:
    recs = [make_record("a", "b", 1.0, round=1, game_id="1"),
            make_record("b", "a", 0.5, round=1, game_id="2"),
            make_record("a", "b", 0.0, round=2, game_id="3")]
    unit, xs, series = score_over_rounds(recs)
    assert (unit, xs) == ("round", [0, 1, 2])
    assert series == {"a": [0.0, 1.5, 1.5], "b": [0.0, 0.5, 1.5]}
    for r in recs:
        r.round = 1  # one round: by game
    unit, xs, series = score_over_rounds(recs)
    assert (unit, xs) == ("game", [0, 1, 2, 3]) and series["a"] == [0.0, 1.0, 1.5, 1.5]
    png = RP.chart_score_over_rounds(recs)
    assert png is not None and png.startswith(PNG)


CLASS = f"""\
name: class
bots: [{ROOT}/bots/random, {ROOT}/bots/greedy, {BOTS}/exit-at-start, {BOTS}/crash]
variants: [three-mens-morris]
games_per_pairing: 2
time: {{movetime: 200, margin: 300}}
workers: 2
seed: 5
isolation: none
report: true
"""


def test_a_class_tournament_collapses_repeated_forfeits(workdir: Path) -> None:
    (workdir / "class.yaml").write_text(CLASS, encoding="utf-8")
    config = load_config(workdir / "class.yaml")
    console = io.StringIO()
    result = run_tournament(config, console=console, live=False, log_level=logging.WARNING)
    folder = workdir / "results" / "class"
    records = read_records(folder / "games.jsonl")
    assert result.complete and len(records) == 12
    starts = [r for r in records if r.termination == "start-failure"]
    assert len(starts) == 6, [(r.game_id, r.termination, r.detail) for r in records]
    text = console.getvalue()
    # the console: the first start failure once, then a count at the end
    warned = [line for line in text.splitlines()
              if line.startswith("WARNING") and "start-failure" in line]
    assert len(warned) == 1, text
    assert re.search(r"exit-at-start: start-failure x6 \(first: game ", text), text
    # the log file keeps every line
    log_text = (folder / "arena.log").read_text(encoding="utf-8")
    assert sum(" WARNING game " in line and "(start-failure)" in line
               for line in log_text.splitlines()) == 6
    # the page: one row for the six start failures, with one stderr example
    html = (folder / "report.html").read_text(encoding="utf-8")
    forfeits = html[html.index('<h2 id="forfeits">'):html.index('<h2 id="games">')]
    assert "(6 forfeits: start-failure 6)" in forfeits
    assert forfeits.count("<pre>exit-at-start: bye") == 1  # one stderr example
    assert forfeits.count('<td class="name">start-failure</td><td>6</td>') == 1


def test_a_perfect_order_is_charted_with_every_bot() -> None:
    """No upsets (issue 12): every bot rests on the prior and still has its point on the Elo
    chart, and the two-variant comparison draws them too."""
    recs = []
    for variant in ("nine-mens-morris", "six-mens-morris"):
        for strong, weak in (("a", "b"), ("b", "c"), ("a", "c")):
            for k in range(2):
                r = make_record(strong, weak, 1.0, pair=None) if k == 0 else \
                    make_record(weak, strong, 0.0, pair=None)
                recs.append(replace(r, variant=variant,
                                                game_id=f"{variant}/{strong}{weak}{k}"))
    tables = rate_all(recs)
    assert all(r.prior and r.rating is not None for t in tables for r in t.rows)
    for png in (RP.chart_elo(tables[0]), RP.chart_variant_comparison(tables)):
        assert png is not None and png.startswith(b"\x89PNG")
