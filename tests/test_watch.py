"""``arena watch`` (issue 40): the ply files of the games in progress, the runner writing and
removing them, and the page's server as a real process beside a real run: its state, its
event stream, its viewer pages, what it refuses.  The page itself in Chromium is
``tests/test_watch_browser.py``."""

from __future__ import annotations

import http.client
import json
import os
import re
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

from arena.config import load_config
from arena.live import PlyWriter, game_header, live_record, read_live
from arena.records import MoveInfo, read_records
from arena.report.viewer import game_data
from arena.rules import Position
from arena.tournament import run_tournament
from arena.variants import get_variant

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-m", "arena.cli"]


# -- the ply files ---------------------------------------------------------------------------


def test_a_ply_file_reads_back_as_the_game_so_far(tmp_path: Path) -> None:
    variant = get_variant("nine-mens-morris")
    path = tmp_path / "0.jsonl"
    header = game_header("g/1", variant, "alice", "bob", ["d6"], tournament="t", round=2, pair=3)
    writer = PlyWriter(str(path), header)
    pos = Position(variant)
    moves = ["d6", "f4", "b4", "d2"]
    for n, text in enumerate(moves):
        pos.push(pos.parse_move(text))
        writer(pos, MoveInfo(text, 10.0 + n, 9.0, n == 0, 0.5,
                             {"score": 30 - n, "depth": 4} if n % 2 else None))
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"move": "a1", "ply": 5')  # a write in progress: not read yet
    got_header, plies = read_live(path)
    assert got_header == header and [p["move"] for p in plies] == moves
    record = live_record(got_header, plies)
    assert (record.game_id, record.white.name, record.black.name, record.result) == (
        "g/1", "alice", "bob", "*")
    assert record.round == 2 and record.pair == 3 and record.opening == ["d6"]
    assert [m.move for m in record.moves] == moves and record.moves[0].opening
    assert record.moves[1].info == {"score": 29, "depth": 4} and record.moves[2].info is None
    data = game_data(record, "t")  # the report's viewer replays it: the same board
    assert data["error"] == "" and data["plies"][-1]["b"] == pos.points_text()
    assert data["plies"][2]["e"] == {"s": 29, "d": 4}


def test_a_ply_file_keeps_the_latest_play_and_trusts_no_value(tmp_path: Path) -> None:
    variant = get_variant("nine-mens-morris")
    path = tmp_path / "1.jsonl"
    writer = PlyWriter(str(path), game_header("g/2", variant, "a", "b", []))
    for _ in range(2):  # a void game played again starts again at ply 1
        pos = Position(variant)
        for text in ("d6", "f4", "b4"):
            pos.push(pos.parse_move(text))
            writer(pos, MoveInfo(text, 1.0))
    header, plies = read_live(path)
    assert header is not None and [p["ply"] for p in plies] == [1, 2, 3]
    hostile = {"game_id": 7, "white": ["x"], "variant_params": "no", "opening": [1, "d6"],
               "round": "2"}
    record = live_record(hostile, [{"move": "d6", "ms": "slow", "info": "text", "cpu": True}])
    assert (record.game_id, record.white.name, record.variant_params, record.round) == (
        "?", "white", {}, None)
    assert record.opening == ["d6"] and record.moves == [MoveInfo("d6", 0.0, None, False,
                                                                   None, None)]
    assert read_live(tmp_path / "none.jsonl") == (None, [])
    writer = PlyWriter(str(tmp_path / "no-such-folder" / "2.jsonl"))  # never raises
    writer(pos, MoveInfo("d6", 1.0))
    odd = PlyWriter(str(tmp_path / "3.jsonl"))  # an info it cannot write: the move all the same
    odd(pos, MoveInfo("b4", 2.0, info={"score": object()}))
    assert read_live(tmp_path / "3.jsonl")[1] == [{"move": "b4", "ms": 2.0, "ply": 3}]


