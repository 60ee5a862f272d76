"""A test bot that plays random legal moves and sends ``bestmove d6`` when nothing was asked.

Usage: ``python bot.py WHEN [N]``.  ``WHEN`` is ``early-`` or ``late-`` followed by ``hello``
(after ``morrisok``), ``ready`` (after ``readyok``) or ``reply`` (after its reply to the
``N``-th ``go``, default 3); ``early`` sends the line at once in a write of its own;
``late`` sends it after :data:`LATE_S` and then goes on without reading its input for as
long again (so the referee's next request is written before the line comes, and is still
unread when it comes: a bot busy with something else); ``flood`` sends, in the same write
as its answer, more ``info`` lines than the referee reads at once, then the line (its
output pipe is made big enough to hold them all).  The other modes: ``chatty`` sends ``info idle`` at each of those moments
instead (which is allowed); ``slow`` plays well, but :data:`SLOW_S` after each ``go``;
``crash-noisy`` writes control characters on stderr and exits at go ``N``.

The folder holds everything the bot needs (it imports only :mod:`arena`), so it runs at
every isolation level, bwrap included.
"""

from __future__ import annotations

import fcntl
import random
import select
import sys
import time

from arena import protocol as P
from arena.rules import Position
from arena.variants import Variant

WHENS = (*(f"{a}-{b}" for a in ("early", "late", "flood") for b in ("hello", "ready", "reply")),
         "chatty", "slow", "crash-noisy")
#: the line sent when nothing was asked
UNASKED = "bestmove d6"
#: how long ``late-*`` waits before sending it, and after
LATE_S = 0.15
#: how long ``late-hello`` and ``late-ready`` wait at most for the referee's next request
#: (``newgame``, ``go``) to be written: they send their line once it waits in their input,
#: unread (on a loaded machine the referee may write it later than :data:`LATE_S`)
READY_WAIT_S = 5.0
#: how much ``info`` ``flood-*`` sends first (the referee reads 64 KiB at a time)
FLOOD_BYTES = 200_000
#: ``fcntl.F_SETPIPE_SZ`` (Linux; Python 3.10+ names it)
F_SETPIPE_SZ = 1031
#: how long ``slow`` thinks
SLOW_S = 0.3


def send(*lines: str) -> None:
    """Write lines to stdout in one write."""
    sys.stdout.write("".join(line + "\n" for line in lines))
    sys.stdout.flush()


def answer(when: str, after: str, *lines: str) -> None:
    """Send ``lines`` (an answer), and :data:`UNASKED` the way ``when`` says if it is
    ``<how>-<after>`` (``info idle`` if it is ``chatty``)."""
    if when == f"flood-{after}":
        info = P.format_info("x" * 99)
        send(*lines, *[info] * (FLOOD_BYTES // (len(info) + 1)), UNASKED)
        return
    send(*lines)
    if when == "chatty":
        send(P.format_info("idle"))
    elif when == f"early-{after}":
        send(UNASKED)
    elif when == f"late-{after}":
        time.sleep(LATE_S)
        if after in ("hello", "ready"):  # after the referee's next request is written,
            select.select([sys.stdin], [], [], READY_WAIT_S)  # however late: left unread
        send(UNASKED)
        time.sleep(LATE_S)


def main(when: str, trigger: int) -> None:
    if when.startswith("flood-"):
        fcntl.fcntl(1, F_SETPIPE_SZ, 1 << 20)  # the whole flood waits in the pipe
    rng = random.Random(7)
    variant = Variant()
    position = Position(variant)
    gos = 0
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = P.parse_referee_line(line)
        if isinstance(msg, P.Hello):
            answer(when, "hello", P.format_id("name", f"unasked-{when}"),
                   P.format_id("author", "tests"), P.format_morrisok())
        elif isinstance(msg, P.NewGame):
            variant = Variant.from_params(msg.variant, msg.params)
        elif isinstance(msg, P.IsReady):
            answer(when, "ready", P.format_readyok())
        elif isinstance(msg, P.PositionCmd):
            position = Position.from_text(variant, msg.position)
        elif isinstance(msg, P.Go):
            gos += 1
            if when == "slow":
                time.sleep(SLOW_S)
            if when == "crash-noisy" and gos == trigger:
                sys.stderr.write("starting\n\x1b[31mfatal\x00\x07\n")
                sys.stderr.flush()
                sys.exit(1)
            move = P.format_bestmove(rng.choice(position.legal_moves()))
            answer(when if gos == trigger else "", "reply", move)
        elif isinstance(msg, P.Quit):
            return


if __name__ == "__main__":
    if not 2 <= len(sys.argv) <= 3 or sys.argv[1] not in WHENS:
        sys.exit(f"usage: bot.py {{{','.join(WHENS)}}} [N]")
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 3)
