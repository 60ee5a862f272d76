"""Before the first game: build a bot if it has a ``build:`` step, start it once, read its
handshake and check the options given for it against the options it declares.

``arena play``, ``arena sprt`` and tournaments call :func:`preflight` for every bot before
the first game, so that a mistyped or out-of-range option is a one-line error (exit 2)
instead of a ``setoption`` the bot silently ignores.
"""

from __future__ import annotations

import dataclasses
import os
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Optional, Sequence, Union

from arena.bot import BotProcess, BotSpec, Handshake
from arena.clock import HANDSHAKE_MS
from arena.errors import ArenaError
from arena.options import check_options

if TYPE_CHECKING:
    from arena.sandbox import Isolation

#: the time a bot gets from its start to ``morrisok`` in a preflight (seconds)
HANDSHAKE_S = HANDSHAKE_MS / 1000.0


def bot_label(spec: BotSpec) -> str:
    """How messages name a bot: its folder relative to the current directory when it is
    below it (``bots/alphabeta``), else the folder's absolute path; an engine named by a
    string (:func:`arena.manifest.parse_engine`) by ``engine <name>``."""
    if spec.engine:
        return f"engine {spec.name}"
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


def _same_start(spec: BotSpec) -> tuple[object, ...]:
    """What decides a bot's handshake: two specs alike here start the same process (they
    may differ in name and options, which the handshake does not depend on)."""
    return (spec.path, spec.command, spec.cwd, spec.build)


def preflight_all(specs: Sequence[BotSpec], *, isolation: Optional[Isolation] = None,
                  handshake_s: float = HANDSHAKE_S) -> list[Union[Handshake, ArenaError]]:
    """:func:`preflight` for every spec, as many at a time as there are cores (at least 2),
    each bot started once however many specs share it (a tournament's ``random`` and
    ``random-2``, an SPRT's two settings of one bot); each spec's options are checked
    against that handshake.

    Returns, in the order of ``specs``, the handshake or the error (an
    :class:`~arena.options.OptionError`, a :class:`~arena.errors.BotError`, or another
    :class:`~arena.errors.ArenaError`) that :func:`preflight` would have raised for it.
    Starting the bots at once rather than one after the other saves a bot start per bot
    (about 0.2 s for a Python bot), paid before every tournament.
    """
    firsts: dict[tuple[object, ...], BotSpec] = {}
    for spec in specs:
        firsts.setdefault(_same_start(spec), spec)

    def start(spec: BotSpec) -> Union[Handshake, ArenaError]:
        try:  # the options are checked below, per spec: none here
            return preflight(dataclasses.replace(spec, options={}), isolation=isolation,
                             handshake_s=handshake_s)
        except ArenaError as e:
            return e

    width = max(1, min(len(firsts), max(2, os.cpu_count() or 1)))
    with ThreadPoolExecutor(max_workers=width, thread_name_prefix="arena-preflight") as pool:
        started = dict(zip(firsts, pool.map(start, firsts.values())))
    out: list[Union[Handshake, ArenaError]] = []
    for spec in specs:
        got = started[_same_start(spec)]
        if isinstance(got, Handshake):
            try:
                check_options(spec.options, got.options, bot=bot_label(spec))
            except ArenaError as e:
                got = e
        out.append(got)
    return out


__all__ = ["preflight", "preflight_all", "bot_label", "HANDSHAKE_S"]
