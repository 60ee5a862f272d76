"""The competition server's web layer against hostile and careless clients, on real
``arena server run`` processes (tests/test_server.py's :class:`Server`) over real SQLite
files, with the judge paused (nothing here needs a bot to be judged):

* malformed input to every route the app has (enumerated from ``create_app``: a new route
  without cases fails the test) — bad ids, bad multipart, wrong methods, oversize fields and
  headers, odd encodings, garbage cookies and Authorization headers: never a 5xx, the
  security headers on every answer the app gives, and no file or bot row left by a refused
  upload;
* the request rate limits: a flood from one address gets 429 while a token from the same
  address goes on, ``X-Forwarded-For`` believed from trusted proxies only, a class of 40
  behind one address within the defaults, and a live game watched for one request;
* the login form's CSRF protection (a cross-site login is refused, the forms' tokens change
  at each login), the admin's cancel and the API's retire;
* in headless Chromium: the pages, the live board and the viewer work under the
  Content-Security-Policy (no violation reported), and a cross-site login is refused.

Games are made by hand in the database (rows and a ply file, as the judge's workers write
them) so that the live board can be driven move by move."""

from __future__ import annotations

import concurrent.futures
import http.server
import json
import re
import socket
import threading
import time
import zipfile
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence

import pytest

pytest.importorskip("fastapi", reason="the server extra is not installed "
                                      "(pip install -e '.[server]')")
pytest.importorskip("sqlalchemy", reason="the server extra is not installed")
pytest.importorskip("uvicorn", reason="the server extra is not installed")

from tests.synth_records import make_record  # noqa: E402
from tests.test_server import Server, _competition, bot_archive  # noqa: E402

SITE = """name: web ladder
upload: {max_bytes: 200000, per_hour: 1000}
time: {movetime: 50}
trusted_proxies: [127.0.0.2]
"""
#: low limits, to be reached: 5 anonymous requests a minute per address, 20 per participant
LIMITED = SITE + "rate_limit: {participant: 20/minute, anonymous: 5/minute}\n"
SECURITY = {"x-frame-options": "DENY", "x-content-type-options": "nosniff",
            "referrer-policy": "same-origin"}
FORM = "application/x-www-form-urlencoded"


# ---------------------------------------------------------------------------------------
# A raw HTTP client: any bytes, any source address on the loopback network
# ---------------------------------------------------------------------------------------


@dataclass
class Reply:
    status: int  # 0: the connection was dropped without an answer
    headers: dict[str, list[str]] = field(default_factory=dict)
    body: bytes = b""

    def header(self, name: str) -> str:
        return (self.headers.get(name.lower()) or [""])[-1]

    def cookies(self) -> dict[str, str]:
        """Set-Cookie: name -> the whole header (value and attributes)."""
        return {c.split("=", 1)[0]: c for c in self.headers.get("set-cookie", [])}


def _b(x: bytes | str) -> bytes:
    return x if isinstance(x, bytes) else x.encode("utf-8")


def send(port: int, method: bytes | str, path: bytes | str,
         headers: Sequence[tuple[bytes | str, bytes | str]] = (), body: bytes = b"", *,
         source: str = "127.0.0.1", host: bool = True, timeout: float = 30) -> Reply:
    """One request on a new connection from ``source`` (any 127.x address), written as
    given (no checks, no encoding); the answer's status, headers and body (an event
    stream's first bytes only)."""
    names = {_b(k).lower() for k, _ in headers}
    lines = [_b(method) + b" " + _b(path) + b" HTTP/1.1"]
    if host:
        lines.append(b"Host: 127.0.0.1:%d" % port)
    lines += [_b(k) + b": " + _b(v) for k, v in headers]
    if b"content-length" not in names and b"transfer-encoding" not in names and (
            body or _b(method) == b"POST"):
        lines.append(b"Content-Length: %d" % len(body))
    lines.append(b"Connection: close")
    data = b"\r\n".join(lines) + b"\r\n\r\n" + body
    with socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                  source_address=(source, 0)) as sock:
        try:
            sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # answered (and closed) before reading it all
        buf = b""
        streaming = False
        try:  # the head, then (unless a stream's) the body until the server closes
            while not streaming:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                buf += chunk
                head = buf.partition(b"\r\n\r\n")[0].lower()
                streaming = b"\r\n\r\n" in buf and (
                    b"content-type: text/event-stream" in head or _b(method) == b"HEAD")
        except ConnectionResetError:  # answered early, our body unread: what came is it
            pass
    head, sep, rest = buf.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/") or not sep:
        return Reply(0, body=buf)
    first, *header_lines = head.decode("latin-1").split("\r\n")
    reply = Reply(int(first.split()[1]), body=rest)
    for line in header_lines:
        name, _, value = line.partition(":")
        reply.headers.setdefault(name.strip().lower(), []).append(value.strip())
    return reply


def multipart(parts: Sequence[tuple[bytes, Optional[bytes], bytes]],
              boundary: bytes = b"arena-boundary", end: bool = True) -> tuple[bytes, str]:
    """A multipart body of (field name, file name or None, data) parts, written raw."""
    out = b""
    for name, filename, data in parts:
        disposition = b'form-data; name="' + name + b'"'
        if filename is not None:
            disposition += b'; filename="' + filename + b'"'
        out += b"--" + boundary + b"\r\nContent-Disposition: " + disposition + b"\r\n"
        if filename is not None:
            out += b"Content-Type: application/octet-stream\r\n"
        out += b"\r\n" + data + b"\r\n"
    if end:
        out += b"--" + boundary + b"--\r\n"
    return out, f"multipart/form-data; boundary={boundary.decode('latin-1')}"


def _zip(entries: list[tuple[str, bytes]]) -> bytes:
    import warnings

    buf = BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a duplicate name
        with zipfile.ZipFile(buf, "w") as zf:
            for name, data in entries:
                zf.writestr(name, data)
    return buf.getvalue()


BOT_YAML = b'name: tiny\ncommand: "{python} bot.py"\n'
#: archives that gave a 500 before issue 23: an entry twice, a file and a folder of one name
HOSTILE_ZIPS = {
    "twice.zip": _zip([("bot.yaml", BOT_YAML), ("bot.py", b"1"), ("bot.py", b"2")]),
    "file-and-folder.zip": _zip([("bot.yaml", BOT_YAML), ("a", b"x"), ("a/b", b"y")]),
    "folder-and-file.zip": _zip([("bot.yaml", BOT_YAML), ("a/", b""), ("a", b"x")]),
}


# ---------------------------------------------------------------------------------------
# Competitions with hand-made games
# ---------------------------------------------------------------------------------------


def legal_moves(n: int, seed: int = 0) -> list[str]:
    """``n`` plies of a legal nine men's morris game (or fewer, if it ends)."""
    from arena.rules import Position
    from arena.variants import get_variant

    pos = Position(get_variant("nine-mens-morris"))
    out: list[str] = []
    for i in range(n):
        moves = pos.legal_moves()
        if not moves or pos.is_game_over():
            break
        move = moves[(i * 7 + seed) % len(moves)]
        out.append(str(move))
        pos.push(move)
    return out


