"""The games in progress of a results folder, for the watch page.

The runner writes a ply file per game being played (``RESULTS/live/<n>.jsonl``,
:mod:`arena.live`) and removes it once the game's record is in ``games.jsonl``.  Each game is
read back into a record in progress (:func:`arena.live.live_record`) and shown as the
report's viewer shows a game (:func:`arena.report.viewer.game_data`): the page draws the
board of its last ply, and the viewer itself opens on a click.  The files count only while
the folder's runner holds its lock (:func:`runner_pid`): a run killed mid-game leaves files
that show nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from arena.live import LIVE, live_record, read_live
from arena.lock import holder_pid
from arena.records import GameRecord

#: the most games in progress shown (a run's workers; more would not fit a projector)
MAX_BOARDS = 16


def runner_pid(folder: Path) -> Optional[int]:
    """The pid of the process that holds ``folder``'s lock (an ``arena run``, ``sprt`` or
    ``tune`` writing it), or None when none does (:func:`arena.lock.holder_pid`; the watch
    page runs in a process of its own, never the runner's)."""
    return holder_pid(folder)


def _index(path: Path) -> int:
    try:
        return int(path.stem)
    except ValueError:
        return -1


def live_files(folder: Path) -> list[Path]:
    """The ply files of the games in progress, in schedule order."""
    try:
        paths = [p for p in (folder / LIVE).glob("*.jsonl") if _index(p) >= 0]
    except OSError:
        return []
    return sorted(paths, key=_index)[:MAX_BOARDS]


def live_game(path: Path) -> Optional[GameRecord]:
    """The game in progress in the ply file at ``path`` as a record (result ``*``), None
    when it has no header yet."""
    header, plies = read_live(path)
    if header is None:
        return None
    return live_record(header, plies)


def _board(record: GameRecord, n: int) -> dict[str, Any]:
    """What a live board on the page shows: the last ply of the viewer's data, each
    side's last search, and the game's names."""
    from arena.report.viewer import game_data, variant_title

    title = f"{record.white.name} vs {record.black.name}"
    data = game_data(record, title)
    plies = data["plies"]
    last_search: list[Optional[dict[str, Any]]] = [None, None]
    for p in plies[1:]:
        if p.get("e") is not None and p.get("by") in (0, 1):
            last_search[p["by"]] = p["e"]
    return {"n": n, "id": data["id"], "white": data["white"], "black": data["black"],
            "variant": variant_title(record.variant), "round": record.round,
            "points": data["points"], "edges": data["edges"], "plies": len(plies) - 1,
            "ply": plies[-1], "previous": plies[-2] if len(plies) > 1 else None,
            "search": last_search, "error": data["error"]}


#: a board kept between reads, by its ply file: (the file's size and mtime, the board)
BoardCache = dict[Path, tuple[tuple[int, int], Optional[dict[str, Any]]]]


def live_boards(folder: Path, cache: Optional[BoardCache] = None) -> list[dict[str, Any]]:
    """The boards of the games in progress (none when no runner holds the folder).  With a
    ``cache`` (kept by the caller between reads), a ply file that did not change since the
    last read is not read and replayed again."""
    if runner_pid(folder) is None:
        if cache:
            cache.clear()
        return []
    out, seen = [], set()
    for path in live_files(folder):
        try:
            st = path.stat()
        except OSError:
            continue
        stamp = (st.st_size, st.st_mtime_ns)
        kept = cache.get(path) if cache is not None else None
        if kept is not None and kept[0] == stamp:
            board = kept[1]
        else:
            record = live_game(path)
            board = None if record is None else _board(record, _index(path))
            if cache is not None:
                cache[path] = (stamp, board)
        seen.add(path)
        if board is not None:
            out.append(board)
    if cache is not None:
        for gone in set(cache) - seen:
            del cache[gone]
    return out


__all__ = ["MAX_BOARDS", "BoardCache", "live_boards", "live_files", "live_game", "runner_pid"]
