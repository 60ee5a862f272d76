"""Hostile bot: closes stdout when asked to move, then stays alive."""

import os
import time

from arena.botkit import run


def choose(position, clock):
    os.close(1)
    while True:
        time.sleep(3600)


run(choose, name="closes-stdout", author="Morris Arena tests")
