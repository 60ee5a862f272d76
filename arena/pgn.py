"""Live PGN (``pgn_out:`` in a tournament file, ``--pgn-out FILE`` on ``arena run`` and
``arena sprt``): each game appended to a PGN file as it ends, as cutechess's ``-pgnout``.

Each game is :func:`arena.export.format_game`'s text (the same as ``arena export``: tags,
moves with ``{score/depth time}`` comments, the result), written with **one** ``write`` on an
``O_APPEND`` descriptor, so the file holds whole games only, at every moment a reader looks
(a crash of the machine itself can tear the last one, as with ``games.jsonl``).  Games are
appended when their record is appended to ``games.jsonl``, so a resumed run, which plays
only the games missing there, appends only new ones.

At start-up, :func:`catch_up` appends the finished games of the results folder that the
file does not hold yet (matched by their ``Event`` and ``GameId`` tags): a PGN file named
only when a tournament resumes gets its earlier games, and a game whose record was saved
just before a crash, but not its PGN, is not lost.  The file may hold other games too
(cutechess's habit of one file for many runs): they are left alone.

The records stay the single source of truth: a PGN file that cannot be written is an error
at start-up (before any game) and, later, a logged error that stops no game (the next start
catches up; ``arena export`` writes the whole file from ``games.jsonl`` at any time).
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Iterable, Optional

from arena.errors import ConfigError
from arena.export import clean, format_game
from arena.records import GameRecord

log = logging.getLogger("arena.pgn")

__all__ = ["add_game", "append_game", "catch_up", "games_in", "open_pgn"]

_EVENT = re.compile(r'^\[Event "((?:[^"\\]|\\.)*)"\]$', re.M)
_GAME_ID = re.compile(r'^\[GameId "((?:[^"\\]|\\.)*)"\]$', re.M)


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def games_in(path: Path) -> set[tuple[str, str]]:
    """The ``(Event, GameId)`` of every game of the PGN file at ``path`` that has both tags
    (none when there is no such file), read a line at a time (memory: the pairs, not the
    file).  A game is a block of lines that starts with ``[`` after a line of white space
    (or the file's start); its first ``Event`` and first ``GameId`` tag lines count."""
    out: set[tuple[str, str]] = set()
    try:
        f = open(path, encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return out
    event: Optional[str] = None
    game: Optional[str] = None
    with f:
        after_blank = False
        for line in f:
            text = line[:-1] if line.endswith("\n") else line
            if not text.strip():
                after_blank = True
                continue
            if after_blank and text.startswith("["):  # a new game's tags
                if event is not None and game is not None:
                    out.add((event, game))
                event = game = None
            after_blank = False
            if event is None and (m := _EVENT.fullmatch(text)):
                event = _unescape(m.group(1))
            elif game is None and (m := _GAME_ID.fullmatch(text)):
                game = _unescape(m.group(1))
    if event is not None and game is not None:
        out.add((event, game))
    return out


def open_pgn(path: Optional[Path], *, key: str = "pgn_out") -> None:
    """Make sure games can be appended to ``path``: its folder is created, the file opened
    for appending (created empty if missing).  None: no PGN file, nothing to do.

    :raises ConfigError: it cannot be (one line, naming ``key``).
    """
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(os.fspath(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.close(fd)
    except OSError as e:
        raise ConfigError(f"cannot write the PGN file {path}: {e.strerror or e}", key) from None


def append_game(path: Path, record: GameRecord) -> None:
    """Append ``record`` as one PGN game, in one write (a blank line first when the file
    does not end with one, so the new game's tags start a game of their own).

    :raises OSError: the file cannot be written.
    """
    data = format_game(record).encode("utf-8")
    fd = os.open(os.fspath(path), os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size:
            tail = os.pread(fd, 2, max(size - 2, 0))
            if not tail.endswith(b"\n"):
                data = b"\n\n" + data
            elif tail != b"\n\n" and size > 1:
                data = b"\n" + data
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)


def catch_up(path: Optional[Path], records: Iterable[GameRecord]) -> int:
    """Append the ``records`` that ``path`` does not hold yet (by Event and GameId), in the
    order given; returns how many.  A failure is logged, never raised (see :func:`add_game`).
    None: no PGN file, nothing to do."""
    added = 0
    if path is None:
        return 0
    try:
        have = games_in(path)
        for record in records:
            if (clean(record.tournament or "?"), clean(record.game_id)) not in have:
                append_game(path, record)
                added += 1
    except OSError as e:
        log.error("could not append the finished games to the PGN file %s (%s)", path,
                  e.strerror or e)
    if added:
        log.info("PGN file %s: appended %d finished game%s it did not hold", path, added,
                 "s" if added > 1 else "")
    return added


def add_game(path: Optional[Path], record: GameRecord) -> None:
    """:func:`append_game` for a runner: a failure is logged (the game is saved in
    ``games.jsonl``; the next start catches up), never raised.  None: no PGN file."""
    if path is None:
        return
    try:
        append_game(path, record)
    except OSError as e:
        log.error("could not append game %s to the PGN file %s (%s); it is saved in "
                  "games.jsonl, and the next run (or arena export) writes it",
                  record.game_id, path, e.strerror or e)
