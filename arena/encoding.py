"""Positions and moves as arrays, for learned bots: a fixed action space over a board, the
mask of the legal actions, and an observation array (:mod:`arena.env` builds its PettingZoo
and Gymnasium environments on this; :func:`arena.botkit.run_policy` runs a policy with it).

A turn of :mod:`arena.rules` is one atomic move (``a1-a4xg7xd1``).  Its captures are a set
whose size depends on the variant (double captures, men taken from the opponent's hand,
turns that only remove men), so a turn is played as a few **actions** of the same player,
as OpenSpiel plays a removal as an action of its own:

* the head: ``place(d)`` (a placement at point ``d``) or ``move(s, d)`` (a slide or a fly);
* then each capture: ``remove(p)`` (the man on point ``p``, whoever's it is: a few rule
  families remove one's own) or ``hand`` (a man from the opponent's hand), in any order;
* ``done`` ends a turn that may take fewer men than it could (``optional_capture``).

A turn ends as soon as what was chosen is a legal move of the engine and nothing more may
be taken; a turn that only removes men (``xg7``) starts at its first ``remove``.  Every
action the mask allows leads to at least one legal move, and every legal move is reached by
some actions, so the engine's own move generation (:meth:`Position.generate_raw`) is the only
rule book: this module decides nothing about the rules.

For a board of ``N`` points the action numbers are ``place(d) = d``, ``move(s, d) = N +
s·N + d``, ``remove(p) = N + N² + p``, ``hand = N + N² + N`` and ``done = hand + 1``
(:class:`Actions`).  Point ``i`` is ``position.topology.points[i]``.

The observation (:func:`observe`) is a ``float32`` array of shape ``(N, PLANES)``, one row
per point, from the point of view of one player (``me``): see :data:`PLANE_NAMES`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from arena.rules import HAND_SHIFT, Move, Position, RawMove, bits

_BOARD = (1 << HAND_SHIFT) - 1

#: the observation's planes (columns), in order: per point, then the same value on every point
PLANE_NAMES: tuple[str, ...] = (
    "mine",            # my man on the point
    "theirs",          # the opponent's man on the point
    "blocked",         # a point blocked until placement ends (placement_mill=mark)
    "chosen_from",     # this turn so far: the head's source
    "chosen_to",       # this turn so far: the head's destination
    "chosen_capture",  # this turn so far: a man chosen for capture
    "my_hand",         # men in my hand / the variant's men
    "their_hand",      # men in the opponent's hand / the variant's men
    "my_men",          # my men on the board / the variant's men
    "their_men",       # the opponent's men on the board / the variant's men
    "to_move",         # 1: I am to move
    "placing",         # my phase (one of the three is 1)
    "moving",
    "flying",
    "capturing",       # 1: the turn's head is chosen and its captures are being chosen
    "owed",            # men I owe in a removal-only turn / the variant's men (negative: my own)
    "quiet",           # turns without a capture / the variant's no-capture draw (0 if none)
)
PLANES = len(PLANE_NAMES)


class Actions:
    """The action numbers of a board of ``n`` points (see the module docstring)."""

    def __init__(self, n: int, points: Sequence[str] = ()) -> None:
        self.n = n
        #: the points' names, where known (:func:`actions_for`), for :meth:`describe`
        self.points = tuple(points) or tuple(str(i) for i in range(n))
        self.hand = n + n * n + n
        self.done = self.hand + 1
        #: how many actions there are
        self.size = self.done + 1

    def place(self, d: int) -> int:
        return d

    def move(self, s: int, d: int) -> int:
        return self.n + s * self.n + d

    def remove(self, p: int) -> int:
        return self.n + self.n * self.n + p

    def describe(self, action: int) -> str:
        """``place d6``, ``move a1-a4``, ``remove g7``, ``hand``, ``done`` (points by number
        where the names are not known)."""
        n, points = self.n, self.points
        if not 0 <= action < self.size:
            return f"not an action: {action} (0 to {self.size - 1})"
        if action < n:
            return f"place {points[action]}"
        if action < n + n * n:
            s, d = divmod(action - n, n)
            return f"move {points[s]}-{points[d]}"
        if action < self.hand:
            return f"remove {points[action - n - n * n]}"
        return "hand" if action == self.hand else "done"


def actions_for(position: Position) -> Actions:
    """The :class:`Actions` of ``position``'s board."""
    return Actions(len(position.topology.points), position.topology.points)


