#!/usr/bin/env python3
"""The smallest Morris Arena bot: it knows no rules and plays the first legal move.

Its bot.yaml says `legal_moves: true`, so just before each `go` the referee sends a line
`legalmoves <m1> <m2> ...` listing every legal turn (captures included, e.g. `d6xa1`).
Answer `go` with one of them. Replace `moves[0]` with your own choice to make it play well.
"""
import sys


def send(line):
    print(line, flush=True)  # flush every line: the referee is waiting for it


moves = []
for raw in sys.stdin:
    words = raw.split()
    if not words:
        continue
    if words[0] == "morris":
        send("id name first")
        send("id author you")
        send("morrisok")
    elif words[0] == "isready":
        send("readyok")
    elif words[0] == "legalmoves":
        moves = words[1:]
    elif words[0] == "go":
        send(f"bestmove {moves[0]}")
    elif words[0] == "quit":
        break
