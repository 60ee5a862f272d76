"""The verdicts of the referee's clock and rules, as a beginner needs them: whether a move
charged by the own clock was in time, late or cannot be judged on this machine
(:func:`judge_own`), whether a time forfeit was the machine's fault (:func:`starved`: the
bot waited for a CPU, not on its own clock), what a time forfeit says (:func:`timeout_text`: the limit, its parts, what the bot
used, the fix), what an illegal move says (:func:`illegal_move_text`: the rule it breaks
and, for a move written wrong, the moves it probably meant), and the endgame tables'
verdict on a position (:func:`tablebase_verdict`, for tablebase adjudication).  The
referee (:mod:`arena.referee`) calls them.
"""

from __future__ import annotations

import logging
from typing import Any, Optional

from arena.adjudication import Verdict
from arena.bot import MoveTimeout
from arena.clock import TimeControl
from arena.errors import BotTimeout
from arena.hints import TIME_HINT, UNANSWERED_HINT, allowance_text, duration_text
from arena.rules import COLOR_NAMES, Position, explain_illegal, suggest_moves
from arena.sandbox.ownclock import OwnTime

log = logging.getLogger("arena.referee")

#: a timed-out bot was starved when at least this part of its time off the CPU was spent
#: waiting for one (runnable, on the run queue) rather than sleeping or waiting for input
STARVED_SHARE = 0.5
#: the own clock judges a move whose wall time passed its deadline by its own time only when
#: the bot got at least this share of a CPU while it was ready to run (see judge_own)
SHARE_MIN = 0.5
#: :func:`judge_own`'s verdicts
IN_TIME, LATE, UNJUDGED = "in time", "late", "not judged"


def judge_own(t: OwnTime, allowed_ms: float, tc: TimeControl, *,
              answered: bool = True) -> tuple[str, str]:
    """The own clock's verdict on one move (``answered`` False: the bot was still thinking
    when the wall-clock cap came): :data:`IN_TIME`, :data:`LATE` or :data:`UNJUDGED`, and
    the reason (empty when in time).

    The own time (:mod:`arena.sandbox.ownclock`: wall time less the waits for a CPU) is what
    the move costs the bot itself; on a quiet machine a move takes at least that and at most
    its wall time (a bot that watches the wall clock, ``while time.time() < stop``, answers at
    the same wall time however little CPU it got).  So:

    * answered with a wall time (less the referee's own wait) within the deadline
      (allowance + margin): **in time**, whatever the load;
    * the own time is trusted when the bot got at least :data:`SHARE_MIN` of a CPU while
      it was ready to run: over the deadline, **late**; within it, in time if it answered
      (a wall-clock spinner then overran on its own time too, unless it overran by less
      than ``1 / SHARE_MIN`` times the deadline), late at the wall-clock cap;
    * with less, only the CPU time is: a move that used more CPU than its allowance (the
      margin is the referee's, for the pipe) is **late**, whatever the load.  The rest of
      the own time (off a CPU and off the run queue: sleeping, a first move's page faults,
      the referee's lateness to within its measurement) grows with the load when a bot gets
      so little CPU: a correct bot burning 50 ms a move was charged 111 ms of own time at
      9 % of a CPU, and 219 ms at 18 % on its first move, in loaded test runs;
    * else the machine gave the bot too little CPU to tell a bot that thinks in its time
      from one that spins on the wall clock: **not judged** (the game is played again, and
      a check that cannot judge says so instead of passing).
    """
    limit = allowed_ms + tc.margin_ms
    shown = (f"{t.own_ms:.0f} ms of its own time (of {t.wall_ms:.0f} ms, "
             f"{t.waited_ms:.0f} spent waiting for a CPU)")
    # the own time is trusted where the machine took the bot little: at least half a CPU
    # while it was ready to run, or less waiting than its own time (a sleeper runs so little
    # that a 3 ms wait is most of its time ready to run: 16 % of a CPU, L8)
    trusted = t.share >= SHARE_MIN or t.bot_wait_ms <= t.own_ms
    if trusted and t.own_ms > limit:
        return LATE, f"took {shown}, the limit was {limit:.0f} ms"
    if answered and t.bot_wall_ms <= limit:
        return IN_TIME, ""
    if trusted:
        if answered:
            return IN_TIME, ""
        return LATE, (f"no bestmove within the wall-clock cap ({t.wall_ms:.0f} ms), having "
                      f"used {shown} with {t.share:.0%} of a CPU")
    if t.cpu_ms > allowed_ms:
        return LATE, (f"used {t.cpu_ms:.0f} ms of CPU: more than its {allowed_ms:.0f} ms (the "
                      f"margin is the referee's, for the pipe), with {t.share:.0%} of a CPU; "
                      f"it took {shown}")
    return UNJUDGED, (f"not judged: the machine gave the bot {t.share:.0%} of a CPU while it "
                      f"was ready to run ({t.bot_wait_ms:.0f} ms waiting for one of "
                      f"{t.wall_ms:.0f} ms; {t.own_ms:.0f} ms of its own time): too little to "
                      "tell a bot that thinks in its time from one that watches the wall "
                      "clock")


