"""Chess tie-breaks (issue 38): Buchholz, Buchholz cut-1, Sonneborn-Berger and the direct
encounter, in a chosen order (:func:`arena.standings.places` ``tiebreaks=``), with a Swiss's
byes counted (``byes=``), in the runner's standings (text and CSV) and in ``arena rate
--tiebreaks``.  Every expected value is worked out by hand in the comments."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.errors import ConfigError
from arena.records import GameRecord, append_record
from arena.standings import (BUCHHOLZ_COLUMNS, DEFAULT_TIEBREAKS, STANDINGS_COLUMNS,
                             SWISS_TIEBREAKS, TIEBREAKS, TiebreakError, check_tiebreaks,
                             compute_standings, format_standings, parse_tiebreaks, places,
                             write_standings_csv)
from tests.synth_records import make_record

VARIANT = "nine-mens-morris"

#: a 3-round Swiss of six bots, one game per pairing (White first, White's score):
#:   round 1: p-q 1-0, X-p 1-0 ... (rounds do not matter to the tie-breaks)
#: points: p 2 (beat q, W1), q 2 (beat Y1, Y2), X 1.5 (beat p, drew Y2), Y1 1.5 (beat X,
#: drew W1), Y2 1.5 (drew X, beat W1), W1 0.5 (drew Y1); every bot played 3 games
SWISS = [("p", "q", 1.0), ("X", "p", 1.0), ("p", "W1", 1.0), ("q", "Y1", 1.0),
         ("q", "Y2", 1.0), ("Y1", "X", 1.0), ("Y2", "X", 0.5), ("Y1", "W1", 0.5),
         ("Y2", "W1", 1.0)]

#: Buchholz, the opponents' points summed:
#:   p: q 2 + X 1.5 + W1 0.5 = 4         q: p 2 + Y1 1.5 + Y2 1.5 = 5
#:   X: p 2 + Y1 1.5 + Y2 1.5 = 5        Y1: q 2 + X 1.5 + W1 0.5 = 4
#:   Y2: q 2 + X 1.5 + W1 0.5 = 4        W1: p 2 + Y1 1.5 + Y2 1.5 = 5
BUCHHOLZ = {"p": 4.0, "q": 5.0, "X": 5.0, "Y1": 4.0, "Y2": 4.0, "W1": 5.0}
#: cut-1, less the weakest opponent: p 4 - 0.5, q 5 - 1.5, X 5 - 1.5, Y1 and Y2 4 - 0.5,
#: W1 5 - 1.5: every bot 3.5
CUT1 = {name: 3.5 for name in BUCHHOLZ}
#: Sonneborn-Berger, per opponent the points taken from it times its points:
#:   p: 1*2 (q) + 1*0.5 (W1) = 2.5      q: 1*1.5 + 1*1.5 = 3     X: 1*2 (p) + 0.5*1.5 (Y2) = 2.75
#:   Y1: 1*1.5 (X) + 0.5*0.5 (W1) = 1.75   Y2: 0.5*1.5 (X) + 1*0.5 (W1) = 1.25
#:   W1: 0.5*1.5 (Y1) = 0.75
SB = {"p": 2.5, "q": 3.0, "X": 2.75, "Y1": 1.75, "Y2": 1.25, "W1": 0.75}
#: by default (direct encounter, then SB): p beat q, so p before q; X, Y1, Y2 (1.5 each)
#: did not all meet (Y1 and Y2 did not), so the direct encounter does not apply to them
#: (FIDE C.07) and SB orders them: X 2.75, Y1 1.75, Y2 1.25
DEFAULT_ORDER = ["p", "q", "X", "Y1", "Y2", "W1"]
#: Swiss tie-breaks (cut-1, Buchholz, SB, direct encounter): cut-1 is 3.5 for everyone, then
#: Buchholz puts q (5) before p (4) and X (5) before Y1 and Y2 (4), then SB Y1 before Y2
SWISS_ORDER = ["q", "p", "X", "Y1", "Y2", "W1"]


def _games(games: list[tuple[str, str, float]], variant: str = VARIANT) -> list[GameRecord]:
    return [make_record(w, b, s, game_id=f"{variant}-{k}", variant=variant)
            for k, (w, b, s) in enumerate(games)]


def test_buchholz_cut1_and_sonneborn_berger_values() -> None:
    by = {p.name: p for p in places(_games(SWISS), tiebreaks=SWISS_TIEBREAKS)}
    assert {n: p.buchholz for n, p in by.items()} == BUCHHOLZ
    assert {n: p.buchholz_cut1 for n, p in by.items()} == CUT1
    assert {n: p.sb for n, p in by.items()} == SB
    assert {n: p.points for n, p in by.items()} == {"p": 2, "q": 2, "X": 1.5, "Y1": 1.5,
                                                     "Y2": 1.5, "W1": 0.5}
    assert all(p.byes == 0.0 for p in by.values())


def test_an_opponent_met_in_several_games_counts_once_in_buchholz() -> None:
    # a and b play a colour-swapped pair (a wins both), b beats c twice, c beats a once
    # points: a 2 (two wins over b), b 2 (two over c), c 1 (over a)
    recs = _games([("a", "b", 1.0), ("b", "a", 0.0), ("b", "c", 1.0), ("c", "b", 0.0),
                   ("c", "a", 1.0)])
    by = {p.name: p for p in places(recs, tiebreaks=("buchholz", "buchholz-cut1"))}
    # a met b (2) and c (1): 3, not 2 + 2 + 1; cut-1 drops c: 2
    assert (by["a"].buchholz, by["a"].buchholz_cut1) == (3.0, 2.0)
    # b met a (2) and c (1): 3, cut-1 2
    assert (by["b"].buchholz, by["b"].buchholz_cut1) == (3.0, 2.0)
    # c met b (2) and a (2): 4, cut-1 2
    assert (by["c"].buchholz, by["c"].buchholz_cut1) == (4.0, 2.0)


def test_a_bot_without_opponents_has_no_buchholz() -> None:
    # a self-game is no opponent; d has no games at all but is in the list through a bye of 0
    recs = _games([("a", "a", 0.5), ("b", "c", 1.0)])
    by = {p.name: p for p in places(recs, tiebreaks=("buchholz-cut1",), byes={"d": 0.0})}
    assert (by["a"].buchholz, by["a"].buchholz_cut1) == (0.0, 0.0)
    # d's bye is its one (virtual) opponent, with d's own 0 points
    assert (by["d"].buchholz, by["d"].buchholz_cut1, by["d"].points) == (0.0, 0.0, 0.0)


def test_the_order_of_the_tie_breaks_changes_the_order() -> None:
    recs = _games(SWISS)
    assert [p.name for p in places(recs)] == DEFAULT_ORDER
    assert [p.name for p in places(recs, tiebreaks=SWISS_TIEBREAKS)] == SWISS_ORDER
    # Sonneborn-Berger alone: q (3) before p (2.5); X 2.75, Y1 1.75, Y2 1.25
    assert [p.name for p in places(recs, tiebreaks=["sonneborn-berger"])] == SWISS_ORDER
    # the same two tie-breaks as the default, the other way round: SB decides first
    swapped = places(recs, tiebreaks=["sonneborn-berger", "direct-encounter"])
    assert [p.name for p in swapped] == SWISS_ORDER
    # the direct encounter after Buchholz: p and q are no longer level there (4 and 5), so
    # they have no head-to-head value; Y1 and Y2 are (Buchholz 4 each) but never met: none
    by = {p.name: p for p in places(recs, tiebreaks=["buchholz", "direct-encounter"])}
    assert by["p"].h2h is None and by["q"].h2h is None and by["X"].h2h is None
    assert by["Y1"].h2h is None and by["Y2"].h2h is None
    assert (by["Y1"].rank, by["Y2"].rank, by["Y1"].text) == (4, 4, "4=")
    # the default: among p and q the direct encounter is p 1, q 0
    by = {p.name: p for p in places(recs)}
    assert (by["p"].h2h, by["q"].h2h, by["W1"].h2h) == (1.0, 0.0, None)
    assert by["p"].level and by["q"].level and not by["W1"].level


def test_bots_level_on_every_chosen_tie_break_share_a_place() -> None:
    recs = _games(SWISS)
    # cut-1 alone is 3.5 for everyone: p and q share 1st, X, Y1, Y2 share 3rd; Buchholz,
    # SB and the direct encounter, not chosen, decide nothing
    placed = places(recs, tiebreaks=["buchholz-cut1"])
    texts = {p.name: p.text for p in placed}
    assert texts == {"p": "1=", "q": "1=", "X": "3=", "Y1": "3=", "Y2": "3=", "W1": "6"}
    assert [p.rank for p in placed] == [1, 1, 3, 3, 3, 6]
    # adding Buchholz splits them: q 5 > p 4; X 5 > Y1 = Y2 = 4, who still share
    texts = {p.name: p.text for p in places(recs, tiebreaks=["buchholz-cut1", "buchholz"])}
    assert texts == {"q": "1", "p": "2", "X": "3", "Y1": "4=", "Y2": "4=", "W1": "6"}
    # everyone draws everyone: all level on everything
    draws = _games([("a", "b", 0.5), ("b", "c", 0.5), ("c", "a", 0.5)])
    assert {p.text for p in places(draws, tiebreaks=SWISS_TIEBREAKS)} == {"1="}


def test_byes_count_as_points_and_in_buchholz() -> None:
    # round 1: a beats b, c has a bye (1 point); round 2: c beats a, b has a bye (1 point)
    recs = _games([("a", "b", 1.0), ("c", "a", 1.0)])
    byes = {"c": 1.0, "b": 1.0}
    by = {p.name: p for p in places(recs, tiebreaks=SWISS_TIEBREAKS, byes=byes)}
    # points: a 1, b 0 + 1 = 1, c 1 + 1 = 2 (ranked by points though the games differ: 2,
    # 1, 1)
    assert {n: (p.points, p.byes) for n, p in by.items()} == {
        "a": (1.0, 0.0), "b": (1.0, 1.0), "c": (2.0, 1.0)}
    # Buchholz: a met b (1, its bye counted) and c (2): 3, cut-1 3 - 1 = 2
    # b met a (1) and its bye's virtual opponent with b's own 1 point: 2, cut-1 1
    # c met a (1) and its bye's virtual opponent with c's own 2: 3, cut-1 2
    assert {n: (p.buchholz, p.buchholz_cut1) for n, p in by.items()} == {
        "a": (3.0, 2.0), "b": (2.0, 1.0), "c": (3.0, 2.0)}
    # SB: a took 1 from b, who has 1 point with its bye: 1; c took 1 from a (1): 1; b 0
    assert {n: p.sb for n, p in by.items()} == {"a": 1.0, "b": 0.0, "c": 1.0}
    # c first on points; a and b level on 1: cut-1 2 > 1
    assert [(p.name, p.text) for p in by.values()] == [("c", "1"), ("a", "2"), ("b", "3")]
    # without the byes, b would have 0 points, c 1
    plain = {p.name: p.points for p in places(recs, tiebreaks=SWISS_TIEBREAKS)}
    assert plain == {"a": 1.0, "b": 0.0, "c": 1.0}


def test_a_bot_with_only_a_bye_is_placed() -> None:
    # round 1 only: a beats b, c has a bye worth 1
    by = {p.name: p for p in places(_games([("a", "b", 1.0)]), tiebreaks=SWISS_TIEBREAKS,
                                     byes={"c": 1.0})}
    assert set(by) == {"a", "b", "c"}
    # a and c level on 1 point and on cut-1 (a: 0 - 0, c: its own 1 - 1), Buchholz c 1 > a 0
    assert (by["c"].buchholz, by["c"].buchholz_cut1, by["a"].buchholz) == (1.0, 0.0, 0.0)
    assert (by["c"].text, by["a"].text, by["b"].text) == ("1", "2", "3")
    # and with no game at all
    assert [(p.name, p.points) for p in places([], byes={"z": 2.0})] == [("z", 2.0)]


def test_unknown_or_repeated_tie_breaks_are_refused() -> None:
    with pytest.raises(ValueError) as e:
        places(_games(SWISS), tiebreaks=["buchholz", "median-buchholz"])
    assert "'median-buchholz'" in str(e.value)
    assert all(name in str(e.value) for name in TIEBREAKS)
    with pytest.raises(ValueError, match="twice"):
        check_tiebreaks(["buchholz", "buchholz"])
    with pytest.raises(TiebreakError):
        compute_standings(_games(SWISS), tiebreaks=["sb"])


def test_parse_tiebreaks_for_a_config_file_or_an_option() -> None:
    assert parse_tiebreaks(["buchholz", "direct-encounter"], "t") == ("buchholz",
                                                                      "direct-encounter")
    assert parse_tiebreaks(" buchholz-cut1, buchholz ") == ("buchholz-cut1", "buchholz")
    for bad in ("buchholz,nope", ["buchholz", 3], 7, [], ""):
        with pytest.raises(ConfigError) as e:
            parse_tiebreaks(bad, "format.tiebreaks")
        text = str(e.value)
        assert text.startswith("format.tiebreaks: ") and "\n" not in text
        assert e.value.path == "format.tiebreaks"


def test_the_default_is_direct_encounter_then_sonneborn_berger(tmp_path: Path) -> None:
    recs = _games(SWISS)
    assert DEFAULT_TIEBREAKS == ("direct-encounter", "sonneborn-berger")
    same = places(recs, tiebreaks=["direct-encounter", "sonneborn-berger"])
    assert places(recs) == same
    tables = compute_standings(recs, players=("idle",))
    assert [r.name for r in tables[VARIANT]] == DEFAULT_ORDER + ["idle"]
    text = format_standings(tables)
    assert "h2h" in text and "SB" in text and "BH" not in text and "byes" not in text
    write_standings_csv(tmp_path / "standings.csv", tables)
    header = (tmp_path / "standings.csv").read_text().splitlines()[0]
    assert header == ("variant,rank,bot,points,games,wins,draws,losses,forfeits,score_pct,"
                      "place,shared,h2h,sb")
    assert tuple(header.split(",")) == STANDINGS_COLUMNS


def test_swiss_standings_csv_and_text_show_buchholz(tmp_path: Path) -> None:
    # the SWISS games in two variants (the same results in each), and a bye of 2 points
    # over the event for a bot "Z" with no game: 1 point in each variant's table
    recs = _games(SWISS) + _games(SWISS, variant="morabaraba")
    tables = compute_standings(recs, tiebreaks=SWISS_TIEBREAKS, byes={"Z": 2.0})
    assert list(tables) == [VARIANT, "morabaraba"]
    for rows in tables.values():
        # Z has 1 point: between the 1.5s and W1 (0.5)
        assert [r.name for r in rows] == SWISS_ORDER[:5] + ["Z", "W1"]
        z = rows[5]
        assert (z.points, z.byes, z.games, z.buchholz, z.place) == (1.0, 1.0, 0, 1.0, "6")
    write_standings_csv(tmp_path / "standings.csv", tables)
    with open(tmp_path / "standings.csv", newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == STANDINGS_COLUMNS + BUCHHOLZ_COLUMNS
        assert BUCHHOLZ_COLUMNS == ("buchholz", "buchholz_cut1", "bye_points")
        got = [row for row in reader if row["variant"] == VARIANT]
    assert [row["bot"] for row in got] == SWISS_ORDER[:5] + ["Z", "W1"]
    assert {row["bot"]: float(row["buchholz"]) for row in got} == {**BUCHHOLZ, "Z": 1.0}
    assert {row["bot"]: float(row["buchholz_cut1"]) for row in got} == {**CUT1, "Z": 0.0}
    assert {row["bot"]: row["bye_points"] for row in got if row["bye_points"] != "0"} == {
        "Z": "1"}
    text = format_standings(tables)
    header = next(line for line in text.splitlines() if line.strip().startswith("#"))
    # the chosen tie-breaks' columns, in their order, after the byes
    assert header.split()[-5:] == ["byes", "BH-C1", "BH", "SB", "h2h"]
    assert "Buchholz cut-1" in " ".join(text.split())


def _folder(tmp_path: Path, records: list[GameRecord]) -> Path:
    folder = tmp_path / "results"
    folder.mkdir()
    for r in records:
        append_record(folder / "games.jsonl", r)
    return folder


def _csv_order(output: str) -> list[tuple[str, str]]:
    return [(row["bot"], row["place"]) for row in csv.DictReader(io.StringIO(output))]


def test_arena_rate_tiebreaks(tmp_path: Path) -> None:
    folder = _folder(tmp_path, _games(SWISS))
    runner = CliRunner()
    out = runner.invoke(cli, ["rate", str(folder), "--format", "csv"])
    assert out.exit_code == 0, out.output
    assert [bot for bot, _ in _csv_order(out.output)] == DEFAULT_ORDER
    plain = out.output
    out = runner.invoke(cli, ["rate", str(folder), "--format", "csv",
                              "--tiebreaks", "direct-encounter,sonneborn-berger"])
    assert out.exit_code == 0 and out.output == plain
    out = runner.invoke(cli, ["rate", str(folder), "--format", "csv",
                              "--tiebreaks", ",".join(SWISS_TIEBREAKS)])
    assert out.exit_code == 0, out.output
    assert [bot for bot, _ in _csv_order(out.output)] == SWISS_ORDER
    out = runner.invoke(cli, ["rate", str(folder), "--format", "json",
                              "--tiebreaks", "buchholz-cut1"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)["tables"][0]["rows"]
    assert {r["bot"]: r["place"] for r in rows} == {"p": "1=", "q": "1=", "X": "3=",
                                                    "Y1": "3=", "Y2": "3=", "W1": "6"}
    out = runner.invoke(cli, ["rate", str(folder), "--tiebreaks", "buchholz-cut1,buchholz"])
    assert out.exit_code == 0, out.output
    said = " ".join(out.output.split())  # the caption, wrapped
    assert ("ordered by Buchholz cut-1 (Buchholz without the weakest opponent), then by "
            "Buchholz") in said, out.output
    assert "BH-C1" in out.output and "BH" in out.output  # their columns, for the level bots
    places_text = [line.split()[:2] for line in out.output.splitlines()
                   if line[:4].strip() in {"1", "2", "3", "4=", "6"} and len(line.split()) > 6]
    assert places_text == [["1", "q"], ["2", "p"], ["3", "X"], ["4=", "Y1"], ["4=", "Y2"],
                           ["6", "W1"]]


def test_arena_rate_refuses_an_unknown_tie_break_in_one_line(tmp_path: Path) -> None:
    folder = _folder(tmp_path, _games(SWISS))
    out = CliRunner().invoke(cli, ["rate", str(folder), "--tiebreaks", "buchholz,median"])
    assert out.exit_code != 0
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and "'median'" in lines[0] and "buchholz-cut1" in lines[0]


def test_the_direct_encounter_decides_only_between_bots_that_all_met() -> None:
    """FIDE C.07: a, b and c level on points (1 of 2 games each); a beat b, but c met
    neither: the direct encounter is not applied (h2h None for all three), so a and b are
    not split by the one game between them; with only a and b level it is: a is ahead."""
    from arena.standings import places

    # two games each: a beat b and lost to e; b beat d; c drew d and e
    games = [make_record("a", "b", 1.0, game_id="ab"), make_record("e", "a", 1.0, game_id="ea"),
             make_record("b", "d", 1.0, game_id="bd"), make_record("c", "d", 0.5, game_id="cd"),
             make_record("c", "e", 0.5, game_id="ce")]
    placed = {p.name: p for p in places(games, tiebreaks=("direct-encounter",))}
    assert {placed[n].points for n in "abc"} == {1.0}
    assert all(placed[n].h2h is None for n in "abc")
    assert placed["a"].rank == placed["b"].rank == placed["c"].rank  # shared: nothing split
    # c beats d instead: only a and b are level (1 point), and they met
    two = [g for g in games if g.game_id != "cd"] + [make_record("c", "d", 1.0, game_id="cd")]
    placed = {p.name: p for p in places(two, tiebreaks=("direct-encounter",))}
    assert (placed["a"].h2h, placed["b"].h2h) == (1.0, 0.0)
    assert placed["a"].rank < placed["b"].rank


def test_a_bot_with_only_a_bye_is_rated_without_an_elo() -> None:
    """After round 1 of an odd Swiss the bye's holder has points and no game: arena rate
    places it by points and gives it no Elo (it used to fail looking it up in the fit)."""
    from arena.ratings import rate_all

    games = [make_record("a", "b", 1.0, game_id="1"), make_record("b", "a", 0.5, game_id="2")]
    (table,) = rate_all(games, byes={"c": 2.0})
    rows = {r.bot: r for r in table.rows}
    assert [r.bot for r in table.rows] == ["c", "a", "b"]
    assert rows["c"].points == 2.0 and rows["c"].games == 0 and rows["c"].rating is None
    assert rows["a"].elo is not None and rows["a"].los_next is not None
