"""Runs that survive their cluster (issue 30), with real processes: a Dask scheduler and
workers started here by the ``dask`` command on the loopback interface (free ports), each
ended by its pid at the end of its test; ``arena run`` itself as a process where its exit
status and its console are what is tested.

* one of two workers SIGKILLed in the middle of a game: the run never stalls, every game
  is saved once, and the records are those of the same tournament on the local pool;
* the only worker SIGKILLed: the waiting message within seconds, and a worker started
  then finishes the run;
* no worker for longer than ``cluster.wait``: a clean stop, exit status 2 with resume
  advice, and the next run (a worker back) finishes it;
* the scheduler SIGKILLed: said the same way, and a scheduler and worker started again let
  the run finish;
* a bot that takes its worker down: its games are given up after the stated number of
  deaths and recorded as its forfeits;
* the competition server's judge on a scheduler without workers: no game handed out (none
  charged an attempt), a late worker plays them.

Slow (each starts Dask processes on a 2-core machine); every wait polls with a deadline.
Skipped with a reason where the ``cluster`` extra is missing.
"""

from __future__ import annotations

import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import pytest

pytest.importorskip("distributed", reason="the cluster extra is not installed "
                                          "(pip install -e '.[cluster]' installs distributed)")

from arena.config import load_config, with_executor  # noqa: E402
from arena.records import read_records  # noqa: E402
from arena.tournament import run_tournament  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DASK = str(BIN / "dask")
ARENA = str(BIN / "arena")

CONFIG = """\
name: {name}
bots: [{root}/bots/random, {{path: {root}/bots/random, name: random-2}}]
variants: [three-mens-morris]
games_per_pairing: {games}
time: {{movetime: 50, margin: 1000}}
workers: 2
seed: 11
report: false
output: {output}
cluster: {{wait: {wait}}}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def until(condition: Callable[[], Any], timeout: float, what: str, step: float = 0.1) -> Any:
    """Poll ``condition`` until it is true (returned) or ``timeout`` seconds pass (fail)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout:.0f} s")
        time.sleep(step)


def saved(folder: Path) -> list[str]:
    """The game ids in ``folder/games.jsonl``, in file order."""
    path = folder / "games.jsonl"
    return [r.game_id for r in read_records(path)] if path.exists() else []


def lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def games(folder: Path) -> dict[str, Any]:
    """Each game's id -> everything that must not depend on where (or how often) it was
    played: colours, opening, seed, moves, result."""
    out = {}
    for r in read_records(folder / "games.jsonl"):
        assert r.game_id not in out, f"{r.game_id} twice"
        out[r.game_id] = (r.white.name, r.black.name, r.opening, r.seed,
                          [m.move for m in r.moves], r.result)
    return out


