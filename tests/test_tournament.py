"""The tournament runner end to end with real bot processes: a small tournament, the same
games whatever the worker count, resume after an interrupted run, after Ctrl-C and after a
SIGKILL of the runner, a changed configuration refused, another executor swapped in (a
``concurrent.futures`` one, or one written against :class:`arena.executors.GameExecutor`)."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterable

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.config import TournamentConfig, load_config
from arena.errors import ConfigError
from arena.jobs import GameJob, play_job
from arena.records import GameRecord, MoveInfo, PlayerInfo, read_records
from arena.standings import compute_standings, format_standings
from arena.progress import ConsoleHandler, Progress, RunLogging
from arena.tournament import ResultsMismatch, WorkerFailure, run_tournament
from tests.conftest import assert_gone_within


ROOT = Path(__file__).resolve().parent.parent
ARENA = str(Path(sys.executable).with_name("arena"))

SMALL = f"""\
name: small
bots: [{ROOT}/bots/random, {ROOT}/bots/greedy]
variants: [three-mens-morris, six-mens-morris]
games_per_pairing: 4
openings: {{random: 1}}
time: {{movetime: 500, margin: 500}}
workers: 2
seed: 3
report: false
"""


def write_config(folder: Path, text: str = SMALL, name: str = "small.yaml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def schedule_ids(config: TournamentConfig) -> list[str]:
    """The game ids of ``config``'s schedule (tests/test_cluster.py uses it too)."""
    return [s.game_id for s in config.schedule()]


def game_ids(folder: Path) -> list[str]:
    return [r.game_id for r in read_records(folder / "games.jsonl")]


def test_small_real_tournament_end_to_end(workdir: Path) -> None:
    path = write_config(workdir, SMALL.replace("report: false", "report: true"))
    result = CliRunner().invoke(cli, ["run", str(path)])
    assert result.exit_code == 0, result.output
    config = load_config(workdir / "small.yaml")
    folder = workdir / "results" / "small"
    records = read_records(folder / "games.jsonl")
    assert sorted(r.game_id for r in records) == sorted(schedule_ids(config))
    assert len(records) == 2 * 4
    for r in records:
        assert r.tournament == "small" and r.round == 1 and r.pair in (1, 3)
        assert r.result in ("1-0", "0-1", "1/2-1/2") and r.forfeit is None, r.detail
        assert len(r.opening) == 1 and r.moves[0].opening
    # both games of a pair: same opening, colours swapped
    pairs: dict[tuple[str, int], list[GameRecord]] = {}
    for r in records:
        pairs.setdefault((r.variant, r.pair), []).append(r)
    for a, b in pairs.values():
        assert a.opening == b.opening and a.white.name == b.black.name
    # the tables: standings per variant, one row per game
    with open(folder / "standings.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {(row["variant"], row["bot"]) for row in rows} == {
        (v, b) for v in ("three-mens-morris", "six-mens-morris") for b in ("random", "greedy")}
    for variant in ("three-mens-morris", "six-mens-morris"):
        points = sum(float(row["points"]) for row in rows if row["variant"] == variant)
        assert points == 4  # one point per game
        assert variant in result.output
    with open(folder / "games.csv", newline="") as f:
        assert len(list(csv.DictReader(f))) == 8
    stored = json.loads((folder / "config.json").read_text())
    assert stored["digest"] == config.digest()
    assert "three-mens-morris/r1/m1/p1/g0" in (folder / "arena.log").read_text()
    assert "small: 8/8 games (8 played now)" in result.output
    assert (folder / "report.html").is_file() and "Elo" in result.output


def test_same_games_whatever_the_worker_count(workdir: Path) -> None:
    def play(workers: int, output: str) -> dict[str, Any]:
        text = SMALL.replace(", six-mens-morris]", "]").replace(
            "games_per_pairing: 4", "games_per_pairing: 6") + f"output: {output}\n"
        config = load_config(write_config(workdir, text), workers=workers)
        result = run_tournament(config, console=io.StringIO())
        assert result.complete
        return {r.game_id: (r.white.name, r.black.name, r.opening, r.seed,
                            [m.move for m in r.moves], r.result)
                for r in read_records(Path(output) / "games.jsonl")}

    one, two = play(1, "one"), play(2, "two")
    assert one == two
    assert len(one) == 6


