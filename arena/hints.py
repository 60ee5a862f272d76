"""What the referee tells a bot's author, beyond what went wrong: how to fix it.

Pure text helpers shared by the modules that write verdicts (the protocol's parser, the bot
process, the referee, ``bot.yaml`` and configuration checks), so that every message a
beginner meets names what happened, the measured values, and the fix.  docs/BOTS.md keeps
the table of them ("What the referee says and what to do").
"""

from __future__ import annotations

import difflib
import re
from typing import Iterable, Optional

#: a line on stdout that is not the protocol: where debug text goes instead
STDOUT_HINT = ("stdout is for protocol lines only: write debug text to stderr, or as an "
               "'info string ...' line")
#: an illegal move from a bot that does not ask for the legal moves
LEGAL_MOVES_HINT = ("the referee can send the legal moves before each 'go': add "
                    "'legal_moves: true' to bot.yaml (docs/PROTOCOL.md, legalmoves)")
#: a move later than its time
TIME_HINT = ("read the time from the 'go' line (movetime, or your clock: wtime/btime) and "
             "answer with a reserve; the botkit's clock does this (docs/BOTS.md)")


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``"did you mean X? "`` for the choice closest to ``word`` (case ignored), or ``""``."""
    by_lower = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(str(word).lower(), list(by_lower), n=1, cutoff=0.6)
    return f"did you mean {by_lower[close[0]]}? " if close else ""


#: lines a runtime prints after the real error that say nothing about it
_NOISE = re.compile(
    r"^(note: run with `?RUST_BACKTRACE=|note: Some details are omitted|stack backtrace:|"
    r"\s*at |\s*\d+: |\s*File \"|Traceback \(most recent call last\)|"
    r"During handling of the above exception|The above exception was the direct cause|"
    r"Node\.js v\d|\s*\^+\s*$|\s*~+\s*$|Aborted|Killed|make: \*\*\*|error: Recipe)")
#: lines that state the error itself
_ERROR = re.compile(
    r"(panicked at|^thread '.*' panicked|^Exception in thread|^[A-Za-z_.]*(Error|Exception)\b"
    r"|^panic:|^fatal error:|^error(\[E\d+\])?:|Segmentation fault|^terminate called"
    r"|^Uncaught |^[A-Z][A-Za-z]*Error: )")


def crash_line(stderr: str) -> str:
    """The line of a crashed bot's stderr that says most: the last one stating an error (a
    Python exception, a Rust panic and its message, a Java or Node exception, a C++
    ``terminate called``), else the last line that is not a runtime's hint or a stack
    frame, else the last line; ``""`` for no output."""
    lines = [ln.rstrip() for ln in stderr.splitlines() if ln.strip()]
    if not lines:
        return ""
    for i in range(len(lines) - 1, -1, -1):
        if _ERROR.search(lines[i].strip()):
            line = lines[i].strip()
            # Rust >= 1.73: "thread 'main' panicked at src/main.rs:5:5:" then the message
            if line.endswith(":") and "panicked at" in line and i + 1 < len(lines):
                return f"{line} {lines[i + 1].strip()}"
            return line
    for line in reversed(lines):
        if not _NOISE.search(line):
            return line.strip()
    return lines[-1].strip()


def allowance_text(allowed_ms: float, margin_ms: float, *, clock_left: bool = False,
                   cpu: bool = False, wall_factor: Optional[float] = None) -> str:
    """The parts of a move's limit, e.g. ``its 200 ms + 100 ms margin`` (``clock_left``: the
    time left on its clock; ``wall_factor``: the wall-clock cap of the CPU clock)."""
    what = "the time left on its clock" if clock_left else "its movetime"
    if wall_factor is not None:
        return (f"the wall-clock cap: {wall_factor:g} x {what}, {allowed_ms:.0f} ms, "
                f"+ {margin_ms:.0f} ms margin")
    kind = " of CPU time" if cpu else ""
    return f"{what}, {allowed_ms:.0f} ms{kind}, + {margin_ms:.0f} ms margin"


__all__ = ["STDOUT_HINT", "LEGAL_MOVES_HINT", "TIME_HINT", "did_you_mean", "crash_line",
           "allowance_text"]
