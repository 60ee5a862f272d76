"""The dask executor: tournaments on a real Dask LocalCluster (two single-threaded worker
processes, real sandboxed bots), the same games as the local pool, shipped bots, a worker
killed mid-game, and the settings and errors around it.

The cluster tests need the ``cluster`` extra (``pip install '.[cluster]'``) and are skipped
without it; the settings and the missing-extra error are tested either way.
"""

from __future__ import annotations

import gc
import importlib.util
import io
import os
import shutil
import signal
import socket
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.bot import is_gone, load_bot
from arena.cli import cli
from arena.cluster import ClusterUnavailable, is_lost_game, pack_bots, relocate, unpack_bots
from arena.config import load_config, parse_config, with_executor
from arena.errors import ConfigError
from arena.records import read_records
from arena.tournament import ResultsMismatch, prepare_results, run_tournament
from tests import test_tournament as tournament_tests
from tests.test_tournament import schedule_ids

ROOT = Path(__file__).resolve().parent.parent
HAVE_DASK = importlib.util.find_spec("distributed") is not None
needs_dask = pytest.mark.skipif(not HAVE_DASK, reason="the cluster extra is not installed "
                                "(pip install '.[cluster]' installs distributed)")

SMALL = f"""\
name: small
bots: [{ROOT}/bots/random, {{path: {ROOT}/bots/random, name: random-2}}]
variants: [three-mens-morris]
games_per_pairing: 10
openings: {{random: 1}}
time: {{movetime: 200, margin: 500}}
workers: 2
seed: 5
report: false
"""


def write_config(folder: Path, text: str = SMALL, name: str = "small.yaml") -> Path:
    return tournament_tests.write_config(folder, text, name)


def games(folder: Path) -> dict[str, Any]:
    """Each game's id -> who played which colour, the opening, the seed, the moves, the
    result and the bot folders: everything that must not depend on where it was played."""
    out = {}
    for r in read_records(folder / "games.jsonl"):
        assert r.game_id not in out, f"{r.game_id} twice"
        out[r.game_id] = (r.white.name, r.black.name, r.opening, r.seed,
                          [m.move for m in r.moves], r.result, r.white.path, r.black.path)
    return out


# -- settings --------------------------------------------------------------------------


BASE = {"name": "x", "bots": [f"{ROOT}/bots/random", {"path": f"{ROOT}/bots/random",
                                                      "name": "random-2"}]}


@pytest.mark.parametrize("value, where", [
    ("cluster", "executor: expected one of local, dask, got 'cluster'"),
    ({"type": "dask", "scheduler": "http://h:1"}, "executor.scheduler: expected 'local' or a "
                                                  "scheduler address"),
    ({"type": "dask", "scheduler": "h:70000"}, "executor.scheduler: expected"),
    ({"type": "local", "scheduler": "tcp://h:8786"}, "executor.scheduler: only the dask "
                                                     "executor uses it"),
    ({"type": "local", "ship_bots": True}, "executor.ship_bots: only the dask executor"),
    ({"type": "dask", "ship_bots": "yes"}, "executor.ship_bots: expected true or false"),
    ({"scheduler": "local"}, "executor.type: missing"),
    ({"type": "dask", "workers": 3}, "executor.workers: unknown key"),
    (3, "executor: expected a mapping"),
])
def test_bad_executor_settings_name_their_key(value: Any, where: str) -> None:
    with pytest.raises(ConfigError, match="^config: " + where.replace("(", r"\(")):
        parse_config({**BASE, "executor": value})


