"""A tuning run's folder (``arena tune --out DIR``): its files, read back and appended.

* ``tune.json``: the settings (:meth:`~arena.tuning.settings.TuneRun.settings`), written
  once; a run with other settings is refused (:func:`prepare_folder`).
* ``games.jsonl``: every game's record, appended as it finishes (as a tournament's).
* ``pairs.jsonl``: one :class:`PairResult` a line, appended in order (iteration, pair); a
  pair counts once its line is there.  A line torn by a crash (the last) is removed on the
  next start; its games are in ``games.jsonl`` and count again.
* ``trajectory.jsonl``: ``theta`` at the start and after each iteration, with ``c_k``,
  ``R_k``, the flips and the result: derived from the pairs (:func:`trajectory_lines`,
  :func:`check_pairs`) and rewritten on every start if it differs.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from arena.errors import ConfigError
from arena.protocol import SEED_MAX
from arena.records import GameRecord, atomic_write
from arena.tournament import CONFIG_FILE, GAMES_FILE, REJECTED_FILE, read_repaired_games
from arena.tuning.settings import TuneRun
from arena.tuning.spsa import Step

__all__ = ["PAIRS_FILE", "TRAJECTORY_FILE", "TUNE_FILE", "PairResult", "append_line",
           "check_pairs", "pair_result", "prepare_folder", "read_pairs", "trajectory_line",
           "trajectory_lines"]

#: in ``tune --out DIR``: the settings of the run
TUNE_FILE = "tune.json"
#: one line per counted pair, in order
PAIRS_FILE = "pairs.jsonl"
#: one line per finished iteration (and one for the start): derived from the pairs
TRAJECTORY_FILE = "trajectory.jsonl"
#: the file of ``arena sprt --out`` (a folder holds one kind of run)
_SPRT_FILE = "sprt.json"


@dataclass(frozen=True)
class PairResult:
    """One counted pair: its iteration and number, the values each side played, the
    ``+`` side's W-D-L (and the ``-`` side's, against a fixed opponent), and the result
    (``+``'s wins - losses, less ``-``'s against a fixed opponent)."""

    iteration: int
    pair: int
    games: tuple[str, ...]
    plus: dict[str, int]
    minus: dict[str, int]
    plus_wdl: tuple[int, int, int]
    minus_wdl: Optional[tuple[int, int, int]]
    result: int

    def to_json(self) -> str:
        data: dict[str, Any] = {"iteration": self.iteration, "pair": self.pair,
                                "games": list(self.games), "plus": self.plus,
                                "minus": self.minus, "plus_wdl": list(self.plus_wdl)}
        if self.minus_wdl is not None:
            data["minus_wdl"] = list(self.minus_wdl)
        data["result"] = self.result
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, line: str) -> PairResult:
        """:raises ValueError: not a pair line."""
        try:
            d = json.loads(line)
            minus_wdl = d.get("minus_wdl")
            pr = cls(int(d["iteration"]), int(d["pair"]), tuple(map(str, d["games"])),
                     {str(k): int(v) for k, v in d["plus"].items()},
                     {str(k): int(v) for k, v in d["minus"].items()},
                     _wdl(d["plus_wdl"]), None if minus_wdl is None else _wdl(minus_wdl),
                     int(d["result"]))
        except (TypeError, KeyError, AttributeError, ValueError) as e:
            raise ValueError(f"not a pair line ({type(e).__name__}: {e})") from None
        return pr


def _wdl(value: Any) -> tuple[int, int, int]:
    w, d, l = (int(x) for x in value)
    return w, d, l


def _score_wdl(records: Sequence[tuple[GameRecord, str]]) -> tuple[int, int, int]:
    """W-D-L of the side that played ``colour`` in each of ``records``."""
    scores = [r.score(colour) for r, colour in records]
    return scores.count(1.0), scores.count(0.5), scores.count(0.0)


def pair_result(run: TuneRun, step: Step, pair: int, records: Sequence[GameRecord]) -> PairResult:
    """The pair line of ``records`` (the pair's games, in the order of
    :meth:`TuneRun.pair_games`)."""
    names = [p.name for p in run.spsa.params]
    plus = _score_wdl([(records[0], "white"), (records[1], "black")])
    minus = None
    if run.opponent is None:
        result = plus[0] - plus[2]
    else:
        minus = _score_wdl([(records[2], "white"), (records[3], "black")])
        result = (plus[0] - plus[2]) - (minus[0] - minus[2])
    return PairResult(step.iteration, pair, tuple(r.game_id for r in records),
                      dict(zip(names, step.plus_values)), dict(zip(names, step.minus_values)),
                      plus, minus, result)


def read_pairs(path: Path) -> tuple[list[PairResult], int]:
    """The pair lines of ``path`` (none if it does not exist) up to the first that is not
    one, and how many lines follow it (a line torn by a crash: the caller rewrites the
    file without them)."""
    if not path.exists():
        return [], 0
    lines = path.read_bytes().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out: list[PairResult] = []
    for n, line in enumerate(lines):
        try:
            out.append(PairResult.from_json(line.decode("utf-8")))
        except (ValueError, UnicodeDecodeError):
            return out, len(lines) - n
    return out, 0


def append_line(path: Path, text: str) -> None:
    """Append one line in one write and fsync it (as :func:`arena.records.append_record`)."""
    data = (text + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def prepare_folder(folder: Path, shown: str, run: TuneRun, seed: Optional[int], restart: bool,
                   warn: Callable[[str], None]
                   ) -> tuple[int, list[PairResult], dict[str, GameRecord]]:
    """For ``tune --out``, holding the folder's lock: the seed, the pairs counted so far
    and the games saved (by id), after checking that ``tune.json`` (written here for a new
    run) holds the same settings.  Without a ``seed`` a resumed run takes the stored one;
    ``restart`` discards an earlier run's files.  ``warn`` gets a line about repaired files.

    :raises ConfigError: the folder holds another run (naming the changed settings), a
        tournament's or an SPRT's games, an unreadable ``tune.json``, or pairs out of order.
    """
    if (folder / CONFIG_FILE).is_file() or (folder / _SPRT_FILE).is_file():
        kind = "a tournament's results" if (folder / CONFIG_FILE).is_file() else "an SPRT run"
        raise ConfigError(f"{shown} holds {kind}: choose another --output")
    stored_path, games, pairs_path = folder / TUNE_FILE, folder / GAMES_FILE, folder / PAIRS_FILE
    trajectory = folder / TRAJECTORY_FILE
    if restart:
        for path in (games, folder / REJECTED_FILE, pairs_path, trajectory, stored_path):
            path.unlink(missing_ok=True)
    stored: Optional[dict[str, Any]] = None
    if stored_path.exists():
        try:
            data = json.loads(stored_path.read_text(encoding="utf-8"))
            stored = data["settings"] if isinstance(data, dict) else None
        except (OSError, ValueError, KeyError):
            stored = None
        if not isinstance(stored, dict) or not isinstance(stored.get("seed"), int):
            raise ConfigError(f"{stored_path} is unreadable; use --fresh to start over")
    elif (games.exists() and games.stat().st_size) or pairs_path.exists():
        raise ConfigError(f"{shown} holds games of no 'arena tune' run (no {TUNE_FILE}); use "
                          f"--fresh to discard them, or another --output")
    if seed is None:
        seed = (stored["seed"] if stored is not None
                else random.SystemRandom().randrange(SEED_MAX + 1))
    settings = run.settings(seed)
    if stored is None:
        text = json.dumps({"settings": settings, "created": datetime.now(timezone.utc)
                           .isoformat(timespec="seconds")}, indent=2) + "\n"
        atomic_write(stored_path, text.encode("utf-8"))
        return seed, [], {}
    changed = [k for k in sorted(set(stored) | set(settings)) if stored.get(k) != settings.get(k)]
    if changed:
        raise ConfigError(f"{shown} holds a tuning run with other settings (changed: "
                          f"{', '.join(changed)}); use --fresh to discard it, or another "
                          f"--output")
    pairs, torn = read_pairs(pairs_path)
    if torn:
        atomic_write(pairs_path, "".join(p.to_json() + "\n" for p in pairs).encode("utf-8"))
        warn(f"warning: {pairs_path}: removed {torn} unreadable line{'s' if torn > 1 else ''} "
             f"at its end (a crash's torn write); their pairs are counted again")
    moved, kept = read_repaired_games(folder)
    if moved:
        warn(f"warning: {games}: moved {moved} unreadable line{'s' if moved > 1 else ''} to "
             f"{folder / REJECTED_FILE}; any game they held is played again")
    done: dict[str, GameRecord] = {}
    for rec in kept:
        done.setdefault(rec.game_id, rec)
    return seed, pairs, done


def check_pairs(run: TuneRun, seed: int, pairs: Sequence[PairResult],
                shown: str) -> list[tuple[float, ...]]:
    """The trajectory of the stored ``pairs`` (``theta`` at the start and after each
    complete iteration), once each pair is checked to be the next one, with the values its
    iteration's plan gives.

    :raises ConfigError: a pair out of order, or played with other values (the file is not
        this run's).
    """
    spsa = run.spsa
    theta = spsa.start()
    thetas = [theta]
    step: Optional[Step] = None
    total = 0
    for n, pr in enumerate(pairs):
        iteration, pair = divmod(n, spsa.pairs)
        iteration, pair = iteration + 1, pair + 1
        if pair == 1:
            step = spsa.plan(theta, iteration, seed) if iteration <= spsa.iterations else None
            total = 0
        names = [p.name for p in spsa.params]
        if (step is None or (pr.iteration, pr.pair) != (iteration, pair)
                or pr.plus != dict(zip(names, step.plus_values))
                or pr.minus != dict(zip(names, step.minus_values))):
            raise ConfigError(f"{shown}/{PAIRS_FILE}: line {n + 1} is not pair {pair} of "
                              f"iteration {iteration} of this run; use --fresh to start over")
        total += pr.result
        if pair == spsa.pairs:
            assert step is not None
            theta = spsa.update(theta, step, total)
            thetas.append(theta)
    return thetas


def trajectory_lines(run: TuneRun, seed: int, pairs: Sequence[PairResult]) -> list[str]:
    """``trajectory.jsonl``'s lines for the complete iterations of ``pairs``: the start,
    then per iteration ``theta`` after it, its ``c_k``, ``R_k = a_k / c_k^2``, flips and
    summed result, and the games played so far."""
    spsa = run.spsa
    names = [p.name for p in spsa.params]
    thetas = check_pairs(run, seed, pairs, "")
    lines = [json.dumps({"iteration": 0, "games": 0, "theta": dict(zip(names, thetas[0]))},
                        separators=(",", ":"))]
    for i in range(1, len(thetas)):
        step = spsa.plan(thetas[i - 1], i, seed)
        result = sum(p.result for p in pairs[(i - 1) * spsa.pairs:i * spsa.pairs])
        lines.append(trajectory_line(run, step, thetas[i], result))
    return lines


def trajectory_line(run: TuneRun, step: Step, theta: Sequence[float], result: int) -> str:
    """The ``trajectory.jsonl`` line of ``step``'s iteration: ``theta`` after it, the
    summed ``result``, each parameter's ``c_k``, ``R_k = a_k / c_k^2`` and flip, and the
    games of the run so far."""
    names = [p.name for p in run.spsa.params]
    return json.dumps({
        "iteration": step.iteration,
        "games": step.iteration * run.spsa.pairs * run.games_per_pair, "result": result,
        "theta": dict(zip(names, theta)), "c": dict(zip(names, step.c)),
        "R": {n: a / c ** 2 for n, a, c in zip(names, step.a, step.c)},
        "flip": dict(zip(names, step.flips))}, separators=(",", ":"))
