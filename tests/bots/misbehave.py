"""A test bot that plays random legal moves, then misbehaves in the way its argument names.

Usage: ``python misbehave.py MODE``.  Each ``tests/bots/<mode>/bot.yaml`` runs it with one mode.
If ``MORRIS_TEST_PIDFILE`` is set, the bot appends its own pid and the pid of every process it
spawns to that file (one per line), so tests can check that none outlives the game.

It speaks the protocol through :mod:`arena.protocol` only (it does not use the bot kit, whose
job is to behave).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

from arena import protocol as P
from arena.rules import Position
from arena.variants import Variant

MODES = ("good", "sleepy", "crash", "exit-at-start", "silent-start", "bad-handshake", "illegal",
         "malformed", "garbage", "twice", "twice-late", "huge-line", "stderr-flood", "fork-child",
         "setsid-grandchild", "ignore-term")

#: the go number (1 = the bot's first move) at which the misbehaviour happens
TRIGGER_AT = 3

SLEEPER = "import time\nwhile True: time.sleep(1)"
# a child that starts a grandchild in a new session (escaping the process group), then sleeps
DAEMONIZER = (
    "import os, subprocess, sys, time\n"
    "g = subprocess.Popen([sys.executable, '-c', 'import time\\nwhile True: time.sleep(1)'],"
    " start_new_session=True)\n"
    "with open(os.environ['MORRIS_TEST_PIDFILE'], 'a') as f: f.write(f'{g.pid}\\n')\n"
    "while True: time.sleep(1)\n")


def note_pid(pid: int) -> None:
    """Append ``pid`` to the pid file, if one is set."""
    path = os.environ.get("MORRIS_TEST_PIDFILE")
    if path:
        with open(path, "a") as f:
            f.write(f"{pid}\n")


def send(*lines: str) -> None:
    """Write lines to stdout in one write."""
    sys.stdout.write("".join(line + "\n" for line in lines))
    sys.stdout.flush()


def sleep_forever() -> None:
    while True:
        time.sleep(1)


def main(mode: str) -> None:
    note_pid(os.getpid())
    if mode == "exit-at-start":
        print("exit-at-start: bye", file=sys.stderr, flush=True)
        sys.exit(3)
    if mode == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if mode == "fork-child":
        note_pid(subprocess.Popen([sys.executable, "-c", SLEEPER]).pid)
    if mode == "setsid-grandchild":
        child = subprocess.Popen([sys.executable, "-c", DAEMONIZER])
        note_pid(child.pid)
        pidfile = os.environ.get("MORRIS_TEST_PIDFILE")
        if pidfile:  # wait until the grandchild's pid is written
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and len(open(pidfile).read().split()) < 3:
                time.sleep(0.01)
    rng = random.Random(7)
    variant = Variant()
    position = Position(variant)
    gos = 0
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = P.parse_referee_line(line)
        if isinstance(msg, P.Hello):
            if mode == "silent-start":
                sleep_forever()
            if mode == "bad-handshake":
                send("hello referee")
                continue
            send(P.format_id("name", f"misbehave-{mode}"), P.format_id("author", "tests"),
                 P.format_option(P.OptionDecl("Seed", "spin", "0", 0, 2**31 - 1)),
                 P.format_morrisok())
        elif isinstance(msg, P.SetOption):
            if msg.name.lower() == "seed":
                rng = random.Random(int(msg.value))
        elif isinstance(msg, P.NewGame):
            variant = Variant.from_params(msg.variant, msg.params)
        elif isinstance(msg, P.IsReady):
            send(P.format_readyok())
        elif isinstance(msg, P.PositionCmd):
            position = Position.from_text(variant, msg.position)
        elif isinstance(msg, P.Go):
            gos += 1
            move = str(rng.choice(position.legal_moves()))
            if gos >= TRIGGER_AT:
                misbehave(mode, move)
            if mode == "stderr-flood":
                sys.stderr.write(("flood " * 20 + "\n") * 2000)  # ~240 KB: more than a pipe holds
                sys.stderr.flush()
            send(P.format_bestmove(move))
        elif isinstance(msg, P.Quit):
            if mode == "ignore-term":
                sleep_forever()
            return
    if mode == "ignore-term":
        sleep_forever()


def misbehave(mode: str, move: str) -> None:
    """Do the mode's misbehaviour on the trigger move (modes that behave return)."""
    if mode == "sleepy":
        sleep_forever()
    elif mode == "crash":
        raise RuntimeError("misbehave: crashing on purpose")
    elif mode == "illegal":
        send(P.format_bestmove("a1xg7"))
        sleep_forever()
    elif mode == "malformed":
        send(P.format_bestmove("z9"))
        sleep_forever()
    elif mode == "garbage":
        send("I think " + move + " is nice")
        sleep_forever()
    elif mode == "twice":
        send(P.format_bestmove(move), P.format_bestmove(move))
        sleep_forever()
    elif mode == "twice-late":  # the second reply comes while the referee is not asking
        send(P.format_bestmove(move))
        time.sleep(0.05)
        send(P.format_bestmove(move))
        sleep_forever()
    elif mode == "huge-line":
        chunk = "x" * (1 << 20)
        sys.stdout.write("bestmove ")
        while True:  # an endless line: the referee must cut it, not hold it
            sys.stdout.write(chunk)
            sys.stdout.flush()


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in MODES:
        sys.exit(f"usage: misbehave.py {{{','.join(MODES)}}}")
    main(sys.argv[1])
