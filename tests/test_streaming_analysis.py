"""arena rate, report, export and analyse read games.jsonl a line at a time (issue 39).

The streaming path (the folder read a line at a time into tallies) gives the same output as
the list path (the records read into a list first); ratings fitted to the tallies equal the
fit to the games themselves; the tallies agree with counts taken straight from the records;
torn lines are read as :func:`arena.records.iter_records` reads them; and a big folder is
read in memory far below what its records would take (a structural bound, no timing).
"""

from __future__ import annotations

import json
import random
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.errors import ArenaError
from arena.export import format_games
from arena.ratings import fit_bradley_terry, fit_every_bot, game_arrays, rate_all
from arena.ratings.counts import game_counts
from arena.records import GameRecord, append_record, iter_records, read_records
from arena.report import build_report, format_standings, standings_csv, standings_json
from arena.report.data import collect
from arena.report.results import load_tallies, stream_folder
from arena.rounds import Round, append_round, folder_ranking
from arena.tallies import stream_games, tally_file, tally_games
from tests.synth_records import make_record, round_robin

VARIANTS = ("nine-mens-morris", "lasker-morris")


def _swiss_folder(path: Path, *, torn: bool = True) -> list[GameRecord]:
    """A Swiss of five bots over two variants (a bye each round), with lone games,
    forfeits, a separate pair of bots, a bot against itself and a torn last line."""
    rng = random.Random(7)
    bots = ["ann", "bob", "cat", "dan", "eve"]
    path.mkdir(parents=True, exist_ok=True)
    records: list[GameRecord] = []
    for rnd in range(1, 4):
        order = bots[:]
        rng.shuffle(order)
        pairs = [(order[0], order[1]), (order[2], order[3])]
        append_round(path, Round(rnd, "swiss", pairs=tuple(pairs), bye=(order[4],),
                                 bye_points=2.0))
        for p, (a, b) in enumerate(pairs, 1):
            for v in VARIANTS:
                for g, (w, bl) in enumerate(((a, b), (b, a))):
                    score = rng.choice((1.0, 0.5, 0.0))
                    forfeit = score == 0.0 and rng.random() < 0.3
                    records.append(make_record(
                        w, bl, score, variant=v, round=rnd, pair=p,
                        game_id=f"{v}/r{rnd}/p{p}/g{g}",
                        termination="timeout" if forfeit else "too-few-men",
                        forfeit="white" if forfeit else None,
                        detail=f"white ({w}) ran out of time after {rng.randint(900, 999)} ms"
                        if forfeit else ""))
    records += [make_record("ann", "bob", 1.0, pair=None, game_id=f"lone{k}") for k in range(3)]
    records += [make_record("xavi", "yan", 0.5, round=9, pair=1, game_id="xy0"),
                make_record("yan", "xavi", 1.0, round=9, pair=1, game_id="xy1"),
                make_record("ann", "ann", 0.5, pair=None, game_id="self")]
    rng.shuffle(records)
    for r in records:
        append_record(path / "games.jsonl", r)
    if torn:
        with open(path / "games.jsonl", "ab") as f:
            f.write(b'{"game_id": "torn", "variant": "nine-m')
    return records


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("swiss") / "results"
    _swiss_folder(path)
    return path


def test_the_stream_reads_what_iter_records_reads(folder: Path) -> None:
    expected = read_records(folder / "games.jsonl")
    assert [g.full() for g in stream_games(folder / "games.jsonl")] == expected
    assert [g.full() for g in stream_games(folder / "games.jsonl", full=True)] == expected
    assert tally_file(folder / "games.jsonl").count == len(expected)


@pytest.mark.parametrize("tail,skipped", [
    (b'{"game_id": "x"', True),                 # torn last line, no newline
    (b'{"game_id": "x"\n', True),               # torn last line with its newline
    (b'{"game_id": "x"\n{"game_id": "y"', True),  # the last two: the last has no newline
    (b'{"game_id": "x"}\n', False),             # complete JSON, not a record: an error
    (b'not json\n' + b'{"a": 1}\n' * 2, False),  # a bad line before the last two
    (b'\n\n   \n', True),                       # blank lines
])
def test_torn_and_broken_lines_as_iter_records(tmp_path: Path, tail: bytes,
                                               skipped: bool) -> None:
    path = tmp_path / "games.jsonl"
    for k in range(3):
        append_record(path, make_record("a", "b", 1.0, game_id=f"g{k}", pair=None))
    with open(path, "ab") as f:
        f.write(tail)
    if skipped:
        assert [g.full() for g in stream_games(path)] == list(iter_records(path)) \
            and len(list(iter_records(path))) == 3
        return
    with pytest.raises(ArenaError) as old:
        list(iter_records(path))
    with pytest.raises(ArenaError) as new:
        list(stream_games(path))
    assert str(new.value) == str(old.value)