@pytest.mark.parametrize("restart", ["per-game", "per-pairing"])
def test_resume_after_an_interrupted_run(workdir: Path, restart: str) -> None:
    config = load_config(write_config(workdir, SMALL + f"restart: {restart}\n"))
    first = run_tournament(config, console=io.StringIO(), max_games=3)
    assert (first.played, first.finished, first.complete) == (3, 3, False)
    folder = first.folder
    with open(folder / "games.jsonl", "ab") as f:  # a write torn by a crash
        f.write(b'{"game_id": "three-mens-morris/r1/m1/p2/g0", "vari')
    second = run_tournament(config, console=io.StringIO())
    assert second.complete and second.played == 5
    ids = game_ids(folder)
    assert sorted(ids) == sorted(schedule_ids(config)) and len(ids) == len(set(ids))
    third = run_tournament(config, console=io.StringIO())
    assert third.played == 0 and game_ids(folder) == ids


def test_a_changed_config_is_refused_unless_restart(workdir: Path) -> None:
    path = write_config(workdir, SMALL.replace("variants: [three-mens-morris, six-mens-morris]",
                                               "variants: [three-mens-morris]"))
    first = run_tournament(load_config(path), console=io.StringIO(), max_games=2)
    games = (first.folder / "games.jsonl").read_bytes()
    write_config(workdir, path.read_text().replace("seed: 3", "seed: 4"))
    with pytest.raises(ResultsMismatch, match=r"changed: seed"):
        run_tournament(load_config(path), console=io.StringIO())
    result = CliRunner().invoke(cli, ["run", str(path)])
    assert result.exit_code == 2 and "would play differently" in result.output
    assert (first.folder / "games.jsonl").read_bytes() == games
    # another worker count is not a change
    run_tournament(load_config(write_config(workdir, SMALL.replace(
        "variants: [three-mens-morris, six-mens-morris]", "variants: [three-mens-morris]")),
        workers=1), console=io.StringIO(), max_games=1)
    write_config(workdir, path.read_text().replace("seed: 3", "seed: 4"))
    result = CliRunner().invoke(cli, ["run", "--restart", str(path)])  # the old name
    assert result.exit_code == 0, result.output
    assert "--restart is now called --fresh" in result.output
    assert len(game_ids(first.folder)) == 4
    assert json.loads((first.folder / "config.json").read_text())["config"]["seed"] == 4


GROW = f"""\
name: grow
bots: [{ROOT}/bots/random, {ROOT}/bots/greedy]
variants: [three-mens-morris]
games_per_pairing: 2
openings: {{random: 1}}
time: {{movetime: 50, margin: 300}}
workers: 2
seed: 5
report: false
"""


@pytest.mark.slow
def test_a_finished_tournament_grows_keeping_its_games(workdir: Path) -> None:
    """2 games, then games_per_pairing 4 (the 2 first kept byte for byte, 2 more played),
    then a third bot, then a variant; a changed time control is refused naming ``time``,
    and nothing written is touched."""
    path = write_config(workdir, GROW, "grow.yaml")
    first = run_tournament(load_config(path), console=io.StringIO())
    assert first.complete and first.played == 2
    games = first.folder / "games.jsonl"
    before = games.read_bytes()
    stages = [("games_per_pairing: 2", "games_per_pairing: 4", 2),
              (f"{ROOT}/bots/greedy]", f"{ROOT}/bots/greedy, {ROOT}/bots/random]", 0),
              ("bots: [", f"bots: [{{path: {ROOT}/bots/greedy, name: greedy2}}, ", 8),
              ("variants: [three-mens-morris]", "variants: [six-mens-morris, three-mens-morris]",
               12)]
    for old, new, played in stages:
        text = path.read_text()
        write_config(workdir, text.replace(old, new), "grow.yaml")
        if played == 0:  # the same bot twice: a config error, nothing touched
            with pytest.raises(ConfigError):
                load_config(path)
            write_config(workdir, text, "grow.yaml")
            continue
        result = run_tournament(load_config(path), console=io.StringIO())
        after = games.read_bytes()
        assert after.startswith(before), "a game already played was changed"
        assert result.complete and result.played == played, (old, result)
        assert result.finished == result.total == len(game_ids(first.folder))
        stored = json.loads((first.folder / "config.json").read_text())
        assert stored["config"]["games_per_pairing"] == 4 and "grown" in stored
        before = after
    records = read_records(games)
    assert {r.variant for r in records} == {"three-mens-morris", "six-mens-morris"}
    assert len(records) == len({r.game_id for r in records}) == 2 * 4 * 3  # 3 meetings
    # the stored bots are in joining order: the new bot (first in the file) comes last
    stored = json.loads((first.folder / "config.json").read_text())
    assert [b["name"] for b in stored["config"]["bots"]] == ["random", "greedy", "greedy2"]
    # a rerun plays nothing; a changed time control is refused, naming it
    assert run_tournament(load_config(path), console=io.StringIO()).played == 0
    write_config(workdir, path.read_text().replace("movetime: 50", "movetime: 60"), "grow.yaml")
    with pytest.raises(ResultsMismatch, match=r"changed: time\)"):
        run_tournament(load_config(path), console=io.StringIO())
    result = CliRunner().invoke(cli, ["run", str(path)])
    assert result.exit_code == 2 and "changed: time" in result.output
    assert games.read_bytes() == before


