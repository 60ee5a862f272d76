"""Hostile bot: double-forks a daemon in a new session (leaving the process group and the
process tree), then plays an illegal move and exits."""

import os
import signal
import time

from arena.botkit import run


def choose(position, clock):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            while True:
                time.sleep(3600)
        os._exit(0)
    time.sleep(0.1)
    os.write(1, b"bestmove zz9\n")
    os._exit(0)


run(choose, name="setsid-daemon", author="Morris Arena tests")
