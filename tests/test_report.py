"""Report, charts and the rate / report / sprt commands."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import os
import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena import report as RP
from arena.cli import cli
from arena.errors import ArenaError
from arena.ratings import rate_all
from arena.records import append_record, atomic_write, read_records
from arena.report import folder as report_folder
from tests.synth_records import make_record, round_robin

ROOT = Path(__file__).resolve().parent.parent
PNG = b"\x89PNG\r\n\x1a\n"
HOSTILE = "<script>alert('x')</script>$\\frac{1}{0}$"


def _records() -> list:
    recs = round_robin({"alpha": 120.0, "beta": 0.0, HOSTILE: -60.0}, 4, seed=1)
    recs += round_robin({"alpha": 50.0, "beta": 0.0}, 4, seed=2, variant="six-mens-morris")
    recs.append(make_record(HOSTILE, "alpha", 0.0, termination="illegal-move", forfeit="white",
                            pair=None, game_id="g-forfeit", detail="illegal move <zz9>",
                            offending_line="<img src=x onerror=alert(1)>",
                            stderr={"white": "Traceback: <b>boom</b>"},
                            moves=("d6", "f4", "a1")))
    return recs


def _write(folder: Path, records: list) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for r in records:
        append_record(folder / "games.jsonl", r)
    return folder


# ---------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    """One full report (charts included) shared by the tests that only read it."""
    folder = tmp_path_factory.mktemp("report")
    recs = _records()
    RP.build_report(folder, recs, title="Class <3>")
    return folder, recs


@pytest.fixture
def no_charts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Skip drawing charts in tests about the rest of the report (charts cost seconds)."""
    monkeypatch.setattr(report_folder, "build_charts", lambda records, tables: [])


def test_report_files_and_contents(built: tuple[Path, list]) -> None:
    tmp_path, recs = built
    html_path = tmp_path / "report.html"
    assert html_path == tmp_path / "report.html"
    html = html_path.read_text(encoding="utf-8")
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert pngs == sorted(["elo-nine-mens-morris.png", "elo-six-mens-morris.png", "elo-all.png",
                           "elo-by-variant.png", "head-to-head.png", "score-over-rounds.png",
                           "game-lengths.png"])
    for p in tmp_path.glob("*.png"):
        assert p.read_bytes().startswith(PNG)
    # self-contained: every chart embedded, nothing loaded from elsewhere; links only to the
    # game viewer's pages and the bot pages next to it (tests/test_viewer.py,
    # tests/test_bot_pages.py)
    assert html.count('src="data:image/png;base64,') == len(pngs)
    assert not re.search(r'(src|href)="(?!data:|#|(games|bots)/[\w.-]+\.html")', html)
    # untrusted text is escaped everywhere
    assert "<script>" not in html and "<img src=x" not in html and "<b>boom" not in html
    assert "&lt;script&gt;" in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "Class &lt;3&gt;" in html
    # standings, crosstable, forfeits and every game's moves
    for heading in ("Standings", "Charts", "Crosstable", "Forfeits", "Games"):
        assert f">{heading}</h2>" in html
    for r in recs:
        assert f'id="game-{r.game_id}"' in html
    assert "illegal-move" in html and "illegal move &lt;zz9&gt;" in html
    assert "1.&nbsp;<span>d6</span>&nbsp;<span>f4</span> 2.&nbsp;<span>a1</span>" in html
    # ratings.csv: the standings, one row per bot per table
    rows = list(csv.DictReader(io.StringIO((tmp_path / "ratings.csv").read_text())))
    assert {r["variant"] for r in rows} == {"nine-mens-morris", "six-mens-morris", "all variants"}
    assert len(rows) == 3 + 2 + 3
    assert not list(tmp_path.glob(".*.tmp"))


def test_report_values_match_the_ratings(built: tuple[Path, list]) -> None:
    folder, recs = built
    html = (folder / "report.html").read_text(encoding="utf-8")
    for st in rate_all(recs):
        for r in st.rows:
            if r.elo is not None:
                assert f"<td>{r.elo:+.1f}</td><td>{r.elo95:.1f}</td>" in html


