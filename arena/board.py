"""Board topologies as data: points, adjacency and mills, precomputed as bitmasks.

Points are named on the 7x7 grid of the classic board diagram: files ``a``-``g`` from left
to right and ranks ``1``-``7`` from bottom to top (``a1`` is the bottom-left corner, ``d7``
the middle of the top edge).  A topology is a list of *lines* (three points in a row, each
of which is a mill when one colour holds all three) plus optional extra *edges* (adjacencies
that are not part of a mill, e.g. the spokes of six men's morris).  Men move between points
that are consecutive on a line, or joined by an extra edge.

Pure: no I/O.  Bit ``i`` of a mask stands for ``topology.points[i]``; points are sorted by
name so the order is the same everywhere (serialisation, protocol, bots in other languages).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

FILES = "abcdefg"


def _square(lo: str, mid: str, hi: str, rlo: int, rmid: int, rhi: int) -> list[tuple[str, str, str]]:
    """The four sides of a square on files lo..hi and ranks rlo..rhi, as lines of three."""
    return [
        (f"{lo}{rlo}", f"{lo}{rmid}", f"{lo}{rhi}"),  # left side
        (f"{lo}{rhi}", f"{mid}{rhi}", f"{hi}{rhi}"),  # top side
        (f"{hi}{rlo}", f"{hi}{rmid}", f"{hi}{rhi}"),  # right side
        (f"{lo}{rlo}", f"{mid}{rlo}", f"{hi}{rlo}"),  # bottom side
    ]


_OUTER = _square("a", "d", "g", 1, 4, 7)
_MIDDLE = _square("b", "d", "f", 2, 4, 6)
_INNER = _square("c", "d", "e", 3, 4, 5)
_SPOKES = [("a4", "b4", "c4"), ("e4", "f4", "g4"), ("d5", "d6", "d7"), ("d1", "d2", "d3")]
_DIAGONALS = [("a1", "b2", "c3"), ("a7", "b6", "c5"), ("e5", "f6", "g7"), ("e3", "f2", "g1")]


@dataclass(frozen=True)
class Topology:
    """A board: named points, the lines that make mills, and extra non-mill edges."""

    name: str
    lines: tuple[tuple[str, str, str], ...]
    extra_edges: tuple[tuple[str, str], ...] = ()
    description: str = ""
    points: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        names = {p for line in self.lines for p in line} | {p for e in self.extra_edges for p in e}
        for p in names:
            if len(p) != 2 or p[0] not in FILES or p[1] not in "1234567":
                raise ValueError(f"bad point name {p!r} in topology {self.name}")
        object.__setattr__(self, "points", tuple(sorted(names)))

    # -- precomputed tables -------------------------------------------------------------
    @cached_property
    def index(self) -> dict[str, int]:
        """Point name -> bit index."""
        return {p: i for i, p in enumerate(self.points)}

    @property
    def size(self) -> int:
        return len(self.points)

    @cached_property
    def full_mask(self) -> int:
        return (1 << self.size) - 1

    @cached_property
    def edges(self) -> tuple[tuple[int, int], ...]:
        """Every adjacency once, as sorted index pairs."""
        idx = self.index
        pairs: set[tuple[int, int]] = set()
        for a, b, c in self.lines:
            for x, y in ((a, b), (b, c)):
                pairs.add((min(idx[x], idx[y]), max(idx[x], idx[y])))
        for x, y in self.extra_edges:
            pairs.add((min(idx[x], idx[y]), max(idx[x], idx[y])))
        return tuple(sorted(pairs))

    @cached_property
    def adjacent(self) -> tuple[int, ...]:
        """``adjacent[i]`` is the mask of points one step from point ``i``."""
        adj = [0] * self.size
        for i, j in self.edges:
            adj[i] |= 1 << j
            adj[j] |= 1 << i
        return tuple(adj)

    @cached_property
    def mills(self) -> tuple[int, ...]:
        """Every mill as a mask of its three points; a mill's number is its position here."""
        idx = self.index
        return tuple((1 << idx[a]) | (1 << idx[b]) | (1 << idx[c]) for a, b, c in self.lines)

    @cached_property
    def mills_at(self) -> tuple[tuple[tuple[int, int], ...], ...]:
        """``mills_at[i]`` lists ``(mill number, mill mask)`` for the mills through point ``i``."""
        out: list[list[tuple[int, int]]] = [[] for _ in range(self.size)]
        for n, m in enumerate(self.mills):
            for i in range(self.size):
                if m >> i & 1:
                    out[i].append((n, m))
        return tuple(tuple(x) for x in out)

    @cached_property
    def mill_rest(self) -> tuple[tuple[tuple[int, int], ...], ...]:
        """``mill_rest[i]`` lists ``(1 << mill number, mask of the mill's other two points)``
        for the mills through point ``i``: a man arriving on ``i`` completes the mill when the
        mover already holds the other two points (the fast path of move generation)."""
        return tuple(tuple((1 << n, m & ~(1 << i)) for n, m in at) for i, at in enumerate(self.mills_at))

    def mask_points(self, mask: int) -> list[str]:
        """The names of the points set in ``mask``, in index order."""
        return [p for i, p in enumerate(self.points) if mask >> i & 1]

    def men_in_mills(self, men: int) -> int:
        """The subset of ``men`` that stands in at least one complete mill of ``men``."""
        out = 0
        for m in self.mills:
            if men & m == m:
                out |= m
        return out