def test_executor_settings_and_command_line_overrides() -> None:
    local = parse_config(BASE).executor
    assert (local.kind, local.ship_bots) == ("local", False)
    remote = parse_config({**BASE, "executor": {"type": "dask", "scheduler": "10.1.2.3:8786",
                                                "ship_bots": True}}).executor
    assert (remote.kind, remote.scheduler, remote.ship_bots) == ("dask", "tcp://10.1.2.3:8786",
                                                                 True)
    config = parse_config(BASE)
    assert with_executor(config, scheduler="tls://[::1]:9000").executor.scheduler == \
        "tls://[::1]:9000"  # a scheduler alone means dask
    assert with_executor(config, ship_bots=True).executor.kind == "dask"
    shipped = parse_config({**BASE, "executor": {"type": "dask", "ship_bots": True}})
    assert with_executor(shipped, scheduler="h:1").executor.ship_bots is True  # kept
    assert with_executor(shipped, kind="local").executor.kind == "local"
    with pytest.raises(ConfigError, match=r"^--scheduler: only the dask executor uses it"):
        with_executor(config, kind="local", scheduler="h:1")
    with pytest.raises(ConfigError, match=r"^--scheduler: expected 'local' or"):
        with_executor(config, scheduler="nowhere")


def test_the_executor_is_not_a_change_of_configuration(workdir: Path) -> None:
    config = load_config(write_config(workdir))
    elsewhere = with_executor(config, scheduler="tcp://10.0.0.1:8786", ship_bots=True)
    assert config.digest() == elsewhere.digest()
    prepare_results(config)
    assert prepare_results(elsewhere) == prepare_results(config)  # no ResultsMismatch
    with pytest.raises(ResultsMismatch):  # while a real change is refused
        prepare_results(load_config(write_config(workdir, SMALL.replace("seed: 5", "seed: 6"))))


