"""Swiss pairings, pure: scores and the pairs met so far in, one round's pairs out.

A Swiss ranks a large field in a few rounds: each round pairs players with equal or nearest
scores, never the same two twice.  Here a round is a **maximum-weight matching** (networkx's
``max_weight_matching``, with ``maxcardinality``: everyone who can be paired is) on the
graph of the pairs that have not met, each weighted so that, in this order:

1. as many players as possible are paired (the matching is of maximum cardinality);
2. the score differences are as small as possible (a pair's weight falls with the square of
   the difference of the two scores, in half points: one pair two points apart costs more
   than two pairs one point apart, as FIDE's Dutch system also prefers);
3. among equal scores, players are paired by rating order as the Dutch system does inside a
   score group: the top half against the bottom half (``seed`` order: 1 against k+1, 2
   against k+2, ...), a small preference that never outweighs a score difference.

In Morris Arena a pairing is a colour-swapped pair of games per variant, so colours are
balanced inside every pairing and the Dutch system's colour rules are not needed: that is
where this differs from FIDE C.04.3, besides its rules for floaters, which the matching's
squared differences stand in for.  For an odd field the **bye** goes to the lowest-scored
player who has not had one (the lowest in seed order among them), before the matching; it is
scored as the caller states (``arena.schedule``: a win's points by default, as in most
Swiss events).

:func:`pair_round` is deterministic: the same scores, history and seeds give the same pairs,
so a run resumed after a kill pairs its rounds as an uninterrupted one did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

__all__ = ["SwissRound", "pair_round", "rounds_for"]


@dataclass(frozen=True)
class SwissRound:
    """One round's pairings: ``pairs`` (the better-seeded player first, pairs in seed order
    of their first player) and the player with the ``bye`` (None for an even field)."""

    pairs: tuple[tuple[str, str], ...]
    bye: Optional[str] = None


def rounds_for(players: int) -> int:
    """The usual number of Swiss rounds for a field: ⌈log₂ N⌉ + 2 (at least 1)."""
    if players < 2:
        return 1
    return (players - 1).bit_length() + 2


def pair_round(seeds: Sequence[str], scores: Mapping[str, float],
               met: Sequence[tuple[str, str]] = (), byes: Sequence[str] = ()) -> SwissRound:
    """The next round's pairs of the players ``seeds`` (best first: a rating list, or the
    order given), with their ``scores`` so far (missing: 0), the pairs that have ``met``
    (either order) and the players who had a ``bye``.

    :raises ValueError: a player twice in ``seeds``, or no pairing is left that does not
        repeat a pair (every pair has met: the field has played a full round robin).
    """
    import networkx as nx

    if len(set(seeds)) != len(seeds):
        raise ValueError("a player is named twice")
    order = {name: k for k, name in enumerate(seeds)}
    score = {name: float(scores.get(name, 0.0)) for name in seeds}
    players = list(seeds)
    bye = None
    if len(players) % 2:
        had = set(byes)
        candidates = [p for p in players if p not in had] or players
        bye = min(candidates, key=lambda p: (score[p], -order[p]))
        players.remove(bye)
    if not players:
        return SwissRound((), bye)
    seen = {frozenset(pair) for pair in met}
    # the top half of each score group against its bottom half: a player's place in its
    # group, and the group's size
    groups: dict[float, list[str]] = {}
    for p in players:
        groups.setdefault(score[p], []).append(p)
    place = {p: (k, len(g)) for g in groups.values() for k, p in enumerate(g)}
    n = len(players)
    spread = 4.0 * (max(score.values()) - min(score.values()) + 1) ** 2 * n
    graph = nx.Graph()
    graph.add_nodes_from(players)
    for i, a in enumerate(players):
        for b in players[i + 1:]:
            if frozenset((a, b)) in seen:
                continue
            diff = abs(score[a] - score[b]) * 2  # in half points
            (ka, size), (kb, _) = place[a], place[b]
            half = size // 2 or 1
            dutch = 0.0 if score[a] != score[b] else abs(abs(ka - kb) - half) / (n * n)
            graph.add_edge(a, b, weight=spread * n - diff * diff * n - dutch)
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    if 2 * len(matching) < len(players):
        raise ValueError(f"no pairing of {len(players)} players without a repeated pair: "
                         f"{len(players) - 2 * len(matching)} left unpaired")
    pairs = sorted((tuple(sorted(pair, key=order.__getitem__)) for pair in matching),
                   key=lambda pair: order[pair[0]])
    return SwissRound(tuple((a, b) for a, b in pairs), bye)