def test_a_growth_cut_short_resumes(workdir: Path) -> None:
    """Growing is one atomic rewrite of config.json before any new game: a run stopped after
    it (here after one new game) resumes the grown tournament, keeping every game."""
    path = write_config(workdir, GROW, "grow.yaml")
    first = run_tournament(load_config(path), console=io.StringIO())
    games = first.folder / "games.jsonl"
    before = games.read_bytes()
    write_config(workdir, GROW.replace("games_per_pairing: 2", "games_per_pairing: 4"),
                 "grow.yaml")
    cut = run_tournament(load_config(path), console=io.StringIO(), max_games=1)
    assert cut.played == 1 and not cut.complete and games.read_bytes().startswith(before)
    rest = run_tournament(load_config(path), console=io.StringIO())
    assert rest.played == 1 and rest.complete and games.read_bytes().startswith(before)
    assert sorted(game_ids(first.folder)) == sorted(schedule_ids(load_config(path)))


@pytest.mark.parametrize("old,new,named", [
    ("games_per_pairing: 4", "games_per_pairing: 2", "games_per_pairing (lowered from 4 to 2)"),
    ("seed: 5", "seed: 6", "seed"),
    ("openings: {random: 1}", "openings: {random: 2}", "openings"),
    ("variants: [three-mens-morris, six-mens-morris]", "variants: [three-mens-morris]",
     "variants (removed: six-mens-morris)"),
    ("name: grow", "name: grow\noutput: results/grow\nformat: {type: round-robin, rounds: 2}",
     None),  # allowed: rounds 1 -> 2
    ("bots: [", "isolation: {level: none, limits: {memory_mb: 64}}\nbots: [",
     "isolation.limits"),
])
def test_changes_that_alter_games_are_refused(workdir: Path, old: str, new: str,
                                              named: str | None) -> None:
    """Every refusal names what changed; the folder is left as it was.  (No game is played:
    the comparison is made before anything runs.)"""
    from arena.tournament import compare_configs

    text = GROW.replace("games_per_pairing: 2", "games_per_pairing: 4").replace(
        "variants: [three-mens-morris]", "variants: [three-mens-morris, six-mens-morris]")
    stored = load_config(write_config(workdir, text, "grow.yaml")).normalised()
    comparison = compare_configs(stored, load_config(write_config(workdir, text.replace(old, new),
                                                                  "grow.yaml")))
    if named is None:
        assert comparison.refused == () and comparison.added == ("format.rounds 1 -> 2",)
    else:
        assert named in comparison.refused and comparison.added == ()


