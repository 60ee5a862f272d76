"""The runner keeps what it needs to continue, not the records (issue 39): real games between
real bot processes (bots/random, seeded by each game's seed, so results do not depend on the
machine's load; time limits far above its needs), few of them.

- while a run plays, no record of a finished game stays alive in the runner (counted with
  ``gc``), where the old runner kept every one;
- a resume reads ``games.jsonl`` one line at a time: the list readers are not called;
- the runner's outcomes give the same tallies and standings as the records;
- a run killed with SIGKILL (a torn line added) resumes to the same ``standings.csv`` and
  ``games.csv`` as an uninterrupted run, with bots kept per pairing over two variants (the
  lazily grouped schedule).
"""

from __future__ import annotations

import gc
import io
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

import pytest

from arena.config import load_config
from arena.records import GameRecord, PlayerInfo, read_records, write_games_csv
from arena.runstate import Finished, load_finished
from arena.schedule import (Format, PendingSlots, build_schedule, iter_schedule,
                            last_of_pairings, pairing_order)
from arena.standings import Tallies, compute_standings
from arena.tournament import run_tournament
from arena.variants import get_variant

ROOT = Path(__file__).resolve().parent.parent
ARENA = str(Path(sys.executable).with_name("arena"))


def _write(folder: Path, name: str, *, games: int, bots: int = 2,
           variants: str = "[three-mens-morris]", restart: str = "per-game",
           workers: int = 2) -> Path:
    entries = "\n".join(f"  - {{path: {ROOT / 'bots' / 'random'}, name: r{k}}}"
                        for k in range(1, bots + 1))
    path = folder / f"{name}.yaml"
    path.write_text(f"name: {name}\nseed: 5\nbots:\n{entries}\nvariants: {variants}\n"
                    f"games_per_pairing: {games}\nrestart: {restart}\nisolation: none\n"
                    f"time: {{movetime: 2000, margin: 2000, handshake: 30000}}\n"
                    f"workers: {workers}\nreport: false\noutput: {folder / name}\n")
    return path


class CountingPool(ThreadPoolExecutor):
    """A thread pool (the games play in this process) that counts, at every submission, the
    records of finished games alive in the process (``game_id`` set: the runner's outcome
    stand-ins have none)."""

    def __init__(self, workers: int) -> None:
        super().__init__(max_workers=workers)
        self.alive: list[int] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        gc.collect()
        self.alive.append(sum(1 for o in gc.get_objects()
                              if isinstance(o, GameRecord) and o.game_id))
        return super().submit(fn, *args, **kwargs)


def test_no_record_of_a_finished_game_stays_in_the_runner(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, "alive", games=20, workers=2))
    pool = CountingPool(2)
    try:
        result = run_tournament(config, executor=pool, console=io.StringIO())
    finally:
        pool.shutdown()
    assert result.complete and result.played == 20
    assert len(pool.alive) == 20
    # at a late submission the runner has saved most games; it holds at most the few whose
    # futures it is handling (the old runner held all of them: 15 or more here)
    assert max(pool.alive[-5:]) <= 4, pool.alive
    assert len(read_records(result.folder / "games.jsonl")) == 20


def test_a_resume_streams_games_jsonl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, "resume", games=4, bots=3)
    first = run_tournament(load_config(path), console=io.StringIO(), max_games=5)
    assert first.finished == 5 and not first.complete

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the runner read every record into a list")

    import arena.records
    import arena.resultsfolder
    import arena.tournament

    for module, name in ((arena.records, "read_records"), (arena.records, "repair_records"),
                         (arena.tournament, "read_records"),
                         (arena.resultsfolder, "repair_records"),
                         (arena.resultsfolder, "read_repaired_games"),
                         (arena.tournament, "read_repaired_games")):
        monkeypatch.setattr(module, name, refused)
    second = run_tournament(load_config(path), console=io.StringIO())
    assert second.complete and second.played == 12 - 5 and second.finished == 12
    monkeypatch.undo()
    records = read_records(second.folder / "games.jsonl")
    assert len({r.game_id for r in records}) == len(records) == 12