class Cluster:
    """Dask processes started by this test, each ended by its pid (SIGTERM, then SIGKILL)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.procs: list[subprocess.Popen[bytes]] = []
        self.address = ""
        self.scheduler_proc: Optional[subprocess.Popen[bytes]] = None

    def _start(self, args: list[str], log: Path, env: Optional[dict[str, str]] = None
               ) -> subprocess.Popen[bytes]:
        with open(log, "ab") as out:
            proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT,
                                    cwd=self.folder, env={**os.environ, **(env or {})},
                                    start_new_session=True)
        self.procs.append(proc)
        return proc

    def scheduler(self, env: Optional[dict[str, str]] = None, port: int = 0) -> str:
        port = port or free_port()
        log = self.folder / f"scheduler-{len(self.procs)}.log"
        self._start([DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                     "--no-dashboard"], log, env)
        self.address = f"tcp://127.0.0.1:{port}"
        until(lambda: b"Scheduler at:" in log.read_bytes(), 60, "the scheduler started")
        self.scheduler_proc = self.procs[-1]
        return self.address

    def worker(self, name: str, *, nanny: bool = False) -> subprocess.Popen[bytes]:
        log = self.folder / f"{name}.log"
        args = [DASK, "worker", self.address, "--nthreads", "1", "--name", name,
                "--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0"]
        proc = self._start(args + ([] if nanny else ["--no-nanny"]), log)
        until(lambda: b"Registered to:" in log.read_bytes(), 90, f"worker {name} joined")
        return proc

    def stop(self) -> None:
        """Workers first (they would wait for their scheduler), each process's session with
        it (a nanny's worker too): SIGTERM, up to 3 s, then SIGKILL."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 3
        for proc in self.procs:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # its session: nothing of it is left
            except ProcessLookupError:
                pass
            proc.wait(5)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(tmp_path)
    try:
        yield c
    finally:
        c.stop()


def _children(pid: int) -> list[int]:
    """The children of ``pid``, from the kernel's list of each of its threads (a few reads,
    not a scan of every process: the killer thread must keep up on a loaded machine)."""
    found: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return found


def in_a_game(pid: int) -> bool:
    """True when the worker process ``pid`` has a bot running (a game in progress): a
    descendant other than the sandbox's watchdog, which a worker keeps between games."""
    todo = _children(pid)
    while todo:
        child = todo.pop()
        try:
            with open(f"/proc/{child}/cmdline", "rb") as f:
                command = f.read().replace(b"\0", b" ")
        except OSError:
            continue
        if b"arena.sandbox --watch" not in command:
            return True
        todo += _children(child)
    return False


def write(folder: Path, name: str, games: int, wait: float) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(CONFIG.format(name=name, root=ROOT, games=games, wait=wait,
                                  output=folder / name), encoding="utf-8")
    return path


def arena_run(config: Path, address: str, console: Path) -> subprocess.Popen[bytes]:
    with open(console, "ab") as out:
        return subprocess.Popen([ARENA, "run", str(config), "--scheduler", address],
                                stdout=out, stderr=subprocess.STDOUT, cwd=config.parent,
                                start_new_session=True)


def finish(proc: subprocess.Popen[bytes], timeout: float) -> int:
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)
        pytest.fail(f"arena run did not end within {timeout:.0f} s")


@pytest.mark.slow
def test_killing_one_of_two_workers_costs_only_its_games(cluster: Cluster,
                                                        tmp_path: Path) -> None:
    """The killed worker's game is played again on the other one (Dask's own retry); the
    run never stalls, every id is saved once, and every record equals the same game
    played on the local pool (seeds come from game ids)."""
    # 24 quick games: time enough for a loaded machine's killer thread to see a game on w1
    local = load_config(write(tmp_path, "reference", 24, 60))
    reference = run_tournament(local, console=io.StringIO())
    assert reference.complete
    address = cluster.scheduler()
    first = cluster.worker("w1")
    cluster.worker("w2")
    config = with_executor(load_config(write(tmp_path, "kill", 24, 60)), scheduler=address)
    games_file = config.output / "games.jsonl"
    killed: list[float] = []

    def kill() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if lines(games_file) >= 3 and in_a_game(first.pid):
                os.kill(first.pid, signal.SIGKILL)
                killed.append(time.monotonic())
                return
            time.sleep(0.005)

    killer = threading.Thread(target=kill)
    killer.start()
    console = io.StringIO()
    result = run_tournament(config, console=console)
    ended = time.monotonic()
    killer.join()
    assert killed, "the worker was never seen in the middle of a game"
    log = (config.output / "arena.log").read_text()
    assert result.complete and (result.lost, result.failed) == (0, 0), log
    ids = saved(config.output)
    assert len(ids) == len(set(ids)) == 24
    assert games(config.output) == games(local.output)
    # never stalled: the rest of the run took what the other worker needed for it
    assert ended - killed[0] < 90, log
    assert "waiting for workers" not in log


