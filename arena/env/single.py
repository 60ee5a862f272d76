"""One player's Gymnasium environment: the learner against a given opponent.

>>> from arena.env import MorrisGym, BotOpponent
>>> g = MorrisGym("six-mens-morris", BotOpponent("bots/greedy"))
>>> obs, info = g.reset(seed=1)        # obs: {"observation", "action_mask"}, as MorrisEnv's
>>> obs, reward, terminated, truncated, info = g.step(int(obs["action_mask"].argmax()))

The opponent plays whole turns between the learner's actions: a Python policy
(:class:`PolicyOpponent`: ``policy(observation, mask) -> action``, the signature of
:func:`arena.botkit.run_policy`), uniformly random legal moves (:class:`RandomOpponent`),
or a bot folder played through the referee (:class:`BotOpponent`: the bot's process is
started, sandboxed and timed as in a game of ``arena run``; a bot that fails its move loses
the game, as a forfeit would).  The reward is +1, -1 or 0 at the end, from the learner's
side; ``info["result"]`` and ``info["termination"]`` say how the game ended.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

from arena.encoding import Turn, actions_for, move_of, observation, policy_move
from arena.env.spaces import action_space, end_info, observation_space, reward_of
from arena.errors import ArenaError, BotError, MoveError
from arena.rules import Position
from arena.variants import Variant, get_variant

try:
    import gymnasium
except ImportError as e:  # pragma: no cover - exercised where the extra is missing
    raise ArenaError(f"arena.env needs Gymnasium (the rl extra: pip install "
                     f"'morris-arena[rl]'): {e}") from None

#: ``policy(observation, action_mask) -> action`` (the observation and mask of
#: :mod:`arena.encoding`)
Policy = Callable[[np.ndarray, np.ndarray], int]


class Forfeit(Exception):
    """The opponent failed its move (a bot's crash, timeout, illegal move)."""

    def __init__(self, termination: str, detail: str) -> None:
        super().__init__(detail)
        self.termination = termination


class Opponent:
    """Plays whole turns for the other side (subclass: :meth:`move`)."""

    def new_game(self, variant: Variant, color: int, seed: int) -> None:
        """A game starts; the opponent plays ``color``."""

    def move(self, position: Position, moves: Sequence[str]) -> str:
        """The move text for ``position`` (reached by ``moves``); :class:`Forfeit` if it
        fails."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the opponent holds (a bot's process)."""


class RandomOpponent(Opponent):
    """A uniformly random legal move, seeded by each game's seed."""

    def __init__(self) -> None:
        self.rng = random.Random(0)

    def new_game(self, variant: Variant, color: int, seed: int) -> None:
        self.rng = random.Random(seed)

    def move(self, position: Position, moves: Sequence[str]) -> str:
        return str(self.rng.choice(position.legal_moves()))


class PolicyOpponent(Opponent):
    """A policy over :mod:`arena.encoding`'s actions plays its turns action by action."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    def move(self, position: Position, moves: Sequence[str]) -> str:
        try:
            return str(policy_move(position, self.policy))
        except ValueError as e:
            raise Forfeit("illegal-move", f"the opponent's policy: {e}") from None


class BotOpponent(Opponent):
    """A bot folder, played through the referee's own player (:class:`BotPlayer`): started
    for each game, sandboxed at ``isolation`` (default: the best level here), told
    ``go movetime <movetime_ms>`` and given ten times that (and a second) before it loses
    on time: generous, as training runs beside other work; a bot's own time limits are
    ``arena check``'s and ``arena run``'s business."""

    def __init__(self, folder: str | Path, *, movetime_ms: int = 100,
                 isolation: Any = None, handshake_s: float = 30.0) -> None:
        from arena.manifest import load_bot

        self.spec = load_bot(folder)
        self.movetime_ms = movetime_ms
        self.isolation = isolation
        self.handshake_s = handshake_s
        self.player: Any = None

    def new_game(self, variant: Variant, color: int, seed: int) -> None:
        from arena.referee import BotPlayer
        from arena.sandbox import Isolation

        self.close()
        isolation = self.isolation if self.isolation is not None else Isolation.default()
        self.player = BotPlayer(self.spec, label=self.spec.name, isolation=isolation)
        try:
            self.player.start()
            self.player.prepare(variant, seed, self.handshake_s)
        except BotError as e:
            self.close()
            raise ArenaError(f"{self.spec.name} did not start: {e}") from None

    def move(self, position: Position, moves: Sequence[str]) -> str:
        from arena.protocol import Go
        from arena.referee import termination_of

        try:
            text, _ = self.player.choose(position, list(moves), Go(movetime=self.movetime_ms),
                                         10 * self.movetime_ms / 1000.0 + 1.0)
        except BotError as e:
            term, _ = termination_of(e)
            raise Forfeit(term.value, str(e)) from None
        try:
            position.copy().push_text(text)
        except MoveError as e:
            raise Forfeit("illegal-move", str(e)) from None
        return text

    def close(self) -> None:
        if self.player is not None:
            player, self.player = self.player, None
            player.begin_finish("*", "the learner's environment ended the game")
            player.end_finish()


class MorrisGym(gymnasium.Env):
    """The learner plays ``color`` (``"white"``, ``"black"`` or ``"random"``: each game
    drawn from the reset's seed) against ``opponent`` (default: random moves)."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, variant: Variant | str = "nine-mens-morris",
                 opponent: Optional[Opponent] = None, *, color: str = "random",
                 max_turns: Optional[int] = None, render_mode: Optional[str] = None) -> None:
        if color not in ("white", "black", "random"):
            raise ValueError(f"color must be white, black or random, not {color!r}")
        self.variant = get_variant(variant) if isinstance(variant, str) else variant
        self.opponent = opponent if opponent is not None else RandomOpponent()
        self.color_choice = color
        self.max_turns = max_turns
        self.render_mode = render_mode
        self.position = Position(self.variant)
        self.actions = actions_for(self.position)
        self.observation_space = observation_space(self.actions)
        self.action_space = action_space(self.actions)
        self.me = 0
        self.turn: Optional[Turn] = None
        self.moves: list[str] = []
        self.turns = 0

    def _obs(self) -> dict[str, np.ndarray]:
        return observation(self.position, self.me, self.turn, self.actions)

    def reset(self, *, seed: Optional[int] = None,
              options: Optional[dict[str, Any]] = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        rng = self.np_random
        self.me = {"white": 0, "black": 1}.get(self.color_choice, int(rng.integers(2)))
        self.position = Position(self.variant)
        self.moves, self.turns = [], 0
        self.opponent.new_game(self.variant, 1 - self.me, int(rng.integers(2 ** 31)))
        reward, info = self._play_opponent()
        return self._obs(), info

    def _play_opponent(self) -> tuple[float, dict[str, Any]]:
        """The opponent's turns until the learner is to move or the game is over: the
        learner's reward so far, and how the game ended (if it did)."""
        pos = self.position
        while True:
            self.turn = None
            outcome = pos.outcome()
            if outcome is not None:
                return reward_of(outcome, self.me), end_info(outcome)
            if self.max_turns is not None and self.turns >= self.max_turns:
                return 0.0, {"truncated": True}
            if pos.turn == self.me:
                self.turn = Turn.of(pos)
                return 0.0, {}
            try:
                text = self.opponent.move(pos, self.moves)
            except Forfeit as e:
                return 1.0, {"result": "1-0" if self.me == 0 else "0-1",
                             "termination": e.termination, "detail": str(e)}
            pos.push_text(text)
            self.moves.append(text)
            self.turns += 1

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        if self.turn is None:
            raise RuntimeError("the game is over: call reset()")
        done = self.turn.choose(int(action))  # ValueError for an action the mask forbids
        if done is None:
            return self._obs(), 0.0, False, False, {}
        move = move_of(self.position, done)
        self.position.push_raw(done)
        self.moves.append(str(move))
        self.turns += 1
        reward, info = self._play_opponent()
        truncated = bool(info.pop("truncated", False))
        terminated = "result" in info
        if terminated or truncated:
            self.turn = None
        return self._obs(), reward, terminated, truncated, info

    def render(self) -> Optional[str]:
        return self.position.board_text() if self.render_mode == "ansi" else None

    def close(self) -> None:
        self.opponent.close()


__all__ = ["BotOpponent", "Forfeit", "MorrisGym", "Opponent", "Policy", "PolicyOpponent",
           "RandomOpponent"]