def _standings_rows(tables: dict[str, list[Any]]) -> list[tuple[Any, ...]]:
    return [(v, r.name, r.rank, r.shared, r.wins, r.draws, r.losses, dict(r.forfeit_kinds),
             r.h2h, r.sb) for v, rows in tables.items() for r in rows]


def test_the_outcomes_give_the_tallies_and_standings_of_the_records(tmp_path: Path) -> None:
    path = _write(tmp_path, "tallies", games=2, bots=3,
                  variants="[three-mens-morris, six-mens-morris]", restart="per-pairing")
    result = run_tournament(load_config(path), console=io.StringIO())
    assert result.complete and result.finished == 12
    games = result.folder / "games.jsonl"
    records = read_records(games)
    moved, finished = load_finished(games, result.folder / "games.rejected.jsonl")
    assert moved == 0 and set(finished) == {r.game_id for r in records}
    # a few shared outcomes, not one object per game
    assert len(finished.outcomes()) <= len(records)
    assert len({id(finished[g]) for g in finished}) == len(finished.outcomes())
    for variant in (None, "three-mens-morris", "six-mens-morris"):
        mine, theirs = Tallies(variant=variant), Tallies(variant=variant)
        for r in records:
            theirs.add(r)
            mine.add(finished[r.game_id])
        assert {n: (t.wins, t.draws, t.losses, t.forfeit_kinds) for n, t in mine.rows.items()} \
            == {n: (t.wins, t.draws, t.losses, t.forfeit_kinds) for n, t in theirs.rows.items()}
    players = ["r1", "r2", "r3"]
    expected = compute_standings(records, players)
    assert _standings_rows(compute_standings([finished[r.game_id] for r in records], players)) \
        == _standings_rows(expected)
    assert _standings_rows(result.standings) == _standings_rows(expected)
    # games.csv as the list writer writes it, in schedule order; each record read back where
    # the runner noted it
    config = load_config(path)
    order = {s.game_id: s.index for s in config.schedule()}
    reference = tmp_path / "reference.csv"
    write_games_csv(reference, sorted(records, key=lambda r: order[r.game_id]))
    assert (result.folder / "games.csv").read_bytes() == reference.read_bytes()
    with open(games, "rb") as f:
        for r in records:
            f.seek(finished.offset(r.game_id))
            assert f.readline().decode().startswith('{"game_id":"' + r.game_id + '"')


def test_a_torn_line_is_moved_aside_as_before(tmp_path: Path) -> None:
    from arena.records import repair_records

    lines = [GameRecord(game_id=f"v/r1/m1/p{k}/g0", variant="v", variant_params={},
                        white=PlayerInfo("a"), black=PlayerInfo("b"),
                        result="1-0", termination="mill").to_json() for k in range(3)]
    text = lines[0] + "\n\n" + "not json\n" + lines[1] + "\n" + lines[0] + "\n" + lines[2]
    for torn in (text, text + "\n", text + "\n" + lines[2][:20]):
        ours, theirs = tmp_path / "ours", tmp_path / "theirs"
        for folder in (ours, theirs):
            folder.mkdir(exist_ok=True)
            (folder / "games.jsonl").write_text(torn)
            (folder / "side.jsonl").unlink(missing_ok=True)
        moved, finished = load_finished(ours / "games.jsonl", ours / "side.jsonl")
        moved_before, kept = repair_records(theirs / "games.jsonl", theirs / "side.jsonl")
        assert moved == moved_before
        assert (ours / "games.jsonl").read_bytes() == (theirs / "games.jsonl").read_bytes()
        assert ((ours / "side.jsonl").exists() and (ours / "side.jsonl").read_bytes()) == \
            ((theirs / "side.jsonl").exists() and (theirs / "side.jsonl").read_bytes())
        assert list(finished) == list(dict.fromkeys(r.game_id for r in kept))
        data = (ours / "games.jsonl").read_bytes()
        first = {}
        for r in kept:
            first.setdefault(r.game_id, data.index(r.to_json().encode()))
        assert {g: finished.offset(g) for g in finished} == first