def test_report_marks_the_opening(tmp_path: Path, no_charts: None) -> None:
    rec = make_record("a", "b", 1.0, moves=("d6", "f4", "a1", "g7"), pair=None)
    rec.opening = ["d6", "f4"]
    for m in rec.moves[:2]:
        m.opening = True
    rec2 = make_record("b", "a", 0.5, pair=None)
    html = RP.build_report(tmp_path, [rec, rec2]).read_text(encoding="utf-8")
    assert ('1.&nbsp;<span class="opening">d6</span>&nbsp;<span class="opening">f4</span> '
            '2.&nbsp;<span>a1</span>&nbsp;<span>g7</span>') in html


#: control characters a bot might send: NUL, an ANSI colour, a bell, a bidirectional override
CONTROLS = ("\x00", "\x1b[31m", "\x07", "\u202e")


def test_report_shows_control_characters_from_bots_escaped(tmp_path: Path, no_charts: None) -> None:
    bad = "evil\x00\x1b[31m\x07\u202e"
    rec = make_record(bad, "beta", 0.0, termination="protocol-error", forfeit="white", pair=None,
                      game_id="g-ctl", moves=("d6", "a1\x00\x07"),
                      detail="white (evil) broke the protocol: \x1b[31mred\x07",
                      offending_line="bestmove \x00d6\x1b[31m\x07\u202e",
                      stderr={"white": "line one\x00\n\tline \x1b[31mtwo\x07\r\nthree\n"})
    rec2 = make_record("beta", bad, 1.0, pair=None, game_id="g-ok")
    folder = _write(tmp_path / "res", [rec, rec2])  # through games.jsonl: JSON keeps the raw text
    assert read_records(folder / "games.jsonl")[0].offending_line == rec.offending_line
    html = RP.build_report(folder).read_text(encoding="utf-8")
    raw = [c for c in html if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) < 0xa0
           or c == "\u202e"]
    assert raw == [], f"raw control characters in report.html: {sorted(set(raw))}"
    assert "sent: <code>bestmove \\x00d6\\x1b[31m\\x07\\u202e</code>" in html
    assert "evil\\x00\\x1b[31m\\x07\\u202e" in html  # the bot name, wherever it is shown
    assert "broke the protocol: \\x1b[31mred\\x07" in html and "a1\\x00\\x07" in html
    # stderr keeps its line breaks and tabs (a CR before a line break goes with it)
    assert "<pre>line one\\x00\n\tline \\x1b[31mtwo\\x07\nthree\n</pre>" in html


def test_shown_escapes_text_only() -> None:
    assert RP.shown("a\x00b\r\n\tc\x9b") == "a\\x00b\n\tc\\x9b"
    assert RP.shown("plain é ✓ text") == "plain é ✓ text"
    assert RP.shown(3) == 3 and RP.shown(None) is None


def test_report_is_replaced_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      no_charts: None) -> None:
    recs = _records()
    RP.build_report(tmp_path, recs)
    before = (tmp_path / "report.html").read_bytes()

    def broken(*args: object) -> bytes:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(report_folder, "render_html", broken)
    with pytest.raises(RuntimeError):
        RP.build_report(tmp_path, recs[:5])
    assert (tmp_path / "report.html").read_bytes() == before
    assert not list(tmp_path.glob(".*.tmp"))


def test_atomic_write_cleans_up_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "x.txt"
    target.write_bytes(b"old")

    def fail(src: str, dst: object) -> None:
        raise OSError("no")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        atomic_write(target, b"new")
    assert target.read_bytes() == b"old" and list(tmp_path.iterdir()) == [target]


