"""SPSA as fishtest runs it: the parameters, the gain schedule, the perturbations and the
update, pure (no processes, no files, no clock).

A run tunes :class:`Param`\\ s (``NAME=START,MIN,MAX,C_END[,R_END]``, fishtest's
``name,start,min,max,c_end,r_end``) over ``iterations`` iterations of ``pairs`` game pairs
each.  As in fishtest, the schedule counts *pairs*: with ``N = iterations * pairs`` pairs in
the run (fishtest's ``num_iter``, half its games) and ``k`` the pairs played before an
iteration,

* ``A = floor(A_RATIO * N)`` (fishtest: ``int(A_ratio * num_games / 2)``, ratio 0.1),
* ``c = c_end * N^gamma`` and ``a = r_end * c_end^2 * (A + N)^alpha`` per parameter,
* ``c_k = c / (k + 1)^gamma`` and ``a_k = a / (A + k + 1)^alpha`` (fishtest's
  ``R = a_k / c_k^2``),
* a random sign ``flip`` (+1 or -1) per parameter; the two players are
  ``clip(theta + c_k flip)`` and ``clip(theta - c_k flip)``,
* after the iteration's games, ``result`` = wins - losses of the ``+`` player (against the
  ``-`` player, or, with a fixed opponent, its wins - losses minus those of the ``-``
  player), and ``theta <- clip(theta + R c_k result flip) = clip(theta + a_k / c_k result
  flip)``.

So ``c_k`` falls to ``c_end`` and ``a_k / c_k^2`` to ``r_end`` at the end of the run, and an
iteration of ``pairs`` pairs is one fishtest worker batch: one perturbation, one update with
the summed result, the schedule advanced by ``pairs``.  With ``pairs = 1`` it is the textbook
schedule with ``k`` the iteration.  The values a bot is given are integers (spin options):
each side's value is rounded stochastically, ``floor(v + u)`` with ``u`` uniform in [0, 1),
as fishtest's worker rounds them, so that the value played is ``v`` on average.

Everything random (the flips and the rounding) is drawn from the run's seed and the
iteration number alone (:func:`arena.schedule.derive_seed`), and the update is a function of
the results: a run's trajectory is a pure function of its settings and its pair results
(:meth:`Spsa.trajectory`), which is what makes a resumed run identical to an uninterrupted one.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from arena.errors import ConfigError
from arena.schedule import derive_seed

#: fishtest's defaults (server/fishtest/spsa_workflow.py, ``_CLASSIC_SPSA_FORM_DEFAULTS``)
ALPHA = 0.602
GAMMA = 0.101
A_RATIO = 0.1
#: the r_end Stockfish's tune.cpp prints for every parameter (its c_end: (max - min) / 20)
R_END = 0.002
#: the largest magnitude of a bound, start or step a parameter may have (absurd beyond)
VALUE_MAX = 1e9
#: the largest r_end accepted (fishtest's runs use about 0.002)
R_END_MAX = 1e6

__all__ = ["ALPHA", "A_RATIO", "GAMMA", "Param", "R_END", "Spsa", "Step", "parse_param",
           "stochastic_round"]


@dataclass(frozen=True)
class Param:
    """One tuned spin option: its name, start value, bounds and fishtest's ``c_end`` (the
    perturbation at the end of the run) and ``r_end`` (the learning rate at the end)."""

    name: str
    start: float
    min: int
    max: int
    c_end: float
    r_end: float = R_END

    def clip(self, value: float) -> float:
        """``value`` within ``min..max``."""
        return min(max(value, self.min), self.max)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form stored in a run's settings."""
        return {"name": self.name, "start": self.start, "min": self.min, "max": self.max,
                "c_end": self.c_end, "r_end": self.r_end}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Param:
        """The inverse of :meth:`to_dict`."""
        return cls(str(data["name"]), float(data["start"]), int(data["min"]), int(data["max"]),
                   float(data["c_end"]), float(data["r_end"]))

    def describe(self) -> str:
        """``MenWeight=100,0,400,20,0.002``: the ``--param`` text of this parameter."""
        return f"{self.name}={_g(self.start)},{self.min},{self.max},{_g(self.c_end)},{_g(self.r_end)}"


def _g(x: float) -> str:
    return f"{x:g}" if x == int(x) or abs(x) >= 1e-4 else repr(x)


