"""A Swiss final's rounds, pure: the next round from the rounds recorded and the games
stored, the standings of the rounds counted, and the rounds as the final page shows them.

:class:`~arena.server.final.Finals` keeps them in the final's row and queues their games
(module :mod:`arena.server.final` says when); here only data in, data out.  A round is
recorded as the offline runner's ``rounds.jsonl`` records one
(:meth:`arena.rounds.Round.to_json`), with bot ids for names: ``{"round", "format":
"swiss", "pairs": [[a, b], ...], "bye", "bye_points"}``, the better seed first in a pair.
A game is a row of the final's games: (white, black, result, pair, variant, forfeit,
status).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from arena.records import GameRecord
from arena.rounds import Round, round_byes
from arena.server.ladder import SCORES
from arena.swiss import pair_round

#: a game of a final: (white, black, result, pair, variant, forfeit, status)
FinalGame = tuple[int, int, str, int, str, str, str]


def swiss_scores(seeds: Sequence[int], games: Sequence[FinalGame],
                 rounds: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Each entry's points (by bot id as text): its stored games' (a win 1, a draw ½, in
    every variant) and its byes'."""
    points = {str(b): 0.0 for b in seeds}
    for w, b, result, *_, status in games:
        if status == "done" and result in SCORES and str(w) in points and str(b) in points:
            points[str(w)] += SCORES[result]
            points[str(b)] += 1.0 - SCORES[result]
    for bot, extra in _byes(rounds).items():
        points[bot] += extra
    return points


def _byes(rounds: Sequence[dict[str, Any]]) -> dict[str, float]:
    return round_byes(Round.from_json(r) for r in rounds)


def next_round(seeds: Sequence[int], games: Sequence[FinalGame],
               rounds: Sequence[dict[str, Any]], bye_points: float) -> Optional[dict[str, Any]]:
    """The round after ``rounds``, paired by :func:`arena.swiss.pair_round` from the
    ``seeds`` (bot ids, best first) and :func:`swiss_scores`; its bye (an odd field's)
    scores ``bye_points``.  None when every pairing left would repeat a pair."""
    try:
        pairing = pair_round([str(b) for b in seeds], swiss_scores(seeds, games, rounds),
                             [(str(a), str(b)) for r in rounds for a, b in r["pairs"]],
                             [str(r["bye"]) for r in rounds if r["bye"] is not None])
    except ValueError:
        return None
    if not pairing.pairs:
        return None
    return {"round": len(rounds) + 1, "format": "swiss",
            "pairs": [[int(a), int(b)] for a, b in pairing.pairs],
            "bye": None if pairing.bye is None else int(pairing.bye),
            "bye_points": float(bye_points) if pairing.bye is not None else 0.0}


def counted_games(games: Sequence[FinalGame], rounds: Sequence[dict[str, Any]]
                  ) -> list[FinalGame]:
    """The ``games`` of the pairings of ``rounds`` (no two entries meet twice in a Swiss,
    so a pairing's two bots name its games)."""
    met = {frozenset(p) for r in rounds for p in r["pairs"]}
    return [g for g in games if frozenset(g[:2]) in met]


def variant_byes(rounds: Sequence[dict[str, Any]], variants: int) -> dict[str, float]:
    """The points of each entry's byes (by bot id as text) in one variant's table: a bye
    stands for a won pairing, as many games in each of the ``variants``, so each table
    counts its share (as :func:`arena.standings.compute_standings` does)."""
    return {bot: extra / variants for bot, extra in _byes(rounds).items()}


def swiss_places(records: list[GameRecord], variant: str, byes: dict[str, float]
                 ) -> tuple[str, str, list[dict[str, Any]]]:
    """A Swiss final's table of ``variant`` from its ``records`` (players named by bot id)
    and the points of its ``byes`` in this variant: (the key ranked by, the rule in words,
    the rows placed by :func:`arena.standings.places` with
    :data:`~arena.standings.SWISS_TIEBREAKS`: ``id``, ``rank``, ``place``, ``points``,
    ``elo``, ``elo95`` (:func:`arena.ratings.rate` on the games alone: a bye is no game),
    ``games``, ``score``, ``h2h``, ``sb``, ``buchholz``, ``buchholz_cut1``)."""
    from arena.ratings import rate
    from arena.standings import (BYES_RANKING, RANKINGS, SWISS_TIEBREAKS, describe_tiebreaks,
                                 places, ranking, tally)

    placed = places(records, variant=variant, tiebreaks=SWISS_TIEBREAKS, byes=byes or None)
    elo = {r.bot: r for r in rate(records, variant=variant).rows} if records else {}
    counts = tally(records, variant=variant)
    by = ranking(records, variant=variant, byes=byes or None)
    rule = ((BYES_RANKING if byes else RANKINGS[by]) + "; "
            + describe_tiebreaks(SWISS_TIEBREAKS, by))
    rows = []
    for p in placed:
        c, e = counts.get(p.name), elo.get(p.name)
        games = c.games if c is not None else 0
        rows.append({"id": int(p.name), "rank": p.rank, "place": p.text, "points": p.points,
                     "elo": e.rating if e is not None else None,
                     "elo95": e.rating95 if e is not None else None, "games": games,
                     "score": (c.wins + 0.5 * c.draws) / games if c is not None and games
                     else None, "h2h": p.h2h, "sb": p.sb, "buchholz": p.buchholz,
                     "buchholz_cut1": p.buchholz_cut1})
    return by, rule, rows


def rounds_view(rounds: Sequence[dict[str, Any]], games: Sequence[FinalGame]
                ) -> list[dict[str, Any]]:
    """``rounds`` as recorded, each with ``results`` (per pairing, in order: ``[points of
    the first, points of the second, games stored]``, over every variant) and ``complete``
    (none of its games is queued or running)."""
    scores: dict[tuple[int, int], list[float]] = {}
    pending: set[frozenset[int]] = set()
    for w, b, result, *_, status in games:
        if status in ("queued", "running"):
            pending.add(frozenset((w, b)))
        elif status == "done" and result in SCORES:
            for x, y, points in ((w, b, SCORES[result]), (b, w, 1.0 - SCORES[result])):
                score = scores.setdefault((x, y), [0.0, 0.0])
                score[0] += points
                score[1] += 1
    shown = []
    for r in rounds:
        results = [[scores.get((a, b), [0.0, 0])[0], scores.get((b, a), [0.0, 0])[0],
                    int(scores.get((a, b), [0.0, 0])[1])] for a, b in r["pairs"]]
        shown.append({**r, "results": results,
                      "complete": not any(frozenset(p) in pending for p in r["pairs"])})
    return shown
