"""What the web layer keeps between requests, and how an answer is made from it: the
shared pages split at the marks where each answer puts its visitor's name, form token and
nonce (:func:`marked`, :func:`filled`); a finished game's viewer page split where its
script's nonce goes (:func:`viewer_page`); the live boards' states, read at most every
0.4 s whoever asks (:class:`LiveStates`)."""

from __future__ import annotations

import json
import re
import threading
import time
from typing import Any, Optional

from arena.server.service import Competition

#: what a shared page holds where each answer puts the visitor's name, form token and
#: nonce (control characters: no name, token or text of a page can contain them)
NAME_MARK, CSRF_MARK, NONCE_MARK = "\x01name\x01", "\x01csrf\x01", "\x01nonce\x01"
_MARKS = re.compile("(\x01(?:name|csrf|nonce)\x01)")
_NAME, _CSRF, _NONCE = NAME_MARK.encode(), CSRF_MARK.encode(), NONCE_MARK.encode()


def marked(html: str) -> tuple[bytes, ...]:
    """A shared page as it is kept: its UTF-8 text split at the marks, which stay in the
    odd places (encoded once, not at every answer)."""
    return tuple(part.encode("utf-8") for part in _MARKS.split(html))


def filled(parts: tuple[bytes, ...], *, nonce: str, name: str = "", csrf: str = "") -> bytes:
    """The answer's bytes: the marks of :func:`marked`'s parts replaced by this answer's
    ``nonce``, visitor's ``name`` (HTML already) and form token ``csrf``."""
    values = {_NONCE: nonce.encode(), _NAME: name.encode("utf-8"), _CSRF: csrf.encode()}
    return b"".join(values.get(part, b"") if i % 2 else part for i, part in enumerate(parts))


def viewer_page(comp: Competition, game_id: int, data: dict[str, Any]) -> tuple[bytes, ...]:
    """A finished game's viewer page (its record as ``data``, :meth:`game_view`'s) as
    UTF-8 bytes split where its script's nonce goes (each answer has its own: the CSP)."""
    from arena.records import GameRecord
    from arena.report.viewer import render_game_page

    record = GameRecord.from_dict(data)
    # the players as people know them, not the records' labels (name#id)
    ids = [int(tail) for p in (record.white, record.black)
           if (tail := p.name.rpartition("#")[2]).isdigit()]
    shown = {f"{b['bot']}#{b['id']}": f"{b['bot']} v{b['version']} ({b['owner']})"
             for b in comp.bots(ids=ids)}
    for player in (record.white, record.black):
        player.name = shown.get(player.name, player.name)
    kind = comp.game_row(game_id)["kind"]
    what = {"final": "final, ", "match": "unrated test match, "}.get(kind, "")
    title = (f"{record.white.name} - {record.black.name}, {record.variant} "
             f"({what}game {game_id})")
    html = render_game_page(record, title, back="/games", back_text="all games")
    head, found, tail = html.partition("\n<script>\n")
    return ((head.encode("utf-8") + b'\n<script nonce="', b'">\n' + tail.encode("utf-8"))
            if found else (html.encode("utf-8"),))


class LiveStates:
    """The live board's states as JSON text, each read at most every ``fresh`` seconds
    whoever asks: forty browsers watching one game cost one read of it per poll."""

    def __init__(self, comp: Competition, fresh: float = 0.4) -> None:
        self.comp = comp
        self.fresh = fresh
        self._lock = threading.Lock()
        self._states: dict[int, tuple[float, str, str]] = {}
        self._reading: dict[int, threading.Lock] = {}

    def peek(self, game_id: int) -> Optional[tuple[str, str]]:
        """A fresh enough state (text, status), or None (without reading anything)."""
        with self._lock:
            hit = self._states.get(game_id)
        if hit is not None and time.monotonic() - hit[0] < self.fresh:
            return hit[1], hit[2]
        return None

    def get(self, game_id: int) -> tuple[str, str]:
        """The game's state (text, status), read again if not fresh, by one request while
        the others that ask meanwhile wait for it.  :raises NotFound:"""
        hit = self.peek(game_id)
        if hit is not None:
            return hit
        with self._lock:
            reading = self._reading.setdefault(game_id, threading.Lock())
        with reading:
            hit = self.peek(game_id)  # read by the request we waited for
            if hit is not None:
                return hit
            now = time.monotonic()
            state = self.comp.live_game(game_id)
            text = json.dumps(state, separators=(",", ":"))
            with self._lock:
                if len(self._states) > 256:
                    self._states = {k: v for k, v in self._states.items() if now - v[0] < 5}
                    self._reading = {k: v for k, v in self._reading.items()
                                     if k in self._states or k == game_id}
                self._states[game_id] = (now, text, str(state["status"]))
        return text, str(state["status"])