class Games:
    """Bots and games written straight into a competition's database (as the judge's
    queue would have them), and a running game's ply file (as its worker writes it)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.made = 0

    def _session(self) -> Any:
        from arena.server.service import Competition

        return Competition(self.folder)

    def bot(self, owner: str, status: str = "active") -> int:
        from sqlalchemy import select

        from arena.server.models import Bot, User

        comp = self._session()
        try:
            with comp.sessions.begin() as s:
                user = s.scalar(select(User).where(User.name == owner))
                self.made += 1
                bot = Bot(owner_id=user.id, name=f"hand{self.made}", version=1, status=status,
                          folder="bots/none")
                s.add(bot)
                s.flush()
                return int(bot.id)
        finally:
            comp.close()

    def game(self, status: str, moves: Sequence[str] = ()) -> int:
        """A game between two new bots (alice's white, bob's black)."""
        from arena.server.models import Game

        white, black = self.bot("alice"), self.bot("bob")
        comp = self._session()
        try:
            with comp.sessions.begin() as s:
                game = Game(white_id=white, black_id=black, variant="nine-mens-morris", pair=1,
                            game=0, seed=1, status=status)
                if status == "done":
                    record = make_record(f"hand{self.made - 1}#{white}", f"hand{self.made}#{black}",
                                         1.0, moves=list(moves))
                    game.record, game.result = record.to_json(), record.result
                s.add(game)
                s.flush()
                return int(game.id)
        finally:
            comp.close()

    def ply_file(self, game_id: int) -> Path:
        from arena.server.live import live_path

        path = live_path(self.folder, game_id)
        path.parent.mkdir(exist_ok=True)
        return path

    def play(self, game_id: int, moves: Sequence[str]) -> None:
        with open(self.ply_file(game_id), "a", encoding="utf-8") as f:
            for move in moves:
                f.write(json.dumps({"move": move, "ms": 1.0}) + "\n")

    def finish(self, game_id: int, moves: Sequence[str]) -> None:
        """The game's record stored, ``done`` (as the judge's finish_game)."""
        from arena.server.models import Game

        comp = self._session()
        try:
            with comp.sessions.begin() as s:
                game = s.get(Game, game_id)
                record = make_record("w", "b", 1.0, moves=list(moves))
                game.status, game.record, game.result = "done", record.to_json(), record.result
        finally:
            comp.close()
        self.ply_file(game_id).unlink(missing_ok=True)


def _start(folder: Path, settings: str) -> tuple[Server, dict[str, str]]:
    """A competition (alice, bob, root the admin) served with its judge paused."""
    from arena.server.service import OPERATOR, Competition

    tokens = _competition(folder, settings)
    comp = Competition(folder)
    comp.set_paused(True, OPERATOR)
    comp.close()
    server = Server(folder)
    server.start()
    return server, tokens


@dataclass
class Site:
    server: Server
    tokens: dict[str, str]
    games: Games
    done: int  # a finished game
    running: int  # a game being played (moves in its ply file)
    queued: int

    @property
    def port(self) -> int:
        return self.server.port


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The default rate limits; 127.0.0.2 is a trusted proxy."""
    folder = tmp_path_factory.mktemp("web") / "comp"
    server, tokens = _start(folder, SITE)
    try:
        games = Games(folder)
        done = games.game("done", legal_moves(12))
        running = games.game("running")
        games.play(running, legal_moves(6))
        yield Site(server, tokens, games, done, running, games.game("queued"))
    finally:
        server.stop()


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """Low limits (:data:`LIMITED`); 127.0.0.2 is a trusted proxy."""
    folder = tmp_path_factory.mktemp("web-limited") / "comp"
    server, tokens = _start(folder, LIMITED)
    try:
        games = Games(folder)
        yield Site(server, tokens, games, games.game("done", legal_moves(8)), 0, 0)
    finally:
        server.stop()


def _secured(reply: Reply) -> Optional[str]:
    """What is wrong with an answer's security headers (None: nothing)."""
    for name, value in SECURITY.items():
        if reply.header(name) != value:
            return f"{name}: {reply.header(name)!r}"
    csp = reply.header("content-security-policy")
    if not re.search(r"default-src 'none'.*script-src 'nonce-[A-Za-z0-9_-]+'.*"
                     r"frame-ancestors 'none'", csp):
        return f"content-security-policy: {csp!r}"
    return None


