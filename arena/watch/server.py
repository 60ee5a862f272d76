"""The watch page's web server: read-only, one folder, loopback by default.

Routes (GET and HEAD; anything else is 405):

* ``/`` — the page (``?layout=projector``: large boards and type, no controls);
* ``/state`` — the page's state as JSON (:meth:`Watcher.text`);
* ``/events`` — the same state as server-sent events: one ``data:`` line each time it
  changes, a comment every :data:`KEEPALIVE_S` seconds, at most :data:`MAX_STREAMS` at once
  (503 beyond; the browser's ``EventSource`` retries by itself);
* ``/game?id=GAME`` — one game in the report's viewer (:func:`arena.report.viewer.
  render_game_page`): a game in progress as far as it has been played, or a finished one;
* ``/watch.js``, ``/watch.css`` — the page's script and style; ``/board.js`` and
  ``/viewer.css`` the report viewer's (the boards are drawn as the report draws them).

One thread (:class:`Watcher`) reads the folder every :data:`POLL_S` seconds while someone
looks (a page asked within :data:`IDLE_S` seconds, or a stream is open) and keeps the state
as one JSON text; every stream sends that same text, so the cost of the folder does not grow
with the watchers.  Nothing on the page can change the run: the server has no route that
writes, and it opens the folder's files for reading only.

Bound to the loopback interface, it answers only requests addressed to a loopback name (the
``Host`` header), so a web page elsewhere cannot read it through DNS rebinding.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, Optional
from urllib.parse import parse_qs, urlsplit

from arena.records import GameRecord
from arena.resultsfolder import GAMES_FILE
from arena.watch.follow import Follower
from arena.watch.live import BoardCache, live_boards, live_files, live_game, runner_pid

log = logging.getLogger("arena.watch")

#: seconds between two reads of the folder
POLL_S = 0.5
#: the folder is not read when nobody has looked for this long
IDLE_S = 10.0
#: seconds between two keep-alive comments of an event stream
KEEPALIVE_S = 15.0
#: event streams open at once, at most
MAX_STREAMS = 32
#: an idle connection is closed after this long (not a stream: it is always sending)
REQUEST_TIMEOUT_S = 30.0
#: the names a loopback server answers to
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")

_PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
             "connect-src 'self'; base-uri 'none'; form-action 'none'; "
             "frame-ancestors 'none'")
# the report's viewer page holds its script and style inline (it is a file of its own in a
# report): here it may run them, and nothing else
_VIEWER_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
               "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


class Watcher:
    """The state of one results folder, read again while someone watches.

    :meth:`text` is the state as JSON: ``{"version", "folder", "running" (the runner's pid
    or null), "follow" (:meth:`arena.watch.follow.Follower.state`), "live" (the boards of
    the games in progress, :func:`arena.watch.live.live_boards`)}``; ``version`` grows by
    one each time the rest changes.
    """

    def __init__(self, folder: Path, *, poll_s: float = POLL_S) -> None:
        self.folder = folder
        self.poll_s = poll_s
        self.follower = Follower(folder)
        self._boards: BoardCache = {}  # the boards of unchanged ply files, not replayed again
        self.version = 0
        self._text = ""
        self._body = ""
        self._changed = threading.Condition()
        self._stopped = threading.Event()
        self._looked = time.monotonic()
        self._streams = 0
        self._thread: Optional[threading.Thread] = None
        self.refresh()

    # -- reading ---------------------------------------------------------------------------
    def refresh(self) -> bool:
        """Read the folder once; True when the state changed (streams are woken)."""
        try:
            self.follower.poll()
            state = {"folder": str(self.folder), "running": runner_pid(self.folder),
                     "follow": self.follower.state(), "live": live_boards(self.folder, self._boards)}
            body = json.dumps(state, separators=(",", ":"), allow_nan=False, default=str)
        except Exception as e:  # noqa: BLE001 - a folder mid-write, a bug: keep the last state
            log.warning("could not read %s: %r", self.folder, e)
            return False
        if body == self._body:
            return False
        with self._changed:
            self.version += 1
            self._body = body
            self._text = f'{{"version":{self.version},{body[1:]}'
            self._changed.notify_all()
        return True

    def text(self) -> str:
        """The state as JSON (read again first when nobody looked for a while)."""
        self.looked()
        return self._text

    def looked(self) -> None:
        idle = time.monotonic() - self._looked > IDLE_S
        self._looked = time.monotonic()
        if idle and self._streams == 0:
            self.refresh()

    def wait_change(self, version: int, timeout: float) -> tuple[int, str]:
        """Wait until the state is newer than ``version`` (or ``timeout`` seconds pass, or
        the watcher stops); return its version and text."""
        with self._changed:
            self._changed.wait_for(lambda: self.version != version or self._stopped.is_set(),
                                   timeout)
            return self.version, self._text

    # -- the reading thread ---------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="arena-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopped.wait(self.poll_s):
            if self._streams or time.monotonic() - self._looked < IDLE_S:
                self.refresh()

    def stop(self) -> None:
        self._stopped.set()
        with self._changed:
            self._changed.notify_all()

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    def open_stream(self) -> bool:
        """Count a new event stream; False when :data:`MAX_STREAMS` are open."""
        with self._changed:
            if self._streams >= MAX_STREAMS:
                return False
            self._streams += 1
            return True

    def close_stream(self) -> None:
        with self._changed:
            self._streams -= 1
            self._looked = time.monotonic()


@functools.lru_cache(maxsize=None)
def _asset(name: str) -> bytes:
    return resources.files("arena.watch").joinpath(name).read_bytes()


@functools.lru_cache(maxsize=None)
def _report_asset(name: str) -> bytes:
    return resources.files("arena.report").joinpath(name).read_bytes()


_TYPES = {"watch.js": "text/javascript; charset=utf-8", "watch.css": "text/css; charset=utf-8"}


def game_page(folder: Path, game_id: str, offset: Optional[int] = None) -> Optional[str]:
    """The report's viewer page of ``game_id``: in progress (its ply file) or finished (its
    record in ``games.jsonl``, read at ``offset`` when the follower knows where it begins,
    else searched for a line at a time); None when there is no such game."""
    from arena.errors import ArenaError
    from arena.report.results import find_games
    from arena.report.viewer import render_game_page

    for path in live_files(folder):
        record = live_game(path)
        if record is not None and record.game_id == game_id:
            title = f"{record.white.name} vs {record.black.name} (in progress)"
            return render_game_page(record, title, back="/", back_text="watch page")
    record = _record_at(folder, offset, game_id) if offset is not None else None
    if record is None:
        try:
            search = find_games(folder, game_id)
        except ArenaError:
            return None
        exact = [g for g in search.found if g.game_id == game_id]
        if not exact:
            return None
        record = exact[0].full()
    return render_game_page(record, f"{record.white.name} vs {record.black.name}",
                            back="/", back_text="watch page")


def _record_at(folder: Path, offset: int, game_id: str) -> Optional[GameRecord]:
    """The record of the ``games.jsonl`` line that begins at ``offset``, if it is
    ``game_id``'s (the file may have been replaced since the offset was taken)."""
    from arena.errors import ArenaError
    from arena.tallies import Game, parse_game_line

    try:
        with open(folder / GAMES_FILE, "rb") as f:
            f.seek(offset)
            line = f.readline()
        item = parse_game_line(line)
        game = Game(item, None) if isinstance(item, GameRecord) else Game(None, item)
        return game.full() if game.game_id == game_id else None
    except (OSError, ValueError, TypeError, KeyError, AttributeError, ArenaError):
        return None


