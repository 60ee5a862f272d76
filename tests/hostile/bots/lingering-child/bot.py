"""Hostile bot: starts a child that ignores SIGTERM and outlives it, then plays illegally."""

import os
import signal
import time

from arena.botkit import run


def choose(position, clock):
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        while True:
            time.sleep(3600)
    time.sleep(0.05)
    os.write(1, b"bestmove zz9\n")
    while True:
        time.sleep(3600)


run(choose, name="lingering-child", author="Morris Arena tests")
