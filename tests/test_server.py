"""The competition server end to end: a real ``arena server run`` process on a free local
port over a real SQLite file, real uploads (copies of bots/random and bots/greedy, zipped
here), the real judge (build, check, sandboxed ladder games at 50 ms a move), the JSON API,
the pages with their CSRF tokens, hostile archives, a ``kill -9`` in the middle of judging,
and (where Chromium is installed) a participant in a real browser.  Skipped with a reason
where the ``server`` extra is not installed."""

from __future__ import annotations

import http.client
import io
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import pytest

pytest.importorskip("fastapi", reason="the server extra is not installed "
                                      "(pip install -e '.[server]')")
pytest.importorskip("sqlalchemy", reason="the server extra is not installed")
pytest.importorskip("uvicorn", reason="the server extra is not installed")

from urllib3 import encode_multipart_formdata  # noqa: E402  (selenium's dependency)

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]
SETTINGS = """name: test ladder
upload: {max_bytes: 1000000}
time: {movetime: 50}
pairs: 2
check_games: 1
workers: 2
nice: 0
rate_limit: {participant: 100000/minute, anonymous: 100000/minute}
"""
# nice: 0 -- the judge's niceness would have it yield to whatever else loads a CI machine
# (other tests, busy loops: its bots' sessions weigh a tenth of theirs), and these tests
# wait for its games; the niceness itself is tested in test_server_parts and
# hostile/test_fair_clock
SECRET = "SECRET-of-alice"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _arena(*args: str) -> str:
    """An ``arena`` command in this process (``init`` and ``user``: no server involved)."""
    from click.testing import CliRunner

    from arena.cli import cli

    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


class Server:
    """One ``arena server run`` process of a competition folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: Optional[subprocess.Popen[bytes]] = None

    def start(self) -> None:
        with open(self.folder / "server.log", "ab") as log:
            self.proc = subprocess.Popen([*ARENA, "server", "run", str(self.folder),
                                          "--port", str(self.port)], stdout=log, stderr=log,
                                         start_new_session=True)
        deadline = time.monotonic() + 20
        while True:
            try:
                self.get("/api/status")
                return
            except OSError:
                assert self.proc.poll() is None, (self.folder / "server.log").read_text()
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL the server process (by its pid) and wait for it."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def request(self, method: str, path: str, token: Optional[str] = None,
                body: Optional[bytes] = None, content_type: Optional[str] = None,
                cookie: Optional[str] = None) -> tuple[int, bytes]:
        req = urllib.request.Request(self.url + path, data=body, method=method)
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        if content_type:
            req.add_header("Content-Type", content_type)
        if cookie:
            req.add_header("Cookie", f"arena_token={cookie}")
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def get(self, path: str, token: Optional[str] = None) -> Any:
        status, body = self.request("GET", path, token)
        assert status == 200, (path, status, body[:300])
        return json.loads(body)

    def upload(self, token: Optional[str], filename: str, data: bytes) -> tuple[int, Any]:
        body, ctype = encode_multipart_formdata({"file": (filename, data)})
        status, out = self.request("POST", "/api/bots", token, body, ctype)
        return status, json.loads(out)


def _wait(what: str, predicate: Callable[[], Any], timeout: float = 90,
          state: Optional[Callable[[], Any]] = None) -> Any:
    """``predicate()``'s first true value within ``timeout`` seconds; on a timeout the
    assertion says what was waited for and, with ``state``, what was seen last."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            seen = f"; last seen: {state()}" if state is not None else ""
            raise AssertionError(f"timed out waiting for {what}{seen}")
        time.sleep(0.2)


