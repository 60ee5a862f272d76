"""The watchdog's command: ``python -m arena.sandbox --watch <referee pid>``.

Started by :func:`~arena.sandbox.watchdog.ensure_watchdog`; its body is
:func:`~arena.sandbox.watchdog.watch_referee`.
"""

from __future__ import annotations

import sys

from arena.sandbox.watchdog import watch_referee

if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--watch" and sys.argv[2].isdigit():
        watch_referee(int(sys.argv[2]))
    else:
        sys.exit("usage: python -m arena.sandbox --watch REFEREE_PID")
