"""The documented range of every number a user gives Morris Arena, in one table.

Tournament files (:mod:`arena.config`), time controls (:mod:`arena.clock`) and the command
line (:mod:`arena.cli`) check their numbers against these ranges, so an absurd value is one
line naming its key, never a runner that starts half a million processes.  The same table is
in ``docs/TOURNAMENTS.md``.  Pure and cheap to import: no YAML, no rules engine.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from arena.errors import ConfigError
from arena.protocol import SEED_MAX


@dataclass(frozen=True)
class Range:
    """Whole numbers from ``low`` to ``high`` (both included), in ``unit``."""

    low: int
    high: int
    unit: str = ""

    def describe(self) -> str:
        """``1..3600000 ms``."""
        return f"{self.low}..{self.high}{' ' + self.unit if self.unit else ''}"

    def check(self, value: Any, where: str) -> int:
        """``value`` if it is an integer in range (``bool`` is not one, nor ``1e3``).

        :raises ConfigError: at ``where``, naming the range.
        """
        if isinstance(value, bool) or not isinstance(value, int) or not (
                self.low <= value <= self.high):
            raise ConfigError(f"expected an integer in {self.describe()}, got "
                              f"{_shown(value)}", where)
        return value


def _shown(value: Any) -> str:
    """``value`` for a message, cut: a 5000-digit number is not worth printing."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text)} characters)"


#: the most games one tournament may have (refused with its size before anything is built)
GAMES_MAX = 10_000_000
#: games played at once, per CPU core this process may use
WORKERS_PER_CPU = 4

GAMES_PER_PAIRING = Range(2, 1_000_000, "games")
ROUNDS = Range(1, 100_000, "rounds")
#: turns taken from each opening of a book (fastchess's plies=N)
BOOK_PLIES = Range(1, 1000, "turns")
#: further colour-swapped pairs of a tied knockout match
TIEBREAK_PAIRS = Range(0, 1000, "pairs")
#: random opening turns (also at most the placement phase, 2 x men, of every variant)
OPENING_TURNS = Range(0, 40, "turns")
SEED = Range(0, SEED_MAX)
#: characters of a tournament's name (it names the results folder)
NAME_MAX = 100

MOVETIME_MS = Range(1, 3_600_000, "ms")          # up to an hour per move
CLOCK_BASE_MS = Range(1, 86_400_000, "ms")       # up to a day per side
CLOCK_INCREMENT_MS = Range(0, 3_600_000, "ms")   # up to an hour per move
HANDSHAKE_MS = Range(1, 600_000, "ms")           # up to ten minutes to start
MARGIN_MS = Range(0, 60_000, "ms")               # up to a minute of tolerance
#: ``go nodes N`` and ``go depth N``: limits only the bot can keep (the referee caps the time)
NODES = Range(1, 10**12, "nodes")
DEPTH = Range(1, 1_000, "plies")
#: a moves-per-period clock (``40/60+0.6``): the moves after which the clock is refilled
PERIOD_MOVES = Range(1, 10_000, "moves")
#: with the CPU clock, a move's wall-clock cap in multiples of its allowance
WALL_FACTOR = (1.0, 100.0)

#: ``isolation.limits`` (see ``arena.sandbox.Limits``)
LIMITS: dict[str, Range] = {
    "memory_mb": Range(16, 65_536, "MiB"),
    "pids": Range(1, 4_096),
    "open_files": Range(16, 65_536),
    "file_size_mb": Range(1, 65_536, "MiB"),
    "cpu_s": Range(1, 86_400, "s"),
    "tmp_mb": Range(1, 16_384, "MiB"),
}

#: ``arena sprt --max-pairs``
SPRT_PAIRS = Range(1, GAMES_MAX // 2, "pairs")
#: ``arena sprt --elo0/--elo1``
ELO_BOUND = 1000.0


def check_wall_factor(value: Any, where: str) -> Any:
    """``value`` if it is a number in :data:`WALL_FACTOR` (``bool`` is not one, nor NaN).

    :raises ConfigError: at ``where``, naming the range.
    """
    low, high = WALL_FACTOR
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise ConfigError(f"expected a number from {low:g} to {high:g}, got {_shown(value)}",
                          where)
    return value


def usable_cpus() -> int:
    """The number of CPU cores this process may use (its affinity, where known)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def workers_range() -> Range:
    """``workers``: 1 to :data:`WORKERS_PER_CPU` times the usable CPU cores."""
    return Range(1, WORKERS_PER_CPU * usable_cpus(), f"(at most {WORKERS_PER_CPU} per CPU core)")


__all__ = ["Range", "GAMES_MAX", "WORKERS_PER_CPU", "GAMES_PER_PAIRING", "ROUNDS",
           "OPENING_TURNS", "SEED", "NAME_MAX", "MOVETIME_MS", "CLOCK_BASE_MS",
           "CLOCK_INCREMENT_MS", "HANDSHAKE_MS", "MARGIN_MS", "NODES", "DEPTH", "PERIOD_MOVES",
           "WALL_FACTOR", "LIMITS", "SPRT_PAIRS", "ELO_BOUND", "check_wall_factor",
           "usable_cpus", "workers_range"]
