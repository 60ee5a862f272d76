"""striker: captures the most men it can, else plays the first move in sorted order: the
same move in the same position (a deterministic opponent for tests)."""

from __future__ import annotations

from arena.botkit import Clock, SeededBot, run
from arena.rules import Move, Position, capture_count


class StrikerBot(SeededBot):
    name = "striker"
    author = "Morris Arena tests"

    def choose(self, position: Position, clock: Clock) -> Move:
        moves = sorted(zip(position.legal_moves(), position.generate_raw()),
                       key=lambda m: (-capture_count(m[1]), str(m[0])))
        return moves[0][0]


if __name__ == "__main__":
    run(StrikerBot())
