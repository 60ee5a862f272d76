"""Time controls and game clocks: pure arithmetic, no clock reading.

The referee measures every move itself (``time.monotonic`` from writing ``go`` to reading
``bestmove``, see :mod:`arena.bot`) and charges the result to a :class:`GameClock`; nothing a
bot says about time is trusted.

>>> tc = TimeControl.parse("60+1")        # a chess clock: 60 s each, 1 s added per move
>>> tc.base_ms, tc.increment_ms
(60000, 1000)
>>> TimeControl.parse("250").movetime_ms  # a fixed time per move, in ms
250
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace
from typing import Any, Optional

from arena import ranges as R
from arena.errors import ConfigError
from arena.protocol import Go

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
#: the clocks a time control can charge: wall time, or the CPU time of the bot's process tree
CLOCKS = ("wall", "cpu")
#: what configuration may say: a clock, or ``auto`` (the CPU clock where this machine has
#: one, else wall time: :func:`arena.sandbox.default_charge`, resolved at the edge)
CHARGES = ("auto", *CLOCKS)
#: with the CPU clock, a move's wall-clock cap is this many times its CPU allowance
WALL_FACTOR = 5.0

_CLOCK_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*\+\s*(\d+(?:\.\d+)?)\s*$")
_MOVETIME_RE = re.compile(r"^\s*(\d+)\s*$")


@dataclass(frozen=True)
class TimeControl:
    """How much time bots get: a fixed time per move, a clock (base + increment), or both.

    All values are milliseconds.  With both, each move is bounded by the smaller of
    ``movetime_ms`` and the time left on the clock.  ``handshake_ms`` bounds the start of a
    bot (spawn to ``morrisok``, and again ``isready`` to ``readyok``); ``margin_ms`` is added
    to every deadline the referee enforces (bots are told the times without it).

    ``clock`` is what a move is charged: ``wall`` (elapsed time) or ``cpu`` (the CPU time the
    bot's whole process tree used since its previous reply, see :mod:`arena.sandbox`).  With
    ``cpu`` a move also has a wall-clock cap of ``wall_factor`` times its allowance, so a bot
    that sleeps still loses.
    """

    movetime_ms: Optional[int] = MOVETIME_MS
    base_ms: Optional[int] = None
    increment_ms: int = 0
    handshake_ms: int = HANDSHAKE_MS
    margin_ms: int = MARGIN_MS
    clock: str = "wall"
    wall_factor: float = WALL_FACTOR

    def __post_init__(self) -> None:
        if self.movetime_ms is None and self.base_ms is None:
            raise ConfigError("a time control needs a time per move or a clock")
        for key, allowed in (("movetime_ms", R.MOVETIME_MS), ("base_ms", R.CLOCK_BASE_MS)):
            if getattr(self, key) is not None:
                allowed.check(getattr(self, key), key)
        R.CLOCK_INCREMENT_MS.check(self.increment_ms, "increment_ms")
        R.HANDSHAKE_MS.check(self.handshake_ms, "handshake_ms")
        R.MARGIN_MS.check(self.margin_ms, "margin_ms")
        if self.clock not in CLOCKS:
            raise ConfigError(f"expected one of {', '.join(CLOCKS)}, got {self.clock!r}", "clock")
        R.check_wall_factor(self.wall_factor, "wall_factor")

    @classmethod
    def parse(cls, text: str, *, handshake_ms: int = HANDSHAKE_MS,
              margin_ms: int = MARGIN_MS, clock: str = "wall") -> TimeControl:
        """``"1000"``: 1000 ms per move; ``"60+1"``: a clock of 60 s plus 1 s per move
        (seconds may have decimals: ``"0.5+0.05"``).  ``clock`` is ``wall`` or ``cpu``.

        Every value must be in its range (:mod:`arena.ranges`): up to an hour per move, a
        base of up to a day, an increment of up to an hour.

        :raises ConfigError: the text is neither form, a value out of its range, or an
            unknown clock.  The key path is ``movetime_ms``, ``base_ms`` or ``increment_ms``
            for a value out of range.
        """
        m = _MOVETIME_RE.match(text)
        if m:
            movetime = _whole_ms(m.group(1), 1, R.MOVETIME_MS, "movetime_ms")
            return cls(movetime_ms=movetime, handshake_ms=handshake_ms, margin_ms=margin_ms,
                       clock=clock)
        m = _CLOCK_RE.match(text)
        if m:
            base = _whole_ms(m.group(1), 1000, R.CLOCK_BASE_MS, "base_ms")
            inc = _whole_ms(m.group(2), 1000, R.CLOCK_INCREMENT_MS, "increment_ms")
            return cls(movetime_ms=None, base_ms=base, increment_ms=inc,
                       handshake_ms=handshake_ms, margin_ms=margin_ms, clock=clock)
        shown = text if len(text) <= 40 else f"{text[:20]}... ({len(text)} characters)"
        raise ConfigError(f"not a time control: {shown!r} (expected MS per move, e.g. 1000, "
                          "or BASE+INC in seconds, e.g. 60+1)")

    def with_limits(self, *, handshake_ms: Optional[int] = None,
                    margin_ms: Optional[int] = None) -> TimeControl:
        """A copy with another handshake time and/or margin."""
        return replace(self, handshake_ms=self.handshake_ms if handshake_ms is None else handshake_ms,
                       margin_ms=self.margin_ms if margin_ms is None else margin_ms)

    @property
    def is_clock(self) -> bool:
        """True when a clock (base + increment) runs."""
        return self.base_ms is not None

    def describe(self) -> str:
        """Human text: ``1000 ms/move``, ``60+1 s``."""
        parts = []
        if self.base_ms is not None:
            parts.append(f"{_secs(self.base_ms)}+{_secs(self.increment_ms)} s")
        if self.movetime_ms is not None:
            parts.append(f"{self.movetime_ms} ms/move")
        if self.clock == "cpu":
            parts.append("CPU time")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """Every field, for records; ``clock`` and ``wall_factor`` only when the CPU clock is
        used (so wall-clock time controls keep the form, and the hash, they always had)."""
        d = asdict(self)
        if self.clock == "wall":
            del d["clock"], d["wall_factor"]
        return d


def _whole_ms(digits: str, scale: int, allowed: R.Range, key: str) -> int:
    """``digits`` (a decimal number of ``scale`` ms units) as whole ms within ``allowed``.

    The number is compared before it is converted, so ``"9" * 5000`` is an error, not an
    overflow.
    """
    unit = "s" if scale == 1000 else "ms"
    expected = (f"expected {_WHAT[key]}{_amount(allowed.low, scale)}.."
                f"{_amount(allowed.high, scale)} {unit}")
    whole = digits.partition(".")[0].lstrip("0")
    if len(whole) > len(str(allowed.high)):
        shown = digits if len(digits) <= 20 else f"{digits[:10]}... ({len(digits)} digits)"
        raise ConfigError(f"{expected}, got {shown}", key)
    value = round(float(digits) * scale)
    if not allowed.low <= value <= allowed.high:
        raise ConfigError(f"{expected}, got {digits}", key)
    return value


_WHAT = {"movetime_ms": "", "base_ms": "a base of ", "increment_ms": "an increment of "}


def _amount(ms: int, scale: int) -> str:
    """``ms`` in units of ``scale`` ms, without a needless fraction (``86400``, ``0.001``)."""
    return str(ms // scale) if ms % scale == 0 else f"{ms / scale:g}"


def _secs(ms: int) -> str:
    return f"{ms / 1000:g}"


class GameClock:
    """The time left to each side during one game, charged with the referee's measurements."""

    def __init__(self, tc: TimeControl) -> None:
        self.tc = tc
        #: ms left per colour (index 0 white, 1 black), or ``None`` without a clock
        self.remaining: Optional[list[float]] = (
            [float(tc.base_ms), float(tc.base_ms)] if tc.base_ms is not None else None)
        #: the one ``go`` of a fixed time per move (a frozen value: the same for every move)
        self._fixed_go = Go(movetime=tc.movetime_ms)

    def go(self) -> Go:
        """The ``go`` command for the next move (times in whole ms)."""
        tc = self.tc
        if self.remaining is None:
            return self._fixed_go
        return Go(wtime=int(self.remaining[0]), btime=int(self.remaining[1]),
                  winc=tc.increment_ms, binc=tc.increment_ms, movetime=tc.movetime_ms)

    def allowed_ms(self, color: int) -> float:
        """How long ``color`` may think on this move, without the margin."""
        movetime = self.tc.movetime_ms  # a time control has one or both (checked)
        if self.remaining is None:
            return float(movetime)  # type: ignore[arg-type]
        left = self.remaining[color]
        return left if movetime is None or left < movetime else float(movetime)

    def deadline_ms(self, color: int) -> float:
        """The referee's limit for this move: :meth:`allowed_ms` plus the margin."""
        return self.allowed_ms(color) + self.tc.margin_ms

    def wall_deadline_ms(self, color: int) -> float:
        """The wall-clock limit for this move: the deadline, or with the CPU clock
        ``wall_factor`` times the allowance plus the margin."""
        if self.tc.clock != "cpu":
            return self.deadline_ms(color)
        return self.allowed_ms(color) * self.tc.wall_factor + self.tc.margin_ms

    def charge(self, color: int, elapsed_ms: float) -> bool:
        """Charge a move that took ``elapsed_ms`` (of the time control's clock: wall or CPU)
        to ``color``; False if it overstepped.

        Time used within the margin empties the clock but is not a loss; the increment is
        added after every move in time.
        """
        if elapsed_ms > self.deadline_ms(color):
            if self.remaining is not None:
                self.remaining[color] = max(0.0, self.remaining[color] - elapsed_ms)
            return False
        if self.remaining is not None:
            self.remaining[color] = max(0.0, self.remaining[color] - elapsed_ms) + self.tc.increment_ms
        return True