def test_charts_survive_awkward_names_and_flagged_bots() -> None:
    recs = [make_record("$x^2$", "\\bad", 1.0, pair=None), make_record("\\bad", "$x^2$", 0.0, pair=None)]
    tables = rate_all(recs)
    # one-sided: no maximum-likelihood Elo, both on the prior: charted all the same (hollow,
    # marked *), since every bot has an Elo; one variant: nothing to compare
    assert tables[0].fit is not None and len(tables[0].fit.prior) == 2
    assert all(r.elo is None and r.prior and r.rating is not None for r in tables[0].rows)
    assert RP.chart_variant_comparison(tables) is None
    for png in (RP.chart_elo(tables[0]), RP.chart_head_to_head(recs),
                RP.chart_score_over_rounds(recs), RP.chart_game_lengths(recs)):
        assert png is not None and png.startswith(PNG) and len(png) > 1000


def test_load_games_errors(tmp_path: Path) -> None:
    with pytest.raises(ArenaError, match="no such"):
        RP.load_games(tmp_path / "nope")
    with pytest.raises(ArenaError, match="no games.jsonl"):
        RP.load_games(tmp_path)
    (tmp_path / "games.jsonl").write_text("")
    with pytest.raises(ArenaError, match="no games"):
        RP.load_games(tmp_path)
    (tmp_path / "games.jsonl").write_text('{"game_id": 1}\n{"x": 2}\n')
    with pytest.raises(ArenaError, match="not a game record"):
        RP.load_games(tmp_path)


def test_write_report_entry_point_for_the_runner(tmp_path: Path, no_charts: None) -> None:
    class Config:
        name = "spring-cup"

    _write(tmp_path, _records())
    out = RP.write_report(Config(), tmp_path, read_records(tmp_path / "games.jsonl"))
    assert out == tmp_path / "report.html"
    assert "<title>spring-cup" in out.read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------
# CLI: rate and report
# ---------------------------------------------------------------------------------------


def test_every_command_has_help() -> None:
    runner = CliRunner()
    for name in ("rate", "report", "sprt"):
        res = runner.invoke(cli, [name, "--help"])
        assert res.exit_code == 0 and "Usage:" in res.output and len(res.output) > 200


def test_rate_table(tmp_path: Path) -> None:
    folder = _write(tmp_path / "res", _records())
    res = CliRunner().invoke(cli, ["rate", str(folder)])
    assert res.exit_code == 0, res.output
    out = res.output
    assert out.index("nine-mens-morris:") < out.index("six-mens-morris:") < out.index("all variants:")
    header = next(line for line in out.splitlines() if line.startswith("rank"))
    for col in ("bot", "Elo", "±95%", "games", "score", "W-D-L", "draw", "LOS>next", "forfeits"):
        assert col in header
    assert "illegal-move 1" in out
    # two bots in six-mens-morris: the match statistics follow that table
    assert re.search(r"(alpha vs beta|beta vs alpha): 8 games", out)
    assert "pairs LL-LD-WL/DD-WD-WW" in out
    assert "\x1b" not in out


