"""The Gymnasium spaces of a board's observations and actions (:mod:`arena.encoding`), and
what an ended game gives each player, shared by :class:`arena.env.MorrisEnv` and
:class:`arena.env.MorrisGym`."""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.encoding import PLANES, Actions
from arena.errors import ArenaError
from arena.rules import Outcome

try:
    from gymnasium import spaces
except ImportError as e:  # pragma: no cover - exercised where the extra is missing
    raise ArenaError(f"arena.env needs PettingZoo and Gymnasium (the rl extra: pip install "
                     f"'morris-arena[rl]'): {e}") from None


def observation_space(actions: Actions) -> Any:
    """``{"observation": (N, PLANES) float32 in [-1, 1], "action_mask": int8 0/1}``."""
    return spaces.Dict({
        "observation": spaces.Box(-1.0, 1.0, shape=(actions.n, PLANES), dtype=np.float32),
        "action_mask": spaces.Box(0, 1, shape=(actions.size,), dtype=np.int8)})


def action_space(actions: Actions) -> Any:
    """One number per action (:class:`arena.encoding.Actions`)."""
    return spaces.Discrete(actions.size)


def reward_of(outcome: Outcome, player: int) -> float:
    """+1 for the winner, -1 for the loser, 0 each for a draw."""
    if outcome.winner is None:
        return 0.0
    return 1.0 if outcome.winner == player else -1.0


def end_info(outcome: Outcome) -> dict[str, Any]:
    """The result and the termination word, as ``games.jsonl`` records them."""
    return {"result": outcome.result, "termination": outcome.termination.value}


__all__ = ["action_space", "end_info", "observation_space", "reward_of"]
