"""Trust off the happy path (issue 10, points 3 and 6), with real ``arena`` processes:

* a results folder (``arena run``) or an ``arena sprt --out`` folder belongs to one runner at
  a time: a second one exits 2 at once, naming the holder's pid, and writes nothing; a runner
  killed with SIGKILL leaves no lock behind;
* ``arena sprt --out`` run again resumes the interrupted run: no game id twice;
* a complete but unreadable line in ``games.jsonl`` is moved aside, and its game played again.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

import psutil
import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.config import load_config
from arena.records import read_records
from arena.tournament import run_tournament
from tests.conftest import assert_gone_within


ROOT = Path(__file__).resolve().parent.parent
ARENA = str(Path(sys.executable).with_name("arena"))

#: a tournament that holds its folder for 30 s: the sleepy bot stops answering on its third
#: move, and loses on time only after the 30 s move time
BUSY = f"""\
name: busy
bots: [{ROOT}/bots/random, {ROOT}/tests/bots/sleepy]
variants: [nine-mens-morris]
games_per_pairing: 2
time: {{movetime: 30000}}
workers: 1
report: false
"""

#: the same name (so the same folder), quick games
QUICK = f"""\
name: busy
bots: [{ROOT}/bots/random, {ROOT}/bots/greedy]
variants: [three-mens-morris]
games_per_pairing: 2
time: {{movetime: 500, margin: 500}}
workers: 1
report: false
"""

SMALL = f"""\
name: small
bots: [{ROOT}/bots/random, {ROOT}/bots/greedy]
variants: [three-mens-morris]
games_per_pairing: 4
openings: {{random: 1}}
time: {{movetime: 500, margin: 500}}
workers: 1
seed: 3
report: false
"""


@pytest.fixture(autouse=True)
def _unsandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test bots (``tests/bots``: one shared script outside the bot folders) cannot run
    sandboxed; the environment reaches the subprocesses too."""
    monkeypatch.setenv("MORRIS_ARENA_ISOLATION", "none")