def test_missing_extra_is_a_one_line_error(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` fails
    path = write_config(workdir)
    result = CliRunner().invoke(cli, ["run", str(path), "--executor", "dask"])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "pip install 'morris-arena[cluster]'" in lines[0], lines
    assert "distributed" in lines[0]
    assert not (workdir / "results").exists()  # checked before anything is written
    with pytest.raises(ClusterUnavailable):
        run_tournament(with_executor(load_config(path), kind="dask"), console=io.StringIO())


def test_bad_scheduler_option_is_a_one_line_error(workdir: Path) -> None:
    result = CliRunner().invoke(cli, ["run", str(write_config(workdir)), "--scheduler", "x"])
    assert result.exit_code == 2
    assert result.output.startswith("Error: --scheduler: expected 'local' or a scheduler")


def test_the_runner_imports_neither_the_cluster_nor_dask() -> None:
    """The dask executor is found through the registry (arena.executors) and imported only
    for a Dask run, so a local run never loads it, nor distributed."""
    import subprocess

    code = ("import sys, arena.tournament; "
            "print(sorted(m for m in ('arena.cluster', 'distributed') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


# -- shipping bots: packing and relocating ------------------------------------------------


def test_packed_bots_unpack_with_their_modes_and_relocate(tmp_path: Path) -> None:
    folder = tmp_path / "src" / "mybot"
    (folder / "lib").mkdir(parents=True)
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref")
    (folder / "lib" / "data.txt").write_text("weights")
    run = folder / "run.sh"
    run.write_text("#!/bin/sh\nexec python3 bot.py\n")
    run.chmod(0o755)
    (folder / "bot.yaml").write_text('command: ["{dir}/run.sh", "--data", "{dir}/lib"]\n'
                                     'cwd: lib\n')
    twin = tmp_path / "src" / "mybot-2"  # a sibling whose name starts like the folder's
    shutil.copytree(folder, twin)
    shipped = pack_bots([str(folder), str(twin), str(folder)])
    assert len(shipped.folders) == 2
    worker_dir = tmp_path / "worker"
    worker_dir.mkdir()
    (worker_dir / shipped.archive).write_bytes(shipped.data)
    root = unpack_bots(shipped, worker_dir)
    assert unpack_bots(shipped, worker_dir) == root  # once per worker
    copy = root / shipped.folders[str(folder)]
    assert copy.name == "mybot" and (copy / "lib" / "data.txt").read_text() == "weights"
    assert stat.S_IMODE((copy / "run.sh").stat().st_mode) & 0o111 == 0o111
    assert not (copy / ".git").exists()
    spec = load_bot(folder)
    moved = relocate(spec, str(copy), python="/elsewhere/bin/python3")
    assert moved.path == str(copy) and moved.cwd == str(copy / "lib")
    assert moved.command == (f"{copy}/run.sh", "--data", f"{copy}/lib")
    twin_spec = relocate(load_bot(twin), str(copy))  # only whole path components move
    assert twin_spec.command[0] == f"{copy}/run.sh"
    python_bot = load_bot(ROOT / "bots" / "random")
    assert relocate(python_bot, python="/client/venv/bin/python").command == python_bot.command
    client_python = relocate(python_bot, python=sys.executable)
    assert client_python.command[0] == sys.executable
    with pytest.raises(Exception, match="did not reach this worker"):
        unpack_bots(pack_bots([str(ROOT / "bots" / "greedy")]), worker_dir, wait_s=0.1)


def test_lost_games_are_told_apart_from_failed_ones() -> None:
    from concurrent.futures import CancelledError

    assert is_lost_game(CancelledError()) and not is_lost_game(RuntimeError("referee bug"))
    if HAVE_DASK:
        from distributed import KilledWorker

        assert is_lost_game(KilledWorker("game x", None, 3))  # type: ignore[arg-type]


# -- on a real LocalCluster ------------------------------------------------------------


@needs_dask
def test_a_local_cluster_plays_the_same_games_as_the_local_pool(workdir: Path) -> None:
    """Also: the executor is not a change of configuration, so a local run that stopped
    after three games is finished on the cluster."""
    path = write_config(workdir)
    runner = CliRunner()
    local = runner.invoke(cli, ["run", str(path), "--output", "local"])
    assert local.exit_code == 0, local.output
    partial = run_tournament(with_executor(load_config(path), kind="local"),
                             console=io.StringIO(), max_games=3)
    assert partial.folder == Path("results/small") and partial.played == 3
    finished = runner.invoke(cli, ["run", str(path), "--executor", "dask", "--scheduler",
                                   "local"])
    assert finished.exit_code == 0, finished.output
    assert "small: 10/10 games (7 played now)" in finished.output
    dask = runner.invoke(cli, ["run", str(path), "--executor", "dask", "--output", "dask"])
    assert dask.exit_code == 0, dask.output
    expected = games(workdir / "local")
    assert len(expected) == 10 == len(schedule_ids(load_config(path)))
    assert games(workdir / "dask") == expected
    assert games(workdir / "results" / "small") == expected
    records = read_records(workdir / "dask" / "games.jsonl")
    workers = {r.worker for r in records}
    assert all(w.startswith("tcp://127.0.0.1:") for w in workers) and 1 <= len(workers) <= 2
    assert {r.host for r in records} == {socket.gethostname()}
    assert all(r.worker == "" for r in read_records(workdir / "local" / "games.jsonl"))


@needs_dask
def test_shipped_bots_are_played_from_the_workers_copy(workdir: Path) -> None:
    """The bot folder is deleted once shipped: the games can only use the workers' copy.
    Also: the client holds no future once the games are saved."""
    from arena.cluster import cluster_executor

    shutil.copytree(ROOT / "bots" / "random", workdir / "mine")
    text = (SMALL.replace(f"{ROOT}/bots/random", "mine").replace("games_per_pairing: 10",
                                                                 "games_per_pairing: 4")
            + "executor: {type: dask, ship_bots: true}\n")
    config = load_config(write_config(workdir, text))
    with cluster_executor(config) as pool:
        shutil.rmtree(workdir / "mine")
        result = run_tournament(config, executor=pool, console=io.StringIO())
        gc.collect()
        assert not pool.client.futures  # every game's future released once written
    assert result.complete and (result.failed, result.lost) == (0, 0)
    for record in read_records(result.folder / "games.jsonl"):
        assert record.forfeit is None, record.detail
        assert record.white.path == str(workdir / "mine")  # as the client knows it
        assert record.worker.startswith("tcp://127.0.0.1:")


KILL = f"""\
name: kill
bots: [{ROOT}/bots/random, {{path: {ROOT}/bots/random, name: random-2}}]
variants: [six-mens-morris]
games_per_pairing: 10
time: {{movetime: 200, margin: 500}}
workers: 2
seed: 9
report: false
executor: dask
"""


def _kill_a_worker_mid_game(pool: Any, games_file: Path, after: int) -> dict[str, Any]:
    """Once ``after`` games are saved, SIGKILL a worker process (started by the cluster)
    that has bots running, i.e. one in the middle of a game.  Returns what was killed: the
    worker and its descendants (the bots, and the sandbox's watchdog, which a worker keeps
    between games too, so it does not count as a game in progress)."""
    import psutil

    def command(p: psutil.Process) -> str:
        try:
            return " ".join(p.cmdline())
        except psutil.Error:
            return ""

    pids: dict[str, int] = pool.client.run(os.getpid)
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        if games_file.exists() and games_file.read_bytes().count(b"\n") >= after:
            for address, pid in pids.items():
                try:
                    descendants = psutil.Process(pid).children(recursive=True)
                except psutil.Error:
                    continue
                if any("arena.sandbox --watch" not in command(p) for p in descendants):
                    os.kill(pid, signal.SIGKILL)
                    return {"address": address, "pid": pid,
                            "bots": [p.pid for p in descendants]}
        time.sleep(0.005)
    return {}


@needs_dask
@pytest.mark.parametrize("allowed_failures", [3, 0])
def test_a_worker_killed_mid_game_costs_only_that_game(workdir: Path,
                                                       allowed_failures: int) -> None:
    """With Dask's default (3 allowed failures) the lost game is given to another worker in
    the same run by Dask; with none allowed it ends as KilledWorker, and the runner plays
    it again itself (watched move by move) while the other games go on.  Either way the
    run completes, games.jsonl ends with every game exactly once, and the dead worker
    leaves no bot."""
    import dask
    import distributed  # noqa: F401  (its defaults enter dask's config before it is set)

    from arena.cluster import cluster_executor

    config = load_config(write_config(workdir, KILL, "kill.yaml"))
    games_file = config.output / "games.jsonl"
    killed: dict[str, Any] = {}
    with dask.config.set({"distributed.scheduler.allowed-failures": allowed_failures}):
        with cluster_executor(config) as pool:
            killer = threading.Thread(target=lambda: killed.update(
                _kill_a_worker_mid_game(pool, games_file, after=2)))
            killer.start()
            first = run_tournament(config, executor=pool, console=io.StringIO())
            killer.join()
            assert killed, "no worker was seen in the middle of a game"
            log = (first.folder / "arena.log").read_text()
            assert first.complete and (first.lost, first.failed) == (0, 0), log
            if not allowed_failures:
                assert first.replayed == 1 and "KilledWorker" in log, log
                assert "it is played once more, watched move by move" in log
    expected = schedule_ids(config)
    saved = [r.game_id for r in read_records(games_file)]
    assert sorted(saved) == sorted(expected) and len(saved) == len(set(saved)) == 10
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(
            is_gone(p) for p in [killed["pid"], *killed["bots"]]):
        time.sleep(0.05)
    assert is_gone(killed["pid"]) and all(is_gone(p) for p in killed["bots"])



@needs_dask
def test_a_cluster_keeps_bots_for_a_pairing_with_restart_per_pairing(workdir: Path) -> None:
    import psutil

    before = {p.pid for p in psutil.Process().children(recursive=True)}
    text = SMALL.replace("games_per_pairing: 10", "games_per_pairing: 6") + (
        "restart: per-pairing\nexecutor: dask\n")
    result = run_tournament(load_config(write_config(workdir, text)), console=io.StringIO())
    records = read_records(result.folder / "games.jsonl")
    assert result.complete and len(records) == 6
    assert all(r.forfeit is None and r.restart == "per-pairing" for r in records)
    assert all(r.worker.startswith("tcp://127.0.0.1:") for r in records)
    # each worker's processes play on: at most two fresh starts per bot (two workers)
    for name in ("random", "random-2"):
        mine = [r.white if r.white.name == name else r.black for r in records]
        assert sum(p.games_before == 0 for p in mine) <= 2
        assert max(p.games_before for p in mine) >= 1
    assert not tournament_tests.live_bots(before)  # no kept bot outlives the cluster