def login(site: Site, who: str, source: str = "127.0.0.1",
          extra: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
    """Log ``who`` in through the login form (GET /login, then POST it with its cookie);
    returns the cookies the browser would keep (token, session)."""
    form = send(site.port, "GET", "/login", source=source, headers=extra)
    assert form.status == 200, form
    nonce = form.cookies()["arena_login"].split(";")[0].split("=", 1)[1]
    token = _form_token(form.body)
    done = send(site.port, "POST", "/login", [
        ("Content-Type", FORM), ("Cookie", f"arena_login={nonce}"), *extra],
        f"token={site.tokens[who]}&csrf={token}".encode(), source=source)
    assert done.status == 303, (done.status, done.body[:300])
    cookies = done.cookies()
    return {"arena_token": cookies["arena_token"].split(";")[0].split("=", 1)[1],
            "arena_session": cookies["arena_session"].split(";")[0].split("=", 1)[1],
            "_set_cookie": cookies["arena_token"]}


def _cookie(cookies: dict[str, str]) -> str:
    return "; ".join(f"{k}={v}" for k, v in cookies.items() if not k.startswith("_"))


def _form_token(page: bytes) -> str:
    m = re.search(rb'name="csrf" value="([0-9a-f]+)"', page)
    assert m is not None, page[:500]
    return m.group(1).decode()


# ---------------------------------------------------------------------------------------
# Malformed input to every route
# ---------------------------------------------------------------------------------------


@dataclass
class Case:
    """One request of the sweep, and what its answer may be."""

    what: str
    method: bytes | str
    path: bytes | str
    headers: list[tuple[bytes | str, bytes | str]] = field(default_factory=list)
    body: bytes = b""
    expect: Optional[set[int]] = None  # None: anything but a 5xx
    #: malformed HTTP that the server's HTTP layer answers (400) before the app sees it
    protocol: bool = False
    source: str = "127.0.0.1"
    host: bool = True


#: query strings of the games list: filters and pages, odd and out of range
GAME_QUERIES = ["page=2", "page=999999999", "page=-1", "page=abc", "page=" + "9" * 40,
                "bot=1", "bot=99999999999999999999999", "bot=x", "participant=alice",
                "participant=%00%FF", "participant=" + "p" * 300, "variant=nine-mens-morris",
                "variant=nope", "kind=final", "kind=match", "kind=%27;drop",
                "bot=1&participant=bob&variant=nine-mens-morris&kind=ladder&page=3"]
#: bodies of POST /api/matches that are no test match (alice's token: never a 5xx)
MATCH_BODIES = [b"", b"null", b"[]", b"{}", b'{"bot": "1", "opponent": "2"}',
                b'{"bot": 1e400, "opponent": 2}', b'{"bot": NaN, "opponent": Infinity}',
                b'{"bot": 99999999999999999999999, "opponent": -1}',
                b'{"bot": 1, "opponent": 1}', b'{"bot": true, "opponent": false}',
                b'{"bot": 1, "opponent": 2, "variant": {"a": [1]}}',
                b'{"bot": 1, "opponent": 2, "variant": "no-such-game"}',
                b"[" * 3000 + b"]" * 3000, b"\xff\xfe{}", b'{"bot": 1' + b" " * 5000 + b"}"]
NUMERIC_BAD_IDS = ["0", "-1", "-9223372036854775808", "9223372036854775808",
                   "18446744073709551616", "99999999999999999999999", "9" * 400]
ODD_IDS = ["abc", "1.5", "%00", "1%00", "%FF", "%FF%FE", "1e3", "+1", "%201", "0x10", "%D9%A3",
           "1_0", "9" * 5000, "-0", "%2e%2e", "%0a", "1;x", "%E2%80%AE1"]
METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE", "FOO"]


def _header_cases(site: Site, path: str, method: str) -> list[Case]:
    """Garbage credentials, odd encodings, oversize and missing headers on one request."""
    alice = site.tokens["alice"]
    body = b"csrf=x" if method == "POST" else b""
    form = [("Content-Type", FORM)] if method == "POST" else []
    out = []
    for label, headers in (
            ("no credentials", []),
            ("a garbage cookie", [("Cookie", "arena_token=garbage")]),
            ("a huge cookie", [("Cookie", "arena_token=" + "x" * 6000)]),
            ("a cookie of non-UTF-8 bytes",
             [(b"Cookie", b"arena_token=\xff\xfe\x80; a=\xc3\x28")]),
            ("percent-encoded NULs in a cookie",
             [("Cookie", "arena_token=%00%00; arena_session=%00")]),
            ("garbage session and login cookies",
             [("Cookie", f"arena_token={alice}; arena_session=../../x; arena_login=\x01")]),
            ("a broken cookie header", [("Cookie", ";;;=;=;arena_token;==")]),
            ("a valid cookie without its session", [("Cookie", f"arena_token={alice}")]),
            ("Bearer without a token", [("Authorization", "Bearer")]),
            ("Bearer and spaces", [("Authorization", "Bearer     ")]),
            ("a long bearer token", [("Authorization", "Bearer " + "x" * 5000)]),
            ("a Basic authorization", [("Authorization", "Basic YWxhZGRpbjpvcGVuc2VzYW1l")]),
            ("a non-UTF-8 bearer token", [(b"Authorization", b"Bearer \xff\xfe\xfd\x80")]),
            ("two authorizations", [("Authorization", f"Bearer {alice}"),
                                    ("Authorization", "Bearer wrong")]),
            ("a lower-case scheme", [("Authorization", f"bearer   {alice}")]),
            ("an invalid UTF-8 query", []),
            ("percent-encoded NULs in the query", []),
            ("a long query", []),
            ("200 headers", [(f"X-Extra-{i}", "1") for i in range(200)]),
            ("an odd Accept", [("Accept", "text/event-stream, */*;q=\x7f")]),
            ("a forwarded header from an untrusted peer",
             [("X-Forwarded-For", "\xff, ::1, 1.2.3.4:5, [::1]"), ("X-Forwarded-Proto", "gopher")]),
            ("garbage forwarded headers from a trusted proxy",
             [("X-Forwarded-For", "not an address, , ,"), ("X-Forwarded-Proto", "")]),
    ):
        p = path
        if label == "an invalid UTF-8 query":
            p = path + "?%FF%FE=%C3%28&x=%80"
        elif label == "percent-encoded NULs in the query":
            p = path + "?a=%00&%00=" + "%00" * 500
        elif label == "a long query":
            p = path + "?q=" + "x" * 6000
        source = "127.0.0.2" if "trusted proxy" in label else "127.0.0.1"
        out.append(Case(f"{method} {path}: {label}", method, p, [*form, *headers], body,
                        source=source))
    out += [
        Case(f"{method} {path}: a 70 KB header", method, path, [("X-Big", "a" * 70_000)],
             protocol=True),
        Case(f"{method} {path}: no Host", method, path, host=False, protocol=True),
        Case(f"{method} {path}: a non-UTF-8 Host", method, path, [(b"Host", b"\xff\xfe")],
             host=False),
    ]
    return out


def _body_cases(site: Site, path: str, auth: list[tuple[str, str]], csrf: str) -> list[Case]:
    """Broken, odd and oversize bodies for a POST route (``auth``: its credentials;
    ``csrf``: a valid form token for them, or "")."""
    big = 200_000 + 64 * 1024  # the site's body limit: max_bytes and the framing
    out = [
        Case("no body", "POST", path, [*auth], b""),
        Case("a chunked body (no Content-Length)", "POST", path,
             [*auth, ("Transfer-Encoding", "chunked")], b"3\r\nabc\r\n0\r\n\r\n", {411}),
        Case("a Content-Length over the limit", "POST", path,
             [*auth, ("Content-Length", str(big + 1)), ("Content-Type", FORM)], b"", {413}),
        Case("a Content-Length that is not a number", "POST", path,
             [*auth, ("Content-Length", "12abc")], b"", protocol=True),
        Case("a negative Content-Length", "POST", path,
             [*auth, ("Content-Length", "-5")], b"", protocol=True),
        Case("two Content-Lengths", "POST", path,
             [*auth, ("Content-Length", "3"), ("Content-Length", "4")], b"abc", protocol=True),
        Case("form fields of invalid UTF-8", "POST", path, [*auth, ("Content-Type", FORM)],
             b"csrf=%FF%FE&token=%C3%28&bot=%FF&user=%80&csrf=" + csrf.encode()),
        Case("raw invalid UTF-8 in a form", "POST", path, [*auth, ("Content-Type", FORM)],
             b"csrf=\xff\xfe&token=\xc3\x28\x00&bot=\x80"),
        Case("percent-encoded NULs in a form", "POST", path, [*auth, ("Content-Type", FORM)],
             b"csrf=%00&token=%00%00&bot=1%00&user=%00"),
        Case("an oversize form field", "POST", path, [*auth, ("Content-Type", FORM)],
             b"token=" + b"a" * 250_000 + b"&csrf=" + csrf.encode()),
        Case("ids out of range in a form", "POST", path, [*auth, ("Content-Type", FORM)],
             f"csrf={csrf}&bot=99999999999999999999999&user=-1".encode()),
        Case("non-numeric ids in a form", "POST", path, [*auth, ("Content-Type", FORM)],
             f"csrf={csrf}&bot=abc&user=1e9".encode()),
        Case("JSON instead of a form", "POST", path,
             [*auth, ("Content-Type", "application/json")], b'{"csrf": [1, {"a": null}]}'),
        Case("a body of a made-up type", "POST", path,
             [*auth, ("Content-Type", "text/x-\xff")], b"\x00\x01\x02"),
        Case("a form of 3000 fields", "POST", path, [*auth, ("Content-Type", FORM)],
             b"&".join(b"f%d=1" % i for i in range(3000))),
    ]
    zip_ok = _zip([("bot.yaml", b"name: [unclosed\n")])  # a zip whose bot.yaml is broken
    parts: list[tuple[str, Sequence[tuple[bytes, Optional[bytes], bytes]], dict[str, Any]]] = [
        ("a file", [(b"file", b"a.zip", zip_ok)], {}),
        ("the wrong field name", [(b"upload", b"a.zip", zip_ok)], {}),
        ("several files", [(b"file", b"a.zip", zip_ok), (b"file", b"b.zip", zip_ok),
                           (b"file", b"c.tar.gz", b"\x1f\x8b")], {}),
        ("an empty file", [(b"file", b"a.zip", b"")], {}),
        ("a file without a name", [(b"file", b"", zip_ok)], {}),
        ("a 100 KB file name", [(b"file", b"x" * 100_000 + b".zip", zip_ok)], {}),
        ("a non-UTF-8 file name", [(b"file", b"\xff\xfe\x80.zip", zip_ok)], {}),
        ("a file name with NULs and quotes", [(b"file", b"a\x00b\\\".zip", zip_ok)], {}),
        ("a field of invalid UTF-8", [(b"file", b"a.zip", zip_ok), (b"csrf", None, b"\xff\xfe")],
         {}),
        ("a field name of invalid UTF-8", [(b"\xff\xfe", None, b"x"), (b"file", b"a.zip", zip_ok)],
         {}),
        ("an oversize text field", [(b"file", b"a.zip", zip_ok), (b"token", None, b"t" * 250_000)],
         {}),
        ("a truncated body", [(b"file", b"a.zip", zip_ok)], {"end": False}),
        ("a 100-character boundary", [(b"file", b"a.zip", zip_ok)], {"boundary": b"b" * 100}),
        ("a tar.gz that is not one", [(b"file", b"x.tar.gz", b"\x1f\x8b\x08junk")], {}),
        *[(f"a hostile {name}", [(b"file", name.encode(), data)], {})
          for name, data in HOSTILE_ZIPS.items()],
    ]
    for label, fields, options in parts:
        fields = [*fields, (b"csrf", None, csrf.encode())] if csrf else list(fields)
        body, ctype = multipart(fields, **options)
        if label == "a truncated body":
            body = body[:len(body) // 2]
        out.append(Case(f"multipart: {label}", "POST", path,
                        [*auth, ("Content-Type", ctype)], body))
    body, _ = multipart([(b"file", b"a.zip", zip_ok)])
    out += [
        Case("multipart without a boundary", "POST", path,
             [*auth, ("Content-Type", "multipart/form-data")], body),
        Case("multipart with an empty boundary", "POST", path,
             [*auth, ("Content-Type", "multipart/form-data; boundary=")], body),
        Case("multipart with another boundary", "POST", path,
             [*auth, ("Content-Type", "multipart/form-data; boundary=other")], body),
        Case("multipart of garbage", "POST", path,
             [*auth, ("Content-Type", "multipart/form-data; boundary=arena-boundary")],
             b"--arena-boundary\r\n\xff\xfe\x00garbage\r\n\r\n\r\n--arena-boundary"),
    ]
    for case in out:
        case.what = f"POST {path}: {case.what}"
    return out


def _route_cases(site: Site, page_auth: list[tuple[str, str]], alice_csrf: str,
                 root_auth: list[tuple[str, str]], root_csrf: str) -> dict[str, list[Case]]:
    """The sweep's cases by route (path template as the app has it)."""
    bearer = [("Authorization", f"Bearer {site.tokens['bob']}")]
    alice_bearer = [("Authorization", f"Bearer {site.tokens['alice']}")]
    cases: dict[str, list[Case]] = {}

    def ids(template: str, method: str, auth: list[tuple[str, str]]) -> list[Case]:
        out = []
        for i in NUMERIC_BAD_IDS:  # numbers that are nobody's id: 404, whoever asks
            for a in ([], auth):
                out.append(Case(f"{method} {template} id {i[:30]}", method,
                                re.sub(r"\{\w+\}", i, template), list(a),
                                b"csrf=x" if method == "POST" else b"",
                                {401} if method == "POST" and not a else {404}))
        for i in ODD_IDS:
            for a in ([], auth):
                out.append(Case(f"{method} {template} id {i[:30]}", method,
                                re.sub(r"\{\w+\}", i, template), list(a)))
        return out

    def add(template: str, *more: list[Case]) -> None:
        cases[template] = [c for group in more for c in group]

    def everything(template: str, path: str, method: str) -> list[Case]:
        out = [Case(f"{m} {path}", m, path, [], b"x" if m in ("POST", "PUT", "PATCH") else b"")
               for m in METHODS]
        return out + _header_cases(site, path, method)

    add("/api/bots", everything("/api/bots", "/api/bots", "POST"),
        everything("/api/bots", "/api/bots", "GET"),
        _body_cases(site, "/api/bots", bearer, ""),
        _body_cases(site, "/api/bots", [], ""),
        [Case("GET /api/bots as bob", "GET", "/api/bots", bearer, expect={403}),
         Case("GET /api/bots as nobody", "GET", "/api/bots", [], expect={401}),
         Case("GET /api/bots as root", "GET", "/api/bots", root_auth, expect={200})])
    add("/api/bots/{bot_id}/entry", ids("/api/bots/{bot_id}/entry", "POST", bearer),
        everything("/api/bots/{bot_id}/entry", "/api/bots/1/entry", "POST"),
        _body_cases(site, "/api/bots/1/entry", bearer, ""))
    add("/bots/{bot_id}/entry", ids("/bots/{bot_id}/entry", "POST", page_auth),
        everything("/bots/{bot_id}/entry", "/bots/1/entry", "POST"),
        _body_cases(site, "/bots/1/entry", page_auth, alice_csrf))
    add("/api/bots/{bot_id}", ids("/api/bots/{bot_id}", "GET", alice_bearer),
        everything("/api/bots/{bot_id}", "/api/bots/1", "GET"))
    add("/api/bots/{bot_id}/retire", ids("/api/bots/{bot_id}/retire", "POST", bearer),
        everything("/api/bots/{bot_id}/retire", "/api/bots/1/retire", "POST"),
        _body_cases(site, "/api/bots/1/retire", bearer, ""))
    for simple in ("/api/leaderboard", "/api/games", "/api/status", "/", "/games", "/final",
                   "/api/final"):
        add(simple, everything(simple, simple, "GET"),
            [Case(f"GET {simple}: a cookie session", "GET", simple, page_auth)],
            [Case(f"GET {simple}?{q[:30]}", "GET", f"{simple}?{q}", expect={200})
             for q in GAME_QUERIES if simple in ("/games", "/api/games")])
    add("/api/bots/{bot_id}/archive", ids("/api/bots/{bot_id}/archive", "GET", alice_bearer),
        everything("/api/bots/{bot_id}/archive", "/api/bots/1/archive", "GET"))
    add("/api/matches", everything("/api/matches", "/api/matches", "POST"),
        _body_cases(site, "/api/matches", bearer, ""),
        [Case(f"POST /api/matches: {body[:40]!r}", "POST", "/api/matches",
              [*alice_bearer, ("Content-Type", "application/json")], body)
         for body in MATCH_BODIES])
    add("/matches", everything("/matches", "/matches", "POST"),
        _body_cases(site, "/matches", page_auth, alice_csrf),
        [Case("POST /matches: a test match of someone else's bot", "POST", "/matches",
              [*page_auth, ("Content-Type", FORM)],
              f"csrf={alice_csrf}&bot=1&opponent=2&variant=x".encode())])
    for template in ("/api/games/{game_id}", "/api/games/{game_id}/live",
                     "/api/games/{game_id}/live/events", "/games/{game_id}"):
        real = [Case(f"GET {template} game {g}", "GET", template.replace("{game_id}", str(g)),
                     a, expect={200}) for g in (site.done, site.running, site.queued)
                for a in ([], page_auth)
                if not (template == "/api/games/{game_id}" and g != site.done)]
        add(template, ids(template, "GET", page_auth + alice_bearer),
            everything(template, template.replace("{game_id}", str(site.done)), "GET"), real)
    add("/login", everything("/login", "/login", "POST"), everything("/login", "/login", "GET"),
        _body_cases(site, "/login", [], ""))
    add("/logout", everything("/logout", "/logout", "POST"),
        _body_cases(site, "/logout", page_auth, ""))
    add("/submit", everything("/submit", "/submit", "POST"),
        everything("/submit", "/submit", "GET"),
        _body_cases(site, "/submit", page_auth, alice_csrf),
        _body_cases(site, "/submit", page_auth, ""))
    add("/bots/{bot_id}", ids("/bots/{bot_id}", "GET", page_auth),
        everything("/bots/{bot_id}", "/bots/1", "GET"))
    add("/admin", everything("/admin", "/admin", "GET"),
        [Case("GET /admin as root", "GET", "/admin", root_auth, expect={200})])
    actions = ["pause", "retire", "cancel", "rejudge", "token", "revoke", "rerun", "nope", "%00",
               "%FF",
               "x" * 3000, "..%2f..%2fapi", "retire%00"]
    add("/admin/{action}",
        [Case(f"POST /admin/{a[:20]} as {who}", "POST", f"/admin/{a}",
              [*auth, ("Content-Type", FORM)],
              f"csrf={token}&bot=99999999999999999999&user=-5".encode(),
              {404} if (who == "root" and token and "%" not in a and "." not in a)
              else None)
         for a in actions
         for who, auth, token in (("nobody", [], ""), ("alice", page_auth, alice_csrf),
                                  ("root", root_auth, root_csrf), ("root", root_auth, ""))],
        everything("/admin/{action}", "/admin/pause", "POST"),
        _body_cases(site, "/admin/nope", root_auth, root_csrf),
        _body_cases(site, "/admin/retire", page_auth, alice_csrf))
    return cases


def test_no_malformed_request_gets_a_5xx_on_any_route(site: Site) -> None:
    """Every route the app has gets bad ids, bad bodies, wrong methods, oversize and odd
    headers: no 5xx, the security headers on every answer of the app, the expected codes
    where there is one, and a refused upload leaves no file and no row."""
    import sqlite3

    from starlette.routing import Route

    from arena.server.service import Competition
    from arena.server.web import create_app

    comp = Competition(site.server.folder)
    try:
        app = create_app(comp)
    finally:
        comp.close()
    routes = {r.path: set(r.methods or ()) for r in app.routes if isinstance(r, Route)}
    alice = login(site, "alice")
    root = login(site, "root")
    page_auth = [("Cookie", _cookie(alice))]
    root_auth = [("Cookie", _cookie(root))]
    alice_csrf = _form_token(send(site.port, "GET", "/submit", page_auth).body)
    root_csrf = _form_token(send(site.port, "GET", "/admin", root_auth).body)
    cases = _route_cases(site, page_auth, alice_csrf, root_auth, root_csrf)
    assert not set(routes) - set(cases), f"routes without cases: {set(routes) - set(cases)}"
    assert not set(cases) - set(routes), f"cases of no route: {set(cases) - set(routes)}"

    def listing() -> tuple[list[str], list[str], int]:
        with sqlite3.connect(site.server.folder / "arena.db") as db:
            rows = db.execute("SELECT count(*) FROM bots").fetchone()[0]
        return (sorted(p.name for p in (site.server.folder / "uploads").iterdir()),
                sorted(p.name for p in (site.server.folder / "bots").iterdir()), rows)

    before = listing()
    every = [(i, c) for i, (template, group) in enumerate(sorted(cases.items()))
             for c in group]
    for i, case in every:  # each route from an address of its own: its own budget
        if case.source == "127.0.0.1":
            case.source = f"127.0.1.{i + 1}"
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        replies = list(pool.map(
            lambda ic: send(site.port, ic[1].method, ic[1].path, ic[1].headers, ic[1].body,
                            source=ic[1].source, host=ic[1].host), every))
    took = time.monotonic() - started
    failures = []
    for (_, case), reply in zip(every, replies):
        if reply.status >= 500 or (reply.status == 0 and not case.protocol):
            failures.append(f"{case.what}: {reply.status} {reply.body[:200]!r}")
        elif case.expect is not None and reply.status not in case.expect:
            failures.append(f"{case.what}: {reply.status}, expected {sorted(case.expect)} "
                            f"{reply.body[:200]!r}")
        elif reply.status == 429:
            failures.append(f"{case.what}: 429 (the sweep should stay within the limits)")
        elif not case.protocol and reply.status and (wrong := _secured(reply)):
            failures.append(f"{case.what}: {reply.status} without the security headers "
                            f"({wrong})")
    print(f"{len(every)} requests to {len(routes)} routes in {took:.1f} s")
    assert not failures, f"{len(failures)} of {len(every)}:\n" + "\n".join(failures[:60])
    assert listing() == before  # no archive, no folder, no row of a refused upload
    hostile = [r for (_, c), r in zip(every, replies) if "multipart: a hostile" in c.what
               and c.path in ("/api/bots", "/submit") and c.headers[0][0] != "Content-Type"]
    assert hostile and all(r.status in (400, 403) for r in hostile)
    assert {r.status for (_, c), r in zip(every, replies)
            if "multipart: a hostile" in c.what and c.path == "/api/bots" and
            c.headers and c.headers[0][0] == "Authorization"} == {400}


def test_paging_the_games_api_to_the_end_stops(site: Site) -> None:
    """``GET /api/games`` past the last page is an empty list (it used to repeat the last
    page forever), with the total in a header and a ``Link`` to the next page while there
    is one."""
    first = send(site.port, "GET", "/api/games")
    games = json.loads(first.body)
    assert first.status == 200 and len(games) == 3 and first.header("X-Total-Count") == "3"
    assert first.header("Link") == ""  # one page
    for page in (2, 50):
        past = send(site.port, "GET", f"/api/games?page={page}")
        assert past.status == 200 and json.loads(past.body) == []
        assert past.header("X-Total-Count") == "3" and past.header("Link") == ""
    # the page for people shows the last page instead
    assert f'href="/games/{site.done}"'.encode() in send(site.port, "GET", "/games?page=50").body


def test_every_answer_carries_the_security_headers(site: Site) -> None:
    """Pages, the viewer, JSON, redirects, errors of the app and of the layers around it;
    each answer's nonce is its own, and the viewer's script carries it."""
    alice = [("Cookie", _cookie(login(site, "alice")))]
    seen = set()
    for method, path, headers, code in (
            ("GET", "/", [], 200), ("GET", "/games", [], 200), ("GET", "/login", [], 200),
            ("GET", "/submit", alice, 200), ("GET", "/submit", [], 401),
            ("GET", f"/games/{site.done}", [], 200), ("GET", f"/games/{site.running}", [], 200),
            ("GET", "/api/status", [], 200), ("GET", "/api/bots/123456", [], 404),
            ("GET", "/nowhere", [], 404), ("DELETE", "/", [], 405),
            ("GET", "/api/bots/x", [], 422), ("POST", "/logout", [("Content-Type", FORM)], 401),
            ("POST", "/api/bots", [("Transfer-Encoding", "chunked")], 411),
            ("POST", "/api/bots", [("Content-Length", "99999999")], 413),
            ("GET", f"/api/games/{site.done}/live/events", [], 200),
            ("GET", "/admin", alice, 403)):
        reply = send(site.port, method, path, headers)
        assert reply.status == code, (method, path, reply.status, reply.body[:200])
        assert _secured(reply) is None, (method, path, _secured(reply))
        nonce = re.search(r"'nonce-([^']+)'", reply.header("content-security-policy"))
        assert nonce is not None
        seen.add(nonce.group(1))
        if path == f"/games/{site.done}":  # the viewer: its script runs with the nonce
            assert f'<script nonce="{nonce.group(1)}">'.encode() in reply.body
            assert b'<script id="game-data" type="application/json">' in reply.body
            assert b"<script>" not in reply.body
        if path == f"/games/{site.running}":  # the live board's script
            assert f'<script nonce="{nonce.group(1)}">'.encode() in reply.body
    assert len(seen) == 17  # a new nonce for every answer


# ---------------------------------------------------------------------------------------
# Login CSRF, the forms' session tokens
# ---------------------------------------------------------------------------------------


def test_a_cross_site_login_is_refused(site: Site) -> None:
    """A POST to /login without the login form's cookie and token — what a form on another
    site sends (SameSite=Strict keeps the cookie home) — is 403 and logs nobody in."""
    bob = site.tokens["bob"]
    form = send(site.port, "GET", "/login")
    nonce = form.cookies()["arena_login"].split(";")[0].split("=", 1)[1]
    assert "httponly" in form.cookies()["arena_login"].lower()
    assert "samesite=strict" in form.cookies()["arena_login"].lower()
    assert "path=/login" in form.cookies()["arena_login"].lower()
    token = _form_token(form.body)
    other = _form_token(send(site.port, "GET", "/login").body)  # another browser's form
    evil = [("Content-Type", FORM), ("Origin", "http://evil.example"),
            ("Referer", "http://evil.example/")]
    for what, headers, body in (
            ("no cookie, no token", evil, f"token={bob}"),
            ("no cookie, a token", evil, f"token={bob}&csrf={token}"),
            ("a cookie, no token", [*evil, ("Cookie", f"arena_login={nonce}")], f"token={bob}"),
            ("a cookie and another form's token",
             [*evil, ("Cookie", f"arena_login={nonce}")], f"token={bob}&csrf={other}"),
            ("a cookie that is not a nonce", [*evil, ("Cookie", "arena_login=x")],
             f"token={bob}&csrf={token}")):
        reply = send(site.port, "POST", "/login", headers, body.encode())
        assert reply.status == 403, (what, reply.status)
        assert "arena_token" not in reply.cookies() and "arena_session" not in reply.cookies()
        assert b"security token" in reply.body
    # the same form, its cookie and its token: logged in (303, both cookies)
    reply = send(site.port, "POST", "/login", [("Content-Type", FORM),
                                               ("Cookie", f"arena_login={nonce}")],
                 f"token={bob}&csrf={token}".encode())
    assert reply.status == 303 and {"arena_token", "arena_session"} <= set(reply.cookies())
    for name in ("arena_token", "arena_session"):
        attributes = reply.cookies()[name].lower()
        assert "httponly" in attributes and "samesite=strict" in attributes
    # a wrong token with the right form: 401, as before
    reply = send(site.port, "POST", "/login", [("Content-Type", FORM),
                                               ("Cookie", f"arena_login={nonce}")],
                 f"token=wrong&csrf={token}".encode())
    assert reply.status == 401 and b"unknown token" in reply.body


def test_the_forms_token_changes_at_each_login(site: Site) -> None:
    """The forms' token is bound to the session: a new login makes a new one, and the
    token of the session before is refused."""
    first = login(site, "root")
    second = login(site, "root")
    assert first["arena_token"] == second["arena_token"]
    assert first["arena_session"] != second["arena_session"]
    old = _form_token(send(site.port, "GET", "/admin", [("Cookie", _cookie(first))]).body)
    new = _form_token(send(site.port, "GET", "/admin", [("Cookie", _cookie(second))]).body)
    assert old != new
    paused = site.server.get("/api/status")["paused"]
    form = [("Content-Type", FORM), ("Cookie", _cookie(second))]
    reply = send(site.port, "POST", "/admin/pause", form, f"csrf={old}".encode())
    assert reply.status == 403 and site.server.get("/api/status")["paused"] == paused
    reply = send(site.port, "POST", "/logout", form, f"csrf={old}".encode())
    assert reply.status == 403 and not reply.cookies()
    # the new session's token works (pause, and back), and logging out ends the session
    for _ in range(2):
        reply = send(site.port, "POST", "/admin/pause", form, f"csrf={new}".encode())
        assert reply.status == 303
    assert site.server.get("/api/status")["paused"] == paused
    reply = send(site.port, "POST", "/logout", form, f"csrf={new}".encode())
    assert reply.status == 303
    assert {"arena_token", "arena_session"} <= set(reply.cookies())  # both removed
    assert all("max-age=0" in c.lower() or "expires=" in c.lower()
               for c in reply.cookies().values())


# ---------------------------------------------------------------------------------------
# Retire over the API, cancel on the admin page
# ---------------------------------------------------------------------------------------


def test_retire_over_the_api_and_cancel_a_check_on_the_admin_page(site: Site) -> None:
    from arena.server.service import Competition

    if not hasattr(Competition, "cancel_check"):
        pytest.skip("Competition.cancel_check is not there yet")
    port, tokens = site.port, site.tokens
    bot = site.games.bot("alice")
    retire = f"/api/bots/{bot}/retire"
    assert send(port, "POST", retire).status == 401
    assert send(port, "POST", retire, [("Authorization", "Bearer nope")]).status == 401
    reply = send(port, "POST", retire, [("Authorization", f"Bearer {tokens['bob']}")])
    assert reply.status == 403 and site.server.get(f"/api/bots/{bot}", tokens["alice"])[
        "status"] == "active"
    reply = send(port, "POST", retire, [("Authorization", f"Bearer {tokens['alice']}")])
    assert reply.status == 200 and json.loads(reply.body) == {"id": bot, "status": "retired"}
    assert site.server.get(f"/api/bots/{bot}", tokens["alice"])["status"] == "retired"
    other = site.games.bot("bob")
    reply = send(port, "POST", f"/api/bots/{other}/retire",
                 [("Authorization", f"Bearer {tokens['root']}")])  # an admin may
    assert reply.status == 200
    assert send(port, "POST", "/api/bots/123456789/retire",
                [("Authorization", f"Bearer {tokens['root']}")]).status == 404

    # uploads wait (the judge is paused): the admin cancels one check, its owner stops
    # and retires the other from the bot's page
    ids = []
    for name in ("first", "second"):
        status, made = site.server.upload(tokens["alice"], f"{name}.zip",
                                          bot_archive("random", "zip", name=name))
        assert status == 201, made
        ids.append(made["id"])
    root = [("Cookie", _cookie(login(site, "root")))]
    page = send(port, "GET", "/admin", root).body.decode()
    for i in ids:
        assert re.search(rf'action="/admin/cancel".*?name="bot" value="{i}".*?Cancel check',
                         page)
    form = [("Content-Type", FORM), *root]
    csrf = _form_token(page.encode())
    assert send(port, "POST", "/admin/cancel", form,
                f"csrf=bad&bot={ids[0]}".encode()).status == 403
    reply = send(port, "POST", "/admin/cancel", form, f"csrf={csrf}&bot={ids[0]}".encode())
    assert reply.status == 303 and reply.header("location") == "/admin"
    view = site.server.get(f"/api/bots/{ids[0]}", tokens["alice"])
    assert view["status"] == "rejected" and "cancel" in view["verdict"]
    assert send(port, "POST", "/admin/cancel", form,
                f"csrf={csrf}&bot={ids[0]}".encode()).status == 404  # nothing to cancel
    alice = [("Cookie", _cookie(login(site, "alice")))]
    assert send(port, "POST", "/admin/cancel", [("Content-Type", FORM), *alice],
                f"csrf={_form_token(send(port, 'GET', '/submit', alice).body)}"
                f"&bot={ids[1]}".encode()).status == 403  # owners retire; admins cancel
    page = send(port, "GET", f"/bots/{ids[1]}", alice).body.decode()
    assert "Stop the check and retire" in page and "Retire this bot" not in page
    reply = send(port, "POST", "/admin/retire", [("Content-Type", FORM), *alice],
                 f"csrf={_form_token(page.encode())}&bot={ids[1]}".encode())
    assert reply.status == 303 and reply.header("location") == f"/bots/{ids[1]}"
    assert site.server.get(f"/api/bots/{ids[1]}", tokens["alice"])["status"] == "retired"
    assert b"Stop the check" not in send(port, "GET", f"/bots/{ids[1]}", alice).body
    active = site.games.bot("alice")
    assert b"Retire this bot" in send(port, "GET", f"/bots/{active}", alice).body


# ---------------------------------------------------------------------------------------
# The live board's event stream
# ---------------------------------------------------------------------------------------


class Events:
    """An open ``text/event-stream`` answer, read event by event."""

    def __init__(self, port: int, path: str, source: str = "127.0.0.1",
                 headers: Sequence[tuple[str, str]] = ()) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30,
                                             source_address=(source, 0))
        extra = "".join(f"{k}: {v}\r\n" for k, v in headers)
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
                          f"{extra}\r\n".encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            assert chunk, "no answer"
            self.buf += chunk
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        self.head = head.decode("latin-1")
        self.status = int(self.head.split()[1])
        self.chunked = "transfer-encoding: chunked" in self.head.lower()
        self.text = ""
        self.closed = False
        self._take()  # what came with the head

    def _more(self, deadline: float) -> None:
        self.sock.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            chunk = self.sock.recv(65536)
        except TimeoutError:
            return  # next() says what it waited for
        if not chunk:
            self.closed = True
        self.buf += chunk
        self._take()

    def _take(self) -> None:
        if self.chunked:  # the chunks' framing out: the text of the events
            while True:
                size_line, sep, rest = self.buf.partition(b"\r\n")
                if not sep:
                    break
                size = int(size_line.split(b";")[0] or b"0", 16)
                if len(rest) < size + 2:
                    break
                self.text += rest[:size].decode("utf-8")
                self.buf = rest[size + 2:]
                if size == 0:
                    self.closed = True
        else:
            self.text += self.buf.decode("utf-8")
            self.buf = b""

    def next(self, timeout: float = 20) -> Optional[tuple[str, str]]:
        """The next event (its type, its data), or None when the stream ended."""
        deadline = time.monotonic() + timeout
        while True:
            while "\n\n" in self.text:
                block, self.text = self.text.split("\n\n", 1)
                kind, data = "message", []
                for line in block.split("\n"):
                    if line.startswith("event:"):
                        kind = line[6:].strip()
                    elif line.startswith("data:"):
                        data.append(line[5:].strip())
                if data:
                    return kind, "\n".join(data)
            if self.closed:
                return None
            assert time.monotonic() < deadline, f"no event in {timeout} s: {self.text!r}"
            self._more(deadline)

    def close(self) -> None:
        self.sock.close()


def test_the_live_stream_follows_a_game_for_one_request(limited: Site) -> None:
    """A game watched over its event stream: every new state comes on the one request
    (the address's budget of 5 a minute is spent once, however many moves), then the
    finished state and ``end``; the address has its other 4 requests left."""
    games, port = limited.games, limited.port
    gid = games.game("running")
    moves = legal_moves(10)
    games.play(gid, moves[:2])
    source = "127.0.0.6"
    stream = Events(port, f"/api/games/{gid}/live/events", source)
    try:
        assert stream.status == 200 and "text/event-stream" in stream.head
        assert "x-accel-buffering: no" in stream.head.lower()
        assert "content-security-policy" in stream.head.lower()
        first = stream.next()
        assert first is not None and first[0] == "message"
        state = json.loads(first[1])
        assert (state["status"], state["plies"], state["moves"]) == ("running", 2, moves[:2])
        plies = [2]
        for n in range(3, 11):  # eight more moves, slower than the stream looks for them
            games.play(gid, moves[n - 1:n])
            while plies[-1] < n:
                event = stream.next()
                assert event is not None and event[0] == "message", event
                plies.append(json.loads(event[1])["plies"])
        assert plies == list(range(2, 11)), plies  # each move, in order, none twice
        games.finish(gid, moves)
        event = stream.next()
        assert event is not None and event[0] == "message"
        final = json.loads(event[1])
        assert (final["status"], final["plies"]) == ("done", 10)
        assert stream.next() == ("end", "{}")
        assert stream.next() is None  # the stream ends with the game
    finally:
        stream.close()
    codes = [send(port, "GET", "/api/status", source=source).status for _ in range(5)]
    assert codes == [200] * 4 + [429], codes  # 9 states were one request
    assert send(port, "GET", "/api/games/99999/live/events",
                source="127.0.0.7").status == 404


# ---------------------------------------------------------------------------------------
# Rate limits: floods, trusted proxies, a class behind one address
# ---------------------------------------------------------------------------------------


def test_a_flood_gets_429_while_a_token_from_the_same_address_goes_on(limited: Site) -> None:
    port, source = limited.port, "127.0.0.3"
    codes = [send(port, "GET", "/api/status", source=source).status for _ in range(8)]
    assert codes[:5] == [200] * 5 and set(codes[5:]) == {429}, codes
    refused = send(port, "GET", "/api/leaderboard", source=source)
    assert refused.status == 429 and 1 <= int(refused.header("retry-after")) <= 60
    assert "too many requests" in json.loads(refused.body)["detail"]
    assert _secured(refused) is None
    page = send(port, "GET", "/", source=source)
    assert page.status == 429 and page.body.startswith(b"too many requests")
    assert _secured(page) is None
    # the same address with a valid token: the participant's own budget
    bearer = [("Authorization", f"Bearer {limited.tokens['bob']}")]
    assert send(port, "GET", "/api/status", bearer, source=source).status == 200
    cookie = [("Cookie", f"arena_token={limited.tokens['bob']}")]
    assert send(port, "GET", "/games", cookie, source=source).status == 200
    # an invalid token is no token: the address's budget, spent
    assert send(port, "GET", "/api/status", [("Authorization", "Bearer forged")],
                source=source).status == 429


def test_forwarded_headers_are_believed_from_trusted_proxies_only(limited: Site) -> None:
    """127.0.0.1 (which uvicorn would trust by default) is not a trusted proxy here: its
    X-Forwarded-For is ignored.  127.0.0.2 is: its header picks the bucket, the right-most
    address that is not a trusted proxy being the client."""
    port = limited.port

    def spoofed(source: str, n: int) -> list[int]:
        return [send(port, "GET", "/api/status", [("X-Forwarded-For", f"10.0.{n}.{i}")],
                     source=source).status for i in range(7)]

    codes = spoofed("127.0.0.1", 1)  # a new address each time: all in 127.0.0.1's bucket
    assert 429 in codes and codes.count(200) <= 5, codes
    codes = spoofed("127.0.0.9", 2)  # and in 127.0.0.9's, another untrusted peer
    assert codes == [200] * 5 + [429] * 2, codes

    def through_proxy(forwarded: Optional[str]) -> int:
        headers = [("X-Forwarded-For", forwarded)] if forwarded is not None else []
        return send(port, "GET", "/api/status", headers, source="127.0.0.2").status

    # behind the trusted proxy: one bucket per forwarded client
    assert [through_proxy("10.1.0.1") for _ in range(6)] == [200] * 5 + [429]
    assert through_proxy("10.1.0.2") == 200  # another client, another bucket
    # the right-most address that is not a trusted proxy is the client: what a client
    # writes to the left of it changes nothing, trusted proxies to its right are skipped
    assert through_proxy("10.1.0.2, 10.1.0.1") == 429
    assert through_proxy("10.1.0.1, 127.0.0.2") == 429
    assert through_proxy("10.1.0.1,10.1.0.3") == 200
    assert through_proxy(None) == 200  # the proxy's own requests: its own bucket

    # the scheme likewise: cookies are Secure when a trusted proxy says https
    secure = login(limited, "alice", source="127.0.0.2",
                   extra=[("X-Forwarded-For", "10.2.0.1"), ("X-Forwarded-Proto", "https")])
    assert "secure" in secure["_set_cookie"].lower()
    plain = login(limited, "alice", source="127.0.0.10", extra=[("X-Forwarded-Proto", "https")])
    assert "secure" not in plain["_set_cookie"].lower()


def test_a_class_of_40_behind_one_address_browses_within_the_defaults(site: Site) -> None:
    """A minute of 40 anonymous browsers behind one address (a school's NAT), at the
    default limits: each reloads the games page every 5 s (12), opens the leaderboard, a
    bot, a finished game, and watches a live game (its page and its one event stream):
    no 429.  (At the old polling, the live game alone was 40 x 120 requests.)"""
    port, source = site.port, "127.0.0.5"
    bot = site.games.bot("alice")
    minute = (["/games"] * 12 + ["/", f"/bots/{bot}", f"/games/{site.done}",
                                 f"/games/{site.running}"])

    def browser(n: int) -> list[int]:
        codes = [send(port, "GET", path, source=source).status for path in minute]
        stream = Events(port, f"/api/games/{site.running}/live/events", source)
        try:
            codes.append(stream.status)
            assert stream.status != 200 or stream.next() is not None
        finally:
            stream.close()
        return codes

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        codes = [c for cs in pool.map(browser, range(40)) for c in cs]
    assert len(codes) == 40 * 17
    assert codes.count(429) == 0 and set(codes) == {200}, sorted(set(codes))


# ---------------------------------------------------------------------------------------
# In the browser: the pages under the Content-Security-Policy
# ---------------------------------------------------------------------------------------

#: collects the page's Content-Security-Policy violations in window.cspViolations (run by
#: the browser before any of the page's own scripts, not subject to its CSP)
WATCH_CSP = """
if (!window.cspViolations) {
  window.cspViolations = [];
  document.addEventListener("securitypolicyviolation", function (e) {
    window.cspViolations.push(e.violatedDirective + " " + e.blockedURI);
  });
}
"""


def _watch_csp(driver: Any) -> None:
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH_CSP})


