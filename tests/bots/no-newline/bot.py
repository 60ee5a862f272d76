"""no-newline: answers ``morris 1`` with its ``id`` lines and ``morrisok``, but writes
``morrisok`` without its newline (and flushes), then waits for ever: the referee sees a
partial line and its handshake times out."""

from __future__ import annotations

import os
import sys
import time

path = os.environ.get("MORRIS_TEST_PIDFILE")
if path:
    with open(path, "a") as f:
        f.write(f"{os.getpid()}\n")
sys.stdin.readline()
sys.stdout.write("id name no-newline\nid author tests\nmorrisok")
sys.stdout.flush()
while True:
    time.sleep(1)
