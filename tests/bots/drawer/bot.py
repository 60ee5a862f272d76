"""drawer: never closes a mill while it has another move, and plays the same move in the
same position (the first such move in sorted order): two drawers repeat positions (or go
100 turns without a capture) and draw.  Copies of it score exactly alike against any
deterministic bot (tests/test_server_class.py: a shared place)."""

from __future__ import annotations

from arena.botkit import Clock, SeededBot, run
from arena.rules import Move, Position, capture_count


class DrawerBot(SeededBot):
    name = "drawer"
    author = "Morris Arena tests"

    def choose(self, position: Position, clock: Clock) -> Move:
        moves = sorted(zip(position.legal_moves(), position.generate_raw()),
                       key=lambda m: str(m[0]))
        quiet = [move for move, raw in moves if not capture_count(raw)]
        return quiet[0] if quiet else moves[0][0]


if __name__ == "__main__":
    run(DrawerBot())
