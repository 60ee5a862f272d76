"""Hostile bot: a fork bomb.  Every process forks forever; refused forks are retried.

Run it only inside a containment that limits the process count (a pids cgroup).
"""

import os
import time

from arena.botkit import run


def choose(position, clock):
    while True:
        try:
            os.fork()
        except OSError:
            time.sleep(0.01)


run(choose, name="fork-bomb", author="Morris Arena tests")