class _Handler(BaseHTTPRequestHandler):
    server: WatchServer
    protocol_version = "HTTP/1.1"
    timeout = REQUEST_TIMEOUT_S
    server_version = "arena-watch"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        log.debug("%s %s", self.address_string(), format % args)

    # -- answers ---------------------------------------------------------------------------
    def _send(self, status: int, body: bytes, ctype: str, *, csp: str = _PAGE_CSP) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Content-Security-Policy", csp)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _text(self, status: int, text: str) -> None:
        self._send(status, (text + "\n").encode("utf-8"), "text/plain; charset=utf-8")

    def _host_ok(self) -> bool:
        if not self.server.loopback:
            return True
        host = (self.headers.get("Host") or "").strip().lower()
        if host.startswith("["):
            name = host.split("]")[0] + "]"
        else:
            name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
        return name in LOOPBACK_HOSTS

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        if not self._host_ok():
            self._text(HTTPStatus.FORBIDDEN, "this page answers only to 127.0.0.1 and localhost")
            return
        url = urlsplit(self.path)
        watcher = self.server.watcher
        if url.path == "/":
            self._send(HTTPStatus.OK, _asset("page.html"), "text/html; charset=utf-8")
        elif url.path in ("/watch.js", "/watch.css"):
            name = url.path[1:]
            self._send(HTTPStatus.OK, _asset(name), _TYPES[name])
        elif url.path in ("/viewer.css", "/board.js"):  # the board as the report draws it
            name = url.path[1:]
            self._send(HTTPStatus.OK, _report_asset(name), _TYPES["watch." + name.split(".")[1]])
        elif url.path == "/state":
            self._send(HTTPStatus.OK, watcher.text().encode("utf-8"),
                       "application/json; charset=utf-8")
        elif url.path == "/events":
            self._events()
        elif url.path == "/game":
            ids = parse_qs(url.query).get("id") or [""]
            game_id = ids[0][:500]
            page = game_page(watcher.folder, game_id, watcher.follower.offset_of(game_id))
            if page is None:
                self._text(HTTPStatus.NOT_FOUND, f"no game {ids[0][:100]!r} here (yet)")
            else:
                self._send(HTTPStatus.OK, page.encode("utf-8"), "text/html; charset=utf-8",
                           csp=_VIEWER_CSP)
        else:
            self._text(HTTPStatus.NOT_FOUND, "not found")

    def _refuse(self) -> None:
        self._text(HTTPStatus.METHOD_NOT_ALLOWED, "this page only reads: GET and HEAD")

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse

    def _events(self) -> None:
        watcher = self.server.watcher
        if self.command == "HEAD":
            self._send(HTTPStatus.OK, b"", "text/event-stream")
            return
        if not watcher.open_stream():
            self._text(HTTPStatus.SERVICE_UNAVAILABLE, "too many pages are following this run")
            return
        try:
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.close_connection = True  # a stream ends with its connection
            version, text = -1, ""
            self.wfile.write(b"retry: 2000\n\n")
            while not watcher.stopped:
                new, text = watcher.wait_change(version, KEEPALIVE_S)
                if new != version and text:
                    self.wfile.write(f"data: {text}\n\n".encode("utf-8"))
                    version = new
                else:
                    self.wfile.write(b": still here\n\n")
                self.wfile.flush()
            self.wfile.write(b"event: end\ndata: {}\n\n")
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            pass  # the page went away
        finally:
            watcher.close_stream()


class WatchServer(ThreadingHTTPServer):
    """The HTTP server of one :class:`Watcher` (a thread per connection, daemon threads)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, watcher: Watcher, host: str, port: int) -> None:
        self.watcher = watcher
        self.loopback = host in LOOPBACK_HOSTS or host.startswith("127.")
        if ":" in host:
            import socket

            self.address_family = socket.AF_INET6
        super().__init__((host.strip("[]"), port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{name}]" if ":" in name else name
        return f"http://{shown}:{port!s}/"


def open_server(folder: Path, host: str = "127.0.0.1", port: int = 0) -> WatchServer:
    """A watch server for ``folder`` bound to ``host``:``port`` (0: a free port), its
    watcher reading; call ``serve_forever()`` (and ``shutdown()``/``server_close()``)."""
    watcher = Watcher(folder)
    server = WatchServer(watcher, host, port)
    watcher.start()
    return server


__all__ = ["IDLE_S", "KEEPALIVE_S", "MAX_STREAMS", "POLL_S", "WatchServer", "Watcher",
           "game_page", "open_server"]
