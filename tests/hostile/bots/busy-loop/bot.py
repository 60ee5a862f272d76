"""Hostile bot: busy-loops forever when asked to move."""

from arena.botkit import run


def choose(position, clock):
    n = 0
    while True:
        n += 1


run(choose, name="busy-loop", author="Morris Arena tests")