def bot_archive(bot: str, kind: str, *, name: Optional[str] = None,
                stderr_line: Optional[str] = None, slowable: bool = False) -> bytes:
    """A copy of bots/<bot> as a .zip or .tar.gz (renamed, writing a line to stderr, or
    ``slowable``: sleeping before each move as many seconds as a file ``delay`` next to its
    ``bot.py`` says, once there is one)."""
    files = {}
    for f in ("bot.py", "bot.yaml"):
        text = (ROOT / "bots" / bot / f).read_text()
        if f == "bot.yaml" and name:
            text = text.replace(f"name: {bot}", f"name: {name}")
        if f == "bot.py" and stderr_line:
            text = text.replace("from __future__ import annotations\n",
                                "from __future__ import annotations\nimport sys\n"
                                f"sys.stderr.write({stderr_line!r} + '\\n')\n", 1)
        if f == "bot.py" and slowable:
            text = text.replace("    def choose(self, position: Position, clock: Clock) -> Move:\n"
                                "        \"\"\"Any legal move, uniformly.\"\"\"\n",
                                "    def choose(self, position: Position, clock: Clock) -> Move:\n"
                                "        import pathlib, time\n"
                                "        delay = pathlib.Path(__file__).with_name('delay')\n"
                                "        if delay.exists():\n"
                                "            time.sleep(float(delay.read_text()))\n", 1)
            assert "delay" in text
        files[f"{name or bot}/{f}"] = text.encode()
    buf = io.BytesIO()
    if kind == "zip":
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for path, data in files.items():
                zf.writestr(path, data)
    else:
        with tarfile.open(fileobj=buf, mode="w:gz") as tf:
            for path, data in files.items():
                info = tarfile.TarInfo(path)
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _competition(folder: Path, settings: str) -> dict[str, str]:
    (folder.parent / f"{folder.name}.yaml").write_text(settings)
    _arena("server", "init", str(folder), "--config", str(folder.parent / f"{folder.name}.yaml"))
    return {who: _arena("server", "user", str(folder), who, *(["--admin"] if who == "root"
                                                              else [])).strip().splitlines()[-1]
            for who in ("alice", "bob", "root")}


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    folder = tmp_path_factory.mktemp("server") / "comp"
    tokens = _competition(folder, SETTINGS)
    server = Server(folder)
    server.start()
    try:
        yield server, tokens
    finally:
        server.stop()


def _judged(server: Server, token: str, bot_id: int) -> Any:
    view = server.get(f"/api/bots/{bot_id}", token)
    return view if view["status"] != "checking" else None


def _settled(server: Server, games: int) -> Any:
    status = server.get("/api/status")
    g = status["games"]
    return status if g.get("done", 0) >= games and not g.get("queued") and not g.get(
        "running") else None


def play_two_uploads(server: Server, tokens: dict[str, str], games: int) -> list[Any]:
    """alice uploads bots/random (a zip), bob bots/greedy (a tar.gz); both pass their
    checks and their ``games`` ladder games are played.  Returns the leaderboard, checked."""
    _, a = server.upload(tokens["alice"], "random.zip", bot_archive("random", "zip"))
    _, b = server.upload(tokens["bob"], "greedy.tar.gz", bot_archive("greedy", "tgz"))
    for who, bot in (("alice", a), ("bob", b)):
        view = _wait(f"{who}'s verdict", lambda: _judged(server, tokens[who], bot["id"]))
        assert view["status"] == "active" and view["verdict"].startswith("PASS"), view
    _wait("the ladder games", lambda: _settled(server, games),
          state=lambda: (server.get("/api/status"), server.get("/api/games"),
                         (server.folder / "server.log").read_text()[-3000:]))
    rows: list[Any] = server.get("/api/leaderboard")
    assert {(r["bot"], r["owner"], r["games"]) for r in rows} == {
        ("random", "alice", games), ("greedy", "bob", games)}
    assert sum(r["score"] for r in rows) == pytest.approx(1.0)
    return rows


@pytest.mark.slow
def test_an_idle_ladder_keeps_playing_until_stopped(tmp_path: Path) -> None:
    """``ladder.idle_games: true``: after the two uploads' own games (2 with ``pairs: 1``)
    the judge goes on playing pairs between them, every one on the leaderboard, and a
    SIGINT still stops the server at once."""
    folder = tmp_path / "comp"
    tokens = _competition(folder, SETTINGS.replace("pairs: 2", "pairs: 1")
                          + "ladder: {idle_games: true}\n")
    server = Server(folder)
    server.start()
    try:
        for who, bot in (("alice", "random"), ("bob", "greedy")):
            status, out = server.upload(tokens[who], f"{bot}.zip", bot_archive(bot, "zip"))
            assert status == 201, out
        status = _wait("idle games", lambda: (lambda st: st if st["games"].get("done", 0) >= 6
                                              else None)(server.get("/api/status")), 120,
                       state=lambda: server.get("/api/status"))
        assert set(status["games"]) <= {"done", "queued", "running"}
        rows = _wait("the leaderboard to show them (it may be a moment behind)",
                     lambda: (lambda r: r if min(x["games"] for x in r) >= 6 else None)(
                         server.get("/api/leaderboard")), 30)
        assert len(rows) == 2 and rows[0]["games"] == rows[1]["games"]
    finally:
        started = time.monotonic()
        server.stop()
    assert time.monotonic() - started < 15