def _number(text: str, what: str, where: str, *, integer: bool = False) -> float:
    """``text`` as a finite number of at most :data:`VALUE_MAX` in magnitude."""
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"{what} is not a number: {text.strip()[:40]!r}", where) from None
    if not math.isfinite(value) or abs(value) > VALUE_MAX:
        raise ConfigError(f"{what} must be a finite number within +-{VALUE_MAX:g}, got "
                          f"{text.strip()[:40]}", where)
    if integer and value != int(value):
        raise ConfigError(f"{what} must be a whole number (a spin option's bound), got "
                          f"{text.strip()[:40]}", where)
    return value


def parse_param(text: str) -> Param:
    """``NAME=START,MIN,MAX,C_END[,R_END]`` as a :class:`Param` (``R_END`` defaults to
    :data:`R_END`).

    :raises ConfigError: a one-line reason naming ``--param NAME``: the syntax, a number
        that is not one (or NaN, infinite, beyond +-1e9), ``MIN >= MAX``, bounds that are
        not whole numbers, ``START`` outside ``MIN..MAX``, ``C_END`` not above 0 or over
        ``MAX - MIN``, ``R_END`` negative or over 1e6.
    """
    name, eq, rest = text.partition("=")
    name = name.strip()
    where = f"--param {name[:40]}" if name else "--param"
    fields = [f.strip() for f in rest.split(",")]
    if not eq or not name or len(fields) not in (4, 5) or any(not f for f in fields):
        raise ConfigError(f"expected NAME=START,MIN,MAX,C_END[,R_END], got {text[:60]!r}",
                          "--param")
    if not name.isprintable() or len(name) > 100:
        raise ConfigError(f"not an option name: {name[:40]!r}", "--param")
    start = _number(fields[0], "START", where)
    low = _number(fields[1], "MIN", where, integer=True)
    high = _number(fields[2], "MAX", where, integer=True)
    c_end = _number(fields[3], "C_END", where)
    r_end = _number(fields[4], "R_END", where) if len(fields) == 5 else R_END
    if low >= high:
        raise ConfigError(f"MIN must be below MAX, got {low:g} and {high:g}", where)
    if not low <= start <= high:
        raise ConfigError(f"START {start:g} is outside MIN..MAX ({low:g}..{high:g})", where)
    if not 0 < c_end <= high - low:
        raise ConfigError(f"C_END must be above 0 and at most MAX - MIN ({high - low:g}), "
                          f"got {c_end:g}", where)
    if not 0 <= r_end <= R_END_MAX:
        raise ConfigError(f"R_END must be from 0 to {R_END_MAX:g} (fishtest's runs use about "
                          f"{R_END}), got {r_end:g}", where)
    return Param(name, start, int(low), int(high), c_end, r_end)


def stochastic_round(value: float, u: float) -> int:
    """``floor(value + u)``: with ``u`` uniform in [0, 1), ``value`` rounded up with the
    probability of its fractional part (fishtest's worker), so ``value`` on average."""
    return math.floor(value + u)


@dataclass(frozen=True)
class Step:
    """One iteration's plan: its number (from 1), the pairs played before it (``k``), the
    perturbation ``c`` and gain ``a`` of each parameter, the flips, the two players' values
    (before and after rounding)."""

    iteration: int
    k: int
    c: tuple[float, ...]
    a: tuple[float, ...]
    flips: tuple[int, ...]
    plus: tuple[float, ...]
    minus: tuple[float, ...]
    plus_values: tuple[int, ...]
    minus_values: tuple[int, ...]


