"""Hostile bot: answers ``go`` with NUL bytes and invalid UTF-8 instead of a move."""

import os
import time

from arena.botkit import run


def choose(position, clock):
    os.write(1, b"\x00\xff\xfe\x00best\xc3\x28move\x00 a1\n")
    while True:
        time.sleep(3600)


run(choose, name="nul-bytes", author="Morris Arena tests")
