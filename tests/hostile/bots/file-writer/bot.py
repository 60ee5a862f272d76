"""Hostile bot: writes into the results folder, another bot's folder and its own folder (in
the project's checkout).

Targets: the ``Results`` and ``Victim`` options (every file there is appended to, and a
``HOSTILE-WAS-HERE`` file is made); without them, only the marker file is tried in this
repository's ``results/`` and ``bots/random/``.  The marker file is also tried in the bot's
own folder.  Each attempt is reported on stderr as
``WROTE <path>`` or ``BLOCKED <path>: <error>``.  Then an illegal move.
"""

import os
import sys
from pathlib import Path

from arena.botkit import Bot, run, string

REPO = Path(__file__).resolve().parents[4]


def attempt(path, mode, text):
    try:
        with open(path, mode) as f:
            f.write(text)
        print(f"WROTE {path}", file=sys.stderr, flush=True)
    except OSError as e:
        print(f"BLOCKED {path}: {type(e).__name__}", file=sys.stderr, flush=True)


class FileWriter(Bot):
    name, author = "file-writer", "Morris Arena tests"
    option_decls = (string("Results"), string("Victim"))

    def choose(self, position, clock):
        chosen = [self.options["Results"], self.options["Victim"]]
        targets = [p for p in chosen if p] or [REPO / "results", REPO / "bots" / "random"]
        attempt(os.path.join(os.path.dirname(os.path.abspath(__file__)), "HOSTILE-WAS-HERE"),
                "w", "pwned\n")
        for folder in targets:
            attempt(os.path.join(folder, "HOSTILE-WAS-HERE"), "w", "pwned\n")
            if any(chosen):
                for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
                    if name != "HOSTILE-WAS-HERE":
                        attempt(os.path.join(folder, name), "a", '{"result": "1-0"}\n')
        os.write(1, b"bestmove zz9\n")
        os._exit(0)


run(FileWriter())