def test_rate_csv_json_variant_and_anchor(tmp_path: Path) -> None:
    folder = _write(tmp_path / "res", _records())
    runner = CliRunner()
    res = runner.invoke(cli, ["rate", str(folder / "games.jsonl"), "--format", "csv",
                              "--variant", "6mm", "--anchor", "beta=1500"])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.output)))
    assert [r["variant"] for r in rows] == ["six-mens-morris"] * 2
    beta = next(r for r in rows if r["bot"] == "beta")
    assert float(beta["elo"]) == 1500.0 and float(beta["elo95"]) == 0.0
    res = runner.invoke(cli, ["rate", str(folder), "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert [t["label"] for t in doc["tables"]] == ["nine-mens-morris", "six-mens-morris",
                                                   "all variants"]
    six = doc["tables"][1]
    assert six["match"]["pentanomial"] and sum(six["match"]["pentanomial"]) == 4
    elos = [r["elo"] for r in doc["tables"][0]["rows"]]
    assert abs(sum(elos)) < 0.5  # centred on the mean
    res = runner.invoke(cli, ["rate", str(folder), "--interval", "bootstrap", "--seed", "3",
                              "--format", "json", "--variant", "nine-mens-morris"])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("setup,args,message", [
    ("missing", [], "no such results"),
    ("empty", [], "no games"),
    ("corrupt", [], "not a game record"),
    ("ok", ["--variant", "lasker"], "no games of variant"),
    ("ok", ["--anchor", "nobody=0"], "no bot named"),
    ("ok", ["--anchor", "beta"], "BOT=ELO"),
])
def test_rate_errors_are_one_line_exit_2(tmp_path: Path, setup: str, args: list[str],
                                         message: str) -> None:
    folder = tmp_path / "res"
    if setup != "missing":
        folder.mkdir()
        (folder / "games.jsonl").write_text({"empty": "", "corrupt": "{not json}\n[]\n",
                                             "ok": ""}[setup])
    if setup == "ok":
        _write(folder, _records())
    res = CliRunner().invoke(cli, ["rate", str(folder), *args])
    assert res.exit_code == 2
    assert message in res.output and len(res.output.strip().splitlines()) == 1


def test_report_command(tmp_path: Path, no_charts: None) -> None:
    folder = _write(tmp_path / "res", _records())
    res = CliRunner().invoke(cli, ["report", str(folder), "--anchor", "beta=0"])
    assert res.exit_code == 0, res.output
    assert res.output.strip() == str(folder / "report.html")
    assert (folder / "ratings.csv").exists() and (folder / "report.html").stat().st_size > 10000
    res = CliRunner().invoke(cli, ["report", str(tmp_path / "nothing")])
    assert res.exit_code == 2 and "no such results" in res.output


# ---------------------------------------------------------------------------------------
# With real bots (the referee)
# ---------------------------------------------------------------------------------------

needs_referee = pytest.mark.skipif(importlib.util.find_spec("arena.referee") is None,
                                   reason="arena.referee is not available yet")


@needs_referee
def test_end_to_end_real_games_rated_and_reported(tmp_path: Path) -> None:
    from arena.bot import load_bot
    from arena.clock import TimeControl
    from arena.referee import play_game
    from arena.schedule import random_opening
    from arena.variants import get_variant

    variant = get_variant("nine-mens-morris")
    rnd, greedy = load_bot(ROOT / "bots" / "random"), load_bot(ROOT / "bots" / "greedy")
    tc = TimeControl.parse("20")
    for k in range(2):
        opening = random_opening(variant, 2, seed=k)
        for g, (w, b) in enumerate(((rnd, greedy), (greedy, rnd))):
            rec = play_game(w, b, variant, tc, opening=opening, game_id=f"e2e-{k}{g}", seed=k)
            rec.tournament, rec.round, rec.pair = "e2e", 0, k
            append_record(tmp_path / "games.jsonl", rec)
    recs = read_records(tmp_path / "games.jsonl")
    assert len(recs) == 4 and all(r.opening == list(recs[2 * (i // 2)].opening)
                                  for i, r in enumerate(recs))
    res = CliRunner().invoke(cli, ["report", str(tmp_path / "games.jsonl")])
    assert res.exit_code == 0, res.output
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    pngs = len(list(tmp_path.glob("*.png")))
    # Elo (one line instead when greedy won every game), score, head to head, lengths
    assert html.count('src="data:image/png;base64,') == pngs
    assert pngs + html.count('<p class="nochart">') == 4 and pngs >= 3
    for r in recs:
        assert f'id="game-{r.game_id}"' in html and r.moves[-1].move in html
    res = CliRunner().invoke(cli, ["rate", str(tmp_path), "--format", "json"])
    assert res.exit_code == 0, res.output
    table = json.loads(res.output)["tables"][0]
    assert {r["bot"] for r in table["rows"]} == {"random", "greedy"}
    assert sum(table["match"]["pentanomial"]) == 2


@needs_referee
def test_sprt_command_plays_pairs_until_a_verdict(tmp_path: Path) -> None:
    out = tmp_path / "sprt"
    res = CliRunner().invoke(cli, [
        "sprt", str(ROOT / "bots" / "greedy"), str(ROOT / "bots" / "random:Seed=5"),
        "--elo0", "0", "--elo1", "300", "--alpha", "0.2", "--beta", "0.2", "--movetime", "20",
        "--max-pairs", "6", "--seed", "1", "--out", str(out), "-j", "2"])
    assert res.exit_code in (0, 1), res.output
    lines = res.output.splitlines()
    assert "bounds [-1.39, 1.39]" in lines[0] and "random(Seed=5)" in lines[0]
    pair_lines = [line for line in lines if line.startswith("pair")]
    assert pair_lines and all("LLR" in line for line in pair_lines)
    assert [int(line.split()[1].rstrip(":")) for line in pair_lines] == list(
        range(1, len(pair_lines) + 1))
    saved = sorted(read_records(out / "games.jsonl"), key=lambda r: r.game_id)
    reported = len(pair_lines)
    recs = [r for r in saved if r.pair is not None and r.pair <= reported]
    assert sorted(Counter(r.pair for r in recs).items()) == [
        (k, 2) for k in range(1, reported + 1)]
    # a game is saved as soon as it ends: with 2 games at once, games of the pairs after
    # the verdict's may have ended before the verdict was known (a resumed run uses them)
    assert all(r.pair is not None and r.pair > reported for r in saved if r not in recs)
    # both games of a pair share their opening and swap colours
    for a, b in zip(recs[::2], recs[1::2]):
        assert a.pair == b.pair and a.opening == b.opening and len(a.opening) == 4
        assert (a.white.name, a.black.name) == (b.black.name, b.white.name)
    if res.exit_code == 0:
        assert re.search(r"H[01] accepted after \d+ pairs", res.output)


def test_sprt_rejects_bad_arguments(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(cli, ["sprt", str(ROOT / "bots" / "random"), str(ROOT / "bots" / "random"),
                              "--alpha", "0.7"])
    assert res.exit_code == 2 and "alpha" in res.output
    res = runner.invoke(cli, ["sprt", str(tmp_path / "nobot"), str(ROOT / "bots" / "random")])
    assert res.exit_code == 2 and "bot folder not found" in res.output
    res = runner.invoke(cli, ["sprt", str(ROOT / "bots" / "random"), str(ROOT / "bots" / "random"),
                              "--elo0", "5", "--elo1", "5"])
    assert res.exit_code == 2 and "elo1" in res.output


def test_long_results_list_the_first_games_and_say_so(tmp_path: Path, no_charts: None) -> None:
    recs = round_robin({"a": 0.0, "b": 0.0}, 10, seed=1)
    recs += [make_record("a", "b", 0.0, termination="timeout", forfeit="white", pair=None,
                         game_id=f"late-{k}") for k in range(RP.MAX_FORFEITS_LISTED + 5)]
    html = RP.build_report(tmp_path, recs, max_games=7).read_text(encoding="utf-8")
    assert html.count('<tr id="game-') == 7
    assert f"{len(recs) - 7} more are in" in html
    assert f"({RP.MAX_FORFEITS_LISTED + 5} forfeits: timeout {RP.MAX_FORFEITS_LISTED + 5})" in html
    # one group (identical forfeits): its first games named, the others counted
    forfeits = html[html.index('<h2 id="forfeits">'):html.index('<h2 id="games">')]
    assert forfeits.count("late-") == RP.MAX_FORFEITS_LISTED  # listed, not linked (not shown)
    assert " and 5 more" in html
    assert 'href="#game-late-' not in html


# ---------------------------------------------------------------------------------------
# Issue 12: every bot ranked and rated; no zero-width or infinite interval at the edges
# ---------------------------------------------------------------------------------------


def _rate_output(tmp_path: Path, name: str, records: list, *args: str) -> str:
    res = CliRunner().invoke(cli, ["rate", str(_write(tmp_path / name, records)), *args])
    assert res.exit_code == 0, res.output
    return res.output


@pytest.mark.parametrize("white_scores", [(0.5, 0.5), (1.0, 1.0)])
def test_rate_all_drawn_or_split_pairs_print_a_real_interval(tmp_path: Path,
                                                             white_scores: tuple) -> None:
    recs = []
    for k in range(30):
        recs.append(make_record("A", "B", white_scores[0], round=0, pair=k, game_id=f"{k}a"))
        recs.append(make_record("B", "A", white_scores[1], round=0, pair=k, game_id=f"{k}b"))
    for interval in ("sandwich", "bootstrap"):
        out = _rate_output(tmp_path, interval, recs, "--interval", interval)
        lines = out.split("\n")
        first_row = lines[next(k for k, line in enumerate(lines) if line.startswith("rank")) + 1]
        assert "± 0.0" not in out and " 0.0  " not in first_row
        assert "± –" not in out and "inf" not in out and "-0.0" not in out
        assert "Elo +0.0 ± 87.0" in out and "LOS 50.0%" in out   # the match line
        doc = json.loads(_rate_output(tmp_path, interval + "-json", recs, "--format", "json",
                                      "--interval", interval))
        rows = doc["tables"][0]["rows"]
        assert all(r["elo95"] == 44.0 and r["elo"] == 0.0 for r in rows)


def test_rate_a_single_win_ranks_and_rates_both_bots(tmp_path: Path) -> None:
    recs = [make_record("A", "B", 1.0, pair=None, game_id="g1")]
    out = _rate_output(tmp_path, "one", recs)
    assert "inf" not in out and "100.0%" not in out.split("LOS")[-1]
    assert "* Elo from the prior" in out and "LOS 84.1%" in out
    doc = json.loads(_rate_output(tmp_path, "one-json", recs, "--format", "json"))
    table = doc["tables"][0]
    assert table["match"]["los"] == pytest.approx(0.8413, abs=1e-4)  # cutechess, not 1.0
    assert [(r["rank"], r["bot"], r["prior"]) for r in table["rows"]] == [(1, "A", True),
                                                                        (2, "B", True)]
    assert all(r["elo"] is not None and 0 < r["elo95"] for r in table["rows"])


def test_rate_a_single_draw_is_plus_zero(tmp_path: Path) -> None:
    out = _rate_output(tmp_path, "draw", [make_record("A", "B", 0.5, pair=None, game_id="g1")])
    assert "-0.0" not in out and "Elo +0.0 ± " in out and "LOS 50.0%" in out


def test_report_ranks_a_perfect_order_and_marks_the_prior(tmp_path: Path, no_charts: None) -> None:
    recs = []
    for k, (a, b) in enumerate([("A", "B"), ("A", "C"), ("B", "C")]):
        recs.append(make_record(a, b, 1.0, round=0, pair=k, game_id=f"{k}a"))
        recs.append(make_record(b, a, 0.0, round=0, pair=k, game_id=f"{k}b"))
    html = RP.build_report(tmp_path, recs).read_text(encoding="utf-8")
    standings = html[html.index('<h2 id="standings">'):html.index('<h2 id="charts">')]
    for rank, bot in enumerate("ABC", start=1):
        assert (f'<td>{rank}</td><td class="name"><a href="bots/{bot}.html">{bot}</a></td>'
                in standings)
    assert standings.count('<td class="prior">*</td>') == 3
    assert '<td>–</td><td>–</td>' not in standings   # every bot has an Elo and an interval
    assert "* This Elo is only a rough guess" in standings
    lines = _rate_output(tmp_path, "order", recs).splitlines()
    head = next(k for k, line in enumerate(lines) if line.startswith("rank"))
    assert [line.split()[:2] for line in lines[head + 1:head + 4]] == [["1", "A"], ["2", "B"],
                                                                       ["3", "C"]]


def test_numbers_that_round_to_zero_show_no_minus_sign() -> None:
    """A bot at the centre of the scale is +0.0 (or 0.0), never -0.0 (issue 12)."""
    from arena.report.text import format_number

    assert format_number(-0.0, "+.1f") == "+0.0" and format_number(-0.04, "+.1f") == "+0.0"
    assert format_number(-0.0, ".1f") == "0.0" and format_number(-0.0001, ".1%") == "0.0%"
    assert format_number(-1.25, "+.1f") == "-1.2" and format_number(None, ".1f") == "–"