@dataclass(frozen=True)
class Spsa:
    """The schedule of a run: its parameters, ``iterations`` of ``pairs`` pairs each, and
    fishtest's ``alpha``, ``gamma`` and ``A`` ratio.

    :raises ConfigError: no parameter, a name twice, fewer than one iteration or pair.
    """

    params: tuple[Param, ...]
    iterations: int
    pairs: int = 1
    alpha: float = ALPHA
    gamma: float = GAMMA
    a_ratio: float = A_RATIO

    def __post_init__(self) -> None:
        if not self.params:
            raise ConfigError("give at least one --param NAME=START,MIN,MAX,C_END[,R_END]")
        seen: dict[str, str] = {}
        for p in self.params:
            if p.name.lower() in seen:
                raise ConfigError(f"{seen[p.name.lower()]} is tuned twice (also as {p.name})",
                                  "--param")
            seen[p.name.lower()] = p.name
        if self.iterations < 1 or self.pairs < 1:
            raise ConfigError("a run has at least one iteration of at least one pair")

    @property
    def total_pairs(self) -> int:
        """``N``: the pairs of the whole run (fishtest's ``num_iter``)."""
        return self.iterations * self.pairs

    @property
    def big_a(self) -> int:
        """``A = floor(a_ratio * N)``, the stability constant of the gain ``a_k``."""
        return int(self.a_ratio * self.total_pairs)

    def c0(self, param: Param) -> float:
        """``c = c_end * N^gamma``: the perturbation of the first iteration."""
        return param.c_end * self.total_pairs ** self.gamma

    def a0(self, param: Param) -> float:
        """``a = r_end * c_end^2 * (A + N)^alpha``."""
        return param.r_end * param.c_end ** 2 * (self.big_a + self.total_pairs) ** self.alpha

    def gains(self, k: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """``c_k`` and ``a_k`` of every parameter after ``k`` pairs."""
        return (tuple(self.c0(p) / (k + 1) ** self.gamma for p in self.params),
                tuple(self.a0(p) / (self.big_a + k + 1) ** self.alpha for p in self.params))

    def start(self) -> tuple[float, ...]:
        """``theta`` before the first iteration."""
        return tuple(p.start for p in self.params)

    def plan(self, theta: Sequence[float], iteration: int, seed: int) -> Step:
        """The plan of ``iteration`` (from 1) from ``theta``: its gains, flips (drawn from
        ``seed`` and the iteration) and the two players' values, rounded stochastically
        (each side's draws of its own)."""
        if not 1 <= iteration <= self.iterations:
            raise ValueError(f"iteration {iteration} is not in 1..{self.iterations}")
        k = (iteration - 1) * self.pairs
        flip_rng = random.Random(derive_seed(seed, "spsa-flip", iteration))
        flips = tuple(flip_rng.choice((-1, 1)) for _ in self.params)
        cs, gains = self.gains(k)
        plus = tuple(p.clip(t + c * f) for p, t, c, f in zip(self.params, theta, cs, flips))
        minus = tuple(p.clip(t - c * f) for p, t, c, f in zip(self.params, theta, cs, flips))

        def rounded(values: tuple[float, ...], side: str) -> tuple[int, ...]:
            rng = random.Random(derive_seed(seed, "spsa-round", iteration, side))
            return tuple(int(p.clip(stochastic_round(v, rng.random())))
                         for p, v in zip(self.params, values))

        return Step(iteration, k, cs, gains, flips, plus, minus, rounded(plus, "+"),
                    rounded(minus, "-"))

    def update(self, theta: Sequence[float], step: Step, result: int) -> tuple[float, ...]:
        """``theta`` after ``step``'s games, whose summed ``result`` (wins - losses of the
        ``+`` player) moves each parameter by ``a_k / c_k * result * flip``, clipped."""
        return tuple(p.clip(t + a / c * result * f) for p, t, a, c, f in
                     zip(self.params, theta, step.a, step.c, step.flips))

    def trajectory(self, seed: int, results: Sequence[int]) -> list[tuple[float, ...]]:
        """``theta`` before the first iteration and after each iteration whose summed
        result is in ``results`` (at most ``iterations``): a pure function of the settings,
        the seed and the results."""
        if len(results) > self.iterations:
            raise ValueError(f"{len(results)} results for {self.iterations} iterations")
        thetas = [self.start()]
        for i, result in enumerate(results, start=1):
            step = self.plan(thetas[-1], i, seed)
            thetas.append(self.update(thetas[-1], step, result))
        return thetas

    def settings(self) -> dict[str, Any]:
        """The schedule's part of a run's stored settings (JSON values)."""
        return {"params": [p.to_dict() for p in self.params], "iterations": self.iterations,
                "pairs": self.pairs, "alpha": self.alpha, "gamma": self.gamma,
                "a_ratio": self.a_ratio}

    @classmethod
    def from_settings(cls, data: Mapping[str, Any]) -> Spsa:
        """The inverse of :meth:`settings`."""
        return cls(tuple(Param.from_dict(p) for p in data["params"]), int(data["iterations"]),
                   int(data["pairs"]), float(data["alpha"]), float(data["gamma"]),
                   float(data["a_ratio"]))
