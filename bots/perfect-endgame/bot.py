"""perfect-endgame: the endgame tablebases where they cover the position, alpha-beta elsewhere.

Where the tables hold the position (both hands empty, men counts the tables cover, the
variant's rules those the tables were built for), the bot plays the move that keeps the
best value: among winning moves the one with the shortest distance to the next capture or the
end (so a won position is converted within the no-capture draw rule), among losing moves the
longest, among drawing moves the one alpha-beta's evaluation likes best.  The tables' values
honour the position's quiet-turn count, so a win is only played for where it still fits the
rule.  Everywhere else it is ``bots/alphabeta``, with all its options: both bots run the one
search of ``arena/alphabeta.py`` (:class:`arena.alphabeta.AlphaBetaBot`, subclassed here),
which every sandbox shows with the rest of the ``arena`` package, so this folder is
self-contained and passes ``arena check`` at every isolation level.

Where the tables are: the ``TablebaseDir`` option, else ``$MORRIS_ARENA_TABLEBASES``, else a
``tables`` folder inside this bot's folder, else the user's cache folder
(``~/.cache/morris-arena/tablebases``).  Without tables (or for a variant they do not cover)
it plays alpha-beta alone, and says so once on stderr.  A bot in the ``bwrap`` sandbox sees
only its own folder and the runtime: put the tables in ``tables/`` here, or name their
folder in the isolation's ``read_only`` (docs/TABLEBASES.md).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional

from arena.alphabeta import AlphaBetaBot
from arena.botkit import Clock, OptionValue, log, run, send_info, string
from arena.rules import Move, Position
from arena.variants import Variant

HERE = Path(__file__).resolve().parent


class PerfectEndgameBot(AlphaBetaBot):
    """alphabeta, with the tables' move wherever they cover the position."""

    name = "perfect-endgame"
    author = "Morris Arena"
    option_decls = (*AlphaBetaBot.option_decls, string("TablebaseDir", ""))

    def __init__(self) -> None:
        super().__init__()
        self.tables: Any = None
        self.looked = False
        self.told: set[str] = set()

    def set_option(self, name: str, value: OptionValue) -> None:
        super().set_option(name, value)
        if name == "TablebaseDir":
            self._forget()

    def new_game(self, variant: Variant) -> None:
        """Read the variant's tables now (the referee waits for ``readyok``), not during a
        timed move."""
        super().new_game(variant)
        self.told.discard("variant")
        tables = self._open()
        if tables is None:
            return
        from arena.tablebase import NotCovered, TablebaseError

        try:
            tables.preload(variant)
        except NotCovered:
            pass  # another variant: said at the first move that needs the tables
        except TablebaseError as e:
            self._say("broken", f"the tables failed ({e}): playing alpha-beta")
            self._forget()
            self.looked = True

    # -- the tables ---------------------------------------------------------------------
    def _forget(self) -> None:
        if self.tables is not None:
            self.tables.close()
        self.tables, self.looked = None, False

    def _candidates(self) -> list[Path]:
        from arena.tablebase import default_directory

        named = str(self.options["TablebaseDir"])
        if named:
            return [Path(named).expanduser()]
        out = []
        if os.environ.get("MORRIS_ARENA_TABLEBASES"):
            out.append(Path(os.environ["MORRIS_ARENA_TABLEBASES"]))
        out += [HERE / "tables", default_directory()]
        return out

    def _open(self) -> Any:
        """The tables (opened once), or None when no folder holds any."""
        if self.looked:
            return self.tables
        self.looked = True
        from arena.tablebase import TablebaseError, open_tablebase

        tried = self._candidates()
        for folder in tried:
            if folder.is_dir() and any(folder.glob("*.mtb")):
                try:
                    self.tables = open_tablebase(folder)
                except TablebaseError as e:
                    self._say("open", f"cannot use the tables in {folder} ({e})")
                    continue
                return self.tables
        self._say("none", "no endgame tables found (looked in "
                  + ", ".join(str(p) for p in tried) + "): playing alpha-beta everywhere")
        return None

    def _say(self, key: str, text: str) -> None:
        if key not in self.told:
            self.told.add(key)
            log(f"perfect-endgame: {text}")

    def table_move(self, position: Position) -> Optional[Move]:
        """The tables' best move, or None where they do not cover ``position``."""
        tables = self._open()
        if tables is None:
            return None
        from arena.tablebase import (NotCovered, TablebaseError, TablebaseMismatch,
                                     UnsupportedVariant)

        try:
            moves = tables.probe_moves(position)
        except (TablebaseMismatch, UnsupportedVariant) as e:  # not this game's rules
            self._say("variant", f"the tables do not cover this variant ({e})")
            return None
        except NotCovered:  # placing, or more men than the tables hold: alpha-beta's turn
            return None
        except TablebaseError as e:  # a damaged file: say it once and play on without
            self._say("broken", f"the tables failed ({e}): playing alpha-beta")
            self._forget()
            self.looked = True
            return None
        if not moves:
            return None
        best = moves[0]
        same = [m for m in moves if (m.value, m.distance) == (best.value, best.distance)]
        if best.value == "draw" and len(same) > 1:
            same.sort(key=lambda m: self._after(position, m.move))
        choice = same[0] if best.value == "draw" else self.rng.choice(same)
        send_info(f"tablebase {best.value} distance {best.distance} move {choice.move}")
        return choice.move

    def _after(self, position: Position, move: Move) -> int:
        """The opponent's evaluation after ``move`` (lower is better for us)."""
        pos = position.copy()
        pos.push(move)
        score = self.evaluate(pos)
        return score if pos.turn != position.turn else -score

    def choose(self, position: Position, clock: Clock) -> Move:
        move = self.table_move(position)
        if move is not None:
            return move
        return super().choose(position, clock)


if __name__ == "__main__":
    run(PerfectEndgameBot())
