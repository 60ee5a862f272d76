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

    def canonical(self, mover: int, opponent: int) -> tuple[int, int]:
        """The canonical (mover, opponent) masks of a position."""
        geo = self.geo
        best_m = -1
        best_o = 0
        for g in range(len(geo.perms)):
            tables = geo.byte_images[g]
            im = 0
            for j, table in enumerate(tables):
                im |= table[mover >> (8 * j) & 255]
            if best_m < 0 or im < best_m:
                best_m = im
                best_o = geo.apply(g, opponent)
            elif im == best_m:
                io = geo.apply(g, opponent)
                if io < best_o:
                    best_o = io
        return best_m, best_o

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