def test_uploads_need_a_valid_token(ladder: tuple[Server, dict[str, str]]) -> None:
    server, _ = ladder
    data = bot_archive("random", "zip")
    assert server.upload(None, "random.zip", data)[0] == 401
    assert server.upload("not-a-token", "random.zip", data)[0] == 401
    assert server.request("GET", "/api/bots/1")[0] in (401, 404)


@pytest.mark.slow
def test_two_participants_upload_and_play_the_ladder(
        ladder: tuple[Server, dict[str, str]]) -> None:
    server, tokens = ladder
    started = time.monotonic()
    status, a = server.upload(tokens["alice"], "random.zip",
                              bot_archive("random", "zip", stderr_line=SECRET))
    assert (status, a["status"]) == (201, "checking")
    status, b = server.upload(tokens["bob"], "greedy.tar.gz", bot_archive("greedy", "tgz"))
    assert (status, b["status"]) == (201, "checking")
    for who, bot in (("alice", a), ("bob", b)):
        view = _wait(f"{who}'s verdict", lambda: _judged(server, tokens[who], bot["id"]))
        assert view["status"] == "active", view
        assert view["verdict"].startswith("PASS") and "handshake" in view["check_log"]
    _wait("the ladder games", lambda: _settled(server, 4))
    print(f"two uploads checked and 4 ladder games played in {time.monotonic() - started:.1f} s")
    rows = server.get("/api/leaderboard")
    assert {(r["bot"], r["owner"]) for r in rows} == {("random", "alice"), ("greedy", "bob")}
    for r in rows:
        assert set(r) >= {"bot", "owner", "rank", "elo", "elo95", "games", "score"}
        assert r["games"] == 4 and r["rank"] in (1, 2) and r["elo95"] > 0
    assert sum(r["score"] for r in rows) == pytest.approx(1.0)

    # one participant cannot read the other's check log; an admin can
    assert server.request("GET", f"/api/bots/{a['id']}", tokens["bob"])[0] == 403
    assert server.request("GET", f"/api/bots/{a['id']}")[0] == 401
    assert "check_log" in server.get(f"/api/bots/{a['id']}", tokens["root"])
    # the game records: alice's stderr for alice (and admins) only
    games = server.get(f"/api/bots/{a['id']}", tokens["alice"])["games"]
    assert len(games) == 4 and all(g["status"] == "done" for g in games)
    game = games[0]
    alice_color = "white" if game["white_id"] == a["id"] else "black"
    mine = server.get(f"/api/games/{game['id']}", tokens["alice"])
    assert SECRET in mine["stderr"][alice_color]
    assert mine["white"]["name"] and mine["moves"] and mine["result"] == game["result"]
    for other in (tokens["bob"], None):
        assert alice_color not in server.get(f"/api/games/{game['id']}", other)["stderr"]
    assert SECRET in server.get(f"/api/games/{game['id']}", tokens["root"])["stderr"][
        alice_color]
    assert server.request("GET", "/api/games/99999")[0] == 404
    # the pages: the leaderboard, the bot's page (log only for its owner), the viewer
    _, page = server.request("GET", "/")
    assert b"random" in page and b"greedy" in page and b"alice" in page
    _, own = server.request("GET", f"/bots/{a['id']}", cookie=tokens["alice"])
    _, other = server.request("GET", f"/bots/{a['id']}", cookie=tokens["bob"])
    assert b'id="check-log"' in own and b'id="check-log"' not in other
    status, viewer = server.request("GET", f"/games/{game['id']}", cookie=tokens["bob"])
    assert status == 200 and b'id="game-data"' in viewer and SECRET.encode() not in viewer
    # players as people know them (bot, version, owner), and the way back to the games
    assert b"random v1 (alice)" in viewer and b"greedy v1 (bob)" in viewer
    assert b'"back":"/games"' in viewer and b'"back_text":"all games"' in viewer


