"""Computing a table by retrograde analysis: rules in, arrays out (numpy, no I/O).

:func:`solve` computes the table of ``a`` against ``b`` men (both orientations: either side
to move) from the rules and the tables it captures into, which are smaller and built first.

1. **Moves.**  Every position of the index (:mod:`arena.tablebase.index`) is decoded and its
   moves generated with numpy, a chunk of positions at a time: slides along the board's
   adjacencies, or flights to every empty point for a side with ``fly_at`` men or fewer.  A
   move that closes no mill (or declines its capture, with ``optional_capture``) stays in the
   table: it becomes an *edge* to the successor's index, the other orientation seen from the
   other side.  A move that captures (every set of men the capture rules allow, one capture
   at a time as the engine does) leaves the table: its value is read from the smaller table
   at once (or it wins outright when the opponent falls below ``lose_below``).  A position
   without a move is blocked: lost, drawn, or (``blocked=remove-and-move``) its removals are
   read like captures, with the same side to move after them.
2. **Retrograde solving.**  The edges are reversed (sorted by successor) and the values found
   level by level, as in chess endgame generators: lost positions at distance 0 (blocked);
   won at 1 (a winning capture); then, for k = 1, 2, ...: every position with an edge to a
   position lost at distance k-1 is won at k (the first time it is reached: the winner's
   shortest), and every edge into a newly won position takes one from its owner's count of
   unresolved moves; a position whose count reaches zero, and which has no capture that draws
   or wins, is lost at k+1 (the loser's longest, since its last move was resolved last).
   Counts are kept per edge, duplicates included, so symmetric positions need no care.  What
   is never resolved is a draw.

The distance is the number of plies to the next capture (the capture included) or to the end
of the game, with the winner shortening and the loser lengthening it: the analogue of
Syzygy's DTZ, what the no-capture draw rule counts.  Values assume that a game going on
forever is a draw (repetitions are draws; a winner following the distances never repeats).

A capture into three against three, when the variant draws such endings after
``three_three_draw`` quiet turns, counts as a win only if the 3-3 table's distance fits in
that count (the counter starts at zero after a capture).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from math import comb
from typing import Callable, Mapping, Optional

import numpy as np

from arena.tablebase.geometry import Geometry, geometry
from arena.tablebase.params import TableRules

I64 = np.int64
#: moves generated per chunk (bounds the temporaries: about 40 bytes each)
CHUNK_MOVES = 1_500_000
#: a progress callback: (stage, done, total)
Progress = Callable[[str, int, int], None]

#: values while solving
UNKNOWN, WIN, LOSS, DRAW = 0, 1, -1, 2


# --------------------------------------------------------------------------------------
# lookup tables
# --------------------------------------------------------------------------------------


class Tables:
    """numpy lookup tables of one board: symmetries by bytes, ranks, bit scatter/gather."""

    def __init__(self, geo: Geometry) -> None:
        self.geo = geo
        topo = geo.topology
        n = self.n = topo.size
        self.nbytes = geo.nbytes
        self.full = (1 << n) - 1
        self.groups = len(geo.perms)
        self.perm = np.array(geo.byte_images, dtype=I64)  # (G, nbytes, 256)
        v = np.arange(256)
        self.pop8 = np.array([bin(x).count("1") for x in range(256)], dtype=I64)
        pext = np.zeros((256, 256), dtype=I64)
        pdep = np.zeros((256, 256), dtype=I64)
        for f in range(256):
            bits = [b for b in range(8) if f >> b & 1]
            for k, b in enumerate(bits):
                pext[f] |= ((v >> b) & 1) << k
                pdep[f] |= ((v >> k) & 1) << b
        self.pext8, self.pdep8 = pext, pdep
        colex = np.zeros((self.nbytes, n + 1, 256), dtype=I64)
        for j in range(self.nbytes):
            for c in range(n + 1):
                for x in range(256):
                    r, t = 0, 0
                    for b in range(8):
                        if x >> b & 1:
                            t += 1
                            r += comb(8 * j + b, c + t)
                    colex[j, c, x] = r
        self.colex = colex
        deg = max(bin(a).count("1") for a in topo.adjacent)
        nb = np.full((n, deg), -1, dtype=I64)
        for p, a in enumerate(topo.adjacent):
            pts = [q for q in range(n) if a >> q & 1]
            nb[p, :len(pts)] = pts
        self.nb = nb
        self.adj = np.array(topo.adjacent, dtype=I64)
        self.mills = np.array(topo.mills, dtype=I64)
        width = max(len(at) for at in topo.mill_rest)
        rest = np.zeros((n, width), dtype=I64)
        rest_ok = np.zeros((n, width), dtype=bool)
        for p, at in enumerate(topo.mill_rest):
            for k, (_, r) in enumerate(at):
                rest[p, k], rest_ok[p, k] = r, True
        self.rest, self.rest_ok = rest, rest_ok

    # -- bit operations on arrays of masks ------------------------------------------------
    def popcount(self, x: np.ndarray) -> np.ndarray:
        out = np.zeros(x.shape, dtype=I64)
        for j in range(self.nbytes):
            out += self.pop8[(x >> (8 * j)) & 255]
        return out

    def permute(self, g: np.ndarray | int, x: np.ndarray) -> np.ndarray:
        """The image of every mask of ``x`` under symmetry ``g`` (one or one per mask)."""
        out = np.zeros(x.shape, dtype=I64)
        for j in range(self.nbytes):
            out |= self.perm[g, j, (x >> (8 * j)) & 255]
        return out

    def colex_rank(self, x: np.ndarray) -> np.ndarray:
        """The rank of every mask among the masks of as many bits, in numeric order."""
        out = np.zeros(x.shape, dtype=I64)
        seen = np.zeros(x.shape, dtype=I64)
        for j in range(self.nbytes):
            b = (x >> (8 * j)) & 255
            out += self.colex[j, seen, b]
            seen += self.pop8[b]
        return out

    def pext(self, x: np.ndarray, f: np.ndarray) -> np.ndarray:
        """The bits of ``x`` at the points of ``f``, packed to the low end."""
        out = np.zeros(x.shape, dtype=I64)
        shift = np.zeros(x.shape, dtype=I64)
        for j in range(self.nbytes):
            fb = (f >> (8 * j)) & 255
            out |= self.pext8[fb, (x >> (8 * j)) & 255] << shift
            shift += self.pop8[fb]
        return out

    def pdep(self, x: np.ndarray, f: np.ndarray) -> np.ndarray:
        """The low bits of ``x`` spread over the points of ``f``."""
        out = np.zeros(x.shape, dtype=I64)
        shift = np.zeros(x.shape, dtype=I64)
        for j in range(self.nbytes):
            fb = (f >> (8 * j)) & 255
            width = self.pop8[fb]
            out |= self.pdep8[fb, (x >> shift) & ((1 << width) - 1)] << (8 * j)
            shift += width
        return out

    def bit_positions(self, x: np.ndarray, k: int) -> np.ndarray:
        """``(len(x), k)``: the points of every mask of exactly ``k`` bits, lowest first."""
        out = np.empty((x.shape[0], k), dtype=I64)
        rest = x.copy()
        for t in range(k):
            low = rest & -rest
            out[:, t] = np.frexp(low.astype(np.float64))[1] - 1
            rest ^= low
        return out

    def in_mills(self, x: np.ndarray) -> np.ndarray:
        """The men of each mask that stand in a complete mill of that mask."""
        out = np.zeros(x.shape, dtype=I64)
        for m in self.mills:
            out |= np.where((x & m) == m, m, 0)
        return out

    def removable(self, x: np.ndarray, rule: str) -> np.ndarray:
        """The men of each mask a capture may take under ``mill_capture=rule``."""
        if rule == "always":
            return x
        free = x & ~self.in_mills(x)
        if rule == "never":
            return free
        return np.where(free != 0, free, x)


@functools.cache
def _masks_with(bits: int, width: int) -> np.ndarray:
    """Every mask of ``width`` bits with ``bits`` set, in increasing order (colex order)."""
    if bits == 0:
        return np.zeros(1, dtype=I64)
    if bits > width:
        return np.zeros(0, dtype=I64)
    # those without the top bit, then those with it: both parts sorted, the second larger
    return np.concatenate([_masks_with(bits, width - 1),
                           _masks_with(bits - 1, width - 1) | (I64(1) << (width - 1))])


@dataclass
class MaskClasses:
    """The mover masks of ``k`` men: all of them in colex order, and for each its class
    (canonical mask's number), the symmetry that makes it canonical and the bitset of all
    that do (several when the canonical mask has a stabiliser)."""

    classes: np.ndarray  # sorted canonical masks
    class_of: np.ndarray
    first: np.ndarray
    ties: np.ndarray


@functools.cache
def tables_for(board: str) -> Tables:
    return Tables(geometry(board))


@functools.cache
def mask_classes(board: str, k: int) -> MaskClasses:
    t = tables_for(board)
    masks = _masks_with(k, t.n)
    images = np.stack([t.permute(g, masks) for g in range(t.groups)])
    canon = images.min(axis=0)
    first = images.argmin(axis=0)
    ties = np.zeros(masks.shape, dtype=I64)
    for g in range(t.groups):
        ties |= (images[g] == canon).astype(I64) << g
    classes = np.unique(canon)
    return MaskClasses(classes, np.searchsorted(classes, canon), first, ties)


class NpLayout:
    """The index of one orientation (``mover`` men to move against ``opponent``), in numpy:
    the same numbers as :class:`arena.tablebase.index.Layout`."""

    def __init__(self, board: str, mover: int, opponent: int, offset: int = 0) -> None:
        t = self.t = tables_for(board)
        self.mover, self.opponent, self.offset = mover, opponent, offset
        self.mc = mask_classes(board, mover)
        self.classes = self.mc.classes
        self.per_class = comb(t.n - mover, opponent)
        self.size = len(self.classes) * self.per_class
        self.combos = _masks_with(opponent, t.n - mover)

    def index(self, mover: np.ndarray, opponent: np.ndarray) -> np.ndarray:
        """The numbers (plus ``offset``) of the positions ``(mover[i], opponent[i])``."""
        t, mc = self.t, self.mc
        r = t.colex_rank(mover)
        cls = mc.class_of[r]
        ties = mc.ties[r]
        opp = t.permute(mc.first[r], opponent)
        several = np.nonzero(ties & (ties - 1))[0]
        if len(several):
            o_sub, t_sub = opponent[several], ties[several]
            best = opp[several]
            for g in range(t.groups):
                take = ((t_sub >> g) & 1).astype(bool)
                if take.any():
                    best[take] = np.minimum(best[take], t.permute(g, o_sub[take]))
            opp[several] = best
        free = t.full & ~self.classes[cls]
        return self.offset + cls * self.per_class + t.colex_rank(t.pext(opp, free))

    def decode(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """The (mover, opponent) masks of the positions numbered ``start..stop-1``."""
        idx = np.arange(start, stop, dtype=I64)
        mover = self.classes[idx // self.per_class]
        opp = self.t.pdep(self.combos[idx % self.per_class], self.t.full & ~mover)
        return mover, opp

    def weights(self) -> np.ndarray:
        """For each number: how many positions of the full board it stands for (the size of
        its orbit under the symmetries), or 0 for a duplicate that is never looked up."""
        t = self.t
        out = np.full(self.size, t.groups, dtype=np.uint8)
        stab = self.mc.ties[t.colex_rank(self.classes)]  # symmetries fixing each class
        for c in np.nonzero(stab & (stab - 1))[0].tolist():
            lo, hi = c * self.per_class, (c + 1) * self.per_class
            _, opp = self.decode(lo, hi)
            fixed = np.zeros(hi - lo, dtype=I64)
            smallest = opp.copy()
            for g in range(t.groups):
                if stab[c] >> g & 1:
                    im = t.permute(g, opp)
                    fixed += im == opp
                    smallest = np.minimum(smallest, im)
            out[lo:hi] = np.where(smallest == opp, t.groups // fixed, 0)
        return out


# --------------------------------------------------------------------------------------
# codes: a value and a distance in one unsigned integer
# --------------------------------------------------------------------------------------


def encode(val: np.ndarray, dist: np.ndarray, dtype: type) -> np.ndarray:
    """0 = draw, ``d`` = won in ``d`` plies, ``flag + d`` = lost in ``d`` (``flag`` the
    top bit of ``dtype``)."""
    flag = 1 << (np.dtype(dtype).itemsize * 8 - 1)
    out = np.where(val == WIN, dist, 0) + np.where(val == LOSS, flag + dist.astype(I64), 0)
    return out.astype(dtype)


def decode(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(value: 1 won, -1 lost, 0 drawn; distance) of every code."""
    flag = 1 << (codes.dtype.itemsize * 8 - 1)
    c = codes.astype(I64)
    lost = c >= flag
    val = np.where(c == 0, 0, np.where(lost, -1, 1))
    return val, np.where(lost, c - flag, c)


@dataclass
class Known:
    """A solved orientation handed to :func:`solve` for the captures into it."""

    classes: np.ndarray
    codes: np.ndarray


@dataclass
class Orientation:
    """One solved orientation of a table."""

    mover: int
    opponent: int
    classes: np.ndarray  # uint32, sorted canonical mover masks
    codes: np.ndarray  # uint8 or uint16, one per number
    stats: dict[str, object] = field(default_factory=dict)


@dataclass
class Solved:
    """A table: its orientations, its largest distance and how long each step took."""

    a: int
    b: int
    orientations: list[Orientation]
    max_distance: int
    seconds: dict[str, float]
    edges: int
    levels: int


# --------------------------------------------------------------------------------------
# move generation
# --------------------------------------------------------------------------------------


class _Lookup:
    """Values of the smaller tables, by orientation, for captures into them."""

    def __init__(self, rules: TableRules, known: Mapping[tuple[int, int], Known]) -> None:
        self.rules = rules
        self.known = known
        self.layouts: dict[tuple[int, int], NpLayout] = {}
        self.codes: dict[tuple[int, int], np.ndarray] = {}

    def score(self, mover: np.ndarray, opp: np.ndarray, m: int, o: int,
              same_side: bool) -> np.ndarray:
        """For positions ``mover`` (m men, to move) against ``opp`` (o men) reached by a
        capture: the capturing side's score, 3 won, 2 drawn, 1 lost.  ``same_side``: the
        capturing side is ``mover`` (a removal turn), else ``opp``."""
        r = self.rules
        if m < r.lose_below or o < r.lose_below:
            mover_wins = m >= r.lose_below
            won = mover_wins == same_side
            return np.full(mover.shape, 3 if won else 1, dtype=np.int8)
        key = (m, o)
        if key not in self.layouts:
            if key not in self.known:
                raise KeyError(f"the {m}-{o} table is needed first")
            lay = NpLayout(r.board, m, o)
            k = self.known[key]
            if not np.array_equal(lay.classes, k.classes.astype(I64)):
                raise ValueError(f"the {m}-{o} table's classes are not this index's")
            self.layouts[key] = lay
            self.codes[key] = k.codes
        v, d = decode(self.codes[key][self.layouts[key].index(mover, opp)])
        if r.three_three_draw and m == 3 and o == 3:
            v = np.where(d > r.three_three_draw, 0, v)
        if not same_side:
            v = -v
        return (v + 2).astype(np.int8)


def _captures(t: Tables, opp: np.ndarray, k: np.ndarray, rule: str,
              optional: bool) -> tuple[np.ndarray, np.ndarray]:
    """Every set of men a move entitled to ``k[i]`` captures may take from ``opp[i]``, as
    (row, mask) pairs: one capture at a time, protection re-evaluated after each, every
    capture taken while one is possible unless ``optional`` (then any number, none too)."""
    rows_out: list[np.ndarray] = []
    sets_out: list[np.ndarray] = []
    rows = np.arange(len(opp), dtype=I64)
    left, taken, need = opp.copy(), np.zeros(len(opp), dtype=I64), k.copy()
    while len(rows):
        can = np.where(need > 0, t.removable(left, rule), 0)
        stop = (can == 0) | optional
        rows_out.append(rows[stop])
        sets_out.append(taken[stop])
        nxt_rows, nxt_left, nxt_taken, nxt_need = [], [], [], []
        while True:
            has = np.nonzero(can)[0]
            if not len(has):
                break
            low = can[has] & -can[has]
            can[has] ^= low
            nxt_rows.append(rows[has])
            nxt_left.append(left[has] ^ low)
            nxt_taken.append(taken[has] | low)
            nxt_need.append(need[has] - 1)
        if not nxt_rows:
            break
        rows, left = np.concatenate(nxt_rows), np.concatenate(nxt_left)
        taken, need = np.concatenate(nxt_taken), np.concatenate(nxt_need)
    return np.concatenate(rows_out), np.concatenate(sets_out)


def _raise_to(score: np.ndarray, rows: np.ndarray, values: np.ndarray) -> None:
    """``score[rows[i]] = max(score[rows[i]], values[i])`` for every ``i`` (values 1..3:
    assigned in increasing order, so the largest stays)."""
    for v in (1, 2, 3):
        sel = rows[values == v]
        if len(sel):
            score[sel] = np.maximum(score[sel], v)


def _generate(rules: TableRules, lay: NpLayout, nxt: NpLayout, lookup: Optional[_Lookup],
              start: int, stop: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The moves of positions ``start..stop-1`` of ``lay``: (edge owners, edge successors,
    best capture score per position (0: no capture), blocked flag per position).  Without
    ``lookup`` only the edges are found (the scores stay 0)."""
    t = lay.t
    m, o = lay.mover, lay.opponent
    n = stop - start
    mover, opp = lay.decode(start, stop)
    own = t.bit_positions(mover, m)
    empty = t.full & ~(mover | opp)
    if rules.flies(m):
        e = t.n - m - o
        dst_pts = t.bit_positions(empty, e)
        owner = np.repeat(np.arange(n, dtype=I64), m * e)
        src = np.repeat(own, e, axis=1).ravel()
        dst = np.tile(dst_pts, (1, m)).ravel()
    else:
        nb = t.nb[own]  # (n, m, deg)
        ok = (nb >= 0) & (((empty[:, None, None] >> np.maximum(nb, 0)) & 1) == 1)
        owner, a, b = np.nonzero(ok)
        src = own[owner, a]
        dst = nb[owner, a, b]
    blocked = np.bincount(owner, minlength=n) == 0
    new = (mover[owner] ^ (I64(1) << src)) | (I64(1) << dst)
    formed = np.zeros(len(owner), dtype=I64)
    for k in range(t.rest.shape[1]):
        rest = t.rest[dst, k]
        formed += t.rest_ok[dst, k] & ((new & rest) == rest)
    plain = formed == 0
    edge_owner = [owner[plain]]
    edge_succ = [nxt.index(opp[owner[plain]], new[plain])]
    score = np.zeros(n, dtype=np.int8)
    forming = np.nonzero(~plain)[0]
    declinable = rules.optional_capture or rules.mill_capture == "never"
    if len(forming) and (lookup is not None or declinable):
        rows, caps = _captures(t, opp[owner[forming]], np.minimum(formed[forming],
                                                                  rules.multi_mill_captures),
                               rules.mill_capture, rules.optional_capture)
        f_owner = owner[forming][rows]
        f_new = new[forming][rows]
        none = caps == 0
        edge_owner.append(f_owner[none])
        edge_succ.append(nxt.index(opp[f_owner[none]], f_new[none]))
        taken = t.popcount(caps) if lookup is not None else np.zeros(0, dtype=I64)
        for c in range(1, int(taken.max(initial=0)) + 1):
            sel = taken == c
            if sel.any() and lookup is not None:
                s = lookup.score(opp[f_owner[sel]] ^ caps[sel], f_new[sel], o - c, m, False)
                _raise_to(score, f_owner[sel], s)
    if rules.blocked == "remove-and-move" and blocked.any() and lookup is not None:
        rows_b = np.nonzero(blocked)[0]
        near = np.bitwise_or.reduce(t.adj[own[rows_b]], axis=1) & opp[rows_b]
        while True:
            has = np.nonzero(near)[0]
            if not len(has):
                break
            low = near[has] & -near[has]
            near[has] ^= low
            r = rows_b[has]
            s = lookup.score(mover[r], opp[r] ^ low, m, o - 1, True)
            _raise_to(score, r, s)
    owners = np.concatenate(edge_owner) + start + lay.offset
    return owners, np.concatenate(edge_succ), score, blocked


# --------------------------------------------------------------------------------------
# solving
# --------------------------------------------------------------------------------------


def _gather(rev_off: np.ndarray, rev_owner: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """The owners of every edge into ``nodes`` (with multiplicity)."""
    if not len(nodes):
        return np.zeros(0, dtype=I64)
    starts = rev_off[nodes]
    lens = rev_off[nodes + 1] - starts
    total = int(lens.sum())
    if not total:
        return np.zeros(0, dtype=I64)
    base = np.repeat(starts - (np.cumsum(lens) - lens), lens)
    return rev_owner[base + np.arange(total, dtype=I64)].astype(I64)


def _place(rev_owner: np.ndarray, fill: np.ndarray, first: int, stop: int,
           counter: np.ndarray, sc: np.ndarray) -> None:
    """Put the owners of a chunk's edges (``sc``: successors, sorted by owner, ``counter``
    the edges per owner) at their places in ``rev_owner`` (sorted by successor; ``fill``:
    the next free place per successor).  Work of the chunk's size, never the table's."""
    if not len(sc):
        return
    ow = np.repeat(np.arange(first, stop, dtype=np.int32), counter[first:stop])
    order = np.argsort(sc, kind="stable")
    sc_sorted = sc[order]
    runs = np.flatnonzero(np.diff(sc_sorted)) + 1  # where a new successor starts
    starts = np.concatenate([[0], runs])
    lengths = np.diff(np.concatenate([starts, [len(sc_sorted)]]))
    rank = np.arange(len(sc_sorted), dtype=I64) - np.repeat(starts, lengths)
    targets = sc_sorted[starts]
    rev_owner[np.repeat(fill[targets], lengths) + rank] = ow[order]
    fill[targets] += lengths


def _offsets(into: np.ndarray) -> np.ndarray:
    """Where each successor's edges start in the reversed edges (and the end): int32 when
    the edges are fewer than 2**31, to save memory."""
    edges = int(into.sum(dtype=I64))
    rev_off = np.zeros(len(into) + 1, dtype=np.int32 if edges < 1 << 31 else I64)
    np.cumsum(into, out=rev_off[1:])
    return rev_off


def solve(rules: TableRules, a: int, b: int, known: Mapping[tuple[int, int], Known],
          progress: Optional[Progress] = None, max_edge_bytes: int = 1 << 30) -> Solved:
    """The table of ``a`` against ``b`` men (``a >= b >= rules.lose_below``) for ``rules``.

    ``known`` holds every orientation a capture from this table leads to (``(b - c, a)``
    and ``(a - c, b)`` for ``c`` captured men, those not below ``lose_below``).
    ``progress(stage, done, total)`` is called as the work goes on.  When the moves kept
    would take more than ``max_edge_bytes`` twice over, they are generated a second time
    instead of kept (less memory, more time).  No I/O.
    """
    if a < b or b < rules.lose_below:
        raise ValueError(f"expected a >= b >= lose_below ({rules.lose_below}), got {a}-{b}")
    t = tables_for(rules.board)
    if a + b >= t.n:
        raise ValueError(f"{a}-{b} fills the {rules.board} board: no table")
    report = progress or (lambda stage, done, total: None)
    clock = time.perf_counter()
    seconds: dict[str, float] = {}
    lays = [NpLayout(rules.board, a, b, 0)]
    if a != b:
        lays.append(NpLayout(rules.board, b, a, lays[0].size))
    other = {0: lays[-1], len(lays) - 1: lays[0]}
    total = sum(lay.size for lay in lays)
    lookup = _Lookup(rules, known)
    steps = []
    for li, lay in enumerate(lays):
        per = lay.mover * (t.n - lay.mover - lay.opponent if rules.flies(lay.mover)
                           else t.nb.shape[1])
        step = max(1, CHUNK_MOVES // max(per, 1))
        steps += [(li, lay, lo, min(lay.size, lo + step)) for lo in range(0, lay.size, step)]
    # the moves kept at most, 8 bytes each while they are reversed: over the budget, they
    # are generated twice (counted, then placed) and only the reversed copy is kept
    estimate = sum(lay.size * lay.mover * (t.n - lay.mover - lay.opponent
                                           if rules.flies(lay.mover) else t.nb.shape[1])
                   for lay in lays)
    twice = estimate * 8 > max_edge_bytes
    chunks: list[tuple[int, int, np.ndarray]] = []
    counter = np.zeros(total, dtype=np.int32)
    into = np.zeros(total, dtype=np.int32)  # edges into each position
    score = np.zeros(total, dtype=np.int8)
    blocked = np.zeros(total, dtype=bool)
    done = 0
    for li, lay, lo, hi in steps:
        ow, sc, sco, blk = _generate(rules, lay, other[li], lookup, lo, hi)
        first = lay.offset + lo
        counter[first:first + hi - lo] = np.bincount(ow - first, minlength=hi - lo)
        np.add.at(into, sc, 1)
        if not twice:  # kept sorted by owner: the owners are then implicit
            chunks.append((first, first + hi - lo, sc[np.argsort(ow, kind="stable")]
                           .astype(np.int32)))
        del ow, sc
        score[first:first + hi - lo] = sco
        blocked[first:first + hi - lo] = blk
        done += hi - lo
        report("moves", done, total)
    seconds["moves"] = time.perf_counter() - clock
    clock = time.perf_counter()
    rev_off = _offsets(into)
    del into
    rev_owner = np.empty(int(rev_off[-1]), dtype=np.int32)
    fill = rev_off[:-1].copy()
    if twice:
        for li, lay, lo, hi in steps:
            ow, sc, _, _ = _generate(rules, lay, other[li], None, lo, hi)
            first = lay.offset + lo
            _place(rev_owner, fill, first, first + hi - lo, counter,
                   sc[np.argsort(ow, kind="stable")])
            del ow, sc
    while chunks:
        first, stop, sc = chunks.pop(0)
        _place(rev_owner, fill, first, stop, counter, sc)
    del fill
    edges = len(rev_owner)
    seconds["reverse"] = time.perf_counter() - clock
    clock = time.perf_counter()

    val = np.zeros(total, dtype=np.int8)
    dist = np.zeros(total, dtype=np.uint16)
    has_moves = counter > 0
    blocked_loss = blocked & (score == 0) & (rules.blocked != "draw")
    val[blocked_loss] = LOSS
    val[blocked & (score == 0) & (rules.blocked == "draw")] = DRAW
    cap_win = np.nonzero(score == 3)[0]
    val[cap_win], dist[cap_win] = WIN, 1
    val[(val == UNKNOWN) & ~has_moves & (score == 2)] = DRAW
    first_loss = np.nonzero((val == UNKNOWN) & ~has_moves & (score == 1))[0]
    val[first_loss], dist[first_loss] = LOSS, 1
    can_lose = score <= 1
    losses: dict[int, np.ndarray] = {0: np.nonzero(blocked_loss)[0], 1: first_loss}
    resolved = int(np.count_nonzero(val))
    report("solve", resolved, total)
    k = 1
    while True:
        pre = _gather(rev_off, rev_owner, losses.pop(k - 1))
        won = np.unique(pre[val[pre] == UNKNOWN])
        val[won], dist[won] = WIN, k
        if k == 1:
            won = np.concatenate([won, cap_win])
        pre = _gather(rev_off, rev_owner, won)
        if len(pre) > total // 8:
            counter -= np.bincount(pre, minlength=total).astype(np.int32)
            touched = np.unique(pre)
        else:
            touched, times = np.unique(pre, return_counts=True)
            counter[touched] -= times.astype(np.int32)
        lost = touched[(counter[touched] == 0) & (val[touched] == UNKNOWN) & can_lose[touched]]
        val[lost], dist[lost] = LOSS, k + 1
        if k >= 1 << 15:
            raise ValueError(f"distances past {k} plies do not fit the format")
        losses[k + 1] = lost
        resolved += len(won) + len(lost) - (len(cap_win) if k == 1 else 0)
        report("solve", resolved, total)
        if not len(won) and not len(losses.get(k, ())) and not len(lost):
            break
        k += 1
    seconds["solve"] = time.perf_counter() - clock
    del rev_owner, rev_off, counter, score, blocked, can_lose, has_moves
    decisive = (val == WIN) | (val == LOSS)
    max_distance = int(dist[decisive].max(initial=0))
    dtype: type = np.uint8 if max_distance < 128 else np.uint16
    if max_distance >= 1 << 15:
        raise ValueError(f"a distance of {max_distance} plies does not fit the format")
    codes = encode(val, dist, dtype)
    del val, dist, decisive
    out = []
    for lay in lays:
        part = codes[lay.offset:lay.offset + lay.size]
        out.append(Orientation(lay.mover, lay.opponent, lay.classes.astype(np.uint32),
                               part, _stats(lay, part)))
    report("done", total, total)
    return Solved(a, b, out, max_distance, seconds, edges, k)


def _stats(lay: NpLayout, codes: np.ndarray) -> dict[str, object]:
    """Won, drawn and lost counts of an orientation: by index entry and by position of the
    full board (each entry weighted by its orbit), and the longest win and loss."""
    w = lay.weights()
    n = lay.t.n
    positions = comb(n, lay.mover) * comb(n - lay.mover, lay.opponent)
    counted = int(w.sum(dtype=I64))
    if counted != positions:
        raise AssertionError(f"orbits count {counted} positions, expected {positions}")
    flag = 1 << (codes.dtype.itemsize * 8 - 1)
    out: dict[str, object] = {"entries": int(len(codes)), "positions": positions}
    lost = codes >= flag
    drawn = codes == 0
    won = ~(lost | drawn)
    for name, sel in (("won", won), ("drawn", drawn), ("lost", lost)):
        out[name] = {"entries": int(np.count_nonzero(sel)),
                     "positions": int(w[sel].sum(dtype=I64))}
    out["longest_win"] = int(codes[won].max(initial=0))
    out["longest_loss"] = int(codes[lost].max(initial=flag)) - flag
    return out
