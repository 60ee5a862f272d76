"""Hostile bot: plays two moves, then exits in the middle of the game."""

import os
import random

from arena.botkit import run

played = 0


def choose(position, clock):
    global played
    played += 1
    if played > 2:
        os._exit(3)
    return random.choice(position.legal_moves())


run(choose, name="exits-mid-game", author="Morris Arena tests")
