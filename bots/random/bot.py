"""random: plays a uniformly random legal move, from an RNG seeded by the ``Seed`` option."""

from __future__ import annotations

from arena.botkit import Clock, SeededBot, run
from arena.rules import Move, Position


class RandomBot(SeededBot):
    """A uniformly random legal move; the same ``Seed`` gives the same game."""

    name = "random"
    author = "Morris Arena"

    def choose(self, position: Position, clock: Clock) -> Move:
        """Any legal move, uniformly."""
        return self.rng.choice(position.legal_moves())


if __name__ == "__main__":
    run(RandomBot())
