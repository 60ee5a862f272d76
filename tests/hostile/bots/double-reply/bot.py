"""Hostile bot: answers ``go`` with two ``bestmove`` lines."""

import os
import random
import time

from arena.botkit import run


def choose(position, clock):
    move = random.choice(position.legal_moves())
    os.write(1, f"bestmove {move}\nbestmove {move}\n".encode())
    while True:  # the kit would add a third reply: stay quiet instead
        time.sleep(3600)


run(choose, name="double-reply", author="Morris Arena tests")