@pytest.mark.slow
def test_killing_the_only_worker_waits_and_a_new_worker_finishes(cluster: Cluster,
                                                                tmp_path: Path) -> None:
    """``arena run`` as a process: the waiting message within seconds of the kill, then
    a worker started later finishes the run, every id once, exit status 0."""
    address = cluster.scheduler()
    only = cluster.worker("only")
    config = write(tmp_path, "only", 16, 120)
    console = tmp_path / "console.txt"
    run = arena_run(config, address, console)
    games_file = tmp_path / "only" / "games.jsonl"
    until(lambda: lines(games_file) >= 4 or run.poll() is not None, 120, "four games saved")
    assert run.poll() is None, console.read_text()
    os.kill(only.pid, signal.SIGKILL)
    killed = time.monotonic()
    until(lambda: b"waiting for workers: 0 connected since" in console.read_bytes(), 30,
          "the waiting message")
    waited = time.monotonic() - killed
    assert waited < 10, f"the waiting message came {waited:.1f} s after the kill"
    cluster.worker("new")
    assert finish(run, 240) == 0, console.read_text()
    text = console.read_text()
    assert "the cluster is back" in text
    ids = saved(tmp_path / "only")
    assert len(ids) == len(set(ids)) == 16, text


@pytest.mark.slow
def test_no_worker_for_longer_than_cluster_wait_stops_cleanly(cluster: Cluster,
                                                             tmp_path: Path) -> None:
    """cluster.wait 5 s: the run stops with a clear message and exit status 2, the games
    saved stay; with a worker back the same command finishes the tournament."""
    address = cluster.scheduler()
    only = cluster.worker("only")
    config = write(tmp_path, "short", 12, 5)
    console = tmp_path / "console.txt"
    run = arena_run(config, address, console)
    games_file = tmp_path / "short" / "games.jsonl"
    until(lambda: lines(games_file) >= 3 or run.poll() is not None, 120, "three games saved")
    os.kill(only.pid, signal.SIGKILL)
    killed = time.monotonic()
    status = finish(run, 90)
    stopped = time.monotonic() - killed
    text = console.read_text()
    assert status == 2, text
    assert 5 <= stopped < 60, text
    last = text.strip().splitlines()[-1]
    assert last.startswith("Error: waiting for workers: 0 connected since"), last
    assert "for longer than 5 s (cluster.wait): the run stops" in last
    assert "run the same command again to resume" in last
    before = saved(tmp_path / "short")
    assert len(before) == len(set(before)) >= 3
    cluster.worker("back")
    again = arena_run(config, address, tmp_path / "console2.txt")
    assert finish(again, 240) == 0, (tmp_path / "console2.txt").read_text()
    ids = saved(tmp_path / "short")
    assert ids[:len(before)] == before and len(ids) == len(set(ids)) == 12


@pytest.mark.slow
def test_a_lost_scheduler_is_waited_for_and_the_run_goes_on(cluster: Cluster,
                                                            tmp_path: Path) -> None:
    """The scheduler SIGKILLed mid-run: said within seconds; its worker exits with it (Dask);
    a scheduler started again on the same port and a new worker let the run finish, the
    games it had in flight played again, every id once, exit status 0."""
    address = cluster.scheduler()
    cluster.worker("first")
    config = write(tmp_path, "sched", 12, 120)
    console = tmp_path / "console.txt"
    run = arena_run(config, address, console)
    games_file = tmp_path / "sched" / "games.jsonl"
    until(lambda: lines(games_file) >= 3 or run.poll() is not None, 120, "three games saved")
    assert cluster.scheduler_proc is not None
    os.kill(cluster.scheduler_proc.pid, signal.SIGKILL)
    killed = time.monotonic()
    until(lambda: f"waiting for the scheduler at {address}: unreachable since".encode()
          in console.read_bytes(), 30, "the waiting message")
    assert time.monotonic() - killed < 10
    cluster.scheduler(port=int(address.rsplit(":", 1)[1]))
    cluster.worker("second")
    assert finish(run, 240) == 0, console.read_text()
    text = console.read_text()
    assert "restarted: the games it held are played again" in text
    ids = saved(tmp_path / "sched")
    assert len(ids) == len(set(ids)) == 12, text


KILLER = '''\
"""killer: plays at random, but from its second turn on it SIGKILLs the Dask worker
process that plays its game (a bot that takes its machine down), after 0.3 s of thinking."""

import os
import signal
import time

import psutil

from arena.botkit import SeededBot, run


class Killer(SeededBot):
    name = "killer"

    def choose(self, position, clock):
        if position.ply >= 2:
            time.sleep(0.3)
            for parent in psutil.Process().parents():
                command = " ".join(parent.cmdline())
                if "spawn_main" in command or "dask worker" in command:
                    os.kill(parent.pid, signal.SIGKILL)
                    break
        return self.rng.choice(position.legal_moves())


if __name__ == "__main__":
    run(Killer())
'''