def starved(timeout: BotTimeout, allowed_ms: float, tc: TimeControl) -> Optional[str]:
    """Why a move's timeout is the machine's fault and not the bot's, or None.

    The own clock: a move :func:`judge_own` cannot judge (measured until the referee gave
    up: its own time and share of a CPU).

    The other clocks: the referee measured, until it gave up, the move's wall time, the
    bot's CPU time and its run-queue wait (time it was runnable but had no CPU:
    :meth:`BotProcess.run_delay`).  A bot that used more than its allowance (CPU time, or
    wall time less that wait) overran, whatever the load: never excused.  Otherwise:
    charged CPU time, the wall cap ended a bot that was off the CPU for most of the move;
    it was starved when at least :data:`STARVED_SHARE` of that time was spent waiting for a
    CPU (a bot that sleeps or waits for input does not wait there).  Charged wall time, it
    was starved when the move would have been in time without that wait."""
    if tc.clock == "own":
        if not isinstance(timeout.own, OwnTime):
            return None
        verdict, why = judge_own(timeout.own, allowed_ms, tc, answered=False)
        return why if verdict == UNJUDGED else None
    wall, cpu, wait = timeout.wall_ms, timeout.cpu_ms, timeout.wait_ms
    if wall is None or cpu is None or wait is None or wait <= 0:
        return None
    limit = allowed_ms + tc.margin_ms
    if cpu > allowed_ms or (tc.clock == "wall" and wall - wait > allowed_ms):
        return None
    if tc.clock == "cpu":
        off_cpu = wall - cpu
        if off_cpu <= 0 or wait < STARVED_SHARE * off_cpu:
            return None
    elif wall - wait > limit:
        return None
    return (f"waited {wait:.0f} ms for a CPU of the {wall:.0f} ms it was given, having used "
            f"{cpu:.0f} ms of CPU of its {allowed_ms:.0f} ms")


def timeout_text(timeout: BotTimeout, allowed_ms: float, tc: TimeControl,
                 clocked: bool) -> str:
    """A time forfeit as a beginner needs it: what happened, the limit and its parts, what
    the bot used meanwhile, and the fix.  ``clocked``: a chess clock runs (the allowance
    may be the time left on it).

    A bot stopped at its limit was watched a little longer (:class:`arena.bot.MoveTimeout`):
    one that never answered is told so first, with how long it ran without answering
    (``did not answer: still thinking after 0.8 s of a 200 ms move``), not only the few
    ms it was over when stopped, which read like a bot slightly slow; one that answered
    late keeps the late wording, with when its answer came."""
    text = str(timeout)
    clock_left = clocked and (tc.movetime_ms is None or allowed_ms < tc.movetime_ms)
    capped = not clocked and tc.movetime_ms is None  # a nodes or depth move: the cap
    wall_cap = tc.clock != "wall" and text.startswith("no bestmove")
    parts = allowance_text(allowed_ms, tc.margin_ms, clock_left=clock_left,
                           cpu=tc.clock == "cpu" and not wall_cap,
                           wall_factor=tc.wall_factor if wall_cap else None)
    if tc.clock == "own" and not wall_cap:
        parts = parts.replace(f"{allowed_ms:.0f} ms,", f"{allowed_ms:.0f} ms of its own time,", 1)
    if capped:  # say what the allowance is: no movetime was given, only nodes or depth
        parts = parts.replace("its movetime", "the referee's cap on a nodes/depth move", 1)
    measured = ""
    if timeout.cpu_ms is not None and timeout.wait_ms is not None:
        measured = (f"; meanwhile it used {timeout.cpu_ms:.0f} ms of CPU and waited "
                    f"{timeout.wait_ms:.0f} ms for one")
    if wall_cap and tc.clock == "cpu":
        fix = ("a bot that sleeps, waits for input or hangs loses here, however little CPU "
               "it uses: answer every 'go', and do not wait for anything")
    else:
        fix = TIME_HINT
    if isinstance(timeout, MoveTimeout) and timeout.unanswered_ms is not None:
        cpu, wall = timeout.cpu_ms, timeout.wall_ms
        doing = "thinking" if cpu is not None and wall and cpu >= wall / 2 else "silent"
        move = (f"with {duration_text(allowed_ms)} left on its clock" if clock_left
                else f"of a {allowed_ms:.0f} ms move")
        ran = duration_text(timeout.unanswered_ms)
        return (f"did not answer: still {doing} after {ran} {move} ({text}; no bestmove came "
                f"by {ran} either; the limit: {parts}{measured}). Fix: {UNANSWERED_HINT}")
    if isinstance(timeout, MoveTimeout) and timeout.answered_ms is not None:
        measured += f"; its bestmove came late, {timeout.answered_ms:.0f} ms after the 'go'"
    return f"{text} (the limit: {parts}{measured}). Fix: {fix}"


