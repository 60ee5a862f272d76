"""The typed errors of Morris Arena.

Everything the package raises on purpose is an :class:`ArenaError`; the CLI turns one into a
one-line message and a non-zero exit.  Move errors are also ``ValueError``\\s, as in python-chess.
"""

from __future__ import annotations

from typing import Any


class ArenaError(Exception):
    """Base of every error Morris Arena raises on purpose."""


class ConfigError(ArenaError):
    """A configuration (variant, bot manifest, tournament file) is malformed or inconsistent.

    ``path`` names the key that is wrong (``variants[1].men``), when there is one.
    """

    def __init__(self, message: str, path: str = "") -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


class MoveError(ArenaError, ValueError):
    """A move could not be used."""


class InvalidMoveError(MoveError):
    """The text is not a move at all (bad syntax, unknown point)."""


class IllegalMoveError(MoveError):
    """The move is well formed but not legal in the position."""


class PositionError(ArenaError, ValueError):
    """A serialised position could not be parsed or is inconsistent with the variant."""


class BotError(ArenaError):
    """A bot misbehaved; subclasses say how.  ``line`` is the offending output, if any."""

    def __init__(self, message: str, line: str | None = None) -> None:
        self.line = line
        super().__init__(message)


class BotStartError(BotError):
    """The bot could not be started, or did not complete the handshake."""


class BotTimeout(BotError):
    """The bot did not answer before its deadline.

    A move's timeout carries what the referee measured until it gave up (None where not
    measured): ``wall_ms`` elapsed, ``cpu_ms`` the CPU time the bot used, ``wait_ms`` the
    time it spent runnable but waiting for a CPU (the machine's load, not the bot); with the
    own clock, that wait is what the move was not charged."""

    wall_ms: float | None = None
    cpu_ms: float | None = None
    wait_ms: float | None = None
    #: with the own clock: its reading until the referee gave up (an
    #: ``arena.sandbox.ownclock.OwnTime``: own time, waits, share of a CPU)
    own: Any = None


class BotCrashed(BotError):
    """The bot's process exited or closed its output."""

    def __init__(self, message: str, line: str | None = None, returncode: int | None = None) -> None:
        self.returncode = returncode
        super().__init__(message, line)


class ProtocolError(BotError):
    """The bot sent a line that the protocol does not allow here."""


class IllegalMove(BotError):
    """The bot answered with a move that is malformed or illegal in the position."""
