"""Which host paths a bot needs to see: the Python installation, the ``arena`` package and the
installation of its command.  Both confinements (bwrap's mounts and ``basic`` as root) show a
bot these, read-only, and nothing else of the host's closed places."""

from __future__ import annotations

import functools
import os
import shutil
import sys
from pathlib import Path
from typing import Sequence

import arena


def inside(path: str, root: str) -> bool:
    """``path`` is ``root`` or below it."""
    return path == root or path.startswith(root.rstrip("/") + "/")


@functools.lru_cache(maxsize=1)
def _own_runtime() -> tuple[str, ...]:
    """The Python installation and the arena package: the same for every bot (worked out
    once, not at every bot start)."""
    exe = os.path.realpath(sys.executable)
    found = (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             str(Path(arena.__file__).resolve().parent),
             str(Path(exe).parent.parent if Path(exe).parent.name == "bin" else Path(exe).parent))
    return tuple(os.path.realpath(p) for p in found)


def runtime_paths(command: Sequence[str], env_path: str) -> list[str]:
    """Real paths of the Python installation, the arena package and the command's own
    installation (``.../bin/node`` -> ``...``), to mount read-only.  Top-level folders
    (``/opt``, ``/home``) are never mounted whole: name such paths in ``read_only``."""
    found = list(_own_runtime())
    if command:
        which = shutil.which(command[0], path=env_path) if "/" not in command[0] else command[0]
        if which and os.path.isabs(which):
            real = Path(os.path.realpath(which))
            found.append(str(real.parent.parent if real.parent.name == "bin" else real.parent))
    return [p for p in found if p.count("/") >= 2 or inside(p, "/usr")]


def bot_paths(command: Sequence[str], read_only: Sequence[str]) -> list[str]:
    """Real paths a bot running ``command`` sees read-only besides its folder: the runtime
    (:func:`runtime_paths`, the command looked up on our ``PATH``) and the ``read_only``
    paths it was given."""
    return [*runtime_paths(command, os.environ.get("PATH", os.defpath)),
            *(os.path.realpath(p) for p in read_only)]
