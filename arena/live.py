"""Games in progress, move by move: the referee appends each ply to a file as it is played,
pages read it back.

A game being played has a *ply file*: one JSON line per ply, appended by
:class:`PlyWriter` (the referee's ``on_move``, :func:`arena.referee.play_game`) with one
``write`` on an ``O_APPEND`` descriptor, so a reader sees whole lines only (a half-written
last line, without its newline, is left for the next read).  Its first line may be a
*header* (``{"header": {...}}``: the game's id, players, variant and opening), written with
the first ply, so that a page can show a game it knows nothing else about.  A game played
again (its first play was voided) starts again at ply 1: readers keep the latest play only.

Who writes and removes the files: the competition server's judge (``arena/server/live.py``,
``DIR/live/<game id>.jsonl``) and the tournament runner (``RESULTS/live/<page name>.jsonl``,
:func:`runner_live_path`, removed once the game's record is in ``games.jsonl``).  What the
pages show comes from the referee's accepted moves only, never a bot's raw text; every
value read back is checked before use.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

from arena.board import FILES
from arena.protocol import split_setup
from arena.records import GameRecord, MoveInfo, PlayerInfo
from arena.rules import Position
from arena.variants import Variant

#: the folder of the games in progress, inside a results or competition folder
LIVE = "live"
#: plies read back at most (every game ends long before: the rules' move limits)
MAX_PLIES = 10_000
#: the most bytes of a ply file read back (MAX_PLIES plies with their engine output)
MAX_BYTES = MAX_PLIES * 512


class PlyWriter:
    """The referee's ``on_move``: appends ``{"move", "ms", "ply", ...}`` per ply to the file
    at ``path`` (picklable, so it travels with the game to a pool or Dask worker).

    Each line also holds what the record keeps of the move when it is known (``cpu``,
    ``wait``, ``opening``, the bot's ``info``), so that a page can show the game as the
    report's viewer will.  ``header`` (JSON values) is written before the first ply."""

    def __init__(self, path: str, header: Optional[dict[str, Any]] = None) -> None:
        self.path = path
        self.header = header

    def __call__(self, position: Position, info: MoveInfo) -> None:
        ply = len(position.move_stack)
        row: dict[str, Any] = {"move": info.move, "ms": round(info.wall_ms, 1), "ply": ply}
        if info.cpu_ms is not None:
            row["cpu"] = round(info.cpu_ms, 1)
        if info.wait_ms is not None:
            row["wait"] = round(info.wait_ms, 1)
        if info.opening:
            row["opening"] = True
        if info.info:
            row["info"] = info.info
        try:
            text = json.dumps(row) + "\n"
        except (TypeError, ValueError):  # (the info of a bot is parsed, but never trusted)
            row.pop("info", None)
            text = json.dumps(row) + "\n"
        if ply == 1 and self.header is not None:
            text = json.dumps({"header": self.header}, default=str) + "\n" + text
        data = text.encode("utf-8")
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
                         0o600)
        except OSError:  # (no folder, a full disk: the game goes on, unwatched)
            return
        try:  # the lines in one write: a reader sees whole lines (a short write: the rest)
            while data:
                data = data[os.write(fd, data):]
        except OSError:
            pass
        finally:
            os.close(fd)


