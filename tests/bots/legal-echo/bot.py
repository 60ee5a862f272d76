"""legal-echo: a bot kit bot that knows no rules: it plays a random move from the referee's
``legalmoves`` line (``clock.legal``), after echoing that line as ``info legalmoves ...``
so a test can compare what the bot received with the rules engine.  Without the line (the
bot did not ask for it) it says ``info no legalmoves`` and plays from its own move list."""

from __future__ import annotations

from arena.botkit import Clock, SeededBot, run, send_info
from arena.rules import Move, Position


class LegalEcho(SeededBot):
    name = "legal-echo"
    author = "tests"

    def choose(self, position: Position, clock: Clock) -> Move | str:
        if clock.legal is None:
            send_info("no legalmoves")
            return self.rng.choice(position.legal_moves())
        send_info("legalmoves " + " ".join(clock.legal))
        return self.rng.choice(clock.legal)


if __name__ == "__main__":
    run(LegalEcho())