@dataclass
class Turn:
    """A turn being chosen action by action in one position (see the module docstring).

    ``legal`` are the engine's moves in the position (:meth:`Position.generate_raw`, the game
    not over).  :meth:`mask` gives the actions allowed next; :meth:`choose` takes one and
    returns the engine's move once the turn is complete (else None)."""

    actions: Actions
    legal: Sequence[RawMove]
    head: Optional[tuple[int, int]] = None
    board_caps: int = 0
    hand_caps: int = 0
    _left: list[RawMove] = field(default_factory=list)
    _allowed: Optional[list[int]] = None

    def __post_init__(self) -> None:
        if not self.legal:
            raise ValueError("no legal move: the game is over")
        self._left = list(self.legal)

    @classmethod
    def of(cls, position: Position) -> Turn:
        """The turn of the side to move in ``position`` (the game must not be over)."""
        return cls(actions_for(position), position.generate_raw())

    # a candidate's captures cover the chosen ones
    def _covers(self, raw: RawMove) -> bool:
        caps = raw[2]
        return (caps & self.board_caps) == self.board_caps and caps >> HAND_SHIFT >= self.hand_caps

    def _exact(self, raw: RawMove) -> bool:
        return raw[2] & _BOARD == self.board_caps and raw[2] >> HAND_SHIFT == self.hand_caps

    def allowed(self) -> list[int]:
        """The actions allowed next, in increasing order."""
        if self._allowed is None:
            self._allowed = self._find_allowed()
        return self._allowed

    def _find_allowed(self) -> list[int]:
        a = self.actions
        out: set[int] = set()
        if self.head is None:
            for s, d, caps in self._left:
                if d >= 0:
                    out.add(a.place(d) if s < 0 else a.move(s, d))
                else:  # a removal-only turn starts at its first removal
                    out.update(a.remove(p) for p in bits(caps & _BOARD))
                    if caps >> HAND_SHIFT:
                        out.add(a.hand)
            return sorted(out)
        more = False
        for raw in self._left:
            caps = raw[2]
            extra = caps & _BOARD & ~self.board_caps
            out.update(a.remove(p) for p in bits(extra))
            if caps >> HAND_SHIFT > self.hand_caps:
                out.add(a.hand)
            more = more or bool(extra) or caps >> HAND_SHIFT > self.hand_caps
        if more and any(self._exact(raw) for raw in self._left):
            out.add(a.done)
        return sorted(out)

    def mask(self) -> np.ndarray:
        """The allowed actions as an ``int8`` array of the action space's size (1: allowed)."""
        m = np.zeros(self.actions.size, dtype=np.int8)
        m[self.allowed()] = 1
        return m

    def choose(self, action: int) -> Optional[RawMove]:
        """Take ``action`` (one :meth:`allowed` gives: :class:`ValueError` otherwise);
        the engine's move once the turn is complete, else None."""
        a = self.actions
        if action not in self.allowed():
            raise ValueError(f"action {action} ({a.describe(action)}) is not allowed here")
        self._allowed = None
        n = a.n
        if action == a.done:
            return next(raw for raw in self._left if self._exact(raw))
        if self.head is None and action < n + n * n:
            s, d = (-1, action) if action < n else divmod(action - n, n)
            self.head = (s, d)
        else:
            if self.head is None:  # the first removal of a removal-only turn
                self.head = (-1, -1)
            if action == a.hand:
                self.hand_caps += 1
            else:
                self.board_caps |= 1 << (action - n - n * n)
        self._left = [raw for raw in self._left
                      if (raw[0], raw[1]) == self.head and self._covers(raw)]
        exact = [raw for raw in self._left if self._exact(raw)]
        if exact and len(exact) == len(self._left):  # nothing more may be taken
            return exact[0]
        return None

    def actions_of(self, raw: RawMove) -> list[int]:
        """The actions that play ``raw`` from the turn's start (captures in point order,
        then those from the hand; ``done`` where the turn could take more)."""
        a = self.actions
        s, d, caps = raw
        out = [] if d < 0 else [a.place(d) if s < 0 else a.move(s, d)]
        out += [a.remove(p) for p in bits(caps & _BOARD)]
        out += [a.hand] * (caps >> HAND_SHIFT)
        probe = Turn(self.actions, self.legal)
        for i, action in enumerate(out):
            if probe.choose(action) is not None:
                return out[:i + 1]
        return out + [a.done]


