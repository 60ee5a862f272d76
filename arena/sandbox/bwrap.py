"""Bubblewrap: whether it works here (:func:`bwrap_status`, tried once), and the command line
that runs a bot in new namespaces (:func:`bwrap_args`): no network, a private PID namespace, a
minimal read-only file system holding the system directories, the Python installation, the
``arena`` package and the bot's own folder, and a private ``/tmp``; as root, ``setpriv`` drops
to a unique unprivileged uid.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
from pathlib import Path
from typing import Optional, Sequence

from arena.sandbox import procs
from arena.sandbox.paths import bot_paths, inside
from arena.sandbox.values import Check, SandboxError

log = logging.getLogger("arena.sandbox")

#: /etc entries mounted read-only under bwrap: dynamic linking, alternatives, time zone, names
ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime",
               "nsswitch.conf", "passwd", "group", "mime.types", "ssl")
#: top-level system directories mounted (or recreated as the same symlinks) under bwrap
SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
#: the shell that moves a bwrap bot's pipes into place (dash cannot name descriptors >= 10)
BASH = shutil.which("bash")


@functools.lru_cache(maxsize=1)
def bwrap_status() -> Check:
    """Whether bubblewrap is installed *and* can make its namespaces here (tried once)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return Check("bwrap", False, "unavailable (bubblewrap is not installed: "
                                     "apt-get install -y bubblewrap)")
    try:
        version = subprocess.run([exe, "--version"], capture_output=True, text=True,
                                 timeout=5).stdout.strip() or "bubblewrap"
    except (OSError, subprocess.SubprocessError) as e:
        return Check("bwrap", False, f"unavailable (cannot run {exe}: {e})")
    if procs.is_root() and shutil.which("setpriv") is None:
        return Check("bwrap", False, f"unavailable ({version} is installed, but running as root "
                                     "needs setpriv (util-linux) to drop privileges)")
    uid = procs.unique_uid() if procs.is_root() else None
    probe = bwrap_args(folder=None, cwd="/", tmp_mb=1, uid=uid) + ["true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as e:
        return Check("bwrap", False, f"unavailable ({version} is installed but failed: {e})")
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return Check("bwrap", False, f"unavailable ({version} is installed but cannot make "
                                     f"its namespaces: {why})")
    return Check("bwrap", True, f"available ({version})")


def bwrap_args(*, folder: Optional[str], cwd: str, tmp_mb: int, uid: Optional[int],
                command: Sequence[str] = (), read_only: Sequence[str] = (),
                writable: bool = False) -> list[str]:
    """The bwrap prefix (ending with ``--`` and, as root, a ``setpriv`` privilege drop).
    ``writable``: ``folder`` is bound writable (a build's scratch copy), not read-only.

    The mounts are worked out once per bot and settings (they look at the file system:
    a millisecond or two per bot start); only the uid changes from one start to the next."""
    args = list(_mounts(folder, cwd, tmp_mb, tuple(command), tuple(read_only), writable))
    if uid is not None:
        args += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                 "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    return args


@functools.lru_cache(maxsize=64)
def _mounts(folder: Optional[str], cwd: str, tmp_mb: int, command: tuple[str, ...],
            read_only: tuple[str, ...], writable: bool) -> tuple[str, ...]:
    """The bwrap command up to its ``--`` (see :func:`bwrap_args`)."""
    args = [shutil.which("bwrap") or "bwrap"]
    mounted: list[str] = []  # read-only trees already visible
    for name in SYSTEM_DIRS:
        host = f"/{name}"
        if os.path.islink(host):
            args += ["--symlink", os.readlink(host), host]
        elif os.path.isdir(host):
            args += ["--ro-bind", host, host]
            mounted.append(host)
    args += ["--perms", "0755", "--dir", "/etc"]  # bwrap would make it 0700: unreadable
    for name in ETC_ENTRIES:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for java in sorted(Path("/etc").glob("java*")):
        args += ["--ro-bind-try", str(java), str(java)]
    args += ["--proc", "/proc", "--ro-bind-try", "/proc/sys", "/proc/sys", "--dev", "/dev",
             "--perms", "1777", "--size", str(tmp_mb << 20), "--tmpfs", "/tmp"]
    made = {"/", "/tmp", "/proc", "/dev", "/etc"}
    binds = bot_paths(command, read_only)
    if folder is not None:
        binds.append(folder)
    for src in sorted(dict.fromkeys(binds), key=lambda p: (p.count("/"), p)):
        if src != folder and folder is not None and inside(folder, src):
            log.warning("not mounting %s for the bot: it contains the bot folder", src)
            continue
        if not os.path.exists(src) or any(inside(src, m) for m in mounted):
            continue
        parents = [str(p) for p in reversed(Path(src).parents)]
        for parent in parents:
            if parent not in made:
                args += ["--perms", "0755", "--dir", parent]
                made.add(parent)
        args += ["--bind" if writable and src == folder else "--ro-bind", src, src]
        mounted.append(src)
    # no --new-session: the sandbox starts bwrap in a session of its own already (no
    # controlling terminal, so none to inject input into), and a second one would be a new
    # autogroup whose CPU share ignores the niceness the sandbox gave the bot (Sandbox.preexec)
    args += ["--chdir", cwd, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
             "--unshare-cgroup-try", "--die-with-parent", "--"]
    return tuple(args)


def trampoline(pipes: tuple[int, int]) -> list[str]:
    """The words put between the bwrap prefix and the bot's command so that a bash one-liner
    inside the sandbox moves the descriptors ``pipes`` (stdin, stdout) to the bot's 0 and 1:
    bwrap's own processes keep their standard descriptors, never the bot's pipes.

    :raises SandboxError: bash is not installed.
    """
    if BASH is None:
        raise SandboxError("bash is not installed: it hands a bwrap bot its pipes")
    i, o = pipes
    return [BASH, "-c", f'exec 0<&{i} 1>&{o} {i}<&- {o}>&-; exec "$@"', "bot"]