def test_the_boards_read_a_ply_file_again_only_once_it_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.lock import LOCK_FILE
    from arena.watch import live as watch_live

    variant = get_variant("nine-mens-morris")
    (tmp_path / "live").mkdir()
    (tmp_path / LOCK_FILE).write_text(f"{os.getpid()}\n")  # a runner (alive) holds the folder
    writer = PlyWriter(str(tmp_path / "live" / "0.jsonl"), game_header("g/0", variant, "a", "b", []))
    pos = Position(variant)
    reads: list[Path] = []
    real = watch_live.live_game
    monkeypatch.setattr(watch_live, "live_game", lambda path: reads.append(path) or real(path))

    def play(text: str) -> None:
        nonlocal pos
        pos.push(pos.parse_move(text))
        writer(pos, MoveInfo(text, 1.0))

    play("d6")
    play("f4")
    cache: watch_live.BoardCache = {}
    first = watch_live.live_boards(tmp_path, cache)
    assert [(b["id"], b["plies"]) for b in first] == [("g/0", 2)] and len(reads) == 1
    assert watch_live.live_boards(tmp_path, cache) == first and len(reads) == 1  # unchanged
    play("b4")
    third = watch_live.live_boards(tmp_path, cache)
    assert third[0]["plies"] == 3 and third[0]["ply"]["b"] == pos.points_text()
    assert len(reads) == 2 and third == watch_live.live_boards(tmp_path)  # as read afresh
    (tmp_path / "live" / "0.jsonl").unlink()  # its record saved
    assert watch_live.live_boards(tmp_path, cache) == [] and cache == {}
    writer = PlyWriter(str(tmp_path / "live" / "0.jsonl"),  # a new game, a file of that name
                       game_header("g/1", variant, "a", "b", []))
    pos = Position(variant)
    play("d2")
    assert [(b["id"], b["plies"]) for b in watch_live.live_boards(tmp_path, cache)] == [
        ("g/1", 1)] and len(reads) == 4
    (tmp_path / LOCK_FILE).write_text("")  # the run ended: no boards, nothing kept
    assert watch_live.live_boards(tmp_path, cache) == [] and cache == {}


# -- the runner writes them ----------------------------------------------------------------


def _tournament(folder: Path, name: str, *, bots: int, games: int, how: str = "sleep 0.4",
                movetime: int = 60, workers: int = 2) -> Path:
    """A tournament file of ``bots`` timed random movers (each move ``how`` of its time)."""
    mode, factor = how.split()
    bot = folder / f"timed-{mode}-{factor}"  # tests/bots/timed, told how to spend its time
    bot.mkdir(exist_ok=True)
    shutil.copy(ROOT / "tests" / "bots" / "timed" / "bot.py", bot / "bot.py")
    (bot / "bot.yaml").write_text(f"name: timed\ncommand: ['{{python}}', bot.py, {mode}, "
                                  f"'{factor}']\n", encoding="utf-8")
    entries = "\n".join(f"  - {{path: {bot}, name: t{k}}}" for k in range(1, bots + 1))
    path = folder / f"{name}.yaml"
    path.write_text(f"name: {name}\nseed: 11\nbots:\n{entries}\nvariants: [nine-mens-morris]\n"
                    f"games_per_pairing: {games}\nisolation: none\n"
                    f"time: {{movetime: {movetime}, margin: 2000, handshake: 30000}}\n"
                    f"workers: {workers}\nreport: false\noutput: {folder / name}\n",
                    encoding="utf-8")
    return path


def _looking(live: Path, seen: dict[str, tuple[dict[str, Any], list[str]]],
             done: threading.Event) -> threading.Thread:
    """A thread that reads the ply files of ``live`` as a page would until ``done``: in
    ``seen``, each game's header and the most moves seen of it."""
    def look() -> None:
        while not done.is_set():
            for path in list(live.glob("*.jsonl")) if live.is_dir() else []:
                header, plies = read_live(path)
                if header is not None and plies:
                    moves = [p["move"] for p in plies]
                    if len(moves) > len(seen.get(header["game_id"], ({}, []))[1]):
                        seen[header["game_id"]] = header, moves
            time.sleep(0.01)

    thread = threading.Thread(target=look)
    thread.start()
    return thread


def test_the_runner_writes_each_game_in_progress_and_removes_it(tmp_path: Path) -> None:
    config = load_config(_tournament(tmp_path, "plies", bots=2, games=2))
    live = config.output / "live"
    seen: dict[str, tuple[dict[str, Any], list[str]]] = {}
    done = threading.Event()
    watcher = _looking(live, seen, done)
    try:
        result = run_tournament(config, console=open(os.devnull, "w"))
    finally:
        done.set()
        watcher.join()
    assert result.complete and result.finished == 2
    records = {r.game_id: r for r in read_records(config.output / "games.jsonl")}
    assert seen and set(seen) <= set(records)
    for game_id, (_, moves) in seen.items():  # what a page saw is the game as recorded
        assert moves == [m.move for m in records[game_id].moves][:len(moves)]
    assert max(len(m) for _, m in seen.values()) > 4
    assert list(live.glob("*.jsonl")) == []  # saved games are not in progress


