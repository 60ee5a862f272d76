"""The alpha-beta search of ``bots/alphabeta``: a kit bot (:class:`AlphaBetaBot`) that any
Python bot can run or subclass (``bots/perfect-endgame`` adds the endgame tables to it).

It lives in the package, not in the bot's folder, because a sandboxed bot sees only its own
folder and the runtime (the ``arena`` package included): a bot that builds on it imports it
from here, as ``bots/alphabeta/bot.py`` does, and needs no other bot's folder::

    from arena.alphabeta import AlphaBetaBot
    from arena.botkit import run

    run(AlphaBetaBot())

* Search: negamax alpha-beta on ``Position.generate_raw/push_raw/pop_raw``, deepened one ply at
  a time until the budget from ``go`` runs out; the clock is checked inside the search, and the
  move of the last completed depth is played (or a better one found by the unfinished depth).
  A short quiescence search follows captures past the horizon.
* Move ordering: the best move remembered for the position (a small table), then captures,
  then moves that form a mill; the root keeps the previous depth's best first.
* Terminal scores come from ``Position.outcome()`` (which sees repetitions, since the kit gives
  the position with the game's history); quicker wins score higher.
* Evaluation (side to move minus opponent), every weight an option: men (on board and in hand),
  men in hand, closed mills, open twos (two men and an empty third point on a line),
  mobility (empty points next to one's men, when not flying), blocked men.
* ``Seed`` shuffles the move order before sorting, so games vary with the seed but repeat
  with it; ``Depth`` caps the search depth.
"""

from __future__ import annotations

import time
from typing import Optional, Sequence

from arena.botkit import Clock, OptionDecl, OptionValue, SeededBot, send_info, spin
from arena.rules import Move, Position, RawMove, capture_count
from arena.variants import Variant

MATE = 1_000_000
INF = 10 * MATE
#: the evaluation weights, in the order of ``AlphaBetaBot.weights``
WEIGHTS = ("MenWeight", "HandWeight", "MillWeight", "TwoWeight", "MobilityWeight", "BlockedWeight")
#: the deepest quiescence extension (plies of captures past the horizon)
QDEPTH = 4


class _OutOfTime(Exception):
    """Raised inside the search when the clock runs out."""


