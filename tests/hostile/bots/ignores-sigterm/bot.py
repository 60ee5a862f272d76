"""Hostile bot: ignores SIGTERM, SIGINT, SIGHUP and ``quit``; never answers ``go``."""

import signal
import time

from arena.botkit import run

for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)


def choose(position, clock):
    while True:
        time.sleep(3600)


run(choose, name="ignores-sigterm", author="Morris Arena tests")
