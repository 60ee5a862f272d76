"""What a tuning run is: the bot and its tuned parameters, the schedule, the variant, the time
control, the fixed opponent and the openings (:class:`TuneRun`), with the settings a
resumed run must share (:meth:`TuneRun.settings`), the games of each pair and their ids, and
the check of the parameters against the options the bot declares (:func:`check_params`).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from arena.bot import BotSpec
from arena.clock import TimeControl
from arena.options import OptionError, check_options, describe_option, value_problem
from arena.protocol import OptionDecl
from arena.schedule import derive_seed, random_opening
from arena.tuning.spsa import Param, Spsa, Step
from arena.variants import Variant

__all__ = ["TuneRun", "check_params", "tune_game_id"]


@dataclass(frozen=True)
class TuneRun:
    """What decides a tuning run's games: the ``bot`` (with its fixed options), the
    ``spsa`` schedule, the variant and time control, the fixed ``opponent`` (None: the two
    perturbed settings play each other), ``opening_turns`` random turns shared by a pair's
    games, and the sandbox (``isolation``, None: the best available; not a setting)."""

    bot: BotSpec
    spsa: Spsa
    variant: Variant
    time_control: TimeControl
    opponent: Optional[BotSpec] = None
    opening_turns: int = 4
    isolation: Any = None

    @property
    def games_per_pair(self) -> int:
        """2 (``+`` against ``-``) or 4 (each against the opponent, both colours)."""
        return 2 if self.opponent is None else 4

    @property
    def games(self) -> int:
        """Every game of the run."""
        return self.spsa.total_pairs * self.games_per_pair

    def settings(self, seed: int) -> dict[str, Any]:
        """Everything that decides the games and the updates, as stored in ``tune.json``
        (JSON values).  ``workers`` and the isolation level are not in it."""
        def bot(spec: BotSpec) -> dict[str, Any]:
            return {"name": spec.name, "path": spec.path, "options": dict(spec.options)}

        tc = self.time_control
        settings: dict[str, Any] = {"bot": bot(self.bot), **self.spsa.settings(),
                                    "opponent": None if self.opponent is None
                                    else bot(self.opponent),
                                    "variant": {"name": self.variant.name,
                                                **self.variant.to_params()}}
        if tc.movetime_ms is not None and tc == TimeControl(movetime_ms=tc.movetime_ms):
            settings["movetime"] = tc.movetime_ms
        else:
            settings["time_control"] = tc.to_dict()
        settings["opening_turns"] = self.opening_turns
        settings["seed"] = seed
        loaded: dict[str, Any] = json.loads(json.dumps(settings))
        return loaded

    def describe(self, seed: int) -> str:
        """The header line."""
        s = self.spsa
        against = (f"each against {self.opponent.name}" if self.opponent is not None
                   else "theta+c*flip against theta-c*flip")
        return (f"SPSA {self.bot.name}: {s.iterations} iteration"
                f"{'s' if s.iterations != 1 else ''} of {s.pairs} pair"
                f"{'s' if s.pairs != 1 else ''} ({self.games} games), {against}; "
                f"{self.variant.name}, {self.time_control.describe()}, {self.opening_turns} "
                f"opening turns, seed {seed}; A {s.big_a}, alpha {s.alpha:g}, "
                f"gamma {s.gamma:g}")

    def side(self, values: Sequence[int], sign: str) -> BotSpec:
        """The bot with the fixed options and the tuned ``values``, named ``<bot>+`` or
        ``<bot>-``."""
        options = dict(self.bot.options)
        options.update({p.name: str(v) for p, v in zip(self.spsa.params, values)})
        return dataclasses.replace(self.bot, name=f"{self.bot.name}{sign}", options=options)

    def pair_games(self, step: Step, pair: int, seed: int) -> list[tuple[str, BotSpec, BotSpec]]:
        """``(game id, white, black)`` of pair ``pair`` of ``step``'s iteration."""
        plus, minus = self.side(step.plus_values, "+"), self.side(step.minus_values, "-")
        tag = tune_game_id(seed, step.iteration, pair, "")
        if self.opponent is None:
            return [(tag + "a", plus, minus), (tag + "b", minus, plus)]
        o = self.opponent
        return [(tag + "a", plus, o), (tag + "b", o, plus), (tag + "c", minus, o),
                (tag + "d", o, minus)]

    def opening(self, iteration: int, pair: int, seed: int) -> tuple[str, ...]:
        """The opening of a pair's games."""
        return random_opening(self.variant, self.opening_turns,
                              derive_seed(seed, "opening", iteration, pair))


def tune_game_id(seed: int, iteration: int, pair: int, letter: str) -> str:
    """``tune-<seed>-<iteration>-<pair><letter>``."""
    return f"tune-{seed}-{iteration}-{pair}{letter}"


def check_params(params: Sequence[Param], declared: Sequence[OptionDecl], *, bot: str,
                 fixed: Mapping[str, str] = {}) -> tuple[Param, ...]:
    """The parameters, named as the bot declares them, once each is checked against its
    declaration ``declared`` (the handshake's ``option`` lines).

    :raises OptionError: an option the bot does not declare (with the nearest name), one that
        is not a ``spin``, a ``MIN`` or ``MAX`` outside its declared range, or a tuned
        option also given a fixed value (``fixed``).
    """
    by_lower = {d.name.lower(): d for d in declared}
    fixed_lower = {k.lower() for k in fixed}
    out = []
    for p in params:
        decl = by_lower.get(p.name.lower())
        if decl is None:
            check_options({p.name: ""}, declared, bot=bot)  # not declared: did you mean...
            raise OptionError(f"{bot} declares no such option", p.name, bot)  # (not reached)
        if decl.type != "spin":
            raise OptionError(f"only spin options can be tuned; {bot} declares it "
                              f"{describe_option(decl)}", p.name, bot)
        if p.name.lower() in fixed_lower:
            raise OptionError(f"tuned and given a fixed value for {bot}: give it one or the "
                              f"other", p.name, bot)
        for what, value in (("MIN", p.min), ("MAX", p.max)):
            if value_problem(decl, str(value)) is not None:
                raise OptionError(f"{what} {value} is out of range for {bot} "
                                  f"({describe_option(decl)})", p.name, bot)
        out.append(dataclasses.replace(p, name=decl.name))
    return tuple(out)