def test_a_bot_whose_options_change_is_refused_naming_it(workdir: Path) -> None:
    from arena.tournament import compare_configs

    text = GROW.replace(f"{ROOT}/bots/greedy]", f"{{path: {ROOT}/bots/alphabeta, options: "
                                               f"{{Depth: 2}}}}]")
    stored = load_config(write_config(workdir, text, "grow.yaml")).normalised()
    changed = load_config(write_config(workdir, text.replace("Depth: 2", "Depth: 3"),
                                       "grow.yaml"))
    assert compare_configs(stored, changed).refused == ("bots (alphabeta: options)",)
    # reordering the bots is no change: they are matched by name, run in joining order
    swapped = load_config(write_config(workdir, text.replace(
        f"[{ROOT}/bots/random, {{path", f"[{{path").replace("}}]", f"}}}}, {ROOT}/bots/random]"),
        "grow.yaml"))
    assert swapped.players == ("alphabeta", "random")
    comparison = compare_configs(stored, swapped)
    assert comparison.refused == comparison.added == ()
    assert comparison.config.players == ("random", "alphabeta")
    assert comparison.config.digest() == load_config(
        write_config(workdir, text, "grow.yaml")).digest()


def test_a_folder_made_before_tournaments_grew_resumes_unchanged_only(workdir: Path) -> None:
    """A stored configuration without ``schedule`` (scheme 1): resumed with the old ids, and
    growing it is refused."""
    path = write_config(workdir, GROW, "grow.yaml")
    config = load_config(path)
    old = config.normalised()
    del old["schedule"]
    folder = workdir / "results" / "grow"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"digest": "x", "config": old}))
    result = run_tournament(config, console=io.StringIO())
    assert sorted(game_ids(folder)) == ["three-mens-morris/r1/p1/g0", "three-mens-morris/r1/p1/g1"]
    assert result.complete and "schedule" not in json.loads(
        (folder / "config.json").read_text())["config"]
    write_config(workdir, GROW.replace("games_per_pairing: 2", "games_per_pairing: 4"),
                 "grow.yaml")
    with pytest.raises(ResultsMismatch, match="made before tournaments could grow"):
        run_tournament(load_config(path), console=io.StringIO())


def test_a_folder_that_is_not_ours_is_refused(workdir: Path) -> None:
    (workdir / "results" / "small").mkdir(parents=True)
    (workdir / "results" / "small" / "notes.txt").write_text("mine")
    with pytest.raises(ResultsMismatch, match="not a Morris Arena results folder"):
        run_tournament(load_config(write_config(workdir)), console=io.StringIO())


def test_another_executor_can_be_swapped_in(workdir: Path) -> None:
    config = load_config(write_config(workdir))
    with ThreadPoolExecutor(2) as pool:
        result = run_tournament(config, executor=pool, console=io.StringIO(), max_games=2)
    assert result.played == 2 and len(game_ids(result.folder)) == 2


class ScriptedExecutor:
    """A game executor written against the interface alone (no runner code): plays games on
    a thread pool, except the games it is told to lose (cancelled: not played) or to fail
    (a referee error), or to break on (the executor itself broken)."""

    def __init__(self, lose: Iterable[str] = (), fail: Iterable[str] = (),
                 break_on: Iterable[str] = ()) -> None:
        self.pool = ThreadPoolExecutor(2)
        self.lose, self.fail, self.break_on = set(lose), set(fail), set(break_on)
        self.submitted: list[str] = []
        self.closed: list[bool] = []

    def submit(self, job: GameJob) -> Future[GameRecord]:
        game_id = job.slot.game_id
        self.submitted.append(game_id)
        future: Future[GameRecord] = Future()
        if game_id in self.lose:
            future.cancel()
            future.set_running_or_notify_cancel()
        elif game_id in self.fail:
            future.set_exception(RuntimeError("referee bug"))
        elif game_id in self.break_on:
            future.set_exception(OSError("the judge went away"))
        else:
            return self.pool.submit(play_job, job)
        return future

    def capacity(self) -> int:
        return 1

    def is_lost(self, error: BaseException) -> bool:
        return isinstance(error, CancelledError)

    def broken(self, error: BaseException) -> str | None:
        return f"the judge broke ({error})" if isinstance(error, OSError) else None

    def close(self, *, cancel: bool) -> None:
        self.closed.append(cancel)
        self.pool.shutdown(wait=True)