def _invoke(*args: str) -> str:
    res = CliRunner().invoke(cli, list(args))
    assert res.exit_code == 0, res.output
    return res.output


@pytest.mark.parametrize("extra", [(), ("--anchor", "bob=1500"), ("--variant", "lasker"),
                                   ("--tiebreaks", "sonneborn-berger,buchholz"),
                                   ("--interval", "bootstrap", "--seed", "3")])
def test_arena_rate_streams_the_same_tables_as_the_list(folder: Path, extra: tuple) -> None:
    records = read_records(folder / "games.jsonl")
    breaks, byes = folder_ranking(folder, extra[1].split(",") if extra[:1] == ("--tiebreaks",)
                                  else None)
    kwargs: dict[str, Any] = {"tiebreaks": breaks}
    if extra[:1] == ("--anchor",):
        kwargs["anchor"] = ("bob", 1500.0)
    if extra[:1] == ("--interval",):  # the CLI's kept games resample as the list's
        kwargs.update(method="bootstrap", seed=3)
    source: Any = records
    if extra[:1] == ("--variant",):
        from arena.ratings import rate

        share = {n: p / 2 for n, p in byes.items()}
        tables = [rate(source, variant="lasker-morris", byes=share, **kwargs)]
    else:
        tables = rate_all(source, byes=byes or None, **kwargs)
    assert _invoke("rate", str(folder), *extra) == format_standings(tables, records)
    assert _invoke("rate", str(folder), "--format", "json", *extra) == \
        standings_json(tables, records) + "\n"
    assert _invoke("rate", str(folder), "--format", "csv", *extra) == standings_csv(tables)


def _counts_from_records(records: list[GameRecord], variant: Any) -> dict[str, Any]:
    """W-D-L and points per bot, points per pair, pentanomial pairs per two bots: counted
    straight from the records (the definitions, not the tallies)."""
    chosen = [r for r in records if variant is None or r.variant == variant]
    wdl: dict[str, list[int]] = {}
    against: Counter[tuple[str, str]] = Counter()
    for r in chosen:
        for color, me, other in (("white", r.white.name, r.black.name),
                                 ("black", r.black.name, r.white.name)):
            s = r.score(color)
            row = wdl.setdefault(me, [0, 0, 0])
            row[0 if s == 1 else 1 if s == 0.5 else 2] += 1
            if me != other:
                against[me, other] += s
    groups: dict[tuple[Any, ...], list[GameRecord]] = {}
    for r in chosen:
        if r.pair is not None and r.white.name != r.black.name:
            groups.setdefault((r.tournament, r.variant, r.round, r.pair), []).append(r)
    penta: Counter[tuple[str, str, int]] = Counter()
    for games in groups.values():
        if len(games) == 2 and games[0].white.name == games[1].black.name \
                and games[0].black.name == games[1].white.name:
            a, b = sorted((games[0].white.name, games[0].black.name))
            points = sum(g.score("white" if g.white.name == a else "black") for g in games)
            penta[a, b, int(2 * points)] += 1
    return {"wdl": wdl, "against": dict(against), "penta": dict(penta)}


@pytest.mark.parametrize("variant", [None, *VARIANTS])
def test_the_tallies_count_what_the_records_hold(folder: Path, variant: Any) -> None:
    from arena.ratings import all_matches, head_to_head
    from arena.standings import tally_rows

    records = read_records(folder / "games.jsonl")
    want = _counts_from_records(records, variant)
    tallies = load_tallies(folder)
    rows = tally_rows(tallies.table(variant))
    assert {n: [t.wins, t.draws, t.losses] for n, t in rows.items()} == want["wdl"]
    bots, points, games = head_to_head(tallies, variant)
    got = {(bots[i], bots[j]): float(points[i, j]) for i in range(len(bots))
           for j in range(len(bots)) if games[i, j]}
    assert got == want["against"]
    penta = {}
    for m in all_matches(tallies, variant):
        a, b = sorted((m.a, m.b))
        counts = m.pentanomial if m.a == a else m.pentanomial[::-1]
        penta.update({(a, b, k): c for k, c in enumerate(counts) if c})
        assert m.games == sum(counts) * 2 + m.unpaired
    assert penta == want["penta"]


