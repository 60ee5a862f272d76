"""A PettingZoo AEC environment of any preset, on :mod:`arena.rules` (no second rules engine).

>>> from arena.env import env
>>> e = env(variant="lasker-morris")
>>> e.reset(seed=1)
>>> obs = e.observe(e.agent_selection)   # {"observation": (N, PLANES), "action_mask": (A,)}

Agents ``player_0`` (white, moves first) and ``player_1`` (black).  A turn of the engine is
one or more actions of the player to move (the head, then each capture: see
:mod:`arena.encoding`), so ``agent_selection`` stays with a player while it chooses its
captures.  The rewards come at the end: +1 for the winner, -1 for the loser, 0 each for a
draw (the engine's draw rules: repetition, turns without a capture, three against three).
``max_turns`` truncates a game after that many turns (None: only the rules end it).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from arena.encoding import Turn, actions_for, observation
from arena.env.spaces import action_space, end_info, observation_space, reward_of
from arena.errors import ArenaError
from arena.rules import Position
from arena.variants import Variant, get_variant

try:
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers
except ImportError as e:  # pragma: no cover - exercised where the extra is missing
    raise ArenaError(f"arena.env needs PettingZoo and Gymnasium (the rl extra: pip install "
                     f"'morris-arena[rl]'): {e}") from None

AGENTS = ("player_0", "player_1")


class MorrisEnv(AECEnv):
    """The raw AEC environment (:func:`env` adds PettingZoo's classic wrappers)."""

    metadata = {"render_modes": ["ansi", "human"], "name": "morris_v0",
                "is_parallelizable": False}

    def __init__(self, variant: Variant | str = "nine-mens-morris", *,
                 max_turns: Optional[int] = None, render_mode: Optional[str] = None) -> None:
        super().__init__()
        self.variant = get_variant(variant) if isinstance(variant, str) else variant
        self.max_turns = max_turns
        self.render_mode = render_mode
        self.position = Position(self.variant)
        self.actions = actions_for(self.position)
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        self.observation_spaces = {a: observation_space(self.actions) for a in AGENTS}
        self.action_spaces = {a: action_space(self.actions) for a in AGENTS}
        self.turn: Optional[Turn] = None
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = {a: 0.0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in AGENTS}
        self.agent_selection = AGENTS[0]
        self.turns = 0

    def observation_space(self, agent: str) -> Any:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> Any:
        return self.action_spaces[agent]

    def reset(self, seed: Optional[int] = None, options: Optional[dict[str, Any]] = None) -> None:
        """A new game from the variant's start (``options={"position": text}``: from that
        position, as ``arena.rules.Position.from_text`` reads it).  The game has no chance:
        ``seed`` only seeds the action spaces' sampling."""
        if seed is not None:
            for i, a in enumerate(AGENTS):
                self.action_spaces[a].seed(seed + i)
        start = (options or {}).get("position")
        self.position = (Position.from_text(self.variant, start) if start
                         else Position(self.variant))
        self.agents = list(AGENTS)
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = {a: 0.0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos = {a: {} for a in AGENTS}
        self.turns = 0
        self._next_turn()

    def _next_turn(self) -> None:
        """The side to move chooses next (or the game is over: everyone is told)."""
        pos = self.position
        outcome = pos.outcome()
        if outcome is None and self.max_turns is not None and self.turns >= self.max_turns:
            self.truncations = {a: True for a in AGENTS}
            self.turn = None
            return
        if outcome is not None:
            self.turn = None
            self.rewards = {a: reward_of(outcome, i) for i, a in enumerate(AGENTS)}
            self.terminations = {a: True for a in AGENTS}
            self.infos = {a: end_info(outcome) for a in AGENTS}
            return
        self.turn = Turn.of(pos)
        self.agent_selection = AGENTS[pos.turn]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return observation(self.position, AGENTS.index(agent), self.turn, self.actions)

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        assert self.turn is not None
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in AGENTS}
        done = self.turn.choose(int(action))  # ValueError for an action the mask forbids
        if done is not None:
            self.position.push_raw(done)
            self.turns += 1
            self._next_turn()
        self._accumulate_rewards()
        if self.render_mode == "human":
            print(self.render())

    def render(self) -> Optional[str]:
        if self.render_mode is None:
            return None
        return self.position.board_text()

    def close(self) -> None:
        pass


def env(variant: Variant | str = "nine-mens-morris", **kwargs: Any) -> Any:
    """:class:`MorrisEnv` wrapped as PettingZoo's classic games are: an illegal action ends
    the game with -1 for the player who chose it, an action out of range fails, and the
    order of calls is checked."""
    raw = MorrisEnv(variant, **kwargs)
    wrapped = wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)


__all__ = ["AGENTS", "MorrisEnv", "env"]