def illegal_move_text(position: Position, text: str) -> str:
    """What is wrong with the move ``text`` in ``position``, as a verdict shows it:
    ``illegal move b6: b6 is occupied``, or ``not a move: 'z9' (...)`` for text that is not a
    move on this board (:func:`arena.rules.explain_illegal` says why)."""
    reason = explain_illegal(position, text)
    close = [str(m) for m in suggest_moves(position, text) if str(m) != text.strip()]
    if close:
        reason += f" (did you mean {' or '.join(close)}?)"
    return reason if reason.startswith("not a move") else f"illegal move {text.strip()}: {reason}"


_TABLES: dict[str, Any] = {}
#: (tables' folder, variant name) -> whether the folder holds a table of the variant's rules
_COVERED: dict[tuple[str, str], bool] = {}


def tablebase_for(folder: str) -> Any:
    """The endgame tables of ``folder`` ("": the default folder), opened once per process
    (a :class:`arena.tablebase.Tablebase`), or None where there are none (said once)."""
    if folder not in _TABLES:
        from arena.tablebase import TablebaseError, default_directory, open_tablebase

        path = folder or str(default_directory())
        try:
            _TABLES[folder] = open_tablebase(path)
        except TablebaseError as e:
            log.warning("no tablebase adjudication: %s (arena tablebase build VARIANT "
                        "makes the tables)", e)
            _TABLES[folder] = None
    return _TABLES[folder]


def tablebase_verdict(position: Position, folder: str) -> Optional[Verdict]:
    """The endgame tables' verdict on ``position`` (tables of ``folder``, "": the default),
    or None where no table covers it (:mod:`arena.adjudication`, *tablebase*)."""
    tables = tablebase_for(folder)
    if tables is None:
        return None
    from arena.tablebase import NotCovered, TablebaseError

    seen = (folder, position.variant.name)
    if seen not in _COVERED:  # asked for, and no table of this variant: said once
        _COVERED[seen] = tables.covers(position.variant)
        if not _COVERED[seen]:
            log.warning("no tablebase adjudication for %s: %s holds no table for its rules "
                        "(arena tablebase build %s makes them)", position.variant.name,
                        folder or "the default tables' folder", position.variant.name)
    if not _COVERED[seen]:
        return None

    try:
        probe = tables.probe(position)
    except NotCovered:
        return None
    except TablebaseError as e:  # a damaged table: said once, the game plays on
        log.warning("tablebase adjudication off for %s: %s", folder or "the default tables", e)
        _TABLES[folder] = None
        return None
    if probe.value == "draw":
        return Verdict("1/2-1/2", "tablebase", f"the endgame tables say this position is a "
                                               f"draw ({position.to_text()})")
    winner = position.turn if probe.value == "win" else 1 - position.turn
    return Verdict("1-0" if winner == 0 else "0-1", "tablebase",
                   f"the endgame tables say {COLOR_NAMES[winner]} wins "
                   f"({COLOR_NAMES[position.turn]} to move, {probe.distance} plies to the "
                   f"next capture or the end; {position.to_text()})")


__all__ = ["STARVED_SHARE", "SHARE_MIN", "IN_TIME", "LATE", "UNJUDGED", "judge_own", "starved", "timeout_text", "illegal_move_text", "tablebase_for",
           "tablebase_verdict"]
