"""Hostile bot: SIGKILLs every process whose command line holds the ``Victim`` option (the
test gives its opponent a unique marker argument), reporting ``KILLED <pid>`` or
``BLOCKED <pid>: <error>`` on stderr (``NOTFOUND`` if it sees none); then an illegal move.

It targets only the marked opponent, so a sandbox that fails to stop it harms nothing else.
"""

import os
import signal
import sys

from arena.botkit import Bot, run, string


def marked(marker):
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if marker.encode() in args:
            found.append(int(name))
    return found


class Killer(Bot):
    name, author = "killer", "Morris Arena tests"
    option_decls = (string("Victim"),)

    def choose(self, position, clock):
        marker = self.options["Victim"]
        pids = marked(marker) if marker else []
        if not pids:
            print("NOTFOUND", file=sys.stderr, flush=True)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                print(f"KILLED {pid}", file=sys.stderr, flush=True)
            except OSError as e:
                print(f"BLOCKED {pid}: {type(e).__name__}", file=sys.stderr, flush=True)
        os.write(1, b"bestmove zz9\n")
        os._exit(0)


run(Killer())
