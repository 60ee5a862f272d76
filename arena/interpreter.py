"""This interpreter as a command names it (``{python}``): one place for the bot manifests
(:mod:`arena.manifest`) and the sandbox's confinement probe (:mod:`arena.sandbox.confine`),
which sit in one layer and may not import each other."""

from __future__ import annotations

import os
import sys

__all__ = ["python_path"]


def python_path() -> str:
    """This interpreter, as ``{python}`` in a command names it: ``sys.executable`` with any
    ``.`` or ``..`` resolved (``/root/x/../../venv/bin/python`` -> ``/venv/bin/python``), as
    the kernel resolved it, since a sandbox that hides ``/root`` cannot walk through
    ``/root/x``; the last part is kept as it is (a virtual environment's ``python`` link
    must stay one, or the environment is lost)."""
    exe = sys.executable
    parts = exe.split("/")
    if "." not in parts and ".." not in parts:
        return exe
    last = max(i for i, part in enumerate(parts) if part in (".", ".."))
    head = os.path.realpath("/".join(parts[:last + 1]) or "/")
    return os.path.join(head, *parts[last + 1:])
