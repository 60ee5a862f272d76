"""alphabeta: iterative-deepening negamax with alpha-beta pruning, inside the move's time budget.

The search and the evaluation are ``arena/alphabeta.py`` (:class:`arena.alphabeta.AlphaBetaBot`),
in the package rather than in this folder so that other bots can build on them (a sandboxed
bot sees only its own folder and the runtime): ``bots/perfect-endgame`` is this bot with the
endgame tables.  In short:

* Search: negamax alpha-beta, deepened one ply at a time until the budget from ``go`` runs
  out, then a short quiescence search of captures past the horizon.
* Move ordering: the best move remembered for the position, then captures.
* Evaluation (side to move minus opponent), every weight an option: ``MenWeight``,
  ``HandWeight``, ``MillWeight``, ``TwoWeight``, ``MobilityWeight``, ``BlockedWeight``.
* ``Seed`` shuffles the move order, so games vary with the seed but repeat with it;
  ``Depth`` caps the search depth (``go depth N`` and ``go nodes N`` are kept).
"""

from __future__ import annotations

from arena.alphabeta import AlphaBetaBot
from arena.botkit import run

if __name__ == "__main__":
    run(AlphaBetaBot())
