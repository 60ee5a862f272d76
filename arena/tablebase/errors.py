"""The tablebase's typed errors: every one an :class:`~arena.errors.ArenaError`.

``NotCovered`` and its subclasses say that no table answers for a position (the caller plays
or adjudicates on without the tables); ``TablebaseCorrupt`` that a file is damaged.
"""

from __future__ import annotations

from arena.errors import ArenaError


class TablebaseError(ArenaError):
    """Base of the tablebase errors."""


class NotCovered(TablebaseError):
    """No table answers for this position: men in hand, removals owed, a placing phase, or
    men counts above those the tables hold."""


class MissingTable(NotCovered):
    """The position is of the kind the tables hold, but the file for its men counts and
    rules is not in the folder."""


class TablebaseMismatch(NotCovered):
    """A table exists for these men counts but was computed for other rules (another board,
    flying rule, capture rule...); the message names the parameters that differ."""


class UnsupportedVariant(NotCovered):
    """The variant has a rule the tables cannot hold (state beyond the men and the side to
    move, such as mills that may not be re-formed, or a mill that wins)."""


class TablebaseCorrupt(TablebaseError):
    """A table file is damaged: wrong magic, unreadable header, wrong size or checksum."""
