"""A board's symmetries for the tables: its automorphisms, found by search, and the lookup
tables that apply one to a bitmask a byte at a time.

An automorphism of a topology is a permutation of its points that maps the set of mills onto
itself and the set of adjacencies (steps a man may take) onto itself, so that it maps every
position to one with the same moves, mills and captures: the same game value.  They are not
assumed but searched for (:func:`automorphisms`, a backtracking search over the points in
breadth-first order with the partial map checked at every step), so each topology gets exactly
its own group: 16 for the standard board (the 8 symmetries of the square times the swap of the
inner and outer rings), and the same 16 for the diagonal board (the diagonals a1-b2-c3 and
their images map onto each other; the ring swap keeps each diagonal, reversed).

Pure: no I/O, no numpy (the prober uses this module).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from arena.board import Topology, get_topology

#: a permutation of a topology's points: ``perm[i]`` is the image of point ``i``
Perm = tuple[int, ...]


def automorphisms(topology: Topology) -> list[Perm]:
    """Every permutation of the points that maps mills to mills and adjacencies to
    adjacencies, the identity first, then in lexicographic order."""
    n = topology.size
    edges = {frozenset(e) for e in topology.edges}
    mills = {m for m in topology.mills}
    adj = [set(b for b in range(n) if topology.adjacent[a] >> b & 1) for a in range(n)]
    mills_at = [frozenset(m for m in mills if m >> p & 1) for p in range(n)]
    signature = [(len(adj[p]), len(mills_at[p])) for p in range(n)]
    order: list[int] = []
    for start in range(n):  # breadth-first, component by component
        if start in order:
            continue
        queue = [start]
        order.append(start)
        while queue:
            p = queue.pop(0)
            for q in sorted(adj[p]):
                if q not in order:
                    order.append(q)
                    queue.append(q)
    found: list[Perm] = []
    image = [-1] * n
    used = [False] * n

    def consistent(p: int) -> bool:
        q = image[p]
        for r in adj[p]:
            if image[r] >= 0 and frozenset((q, image[r])) not in edges:
                return False
        for m in mills_at[p]:
            pts = [i for i in range(n) if m >> i & 1]
            if all(image[i] >= 0 for i in pts):
                if sum(1 << image[i] for i in pts) not in mills:
                    return False
        return True

    def walk(k: int) -> None:
        if k == n:
            found.append(tuple(image))
            return
        p = order[k]
        for q in range(n):
            if used[q] or signature[q] != signature[p]:
                continue
            image[p], used[q] = q, True
            if consistent(p):
                walk(k + 1)
            image[p], used[q] = -1, False

    walk(0)
    identity = tuple(range(n))
    found.sort()
    found.remove(identity)
    return [identity, *found]


@dataclass(frozen=True)
class Geometry:
    """A topology with its automorphisms and the per-byte tables that apply them to masks."""

    topology: Topology
    perms: tuple[Perm, ...]
    #: ``byte_images[g][j][v]``: the image under ``perms[g]`` of the mask ``v << 8 * j``
    byte_images: tuple[tuple[tuple[int, ...], ...], ...]

    @property
    def size(self) -> int:
        return self.topology.size

    @property
    def nbytes(self) -> int:
        return (self.topology.size + 7) // 8

    def apply(self, g: int, mask: int) -> int:
        """The image of ``mask`` under symmetry ``g``."""
        out = 0
        for j, table in enumerate(self.byte_images[g]):
            out |= table[mask >> (8 * j) & 255]
        return out


def _byte_images(perm: Perm, nbytes: int) -> tuple[tuple[int, ...], ...]:
    tables = []
    for j in range(nbytes):
        row = []
        for v in range(256):
            out = 0
            for b in range(8):
                if v >> b & 1 and 8 * j + b < len(perm):
                    out |= 1 << perm[8 * j + b]
            row.append(out)
        tables.append(tuple(row))
    return tuple(tables)


@functools.cache
def geometry(board: str) -> Geometry:
    """The :class:`Geometry` of the board named ``board`` (computed once per process)."""
    topology = get_topology(board)
    perms = tuple(automorphisms(topology))
    nbytes = (topology.size + 7) // 8
    return Geometry(topology, perms, tuple(_byte_images(p, nbytes) for p in perms))
