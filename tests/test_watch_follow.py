"""``arena watch``'s data layer (issue 40): :class:`arena.watch.follow.Follower` reading a
results folder as it grows.  Synthetic folders for the reading itself (complete lines only,
a file truncated or replaced, bad lines, bounded series, the Elo fit's pace, upsets) and
tiny real runs for what it computes: a tournament's standings as the runner ranks them,
followed live while ``arena run`` writes them, an SPRT's LLR as ``arena sprt`` prints it
(with and without a verdict), a tune's trajectory as ``trajectory.jsonl`` holds it."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Optional

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.config import load_config
from arena.ratings import SprtTest, pentanomial_llr, rate_all
from arena.records import GameRecord, append_record, read_records
from arena.sprtrun import sprt_game_id
from arena.tallies import tally_file
from arena.tournament import run_tournament
from arena.watch import follow
from arena.watch.follow import UPSET_GAP, Follower, Series, Tail
from tests.synth_records import make_record, round_robin
from tests.test_tournament import SMALL, write_config

ROOT = Path(__file__).resolve().parent.parent
ARENA = str(Path(sys.executable).with_name("arena"))
GREEDY, RANDOM = f"{ROOT}/bots/greedy", f"{ROOT}/bots/random"
TARGET = f"{ROOT}/tests/tune_bots/target"


@pytest.fixture(autouse=True)
def _unsandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Quick starts (the sandbox is tested elsewhere); the environment reaches subprocesses."""
    monkeypatch.setenv("MORRIS_ARENA_ISOLATION", "none")


def _lines(records: list[GameRecord]) -> list[bytes]:
    return [(r.to_json() + "\n").encode("utf-8") for r in records]


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


def _tables(state: dict[str, Any]) -> dict[str, Any]:
    """What a state says of the games (not when it was computed)."""
    elo = state["elo"]
    return {"games": state["games"], "standings": state["standings"],
            "crosstable": state["crosstable"], "recent": state["recent"],
            "elo": elo and elo["tables"], "sprt": state["sprt"], "tune": state["tune"]}


# -- reading a file as it grows --------------------------------------------------------------


def test_polls_read_only_complete_lines_and_count_as_they_grow(tmp_path: Path) -> None:
    records = round_robin({"a": 0, "b": 50, "c": 100}, 2, seed=4)
    lines = _lines(records)
    games = tmp_path / "games.jsonl"
    f = Follower(tmp_path, elo_every=0.0)
    assert not f.poll() and f.state()["games"] == 0  # no file yet
    assert f.state()["kind"] == "unknown" and f.state()["title"] == tmp_path.name
    seen = 0
    for step in (1, 3, 2, len(lines)):
        chunk = lines[seen:seen + step]
        if not chunk:
            break
        _append(games, b"".join(chunk))
        seen += len(chunk)
        assert f.poll()
        assert f.state()["games"] == seen
        assert not f.poll()  # nothing new
    assert seen == len(lines)
    assert f.state()["recent"][-1]["id"] == records[-1].game_id
    assert len(f.state()["recent"]) == follow.RECENT_GAMES
    # a write in progress: half a line is left for a later poll
    more = _lines([make_record("a", "b", 1.0, game_id="late", pair=99, round=9)])[0]
    _append(games, more[:40])
    assert not f.poll() and f.state()["games"] == seen
    _append(games, more[40:-1])  # all but the newline: still in progress
    assert not f.poll() and f.state()["games"] == seen
    _append(games, b"\n")
    assert f.poll() and f.state()["games"] == seen + 1
    assert f.state()["recent"][-1]["id"] == "late" and f.state()["bad_lines"] == 0
    # read incrementally: the same state as a follower that reads it all at once
    whole = Follower(tmp_path)
    whole.poll()
    assert _tables(whole.state()) == _tables(f.state())


