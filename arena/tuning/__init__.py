"""Tuning a bot's spin options by playing games (``arena tune``): SPSA as fishtest and
OpenBench run it.  See docs/TUNING.md.

* :mod:`.spsa`: the parameters (``NAME=START,MIN,MAX,C_END[,R_END]``), fishtest's gain
  schedule, the seeded perturbations and stochastic rounding, the update; pure.
* :mod:`.settings`: what a run is (the bot, the parameters checked against its declared
  options, the schedule, variant, time control, opponent, openings) and its games' ids.
* :mod:`.folder`: its append-only folder (``tune.json``, ``games.jsonl``, ``pairs.jsonl``,
  ``trajectory.jsonl``), read back for an exact resume.
* :mod:`.run`: the run over the executor of tournaments, the progress line.
* :mod:`.report`: the plot of each parameter over the iterations and the final values as a
  tournament's ``bots:`` entry (matplotlib imported there only, when it draws).
"""

from arena.tuning.report import read_trajectory, write_report
from arena.tuning.run import TuneOutcome, run_tune
from arena.tuning.settings import TuneRun, check_params
from arena.tuning.spsa import Param, Spsa, Step, parse_param

__all__ = ["Param", "Spsa", "Step", "TuneOutcome", "TuneRun", "check_params", "parse_param",
           "read_trajectory", "run_tune", "write_report"]
