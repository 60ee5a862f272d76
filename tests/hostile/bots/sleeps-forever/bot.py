"""Hostile bot: answers the handshake, then never answers ``go`` (sleeps forever)."""

import time

from arena.botkit import run


def choose(position, clock):
    while True:
        time.sleep(3600)


run(choose, name="sleeps-forever", author="Morris Arena tests")
