"""Hostile bot: reads the opponent's files (the ``Victim`` option, else this repository's
``bots/random``) and the results folder (``Results``), reporting ``READ <path>`` or
``BLOCKED <path>: <error>`` on stderr; then an illegal move."""

import os
import sys
from pathlib import Path

from arena.botkit import Bot, run, string

REPO = Path(__file__).resolve().parents[4]


class FileReader(Bot):
    name, author = "file-reader", "Morris Arena tests"
    option_decls = (string("Results"), string("Victim"))

    def choose(self, position, clock):
        folders = [self.options["Victim"] or REPO / "bots" / "random",
                   self.options["Results"] or REPO / "results"]
        for folder in folders:
            try:
                names = sorted(os.listdir(folder))
            except OSError as e:
                print(f"BLOCKED {folder}: {type(e).__name__}", file=sys.stderr, flush=True)
                continue
            for name in names:
                path = os.path.join(folder, name)
                try:
                    with open(path, "rb") as f:
                        print(f"READ {path} {len(f.read())}", file=sys.stderr, flush=True)
                except OSError as e:
                    print(f"BLOCKED {path}: {type(e).__name__}", file=sys.stderr, flush=True)
        os.write(1, b"bestmove zz9\n")
        os._exit(0)


run(FileReader())
