"""Hostile bot: answers ``go`` with 1 GB of text and no newline."""

import os
import time

from arena.botkit import run


def choose(position, clock):
    chunk = b"bestmove " + b"x" * (1 << 20)
    for _ in range(1024):
        os.write(1, chunk)  # blocks once the referee stops reading: it is killed at the end
    while True:
        time.sleep(3600)


run(choose, name="huge-line", author="Morris Arena tests")
