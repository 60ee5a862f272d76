"""Shared places for exact ties (issue 36): bots level on points, head to head and
Sonneborn-Berger share a place (the same integer rank, written ``5=``) in every table that
ranks them (:func:`arena.standings.places`): the runner's standings, ``arena rate`` (text,
CSV, JSON) and the report; a bot ahead on a tie-break does not share. The tie-break values
are columns of the CSV and JSON."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from click.testing import CliRunner

from arena.cli import cli
from arena.ratings import COLUMNS, rate, standings_rows
from arena.records import GameRecord, append_record
from arena.standings import (STANDINGS_COLUMNS, Place, compute_standings, format_standings,
                             places, rank_bots, write_standings_csv)
from tests.synth_records import make_record

VARIANT = "nine-mens-morris"


def _pair(a: str, b: str, score_a: float, n: int = 1) -> list[GameRecord]:
    """``n`` colour-swapped pairs in which ``a`` scores ``score_a`` in each game."""
    out = []
    for k in range(n):
        out.append(make_record(a, b, score_a, game_id=f"{a}-{b}-{k}w"))
        out.append(make_record(b, a, 1.0 - score_a, game_id=f"{a}-{b}-{k}b"))
    return out


def _three_level() -> list[GameRecord]:
    """``top`` beats everyone; ``a``, ``b``, ``c`` draw every game among themselves, each
    beats ``low`` and draws ``mid``; ``mid`` draws ``low``.  a, b and c are level on
    points, head to head and Sonneborn-Berger: they share 2nd place."""
    recs: list[GameRecord] = []
    for bot in ("a", "b", "c", "mid", "low"):
        recs += _pair("top", bot, 1.0)
    for x, y in (("a", "b"), ("a", "c"), ("b", "c")):
        recs += _pair(x, y, 0.5)
    for bot in ("a", "b", "c"):
        recs += _pair(bot, "low", 1.0) + _pair(bot, "mid", 0.5)
    recs += _pair("mid", "low", 0.5)
    return recs


def test_three_bots_level_on_every_tie_break_share_a_place() -> None:
    placed = places(_three_level())
    by = {p.name: p for p in placed}
    assert [p.name for p in placed][0] == "top" and by["top"].text == "1"
    assert {p.name for p in placed[1:4]} == {"a", "b", "c"}
    for name in "abc":
        p = by[name]
        assert (p.rank, p.shared, p.text) == (2, True, "2=")
        assert p.points == 5.0 and p.h2h == 2.0  # two draws against each of the other two
    assert len({by[n].sb for n in "abc"}) == 1
    # the next bot is 5th, not 3rd: three bots share the 2nd place
    assert (by["mid"].rank, by["mid"].shared, by["mid"].text) == (5, False, "5")
    assert (by["low"].rank, by["low"].text) == (6, "6")
    assert by["mid"].h2h is None  # level with no one: no head to head counted
    assert rank_bots(_three_level()) == [p.name for p in placed]


def test_elo_and_name_never_break_a_tie() -> None:
    recs = _three_level()
    elo = {"top": 300.0, "a": 10.0, "b": 20.0, "c": 30.0, "mid": 0.0, "low": -300.0}
    placed = places(recs, elo=elo)
    # listed by Elo within the shared place, but all three are 2=
    assert [p.name for p in placed[1:4]] == ["c", "b", "a"]
    assert {p.text for p in placed[1:4]} == {"2="}


def test_a_bot_level_on_points_but_ahead_head_to_head_does_not_share() -> None:
    # x and y both score 2 points; x beat y, y beat z twice: x ahead on head to head
    recs = (_pair("x", "y", 1.0, 1)[:1] + [make_record("y", "x", 1.0, game_id="yx")]
            + [make_record("x", "y", 1.0, game_id="xy2")])
    recs += [make_record("y", "z", 1.0, game_id="yz"), make_record("z", "x", 1.0, game_id="zx")]
    tallies = {p.name: p for p in places(recs)}
    assert tallies["x"].points == tallies["y"].points == 2.0
    assert tallies["x"].h2h == 2.0 and tallies["y"].h2h == 1.0
    assert [(p.name, p.text) for p in places(recs)][:2] == [("x", "1"), ("y", "2")]
    assert not any(p.shared for p in places(recs))


def test_level_on_points_and_head_to_head_sonneborn_berger_decides() -> None:
    # p and q draw; p beat the strong s, q beat the weak w: level on points and h2h, p ahead
    # on Sonneborn-Berger
    recs = [make_record("p", "q", 0.5, game_id="pq"), make_record("p", "s", 1.0, game_id="ps"),
            make_record("q", "w", 1.0, game_id="qw"), make_record("s", "w", 1.0, game_id="sw"),
            make_record("s", "q", 1.0, game_id="sq"), make_record("w", "p", 1.0, game_id="wp")]
    by = {p.name: p for p in places(recs)}
    assert by["p"].points == by["q"].points and by["p"].h2h == by["q"].h2h == 0.5
    assert by["p"].sb > by["q"].sb and by["p"].rank < by["q"].rank
    assert not by["p"].shared and not by["q"].shared


def test_a_place_reads_like_an_arbiters() -> None:
    assert Place("a", 5, True, 3.0, 1.0, 2.5).text == "5="
    assert Place("a", 5, False, 3.0, None, 2.5).text == "5"


def test_rate_gives_shared_ranks_and_tie_break_columns() -> None:
    st = rate(_three_level())
    rows = {r.bot: r for r in st.rows}
    assert [rows[n].rank for n in "abc"] == [2, 2, 2] and all(rows[n].shared for n in "abc")
    assert rows["mid"].rank == 5 and rows["mid"].place == "5"
    assert "share a place" in st.caption
    table = {row["bot"]: row for row in standings_rows([st])}
    assert set(COLUMNS) <= set(table["a"])
    assert (table["a"]["rank"], table["a"]["place"], table["a"]["shared"]) == (2, "2=", True)
    assert table["a"]["h2h"] == 2.0 and table["a"]["sb"] == rows["a"].sb
    assert table["top"]["h2h"] is None and table["top"]["place"] == "1"


def test_the_runner_standings_and_its_csv_show_shared_places(tmp_path: Path) -> None:
    tables = compute_standings(_three_level(), players=("idle1", "idle2"))
    rows = tables[VARIANT]
    assert [(r.name, r.place) for r in rows][0] == ("top", "1")
    assert {r.place for r in rows if r.name in "abc"} == {"2="}
    # bots that have not played yet share the place after the last bot that did
    assert [(r.name, r.place) for r in rows][-2:] == [("idle1", "7="), ("idle2", "7=")]
    text = format_standings(tables)
    assert "  2=  a " in text and "share a place" in " ".join(text.split())
    assert "h2h" in text and "SB" in text
    write_standings_csv(tmp_path / "standings.csv", tables)
    with open(tmp_path / "standings.csv", newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == STANDINGS_COLUMNS
        got = {row["bot"]: row for row in reader}
    assert {got[n]["rank"] for n in "abc"} == {"2"} and {got[n]["place"] for n in "abc"} == {"2="}
    assert {got[n]["shared"] for n in "abc"} == {"True"} and got["mid"]["shared"] == "False"
    assert got["a"]["h2h"] == "2" and got["mid"]["h2h"] == "" and got["mid"]["rank"] == "5"
    assert float(got["a"]["sb"]) == next(p.sb for p in places(_three_level()) if p.name == "a")


def test_a_table_without_ties_has_no_tie_break_columns_in_text() -> None:
    recs = _pair("x", "y", 1.0) + _pair("y", "z", 1.0) + _pair("x", "z", 0.5)
    assert "h2h" not in format_standings(compute_standings(recs))


def _folder(tmp_path: Path, records: list[GameRecord]) -> Path:
    folder = tmp_path / "results"
    folder.mkdir()
    for r in records:
        append_record(folder / "games.jsonl", r)
    return folder


def test_arena_rate_shows_shared_places_in_text_csv_and_json(tmp_path: Path) -> None:
    folder = _folder(tmp_path, _three_level())
    runner = CliRunner()
    out = runner.invoke(cli, ["rate", str(folder)])
    assert out.exit_code == 0, out.output
    lines = {line.split()[1]: line.split() for line in out.output.splitlines()
             if line[:4].strip() in {"1", "2=", "5", "6"} and len(line.split()) > 6}
    assert {lines[n][0] for n in "abc"} == {"2="} and lines["mid"][0] == "5"
    header = next(line for line in out.output.splitlines() if line.startswith("rank"))
    assert header.split()[6:8] == ["h2h", "SB"]
    out = runner.invoke(cli, ["rate", str(folder), "--format", "csv"])
    assert out.exit_code == 0, out.output
    got = {row["bot"]: row for row in csv.DictReader(io.StringIO(out.output))}
    assert {got[n]["rank"] for n in "abc"} == {"2"} and got["mid"]["rank"] == "5"
    assert {got[n]["place"] for n in "abc"} == {"2="} and got["a"]["shared"] == "True"
    assert got["a"]["h2h"] == "2.0" and got["a"]["sb"] and got["top"]["h2h"] == ""
    out = runner.invoke(cli, ["rate", str(folder), "--format", "json"])
    assert out.exit_code == 0, out.output
    rows = {r["bot"]: r for r in json.loads(out.output)["tables"][0]["rows"]}
    assert (rows["a"]["rank"], rows["a"]["place"], rows["a"]["shared"]) == (2, "2=", True)
    assert rows["a"]["h2h"] == 2.0 and isinstance(rows["a"]["sb"], float)
    assert rows["mid"]["h2h"] is None and rows["mid"]["shared"] is False