def test_a_game_executor_written_against_the_interface(workdir: Path) -> None:
    """Lost and failed games are counted, logged and left unplayed; a broken executor stops
    the run with WorkerFailure; games are submitted in schedule order, and an executor the
    runner was given is not closed."""
    from arena.executors import GameExecutor

    config = load_config(write_config(workdir))
    ids = schedule_ids(config)
    games: GameExecutor = ScriptedExecutor(lose={ids[1]}, fail={ids[2]})
    result = run_tournament(config, executor=games, console=io.StringIO(), max_games=4)
    assert (result.played, result.lost, result.failed) == (2, 1, 1)
    assert sorted(game_ids(result.folder)) == sorted([ids[0], ids[3]])
    assert isinstance(games, ScriptedExecutor) and games.submitted == ids[:4]
    assert games.closed == []
    log = (result.folder / "arena.log").read_text()
    assert f"game {ids[1]} was lost" in log and f"game {ids[2]} failed in the referee" in log
    games.close(cancel=False)
    broken = ScriptedExecutor(break_on={ids[1]})
    with pytest.raises(WorkerFailure, match=r"^the judge broke \(the judge went away\); "
                                            r"finished games are saved in"):
        run_tournament(config, executor=broken, console=io.StringIO())
    broken.close(cancel=True)
    final = run_tournament(config, console=io.StringIO())  # the missing games, once each
    assert final.complete and sorted(game_ids(final.folder)) == sorted(ids)


def test_every_executor_kind_of_the_configuration_is_registered() -> None:
    from arena.config import EXECUTOR_KINDS
    from arena.executors import EXECUTORS

    assert set(EXECUTORS) == set(EXECUTOR_KINDS)


# -- stopping: Ctrl-C and SIGKILL, in a subprocess ---------------------------------------

LONG = f"""\
name: long
bots: [{ROOT}/bots/random, {ROOT}/bots/greedy, {{path: {ROOT}/bots/random, name: random-2}}]
variants: [nine-mens-morris, six-mens-morris]
time: {{movetime: 500, margin: 500}}
workers: 2
report: false
"""


