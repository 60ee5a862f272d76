"""The isolation levels (:class:`Level`): which this machine provides, the best one, what a
level does not protect here (:func:`level_warning`), and everything ``arena doctor`` reports
(:func:`checks`).

What each level does is in :mod:`arena.sandbox` and ``docs/SECURITY.md``; the probes behind
these answers live with their concern (:mod:`~arena.sandbox.bwrap`,
:mod:`~arena.sandbox.confine`, :mod:`~arena.sandbox.cgroups`, :mod:`~arena.sandbox.procs`) and
run once per process.
"""

from __future__ import annotations

import enum
import shutil
from typing import Optional

from arena.errors import ConfigError
from arena.sandbox import procs
from arena.sandbox.bwrap import bwrap_status
from arena.sandbox.cgroups import cgroup_status, cpu_clock_status
from arena.sandbox.confine import confinement_status
from arena.sandbox.values import Check


class Level(str, enum.Enum):
    """An isolation level; each includes everything of the ones before it."""

    NONE = "none"
    BASIC = "basic"
    BWRAP = "bwrap"


def parse_level(text: object, path: str = "isolation") -> Level:
    """``none``/``basic``/``bwrap``, or ``best``/``auto``/``None`` for the best available.

    :raises ConfigError: an unknown name, or a level this machine cannot provide.
    """
    if text is None or (isinstance(text, str) and text.lower() in ("best", "auto", "")):
        return best_level()
    if isinstance(text, Level):
        level = text
    else:
        try:
            level = Level(str(text).lower())
        except ValueError:
            names = ", ".join(lv.value for lv in Level)
            raise ConfigError(f"unknown isolation level {text!r} (known: {names}, best)",
                              path) from None
    if level not in available_levels():
        why = (bwrap_status() if level is Level.BWRAP else _basic_status()).detail
        raise ConfigError(f"isolation level {level.value} is not available here: {why} "
                          "(see `arena doctor`)", path)
    return level


def available_levels() -> list[Level]:
    """The levels this machine can provide, weakest first."""
    levels = [Level.NONE]
    if procs.subreaper_status().ok:
        if not procs.is_root() or confinement_status().ok:
            levels.append(Level.BASIC)
        if bwrap_status().ok:
            levels.append(Level.BWRAP)
    return levels


def _basic_status() -> Check:
    """Why ``basic`` is or is not available (as root it needs the confinement)."""
    sub = procs.subreaper_status()
    if not sub.ok or not procs.is_root():
        return sub
    return confinement_status()


def level_warning(level: Level) -> Optional[str]:
    """What ``level`` does not protect here, in one line for the console (None when it
    confines files and processes: ``bwrap``, or ``basic`` run by root)."""
    get_bwrap = _stronger_level_advice()
    if level is Level.NONE:
        who = "root" if procs.is_root() else "you"
        return (f"isolation none: bots run unconfined as {who}: they can read and write your "
                f"files and signal your processes; {get_bwrap}")
    if level is Level.BASIC and not procs.is_root():
        return ("isolation basic: bots run as you: they can read and write your files, "
                f"signal your processes and reach the network; {get_bwrap}, see `arena doctor`")
    return None


def _stronger_level_advice() -> str:
    """What would give a file system boundary here, as it really is: the stronger level
    that already works (chosen with --isolation), or why bubblewrap does not, or how to
    install it."""
    import shutil

    from arena.sandbox.bwrap import bwrap_status

    if Level.BWRAP in available_levels():
        return ("bubblewrap works on this machine: use --isolation bwrap (or leave "
                "--isolation out: it is the default here)")
    if shutil.which("bwrap"):
        return (f"bubblewrap is installed but does not work here ({bwrap_status().detail}); "
                f"see `arena doctor`")
    return "install bubblewrap for a file system boundary (apt-get install -y bubblewrap)"


def best_level() -> Level:
    """The strongest level available here (the default)."""
    return available_levels()[-1]


def checks() -> list[Check]:
    """Everything ``arena doctor`` reports, one :class:`Check` per line."""
    out = [Check("levels", True, ", ".join(lv.value for lv in available_levels())
                 + f" (default: {best_level().value})"),
           Check("none", True, "available (own process group and working directory)")]
    basic = _basic_status()
    if not basic.ok:
        out.append(Check("basic", False, basic.detail))
    elif procs.is_root():
        out.append(Check("basic", True, "available (as root: a unique unprivileged uid, "
                                        "read-only mounts, a private /tmp; rlimits, cleared "
                                        "environment, child subreaper, parent-death signal)"))
    else:
        out.append(Check("basic", True, "available (rlimits, cleared environment, child "
                                        "subreaper, parent-death signal; bots run as you)"))
    out.append(bwrap_status())
    if procs.is_root():
        ok = shutil.which("setpriv") is not None
        out.append(Check("privilege drop", ok, "setpriv (bwrap bots run as a unique "
                                               "unprivileged uid)" if ok else
                         "unavailable (setpriv is missing)"))
    out += cgroup_status()
    out.append(cpu_clock_status())
    out.append(Check("wall clock", True, "available (time.monotonic)"))
    from arena.sandbox.scratchfs import scratch_status

    out.append(scratch_status())
    return out
