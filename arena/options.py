"""Options given for a bot, checked against what the bot declares in its handshake: pure.

A bot declares its options UCI style (``option name Depth type spin default 3 min 1 max 64``,
parsed into :class:`arena.protocol.OptionDecl`); the user gives values in ``bot.yaml``
(``options:``), on the command line (``--option-a Depth=3``, ``bots/x:Depth=3``) or in a
tournament file.  :func:`check_options` refuses a value the bot would not accept, before a
game is played, with an :class:`OptionError` naming the option and what the bot declares::

    MobiltyWeight: bots/alphabeta declares no such option (did you mean MobilityWeight? it declares Seed, Depth, ...)
    Depth=999: out of range for bots/alphabeta (spin 1..64)

Option names are case-insensitive (``docs/PROTOCOL.md``, *Options*), and so are ``check`` and
``combo`` values, as the Python bot kit reads them.  Only the options the user gave are
checked: the referee itself sends ``Seed`` only to a bot that declares it.
"""

from __future__ import annotations

import difflib
from typing import Mapping, Optional, Sequence

from arena.errors import ConfigError
from arena.protocol import OptionDecl, escape_controls

#: the most declared names an error lists
_NAMES_SHOWN = 12
#: the most characters of a given value an error shows
_VALUE_SHOWN = 40


class OptionError(ConfigError):
    """An option given for a bot that the bot does not declare, or a value it would refuse.

    ``option`` is the option's name as given; ``bot`` names the bot (its folder).
    """

    def __init__(self, message: str, option: str, bot: str, value: Optional[str] = None) -> None:
        self.option = option
        self.bot = bot
        self.value = value
        where = option if value is None else f"{option}={_shown(value)}"
        super().__init__(message, escape_controls(where))


def _shown(value: str) -> str:
    return value if len(value) <= _VALUE_SHOWN else value[:_VALUE_SHOWN] + "..."


def describe_option(decl: OptionDecl) -> str:
    """What a declaration accepts, in a few words: ``spin 1..64``, ``check true/false``,
    ``combo Solid/Normal/Risky``, ``string``, ``button (no value)``."""
    if decl.type == "spin":
        if decl.min is None and decl.max is None:
            return "spin, an integer"
        low = "" if decl.min is None else str(decl.min)
        high = "" if decl.max is None else str(decl.max)
        return f"spin {low}..{high}"
    if decl.type == "check":
        return "check true/false"
    if decl.type == "combo":
        return f"combo {'/'.join(decl.vars)}" if decl.vars else "combo"
    if decl.type == "button":
        return "button (no value)"
    return decl.type


def _declared_names(declared: Sequence[OptionDecl]) -> str:
    names = [d.name for d in declared]
    if len(names) > _NAMES_SHOWN:
        names = names[:_NAMES_SHOWN] + [f"and {len(names) - _NAMES_SHOWN} more"]
    return ", ".join(names)


def _unknown(name: str, declared: Sequence[OptionDecl], bot: str) -> OptionError:
    if not declared:
        return OptionError(f"{bot} declares no options", name, bot)
    by_lower = {d.name.lower(): d.name for d in declared}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1)
    hint = f"did you mean {by_lower[close[0]]}? " if close else ""
    return OptionError(f"{bot} declares no such option ({hint}it declares "
                       f"{_declared_names(declared)})", name, bot)


def value_problem(decl: OptionDecl, value: str) -> Optional[str]:
    """Why the bot would refuse ``value`` for ``decl`` (a few words), or ``None`` if it fits."""
    if decl.type == "spin":
        try:
            number = int(value.strip())
        except ValueError:
            return "not an integer"
        if ((decl.min is not None and number < decl.min)
                or (decl.max is not None and number > decl.max)):
            return "out of range"
        return None
    if decl.type == "check":
        return None if value.strip().lower() in ("true", "false") else "not true or false"
    if decl.type == "combo":
        wanted = value.strip().lower()
        return None if any(v.lower() == wanted for v in decl.vars) else "not one of its values"
    if decl.type == "button":
        return None if value.strip().lower() in ("", "true") else "a button takes no value"
    return None  # string: any text


def check_options(options: Mapping[str, str], declared: Sequence[OptionDecl], *,
                  bot: str) -> None:
    """Check every option in ``options`` (name -> value as sent) against the bot's
    ``declared`` options; ``bot`` names the bot in the message (``bots/alphabeta``).

    A name matches a declaration in any case.  A ``spin`` takes an integer within its
    ``min``/``max``, a ``check`` ``true``/``false``, a ``combo`` one of its ``var`` values
    (any case), a ``string`` any text, a ``button`` nothing (or ``true``).

    :raises OptionError: the first option the bot does not declare (with the nearest
        declared name, if one is close) or whose value it would refuse (with the type and
        range the bot declares); an option given twice in different cases.
    """
    by_lower = {d.name.lower(): d for d in declared}
    seen: dict[str, str] = {}
    for name, value in options.items():
        low = name.lower()
        if low in seen:
            raise OptionError(f"given twice for {bot} (also as {seen[low]})", name, bot)
        seen[low] = name
        decl = by_lower.get(low)
        if decl is None:
            raise _unknown(name, declared, bot)
        problem = value_problem(decl, value)
        if problem is not None:
            raise OptionError(f"{problem} for {bot} ({describe_option(decl)})", name, bot, value)


__all__ = ["OptionError", "check_options", "describe_option", "value_problem"]
