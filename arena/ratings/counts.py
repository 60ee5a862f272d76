"""Games as counts: the bots-by-bots matrices and the pairs' histogram (issue 39).

:class:`GameCounts` is what the fit needs of a table's games when they were tallied in one
pass (:class:`arena.tallies.GameTallies`) instead of kept: the count matrices of
:func:`arena.ratings.mle.pair_matrices` and, for the pair-clustered sandwich, each cluster
(colour-swapped pair, or lone game) by its two bots, its number of games and the first
bot's points, counted (a histogram: a million games are a few hundred rows).  The
sandwich's "meat" from these equals the one from the games to rounding
(:func:`arena.ratings.intervals.sandwich_covariance`); :meth:`GameCounts.arrays` expands
them into :class:`~arena.ratings.mle.GameArrays` for the bootstrap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import numpy as np
from scipy import special

from arena.ratings.mle import GameArrays

if TYPE_CHECKING:
    from arena.tallies import KeptGames, VariantTally


@dataclass(frozen=True)
class GameCounts:
    """A table's games as counts (see the module's docstring).

    ``singles`` are the clusters between two bots, one row per kind: ``lo``, ``hi``
    (indices, lo < hi), ``k`` games, ``points`` of ``lo`` (as the ratings count them) and
    ``count`` such clusters; ``mixed`` the clusters with games between different bots, each
    as ``(white, black, score)`` arrays.
    """

    players: tuple[str, ...]
    n_mat: np.ndarray
    s_mat: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    k: np.ndarray
    points: np.ndarray
    count: np.ndarray
    mixed: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...] = ()

    @property
    def n_games(self) -> int:
        """How many games (between two different bots)."""
        return int(round(float(self.n_mat.sum()) / 2))

    @property
    def n_clusters(self) -> int:
        """How many clusters (pairs and lone games)."""
        return int(self.count.sum()) + len(self.mixed)

    def matrices(self) -> tuple[np.ndarray, np.ndarray]:
        """``(N, S)`` as :func:`arena.ratings.mle.pair_matrices` gives them."""
        return self.n_mat, self.s_mat

    def meat(self, theta: np.ndarray) -> tuple[np.ndarray, int]:
        """``sum_c U_c U_c^T`` over the clusters and their number (see
        :func:`arena.ratings.intervals.sandwich_covariance`)."""
        n = theta.shape[0]
        u = self.points - self.k * special.expit(theta[self.lo] - theta[self.hi])
        w = np.bincount(self.lo * n + self.hi, self.count * u * u,
                        minlength=n * n).astype(float).reshape(n, n)
        w = w + w.T
        meat: np.ndarray = np.diag(w.sum(axis=1)) - w
        for white, black, score in self.mixed:
            r = score - special.expit(theta[white] - theta[black])
            vec = np.bincount(white, r, minlength=n) - np.bincount(black, r, minlength=n)
            meat += np.outer(vec, vec)
        return meat, self.n_clusters

    def subset(self, core: np.ndarray) -> GameCounts:
        """The games among the players ``core`` (indices, ascending), renumbered."""
        n = len(self.players)
        remap = np.full(n, -1)
        remap[core] = np.arange(core.size)
        keep = (remap[self.lo] >= 0) & (remap[self.hi] >= 0)
        mixed = []
        for white, black, score in self.mixed:
            sel = (remap[white] >= 0) & (remap[black] >= 0)
            if sel.any():
                mixed.append((remap[white[sel]], remap[black[sel]], score[sel]))
        sub = np.ix_(core, core)
        return GameCounts(tuple(self.players[i] for i in core), self.n_mat[sub],
                          self.s_mat[sub], remap[self.lo[keep]], remap[self.hi[keep]],
                          self.k[keep], self.points[keep], self.count[keep], tuple(mixed))

    def arrays(self) -> GameArrays:
        """The games as :class:`GameArrays` for the bootstrap: each cluster as its games
        (``lo`` White, each scoring its share of the cluster's points: the matrices and
        the clusters are the same), one cluster id per cluster."""
        reps = self.count.astype(np.int64)
        k = np.repeat(self.k.astype(np.int64), reps)
        lo, hi = np.repeat(self.lo, reps), np.repeat(self.hi, reps)
        share = np.repeat(self.points / self.k, reps)
        per_game = np.repeat(np.arange(k.size), k)
        white = [lo[per_game]]
        black = [hi[per_game]]
        score = [share[per_game]]
        cluster = [per_game]
        nxt = k.size
        for w, b, s in self.mixed:
            white.append(w)
            black.append(b)
            score.append(s)
            cluster.append(np.full(w.size, nxt))
            nxt += 1
        return GameArrays(self.players, np.concatenate(white).astype(np.int64),
                          np.concatenate(black).astype(np.int64),
                          np.concatenate(score).astype(float),
                          np.concatenate(cluster).astype(np.int64))


def game_counts(table: VariantTally, players: Optional[tuple[str, ...]] = None) -> GameCounts:
    """The :class:`GameCounts` of a tallied table (:class:`arena.tallies.VariantTally`),
    its players in their order of first appearance (or ``players``)."""
    names = tuple(table.players) if players is None else players
    index = {name: k for k, name in enumerate(names)}
    n = len(names)
    n_mat = np.zeros((n, n))
    s_mat = np.zeros((n, n))
    for (w, b), (ww, d, bw, other) in table.results.items():
        if w == b:
            continue
        i, j = index[w], index[b]
        games = ww + d + bw + other
        points = ww + 0.5 * d
        n_mat[i, j] += games
        n_mat[j, i] += games
        s_mat[i, j] += points
        s_mat[j, i] += games - points
    lo: list[int] = []
    hi: list[int] = []
    k: list[float] = []
    pts: list[float] = []
    count: list[float] = []
    for (a, b), stats in table.pairs.items():
        i, j = index[a], index[b]
        for (games, rated, _mine, _theirs, _complete), c in stats.clusters.items():
            first, second, mine = (i, j, rated / 2) if i < j else (j, i, games - rated / 2)
            lo.append(first)
            hi.append(second)
            pts.append(mine)
            k.append(games)
            count.append(c)
    mixed = tuple((np.array([index[w] for w, _, _ in c], dtype=np.int64),
                   np.array([index[b] for _, b, _ in c], dtype=np.int64),
                   np.array([s for _, _, s in c], dtype=float)) for c in table.mixed)
    return GameCounts(names, n_mat, s_mat, np.array(lo, dtype=np.int64),
                      np.array(hi, dtype=np.int64), np.array(k, dtype=float),
                      np.array(pts, dtype=float), np.array(count, dtype=float), mixed)


def kept_arrays(kept: KeptGames, variant: Optional[str],
                players: tuple[str, ...]) -> GameArrays:
    """The games of ``variant`` (all when None) that :class:`arena.tallies.GameTallies`
    kept (``keep_games``) as :class:`GameArrays`, ``players`` numbered as given: what
    :func:`arena.ratings.game_arrays` makes of the records themselves."""
    sel = np.ones(len(kept.variant), dtype=bool)
    if variant is not None:
        sel = np.frombuffer(kept.variant, dtype=np.int32) == kept.variants.get(variant, -1)
    index = {name: k for k, name in enumerate(players)}
    lookup = np.array([index.get(name, -1) for name in kept.names] or [-1], dtype=np.int64)
    white = lookup[np.frombuffer(kept.white, dtype=np.int32)[sel]]
    black = lookup[np.frombuffer(kept.black, dtype=np.int32)[sel]]
    return GameArrays(players, white, black,
                      np.frombuffer(kept.score, dtype=float)[sel].copy(),
                      np.frombuffer(kept.cluster, dtype=np.int64)[sel].copy())