@pytest.mark.slow
def test_a_bot_that_kills_its_worker_forfeits_after_the_stated_deaths(cluster: Cluster,
                                                                      tmp_path: Path) -> None:
    """allowed-failures 0 on the scheduler: a game is given up after 2 x (0 + 1) deaths,
    the second attempt watched move by move; each is recorded as the killer's forfeit
    (crash, with the reason), and the run ends with every game saved once."""
    bot = tmp_path / "killer"
    shutil.copytree(ROOT / "bots" / "random", bot)
    (bot / "bot.py").write_text(KILLER, encoding="utf-8")
    (bot / "bot.yaml").write_text('name: killer\ncommand: "{python} bot.py"\n',
                                  encoding="utf-8")
    address = cluster.scheduler(env={"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0"})
    cluster.worker("n1", nanny=True)  # the nanny starts its worker again after each kill
    text = CONFIG.format(name="poison", root=ROOT, games=2, wait=120,
                         output=tmp_path / "poison").replace(
        f"{{path: {ROOT}/bots/random, name: random-2}}", str(bot)) + "isolation: none\n"
    (tmp_path / "poison.yaml").write_text(text, encoding="utf-8")
    config = with_executor(load_config(tmp_path / "poison.yaml"), scheduler=address)
    result = run_tournament(config, console=io.StringIO())
    log = (config.output / "arena.log").read_text()
    assert result.complete and result.lost == 0, log
    records = read_records(config.output / "games.jsonl")
    assert len(records) == 2 and len({r.game_id for r in records}) == 2
    for r in records:
        side = "white" if r.white.name == "killer" else "black"
        assert (r.termination, r.forfeit) == ("crash", side), r.detail
        assert r.result == ("0-1" if side == "white" else "1-0")
        assert f"{side} (killer) was to move when the worker playing this game died" in r.detail
        assert "2 workers died playing it, so it was given up" in r.detail
    assert log.count("watched move by move") == 2


@pytest.mark.slow
def test_the_judge_hands_out_no_game_without_a_worker(cluster: Cluster, tmp_path: Path) -> None:
    """The competition server's judge on a Dask scheduler with no worker yet: the ladder's
    games stay queued (no attempt charged, none failed) and the log says why; a worker that
    joins plays them all."""
    pytest.importorskip("fastapi", reason="the server extra is not installed "
                                          "(pip install -e '.[server]')")
    from tests.test_server import (SETTINGS, Server, _competition, _judged, _settled, _wait,
                                   bot_archive)

    address = cluster.scheduler()
    folder = tmp_path / "comp"
    tokens = _competition(folder, SETTINGS.replace("pairs: 2", "pairs: 1")
                          + f"executor: {{kind: dask, scheduler: '{address}'}}\n")
    server = Server(folder)
    server.start()
    try:
        _, a = server.upload(tokens["alice"], "random.zip", bot_archive("random", "zip"))
        _, b = server.upload(tokens["bob"], "greedy.tar.gz", bot_archive("greedy", "tgz"))
        for who, bot in (("alice", a), ("bob", b)):
            view = _wait(f"{who}'s verdict", lambda: _judged(server, tokens[who], bot["id"]))
            assert view["status"] == "active", view
        log = folder / "server.log"
        until(lambda: b"the judge hands out no game while it waits for workers: 0 connected"
              in log.read_bytes(), 30, "the judge's waiting line")
        time.sleep(2)  # the judge looks again and again: still nothing handed out
        games = server.get("/api/status")["games"]
        assert games.get("queued", 0) >= 2 and not games.get("running") \
            and not games.get("failed"), games
        cluster.worker("late")
        status = _wait("the ladder games", lambda: _settled(server, 2), timeout=180)
        assert not status["games"].get("failed"), status
        assert b"the cluster is back" in log.read_bytes()
    finally:
        server.stop()
