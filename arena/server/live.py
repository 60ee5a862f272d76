"""Games in progress, move by move: the judge's workers append each ply to a file as it is
played, the pages read it back.

A ladder game being played has a file ``DIR/live/<game id>.jsonl`` (:func:`live_path`): the
judge makes it empty when it hands the game to a worker (so a game played again after a
restart starts from an empty board), the worker's referee appends one JSON line per ply
(:class:`arena.live.PlyWriter`, called by :func:`arena.referee.play_game` after every
move), and the judge removes it once the game's record is stored.  The files are written by
the worker, so with a Dask executor the workers must share the competition folder (as they
already must for the bots).  :func:`live_board` replays the plies with the rules engine for the pages:
what they show comes from the referee's accepted moves only, never a bot's raw text.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from arena.live import LIVE, MAX_PLIES, PlyWriter, live_board, read_plies
from arena.records import GameRecord

#: (the ply files, their reader and the board: :mod:`arena.live`, shared with the runner)
__all__ = ["LIVE", "MAX_PLIES", "PlyWriter", "clear", "live_board", "live_path", "play_live",
           "read_plies", "remove"]


def live_path(folder: Path, game_id: int) -> Path:
    """The ply file of ladder game ``game_id`` in competition ``folder``."""
    return folder / LIVE / f"{game_id}.jsonl"


def play_live(job: Any, path: str) -> GameRecord:
    """Play a ladder game (a :class:`arena.jobs.GameJob`) in a worker, each ply appended to
    ``path`` as it is played; returns its record labelled like :func:`arena.jobs.play_job`'s.

    This is :func:`~arena.jobs.play_job` (its clean stop on SIGTERM included) with a
    :class:`PlyWriter` as the referee's ``on_move``.
    """
    from arena.jobs import play_job

    return play_job(dataclasses.replace(job, on_move=PlyWriter(path)))


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
