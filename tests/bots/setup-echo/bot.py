"""setup-echo: a bot kit bot that plays random legal moves and, at its first move of each
game, writes on stderr what the kit made of the game's start: ``start=<the setup position
text, or None>``, ``history=<moves the kit replayed since that start>`` and ``now=<the
position text>``, so a test can see from the record's stderr that the bot received the
start position and the moves from it (tests/test_positions.py)."""

from __future__ import annotations

from arena.botkit import Clock, SeededBot, log, run
from arena.rules import Move, Position
from arena.variants import Variant


class SetupEcho(SeededBot):
    name = "setup-echo"
    author = "tests"

    def new_game(self, variant: Variant) -> None:
        super().new_game(variant)
        self.said = False

    def choose(self, position: Position, clock: Clock) -> Move:
        if not self.said:
            self.said = True
            log(f"start={self.start_position} history={len(position.move_stack)} "
                f"now={position.to_text()}")
        return self.rng.choice(position.legal_moves())


if __name__ == "__main__":
    run(SetupEcho())
