"""Games in progress, move by move: the judge's workers append each ply to a file as it is
played, the pages read it back.

A ladder game being played has a file ``DIR/live/<game id>.jsonl`` (:func:`live_path`): the
judge makes it empty when it hands the game to a worker (so a game played again after a
restart starts from an empty board), the worker's referee appends one JSON line per ply
(:class:`PlyWriter`, called by :func:`arena.referee.play_game` after every move), and the
judge removes it once the game's record is stored.  The files are written by the worker, so
with a Dask executor the workers must share the competition folder (as they already must
for the bots).  :func:`live_board` replays the plies with the rules engine for the pages:
what they show comes from the referee's accepted moves only, never a bot's raw text.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from arena.board import FILES
from arena.records import GameRecord, MoveInfo
from arena.rules import Position
from arena.variants import Variant

#: the folder of the games in progress, inside the competition folder
LIVE = "live"
#: plies read back at most (every game ends long before: the rules' move limits)
MAX_PLIES = 10_000


def live_path(folder: Path, game_id: int) -> Path:
    """The ply file of ladder game ``game_id`` in competition ``folder``."""
    return folder / LIVE / f"{game_id}.jsonl"


class PlyWriter:
    """The referee's ``on_move``: appends ``{"move", "ms"}`` per ply to a file (picklable,
    so it travels with the game to a pool or Dask worker)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self, position: Position, info: MoveInfo) -> None:
        line = json.dumps({"move": info.move, "ms": round(info.wall_ms, 1),
                           "ply": len(position.move_stack)}) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        with open(fd, "a", encoding="utf-8") as f:  # one line, one write: whole lines
            f.write(line)


def play_live(job: Any, path: str) -> GameRecord:
    """Play a ladder game (a :class:`arena.jobs.GameJob`) in a worker, each ply appended to
    ``path`` as it is played; returns its record labelled like :func:`arena.jobs.play_job`'s.

    This is :func:`~arena.jobs.play_job` (its clean stop on SIGTERM included) with a
    :class:`PlyWriter` as the referee's ``on_move``.
    """
    from arena.jobs import play_job

    return play_job(dataclasses.replace(job, on_move=PlyWriter(path)))


def read_plies(path: Path) -> list[dict[str, Any]]:
    """The plies written so far (a missing file: none; a half-written last line is left
    for the next read).  A game played again (its first play was voided: a bot was
    starved) starts again at ply 1: only the plies of its latest play are returned."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(MAX_PLIES * 64)
    except FileNotFoundError:
        return []
    plies: list[dict[str, Any]] = []
    for line in text.split("\n")[:-1][:MAX_PLIES]:
        try:
            ply = json.loads(line)
        except ValueError:
            break
        if not isinstance(ply, dict) or not isinstance(ply.get("move"), str):
            break
        if ply.get("ply") == 1:
            plies = []
        plies.append(ply)
    return plies


def live_board(variant: Variant, moves: list[str]) -> dict[str, Any]:
    """The position after ``moves`` for the live page: ``board`` (a character per point,
    ``W``/``B``/``.``, in the topology's point order), ``hand`` (men to place), ``turn``
    (0 white, 1 black), ``plies`` (moves replayed), the board's ``points``, ``edges`` (index
    pairs) and ``xy`` (each point's column and row on the 7x7 grid, row 0 at the top), and
    ``last`` (the last move's text)."""
    pos = Position(variant)
    done: list[str] = []
    for text in moves:
        try:
            move = pos.parse_move(text)
        except Exception:  # noqa: BLE001 - not replayable: show what was
            break
        pos.push(move)
        done.append(str(move))
    t = variant.topology
    board = "".join("W" if pos.men[0] >> i & 1 else "B" if pos.men[1] >> i & 1 else "."
                    for i in range(t.size))
    return {"board": board, "hand": [pos.hand[0], pos.hand[1]], "turn": pos.turn,
            "plies": len(done), "last": done[-1] if done else "",
            "points": list(t.points), "edges": [list(e) for e in t.edges],
            "xy": [[FILES.index(p[0]), 7 - int(p[1])] for p in t.points]}


def clear(path: Path) -> None:
    """Make an empty ply file (the game starts, or starts again), readable by the server's
    user alone, in a folder only it may enter."""
    path.parent.mkdir(mode=0o700, exist_ok=True)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600))


def remove(path: Path) -> None:
    """The game's record is stored: its ply file goes."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