STANDARD = Topology(
    "standard",
    tuple(_OUTER + _MIDDLE + _INNER + _SPOKES),
    description="24 points on three concentric squares joined at their midpoints (16 mills)",
)
DIAGONALS = Topology(
    "diagonals",
    tuple(_OUTER + _MIDDLE + _INNER + _SPOKES + _DIAGONALS),
    description="the standard board plus four corner diagonals, which are lines and mills "
    "(Masters Games seed; twelve men's morris, morabaraba)",
)
SIX = Topology(
    "six",
    tuple(_OUTER + _MIDDLE),
    extra_edges=(("a4", "b4"), ("f4", "g4"), ("d6", "d7"), ("d1", "d2")),
    description="16 points on two concentric squares joined at their midpoints (8 mills)",
)
THREE = Topology(
    "three",
    (
        ("a1", "d1", "g1"), ("a4", "d4", "g4"), ("a7", "d7", "g7"),
        ("a1", "a4", "a7"), ("d1", "d4", "d7"), ("g1", "g4", "g7"),
        ("a1", "d4", "g7"), ("a7", "d4", "g1"),
    ),
    description="9 points in a 3x3 grid with both diagonals (8 lines)",
)

TOPOLOGIES: dict[str, Topology] = {t.name: t for t in (STANDARD, DIAGONALS, SIX, THREE)}


def get_topology(name: str) -> Topology:
    """Look a topology up by name; raises ``KeyError`` with the known names."""
    try:
        return TOPOLOGIES[name]
    except KeyError:
        raise KeyError(f"unknown board {name!r} (known: {', '.join(TOPOLOGIES)})") from None


def render(topology: Topology, occupant: dict[str, str]) -> str:
    """Draw ``topology`` as ASCII art; ``occupant`` maps point names to one-character marks.

    Points are 4 columns and 2 rows apart; lines are drawn with ``-``, ``|``, ``/`` and ``\\``.
    """
    used_files = sorted({p[0] for p in topology.points})
    used_ranks = sorted({int(p[1]) for p in topology.points})
    f0, r_hi = FILES.index(used_files[0]), used_ranks[-1]
    width = (FILES.index(used_files[-1]) - f0) * 4 + 1
    height = (r_hi - used_ranks[0]) * 2 + 1
    grid = [[" "] * width for _ in range(height)]

    def pos(p: str) -> tuple[int, int]:
        return (r_hi - int(p[1])) * 2, (FILES.index(p[0]) - f0) * 4

    for i, j in topology.edges:
        (r1, c1), (r2, c2) = pos(topology.points[i]), pos(topology.points[j])
        if r1 == r2:
            for c in range(min(c1, c2) + 1, max(c1, c2)):
                grid[r1][c] = "-"
        elif c1 == c2:
            for r in range(min(r1, r2) + 1, max(r1, r2)):
                grid[r][c1] = "|"
        else:
            if r1 > r2:
                (r1, c1), (r2, c2) = (r2, c2), (r1, c1)
            ch = "\\" if c2 > c1 else "/"
            for r in range(r1 + 1, r2):
                c = c1 + (c2 - c1) * (r - r1) // (r2 - r1)
                grid[r][c] = ch
    for p in topology.points:
        r, c = pos(p)
        grid[r][c] = occupant.get(p, ".")
    lines = []
    for k, row in enumerate(grid):
        label = str(r_hi - k // 2) if k % 2 == 0 else " "
        lines.append(f"{label} " + "".join(row).rstrip())
    files = [FILES[f0 + k // 4] if k % 4 == 0 else " " for k in range(width)]
    lines.append("  " + "".join(files).rstrip())
    return "\n".join(lines)
