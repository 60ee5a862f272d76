"""A test bot that keeps state between games: it counts its ``newgame``\\ s and says the count on
stderr at the start of each game (``game N``), plays random legal moves, and, with the option
``CrashAtGame`` = N > 0, exits (status 3) at its first move of its N-th game.  Kept between the
games of a pairing (``restart: per-pairing``) its count grows; a fresh process starts at 1."""

import random
import sys

from arena.botkit import Bot, log, run, spin


class Counter(Bot):
    name, author = "counter", "tests"
    option_decls = (spin("CrashAtGame", 0, 0, 1000),)

    def __init__(self) -> None:
        super().__init__()
        self.games = 0
        self.rng = random.Random(7)

    def new_game(self, variant):
        self.games += 1
        log(f"game {self.games}")

    def choose(self, position, clock):
        if self.games == self.options["CrashAtGame"]:
            log(f"crashing in game {self.games}")
            sys.exit(3)
        return self.rng.choice(position.legal_moves())


run(Counter())