def test_hostile_archives_are_refused_and_the_ladder_goes_on(
        ladder: tuple[Server, dict[str, str]], tmp_path: Path) -> None:
    server, tokens = ladder
    before = sorted(p.name for p in (server.folder / "bots").iterdir())
    slip = io.BytesIO()
    with zipfile.ZipFile(slip, "w") as zf:
        zf.writestr("bot.yaml", "name: slip\ncommand: \"{python} bot.py\"\n")
        zf.writestr("../../evil.txt", "pwned")
    bomb = io.BytesIO()
    with tarfile.open(fileobj=bomb, mode="w:gz") as tf:
        info = tarfile.TarInfo("zeros")
        info.size = 200 << 20  # 200 MB of zeros, a few hundred KB packed
        tf.addfile(info, io.BytesIO(bytes(info.size)))
    link = io.BytesIO()
    with tarfile.open(fileobj=link, mode="w:gz") as tf:
        info = tarfile.TarInfo("bot.yaml")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tf.addfile(info)
    for name, data, why in (("slip.zip", slip.getvalue(), "outside"),
                            ("bomb.tar.gz", bomb.getvalue(), "size limit"),
                            ("link.tar.gz", link.getvalue(), "link")):
        status, out = server.upload(tokens["bob"], name, data)
        assert status == 400 and why in out["detail"], out
    for where in (server.folder, server.folder.parent, server.folder / "bots"):
        assert not (where / "evil.txt").exists()
    assert sorted(p.name for p in (server.folder / "bots").iterdir()) == before
    assert not [p for p in (server.folder / "uploads").iterdir()
                if p.name.startswith(("slip", "bomb", "link"))]
    # over upload.max_bytes: refused on its headers, before the body is sent or read
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.putrequest("POST", "/api/bots")
    conn.putheader("Authorization", f"Bearer {tokens['bob']}")
    conn.putheader("Content-Type", "multipart/form-data; boundary=x")
    conn.putheader("Content-Length", str(1_100_000))
    conn.endheaders()
    assert conn.getresponse().status == 413
    conn.close()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.putrequest("POST", "/api/bots")
    conn.putheader("Authorization", f"Bearer {tokens['bob']}")
    conn.putheader("Transfer-Encoding", "chunked")
    conn.endheaders()
    assert conn.getresponse().status == 411  # a body of unknown size is not read either
    conn.close()
    # a bot that fails its check is rejected; the server and the ladder carry on, and what
    # the bot wrote is shown escaped on its page
    broken = io.BytesIO()
    with zipfile.ZipFile(broken, "w") as zf:
        zf.writestr("bot.yaml", 'name: crasher\ncommand: "{python} bot.py"\n')
        zf.writestr("bot.py", "import sys\nsys.stderr.write('<script>alert(1)</script>\\n')\n"
                              "raise SystemExit(3)\n")
    status, out = server.upload(tokens["bob"], "crasher.zip", broken.getvalue())
    assert status == 201
    view = _wait("the crasher's verdict", lambda: _judged(server, tokens["bob"], out["id"]))
    assert view["status"] == "rejected" and view["verdict"].startswith("FAIL")
    assert "<script>alert(1)</script>" in view["check_log"]
    _, page = server.request("GET", f"/bots/{out['id']}", cookie=tokens["bob"])
    assert b"&lt;script&gt;alert(1)&lt;/script&gt;" in page and b"<script>alert" not in page
    assert "crasher" not in {r["bot"] for r in server.get("/api/leaderboard")}


def test_forms_need_their_csrf_token(ladder: tuple[Server, dict[str, str]]) -> None:
    server, tokens = ladder
    root = tokens["root"]
    form = "application/x-www-form-urlencoded"
    status, _ = server.request("POST", "/admin/pause", body=b"csrf=forged", content_type=form,
                               cookie=root)
    assert status == 403 and server.get("/api/status")["paused"] is False
    _, page = server.request("GET", "/admin", cookie=root)
    m = re.search(rb'name="csrf" value="([0-9a-f]+)"', page)
    assert m is not None
    status, _ = server.request("POST", "/admin/pause", body=b"csrf=" + m.group(1),
                               content_type=form, cookie=root)
    assert status in (200, 303) and server.get("/api/status")["paused"] is True
    # alice's own form token does not work for the admin's action
    _, alice_page = server.request("GET", "/submit", cookie=tokens["alice"])
    m2 = re.search(rb'name="csrf" value="([0-9a-f]+)"', alice_page)
    assert m2 is not None and m2.group(1) != m.group(1)
    status, _ = server.request("POST", "/admin/pause", body=b"csrf=" + m2.group(1),
                               content_type=form, cookie=tokens["alice"])
    assert status == 403 and server.get("/api/status")["paused"] is True
    server.request("POST", "/admin/pause", body=b"csrf=" + m.group(1), content_type=form,
                   cookie=root)
    assert server.get("/api/status")["paused"] is False
    assert server.request("GET", "/admin", cookie=tokens["alice"])[0] == 403