def test_a_tune_writes_each_game_in_progress_and_removes_it(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from arena.cli import cli

    _tournament(tmp_path, "unused", bots=1, games=1)  # makes the timed bot's folder
    opponent = tmp_path / "timed-sleep-0.4"  # 24 ms a move: games long enough to be seen
    out = tmp_path / "tune"
    live = out / "live"
    seen: dict[str, tuple[dict[str, Any], list[str]]] = {}
    done = threading.Event()
    watcher = _looking(live, seen, done)
    try:
        res = CliRunner().invoke(cli, [
            "tune", f"{ROOT}/tests/tune_bots/target:Y=700", "--param", "X=20,0,100,10,0.15",
            "--opponent", str(opponent), "--iterations", "2", "--pairs", "1",
            "--variant", "three-mens-morris", "--movetime", "60", "--isolation", "none",
            "--seed", "3", "-j", "2", "--out", str(out)])
    finally:
        done.set()
        watcher.join()
    assert res.exit_code == 0, res.output
    records = {r.game_id: r for r in read_records(out / "games.jsonl")}
    assert len(records) == 8 and seen and set(seen) <= set(records)
    for game_id, (header, moves) in seen.items():  # what a page saw is the game as recorded
        r = records[game_id]
        assert (header["white"], header["black"], header["round"]) == (
            r.white.name, r.black.name, r.round)
        assert moves == [m.move for m in r.moves][:len(moves)]
    assert list(live.glob("*.jsonl")) == []  # saved games are not in progress


# -- the server, beside a real run -----------------------------------------------------------


def _url_of(stderr_path: Path, process: subprocess.Popen[bytes], what: str) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = stderr_path.read_text(encoding="utf-8", errors="replace")
        found = re.search(r"watching .* at (http://127\.0\.0\.1:\d+/)", text)
        if found:
            return found.group(1)
        assert process.poll() is None, f"{what} ended: {text[-2000:]}"
        time.sleep(0.05)
    raise AssertionError(f"{what} printed no address: {stderr_path.read_text()[-2000:]}")


def _get(url: str, path: str, *, method: str = "GET", host: Optional[str] = None,
         timeout: float = 30) -> tuple[int, dict[str, str], bytes]:
    m = re.match(r"http://([^:/]+):(\d+)/", url)
    assert m
    conn = http.client.HTTPConnection(m.group(1), int(m.group(2)), timeout=timeout)
    try:
        headers = {"Host": host} if host is not None else {}
        conn.request(method, path, headers=headers)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def _state(url: str) -> dict[str, Any]:
    status, _, body = _get(url, "/state")
    assert status == 200
    state: dict[str, Any] = json.loads(body)
    return state


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """``arena run --watch`` of a 4-bot tournament whose games take a few seconds each."""
    folder = tmp_path_factory.mktemp("watched")
    config = _tournament(folder, "watched", bots=4, games=2)
    err = folder / "run.err"
    with open(err, "wb") as stderr:
        run = subprocess.Popen([*ARENA, "run", str(config), "--watch"], cwd=folder,
                               stdout=subprocess.DEVNULL, stderr=stderr, stdin=subprocess.DEVNULL)
    try:
        yield {"url": _url_of(err, run, "arena run --watch"), "run": run,
               "folder": folder / "watched", "err": err}
    finally:
        _stop(run)


def _stop(run: subprocess.Popen[bytes]) -> None:
    """Stop a run as Ctrl-C does (it ends its page), killing it if it does not end."""
    if run.poll() is None:
        run.send_signal(signal.SIGINT)
        try:
            run.wait(30)
        except subprocess.TimeoutExpired:
            run.kill()
            run.wait()


def _until(what: str, check: Callable[[], Any], timeout: float = 120.0) -> Any:
    """``check()``'s first true value, asked every 0.1 s for ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"gave up waiting for {what}")


def test_the_state_follows_the_run_and_its_games_in_progress(watched: dict[str, Any]) -> None:
    url = watched["url"]
    first = _until("a game in progress", lambda: (s := _state(url))["live"] and s)
    assert first["follow"]["kind"] == "tournament" and first["follow"]["total"] == 12
    assert first["running"] == watched["run"].pid
    board = first["live"][0]
    assert board["white"].startswith("t") and len(board["points"]) == 24
    assert board["ply"]["b"].count("W") + board["ply"]["b"].count("B") >= 1
    # the same game, later: more plies (or it has ended and another game is shown)
    later = _until("a move", lambda: (s := _state(url))["version"] > first["version"] and s)
    boards = {b["id"]: b["plies"] for b in later["live"]}
    assert boards.get(board["id"], 10**6) >= board["plies"] or later["follow"]["games"] > 0
    # a finished game counts in the standings
    done = _until("a finished game", lambda: (s := _state(url))["follow"]["games"] >= 1 and s)
    rows = done["follow"]["standings"][0]["rows"]
    assert sum(r["games"] for r in rows) == 2 * done["follow"]["games"]


def test_the_event_stream_pushes_each_new_state(watched: dict[str, Any]) -> None:
    m = re.match(r"http://([^:/]+):(\d+)/", watched["url"])
    assert m
    sock = socket.create_connection((m.group(1), int(m.group(2))), timeout=60)
    try:
        sock.sendall(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1:{m.group(2)}\r\n\r\n".encode())
        buffer = b""
        versions: list[int] = []
        deadline = time.monotonic() + 90
        while len(versions) < 3 and time.monotonic() < deadline:
            buffer += sock.recv(65536)
            while b"\n\n" in buffer:
                event, buffer = buffer.split(b"\n\n", 1)
                for line in event.split(b"\n"):
                    if line.startswith(b"data: "):
                        versions.append(json.loads(line[6:])["version"])
    finally:
        sock.close()
    assert buffer or versions
    assert len(versions) >= 3 and versions == sorted(set(versions)), versions


def test_the_server_shows_games_in_the_viewer_and_refuses_the_rest(
        watched: dict[str, Any]) -> None:
    url = watched["url"]
    status, headers, body = _get(url, "/")
    assert status == 200 and b"/watch.js" in body
    assert "script-src 'self'" in headers["content-security-policy"]
    for path, ctype in (("/watch.js", "text/javascript"), ("/watch.css", "text/css"),
                        ("/viewer.css", "text/css"), ("/board.js", "text/javascript")):
        status, headers, body = _get(url, path)
        assert status == 200 and headers["content-type"].startswith(ctype) and body
    state = _until("a game in progress", lambda: (s := _state(url))["live"] and s)
    game = state["live"][0]["id"]
    status, headers, body = _get(url, "/game?id=" + game.replace("/", "%2F"))
    assert status == 200 and b'id="game-data"' in body and b"(in progress)" in body
    assert game.encode() in body
    finished = _until("a finished game", lambda: (s := _state(url))["follow"]["recent"] and s)
    gid = finished["follow"]["recent"][-1]["id"]
    status, _, body = _get(url, "/game?id=" + gid)
    assert status == 200 and gid.encode() in body and b"(in progress)" not in body
    assert _get(url, "/game?id=nothing")[0] == 404
    assert _get(url, "/nothing")[0] == 404
    for method in ("POST", "PUT", "DELETE"):
        assert _get(url, "/state", method=method)[0] == 405
    # DNS rebinding: a request addressed to another name is refused
    assert _get(url, "/state", host="evil.example:80")[0] == 403
    assert _get(url, "/state", host="localhost")[0] == 200
    # the page only reads: the folder's files are the runner's alone
    assert not (watched["folder"] / "watch").exists()


def _watchers_of(folder: Path) -> list[int]:
    """The pids of ``arena watch`` processes following ``folder``."""
    import psutil

    out = []
    for p in psutil.process_iter(["cmdline"]):
        cmd = p.info["cmdline"] or []
        if "watch" in cmd and str(folder) in cmd:
            out.append(p.pid)
    return out


def test_the_page_ends_with_its_run(tmp_path: Path) -> None:
    config = _tournament(tmp_path, "short", bots=2, games=4, how="sleep 0.5", movetime=40)
    err = tmp_path / "run.err"
    with open(err, "wb") as stderr:
        run = subprocess.Popen([*ARENA, "run", str(config), "--watch"], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL)
    _until("the page's process", lambda: _watchers_of(tmp_path / "short") or run.poll() is not None)
    out, _ = run.communicate(timeout=300)
    assert run.returncode == 0, err.read_text()[-2000:]
    assert b"4/4 games" in out
    assert _watchers_of(tmp_path / "short") == []  # the page's process ended with the run
    found = re.search(r"watching .* at http://127\.0\.0\.1:(\d+)/", err.read_text())
    if found:  # (a run quicker than the page's start ends it before it says where it is)
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", int(found.group(1))), timeout=5).close()
    assert list((tmp_path / "short" / "live").glob("*.jsonl")) == []


def test_arena_watch_refuses_a_missing_folder_and_a_taken_port(tmp_path: Path) -> None:
    done = subprocess.run([*ARENA, "watch", str(tmp_path / "nothing")], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "no such results folder" in done.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([*ARENA, "watch", str(tmp_path), "--port", str(port)],
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in done.stderr
    done = subprocess.run([*ARENA, "sprt", "bots/random", "bots/random", "--watch"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 2 and "--watch follows the folder of --out" in done.stderr
