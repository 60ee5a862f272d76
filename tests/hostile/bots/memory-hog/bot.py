"""Hostile bot: writes 10 GB into memory, 64 MB at a time, when asked to move.

Run it only inside a containment with a memory limit (a memory cgroup).
"""

import time

from arena.botkit import run


def choose(position, clock):
    hoard = []
    for _ in range(160):
        hoard.append(b"\x01" * (64 << 20))
    while True:
        time.sleep(3600)


run(choose, name="memory-hog", author="Morris Arena tests")
