"""Sandboxes for untrusted bots: isolation levels, resource limits, whole-tree CPU time and kill.

A :class:`Sandbox` is made per bot process from an :class:`Isolation` (a level, :class:`Limits`
and extra read-only paths) and the bot's folder.  The process owner (:class:`arena.bot.BotProcess`)
uses it like this::

    sb = Isolation.default().sandbox(folder, cwd=cwd, label="white")
    proc = sb.popen(argv)            # pipes for stdin/stdout/stderr, own session, attached
    ...  sb.cpu_time()  ...          # seconds of CPU used by the bot's whole process tree
    sb.snapshot()                    # before saying quit: remember the whole tree
    sb.terminate(grace_s)            # SIGTERM to everything of the bot, a grace, then SIGKILL
    sb.close()                       # nothing of the bot survives; cgroups and temp dirs removed

(:meth:`Sandbox.popen` is :meth:`~Sandbox.wrap`, :meth:`~Sandbox.env` and
:attr:`~Sandbox.preexec` given to ``subprocess.Popen``, then :meth:`~Sandbox.attach`.)

Levels (each includes the one before; see ``docs/SECURITY.md`` for what each guarantees):

``none``
    The bot's own process group and working directory; at the end its process group, its
    descendants still linked to it and those :meth:`Sandbox.snapshot` saw are killed.
``basic``
    Resource limits safe for every language (no core files, a file size cap, an open-file
    cap, a CPU-time backstop), a cleared environment (``PATH``, ``LANG``, ``HOME`` = a private
    temporary folder), the referee as *child subreaper* so orphaned descendants are found and
    killed, and a parent-death signal so nothing outlives a killed referee.  As root, each
    bot is also confined: a unique unprivileged uid, read-only mounts, a private ``/tmp``.
``bwrap``
    Bubblewrap: no network, a private PID namespace (killing it kills everything in it), a
    root file system holding only the system directories, the Python installation, the
    ``arena`` package and the bot's own folder, all read-only, plus a small private ``/tmp``.
    When the referee runs as root the bot runs as a unique unprivileged uid (``setpriv``).

Independently of the level (from ``basic`` up), where cgroups are writable (v1, or v2 with
the controllers delegated), each bot gets its own cgroups under ``<controller>/<the referee's
cgroup>/morris-arena/``: a memory limit, a process-count limit, exact CPU accounting of the
whole tree, and a freezer for a race-free kill.  They are always removed on :meth:`Sandbox.close`.

The package, one module per concern (each imports only the ones listed before it):

* :mod:`~arena.sandbox.values`: :class:`Limits`, :class:`Check`, :class:`SandboxError`;
* :mod:`~arena.sandbox.procs`: root or not, the C library, process trees and groups, their
  CPU time, unique uids, the child subreaper;
* :mod:`~arena.sandbox.paths`: the host paths a bot needs to see;
* :mod:`~arena.sandbox.cgroups`: where cgroups are writable, one bot's cgroups, stale ones;
* :mod:`~arena.sandbox.bwrap`: whether bubblewrap works here, its command line;
* :mod:`~arena.sandbox.confine`: ``basic`` as root (a private read-only mount namespace, a uid);
* :mod:`~arena.sandbox.watchdog`: the watchdog that cleans up after a killed referee
  (``python -m arena.sandbox --watch PID``, :mod:`arena.sandbox.__main__`);
* :mod:`~arena.sandbox.levels`: :class:`Level`, the levels available here, the best one,
  ``arena doctor``'s checks, what a level does not protect;
* :mod:`~arena.sandbox.core`: the :class:`Sandbox` of one bot process;
* :mod:`~arena.sandbox.isolation`: :class:`Isolation`, the settings read from configuration.
"""

from __future__ import annotations

from arena.sandbox.bwrap import bwrap_status
from arena.sandbox.cgroups import (CGROUP_PARENT, cgroup_status, cpu_clock_status,
                                   default_charge, describe_charge)
from arena.sandbox.confine import confinement_status
from arena.sandbox.core import Sandbox
from arena.sandbox.isolation import Isolation
from arena.sandbox.levels import (Level, available_levels, best_level, checks, level_warning,
                                  parse_level)
from arena.sandbox.procs import process_alive
from arena.sandbox.values import Check, Limits, SandboxError
from arena.sandbox.watchdog import watchdog_pid

__all__ = ["Level", "Limits", "Isolation", "Sandbox", "Check", "SandboxError", "parse_level",
           "best_level", "available_levels", "bwrap_status", "cgroup_status", "cpu_clock_status",
           "confinement_status", "level_warning", "checks", "process_alive", "watchdog_pid",
           "CGROUP_PARENT", "default_charge", "describe_charge"]
