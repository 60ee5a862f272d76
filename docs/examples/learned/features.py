"""What the learned bot sees of each action: a few numbers per legal action, computed from
arena.encoding's observation (the men on each point) and the board's lines.  The policy is
linear in them: ``score(a) = theta · features(a)``, softmax over the legal actions.  Shared
by the bot (bot.py) and its training script (train.py)."""

from __future__ import annotations

import numpy as np

from arena.encoding import PLANE_NAMES, Actions
from arena.rules import Position

MINE, THEIRS = PLANE_NAMES.index("mine"), PLANE_NAMES.index("theirs")
NAMES = ("place", "move", "remove", "hand", "done",   # which kind of action (a bias each)
         "closes_my_mill", "blocks_their_mill", "makes_my_two", "opens_my_mill",
         "unblocks_theirs", "takes_from_their_line", "takes_a_blocker")
SIZE = len(NAMES)


class Features:
    """The features of every legal action on one variant's board."""

    def __init__(self, variant: str) -> None:
        topology = Position(variant).topology
        self.n = len(topology.points)
        self.actions = Actions(self.n)
        index = topology.index
        lines = [tuple(index[p] for p in line) for line in topology.lines]
        #: per point, the other points of each line through it
        self.others = [[tuple(q for q in line if q != i) for line in lines if i in line]
                       for i in range(self.n)]

    def of(self, observation: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The legal actions, and their features (one row each)."""
        mine = [int(x) for x in observation[:, MINE] > 0.5]  # ints: counted, not or-ed
        theirs = [int(x) for x in observation[:, THEIRS] > 0.5]
        legal = np.flatnonzero(mask)
        rows = np.zeros((len(legal), SIZE), dtype=np.float64)
        a, n = self.actions, self.n
        for k, action in enumerate(legal):
            f = rows[k]
            if action < n + n * n:  # a placement or a move to d (from s)
                s, d = (-1, action) if action < n else divmod(action - n, n)
                f[0 if s < 0 else 1] = 1.0
                for p, q in self.others[d]:
                    own = (mine[p] and p != s) + (mine[q] and q != s)
                    their = theirs[p] + theirs[q]
                    empty = 2 - own - their
                    f[5] += own == 2
                    f[6] += their == 2
                    f[7] += own == 1 and empty == 1
                if s >= 0:
                    for p, q in self.others[s]:
                        f[8] += mine[p] and mine[q]
                        f[9] += theirs[p] and theirs[q]
            elif action < a.hand:  # a capture of the man on point p
                p0 = action - n - n * n
                f[2] = 1.0
                for p, q in self.others[p0]:
                    f[10] += not (mine[p] or mine[q]) and (theirs[p] or theirs[q])
                    f[11] += mine[p] and mine[q]
            else:
                f[3 if action == a.hand else 4] = 1.0
        return legal, rows


def probabilities(theta: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The softmax policy's probability of each row's action."""
    z = rows @ theta
    z = np.exp(z - z.max())
    return z / z.sum()