def _violations(driver: Any) -> list[str]:
    return list(driver.execute_script("return window.cspViolations || [];"))


def _wait(what: str, predicate: Callable[[], Any], timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_the_pages_work_under_the_csp_in_a_browser(site: Site, driver: Any) -> None:
    """Logged in through the form, the pages, the live board (it moves) and the viewer
    (its board drawn) report no Content-Security-Policy violation; an inline script that
    is not ours is blocked (and reported: the watch works)."""
    from selenium.webdriver.common.by import By

    _watch_csp(driver)
    url = site.server.url
    driver.get(url + "/login")
    driver.find_element(By.ID, "token").send_keys(site.tokens["alice"])
    driver.find_element(By.ID, "login").click()
    _wait("the login", lambda: "Log out" in driver.page_source)
    for path in ("/", "/games", "/submit", f"/bots/{site.games.bot('alice')}"):
        driver.get(url + path)
        assert _violations(driver) == [], (path, _violations(driver))
    # the viewer: its board is drawn by its inline script
    driver.get(f"{url}/games/{site.done}")
    _wait("the viewer's board", lambda: driver.find_elements(By.CSS_SELECTOR, "svg.board"))
    assert driver.find_element(By.ID, "viewer").get_attribute("data-ply") is not None
    assert _violations(driver) == []
    # nothing failed to load either (no /favicon.ico asked for: the pages name their icon)
    errors = [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    assert errors == [], errors
    # the live board moves (its script runs, its event stream is allowed)
    gid = site.games.game("running")
    moves = legal_moves(12, seed=3)
    site.games.play(gid, moves[:2])
    driver.get(f"{url}/games/{gid}")
    driver.execute_script("window.notReloaded = true;")
    _wait("the first moves", lambda: driver.find_element(By.ID, "ply").text == "2")
    site.games.play(gid, moves[2:6])
    _wait("the board to move", lambda: driver.find_element(
        By.ID, "live-board").get_attribute("data-ply") == "6")
    assert driver.execute_script("return window.notReloaded === true;")
    assert [li.text for li in driver.find_elements(By.CSS_SELECTOR, "#moves li")] == moves[:6]
    assert _violations(driver) == []
    site.games.finish(gid, moves[:6])  # finished: the page reloads as its viewer
    # (the live board is an svg.board too: wait for the reload, not for a board)
    _wait("the viewer", lambda: driver.execute_script(
        "return window.notReloaded === undefined && !!document.getElementById('viewer');"))
    assert _violations(driver) == []
    # the watch itself: a script without the nonce is blocked, and reported
    driver.execute_script("var s = document.createElement('script');"
                          "s.textContent = 'window.injected = 1;';"
                          "document.body.appendChild(s);")
    _wait("the violation", lambda: _violations(driver))
    assert driver.execute_script("return window.injected === undefined;")
    assert "script-src" in _violations(driver)[0]


def test_the_live_board_does_not_spend_the_participants_budget(limited: Site,
                                                               driver: Any) -> None:
    """Watching a live game in the browser for 7 s (alice: 20 requests a minute) costs
    its page and one stream; alice has most of her budget left afterwards.  (Polling every
    half second, the old page spent 14 requests in those 7 s.)"""
    from selenium.webdriver.common.by import By

    url, games = limited.server.url, limited.games
    driver.get(url + "/api/status")  # on the site, to hold its cookie
    driver.delete_all_cookies()
    driver.add_cookie({"name": "arena_token", "value": limited.tokens["alice"], "path": "/"})
    gid = games.game("running")
    moves = legal_moves(40, seed=5)
    games.play(gid, moves[:1])
    stop = threading.Event()

    def play() -> None:  # a move every 0.15 s, as a game at 150 ms a move
        for n in range(2, len(moves) + 1):
            if stop.wait(0.15):
                return
            games.play(gid, moves[n - 1:n])

    player = threading.Thread(target=play, daemon=True)
    player.start()
    try:
        driver.get(f"{url}/games/{gid}")
        driver.execute_script("window.notReloaded = true;")
        started = time.monotonic()
        seen = []
        while time.monotonic() - started < 7:
            seen.append(int(driver.find_element(By.ID, "live-board").get_attribute("data-ply")))
            time.sleep(0.5)
        assert driver.execute_script("return window.notReloaded === true;")
        assert seen[-1] >= seen[0] + 20, seen  # it followed the game all along
    finally:
        stop.set()
        player.join()
        driver.get("about:blank")  # the stream closes
    bearer = [("Authorization", f"Bearer {limited.tokens['alice']}")]
    codes = [send(limited.port, "GET", "/api/status", bearer).status for _ in range(12)]
    assert codes == [200] * 12, codes  # at most 8 of her 20 spent on the page and favicon


def test_a_cross_site_form_cannot_log_a_browser_in(site: Site, driver: Any) -> None:
    """A page on another site (localhost is not 127.0.0.1's site) that posts a login form
    to the server, with a token copied from a real login form: the browser sends no
    pre-login cookie (SameSite=Strict), the server answers 403, no session is set."""
    from selenium.webdriver.common.by import By

    token = _form_token(send(site.port, "GET", "/login").body)  # the attacker's own form
    page = (f'<!DOCTYPE html><html><body onload="document.forms[0].submit()">'
            f'<form method="post" action="{site.server.url}/login">'
            f'<input name="token" value="{site.tokens["bob"]}">'
            f'<input name="csrf" value="{token}"></form></body></html>').encode()

    class Evil(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server spelling
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: Any) -> None:
            pass

    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Evil)  # the browser's idle
    evil.daemon_threads = True  # connections hold a thread each, not the server
    thread = threading.Thread(target=evil.serve_forever, daemon=True)
    thread.start()
    try:
        driver.get(site.server.url + "/login")  # the victim has a login form's cookie
        driver.delete_cookie("arena_token")
        driver.delete_cookie("arena_session")
        driver.get(f"http://localhost:{evil.server_address[1]}/")
        _wait("the forged login's answer",
              lambda: driver.current_url.startswith(site.server.url + "/login")
              and driver.find_elements(By.CSS_SELECTOR, "p.error"))
        assert "security token" in driver.find_element(By.CSS_SELECTOR, "p.error").text
        driver.get(site.server.url + "/")
        # the page as loaded (a loaded machine once gave an empty source right after get)
        _wait("the home page", lambda: "Log in" in driver.page_source)
        assert "Log out" not in driver.page_source
        assert not [c for c in driver.get_cookies() if c["name"] == "arena_token"]
    finally:
        evil.shutdown()
        evil.server_close()
        thread.join()


# ---------------------------------------------------------------------------------------
# Issue 37's small items: a POST without a body, HEAD
# ---------------------------------------------------------------------------------------


def _raw(port: int, request: bytes, source: str = "127.0.0.1") -> tuple[int, bytes]:
    """A request written byte for byte (``send`` adds a Content-Length to every POST)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30,
                                  source_address=(source, 0)) as sock:
        sock.sendall(request)
        buf = b""
        while chunk := sock.recv(65536):
            buf += chunk
    head, _, body = buf.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def test_retire_without_a_body_is_answered_like_one_with_an_empty_body(site: Site) -> None:
    """``POST /api/bots/{id}/retire`` with neither Content-Length nor Transfer-Encoding
    (``curl -X POST``) has no body: it is answered (200, 401, 403, 404), not 411; a chunked
    body is still refused unread."""
    bot = site.games.bot("alice")

    def retire(bot_id: int, who: Optional[str]) -> tuple[int, bytes]:
        auth = f"Authorization: Bearer {site.tokens[who]}\r\n" if who else ""
        return _raw(site.port, f"POST /api/bots/{bot_id}/retire HTTP/1.1\r\nHost: x\r\n"
                               f"{auth}Connection: close\r\n\r\n".encode(), "127.0.6.1")

    assert retire(bot, None)[0] == 401
    assert retire(bot, "bob")[0] == 403
    assert retire(999999, "alice")[0] == 404
    status, body = retire(bot, "alice")
    assert status == 200 and json.loads(body) == {"id": bot, "status": "retired"}
    chunked = send(site.port, "POST", f"/api/bots/{bot}/retire",
                   [("Authorization", f"Bearer {site.tokens['alice']}"),
                    ("Transfer-Encoding", "chunked")], b"0\r\n\r\n", source="127.0.6.1")
    assert chunked.status == 411


def test_head_is_answered_like_get_without_a_body(site: Site) -> None:
    """Every GET route answers HEAD with GET's status and headers and no body (it was
    405), but the live event stream, which has no end to measure."""
    alice = [("Cookie", f"arena_token={site.tokens['alice']}")]
    for path, headers in (("/", []), ("/games", []), ("/login", []), ("/final", []),
                          (f"/games/{site.done}", []), (f"/games/{site.running}", []),
                          ("/submit", alice), ("/api/status", []), ("/api/leaderboard", []),
                          (f"/api/games/{site.done}", []), (f"/api/games/{site.running}/live", []),
                          ("/api/bots/999999", []), ("/games/999999", [])):
        got = send(site.port, "GET", path, headers, source="127.0.6.2")
        head = send(site.port, "HEAD", path, headers, source="127.0.6.2")
        assert head.status == got.status, (path, head.status, got.status)
        assert head.body == b"", (path, head.body[:100])
        assert head.header("content-type") == got.header("content-type"), path
        assert _secured(head) is None, (path, _secured(head))
        if path.startswith("/api/"):  # (a page has a new nonce per answer)
            assert head.header("content-length") == str(len(got.body)), path
    stream = send(site.port, "HEAD", f"/api/games/{site.running}/live/events",
                  source="127.0.6.2")
    assert stream.status == 405 and "GET" in stream.header("allow")


def test_on_a_phone_the_pages_keep_to_the_screen_width(site: Site, driver: Any) -> None:
    """At a phone's width (390 px) no page is wider than the screen: a wide table scrolls
    by itself, the navigation wraps, so the text and the links stay in view."""
    url = site.server.url
    driver.set_window_size(390, 900)
    try:
        for path in ("/", "/games", "/final", f"/bots/{site.games.bot('alice')}",
                     f"/games/{site.done}"):
            driver.get(url + path)
            _wait(f"{path} loaded", lambda: driver.execute_script(
                "return document.readyState") == "complete")
            wide, screen = driver.execute_script(
                "return [document.documentElement.scrollWidth, window.innerWidth];")
            assert wide <= screen, (path, wide, screen)
    finally:
        driver.set_window_size(1200, 900)
