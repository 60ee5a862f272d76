"""Before the first game: build a bot if it has a ``build:`` step, start it once, read its
handshake and check the options given for it against the options it declares.

``arena play``, ``arena sprt`` and tournaments call :func:`preflight` for every bot before
the first game, so that a mistyped or out-of-range option is a one-line error (exit 2)
instead of a ``setoption`` the bot silently ignores.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Optional

from arena.bot import BotProcess, BotSpec, Handshake
from arena.clock import HANDSHAKE_MS
from arena.options import check_options

if TYPE_CHECKING:
    from arena.sandbox import Isolation

#: the time a bot gets from its start to ``morrisok`` in a preflight (seconds)
HANDSHAKE_S = HANDSHAKE_MS / 1000.0


def bot_label(spec: BotSpec) -> str:
    """How messages name a bot: its folder relative to the current directory when it is
    below it (``bots/alphabeta``), else the folder's absolute path."""
    try:
        rel = os.path.relpath(spec.path)
    except ValueError:  # another drive (Windows)
        return spec.path
    return spec.path if rel == ".." or rel.startswith(".." + os.sep) else rel


def preflight(spec: BotSpec, *, isolation: Optional[Isolation] = None,
              handshake_s: float = HANDSHAKE_S) -> Handshake:
    """Get ``spec`` ready to play and check its options, before any game.

    1. If ``spec.build`` is not empty, run the build step (:func:`arena.build.ensure_built`:
       in the bot's sandbox, only when the folder changed since the last build).
    2. Start the bot, read its handshake within ``handshake_s`` seconds of the start, and
       end it (``quit``).
    3. Check ``spec.options`` against the options the bot declared
       (:func:`arena.options.check_options`).

    Nothing else is sent: no ``setoption``, no ``newgame``.  The referee's own ``Seed`` is
    not in ``spec.options`` and is never checked.

    :returns: the handshake (``id`` lines, declared options, time from spawn to ``morrisok``).
    :raises OptionError: an option the bot does not declare, or a value it would refuse
        (a :class:`~arena.errors.ConfigError`: exit 2 from the CLI).
    :raises BotError: the build failed, or the bot could not be started or did not complete
        its handshake (:class:`~arena.errors.BotStartError`); the caller decides whether
        that ends the run or becomes a forfeit.
    :raises ConfigError: the isolation level cannot be set up.
    """
    if spec.build:
        from arena.build import ensure_built

        ensure_built(spec, isolation=isolation)
    bp = BotProcess(spec, label=f"preflight:{spec.name}", isolation=isolation)
    try:
        bp.start()
        handshake = bp.read_handshake(handshake_s)
    finally:
        bp.close()
    check_options(spec.options, handshake.options, bot=bot_label(spec))
    return handshake


__all__ = ["preflight", "bot_label", "HANDSHAKE_S"]
