"""A knockout followed live: its bracket and its places (``arena watch``).

A knockout's standings are its bracket's, not its points' (the runner ranks it so:
:func:`arena.rounds.knockout_places`), and a watcher wants the bracket itself.  The
follower hands each game of a knockout here (:meth:`KnockoutView.add`); the view reads
``rounds.jsonl`` again when it changed and draws the report's own bracket
(:func:`arena.report.rounds.bracket_svg`) with the places it gives
(:func:`arena.report.rounds.bracket_places`).  It keeps the records of the knockout's games
(a knockout is small: one match per two players); past :data:`MAX_RECORDS` it keeps none and
shows no bracket rather than grow without bound.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional

from arena.records import GameRecord
from arena.rounds import ROUNDS_FILE, RoundsFileError

#: the most games kept for the bracket (a knockout of 1,024 players over several variants
#: fits; past it the page shows the points' standings only)
MAX_RECORDS = 50_000


def is_knockout(settings: Optional[dict[str, Any]]) -> bool:
    """Whether a tournament's settings (``config.json``'s ``config``) are a knockout's."""
    fmt = (settings or {}).get("format")
    return isinstance(fmt, dict) and fmt.get("type") == "knockout"


def least_games(settings: dict[str, Any]) -> Optional[int]:
    """The fewest games a knockout plays: one match per player but the champion, each of
    ``games_per_pairing`` games per variant (a tied match plays on); None where the
    settings cannot say."""
    try:
        players = len(settings["bots"])
        return max(0, players - 1) * int(settings["games_per_pairing"]) * len(settings["variants"])
    except (KeyError, TypeError, ValueError):
        return None


class KnockoutView:
    """The bracket of the knockout in ``folder`` as its games arrive."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.records: list[GameRecord] = []
        self.overflow = False
        self._stamp: Optional[tuple[int, int, int]] = None
        self._data: Any = None
        self.places: dict[str, int] = {}
        self.champion: Optional[str] = None
        self.svg: Optional[str] = None

    def add(self, record: GameRecord) -> None:
        if self.overflow:
            return
        if len(self.records) >= MAX_RECORDS:
            self.overflow, self.records = True, []
            return
        self.records.append(record)

    def rounds_changed(self) -> bool:
        """Whether ``rounds.jsonl`` changed since it was last read."""
        return self._rounds_stamp() != self._stamp

    def _rounds_stamp(self) -> Optional[tuple[int, int, int]]:
        try:
            st = os.stat(self.folder / ROUNDS_FILE)
        except OSError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    def update(self) -> None:
        """Draw the bracket again from the games so far (and ``rounds.jsonl`` as it is)."""
        from arena.report.rounds import bracket, bracket_places, bracket_svg, load_rounds

        stamp = self._rounds_stamp()
        if stamp != self._stamp:
            self._stamp = stamp
            try:
                self._data = load_rounds(self.folder)
            except RoundsFileError:
                self._data = None
        if self._data is None or self.overflow:
            self.places, self.champion, self.svg = {}, None, None
            return
        rounds, self.champion = bracket(self._data, self.records)
        self.places = bracket_places(rounds)
        self.svg = bracket_svg(self._data, self.records, inline_style=False)  # the page has a CSP

    def state(self) -> Optional[dict[str, Any]]:
        """``{"svg", "champion"}`` for the page; None before the first round is paired."""
        if self.svg is None:
            return None
        return {"svg": self.svg, "champion": self.champion}


__all__ = ["MAX_RECORDS", "KnockoutView", "is_knockout", "least_games"]
