"""greedy: looks one move ahead, plus the opponent's immediate reply.

Each legal move is scored: a win beats everything; then men captured; minus what the
opponent could capture (or win) with its best reply; plus open "twos" (two own men and an
empty point on a line); plus mobility (fewer replies for the opponent is better).  Ties
are broken by an RNG seeded from the ``Seed`` option.

It tells the referee what it found (``info depth 2 score 95 pv d6``, docs/PROTOCOL.md,
*Engine output*): the best move's score, or a forced result (``score win 1``: the move wins;
``score loss 2``: the opponent wins with its reply), which the viewer and the PGN show.
"""

from __future__ import annotations

from typing import Any

from arena.botkit import Clock, SeededBot, run, send_info
from arena.rules import Move, Position, RawMove, capture_count

WIN = 1_000_000
CAPTURE = 100
THREAT = 90
DRAW = -50
TWO = 5


def open_twos(position: Position, color: int) -> int:
    """Lines with two of ``color``'s men and an empty third point."""
    own, opp = position.men[color], position.men[1 - color]
    return sum(1 for m in position.topology.mills if (own & m).bit_count() == 2 and not opp & m)


def score_move(position: Position, raw: RawMove) -> int:
    """How good ``raw`` is for the side to move (the position is unchanged afterwards)."""
    me = position.turn
    position.push_raw(raw)
    try:
        outcome = position.outcome()
        if outcome is not None:
            return WIN if outcome.winner == me else DRAW if outcome.winner is None else -WIN
        score = CAPTURE * capture_count(raw)  # men on the board and from the hand (x*)
        threat = 0
        replies = position.generate_raw()
        again = position.turn == me  # the mover plays again (e.g. black after placing last)
        for reply in () if again else replies:  # the opponent's threats
            threat = max(threat, capture_count(reply))
            if position.variant.mill_wins:
                position.push_raw(reply)
                lost = position.outcome()
                position.pop_raw()
                if lost is not None and lost.winner == 1 - me:
                    return -WIN // 2
        score -= THREAT * threat
        score += TWO * (open_twos(position, me) - open_twos(position, 1 - me))
        return score + len(replies) if again else score - len(replies)
    finally:
        position.pop_raw()


def outcome(score: int) -> dict[str, Any]:
    """``score`` as :func:`arena.botkit.send_info`'s keywords: a forced result in plies
    (``win=1``: the move wins; ``loss=1``: it loses; ``loss=2``: the opponent's reply wins)
    or the number."""
    if score == WIN:
        return {"win": 1}
    if score == -WIN:
        return {"loss": 1}
    if score == -WIN // 2:
        return {"loss": 2}
    return {"score": score}


class GreedyBot(SeededBot):
    """The best move by :func:`score_move`, ties broken at random (seeded)."""

    name = "greedy"
    author = "Morris Arena"

    def choose(self, position: Position, clock: Clock) -> Move:
        """Score every legal move and pick one of the best."""
        moves = position.legal_moves()
        scored = [(score_move(position, raw), move)
                  for move, raw in zip(moves, position.generate_raw())]
        top = max(score for score, _ in scored)
        move = self.rng.choice([move for score, move in scored if score == top])
        send_info(depth=2, pv=[move], **outcome(top))
        return move


if __name__ == "__main__":
    run(GreedyBot())