@pytest.mark.parametrize("variant", [None, *VARIANTS])
def test_ratings_from_tallies_equal_ratings_from_the_games(variant: Any) -> None:
    records = round_robin({"a": 0, "b": 120, "c": -80, "d": 40, "e": 10}, 8, seed=3)
    records += round_robin({"a": 0, "b": 60, "c": -30}, 6, seed=4, variant="lasker-morris")
    records += [make_record("a", "f", 1.0, pair=None, game_id=f"lone{k}") for k in range(4)]
    random.Random(1).shuffle(records)
    chosen = [r for r in records if variant is None or r.variant == variant]
    arrays = game_arrays(chosen)
    counts = game_counts(tally_games(records).table(variant))
    assert counts.players == arrays.players and counts.n_games == arrays.n_games
    assert counts.n_clusters == len(set(arrays.cluster.tolist()))
    for fit in (fit_every_bot, ):
        old, old_part = fit(arrays)
        new, new_part = fit(counts)
        assert old is not None and new is not None and old_part == new_part
        assert new.players == old.players and new.prior == old.prior
        assert np.allclose(new.elo, old.elo, rtol=0, atol=1e-9)
        assert np.allclose(new.cov, old.cov, rtol=1e-9, atol=1e-9)
        assert new.clusters == old.clusters and new.method == old.method
    connected = [r for r in chosen if "f" not in (r.white.name, r.black.name)]
    old_fit = fit_bradley_terry(game_arrays(connected))
    new_fit = fit_bradley_terry(game_counts(tally_games(connected).table(None)))
    assert np.allclose(new_fit.elo, old_fit.elo, atol=1e-9)
    assert np.allclose(new_fit.cov, old_fit.cov, rtol=1e-9, atol=1e-9)


def _normalised(path: Path) -> str:
    """A report file with its generation time and embedded images left out."""
    import re

    text = path.read_text(encoding="utf-8")
    text = re.sub(r"Generated [0-9: -]+", "Generated", text)
    return re.sub(r"base64,[A-Za-z0-9+/=]+", "base64,", text)


@pytest.mark.parametrize("max_games", [None, 12])
def test_arena_report_streams_the_same_report_as_the_list(folder: Path, tmp_path: Path,
                                                          max_games: Any) -> None:
    records = read_records(folder / "games.jsonl")
    streamed, listed = tmp_path / "streamed", tmp_path / "listed"
    streamed.mkdir()
    listed.mkdir()
    build_report(streamed, stream_folder(folder), max_games=max_games, rounds_from=folder,
                 title="t")
    build_report(listed, records, max_games=max_games, rounds_from=folder, title="t")
    files = sorted(p.relative_to(streamed) for p in streamed.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(listed) for p in listed.rglob("*") if p.is_file())
    assert any(str(f).startswith("bots/") for f in files) and Path("report.html") in files
    for f in files:
        if f.suffix == ".html":
            assert _normalised(streamed / f) == _normalised(listed / f), f
        else:
            assert (streamed / f).read_bytes() == (listed / f).read_bytes(), f
    page = _normalised(streamed / "report.html")
    assert "Rounds" in page and "bye" in page
    if max_games is not None:
        assert f"Only the first {max_games} games are listed here" in page
        assert len(list((streamed / "games").glob("*.html"))) == max_games
        assert "other games are in games.jsonl" in _normalised(streamed / "bots" / "ann.html")


def test_report_titles_number_the_games_among_all_of_them(folder: Path) -> None:
    from arena.report.viewer import game_titles

    records = read_records(folder / "games.jsonl")
    every = game_titles(records)
    for n in (1, 5, 17, len(records)):
        data = collect(records, max_games=n)
        assert data.titles == {r.game_id: every[r.game_id] for r in records[:n]}


