"""Hostile bot: says ``bestmove`` before it is asked (right after ``readyok``)."""

import sys

for line in sys.stdin:
    words = line.split()
    if words[:1] == ["morris"]:
        sys.stdout.write("id name early-reply\nmorrisok\n")
    elif words[:1] == ["isready"]:
        sys.stdout.write("readyok\nbestmove a1\n")  # one write: already waiting before 'go'
    elif words[:1] == ["quit"]:
        break
    sys.stdout.flush()
