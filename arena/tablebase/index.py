"""The index of a table: which number each position of the moving phase gets.

A table of ``a`` against ``b`` men holds two *orientations* (one when ``a == b``): the side to
move has ``m`` men and the other side ``o``.  A position is the pair of masks
``(mover, opponent)``; colours do not matter (white to move with 4 men against black's 3 is
the same game as black to move with 4 against white's 3).

The mover's men are brought to a canonical form by the board's symmetries: the smallest
image, as an integer, of the mover's mask under every automorphism.  The canonical masks of
``m`` men, sorted, are the table's *classes* (stored in the file).  The opponent's men are
mapped by the symmetry that made the mover's mask canonical (the smallest opponent image
when several do), then numbered among the ``points - m`` points the mover leaves free by
their combinatorial (colex) rank.  So::

    index = class * C(points - m, o) + colex_rank(opponent's men among the free points)

Every number is a real position; a few are images of others under a symmetry that fixes
the mover's men (they are computed too, and never looked up).

Pure Python, no numpy: the prober uses this module; the builder computes the same numbers
with numpy (``build.py``) and the tests check that both agree.
"""

from __future__ import annotations

from bisect import bisect_left
from math import comb
from typing import Sequence

from arena.tablebase.errors import TablebaseCorrupt
from arena.tablebase.geometry import Geometry

#: ``BINOMIAL[n][k]``, for the colex ranks
BINOMIAL: tuple[tuple[int, ...], ...] = tuple(tuple(comb(n, k) for k in range(34))
                                              for n in range(34))


class Layout:
    """The index of one orientation: ``mover`` men to move against ``opponent`` men."""

    def __init__(self, geo: Geometry, mover: int, opponent: int, classes: Sequence[int]) -> None:
        self.geo = geo
        self.mover = mover
        self.opponent = opponent
        self.classes = classes
        self.per_class = comb(geo.size - mover, opponent)
        self.size = len(classes) * self.per_class
        self._full = (1 << geo.size) - 1
        #: mover mask -> (canonical mask, the symmetries that give it); the mover's men recur
        #: (every quiet move of the opponent keeps them), so this saves most of the work
        self._seen: dict[int, tuple[int, tuple[int, ...]]] = {}

    def canonical(self, mover: int, opponent: int) -> tuple[int, int]:
        """The canonical (mover, opponent) masks of a position."""
        found = self._seen.get(mover)
        if found is None:
            found = self._mover_symmetries(mover)
            if len(self._seen) >= 4096:
                self._seen.clear()
            self._seen[mover] = found
        best_m, syms = found
        apply = self.geo.apply
        best_o = apply(syms[0], opponent)
        for g in syms[1:]:
            io = apply(g, opponent)
            if io < best_o:
                best_o = io
        return best_m, best_o

    def _mover_symmetries(self, mover: int) -> tuple[int, tuple[int, ...]]:
        """The smallest image of ``mover`` and every symmetry that gives it."""
        images = [self.geo.apply(g, mover) for g in range(len(self.geo.perms))]
        best = min(images)
        return best, tuple(g for g, im in enumerate(images) if im == best)

    def index(self, mover: int, opponent: int) -> int:
        """The number of the position (``mover``'s men to move against ``opponent``'s)."""
        cm, co = self.canonical(mover, opponent)
        c = bisect_left(self.classes, cm)
        if c == len(self.classes) or self.classes[c] != cm:
            raise TablebaseCorrupt(f"{cm:#x} is not among the table's {self.mover}-men classes")
        free = self._full & ~cm
        rank = 0
        i = 0
        while co:
            low = co & -co
            i += 1
            rank += BINOMIAL[(free & (low - 1)).bit_count()][i]
            co ^= low
        return c * self.per_class + rank
