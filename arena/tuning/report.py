"""``arena tune --report DIR``: a tuning run's plot and its values, from the files alone.

:func:`write_report` reads ``DIR/tune.json`` and ``DIR/pairs.jsonl`` (a run in progress, too:
it takes no lock and writes only its own two files), recomputes the trajectory
(:meth:`arena.tuning.spsa.Spsa.trajectory`) and writes

* ``DIR/tune.png``: each parameter over the iterations, with the band ``theta +- c_k`` the
  two sides played and the start (matplotlib, imported here only, on the Agg canvas);
* ``DIR/tuned.yaml``: the last values, rounded to the nearest integer (as Stockfish reads a
  fishtest run's results back: ``int(round(value))``), as a ``bots:`` entry ready to paste
  into a tournament file.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.errors import ConfigError
from arena.records import atomic_write
from arena.tuning.folder import PAIRS_FILE, TUNE_FILE, read_pairs
from arena.tuning.spsa import Spsa

__all__ = ["PLOT_FILE", "VALUES_FILE", "Trajectory", "format_values", "read_trajectory",
           "write_report"]

#: the plot and the values :func:`write_report` writes into the run's folder
PLOT_FILE = "tune.png"
VALUES_FILE = "tuned.yaml"


@dataclass(frozen=True)
class Trajectory:
    """A run's settings (as stored), its schedule, and ``theta`` at the start and after each
    complete iteration (``thetas[i]``: after iteration ``i``)."""

    settings: dict[str, Any]
    spsa: Spsa
    thetas: list[tuple[float, ...]]

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.spsa.params]

    @property
    def games_per_iteration(self) -> int:
        return self.spsa.pairs * (2 if self.settings.get("opponent") is None else 4)


def read_trajectory(folder: Path) -> Trajectory:
    """The trajectory of the run in ``folder``, from its settings and pairs.

    :raises ConfigError: no tuning run there, or its files are unreadable.
    """
    try:
        data = json.loads((folder / TUNE_FILE).read_text(encoding="utf-8"))
        settings = data["settings"]
        spsa = Spsa.from_settings(settings)
        seed = int(settings["seed"])
    except FileNotFoundError:
        raise ConfigError(f"{folder} holds no tuning run (no {TUNE_FILE})") from None
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"{folder / TUNE_FILE} is unreadable ({e})") from None
    pairs, _ = read_pairs(folder / PAIRS_FILE)
    complete = len(pairs) // spsa.pairs
    results = [sum(p.result for p in pairs[i * spsa.pairs:(i + 1) * spsa.pairs])
               for i in range(min(complete, spsa.iterations))]
    return Trajectory(settings, spsa, spsa.trajectory(seed, results))


def _shown_path(path: str) -> str:
    """``path`` made absolute: ``tuned.yaml`` is read from wherever it is used (a path
    relative to the folder the tuning ran in named another folder, or none, from any other)."""
    return os.path.abspath(path)


def format_values(t: Trajectory) -> str:
    """``tuned.yaml``: a comment saying where the values come from, and a ``bots:`` entry
    with the bot's fixed options and the tuned values rounded to the nearest integer."""
    import yaml

    bot = t.settings["bot"]
    done = len(t.thetas) - 1
    options: dict[str, Any] = {}
    for key, value in bot.get("options", {}).items():
        options[key] = int(value) if str(value).lstrip("-").isdigit() else value
    final = t.thetas[-1]
    options.update({n: int(round(v)) for n, v in zip(t.names, final)})
    entry = {"path": _shown_path(bot["path"]), "name": f"{Path(bot['path']).name}-tuned",
             "options": options}
    exact = ", ".join(f"{n} {v:.2f}" for n, v in zip(t.names, final))
    start = ", ".join(f"{p.name} {p.start:g}" for p in t.spsa.params)
    head = (f"# arena tune: {done} of {t.spsa.iterations} iterations "
            f"({done * t.games_per_iteration} games), seed {t.settings['seed']}\n"
            f"# start: {start}\n# final: {exact} (rounded to the nearest integer below)\n")
    return head + yaml.safe_dump({"bots": [entry]}, sort_keys=False, default_flow_style=None)


def plot_png(t: Trajectory) -> bytes:
    """Each parameter over the iterations (one panel each), with ``theta +- c_k``."""
    import matplotlib
    from matplotlib.figure import Figure

    n = len(t.names)
    fig = Figure(figsize=(7.0, 0.6 + 1.8 * n), dpi=90, layout="constrained")
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    xs = list(range(len(t.thetas)))
    for j, (ax, p) in enumerate(zip(axes, t.spsa.params)):
        ys = [theta[j] for theta in t.thetas]
        cs = [t.spsa.gains(i * t.spsa.pairs)[0][j] for i in xs]
        ax.fill_between(xs, [max(p.min, y - c) for y, c in zip(ys, cs)],
                        [min(p.max, y + c) for y, c in zip(ys, cs)], color="tab:blue",
                        alpha=0.15, linewidth=0, label="theta +- c_k")
        ax.plot(xs, ys, color="tab:blue", linewidth=1.2, label="theta")
        ax.axhline(p.start, color="grey", linestyle="--", linewidth=0.8, label="start")
        ax.set_ylabel(p.name)
        ax.set_title(f"{p.name}: {p.start:g} -> {ys[-1]:.2f} (in {p.min}..{p.max})",
                     fontsize=9, loc="left")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, loc="best")
    games = t.games_per_iteration
    axes[-1].set_xlabel(f"iteration ({games} game{'s' if games != 1 else ''} each)")
    buf = io.BytesIO()
    with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
        fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def write_report(folder: Path) -> list[Path]:
    """Write :data:`PLOT_FILE` and :data:`VALUES_FILE` into ``folder``; their paths.

    :raises ConfigError: no tuning run in ``folder``.
    """
    t = read_trajectory(folder)
    plot, values = folder / PLOT_FILE, folder / VALUES_FILE
    atomic_write(plot, plot_png(t))
    atomic_write(values, format_values(t).encode("utf-8"))
    return [plot, values]