def test_an_admin_replaces_and_revokes_a_token_on_the_admin_page(
        ladder: tuple[Server, dict[str, str]]) -> None:
    server, tokens = ladder
    old = _arena("server", "user", str(server.folder), "carol").strip().splitlines()[-1]
    assert server.get("/api/status", old)  # works before
    form = "application/x-www-form-urlencoded"
    _, page = server.request("GET", "/admin", cookie=tokens["root"])
    csrf = re.search(rb'name="csrf" value="([0-9a-f]+)"', page)
    row = re.search(rb'<tr id="user-(\d+)"><td>carol</td>.*?<td class="token-state">(\w+)',
                    page, re.S)
    assert csrf is not None and row is not None and row.group(2) == b"valid"
    body = b"csrf=" + csrf.group(1) + b"&user=" + row.group(1)
    # a participant's own form token cannot do it
    _, alice_page = server.request("GET", "/submit", cookie=tokens["alice"])
    alice_csrf = re.search(rb'name="csrf" value="([0-9a-f]+)"', alice_page)
    assert alice_csrf is not None
    status, _ = server.request("POST", "/admin/token", cookie=tokens["alice"], content_type=form,
                               body=b"csrf=" + alice_csrf.group(1) + b"&user=" + row.group(1))
    assert status == 403
    assert server.upload(old, "x.zip", b"junk")[0] == 400  # still valid: refused as junk
    status, shown = server.request("POST", "/admin/token", body=body, content_type=form,
                                   cookie=tokens["root"])
    m = re.search(rb'<pre id="token">([A-Za-z0-9_-]+)</pre>', shown)
    assert status == 200 and m is not None
    new = m.group(1).decode()
    assert new != old
    assert server.upload(old, "x.zip", b"junk")[0] == 401  # the old token is revoked
    assert server.request("GET", "/submit", cookie=old)[0] == 401  # and its page session
    assert server.upload(new, "x.zip", b"junk")[0] == 400
    status, _ = server.request("POST", "/admin/revoke", body=body, content_type=form,
                               cookie=tokens["root"])
    assert status in (200, 303)
    assert server.upload(new, "x.zip", b"junk")[0] == 401
    _, page = server.request("GET", "/admin", cookie=tokens["root"])
    assert re.search(rb'<td>carol</td>.*?<td class="token-state">revoked', page, re.S)