def test_a_truncated_or_replaced_file_is_read_again_from_its_start(tmp_path: Path) -> None:
    records = round_robin({"a": 0, "b": 100}, 6, seed=2)
    lines = _lines(records)
    games = tmp_path / "games.jsonl"
    games.write_bytes(b"".join(lines))
    f = Follower(tmp_path)
    assert f.poll() and f.state()["games"] == len(records)
    # truncated in place (same inode), then fewer lines
    with open(games, "r+b") as handle:
        handle.truncate(0)
    _append(games, b"".join(lines[:3]))
    assert f.poll() and f.state()["games"] == 3
    assert f.state()["standings"][0]["rows"][0]["games"] == 3  # counted afresh
    # replaced by another file (a --restart, a repair): as long as the old one, other games
    other = round_robin({"x": 0, "y": 100}, 6, seed=5)
    fresh = tmp_path / "new.jsonl"
    fresh.write_bytes(b"".join(_lines(other)[:3]))
    os.replace(fresh, games)
    assert f.poll() and f.state()["games"] == 3
    names = {r["name"] for t in f.state()["standings"] for r in t["rows"]}
    assert names == {"x", "y"}
    # gone: nothing left
    games.unlink()
    assert f.poll() and f.state()["games"] == 0 and f.state()["standings"] == []


def test_bad_lines_are_counted_and_skipped_never_raised(tmp_path: Path) -> None:
    records = round_robin({"a": 0, "b": 100}, 2, seed=1)
    lines = _lines(records)
    bad = [b"not json\n", b"[1, 2]\n", b'{"game_id": "x"}\n', b"\xff\xfe\n",
           b'{"game_id": "y", "white": 3}\n']
    body = lines[:2] + bad[:3] + [b"\n", b"   \n"] + lines[2:] + bad[3:]
    (tmp_path / "games.jsonl").write_bytes(b"".join(body))
    f = Follower(tmp_path)
    assert f.poll()
    state = f.state()
    assert state["bad_lines"] == len(bad) and state["games"] == len(records)
    json.dumps(state, allow_nan=False)  # JSON values only


