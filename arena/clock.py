"""Time controls and game clocks: pure arithmetic, no clock reading.

The referee measures every move itself (``time.monotonic`` from writing ``go`` to reading
``bestmove``, see :mod:`arena.bot`) and charges the result to a :class:`GameClock`; nothing a
bot says about time is trusted.

>>> tc = TimeControl.parse("60+1")        # a chess clock: 60 s each, 1 s added per move
>>> tc.base_ms, tc.increment_ms
(60000, 1000)
>>> TimeControl.parse("250").movetime_ms  # a fixed time per move, in ms
250
>>> tc = TimeControl.parse("40/60+0.6")   # cutechess's moves/time+increment: 40 moves in
>>> tc.period_moves, tc.base_ms           # 60 s, then 60 s more for the next 40
(40, 60000)
>>> TimeControl(movetime_ms=None, nodes=1000).describe()
'1000 nodes/move (capped at 10000 ms/move)'
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Mapping, Optional

from arena import ranges as R
from arena.errors import ConfigError
from arena.protocol import LIMIT_CAP_MS, Go

#: default time for the handshake (spawn to ``morrisok``) and for ``isready`` -> ``readyok``
HANDSHAKE_MS = 5000
#: default tolerance added to every deadline, for pipe and scheduling latency
MARGIN_MS = 100
#: default per-move time when nothing is given: tournament files and ``arena play``
MOVETIME_MS = 1000
#: ``arena check``'s default: it tests legality, not strength, and 6 games at a full second
#: a move would keep a thinking bot busy for minutes (a bot that answers in 200 ms also
#: answers in a tournament's 1000)
CHECK_MOVETIME_MS = 200
#: ``arena sprt``'s default: a test takes hundreds to thousands of games, so it plays fast
#: (as fishtest's short time control does); give the time you will play at with --movetime
SPRT_MOVETIME_MS = 100
#: the clocks a time control can charge: ``own``, the bot's own time (wall time less the
#: time it was ready to run but waited for a CPU: :mod:`arena.verdicts`, *the own clock*);
#: ``wall``, elapsed time; ``cpu``, the CPU time of the bot's process tree
CLOCKS = ("own", "wall", "cpu")
#: what configuration may say: a clock, or ``auto`` (the own clock where this machine
#: reports run-queue waits, else wall time: :func:`arena.sandbox.default_charge`, resolved
#: at the edge)
CHARGES = ("auto", *CLOCKS)
#: with the own or the CPU clock, a move's wall-clock cap is this many times its allowance
WALL_FACTOR = 5.0

#: a clock as cutechess writes it: ``[moves/]time[+increment]``, time in seconds (``60``,
#: ``0.5``) or minutes:seconds (``1:30``); a bare number is not one (it is ms per move)
_CLOCK_RE = re.compile(r"^\s*(?:(\d+)\s*/\s*)?(\d{1,6}:\d{1,2}(?:\.\d+)?|\d+(?:\.\d+)?)"
                       r"\s*(?:\+\s*(\d+(?:\.\d+)?))?\s*$")
_MOVETIME_RE = re.compile(r"^\s*(\d+)\s*$")


@dataclass(frozen=True)
class TimeControl:
    """How much time bots get: a fixed time per move, a clock (base + increment), or both;
    and the search limits ``nodes`` and ``depth``.

    All times are milliseconds.  With both, each move is bounded by the smaller of
    ``movetime_ms`` and the time left on the clock.  ``period_moves`` makes the clock a
    moves-per-period one (cutechess's ``40/60+0.6``): after every ``period_moves`` moves of
    a side, ``base_ms`` is added to its clock (and ``go`` says ``movestogo``).

    ``nodes`` and ``depth`` are sent in ``go`` (``go nodes 1000``) and kept by the bot only:
    the referee cannot count a bot's nodes or plies.  A move is still bounded in time: by
    ``movetime_ms`` or the clock when given (sent too: the bot stops at whichever limit
    comes first), else by :data:`~arena.protocol.LIMIT_CAP_MS` (not sent).

    ``handshake_ms`` bounds the start of a bot (spawn to ``morrisok``, and again ``isready``
    to ``readyok``); ``margin_ms`` is added to every deadline the referee enforces (bots are
    told the times without it).

    ``clock`` is what a move is charged: ``own`` (the bot's own time: wall time less the
    time it was runnable but waiting for a CPU, see :mod:`arena.verdicts`), ``wall``
    (elapsed time) or ``cpu`` (the CPU time the bot's whole process tree used since its
    previous reply, see :mod:`arena.sandbox`).  With ``own`` or ``cpu`` a move also has a
    wall-clock cap of ``wall_factor`` times its allowance (plus the margin): with ``cpu``
    so that a bot that sleeps still loses, with ``own`` so that a bot the machine starves
    cannot hold a game up for ever.
    """

    movetime_ms: Optional[int] = MOVETIME_MS
    base_ms: Optional[int] = None
    increment_ms: int = 0
    handshake_ms: int = HANDSHAKE_MS
    margin_ms: int = MARGIN_MS
    clock: str = "wall"
    wall_factor: float = WALL_FACTOR
    #: ``go nodes N``: the bot searches this many nodes (not enforced: see the class)
    nodes: Optional[int] = None
    #: ``go depth N``: the bot searches this many plies deep (not enforced either)
    depth: Optional[int] = None
    #: a moves-per-period clock: ``base_ms`` more after every this many moves of a side
    period_moves: Optional[int] = None

    def __post_init__(self) -> None:
        if (self.movetime_ms is None and self.base_ms is None and self.nodes is None
                and self.depth is None):
            raise ConfigError("a time control needs a time per move, a clock, nodes or depth")
        for key, allowed in (("movetime_ms", R.MOVETIME_MS), ("base_ms", R.CLOCK_BASE_MS),
                             ("nodes", R.NODES), ("depth", R.DEPTH),
                             ("period_moves", R.PERIOD_MOVES)):
            if getattr(self, key) is not None:
                allowed.check(getattr(self, key), key)
        if self.period_moves is not None and self.base_ms is None:
            raise ConfigError("moves per period need a clock (e.g. 40/60+0.6)", "period_moves")
        R.CLOCK_INCREMENT_MS.check(self.increment_ms, "increment_ms")
        R.HANDSHAKE_MS.check(self.handshake_ms, "handshake_ms")
        R.MARGIN_MS.check(self.margin_ms, "margin_ms")
        if self.clock not in CLOCKS:
            raise ConfigError(f"expected one of {', '.join(CLOCKS)}, got {self.clock!r}", "clock")
        R.check_wall_factor(self.wall_factor, "wall_factor")

    @classmethod
    def parse(cls, text: str, *, handshake_ms: int = HANDSHAKE_MS,
              margin_ms: int = MARGIN_MS, clock: str = "wall") -> TimeControl:
        """``"1000"``: 1000 ms per move; a clock as cutechess writes it (``tc=``), times in
        seconds: ``"60+1"``, 60 s plus 1 s per move (decimals allowed: ``"0.5+0.05"``;
        minutes too: ``"1:30+1"``); ``"40/60+0.6"`` (or ``"40/60"``), 40 moves in 60 s,
        then 60 s more for each next 40, 0.6 s added per move; ``"1:30"``, 90 s for the
        game.  ``clock`` is ``own``, ``wall`` or ``cpu``.

        Unlike cutechess, a bare number is ms per move (``60+0`` is a 60 s clock), and
        ``inf`` (no limit) is refused: every move needs a limit the referee can enforce.

        Every value must be in its range (:mod:`arena.ranges`): up to an hour per move, a
        base of up to a day, an increment of up to an hour, 1 to 10,000 moves per period.

        :raises ConfigError: the text is none of these forms, a value out of its range, or
            an unknown clock.  The key path is ``movetime_ms``, ``base_ms``,
            ``increment_ms`` or ``period_moves`` for a value out of range.
        """
        m = _MOVETIME_RE.match(text)
        if m:
            movetime = _whole_ms(m.group(1), 1, R.MOVETIME_MS, "movetime_ms")
            return cls(movetime_ms=movetime, handshake_ms=handshake_ms, margin_ms=margin_ms,
                       clock=clock)
        m = _CLOCK_RE.match(text)
        if m and (m.group(1) is not None or m.group(3) is not None or ":" in m.group(2)):
            moves = None
            if m.group(1) is not None:
                moves = _whole_ms(m.group(1), 1, R.PERIOD_MOVES, "period_moves")
            base = _whole_ms(_in_seconds(m.group(2)), 1000, R.CLOCK_BASE_MS, "base_ms")
            inc = _whole_ms(m.group(3) or "0", 1000, R.CLOCK_INCREMENT_MS, "increment_ms")
            return cls(movetime_ms=None, base_ms=base, increment_ms=inc, period_moves=moves,
                       handshake_ms=handshake_ms, margin_ms=margin_ms, clock=clock)
        shown = text if len(text) <= 40 else f"{text[:20]}... ({len(text)} characters)"
        if text.strip().lower() in ("inf", "infinite"):
            raise ConfigError(f"{shown!r}: no time limit is not accepted (the referee must "
                              "end a bot that never answers): for fixed-node or fixed-depth "
                              "games give nodes or depth, capped at "
                              f"{LIMIT_CAP_MS} ms a move unless a movetime is given")
        raise ConfigError(f"not a time control: {shown!r} (expected MS per move, e.g. 1000, "
                          "or a clock in seconds: BASE+INC, e.g. 60+1, or MOVES/BASE+INC, "
                          "e.g. 40/60+0.6)")

    def with_limits(self, *, handshake_ms: Optional[int] = None,
                    margin_ms: Optional[int] = None) -> TimeControl:
        """A copy with another handshake time and/or margin."""
        return replace(self, handshake_ms=self.handshake_ms if handshake_ms is None else handshake_ms,
                       margin_ms=self.margin_ms if margin_ms is None else margin_ms)

    @property
    def is_clock(self) -> bool:
        """True when a clock (base + increment) runs."""
        return self.base_ms is not None

    @property
    def has_time(self) -> bool:
        """True when a time per move or a clock is given (else moves are capped at
        :data:`~arena.protocol.LIMIT_CAP_MS`)."""
        return self.movetime_ms is not None or self.base_ms is not None

    def describe(self) -> str:
        """Human text: ``1000 ms/move``, ``60+1 s``, ``40/60+0.6 s``, ``1000 nodes/move
        (capped at 10000 ms/move)``."""
        parts = []
        if self.base_ms is not None:
            if self.period_moves is not None:
                inc = f"+{_secs(self.increment_ms)}" if self.increment_ms else ""
                parts.append(f"{self.period_moves}/{_secs(self.base_ms)}{inc} s "
                             f"({self.period_moves} moves per period)")
            else:
                parts.append(f"{_secs(self.base_ms)}+{_secs(self.increment_ms)} s")
        if self.movetime_ms is not None:
            parts.append(f"{self.movetime_ms} ms/move")
        limits = []
        if self.nodes is not None:
            limits.append(f"{self.nodes} nodes/move")
        if self.depth is not None:
            limits.append(f"depth {self.depth}/move")
        if limits and not self.has_time:
            limits[-1] += f" (capped at {LIMIT_CAP_MS} ms/move)"
        parts.extend(limits)
        if self.clock == "cpu":
            parts.append("CPU time")
        elif self.clock == "own":
            parts.append("own time")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """Every field, for records; ``clock`` and ``wall_factor`` only when the own or the
        CPU clock is used, ``nodes``, ``depth`` and ``period_moves`` only when set (so the time controls
        of before keep the form, and the hash, they always had)."""
        d = asdict(self)
        if self.clock == "wall":
            del d["clock"], d["wall_factor"]
        for key in ("nodes", "depth", "period_moves"):
            if d[key] is None:
                del d[key]
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TimeControl:
        """The time control a record's ``time_control`` (:meth:`to_dict`) describes; keys it
        does not know are left out (a newer record).

        :raises ConfigError: a value out of its range, or no limit at all.
        """
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in d.items() if k in known}
        kwargs.setdefault("movetime_ms", None)
        return cls(**kwargs)


def pgn_time_control(tc: Mapping[str, Any]) -> str:
    """A record's time control (:meth:`TimeControl.to_dict`) as PGN's ``TimeControl`` tag,
    as cutechess writes it: ``60+1``, ``40/60+0.6`` (``40/60`` without an increment),
    ``0.2/move`` for a fixed time per move, ``nodes=1000`` and ``depth=6`` for the search
    limits, several joined by ``, ``; ``?`` when there is none."""
    parts = []
    if tc.get("base_ms") is not None:
        base, inc = _secs(tc["base_ms"]), _secs(tc.get("increment_ms") or 0)
        if tc.get("period_moves") is not None:
            parts.append(f"{tc['period_moves']}/{base}" + (f"+{inc}" if inc != "0" else ""))
        else:
            parts.append(f"{base}+{inc}")
    if tc.get("movetime_ms") is not None:
        parts.append(f"{_secs(tc['movetime_ms'])}/move")
    for key in ("nodes", "depth"):
        if tc.get(key) is not None:
            parts.append(f"{key}={tc[key]}")
    return ", ".join(parts) or "?"


def _in_seconds(text: str) -> str:
    """``M:SS[.f]`` as seconds (``1:30`` -> ``90``); seconds as they are."""
    if ":" not in text:
        return text
    minutes, _, seconds = text.partition(":")
    whole, dot, fraction = seconds.partition(".")
    return f"{int(minutes) * 60 + int(whole)}{dot}{fraction}"


def _whole_ms(digits: str, scale: int, allowed: R.Range, key: str) -> int:
    """``digits`` (a decimal number of ``scale`` ms units) as whole ms within ``allowed``.

    The number is compared before it is converted, so ``"9" * 5000`` is an error, not an
    overflow.
    """
    unit = " s" if scale == 1000 else " ms" if key != "period_moves" else ""
    expected = (f"expected {_WHAT[key]}{_amount(allowed.low, scale)}.."
                f"{_amount(allowed.high, scale)}{unit}")
    whole = digits.partition(".")[0].lstrip("0")
    if len(whole) > len(str(allowed.high)):
        shown = digits if len(digits) <= 20 else f"{digits[:10]}... ({len(digits)} digits)"
        raise ConfigError(f"{expected}, got {shown}", key)
    value = round(float(digits) * scale)
    if not allowed.low <= value <= allowed.high:
        raise ConfigError(f"{expected}, got {digits}", key)
    return value


_WHAT = {"movetime_ms": "", "base_ms": "a base of ", "increment_ms": "an increment of ",
         "period_moves": "moves per period of "}


def _amount(ms: int, scale: int) -> str:
    """``ms`` in units of ``scale`` ms, without a needless fraction (``86400``, ``0.001``)."""
    return str(ms // scale) if ms % scale == 0 else f"{ms / scale:g}"


def _secs(ms: float) -> str:
    return f"{ms / 1000:g}"


class GameClock:
    """The time left to each side during one game, charged with the referee's measurements.

    A moves-per-period clock counts each side's moves charged here (the opening's moves,
    played by the referee, are not): after every ``period_moves``-th, ``base_ms`` is added
    to that side's clock, as cutechess does.
    """

    def __init__(self, tc: TimeControl) -> None:
        self.tc = tc
        #: ms left per colour (index 0 white, 1 black), or ``None`` without a clock
        self.remaining: Optional[list[float]] = (
            [float(tc.base_ms), float(tc.base_ms)] if tc.base_ms is not None else None)
        #: the moves each colour made in time (what a moves-per-period clock counts)
        self.moves = [0, 0]
        #: the colour whose move was asked for last (:meth:`allowed_ms`): the side to move
        self._to_move = 0
        #: the one ``go`` without a clock (a frozen value: the same for every move)
        self._fixed_go = Go(movetime=tc.movetime_ms, nodes=tc.nodes, depth=tc.depth)

    def moves_to_go(self, color: int) -> Optional[int]:
        """The moves ``color`` has to make before its clock is refilled (None: no periods)."""
        period = self.tc.period_moves
        return None if period is None else period - self.moves[color] % period

    def go(self, color: Optional[int] = None) -> Go:
        """The ``go`` command for the next move (times in whole ms) of ``color`` (default:
        the side whose :meth:`allowed_ms` was asked last, as the referee does before every
        ``go``; only ``movestogo`` depends on it)."""
        tc = self.tc
        if self.remaining is None:
            return self._fixed_go
        side = self._to_move if color is None else color
        return Go(wtime=int(self.remaining[0]), btime=int(self.remaining[1]),
                  winc=tc.increment_ms, binc=tc.increment_ms, movetime=tc.movetime_ms,
                  movestogo=self.moves_to_go(side), nodes=tc.nodes, depth=tc.depth)

    def allowed_ms(self, color: int) -> float:
        """How long ``color`` may think on this move, without the margin: the smaller of
        the time per move and the clock's time left; with neither (a move limited by
        nodes or depth), :data:`~arena.protocol.LIMIT_CAP_MS`."""
        self._to_move = color
        movetime = self.tc.movetime_ms
        if self.remaining is None:
            return float(movetime if movetime is not None else LIMIT_CAP_MS)
        left = self.remaining[color]
        return left if movetime is None or left < movetime else float(movetime)

    def deadline_ms(self, color: int) -> float:
        """The referee's limit for this move: :meth:`allowed_ms` plus the margin."""
        return self.allowed_ms(color) + self.tc.margin_ms

    def wall_deadline_ms(self, color: int) -> float:
        """The wall-clock limit for this move: the deadline, or with the own or the CPU
        clock ``wall_factor`` times the allowance plus the margin."""
        if self.tc.clock == "wall":
            return self.deadline_ms(color)
        return self.allowed_ms(color) * self.tc.wall_factor + self.tc.margin_ms

    def charge(self, color: int, elapsed_ms: float) -> bool:
        """Charge a move that took ``elapsed_ms`` (of the time control's clock: own, wall or CPU)
        to ``color``; False if it overstepped.

        Time used within the margin empties the clock but is not a loss; the increment is
        added after every move in time, and with moves per period the base again after
        every ``period_moves``-th.
        """
        if elapsed_ms > self.deadline_ms(color):
            if self.remaining is not None:
                self.remaining[color] = max(0.0, self.remaining[color] - elapsed_ms)
            return False
        self.moves[color] += 1
        if self.remaining is not None:
            tc = self.tc
            left = max(0.0, self.remaining[color] - elapsed_ms) + tc.increment_ms
            if tc.period_moves is not None and self.moves[color] % tc.period_moves == 0:
                left += tc.base_ms  # type: ignore[operator]  # a period needs a clock
            self.remaining[color] = left
        return True
