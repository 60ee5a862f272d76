#!/usr/bin/env python3
"""A tiny engine written from docs/PROTOCOL.md alone, the way a UCI engine's port would be:
random legal moves on the 24-point boards (docs/PROTOCOL.md, *A minimal bot without the
kit*), an ``info depth 1 score 0`` line before each move, and UCI's ``bestmove M ponder P``
(P: the move it expects in reply, here just another of its candidates).  No ``arena`` import.
It is started by engine strings (``-engine cmd='{python} engine.py' dir=tests/bots/tiny-uci``)
in tests/test_cutechess_cli.py; its bot.yaml is for ``arena check``."""
import random
import sys

MILLS = ("a1a4a7 a7d7g7 g1g4g7 a1d1g1 b2b4b6 b6d6f6 f2f4f6 b2d2f2 "
         "c3c4c5 c5d5e5 e3e4e5 c3d3e3 a4b4c4 e4f4g4 d5d6d7 d1d2d3")
DIAGONALS = " a1b2c3 a7b6c5 e5f6g7 e3f2g1"


def send(line):
    print(line, flush=True)  # flush every line: the referee is waiting for it


rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else None)
for raw in sys.stdin:
    words = raw.split()
    if not words:
        continue
    if words[0] == "morris":
        send("id name tiny-uci")
        send("id author tests")
        send("morrisok")
    elif words[0] == "isready":
        send("readyok")
    elif words[0] == "quit":
        break
    elif words[0] == "newgame":
        rules = dict(word.split("=", 1) for word in words[2:])
        text = MILLS + (DIAGONALS if rules["board"] == "diagonals" else "")
        lines = [(t[0:2], t[2:4], t[4:6]) for t in text.split()]
        adj = {p: set() for line in lines for p in line}
        for a, b, c in lines:
            adj[a].add(b), adj[b].update((a, c)), adj[c].add(b)
    elif words[0] == "position":  # position <points> <w|b> <white hand> <black hand> ...
        turn, at = words[2], dict(zip(sorted(adj), words[1]))
        me, opp, in_hand = ("W", "B", int(words[3])) if turn == "w" else ("B", "W", int(words[4]))
    elif words[0] == "go":
        empty = [p for p in at if at[p] == "."]
        mine = [p for p in at if at[p] == me]
        if in_hand:
            steps = [(None, d) for d in empty]
        elif rules["flying"] == "true" and len(mine) <= int(rules["fly_at"]):
            steps = [(s, d) for s in mine for d in empty]
        else:
            steps = [(s, d) for s in mine for d in adj[s] if at[d] == "."]
        src, dst = rng.choice(steps)
        after = dict(at)
        after[dst] = me
        move = dst if src is None else f"{src}-{dst}"
        if src is not None:
            after[src] = "."
        if any(dst in line and all(after[p] == me for p in line) for line in lines):
            theirs = [p for p in at if at[p] == opp]
            protected = {p for line in lines if all(at[q] == opp for q in line) for p in line}
            free = [p for p in theirs if p not in protected] or theirs  # last-resort rule
            if free:
                move += "x" + rng.choice(free)
        other = rng.choice(empty)  # a stand-in for the reply it would ponder on
        send("info depth 1 score 0")
        send(f"bestmove {move} ponder {other}")