def test_tail_keeps_an_offset_not_the_file(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    tail = Tail(path)
    assert list(tail.lines()) == [] and not tail.replaced()
    path.write_bytes(b"one\ntwo\nthr")
    assert list(tail.lines()) == [b"one", b"two"] and tail.offset == 8
    _append(path, b"ee\n")
    assert list(tail.lines()) == [b"three"] and tail.offset == 14
    assert not tail.replaced() and list(tail.lines()) == []


# -- the series, the Elo fit's pace, upsets ----------------------------------------------------


def test_series_stay_bounded_keeping_every_other_point_and_the_last() -> None:
    s = Series(limit=10)
    for k in range(1, 1001):
        s.add(k, k * 0.5)
    points = s.points()
    assert len(points) <= 11 and s.step > 1
    assert points[-1] == [1000, 500.0]
    xs = [p[0] for p in points[:-1]]
    assert all(x is not None and x % s.step == 0 for x in xs)
    assert len(set(b - a for a, b in zip(xs, xs[1:]) if a is not None and b is not None)) == 1
    s.add(1001, float("nan"))
    assert s.points()[-1] == [1001, None]  # no NaN in JSON


def test_elo_is_fitted_at_most_every_elo_every_seconds(tmp_path: Path) -> None:
    records = round_robin({"a": 0, "b": 100, "c": 200}, 4, seed=3)
    games = tmp_path / "games.jsonl"
    now = [100.0]
    f = Follower(tmp_path, elo_every=2.0, clock=lambda: now[0])
    assert f.poll() is False and f.state()["elo"] is None
    _append(games, b"".join(_lines(records[:6])))
    assert f.poll() and f.state()["elo"]["games"] == 6
    now[0] += 1.0
    _append(games, b"".join(_lines(records[6:])))
    assert f.poll() and f.state()["games"] == len(records)
    assert f.state()["elo"]["games"] == 6  # too soon: the last fit stands
    assert not f.poll()
    now[0] += 1.5
    assert f.poll()  # no new line, but the fit is due
    elo = f.state()["elo"]
    assert elo["games"] == len(records) and elo["error"] is None
    expected = rate_all(tally_file(games))
    assert [[r["name"] for r in t["rows"]] for t in elo["tables"]] == [
        [r.bot for r in s.rows] for s in expected]
    assert [[r["elo"] for r in t["rows"]] for t in elo["tables"]] == [
        [pytest.approx(r.rating) for r in s.rows] for s in expected]
    assert not f.poll()


def test_an_upset_is_flagged_by_the_current_elo(tmp_path: Path) -> None:
    games = tmp_path / "games.jsonl"
    f = Follower(tmp_path, elo_every=0.0)
    for k in range(1, 9):  # strong beats weak in both colours, with a draw now and then
        _append(games, b"".join(_lines([
            make_record("strong", "weak", 1.0 if k % 3 else 0.5, pair=k, round=1,
                        game_id=f"g{k}a"),
            make_record("weak", "strong", 0.0, pair=k, round=1, game_id=f"g{k}b")])))
        f.poll()
    assert f.state()["last_upset"] is None
    assert not any(g["upset"] for g in f.state()["recent"])
    _append(games, b"".join(_lines([make_record("weak", "strong", 1.0, game_id="shock")])))
    assert f.poll()
    state = f.state()
    assert state["last_upset"]["id"] == "shock" and state["last_upset"]["gap"] >= UPSET_GAP
    assert state["recent"][-1]["id"] == "shock" and state["recent"][-1]["upset"]
    assert sum(g["upset"] for g in state["recent"]) == 1


def test_the_games_the_page_links_are_opened_at_their_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.report import results
    from arena.watch.server import game_page

    games = tmp_path / "games.jsonl"
    records = round_robin({"a": 0, "b": 50, "c": 100}, 12, seed=3)  # 36 games
    _append(games, b"".join(_lines(records)))
    f = Follower(tmp_path, elo_every=0.0)
    f.poll()
    data = games.read_bytes()
    recent = [e["id"] for e in f.state()["recent"]]
    assert recent == [r.game_id for r in records[-len(recent):]]
    for game_id in recent:  # each linked game is found where its line begins
        at = f.offset_of(game_id)
        assert at is not None and (at == 0 or data[at - 1:at] == b"\n")
        assert json.loads(data[at:data.index(b"\n", at)])["game_id"] == game_id
    assert f.offset_of(records[0].game_id) is None  # long gone from the page: not kept
    assert len(f._where) <= 2 * len(recent) + 1  # noqa: SLF001 - bounded however long the run

    def shown(page: Optional[str]) -> str:
        assert page is not None
        return json.loads(page.split('type="application/json">', 1)[1].split("</script>")[0])["id"]

    last = records[-1]
    searches: list[str] = []
    search = results.find_games
    monkeypatch.setattr(results, "find_games", lambda *a: searches.append(a[1]) or search(*a))
    assert shown(game_page(tmp_path, last.game_id, f.offset_of(last.game_id))) == last.game_id
    assert searches == []  # read at its offset, not searched for
    other = f.offset_of(recent[0])  # a wrong or stale offset: the line is checked, then searched
    assert shown(game_page(tmp_path, last.game_id, other)) == last.game_id
    assert shown(game_page(tmp_path, records[0].game_id, None)) == records[0].game_id
    assert game_page(tmp_path, "no-such-game", other) is None
    assert game_page(tmp_path, last.game_id, 10 ** 9) is not None  # past the end: searched
    assert searches == [last.game_id, records[0].game_id, "no-such-game", last.game_id]


# -- SPRT: synthetic ---------------------------------------------------------------------------


def _sprt_folder(folder: Path, seed: int = 7, **settings: Any) -> str:
    """A folder with ``sprt.json`` of A against B; the games' tag."""
    folder.mkdir(parents=True, exist_ok=True)
    stored = {"a": {"name": "A"}, "b": {"name": "B"}, "elo0": 0.0, "elo1": 10.0,
              "alpha": 0.05, "beta": 0.05, "seed": seed, **settings}
    (folder / "sprt.json").write_text(json.dumps({"settings": stored}))
    return f"sprt-{seed}"


def _sprt_pair(tag: str, k: int, first: float, second: float) -> list[GameRecord]:
    """Pair ``k``: A's score with White, then with Black."""
    return [make_record("A", "B", first, game_id=sprt_game_id(tag, k, 0), tournament=tag,
                        round=k, pair=k),
            make_record("B", "A", 1.0 - second, game_id=sprt_game_id(tag, k, 1),
                        tournament=tag, round=k, pair=k)]


def _scores(k: int) -> tuple[float, float]:
    """A's scores in pair ``k``: every two scores in turn (an even match)."""
    return (1.0, 0.5, 0.0)[k % 3], (0.0, 1.0, 0.5)[(k // 3) % 3]


def test_sprt_pairs_count_in_pair_order_and_the_series_stay_bounded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(follow, "SERIES_POINTS", 50)
    tag = _sprt_folder(tmp_path, alpha=0.001, beta=0.001, elo0=-5.0, elo1=5.0)
    games = tmp_path / "games.jsonl"
    f = Follower(tmp_path)
    f.poll()
    assert f.state()["kind"] == "sprt" and f.state()["title"] == "A vs B"
    # pair 2 complete before pair 1: nothing counted until pair 1 is there
    p1, p2 = _sprt_pair(tag, 1, *_scores(1)), _sprt_pair(tag, 2, *_scores(2))
    _append(games, b"".join(_lines(p2 + p1[1:])))
    f.poll()
    assert f.state()["sprt"]["pairs"] == 0 and f.state()["games"] == 3
    _append(games, b"".join(_lines(p1[:1])))
    f.poll()
    assert f.state()["sprt"]["pairs"] == 2
    # games of another seed's run do not count in the test
    _append(games, b"".join(_lines(_sprt_pair("sprt-8", 3, 1.0, 1.0))))
    reference = SprtTest(-5.0, 5.0, 0.001, 0.001)
    for k in (1, 2):
        reference.add_games(*_scores(k))
    for k in range(3, 301):
        _append(games, b"".join(_lines(_sprt_pair(tag, k, *_scores(k)))))
        reference.add_games(*_scores(k))
    f.poll()
    sprt = f.state()["sprt"]
    assert reference.verdict is None and sprt["verdict"] is None
    assert sprt["pairs"] == 300 and sprt["pentanomial"] == reference.counts
    assert sprt["wdl"] == reference.wdl
    assert 25 <= len(sprt["llr"]) <= 51 and len(sprt["elo"]) == len(sprt["llr"])
    assert sprt["llr"][-1] == [600, pytest.approx(reference.llr, abs=1e-12)]
    assert sprt["lower"] == pytest.approx(reference.bounds[0])
    assert [p[0] for p in sprt["llr"]] == sorted(p[0] for p in sprt["llr"])
    assert all(lo <= elo <= hi for _, elo, lo, hi in sprt["elo"])
    assert not f.state()["finished"] and f.state()["total"] is None


def test_sprt_stops_at_its_verdict_as_arena_sprt_does(tmp_path: Path) -> None:
    tag = _sprt_folder(tmp_path, elo1=200.0, alpha=0.2, beta=0.2)
    reference = SprtTest(0.0, 200.0, 0.2, 0.2)
    decided_at: Optional[int] = None
    records: list[GameRecord] = []
    for k in range(1, 41):  # A wins almost everything: H1 long before pair 40
        first, second = (1.0, 1.0) if k % 4 else (1.0, 0.5)
        records += _sprt_pair(tag, k, first, second)
        if decided_at is None:
            reference.add_games(first, second)
            if reference.verdict is not None:
                decided_at = k
    assert decided_at is not None and decided_at < 40
    (tmp_path / "games.jsonl").write_bytes(b"".join(_lines(records)))
    f = Follower(tmp_path)
    f.poll()
    state = f.state()
    assert state["sprt"]["verdict"] == reference.verdict == "H1" and state["finished"]
    assert state["sprt"]["pairs"] == decided_at and state["games"] == 80
    assert state["sprt"]["llr"][-1][1] == pytest.approx(reference.llr, abs=1e-12)


def test_new_sprt_settings_start_the_state_afresh(tmp_path: Path) -> None:
    tag = _sprt_folder(tmp_path, seed=7)
    (tmp_path / "games.jsonl").write_bytes(b"".join(_lines(_sprt_pair(tag, 1, 1.0, 0.5))))
    f = Follower(tmp_path)
    f.poll()
    assert f.state()["sprt"]["pairs"] == 1
    time.sleep(0.01)
    tag = _sprt_folder(tmp_path, seed=9)  # arena sprt --restart with another seed
    (tmp_path / "games.jsonl").unlink()
    assert f.poll() and f.state()["games"] == 0 and f.state()["sprt"]["pairs"] == 0
    _append(tmp_path / "games.jsonl", b"".join(_lines(_sprt_pair(tag, 1, 0.0, 0.0))))
    f.poll()
    assert f.state()["sprt"]["pairs"] == 1 and f.state()["sprt"]["pentanomial"][0] == 1


# -- real runs -------------------------------------------------------------------------------


def _standings_of(rows: Any) -> list[tuple[Any, ...]]:
    return [(r.rank, r.shared, r.name, r.wins, r.draws, r.losses, r.points) for r in rows]


def _watched(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(r["rank"], r["place"].endswith("="), r["name"], r["wins"], r["draws"],
             r["losses"], r["points"]) for r in rows]


def test_a_tournaments_standings_and_elo_are_the_runners_and_arena_rates(workdir: Path) -> None:
    config = load_config(write_config(workdir))
    result = run_tournament(config, console=io.StringIO())
    assert result.complete
    folder = workdir / "results" / "small"
    f = Follower(folder)
    assert f.poll()
    state = f.state()
    assert state["kind"] == "tournament" and state["title"] == config.name == "small"
    assert state["games"] == result.total == state["total"] and state["finished"]
    assert {t["variant"]: _watched(t["rows"]) for t in state["standings"]} == {
        v: _standings_of(rows) for v, rows in result.standings.items()}
    for table, cross in zip(state["standings"], state["crosstable"]):
        assert cross["bots"] == [r["name"] for r in table["rows"]]
        for i, row in enumerate(table["rows"]):  # a bot's points against the others: its own
            assert sum(p for p in cross["points"][i] if p is not None) == row["points"]
            assert sum(g for g in cross["games"][i] if g is not None) == row["games"]
    expected = rate_all(tally_file(folder / "games.jsonl"))
    assert [(t["label"], [(r["name"], r["elo"], r["low95"]) for r in t["rows"]])
            for t in state["elo"]["tables"]] == [
        (s.label, [(r.bot, pytest.approx(r.rating),
                    pytest.approx((r.rating or 0.0) - (r.rating95 or 0.0))) for r in s.rows])
        for s in expected]
    # replayed a game at a time into a copy of the folder: the same tables at the end
    copy_of = workdir / "copy"
    copy_of.mkdir()
    (copy_of / "config.json").write_bytes((folder / "config.json").read_bytes())
    g = Follower(copy_of, elo_every=0.0)
    g.poll()
    assert g.state()["total"] == result.total and not g.state()["finished"]
    for k, line in enumerate((folder / "games.jsonl").read_bytes().splitlines(True), 1):
        _append(copy_of / "games.jsonl", line)
        assert g.poll() and g.state()["games"] == k
        assert g.state()["finished"] == (k == result.total)
    assert _tables(g.state()) == _tables(state)


KNOCKOUT = f"""\
name: cup
bots:
  - {{path: {ROOT}/bots/greedy, name: g1}}
  - {{path: {ROOT}/bots/random, name: r1}}
  - {{path: {ROOT}/bots/greedy, name: g2}}
  - {{path: {ROOT}/bots/random, name: r2}}
  - {{path: {ROOT}/bots/random, name: r3}}
variants: [three-mens-morris]
format: {{type: knockout}}
games_per_pairing: 2
time: {{movetime: 500, margin: 500}}
workers: 2
seed: 5
report: false
"""


def test_a_knockout_is_placed_by_its_bracket_as_the_runner_places_it(workdir: Path) -> None:
    config = load_config(write_config(workdir, KNOCKOUT))
    result = run_tournament(config, console=io.StringIO())
    assert result.complete
    folder = workdir / "results" / "cup"
    f = Follower(folder)
    f.poll()
    state = f.state()
    runner = result.standings["three-mens-morris"]
    assert state["total"] is None and state["total_least"] == 4 * 2  # 4 matches, 2 games each
    assert state["finished"] and state["games"] == result.finished >= 8
    table = state["standings"][0]
    assert table["ranked_by"] == "bracket"
    assert _watched(table["rows"]) == _standings_of(runner)  # the runner's order, not points
    champion = [r.name for r in runner if r.rank == 1]
    assert state["bracket"]["champion"] == champion[0] and len(champion) == 1
    assert sorted(r.rank for r in runner) == [1, 2, 3, 3, 5]  # 5 players: 3 byes in round 1
    picture = state["bracket"]["svg"]
    assert picture.startswith("<svg") and all(f"<title>{n}</title>" in picture
                                              for n in ("g1", "r1", "g2", "r2", "r3"))
    # replayed a game at a time (the rounds file as the run left it): unfinished until the
    # last game, placed by the bracket all along, the same at the end
    copy_of = workdir / "copy"
    copy_of.mkdir()
    for name in ("config.json", "rounds.jsonl"):
        (copy_of / name).write_bytes((folder / name).read_bytes())
    g = Follower(copy_of, elo_every=0.0)
    g.poll()
    assert g.state()["bracket"]["champion"] is None and not g.state()["finished"]
    lines = (folder / "games.jsonl").read_bytes().splitlines(True)
    for k, line in enumerate(lines, 1):
        _append(copy_of / "games.jsonl", line)
        g.poll()
        now = g.state()
        assert now["finished"] == (k == len(lines)) == (now["bracket"]["champion"] is not None)
        assert now["standings"][0]["ranked_by"] == "bracket"
        first = [r["name"] for r in now["standings"][0]["rows"] if r["rank"] == 1]
        assert champion[0] in first  # the champion is never placed below a player still in
    assert _tables(g.state()) == _tables(state)


def test_follows_a_running_tournament_live(workdir: Path) -> None:
    path = write_config(workdir, SMALL.replace("games_per_pairing: 4", "games_per_pairing: 6"))
    folder = workdir / "results" / "small"
    f = Follower(folder, elo_every=0.5)
    proc = subprocess.Popen([ARENA, "run", str(path)], cwd=workdir, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    seen: list[int] = []
    try:
        deadline = time.monotonic() + 300
        while proc.poll() is None and time.monotonic() < deadline:
            if f.poll():
                seen.append(f.state()["games"])
            time.sleep(0.02)
        out = proc.communicate(timeout=60)[0].decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, out
    f.poll()
    state = f.state()
    assert seen == sorted(seen) and state["finished"] and state["games"] == 12
    # the runner's standings.csv, written at its end
    import csv

    with open(folder / "standings.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["variant"], r["place"], r["bot"], float(r["points"]), int(r["games"]))
            for r in rows] == [(t["variant"], r["place"], r["name"], r["points"], r["games"])
                               for t in state["standings"] for r in t["rows"]]


def _summary(output: str) -> dict[str, str]:
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Results of "))
    return dict(line.split(": ", 1) for line in lines[start + 1:] if ": " in line)


def _sprt_args(out: Path, *extra: str) -> list[str]:
    return ["sprt", GREEDY, RANDOM, "--variant", "three-mens-morris", "--movetime", "50",
            "--seed", "5", "--out", str(out), *extra]


def _a_counts(records: list[GameRecord], pairs: int) -> list[int]:
    """The pentanomial counts of A (greedy) over the first ``pairs`` pairs, from the records
    alone."""
    by_id = {r.game_id: r for r in records}
    tag = records[0].game_id.rsplit("-", 1)[0]
    counts = [0] * 5
    for k in range(1, pairs + 1):
        score = by_id[f"{tag}-{k}a"].score("white") + by_id[f"{tag}-{k}b"].score("black")
        counts[int(2 * score)] += 1
    return counts


def test_the_llr_is_arena_sprts_own_for_a_real_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = CliRunner().invoke(cli, _sprt_args(out, "--max-pairs", "3", "--alpha", "0.001",
                                             "--beta", "0.001"))
    assert res.exit_code == 1, res.output  # undecided after 3 pairs
    f = Follower(out)
    f.poll()
    state = f.state()
    sprt = state["sprt"]
    assert state["kind"] == "sprt" and state["title"] == "greedy vs random"
    assert sprt["a"] == "greedy" and sprt["verdict"] is None and not state["finished"]
    assert [p[0] for p in sprt["llr"]] == [2, 4, 6]
    summary = _summary(res.output)
    assert summary["LLR"].startswith(f"{sprt['llr'][-1][1]:+.2f} (")
    assert summary["Ptnml(0-2)"].startswith(f"[{', '.join(map(str, sprt['pentanomial']))}]")
    counts = _a_counts(read_records(out / "games.jsonl"), 3)
    assert sprt["pentanomial"] == counts
    assert sprt["llr"][-1][1] == pytest.approx(pentanomial_llr(counts, 0, 10), abs=1e-12)
    w, d, l = sprt["wdl"]
    assert summary["Games"].startswith(f"6, Wins: {w}, Draws: {d}, Losses: {l}")


def test_a_real_sprt_verdict_is_reached_at_arena_sprts_pair(tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = CliRunner().invoke(cli, _sprt_args(out, "--max-pairs", "30", "--elo0", "-400",
                                             "--elo1", "-300", "--alpha", "0.2", "--beta",
                                             "0.2", "-j", "2"))
    assert res.exit_code == 0, res.output  # greedy is far above random: H1 soon
    after = int(res.output.split(" accepted after ")[1].split(" pairs")[0])
    f = Follower(out)
    f.poll()
    sprt = f.state()["sprt"]
    assert sprt["verdict"] == ("H1" if "H1 accepted" in res.output else "H0")
    assert sprt["pairs"] == after and f.state()["finished"]
    assert _summary(res.output)["LLR"].startswith(f"{sprt['llr'][-1][1]:+.2f} (")
    counts = _a_counts(read_records(out / "games.jsonl"), after)
    assert sprt["llr"][-1][1] == pytest.approx(pentanomial_llr(counts, -400, -300), abs=1e-12)


def test_a_tunes_trajectory_is_trajectory_jsonls(tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = CliRunner().invoke(cli, [
        "tune", f"{TARGET}:Y=700", "--param", "X=20,0,100,10,0.15", "--iterations", "2",
        "--pairs", "1", "--variant", "three-mens-morris", "--movetime", "2000",
        "--opening-turns", "2", "--seed", "3", "-j", "2", "--out", str(out)])
    assert res.exit_code == 0, res.output
    f = Follower(out)
    f.poll()
    state = f.state()
    tune = state["tune"]
    lines = [json.loads(line) for line in (out / "trajectory.jsonl").read_text().splitlines()]
    pairs = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    bot = json.loads((out / "tune.json").read_text())["settings"]["bot"]["name"]
    assert state["kind"] == "tune" and state["title"] == bot and tune["bot"] == bot
    assert tune["params"] == {"X": [[d["iteration"], d["theta"]["X"]] for d in lines]}
    assert tune["results"] == [[d["iteration"], d["result"]] for d in lines[1:]]
    assert tune["iterations"] == 2 == tune["total_iterations"] and state["finished"]
    assert tune["pairs"] == len(pairs) == 2 and tune["ranges"] == {"X": [0, 100]}
    assert tune["last_pair"]["plus"] == pairs[-1]["plus"]
    assert state["total"] == state["games"] == len(read_records(out / "games.jsonl")) == 4
    # the trajectory rewritten (a resumed run's start): read again, the same
    data = (out / "trajectory.jsonl").read_bytes()
    (out / "t.tmp").write_bytes(data + b"garbage\n")
    os.replace(out / "t.tmp", out / "trajectory.jsonl")
    assert f.poll()
    assert f.state()["tune"]["params"] == tune["params"] and f.state()["bad_lines"] == 1