def read_live(path: Path) -> tuple[Optional[dict[str, Any]], list[dict[str, Any]]]:
    """The header (None without one) and the plies written so far to the ply file at
    ``path`` (a missing file: none; a half-written last line is left for the next read).
    Only the latest play of a game played again is returned."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(MAX_BYTES)
    except (FileNotFoundError, IsADirectoryError):
        return None, []
    header: Optional[dict[str, Any]] = None
    plies: list[dict[str, Any]] = []
    for line in text.split("\n")[:-1]:
        try:
            ply = json.loads(line)
        except ValueError:
            break
        if not isinstance(ply, dict):
            break
        if "header" in ply:
            header = ply["header"] if isinstance(ply["header"], dict) else None
            continue
        if not isinstance(ply.get("move"), str):
            break
        if ply.get("ply") == 1:
            plies = []
        if len(plies) < MAX_PLIES:
            plies.append(ply)
    return header, plies


def read_plies(path: Path) -> list[dict[str, Any]]:
    """The plies written so far (:func:`read_live` without the header)."""
    return read_live(path)[1]


def live_board(variant: Variant, moves: list[str], start: Optional[str] = None
               ) -> dict[str, Any]:
    """The position after ``moves`` (from ``start``, a position text, else the variant's
    start) for a live page: ``board`` (a character per point, ``W``/``B``/``.``, in the
    topology's point order), ``hand`` (men to place), ``turn`` (0 white, 1 black), ``plies``
    (moves replayed), the board's ``points``, ``edges`` (index pairs) and ``xy`` (each
    point's column and row on the 7x7 grid, row 0 at the top), and ``last`` (the last
    move's text)."""
    pos = Position(variant)
    if start:
        try:
            pos = Position.from_text(variant, start)
        except Exception:  # noqa: BLE001 - not a position of the variant: its start
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


def start_live(folder: Path) -> bool:
    """Make ``folder`` (a ``live/`` folder) for a run's ply files and empty it of an earlier
    run's; False when it cannot be made (the games are played regardless, unwatched)."""
    try:
        folder.mkdir(exist_ok=True)
    except OSError:
        return False
    end_live(folder)
    return True


def end_live(folder: Path, name: Optional[str] = None) -> None:
    """Remove the ply file ``name`` of ``folder`` (its game is saved), or every ply file
    (None: a run ends; the games in flight are abandoned).  Errors are ignored: the games
    are saved regardless."""
    try:
        if name is not None:
            (folder / name).unlink(missing_ok=True)
            return
        for path in folder.glob("*.jsonl"):
            path.unlink(missing_ok=True)
    except OSError:
        pass


def game_header(game_id: str, variant: Variant, white: str, black: str,
                opening: tuple[str, ...] | list[str], *, tournament: Optional[str] = None,
                round: Optional[int] = None, pair: Optional[int] = None) -> dict[str, Any]:
    """A ply file's header: what a page needs to show a game before its record exists."""
    return {"game_id": game_id, "variant": variant.name, "variant_params": variant.to_dict(),
            "white": white, "black": black, "opening": list(opening),
            "tournament": tournament, "round": round, "pair": pair}


def _text(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _number(value: Any) -> Optional[float]:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None


def _whole(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def live_record(header: dict[str, Any], plies: list[dict[str, Any]]) -> GameRecord:
    """A game in progress as a record (result ``*``, no termination) built from its ply
    file's header and plies, for the report's viewer (:func:`arena.report.viewer.game_data`).
    Values of the wrong type are dropped, never trusted."""
    params = header.get("variant_params")
    start, opening = split_setup([o for o in header.get("opening") or [] if isinstance(o, str)])
    moves = []
    for p in plies:
        info = p.get("info")
        moves.append(MoveInfo(_text(p.get("move")), _number(p.get("ms")) or 0.0,
                              _number(p.get("cpu")), p.get("opening") is True,
                              _number(p.get("wait")),
                              info if isinstance(info, dict) else None))
    return GameRecord(
        game_id=_text(header.get("game_id"), "?"), variant=_text(header.get("variant"), "?"),
        variant_params=params if isinstance(params, dict) else {},
        white=PlayerInfo(_text(header.get("white"), "white")),
        black=PlayerInfo(_text(header.get("black"), "black")),
        result="*", termination="", moves=moves, opening=opening,
        tournament=header.get("tournament") if isinstance(header.get("tournament"), str)
        else None, round=_whole(header.get("round")), pair=_whole(header.get("pair")),
        start_position=start)


__all__ = ["LIVE", "MAX_PLIES", "PlyWriter", "end_live", "game_header", "live_board",
           "live_record", "read_live", "read_plies", "start_live"]