class AlphaBetaBot(SeededBot):
    """Iterative-deepening alpha-beta with an evaluation whose weights are options."""

    name = "alphabeta"
    author = "Morris Arena"
    option_decls: Sequence[OptionDecl] = (
        *SeededBot.option_decls,
        spin("Depth", 64, 1, 64),
        spin("MenWeight", 100, -1000, 1000),
        spin("HandWeight", 2, -1000, 1000),
        spin("MillWeight", 12, -1000, 1000),
        spin("TwoWeight", 10, -1000, 1000),
        spin("MobilityWeight", 3, -1000, 1000),
        spin("BlockedWeight", 6, -1000, 1000),
    )

    def __init__(self) -> None:
        super().__init__()
        self.nodes = 0
        self.stop_at = 0.0
        self.max_nodes: Optional[int] = None  # go nodes N
        self.best_at: dict[tuple[int, ...], RawMove] = {}
        self.weights: tuple[int, ...] = ()
        self._read_weights()

    # -- evaluation ---------------------------------------------------------------------
    def new_game(self, variant: Variant) -> None:
        """Re-seed and forget the move hints of the last game."""
        super().new_game(variant)
        self.best_at.clear()

    def set_option(self, name: str, value: OptionValue) -> None:
        """Keep the evaluation weights in a tuple: they are read at every node."""
        self._read_weights()

    def _read_weights(self) -> None:
        self.weights = tuple(int(self.options[name]) for name in WEIGHTS)

    def _mobility(self, pos: Position, color: int, empty: int) -> tuple[int, int]:
        """(empty points next to ``color``'s men, counted per man; men with none), or (0, 0)
        when ``color`` flies (mobility means nothing then)."""
        if pos.phase(color) == "flying":
            return 0, 0
        adjacent = pos.topology.adjacent
        mobility = blocked = 0
        bits = pos.men[color]
        while bits:
            low = bits & -bits
            free = (adjacent[low.bit_length() - 1] & empty).bit_count()
            mobility += free
            blocked += not free
            bits ^= low
        return mobility, blocked

    def evaluate(self, pos: Position) -> int:
        """The static score of ``pos`` for the side to move (side to move minus opponent)."""
        w_men, w_hand, w_mill, w_two, w_mob, w_blocked = self.weights
        me = pos.turn
        own, opp = pos.men[me], pos.men[1 - me]
        empty = pos.topology.full_mask & ~(own | opp)
        lines = 0  # closed mills and open twos, weighted, own minus opponent's
        for m in pos.topology.mills:
            a, b = own & m, opp & m
            if a and not b:
                n = a.bit_count()
                lines += w_mill if n == 3 else w_two if n == 2 else 0
            elif b and not a:
                n = b.bit_count()
                lines -= w_mill if n == 3 else w_two if n == 2 else 0
        hand_me, hand_opp = pos.hand[me], pos.hand[1 - me]
        mob_me, blocked_me = self._mobility(pos, me, empty)
        mob_opp, blocked_opp = self._mobility(pos, 1 - me, empty)
        return (w_men * (own.bit_count() + hand_me - opp.bit_count() - hand_opp)
                + w_hand * (hand_me - hand_opp) + lines
                + w_mob * (mob_me - mob_opp) - w_blocked * (blocked_me - blocked_opp))

    # -- search -------------------------------------------------------------------------
    def _key(self, pos: Position) -> tuple[int, ...]:
        return (pos.men[0], pos.men[1], pos.hand[0], pos.hand[1], pos.turn)

    def _ordered(self, pos: Position, moves: list[RawMove]) -> list[RawMove]:
        hint = self.best_at.get(self._key(pos))
        moves.sort(key=lambda m: (m != hint, -capture_count(m)))
        return moves

    def _tick(self) -> None:
        self.nodes += 1
        if self.max_nodes is not None and self.nodes > self.max_nodes:
            raise _OutOfTime
        if not self.nodes & 63 and time.monotonic() >= self.stop_at:
            raise _OutOfTime

    def _terminal(self, pos: Position, ply: int) -> Optional[int]:
        outcome = pos.outcome()
        if outcome is None:
            return None
        if outcome.winner is None:
            return 0
        return MATE - ply if outcome.winner == pos.turn else -(MATE - ply)

    def quiesce(self, pos: Position, alpha: int, beta: int, ply: int, qdepth: int) -> int:
        """Stand pat on the evaluation, or follow captures (up to :data:`QDEPTH` plies)."""
        self._tick()
        done = self._terminal(pos, ply)
        if done is not None:
            return done
        stand = self.evaluate(pos)
        if stand >= beta or qdepth == 0:
            return stand
        alpha = max(alpha, stand)
        me = pos.turn
        for raw in pos.generate_raw():
            if not raw[2]:
                continue
            pos.push_raw(raw)
            score = (self.quiesce(pos, alpha, beta, ply + 1, qdepth - 1) if pos.turn == me
                     else -self.quiesce(pos, -beta, -alpha, ply + 1, qdepth - 1))
            pos.pop_raw()
            if score > alpha:
                alpha = score
                if alpha >= beta:
                    break
        return alpha

    def negamax(self, pos: Position, depth: int, alpha: int, beta: int, ply: int) -> int:
        """The score of ``pos`` for the side to move, searched ``depth`` plies deep."""
        if depth <= 0:
            return self.quiesce(pos, alpha, beta, ply, QDEPTH)
        self._tick()
        done = self._terminal(pos, ply)
        if done is not None:
            return done
        best, best_move = -INF, None
        me = pos.turn
        for raw in self._ordered(pos, pos.generate_raw()):
            pos.push_raw(raw)
            score = (self.negamax(pos, depth - 1, alpha, beta, ply + 1) if pos.turn == me
                     else -self.negamax(pos, depth - 1, -beta, -alpha, ply + 1))
            pos.pop_raw()
            if score > best:
                best, best_move = score, raw
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        break
        if best_move is not None:
            self.best_at[self._key(pos)] = best_move
        return best

    def search(self, pos: Position, deadline: float, max_depth: int,
               max_nodes: Optional[int] = None) -> tuple[RawMove, int, int]:
        """(best move, its score, depth completed) by iterative deepening until ``deadline``
        (or ``max_nodes`` nodes)."""
        self.stop_at = deadline
        self.nodes = 0
        self.max_nodes = max_nodes
        if len(self.best_at) > 200_000:
            self.best_at.clear()
        moves = pos.generate_raw()
        self.rng.shuffle(moves)
        moves.sort(key=lambda m: -capture_count(m))
        best, best_score, completed = moves[0], -INF, 0
        start, root_ply = time.monotonic(), pos.ply
        if len(moves) == 1:
            return best, 0, 0
        for depth in range(1, max_depth + 1):
            moves.sort(key=lambda m: m != best)  # stable: keeps the rest in order
            alpha, round_best, round_score = -INF, None, -INF
            me = pos.turn
            try:
                for raw in moves:
                    pos.push_raw(raw)
                    # the same side may move twice (black after placing last, a removal turn)
                    score = (self.negamax(pos, depth - 1, alpha, INF, 1) if pos.turn == me
                             else -self.negamax(pos, depth - 1, -INF, -alpha, 1))
                    pos.pop_raw()
                    if score > round_score:
                        round_best, round_score = raw, score
                        alpha = max(alpha, score)
            except _OutOfTime:
                while pos.ply > root_ply:  # unwind the moves the search had pushed
                    pos.pop_raw()
                # the first move searched is the previous best: a move that beat it is better
                if round_best is not None and round_best != best and round_score > best_score:
                    best, best_score = round_best, round_score
                break
            assert round_best is not None
            best, best_score, completed = round_best, round_score, depth
            if abs(best_score) > MATE - 1000:
                break  # a forced result: deeper search will not change it
            spent = time.monotonic() - start
            if spent > (deadline - start) * 0.5:
                break  # the next depth would not finish
        return best, best_score, completed

    def choose(self, position: Position, clock: Clock) -> Move:
        """The best move found within ``clock``'s budget."""
        # go depth / go nodes (fixed-depth, fixed-node games) take the place of Depth
        max_depth = clock.depth if clock.depth is not None else int(self.options["Depth"])
        raw, score, depth = self.search(position, clock.deadline, max_depth, clock.nodes)
        moves = position.legal_moves()
        move = moves[position.generate_raw().index(raw)]
        forced = abs(score) > MATE - 1000  # a forced result, in plies
        plies = MATE - abs(score)
        send_info(depth=depth, nodes=self.nodes, time_ms=int(clock.elapsed() * 1000),
                  pv=[move], score=None if forced else score,
                  win=plies if forced and score > 0 else None,
                  loss=plies if forced and score <= 0 else None)
        return move


__all__ = ["AlphaBetaBot", "MATE", "INF", "WEIGHTS", "QDEPTH"]