@pytest.mark.slow  # a server of its own (its limits are low)
def test_requests_over_the_rate_limit_get_429_with_retry_after(tmp_path: Path) -> None:
    folder = tmp_path / "comp"
    tokens = _competition(folder, SETTINGS.replace(
        "rate_limit: {participant: 100000/minute, anonymous: 100000/minute}",
        "rate_limit: {participant: 5/minute, anonymous: 2 per 2 seconds}"))
    server = Server(folder)
    server.start()  # its first successful request counts against the address
    try:
        # a participant: 5 a minute, whatever the request (a 404 counts too)
        codes = [server.request("GET", "/api/bots/999", tokens["alice"])[0] for _ in range(6)]
        assert codes == [404] * 5 + [429], codes
        req = urllib.request.Request(server.url + "/api/leaderboard",
                                     headers={"Authorization": f"Bearer {tokens['alice']}"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=10)
        assert refused.value.code == 429
        assert 1 <= int(refused.value.headers["Retry-After"]) <= 60
        assert "too many requests" in json.loads(refused.value.read())["detail"]
        # per participant: bob is not limited by alice's requests; admins are not limited
        assert server.request("GET", "/api/bots/999", tokens["bob"])[0] == 404
        assert [server.request("GET", "/api/status", tokens["root"])[0]
                for _ in range(8)] == [200] * 8
        # anonymous requests (and invalid tokens) count per client address; pages answer
        # in one line of text
        codes = [server.request("GET", "/api/status", token)[0]
                 for token in (None, None, "not-a-token")]
        assert codes[-1] == 429 and 200 in codes
        req = urllib.request.Request(server.url + "/")
        with pytest.raises(urllib.error.HTTPError) as page:
            urllib.request.urlopen(req, timeout=10)
        retry = int(page.value.headers["Retry-After"])
        assert page.value.code == 429 and 1 <= retry <= 2
        assert page.value.read().decode().startswith("too many requests")
        time.sleep(retry + 0.2)  # the window moved on
        assert server.request("GET", "/api/status")[0] == 200
    finally:
        server.stop()


@pytest.mark.slow
def test_a_killed_server_resumes_and_counts_no_game_twice(tmp_path: Path) -> None:
    folder = tmp_path / "comp"
    tokens = _competition(folder, SETTINGS)
    server = Server(folder)
    server.start()
    try:
        _, a = server.upload(tokens["alice"], "random.zip", bot_archive("random", "zip"))
        _, b = server.upload(tokens["bob"], "r2.zip", bot_archive("random", "zip", name="r2"))
        # kill it while the ladder's games are being played
        _wait("games in play", lambda: server.get("/api/status")["games"].get("running"))
        import psutil

        assert server.proc is not None
        # its workers, the fork server that made them, their bots: all end with it
        pid = server.proc.pid

        def game_processes() -> Any:  # a worker, its bots: the games have really started
            found = psutil.Process(pid).children(recursive=True)
            return found if len(found) >= 3 else None

        descendants = _wait("the games' processes", game_processes, 20)
        assert len(descendants) >= 3
        server.kill()
        running = server.get  # the process is gone: nothing answers
        with pytest.raises(OSError):
            running("/api/status")
        server.start()
        _wait("the ladder after the restart", lambda: _settled(server, 4))
        status = server.get("/api/status")
        assert status["games"] == {"done": 4}
        rows = server.get("/api/leaderboard")
        assert [r["games"] for r in rows] == [4, 4]
        games = server.get("/api/games")
        assert len(games) == 4 and len({g["id"] for g in games}) == 4
        assert sorted((g["pair"], g["white_id"]) for g in games) == sorted(
            (p, w) for p in {g["pair"] for g in games} for w in (a["id"], b["id"]))
        with sqlite3.connect(folder / "arena.db") as db:  # the kill did cut a game short
            assert db.execute("SELECT max(attempts) FROM games").fetchone()[0] >= 2
    finally:
        server.stop()
    # nothing of the killed server (workers, bots) outlives it
    left = _wait("the killed server's processes to end", lambda: not _processes_in(folder), 15)
    assert left
    assert _wait("the killed server's descendants to end",
                 lambda: not [p for p in descendants if p.is_running()
                              and p.status() != psutil.STATUS_ZOMBIE], 15)


def _processes_in(folder: Path) -> list[int]:
    """Processes whose working directory or command line is inside ``folder``."""
    import psutil

    found = []
    for p in psutil.process_iter(["pid", "cwd", "cmdline"]):
        text = " ".join([p.info.get("cwd") or "", *(p.info.get("cmdline") or [])])
        if str(folder) in text:
            found.append(p.info["pid"])
    return found


# ---------------------------------------------------------------------------------------
# A participant in a real browser
# ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_participant_submits_from_the_browser_and_watches_a_game(
        ladder: tuple[Server, dict[str, str]], driver: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    server, tokens = ladder
    archive = tmp_path / "browser-bot.zip"
    archive.write_bytes(bot_archive("random", "zip", name="browser-bot"))
    driver.get(server.url + "/login")
    driver.find_element(By.ID, "token").send_keys(tokens["alice"])
    driver.find_element(By.ID, "login").click()
    _wait("the login", lambda: "Log out" in driver.page_source, 20)
    driver.get(server.url + "/submit")
    driver.find_element(By.ID, "file").send_keys(str(archive))
    driver.find_element(By.ID, "upload").click()
    _wait("the bot's page", lambda: re.search(r"/bots/\d+$", driver.current_url), 20)

    def active() -> bool:
        driver.refresh()
        return driver.find_element(By.ID, "status").text == "active"

    _wait("the browser bot's check", active)
    assert driver.find_element(By.ID, "verdict").text.startswith("PASS")
    bot_id = int(driver.current_url.rsplit("/", 1)[1])
    _wait("its games", lambda: _settled(server, 4 + 8), state=lambda: server.get("/api/status"))
    driver.get(server.url + "/")
    assert f"/bots/{bot_id}" in driver.page_source and "browser-bot" in driver.page_source
    driver.get(f"{server.url}/bots/{bot_id}")
    driver.find_element(By.CSS_SELECTOR, "a.game-link").click()
    _wait("the viewer", lambda: driver.find_elements(By.CSS_SELECTOR, "svg.board"), 10)
    assert driver.find_element(By.ID, "viewer").get_attribute("data-ply") is not None


def _live_board_matches(moves: list[str], classes: dict[str, str]) -> int:
    """The board drawn (point -> "white" | "black" | "empty") is the position after
    ``moves``, replayed here with the rules engine; returns the men on it."""
    from arena.rules import Position
    from arena.variants import get_variant

    pos = Position(get_variant("nine-mens-morris"))
    for move in moves:
        pos.push(pos.parse_move(move))
    t = pos.topology
    want = {p: "white" if pos.men[0] >> i & 1 else "black" if pos.men[1] >> i & 1 else "empty"
            for i, p in enumerate(t.points)}
    assert classes == want, (moves, classes)
    return sum(c != "empty" for c in want.values())


@pytest.mark.slow
def test_a_game_in_progress_moves_on_its_live_board(driver: Any, tmp_path: Path) -> None:
    """A slow bot's ladder game opened while it is played: without JavaScript a page that
    reloads itself with the board so far; in the browser, a board that follows the moves
    without reloading."""
    from selenium.webdriver.common.by import By

    folder = tmp_path / "comp"
    tokens = _competition(folder, SETTINGS.replace("movetime: 50", "movetime: 3000")
                          .replace("pairs: 2", "pairs: 1").replace("workers: 2", "workers: 1"))
    server = Server(folder)
    server.start()
    try:
        _, slow = server.upload(tokens["alice"], "slow.zip",
                                bot_archive("random", "zip", name="slow", slowable=True))
        assert _wait("the slow bot's check",
                     lambda: _judged(server, tokens["alice"], slow["id"]))["status"] == "active"
        for script in (folder / "bots" / str(slow["id"])).rglob("bot.py"):
            script.with_name("delay").write_text("0.4")  # checked at full speed; slow now
        _, fast = server.upload(tokens["bob"], "random.zip", bot_archive("random", "zip"))
        assert _wait("the fast bot's check",
                     lambda: _judged(server, tokens["bob"], fast["id"]))["status"] == "active"

        def being_played() -> Any:  # "running" games include those waiting for a worker
            for g in server.get("/api/games"):
                if g["status"] == "running":
                    live = server.get(f"/api/games/{g['id']}/live")
                    if live["plies"] >= 2:
                        return live
            return None

        gid = _wait("a game in play and its first moves", being_played, 30)["id"]

        # without JavaScript: the page reloads itself and draws the board after its moves
        status, page = server.request("GET", f"/games/{gid}")
        text = page.decode()
        assert status == 200 and '<noscript><meta http-equiv="refresh" content="2">' in text
        moves = re.findall(r"<li>([a-g1-7x,-]+)</li>", text)
        drawn = dict(re.findall(r'<circle id="pt-([a-g][1-7])" class="(\w+)"', text))
        assert len(moves) >= 2 and len(drawn) == 24
        assert f'data-ply="{len(moves)}"' in text
        _live_board_matches(moves, drawn)
        # the live state is read at most every 0.4 s whoever asks (the page just now read
        # the board itself): it catches up with the page within a moment
        live = _wait("the live state to show the page's moves", lambda: (
            lambda lv: lv if len(lv["moves"]) >= len(moves) else None)(
                server.get(f"/api/games/{gid}/live")), 10)
        assert live["status"] == "running" and live["moves"][:len(moves)] == moves
        assert server.request("GET", "/api/games/99999/live")[0] == 404

        # in the browser: the board moves as the game is played, without a reload
        driver.get(f"{server.url}/games/{gid}")
        board = driver.find_element(By.ID, "live-board")
        first = int(board.get_attribute("data-ply"))
        driver.execute_script("window.notReloaded = true;")
        _wait("the board to move", lambda: int(driver.find_element(
            By.ID, "live-board").get_attribute("data-ply")) >= first + 3, 30)
        assert driver.execute_script("return window.notReloaded === true;")
        shown = driver.execute_script(
            "var c = {}; document.querySelectorAll('#live-board circle').forEach("
            "function (e) { c[e.id.slice(3)] = e.getAttribute('class'); });"
            "return {moves: Array.from(document.querySelectorAll('#moves li'))"
            ".map(function (li) { return li.textContent; }), classes: c,"
            " ply: document.getElementById('ply').textContent};")  # one look: it moves on
        assert len(shown["moves"]) >= first + 3
        assert _live_board_matches(shown["moves"], shown["classes"]) >= 1
        assert shown["ply"].strip() == str(len(shown["moves"]))
    finally:
        server.stop()


def _archive(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
    return buf.getvalue()


@pytest.mark.slow
def test_hostile_uploads_are_checked_aside_and_the_ladder_goes_on(tmp_path: Path) -> None:
    """A build that never ends (stopped at check_timeout, its process gone), a bot that
    spins and one that floods stderr are checked two at a time in processes of their own,
    while two good uploads are checked, play their ladder games, and the site answers."""
    import psutil

    folder = tmp_path / "comp"
    tokens = _competition(folder, SETTINGS.replace("pairs: 2", "pairs: 1").replace(
        "{movetime: 50}", "{movetime: 50, handshake: 3000}")  # the spinners fail sooner
                          + "check_workers: 2\ncheck_timeout: 5\n")
    server = Server(folder)
    server.start()
    manifest = 'name: {}\ncommand: "{{python}} bot.py"\n'
    naptime = 600 + os.getpid() % 10_000  # this run's sleeper, not another test run's
    try:
        hostile = {
            "sleeper": {"bot.yaml": manifest.format("sleeper")
                        + f"build: sleep {naptime}\nbuild_timeout: 3600\n", "bot.py": "\n"},
            "spinner": {"bot.yaml": manifest.format("spinner"), "bot.py": "while True:\n    pass\n"},
            "chatter": {"bot.yaml": manifest.format("chatter"),
                        "bot.py": "import sys\nwhile True:\n    sys.stderr.write('x' * 65536)\n"},
        }
        ids = {}
        for name, files in hostile.items():
            status, out = server.upload(tokens["bob"], f"{name}.zip", _archive(files))
            assert status == 201, out
            ids[name] = out["id"]

        def sleeping() -> list[int]:
            return [p.pid for p in psutil.process_iter(["cmdline"])
                    if f"sleep {naptime}" in " ".join(p.info["cmdline"] or [])]

        assert _wait("the never-ending build to start", sleeping, 20)
        started = time.monotonic()
        _, a = server.upload(tokens["alice"], "random.zip", bot_archive("random", "zip"))
        _, b = server.upload(tokens["root"], "greedy.zip", bot_archive("greedy", "zip"))
        slowest = 0.0
        while _settled(server, 2) is None:  # the site answers while the checks run
            t = time.monotonic()
            assert server.request("GET", "/")[0] == 200
            slowest = max(slowest, time.monotonic() - t)
            assert time.monotonic() - started < 90, (
                server.get("/api/status"), _judged(server, tokens["alice"], a["id"]),
                _judged(server, tokens["root"], b["id"]))
            time.sleep(0.2)
        assert slowest < 5, slowest
        rows = server.get("/api/leaderboard")
        assert {(r["bot"], r["games"]) for r in rows} == {("random", 2), ("greedy", 2)}
        views = {name: _wait(f"{name}'s verdict", lambda: _judged(server, tokens["bob"], i))
                 for name, i in ids.items()}
        assert all(v["status"] == "rejected" for v in views.values()), views
        assert "longer than 5 s (check_timeout, its own time" in views["sleeper"]["verdict"]
        assert views["spinner"]["verdict"].startswith("FAIL")
        assert views["chatter"]["verdict"].startswith("FAIL")
        assert len(views["chatter"]["check_log"]) < 200_000
        # the never-ending build was stopped with its check's process
        assert _wait("the never-ending build to end", lambda: not sleeping(), 15)
    finally:
        server.stop()
