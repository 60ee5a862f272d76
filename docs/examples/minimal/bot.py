#!/usr/bin/env python3
"""A minimal Morris Arena bot without the kit: random legal moves on the 24-point boards.

Handles placing, moving, flying and one capture per mill with the last-resort rule, so it
plays legal moves in nine-mens-morris, nine-mens-morris-no-flying, -diagonals,
twelve-mens-morris, morabaraba and lasker-morris (it never moves while it can place).
"""
import random
import sys

MILLS = ("a1a4a7 a7d7g7 g1g4g7 a1d1g1 b2b4b6 b6d6f6 f2f4f6 b2d2f2 "
         "c3c4c5 c5d5e5 e3e4e5 c3d3e3 a4b4c4 e4f4g4 d5d6d7 d1d2d3")
DIAGONALS = " a1b2c3 a7b6c5 e5f6g7 e3f2g1"


def send(line):
    print(line, flush=True)  # flush every line: the referee is waiting for it


for raw in sys.stdin:
    words = raw.split()
    if not words:
        continue
    if words[0] == "morris":
        send("id name minimal")
        send("id author you")
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
        src, dst = random.choice(steps)
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
                move += "x" + random.choice(free)
        send(f"bestmove {move}")