def test_the_grouped_schedule_is_the_regrouped_one() -> None:
    variants = [get_variant("three-mens-morris"), get_variant("six-mens-morris")]
    players = [f"b{i}" for i in range(4)]
    kwargs: dict[str, Any] = dict(games_per_pairing=6, opening_turns=1, seed=3)
    listed = build_schedule(players, variants, Format(rounds=2), **kwargs)
    grouped = list(iter_schedule(players, variants, Format(rounds=2), by_pairing=True,
                                 **kwargs))
    assert list(pairing_order(listed)) == grouped  # the same slots, the same order
    # with games done, and a limit: the games taken and the pairings' last games are those
    # of the listed schedule regrouped
    done = {s.game_id for s in listed if s.pair_in_meeting == 1}
    for limit in (None, 7, 30):
        order: dict[str, int] = {}
        pending = PendingSlots(iter(grouped), done, order, limit, grouped=True)
        taken, last = [], set()
        while pending:
            slot = pending.popleft()
            taken.append(slot)
            if pending.ends_pairing(slot):
                last.add(slot.index)
        expected = list(pairing_order([s for s in listed if s.game_id not in done]))
        expected = expected if limit is None else expected[:limit]
        assert taken == expected
        assert last == last_of_pairings(expected)
        pending.finish()
        assert order == {s.game_id: s.index for s in listed if s.game_id in done}


