"""timed: a random mover that spends a set part of each move's time in a set way, for the
tests and the measurements of the clock on a busy machine (docs/TOURNAMENTS.md, *Fair on a
busy machine*).

``bot.py HOW FACTOR``: before every move, for ``FACTOR`` times the ``movetime`` of ``go``,

* ``burn``: use that much CPU time (a search that thinks that long);
* ``sleep``: sleep that long (a bot waiting for something);
* ``spin``: loop until that much wall time has passed (``while time.time() < stop``: the
  student's loop that watches the wall clock).
"""

from __future__ import annotations

import random
import sys
import time

from arena.botkit import run

HOW = sys.argv[1] if len(sys.argv) > 1 else "burn"
FACTOR = float(sys.argv[2]) if len(sys.argv) > 2 else 0.5


def choose(position, clock):  # type: ignore[no-untyped-def]
    budget = FACTOR * (clock.go.movetime or 100) / 1000.0
    if HOW == "sleep":
        time.sleep(budget)
    elif HOW == "spin":
        stop = time.time() + budget
        while time.time() < stop:
            pass
    else:
        until = time.process_time() + budget
        while time.process_time() < until:
            pass
    return random.choice(position.legal_moves())


run(choose, name=f"timed-{HOW}-{FACTOR:g}")
