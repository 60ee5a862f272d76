"""Hostile bot: burns CPU on two threads (hashing releases the GIL) until the process has
used twice its move time in CPU, then answers.  Only the CPU clock catches it early: the
time it takes on the wall clock depends on how many cores are free."""

import hashlib
import random
import threading
import time

from arena.botkit import run

BLOCK = b"x" * (1 << 16)


def burn(until_cpu):
    while time.process_time() < until_cpu:
        hashlib.sha256(BLOCK).digest()


def choose(position, clock):
    until = time.process_time() + 2.0 * (clock.go.movetime or 1000) / 1000.0
    threads = [threading.Thread(target=burn, args=(until,)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return random.choice(position.legal_moves())


run(choose, name="cpu-threads", author="Morris Arena tests")