def _start(path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([ARENA, "run", str(path)], cwd=path.parent, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _wait_for_games(games: Path, proc: subprocess.Popen[bytes], n: int) -> list[int]:
    """Wait until ``games`` has ``n`` lines, then return the runner's descendants' pids."""
    import psutil

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if games.exists() and games.read_bytes().count(b"\n") >= n:
            return [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        time.sleep(0.05)
    raise AssertionError("no games were saved in 30 s")


def _parse_lines(games: Path) -> list[dict[str, Any]]:
    data = games.read_bytes()
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.splitlines()]


@pytest.mark.parametrize("how", ["sigint", "sigkill"])
def test_stop_and_resume_plays_every_game_exactly_once(workdir: Path, how: str) -> None:
    path = write_config(workdir, LONG, "long.yaml")
    games = workdir / "results" / "long" / "games.jsonl"
    proc = _start(path)
    try:
        descendants = _wait_for_games(games, proc, 2)
        assert descendants, "no workers or bots seen"
        if how == "sigint":  # what Ctrl-C does: SIGINT to the whole foreground group
            os.killpg(proc.pid, signal.SIGINT)
            out = proc.communicate(timeout=20)[0].decode()
            assert proc.returncode == 130, out
            assert "run the same command again to resume" in out
        else:  # only the runner: its workers must follow it, and stop their bots
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        assert_gone_within(descendants, 10.0)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    saved = [r["game_id"] for r in _parse_lines(games)]
    assert len(saved) == len(set(saved)) >= 2
    config = load_config(path)
    expected = schedule_ids(config)
    assert len(saved) < len(expected)
    result = CliRunner().invoke(cli, ["run", str(path)])
    assert result.exit_code == 0, result.output
    final = [r["game_id"] for r in _parse_lines(games)]
    assert final[:len(saved)] == saved
    assert sorted(final) == sorted(expected)  # every game, none twice


HANGING = f"""\
name: hanging
bots: [{ROOT}/bots/random, {ROOT}/tests/bots/sleepy]
variants: [nine-mens-morris]
time: {{movetime: 30000}}
workers: 2
report: false
"""


@pytest.mark.parametrize("how", ["sigint", "sigkill"])
def test_stopping_does_not_wait_for_the_games_in_flight(workdir: Path, how: str) -> None:
    """Both games hang (the sleepy bot stops answering on its third move, and would lose on
    time only after 30 s): the stop must kill them, not wait for them."""
    import psutil

    path = write_config(workdir, HANGING, "hanging.yaml")
    proc = _start(path)
    try:
        deadline = time.monotonic() + 20
        while True:  # two workers, each with its two bots
            kids = psutil.Process(proc.pid).children(recursive=True)
            if len(kids) >= 6 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert len(kids) >= 6, [k.cmdline() for k in kids]
        time.sleep(0.5)
        t0 = time.monotonic()
        if how == "sigint":
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(timeout=15)
            assert proc.returncode == 130
        else:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        assert_gone_within([k.pid for k in kids], 8.0)
        assert time.monotonic() - t0 < 10.0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    games = workdir / "results" / "hanging" / "games.jsonl"
    assert not games.exists() or games.read_bytes() == b""


# -- pure pieces: standings and progress ------------------------------------------------


def _record(game_id: str, white: str, black: str, result: str, forfeit: str | None = None,
            variant: str = "nine-mens-morris") -> GameRecord:
    return GameRecord(game_id=game_id, variant=variant, variant_params={},
                      white=PlayerInfo(white), black=PlayerInfo(black), result=result,
                      termination="timeout" if forfeit else "blocked", forfeit=forfeit,
                      moves=[MoveInfo("a1")])


def test_standings_count_points_and_wdl_per_variant() -> None:
    records = [_record("g1", "a", "b", "1-0"), _record("g2", "b", "a", "1/2-1/2"),
               _record("g3", "b", "c", "1-0", forfeit="black"),
               _record("g4", "a", "c", "0-1", variant="lasker-morris")]
    tables = compute_standings(records, players=("a", "b", "c"))
    main = {s.name: s for s in tables["nine-mens-morris"]}
    assert (main["a"].points, main["a"].wins, main["a"].draws, main["a"].losses) == (1.5, 1, 1, 0)
    assert (main["b"].points, main["b"].wins, main["b"].draws, main["b"].losses) == (1.5, 1, 1, 1)
    assert (main["c"].points, main["c"].games, main["c"].forfeits) == (0, 1, 1)
    assert [s.name for s in tables["nine-mens-morris"]] == ["a", "b", "c"]
    assert [s.name for s in tables["lasker-morris"]][0] == "c"
    assert {s.name for s in tables["lasker-morris"]} == {"a", "b", "c"}
    text = format_standings(tables)
    assert "lasker-morris" in text and "1-1-0" in text


def test_progress_live_line_and_plain_lines() -> None:
    records = [_record(f"g{i}", "a", "b", "1-0") for i in range(3)]
    live = io.StringIO()
    p = Progress(total=4, done=1, stream=live, live=True)
    for r in records:
        p.add(r)
    p.close()
    text = live.getvalue()
    assert text.count("\r\x1b[K") == 3 and text.endswith("\n")
    assert "[4/4]" in text and "leader a (3 pts)" in text and "ETA" in text
    plain = io.StringIO()
    q = Progress(total=3, done=0, stream=plain, live=False)
    for r in records:
        q.add(r)
    lines = plain.getvalue().splitlines()
    assert len(lines) == 3 and "\r" not in plain.getvalue()
    assert lines[0].startswith("[1/3]") and lines[2].endswith("g2 a - b 1-0 (blocked)")
    assert Counter(line.split()[0] for line in lines) == {"[1/3]": 1, "[2/3]": 1, "[3/3]": 1}


def test_run_logging_takes_the_workers_lines_and_gives_each_handler_its_level(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """A forked worker's lines reach the run's log file and console through the runner, each
    handler keeps its level, and every line logged before ``close`` is written when it
    returns (the receiver is woken, not left to its poll)."""
    import logging
    import multiprocessing

    console = io.StringIO()
    handler = ConsoleHandler(console, Progress(1, 0, io.StringIO(), live=False))
    logs = RunLogging(tmp_path / "arena.log", handler, logging.WARNING)
    log = logging.getLogger("arena.test")
    try:
        worker = multiprocessing.get_context("fork").Process(
            target=lambda: (log.warning("from the worker"), log.info("worker detail")))
        worker.start()
        worker.join(10)
        assert worker.exitcode == 0
        for i in range(200):
            log.info("runner detail %d", i)
        log.warning("runner warning")
    finally:
        logs.close()
    text = (tmp_path / "arena.log").read_text()
    assert "from the worker" in text and "worker detail" in text
    assert text.count("runner detail") == 200 and text.rstrip().endswith("runner warning")
    assert "ForkProcess" in text or "Process-" in text  # the worker's own name
    shown = console.getvalue()
    assert "from the worker" in shown and "runner warning" in shown
    assert "detail" not in shown  # INFO is below the console's level
    assert logging.getLogger("arena").handlers == []  # restored
    assert "Traceback" not in capfd.readouterr().err  # the receiver ended cleanly


def test_isolation_and_cpu_clock_from_the_tournament_file(workdir: Path) -> None:
    """`isolation:` and `time.charge: cpu` reach every game: the records say so."""
    text = (SMALL.replace("time: {movetime: 500, margin: 500}",
                          "time: {movetime: 500, margin: 500, charge: cpu, wall_factor: 4}")
            .replace("variants: [three-mens-morris, six-mens-morris]", "variants: [three-mens-morris]")
            .replace("games_per_pairing: 4", "games_per_pairing: 2")
            + "isolation: basic\n")
    result = CliRunner().invoke(cli, ["run", str(write_config(workdir, text))])
    assert result.exit_code == 0, result.output
    records = read_records(workdir / "results" / "small" / "games.jsonl")
    assert len(records) == 2
    for r in records:
        assert r.isolation == "basic"  # not the 'none' the test environment sets as default
        assert r.time_control["clock"] == "cpu" and r.time_control["wall_factor"] == 4.0
        assert all(m.cpu_ms is not None for m in r.moves if not m.opening)
    stored = json.loads((workdir / "results" / "small" / "config.json").read_text())
    assert stored["config"]["isolation"]["level"] == "basic"


@pytest.mark.parametrize("snippet, path", [
    ("isolation: sandboxed\n", "isolation"),
    ("isolation: {level: basic, limits: {memory_mb: -1}}\n", "isolation.limits.memory_mb"),
    ("time: {movetime: 100, charge: cpus}\n", "time.charge"),
    ("time: {movetime: 100, wall_factor: 0.5}\n", "time.wall_factor"),
])
def test_isolation_and_charge_errors_name_the_key(workdir: Path, snippet: str, path: str) -> None:
    text = SMALL.replace("time: {movetime: 500, margin: 500}\n", "") + snippet
    result = CliRunner().invoke(cli, ["run", str(write_config(workdir, text))])
    assert result.exit_code == 2
    assert f"{path}:" in result.output and not (workdir / "results").exists()


def test_a_bad_option_ends_the_run_before_any_game_and_changes_no_results(
        workdir: Path) -> None:
    path = write_config(workdir, GROW)
    folder = run_tournament(load_config(path), console=io.StringIO()).folder
    before = {name: (folder / name).read_bytes() for name in ("games.jsonl", "config.json")}
    # a third bot, with an option out of its declared range: the tournament would grow
    write_config(workdir, GROW.replace(
        f"{ROOT}/bots/greedy]",
        f"{ROOT}/bots/greedy, {{path: {ROOT}/bots/alphabeta, options: {{Depth: 999}}}}]"))
    result = CliRunner().invoke(cli, ["run", str(path)])
    assert result.exit_code == 2
    assert "Depth=999" in result.output and "spin" in result.output
    assert {name: (folder / name).read_bytes() for name in before} == before  # nothing changed


def test_a_bot_whose_build_fails_forfeits_its_games_with_the_reason(workdir: Path) -> None:
    broken = workdir / "broken"
    broken.mkdir(mode=0o755)
    (broken / "bot.yaml").write_text("command: ./bot\nbuild: \"echo 'bot.c:1: error: oops' >&2; "
                                     "exit 1\"\n")
    path = write_config(workdir, GROW.replace(f"{ROOT}/bots/greedy]", f"{broken}]"))
    result = run_tournament(load_config(path), console=io.StringIO())
    records = read_records(result.folder / "games.jsonl")
    assert len(records) == 2
    for record in records:
        assert record.termination == "start-failure"
        assert "build failed (exit 1)" in record.detail and "bot.c:1: error: oops" in record.detail
    assert "broken cannot start (build failed" in (result.folder / "arena.log").read_text()


KEPT_BOTS = f"""\
name: kept
bots: [{ROOT}/tests/bots/counter, {ROOT}/bots/random]
variants: [three-mens-morris]
games_per_pairing: 4
time: {{movetime: 200, margin: 300}}
workers: 1
seed: 2
report: false
"""


def live_bots(before: set[int]) -> list[str]:
    """The command lines of this process's live descendants running a bot that were not in
    ``before`` (pids): other tests' processes and reaped-later zombies do not count."""
    import psutil

    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.pid in before or child.status() == psutil.STATUS_ZOMBIE:
                continue
            command = " ".join(child.cmdline())
        except psutil.Error:
            continue
        if "bot.py" in command:
            found.append(command)
    return found


def _counts(record: GameRecord, name: str) -> list[int]:
    """The ``game N`` lines of ``name``'s stderr in ``record`` (its process's game count)."""
    color = "white" if record.white.name == name else "black"
    return [int(line.split()[1]) for line in record.stderr.get(color, "").splitlines()
            if line.startswith("game ")]


@pytest.mark.parametrize("restart", ["per-game", "per-pairing"])
def test_restart_modes_fresh_or_kept_processes(workdir: Path, restart: str) -> None:
    import psutil

    before = {p.pid for p in psutil.Process().children(recursive=True)}
    text = KEPT_BOTS + f"restart: {restart}\n"
    result = run_tournament(load_config(write_config(workdir, text)), console=io.StringIO())
    records = read_records(result.folder / "games.jsonl")
    assert len(records) == 4 and all(r.forfeit is None for r in records)
    assert {r.restart for r in records} == {restart}
    counts = [_counts(r, "counter")[-1] for r in records]  # the counter's own game count
    befores = [r.white.games_before for r in records]
    if restart == "per-game":
        assert counts == [1, 1, 1, 1] and befores == [0, 0, 0, 0]
    else:  # one process, both colours, state carried from game to game
        assert counts == [1, 2, 3, 4] and befores == [0, 1, 2, 3]
        assert [r.black.games_before for r in records] == [0, 1, 2, 3]
    assert not live_bots(before)  # no kept bot outlives the run


def test_a_kept_bot_that_crashes_is_restarted_for_the_next_game(workdir: Path) -> None:
    text = (KEPT_BOTS.replace(f"{ROOT}/tests/bots/counter,",
                              f"{{path: {ROOT}/tests/bots/counter, options: {{CrashAtGame: 2}}}},")
            + "restart: per-pairing\n")
    path = write_config(workdir, text)
    result = run_tournament(load_config(path), console=io.StringIO())
    records = read_records(result.folder / "games.jsonl")
    assert records[0].forfeit is None and records[1].termination == "crash"
    assert records[1].forfeit is not None and "exited with code 3" in records[1].detail
    # game 3: a fresh process (its count starts again), then it crashes again in its 2nd game
    assert _counts(records[2], "counter")[-1] == 1
    assert records[2].forfeit is None and records[3].termination == "crash"
    counter = [r.white if r.white.name == "counter" else r.black for r in records]
    assert [p.games_before for p in counter] == [0, 1, 0, 1]
    # the random bot never failed: one process played all four games
    other = [r.black if r.white.name == "counter" else r.white for r in records]
    assert [p.games_before for p in other] == [0, 1, 2, 3]


def test_csv_tables_keep_bot_names_from_running_as_spreadsheet_formulas(tmp_path: Path) -> None:
    from arena.records import write_games_csv
    from arena.standings import write_standings_csv
    from tests.synth_records import make_record

    evil, plain = "=HYPERLINK(\"http://x\")", "-plain"
    records = [make_record(evil, "good", 1.0), make_record("good", plain, 0.5)]
    write_games_csv(tmp_path / "games.csv", records)
    write_standings_csv(tmp_path / "standings.csv",
                        compute_standings(records, (evil, "good", plain)))
    with open(tmp_path / "games.csv", newline="") as f:
        games = list(csv.DictReader(f))
    assert [g["white"] for g in games] == ["'" + evil, "good"]
    assert [g["black"] for g in games] == ["good", "'" + plain]
    assert games[0]["result"] == "1-0" and games[1]["result"] == "1/2-1/2"
    with open(tmp_path / "standings.csv", newline="") as f:
        names = {row["bot"] for row in csv.DictReader(f)}
    assert names == {"'" + evil, "good", "'" + plain}
