"""A test bot whose name, stderr and last line carry terminal control characters (an escape
sequence that would clear the screen, a bell, a NUL), then crashes on its first move."""

import sys

for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    if word == "morris":
        sys.stdout.write("id name ctl\x1b[2J\x07bot\nid author t\x00x\nmorrisok\n")
    elif word == "isready":
        sys.stdout.write("readyok\n")
    elif word == "go":
        sys.stderr.write("boom \x1b[31mred\x07\x00\n")
        sys.stderr.flush()
        sys.exit(3)
    elif word == "quit":
        break
    sys.stdout.flush()
