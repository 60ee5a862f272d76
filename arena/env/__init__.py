"""Learning environments over :mod:`arena.rules` (the ``rl`` extra: ``pip install
'morris-arena[rl]'``, PettingZoo and Gymnasium): :class:`MorrisEnv`, a PettingZoo AEC
environment of any preset, :func:`env` (the same, wrapped as PettingZoo's classic games
are), and :class:`MorrisGym`, one player's Gymnasium environment against a given opponent
(a Python policy, or a bot folder played through the referee).  The actions and
observations are :mod:`arena.encoding`'s; docs/LEARNING.md shows them at work."""

from __future__ import annotations

from typing import Any

__all__ = ["MorrisEnv", "env", "MorrisGym", "PolicyOpponent", "BotOpponent", "RandomOpponent"]


def __getattr__(name: str) -> Any:  # PettingZoo and Gymnasium are imported when asked for
    if name in ("MorrisEnv", "env"):
        from arena.env import aec

        return getattr(aec, name)
    if name in ("MorrisGym", "PolicyOpponent", "BotOpponent", "RandomOpponent"):
        from arena.env import single

        return getattr(single, name)
    raise AttributeError(f"module 'arena.env' has no attribute {name!r}")
