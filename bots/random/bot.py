"""random: plays a uniformly random legal move, from an RNG seeded by the ``Seed`` option."""

from __future__ import annotations

import random

from arena.botkit import Bot, Clock, run, seed_option
from arena.rules import Move, Position
from arena.variants import Variant


class RandomBot(Bot):
    """A uniformly random legal move; the same ``Seed`` gives the same game."""

    name = "random"
    author = "Morris Arena"
    option_decls = (seed_option(),)

    def __init__(self) -> None:
        super().__init__()
        self.rng = random.Random(0)

    def new_game(self, variant: Variant) -> None:
        """Re-seed at every game start, so a game depends only on the seed."""
        self.rng = random.Random(self.options["Seed"])

    def choose(self, position: Position, clock: Clock) -> Move:
        """Any legal move, uniformly."""
        return self.rng.choice(position.legal_moves())


if __name__ == "__main__":
    run(RandomBot())
