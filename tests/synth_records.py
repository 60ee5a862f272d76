"""Synthetic game records for the ratings and report tests (seeded, no processes)."""

from __future__ import annotations

import itertools
import random
from typing import Optional, Sequence

from arena.records import GameRecord, MoveInfo, PlayerInfo

RESULTS = {1.0: "1-0", 0.5: "1/2-1/2", 0.0: "0-1"}


def make_record(white: str, black: str, white_score: float, *, variant: str = "nine-mens-morris",
                game_id: str = "", round: Optional[int] = None, pair: Optional[int] = None,
                tournament: Optional[str] = "t", termination: str = "too-few-men",
                forfeit: Optional[str] = None, moves: Sequence[str] = ("d6", "f4"),
                detail: str = "", offending_line: Optional[str] = None,
                stderr: Optional[dict[str, str]] = None) -> GameRecord:
    """One finished game record with the given players and White's score."""
    if white_score == 0.5 and termination == "too-few-men":
        termination = "repetition"
    return GameRecord(
        game_id=game_id or f"{white}-{black}-{round}-{pair}",
        variant=variant, variant_params={}, white=PlayerInfo(white, bot=white),
        black=PlayerInfo(black, bot=black), result=RESULTS[white_score], termination=termination,
        forfeit=forfeit, detail=detail, offending_line=offending_line,
        moves=[MoveInfo(m, wall_ms=1.0) for m in moves], tournament=tournament, round=round,
        pair=pair, stderr=dict(stderr or {}))


def score_game(rng: random.Random, mean: float, draw: float) -> float:
    """A game score with expectation ``mean`` and draw probability at most ``draw``."""
    d = min(draw, 2 * min(mean, 1 - mean))
    u = rng.random()
    if u < mean - d / 2:
        return 1.0
    if u < mean + d / 2:
        return 0.5
    return 0.0


def round_robin(elos: dict[str, float], pairs_per_match: int, *, seed: int = 0,
                draw: float = 0.3, colour: float = 0.05, variant: str = "nine-mens-morris",
                tournament: str = "t") -> list[GameRecord]:
    """A colour-swapped round robin where each bot's expected score is logistic in Elo."""
    rng = random.Random(seed)
    out: list[GameRecord] = []
    pair_id = 0
    for rnd in range(pairs_per_match):
        for a, b in itertools.combinations(sorted(elos), 2):
            m = 1 / (1 + 10 ** (-(elos[a] - elos[b]) / 400))
            c = min(colour, m / 2, (1 - m) / 2)
            pair_id += 1
            s1 = score_game(rng, m + c, draw)          # a plays white
            s2 = score_game(rng, 1 - m + c, draw)      # b plays white
            out.append(make_record(a, b, s1, variant=variant, round=rnd, pair=pair_id,
                                   tournament=tournament, game_id=f"{variant}-{pair_id}a"))
            out.append(make_record(b, a, s2, variant=variant, round=rnd, pair=pair_id,
                                   tournament=tournament, game_id=f"{variant}-{pair_id}b"))
    return out