def test_arena_export_streams_the_same_text(folder: Path, tmp_path: Path) -> None:
    records = read_records(folder / "games.jsonl")
    text = "".join(format_games(records))
    assert _invoke("export", str(folder)) == text
    res = CliRunner().invoke(cli, ["export", str(folder), "-o", str(tmp_path / "out.pgn")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "out.pgn").read_text(encoding="utf-8") == text
    assert f"wrote {len(records)} games" in res.output


def test_arena_analyse_streams_the_same_analysis(tmp_path: Path) -> None:
    from arena.report.endgames import analyse, summarise, write_analysis

    from arena.records import MoveInfo

    class Tables:
        """Stand-in tables: every position with a man on d6 is a won endgame, d6 keeps it."""

        def probe_moves(self, pos: Any) -> list[Any]:
            from types import SimpleNamespace

            moves = [str(m) for m in pos.legal_moves()][:3]
            return [SimpleNamespace(move=m, value="win" if k == 0 else "draw", distance=3)
                    for k, m in enumerate(moves)]

    folder = tmp_path / "r"
    folder.mkdir()
    records = [make_record("a", "b", 1.0, game_id=f"g{k}", pair=None, moves=("d6", "f4", "d2"))
               for k in range(4)]
    records[1].moves = [MoveInfo("a1"), MoveInfo("a4")]
    for r in records:
        append_record(folder / "games.jsonl", r)
    games = analyse(records, Tables())
    want = write_analysis(tmp_path, games).read_text(encoding="utf-8")
    import arena.tablebase as tb
    from contextlib import contextmanager

    @contextmanager
    def fake_open(path: str) -> Any:
        yield Tables()

    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(tb, "open_tablebase", fake_open)
        out = _invoke("analyse", str(folder))
    finally:
        mp.undo()
    assert (folder / "analysis.jsonl").read_text(encoding="utf-8") == want
    rows = summarise(games)
    assert f"{len(games)} of {len(records)} games reached an endgame" in out
    assert all(f"  {row.bot}: {row.moves} moves" in out for row in rows)


def _big_folder(path: Path, games: int) -> None:
    """``games`` records from templates (ids, rounds and pairs filled in): quick to write."""
    path.mkdir(parents=True, exist_ok=True)
    bots = [f"bot{k:02d}" for k in range(12)]
    rng = random.Random(0)
    lines = {}
    with open(path / "games.jsonl", "w", encoding="utf-8") as f:
        n = 0
        rnd = 0
        while n < games:
            rnd += 1
            for p, (a, b) in enumerate([(a, b) for i, a in enumerate(bots)
                                        for b in bots[i + 1:]], 1):
                for g, (w, bl) in enumerate(((a, b), (b, a))):
                    score = rng.choice((1.0, 0.5, 0.0))
                    key = (w, bl, score)
                    if key not in lines:
                        text = make_record(w, bl, score, game_id="@ID@", round=987654,
                                           pair=123456).to_json()
                        lines[key] = (text.replace("{", "{{").replace("}", "}}")
                                      .replace("@ID@", "{gid}").replace("987654", "{rnd}")
                                      .replace("123456", "{pair}") + "\n")
                    f.write(lines[key].format(gid=f"r{rnd}p{p}g{g}", rnd=rnd, pair=p))
                    n += 1
                    if n >= games:
                        return


def test_a_big_folder_is_read_in_memory_far_below_its_records(tmp_path: Path) -> None:
    games = 50_000
    folder = tmp_path / "big"
    _big_folder(folder, games)
    # what the records take: a sample of them, held as read_records holds them
    tracemalloc.start()
    try:
        sample = [g.full() for g, _ in zip(stream_games(folder / "games.jsonl"), range(2000))]
        per_record = tracemalloc.get_traced_memory()[0] / len(sample)
        del sample
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        tallies = load_tallies(folder)
        tallies_peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        data = collect(stream_folder(folder), max_games=100)
        collect_peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert tallies.count == games == data.total and len(data.listed) == 100
    held = per_record * games  # the list the old path held (over 50 MB here)
    assert per_record > 500
    assert tallies_peak < held / 20, (tallies_peak, held)
    assert collect_peak < held / 10, (collect_peak, held)
    # and the same figures as the records give
    records = read_records(folder / "games.jsonl")
    assert standings_csv(rate_all(tallies)) == standings_csv(rate_all(records))
    assert json.loads(standings_json(rate_all(tallies), tallies)) == \
        json.loads(standings_json(rate_all(records), records))
