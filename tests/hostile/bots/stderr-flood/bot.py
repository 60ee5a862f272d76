"""Hostile bot: floods stderr without end instead of moving."""

import os

from arena.botkit import run


def choose(position, clock):
    line = b"flood " * 10000 + b"\n"
    while True:
        os.write(2, line)


run(choose, name="stderr-flood", author="Morris Arena tests")
