"""Endgame analysis for teaching: for each move a bot played in a position the endgame
tables cover, whether it kept the position's value or threw it away (a won endgame drawn or
lost, a drawn one lost), and which moves would have kept it.

:func:`analyse` reads game records and the tables (:mod:`arena.tablebase`) and returns one
:class:`GameAnalysis` per game that reached a covered position; :func:`write_analysis`
stores them in a results folder as ``analysis.jsonl`` (one JSON object per game, the
records untouched), which ``arena report`` and the viewer read back (:func:`read_analysis`);
:func:`summarise` gives each bot's endgame table: covered positions reached, accuracy (the
share of its moves there that kept the value), and the won endgames it threw away with the
moments (game and ply) to look at.  ``arena analyse RESULTS`` is the command.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional, TextIO

from arena.records import GameRecord
from arena.rules import COLOR_NAMES
from arena.variants import Variant

#: the analysis file of a results folder
ANALYSIS_FILE = "analysis.jsonl"
_ORDER = {"loss": 0, "draw": 1, "win": 2}
#: how a move can throw a value away: (before, after) for the mover
THROWN = {("win", "draw"): "win→draw", ("win", "loss"): "win→loss",
          ("draw", "loss"): "draw→loss"}


@dataclass(frozen=True)
class MoveMark:
    """One move played in a covered position: ``ply`` (1-based, as the viewer counts),
    ``color``, ``move``, the position's value for the mover (``before``) and what the move
    led to (``after``), the distance the tables give for it, ``thrown`` (``win→draw``,
    ``win→loss``, ``draw→loss``, or "" when the value was kept) and the moves that keep
    the best value (at most five, best first)."""

    ply: int
    color: str
    move: str
    before: str
    after: str
    distance: int
    thrown: str
    best: tuple[str, ...]


@dataclass
class GameAnalysis:
    """The marks of one game (``white``/``black``: the bots' names)."""

    game_id: str
    white: str
    black: str
    variant: str
    marks: list[MoveMark] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"game_id": self.game_id, "white": self.white, "black": self.black,
                "variant": self.variant, "marks": [asdict(m) for m in self.marks]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GameAnalysis:
        marks = [MoveMark(**{**m, "best": tuple(m.get("best", ()))}) for m in d["marks"]]
        return cls(d["game_id"], d["white"], d["black"], d["variant"], marks)


def analyse_game(record: GameRecord, tables: Any, variant: Optional[Variant] = None
                 ) -> GameAnalysis:
    """The marks of ``record`` (replayed move by move with the rules engine) for every
    move played in a position ``tables`` cover (an :class:`arena.tablebase.Tablebase`)."""
    from arena.tablebase import NotCovered

    from arena.report.viewer import record_variant, start_of

    variant = variant or record_variant(record)[0]
    out = GameAnalysis(record.game_id, record.white.name, record.black.name, record.variant)
    pos = start_of(record, variant)
    for ply, info in enumerate(record.moves, 1):
        if pos.outcome() is None and not info.opening:
            try:
                probes = tables.probe_moves(pos)
            except NotCovered:
                probes = []
            if probes:
                best_value = probes[0].value
                played = next((p for p in probes if str(p.move) == info.move), None)
                if played is not None:
                    keeping = tuple(str(p.move) for p in probes if p.value == best_value)
                    thrown = THROWN.get((best_value, played.value), "")
                    out.marks.append(MoveMark(ply, COLOR_NAMES[pos.turn], info.move,
                                              best_value, played.value, played.distance,
                                              thrown, keeping[:5]))
        try:
            pos.push_text(info.move)
        except ValueError:
            break  # a record that does not replay (another rules version): stop here
    return out


def analyse(records: Iterable[GameRecord], tables: Any) -> list[GameAnalysis]:
    """:func:`analyse_game` of every record that reached a covered position."""
    out = []
    for record in records:
        game = analyse_game(record, tables)
        if game.marks:
            out.append(game)
    return out


def write_analysis(folder: str | os.PathLike[str], games: Iterable[GameAnalysis]) -> Path:
    """Store ``games`` as ``folder/analysis.jsonl`` (replacing an earlier analysis), a game
    at a time (any iterable: the games are never held together) into a temporary file
    that is fsynced and moved into place, so a reader never sees half an analysis."""
    path = Path(folder) / ANALYSIS_FILE
    with _atomic_text(path) as out:
        for g in games:
            out.write(json.dumps(g.to_dict(), ensure_ascii=False) + "\n")
    return path


@contextlib.contextmanager
def _atomic_text(path: Path) -> Iterator[TextIO]:
    """A text file written to a temporary name beside ``path``, fsynced and renamed to
    ``path`` when the block ends (removed if it raises): :func:`arena.records.atomic_write`
    for a file written piece by piece."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def read_analysis(folder: str | os.PathLike[str]) -> dict[str, GameAnalysis]:
    """The analysis of a results folder by game id (empty when there is none, or for lines
    that cannot be read)."""
    out: dict[str, GameAnalysis] = {}
    try:
        lines = (Path(folder) / ANALYSIS_FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    for line in lines:
        try:
            game = GameAnalysis.from_dict(json.loads(line))
        except (ValueError, KeyError, TypeError):
            continue
        out[game.game_id] = game
    return out


@dataclass
class BotEndgames:
    """One bot's endgame figures: moves played in covered positions, how many kept their
    value, and the moments it threw a value away (``(game id, ply, kind)``)."""

    bot: str
    moves: int = 0
    kept: int = 0
    won_positions: int = 0
    thrown: list[tuple[str, int, str]] = field(default_factory=list)

    @property
    def accuracy(self) -> Optional[float]:
        """The share of its moves in covered positions that kept the value (None: none)."""
        return self.kept / self.moves if self.moves else None

    @property
    def wins_thrown(self) -> int:
        """Won endgames it drew or lost."""
        return sum(1 for _, _, kind in self.thrown if kind.startswith("win"))


class EndgameSummary:
    """:func:`summarise`, one game at a time (:meth:`add`), for a stream of games."""

    def __init__(self) -> None:
        self.bots: dict[str, BotEndgames] = {}
        self.games = 0

    def add(self, game: GameAnalysis) -> None:
        """Count the marks of ``game``."""
        self.games += 1
        for mark in game.marks:
            name = game.white if mark.color == "white" else game.black
            row = self.bots.get(name)
            if row is None:
                row = self.bots[name] = BotEndgames(name)
            row.moves += 1
            row.won_positions += mark.before == "win"
            if mark.thrown:
                row.thrown.append((game.game_id, mark.ply, mark.thrown))
            else:
                row.kept += 1

    def rows(self) -> list[BotEndgames]:
        """Each bot's :class:`BotEndgames`, the most accurate first (then by name)."""
        return sorted(self.bots.values(), key=lambda b: (-(b.accuracy or 0.0), b.bot))


def summarise(games: Iterable[GameAnalysis]) -> list[BotEndgames]:
    """Each bot's :class:`BotEndgames`, the most accurate first (then by name)."""
    summary = EndgameSummary()
    for game in games:
        summary.add(game)
    return summary.rows()


__all__ = ["ANALYSIS_FILE", "MoveMark", "GameAnalysis", "BotEndgames", "EndgameSummary", "analyse",
           "analyse_game", "write_analysis", "read_analysis", "summarise", "THROWN"]