def _kill_after(path: Path, games: Path, after: int) -> None:
    proc = subprocess.Popen([ARENA, "run", str(path)], cwd=path.parent, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if games.exists() and games.read_bytes().count(b"\n") >= after:
                break
            assert proc.poll() is None, "the run ended before it could be killed"
            time.sleep(0.02)
        else:
            raise AssertionError(f"fewer than {after} games saved in 300 s")
        os.kill(proc.pid, signal.SIGKILL)  # the runner only: its workers follow it
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_a_killed_run_resumes_to_the_same_standings(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # every run from the same folder, as a user would
    kwargs: dict[str, Any] = dict(games=6, bots=3, restart="per-pairing",
                                  variants="[three-mens-morris, six-mens-morris]")
    whole = run_tournament(load_config(_write(tmp_path, "whole", **kwargs)),
                           console=io.StringIO())
    assert whole.complete and whole.finished == 36
    killed = _write(tmp_path, "killed", **kwargs)
    folder = tmp_path / "killed"
    _kill_after(killed, folder / "games.jsonl", 10)
    with open(folder / "games.jsonl", "ab") as f:
        f.write(b'{"game_id": "torn')  # a write cut short
    saved = len(read_records(folder / "games.jsonl"))
    assert saved < 36, "the run ended before it could be killed"
    again = run_tournament(load_config(killed), console=io.StringIO())
    assert again.complete and again.finished == 36 and again.played == 36 - saved
    assert (folder / "games.rejected.jsonl").read_bytes() == b'{"game_id": "torn\n'
    for name in ("standings.csv", "games.csv"):
        theirs = (tmp_path / "whole" / name).read_text().replace("whole", "killed")
        mine = (folder / name).read_text()
        if name == "games.csv":  # the times and hosts of the games differ
            theirs, mine = (["|".join(row.split(",")[:14]) for row in t.splitlines()]
                            for t in (theirs, mine))
        assert mine == theirs
    assert _standings_rows(again.standings) == _standings_rows(whole.standings)


def test_an_sprt_run_resumes_from_the_outcomes_it_keeps(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """``arena sprt --out`` keeps outcomes too: a resumed run counts the saved pairs as an
    uninterrupted one does, and its PGN file gets the earlier games, read back, first."""
    from arena.bot import load_bot
    from arena.clock import TimeControl
    from arena.sprtrun import SprtRun, run_sprt

    monkeypatch.setenv("MORRIS_ARENA_ISOLATION", "none")
    bot = load_bot(ROOT / "bots" / "random")
    run = SprtRun(bot, bot, get_variant("three-mens-morris"),
                  TimeControl(movetime_ms=2000, handshake_ms=30000, margin_ms=2000),
                  elo0=0.0, elo1=5.0, alpha=0.001, beta=0.001, opening_turns=1)
    quiet = {"out": io.StringIO(), "console": io.StringIO(), "live": False}
    first = run_sprt(run, max_pairs=2, seed=7, folder=tmp_path / "resumed", **quiet)
    assert first.summary.pairs == 2
    pgn = tmp_path / "resumed.pgn"
    resumed = run_sprt(run, max_pairs=4, seed=7, folder=tmp_path / "resumed", pgn_out=pgn,
                       **quiet)
    whole = run_sprt(run, max_pairs=4, seed=7, folder=tmp_path / "whole", **quiet)
    assert resumed.summary.pairs == whole.summary.pairs == 4
    assert resumed.summary.counts == whole.summary.counts
    ids = [r.game_id for r in read_records(tmp_path / "resumed" / "games.jsonl")]
    assert len(ids) == len(set(ids)) == 8
    tags = [line.split('"')[1] for line in pgn.read_text().splitlines()
            if line.startswith("[GameId ")]
    assert tags == [f"sprt-7-{k}{g}" for k in (1, 2) for g in "ab"] + ids[4:]


def test_the_elo_table_of_the_tallies_is_that_of_the_records(tmp_path: Path) -> None:
    """The runner's end-of-run Elo table comes from the tallies of the records read back
    one at a time: the same text as from the list of records."""
    from arena.tallies import tally_games
    from arena.tournament import elo_table

    path = _write(tmp_path, "elo", games=2, bots=3,
                  variants="[three-mens-morris, six-mens-morris]")
    result = run_tournament(load_config(path), console=io.StringIO())
    assert result.complete
    records = read_records(result.folder / "games.jsonl")
    text = elo_table(records)
    assert text is not None and "r1" in text
    assert elo_table(tally_games(iter(records))) == text


def test_the_end_of_run_pass_writes_games_csv_and_counts_the_elo_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """games.csv and the Elo table's tallies come from one pass over the records read back:
    the same table as from the list of records; a game the tallies refuse fails the report
    only (games.csv is written all the same)."""
    from arena.tallies import GameTallies
    from arena.tournament import elo_table

    path = _write(tmp_path, "one", games=2, bots=2)
    path.write_text(path.read_text().replace("report: false", "report: true"))
    result = run_tournament(load_config(path), console=io.StringIO())
    assert result.complete and result.report is not None and result.report.is_file()
    records = read_records(result.folder / "games.jsonl")
    assert result.elo is not None and result.elo == elo_table(records)
    reference = tmp_path / "reference.csv"
    order = {s.game_id: s.index for s in load_config(path).schedule()}
    write_games_csv(reference, sorted(records, key=lambda r: order[r.game_id]))
    assert (result.folder / "games.csv").read_bytes() == reference.read_bytes()

    class Refusing(GameTallies):
        def add(self, item: Any) -> None:
            raise ValueError("not countable")

    import arena.tournament

    monkeypatch.setattr(arena.tournament, "GameTallies", Refusing)  # the runner's tallies
    path = _write(tmp_path, "two", games=2, bots=2)
    path.write_text(path.read_text().replace("report: false", "report: true"))
    failed = run_tournament(load_config(path), console=io.StringIO())
    assert failed.complete and failed.report is None and failed.elo is None
    assert (failed.folder / "games.csv").read_bytes().count(b"\n") == 1 + 2
    assert "the report failed (ValueError('not countable'))" in \
        (failed.folder / "arena.log").read_text()