def write_config(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _start(args: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([ARENA, *args], cwd=cwd, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _arena(args: list[str], cwd: Path, timeout: float = 20.0) -> tuple[int, str, float]:
    """Run ``arena ARGS`` to its end: exit status, output, seconds taken (killed, and the
    test failed, past ``timeout``)."""
    t0 = time.monotonic()
    proc = _start(args, cwd)
    try:
        out = proc.communicate(timeout=timeout)[0].decode()
    except subprocess.TimeoutExpired:
        _kill_tree(proc)
        raise AssertionError(f"arena {' '.join(args)} still running after {timeout} s")
    return proc.returncode, out, time.monotonic() - t0


def _wait_for_game(proc: subprocess.Popen[bytes], processes: int, written: Path) -> None:
    """Wait until ``proc`` has started its game: ``written`` (a file of its folder, made
    after the bots' preflight, which starts them too) exists, and ``processes``
    descendants (workers and bots) run."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if written.exists() and len(_descendants(proc)) >= processes:
            return
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        time.sleep(0.05)
    raise AssertionError(f"pid {proc.pid} did not start a game in 20 s")


def _descendants(proc: subprocess.Popen[bytes]) -> list[int]:
    try:
        return [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
    except psutil.Error:
        return []


def _kill_tree(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL ``proc`` and everything it started (ours: started by this test)."""
    pids = _descendants(proc)
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _snapshot(folder: Path) -> dict[str, Optional[bytes]]:
    """The folder's files and their contents (the log, which the holder may write, by name
    only)."""
    return {p.name: None if p.name == "arena.log" else p.read_bytes()
            for p in sorted(folder.iterdir()) if p.is_file()}


# -- one runner per results folder ---------------------------------------------------------


def test_a_second_runner_is_refused_at_once_and_a_killed_runner_frees_the_folder(
        workdir: Path) -> None:
    busy = write_config(workdir, "busy.yaml", BUSY)
    folder = workdir / "results" / "busy"
    first = _start(["run", str(busy)], workdir)
    try:
        _wait_for_game(first, 3, folder / "config.json")  # a worker and its two bots
        before = _snapshot(folder)
        assert "config.json" in before
        # the local pool and the Dask executor go through the same runner; --restart must
        # not clear a folder another runner owns
        for args in (["run", str(busy)], ["run", "--fresh", "--executor", "dask", str(busy)]):
            code, out, took = _arena(args, workdir)
            assert code == 2, out
            assert f"Error: results/busy is in use by pid {first.pid}" in out.splitlines(), out
            assert took < 10, f"refused after {took:.1f} s"
            assert _snapshot(folder) == before
        assert first.poll() is None
        workers = _descendants(first)
        os.kill(first.pid, signal.SIGKILL)  # the runner only, as the OOM killer would
        first.wait(timeout=10)
    finally:
        _kill_tree(first)
    # at once, while its workers may still be stopping their games: its lock died with it
    quick = write_config(workdir, "quick.yaml", QUICK)
    result = CliRunner().invoke(cli, ["run", "--fresh", str(quick)])
    assert result.exit_code == 0, result.output
    assert "busy: 2/2 games (2 played now)" in result.output
    assert len(read_records(folder / "games.jsonl")) == 2
    assert_gone_within(workers, 15.0)


# -- unreadable lines in games.jsonl -----------------------------------------------------------


def test_unreadable_lines_are_moved_aside_and_their_games_played_again(workdir: Path) -> None:
    config = load_config(write_config(workdir, "small.yaml", SMALL))
    first = run_tournament(config, console=io.StringIO(), max_games=3)
    folder = first.folder
    games = folder / "games.jsonl"
    lines = games.read_bytes().splitlines(keepends=True)
    assert len(lines) == 3
    damaged_id = json.loads(lines[1])["game_id"]
    damaged = lines[1][:80] + b"\n"  # complete (it has its newline), but not a record
    other = json.loads(lines[0])
    other["game_id"] = "another/r1/p1/g0"  # a record, but not of this schedule: it stays
    foreign = (json.dumps(other) + "\n").encode()
    games.write_bytes(lines[0] + damaged + lines[2] + foreign)
    subprocess.run(["sh", "-c", "echo '# x' >> games.jsonl"], cwd=folder, check=True)

    console = io.StringIO()
    second = run_tournament(config, console=console)
    assert second.complete and second.played == 2, console.getvalue()
    warnings = [line for line in console.getvalue().splitlines() if "unreadable" in line]
    assert len(warnings) == 1, console.getvalue()
    assert (f"{games}: moved 2 unreadable lines to {folder / 'games.rejected.jsonl'}"
            in warnings[0])
    assert (folder / "games.rejected.jsonl").read_bytes() == damaged + b"# x\n"
    data = games.read_bytes()
    assert data.startswith(lines[0] + lines[2] + foreign)  # what parses is kept as it was
    ids = [r.game_id for r in read_records(games)]
    assert len(ids) == len(set(ids))
    assert sorted(ids) == sorted([s.game_id for s in config.schedule()] + ["another/r1/p1/g0"])
    assert damaged_id in ids[3:]  # played again

    result = CliRunner().invoke(cli, ["run", str(workdir / "small.yaml")])
    assert result.exit_code == 0, result.output
    assert "small: 4/4 games (0 played now)" in result.output
    assert games.read_bytes() == data
    assert (folder / "games.rejected.jsonl").read_bytes() == damaged + b"# x\n"


def test_set_aside_keeps_every_record_and_moves_the_rest(tmp_path: Path) -> None:
    from arena.records import set_aside_unreadable

    games, side = tmp_path / "games.jsonl", tmp_path / "games.rejected.jsonl"
    record = json.dumps({"game_id": "g1", "variant": "v", "variant_params": {},
                         "white": {"name": "a"}, "black": {"name": "b"},
                         "result": "1-0", "termination": "blocked"}).encode()
    games.write_bytes(b"[]\n" + record + b'\n{"game_id": "g2"}\n\n'
                      + record.replace(b"g1", b"g3") + b'\n{"game_id": "g4", "vari')
    assert set_aside_unreadable(games, side) == 3
    assert [r.game_id for r in read_records(games)] == ["g1", "g3"]
    assert side.read_bytes() == b'[]\n{"game_id": "g2"}\n{"game_id": "g4", "vari\n'
    # a record without its newline is kept and given one; a clean file is left alone
    with open(games, "ab") as f:
        f.write(record.replace(b"g1", b"g5"))
    assert set_aside_unreadable(games, side) == 0
    assert [r.game_id for r in read_records(games)] == ["g1", "g3", "g5"]
    assert games.read_bytes().endswith(b"}\n")
    inode = games.stat().st_ino
    assert set_aside_unreadable(games, side) == 0 and games.stat().st_ino == inode


# -- arena sprt --out ------------------------------------------------------------------------


def _sprt_args(out: Path, **options: str) -> list[str]:
    """Two random bots: no verdict is possible in a few pairs (the bounds are +-6.9)."""
    settings = {"--variant": "six-mens-morris", "--movetime": "200", "--elo0": "0",
                "--elo1": "1", "--alpha": "0.001", "--beta": "0.001", "--opening-turns": "2",
                "--max-pairs": "40", "--seed": "7", **options}
    args = ["sprt", f"{ROOT}/bots/random", f"{ROOT}/bots/random", "--out", str(out)]
    for key, value in settings.items():
        if value:
            args += [key, value]
    return args


def test_sprt_resumes_an_interrupted_run_without_playing_a_game_twice(workdir: Path) -> None:
    out = workdir / "sprt"
    games = out / "games.jsonl"
    proc = _start(_sprt_args(out), workdir)
    try:
        deadline = time.monotonic() + 30
        while not (games.exists() and games.read_bytes().count(b"\n") >= 3):
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "no games saved in 30 s"
            time.sleep(0.01)
    finally:
        _kill_tree(proc)  # interrupted as hard as can be
    saved = games.read_bytes()
    n = saved.count(b"\n")
    pairs = n // 2 + 1  # at least one game is left to play
    # no --seed: the stored one is taken
    res = CliRunner().invoke(cli, _sprt_args(out, **{"--seed": "", "--max-pairs": str(pairs)}))
    assert res.exit_code == 1, res.output  # no decision, as planned
    assert "seed 7" in res.output.splitlines()[0]
    assert f"resuming: {n} games already in {games}" in res.output
    pair_lines = [line for line in res.output.splitlines() if line.startswith("pair")]
    assert [int(line.split()[1].rstrip(":")) for line in pair_lines] == list(range(1, pairs + 1))
    ids = [r.game_id for r in read_records(games)]
    assert len(ids) == len(set(ids)), ids
    assert sorted(ids) == sorted(f"sprt-7-{k}{g}" for k in range(1, pairs + 1) for g in "ab")
    assert games.read_bytes().startswith(saved)

    # other settings are refused (one line, exit 2, nothing touched); --restart starts over
    res = CliRunner().invoke(cli, _sprt_args(out, **{"--elo1": "2"}))
    assert res.exit_code == 2 and "changed: elo1" in res.output, res.output
    assert len(res.output.strip().splitlines()) == 1
    assert len(read_records(games)) == 2 * pairs
    res = CliRunner().invoke(cli, _sprt_args(out, **{"--elo1": "2", "--max-pairs": "1"})
                             + ["--fresh"])
    assert res.exit_code == 1, res.output
    assert sorted(r.game_id for r in read_records(games)) == ["sprt-7-1a", "sprt-7-1b"]


def test_sprt_out_belongs_to_one_run_at_a_time(workdir: Path) -> None:
    out = workdir / "sprt"
    holder = _start(["sprt", f"{ROOT}/tests/bots/sleepy", f"{ROOT}/bots/random",
                     "--movetime", "30000", "--seed", "1", "--out", str(out)], workdir)
    try:
        _wait_for_game(holder, 2, out / "sprt.json")  # its two bots
        before = _snapshot(out)
        code, output, took = _arena(_sprt_args(out, **{"--max-pairs": "1"}), workdir)
        assert code == 2, output
        assert output.splitlines() == [f"Error: {out} is in use by pid {holder.pid}"]
        assert took < 10 and _snapshot(out) == before
        assert holder.poll() is None
    finally:
        _kill_tree(holder)
