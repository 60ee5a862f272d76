"""What the referee tells a bot's author, beyond what went wrong: how to fix it.

Pure text helpers shared by the modules that write verdicts (the protocol's parser, the bot
process, the referee, ``bot.yaml`` and configuration checks), so that every message a
beginner meets names what happened, the measured values, and the fix.  docs/BOTS.md keeps
the table of them ("What the referee says and what to do").
"""

from __future__ import annotations

import difflib
import re
from typing import Sequence, Iterable, Optional

#: a line on stdout that is not the protocol: where debug text goes instead
STDOUT_HINT = ("stdout is for protocol lines only: write debug text to stderr, or as an "
               "'info string ...' line")
#: an illegal move from a bot that does not ask for the legal moves
LEGAL_MOVES_HINT = ("the referee can send the legal moves before each 'go': add "
                    "'legal_moves: true' to bot.yaml (docs/PROTOCOL.md, legalmoves)")
#: a move later than its time
TIME_HINT = ("read the time from the 'go' line (movetime, or your clock: wtime/btime) and "
             "answer with a reserve; the botkit's clock does this (docs/BOTS.md)")
#: a move never answered: the bot was still at it well after its limit
UNANSWERED_HINT = ("a bot that never answers (an endless loop, a search that does not look "
                   "at the time, a wait for more input) loses here: check the time inside "
                   "the search and answer every 'go'; the botkit's clock does this "
                   "(docs/BOTS.md)")
#: a handshake that is not the morris protocol's
HANDSHAKE_HINT = ("the referee sends 'morris' and waits for 'morrisok' (after any 'id' and "
                  "'option' lines; docs/PROTOCOL.md)")
#: output that never arrives: left in a buffer
FLUSH_HINT = "(print(..., flush=True), fflush(stdout), System.out.flush())"

#: first words of other engine protocols: a bot written for one of them
_OTHER_PROTOCOLS = {"uci": "UCI", "uciok": "UCI", "ucinewgame": "UCI", "ugi": "UGI",
                    "ugiok": "UGI", "usi": "USI", "usiok": "USI", "xboard": "xboard",
                    "protover": "xboard", "feature": "xboard", "cecp": "xboard",
                    "isready": "UCI", "gtp": "GTP", "tei": "TEI", "teiok": "TEI"}
#: the handshake's own lines (a malformed one is reported as such, not as a protocol mix-up)
_HANDSHAKE_WORDS = ("id", "option", "info", "morrisok")


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
    i = _error_index(lines)
    if i is not None:
        line = lines[i].strip()
        # Rust >= 1.73: "thread 'main' panicked at src/main.rs:5:5:" then the message
        if line.endswith(":") and "panicked at" in line and i + 1 < len(lines):
            return f"{line} {lines[i + 1].strip()}"
        return line
    for line in reversed(lines):
        if not _NOISE.search(line):
            return line.strip()
    return lines[-1].strip()


