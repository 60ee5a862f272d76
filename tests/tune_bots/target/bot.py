"""A bot with a known best setting, for the tests of ``arena tune``.

It plays bots/greedy's moves (its ``GreedyBot``, loaded from that folder), except that each
move is a uniformly random legal move with probability

    p = min(1, sqrt(((X - 60) / 60)^2 + ((Y - 700) / 600)^2))

so its strength falls with the distance of its spin options ``X`` (0..100) and ``Y``
(0..1000, ten times the scale of X) from the hidden target X = 60, Y = 700: at the target it
is greedy itself, 60 units of X (or 600 of Y) away it plays at random.  Every choice comes
from the ``Seed`` the referee sends, so a game depends only on its seed, opening and options.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

from arena.botkit import SeededBot, check, run, spin

#: the hidden optimum and the distance, per option, at which every move is random
TARGET = {"X": 60, "Y": 700}
SCALE = {"X": 60, "Y": 600}


def _load_greedy():
    path = Path(__file__).resolve().parents[3] / "bots" / "greedy" / "bot.py"
    spec = importlib.util.spec_from_file_location("greedy_bot", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


greedy = _load_greedy()


def random_share(x: float, y: float) -> float:
    """The probability of a random move with options ``x`` and ``y``."""
    return min(1.0, math.hypot((x - TARGET["X"]) / SCALE["X"], (y - TARGET["Y"]) / SCALE["Y"]))


class TargetBot(greedy.GreedyBot):
    """Greedy with a share of random moves that grows with the distance from the target."""

    name = "tune-target"
    author = "tests"
    #: ``Quiet`` does nothing: a check option, which cannot be tuned
    option_decls = SeededBot.option_decls + (spin("X", 50, 0, 100), spin("Y", 500, 0, 1000),
                                             check("Quiet", True))

    def choose(self, position, clock):
        if self.rng.random() < random_share(self.options["X"], self.options["Y"]):
            return self.rng.choice(position.legal_moves())
        return super().choose(position, clock)


if __name__ == "__main__":
    run(TargetBot())