def observe(position: Position, me: int, turn: Optional[Turn] = None) -> np.ndarray:
    """The observation of ``position`` for player ``me`` (0 white, 1 black), with the turn
    being chosen so far (``turn``, when it is ``me``'s): shape ``(N, PLANES)``, float32."""
    n = len(position.topology.points)
    v = position.variant
    obs = np.zeros((n, PLANES), dtype=np.float32)
    them = 1 - me
    for i in bits(position.men[me]):
        obs[i, 0] = 1.0
    for i in bits(position.men[them]):
        obs[i, 1] = 1.0
    for i in bits(position.marks):
        obs[i, 2] = 1.0
    mine = turn is not None and position.turn == me
    if mine and turn is not None and turn.head is not None:
        s, d = turn.head
        if s >= 0:
            obs[s, 3] = 1.0
        if d >= 0:
            obs[d, 4] = 1.0
        for i in bits(turn.board_caps):
            obs[i, 5] = 1.0
    men = float(v.men)
    phase = position.phase(me)
    quiet_cap = v.no_capture_draw or 0
    obs[:, 6:] = (
        position.hand[me] / men, position.hand[them] / men,
        position.men[me].bit_count() / men, position.men[them].bit_count() / men,
        1.0 if position.turn == me else 0.0,
        phase == "placing", phase == "moving", phase == "flying",
        1.0 if mine and turn is not None and turn.head is not None else 0.0,
        position.pending[me] / men,
        min(1.0, position.quiet / quiet_cap) if quiet_cap else 0.0)
    return obs


def observation(position: Position, me: int, turn: Optional[Turn],
                actions: Actions) -> dict[str, np.ndarray]:
    """What an agent reads (PettingZoo's classic games' form): ``observation``
    (:func:`observe`) and ``action_mask`` (all zeros unless ``turn`` is ``me``'s)."""
    mine = turn if turn is not None and position.turn == me else None
    mask = mine.mask() if mine is not None else np.zeros(actions.size, dtype=np.int8)
    return {"observation": observe(position, me, mine), "action_mask": mask}


def policy_move(position: Position, policy: Callable[[np.ndarray, np.ndarray], Any]) -> Move:
    """The move ``policy(observation, mask) -> action`` makes for the side to move in
    ``position``, asked action by action until its turn is complete.

    :raises ValueError: the policy chose an action the mask forbids."""
    turn = Turn.of(position)
    me = position.turn
    while True:
        done = turn.choose(int(policy(observe(position, me, turn), turn.mask())))
        if done is not None:
            return move_of(position, done)


def move_of(position: Position, raw: RawMove) -> Move:
    """The engine's :class:`Move` for ``raw`` in ``position`` (its text is what a bot sends)."""
    position.push_raw(raw)
    try:
        return position.peek()
    finally:
        position.pop()


__all__ = ["Actions", "PLANES", "PLANE_NAMES", "Turn", "actions_for", "move_of", "observation",
           "observe", "policy_move"]