def handshake_line_text(line: str) -> str:
    """What a bot that sent ``line`` in its handshake, where only ``id``, ``option``,
    ``info`` and ``morrisok`` may come, is told: the line, what the referee sends and waits
    for, and what the line looks like (another engine protocol's word, a morris word sent
    too early, or debug text); ``""`` for a malformed line of the handshake's own words,
    whose parser says what is wrong with it."""
    words = line.split()
    word = words[0].lower() if words else ""
    if word in _HANDSHAKE_WORDS:
        return ""
    text = f"sent {line[:80]!r} before 'morrisok': {HANDSHAKE_HINT}"
    if word in _OTHER_PROTOCOLS:
        return (f"{text}; {words[0]!r} is a word of {_OTHER_PROTOCOLS[word]}, another engine "
                "protocol: answer 'morris' with 'morrisok'")
    if word in ("readyok", "bestmove"):
        return f"{text}; {words[0]!r} answers a later request ('isready', 'go')"
    if "morris" in line.lower():  # "Unknown command: morris": another protocol's engine
        return (f"{text}; the bot does not seem to know 'morris': is it written for another "
                "protocol?")
    return f"{text}; {STDOUT_HINT}"


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``21st``..."""
    last = n % 10 if n % 100 not in (11, 12, 13) else 0
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(last, 'th')}"


def duration_text(ms: float) -> str:
    """``850 ms``, or ``2.0 s`` from a second on."""
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


#: a Python stack frame (``File "bot.py", line 42, in choose``)
_PY_FRAME = re.compile(r'^\s*File "[^"]*", line \d+')
#: a Java or Node stack frame (``at Bot.main(Bot.java:3)``)
_AT_FRAME = re.compile(r"^\s*at \S")
#: Python's markers under the code of a frame (``~~~~^^^^``)
_MARKERS = re.compile(r"^\s*[~^]+\s*$")
#: files of an interpreter's library, not the bot's own
_LIBRARY = re.compile(r"(/lib/python\d|site-packages|dist-packages|<frozen |/arena/botkit\.py)")


def stderr_excerpt(stderr: str, n: int = 3) -> str:
    """The lines of a crashed bot's stderr to show with its verdict: its last ``n`` lines,
    and, where they state an error (:func:`crash_line`), that line with the frame it
    happened in: a Python traceback's last frame (``File "bot.py", line 42, in choose`` and
    its code; also the last frame in the bot's own files where the last is in a library's),
    a Java or Node exception's first ``at`` line.  Python's ``~~~^^^`` markers and frames
    further from the error are left out."""
    lines = [ln.rstrip() for ln in stderr.rstrip().splitlines()]
    error = _error_index(lines)
    if error is None:
        return "\n".join(lines[-n:])
    keep: set[int] = {error}
    frames = [i for i in range(error) if _PY_FRAME.match(lines[i])]
    if frames:
        own = [i for i in frames if not _LIBRARY.search(lines[i])]
        for i in {frames[-1], *own[-1:]}:
            keep.add(i)
            if i + 1 < error and not _PY_FRAME.match(lines[i + 1]) \
                    and not _MARKERS.match(lines[i + 1]):
                keep.add(i + 1)  # the frame's code
    if error + 1 < len(lines) and _AT_FRAME.match(lines[error + 1]):
        keep.add(error + 1)
    if lines[error].strip().endswith(":") and "panicked at" in lines[error] \
            and error + 1 < len(lines):
        keep.add(error + 1)  # a Rust panic's message
    for i in range(max(0, len(lines) - n), len(lines)):
        if i > error and not _NOISE.search(lines[i]):
            keep.add(i)  # what the bot wrote after the error
    return "\n".join(lines[i] for i in sorted(keep) if not _MARKERS.match(lines[i]))


def _error_index(lines: list[str]) -> Optional[int]:
    """The index of the last line stating an error (see :func:`crash_line`), or None."""
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].strip() and _ERROR.search(lines[i].strip()):
            return i
    return None


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


__all__ = ["STDOUT_HINT", "LEGAL_MOVES_HINT", "TIME_HINT", "UNANSWERED_HINT", "HANDSHAKE_HINT",
           "FLUSH_HINT", "did_you_mean", "crash_line", "handshake_line_text", "ordinal",
           "duration_text", "stderr_excerpt", "allowance_text"]


def unreachable_hint(stderr: str, command: Sequence[str], folder: str, level: str,
                     other_uid: bool) -> str:
    """Why a bot that exited at once saying a file is missing or forbidden may not reach it,
    when its command names such a file that the referee sees (issue 39: an engine started
    as ``cmd='python3 /tmp/x/bot.py'`` from a folder only its owner may read): the sandbox
    shows the bot its folder and the system's folders, a private ``/tmp``, and runs it as
    another user when the referee is root (``other_uid``).  "" when nothing fits."""
    import os
    import stat as st

    if level == "none" or not any(word in stderr for word in (
            "No such file", "Permission denied", "can't open file", "cannot open")):
        return ""
    home = os.path.realpath(folder)
    for arg in command[1:]:
        if not arg.startswith("/") or not os.path.exists(arg) or arg not in stderr:
            continue  # only a file its error names
        real = os.path.realpath(arg)
        outside = (os.path.commonpath([home, real]) != home
                   and not real.startswith(("/usr/", "/bin/", "/lib", "/etc/", "/opt/")))
        closed = ""
        if other_uid:
            here = real
            while here != os.path.dirname(here):
                mode = os.stat(here).st_mode
                need = st.S_IXOTH if st.S_ISDIR(mode) else st.S_IROTH
                if not mode & need:
                    closed = here
                    break
                here = os.path.dirname(here)
        if not (outside or closed):
            continue
        why = [f"the sandbox (isolation {level}) shows the bot only its folder ({folder}) "
               f"and the system's, with a private /tmp"] if outside else []
        if closed:
            why.append(f"it runs the bot as another user, who may not read {closed}")
        fixes = [f"give the engine its folder (dir={os.path.dirname(real)})"] if outside else []
        if closed:
            fixes.append(f"let others read it (chmod a+rX {closed})")
        fixes.append("for a bot you trust, --isolation none")
        return (f"{arg} exists here, but the bot cannot reach it: {'; '.join(why)}. Fix: "
                f"{', or '.join(fixes)}")
    return ""
