"""Following a results folder as ``arena run``, ``arena sprt --out`` or ``arena tune --out``
writes it: :class:`Follower` reads what was appended since its last look and keeps the
state the ``arena watch`` page shows.

What it reads (and never writes):

* the run's settings, which also say its kind: ``config.json`` (a tournament,
  :data:`arena.resultsfolder.CONFIG_FILE`), ``sprt.json`` (:data:`arena.sprtrun.SPRT_FILE`)
  or ``tune.json`` (:data:`arena.tuning.folder.TUNE_FILE`), read again when they change;
  ``rounds.jsonl`` for a Swiss's tie-breaks and byes (:func:`arena.rounds.folder_ranking`);
* ``games.jsonl`` and, for a tune, ``pairs.jsonl`` and ``trajectory.jsonl``, each from a
  byte offset where the last :meth:`Follower.poll` stopped, a complete line at a time: a
  last line without its newline is a write in progress, read once it is complete.  A file
  that shrank, was replaced (another inode: a ``--restart``, a repair moving torn lines
  aside) or went away is read again from its start, the state it fed started afresh.
  A line that is not a record (or, in the tune's files, not a pair or trajectory line) is
  counted in ``bad_lines`` and skipped, never raised.

Memory does not grow with the games beyond a byte per SPRT game: each game is counted in
:class:`arena.tallies.GameTallies` (bots² numbers) and forgotten; the series keep at most
about :data:`SERIES_POINTS` points (then every other point, twice the step: the idea of
:class:`arena.report.data.ScoreSeries`).

:meth:`Follower.state` is the page's contract, a dict of JSON values (no NaN: a number
that is not finite is None).  Every key is always there (None where it does not apply):

* ``kind``: ``"tournament"``, ``"sprt"``, ``"tune"`` or ``"unknown"`` (no settings file);
* ``title``: the tournament's name, ``"A vs B"`` for an SPRT, the tuned bot's name for a
  tune, the folder's name otherwise; ``folder``: the folder's path;
* ``games``: records read so far; ``total``: the games scheduled (a round robin, gauntlet,
  match or Swiss: :func:`arena.schedule.count_games` of ``config.json``; a tune: its pairs
  times 2 or 4), None where unknown (a knockout, an SPRT); ``finished``: every scheduled
  game is there (a tournament), the test reached a verdict (an SPRT), the last iteration
  is there (a tune), a knockout's champion is decided, else False; ``total_least``
  (a knockout only, else None): the fewest games it plays (a tied match plays on);
* ``updated``: when the state last changed (seconds since the epoch, float; None before
  anything was read); ``bad_lines``: lines skipped in all the files read;
* ``standings``: per variant (in order of first appearance) ``{"variant", "ranked_by"
  ("points" or "score": :data:`arena.standings.RANKINGS`), "rows": [{"rank" (int, the
  same for a shared place), "place" ("5" or "5="), "name", "games", "wins", "draws",
  "losses", "points" (byes included), "score" (percent of the games' points), "forfeits"},
  ...]}``, ranked as the runner ranks its ``standings.csv`` (:func:`arena.standings.places`
  with the run's tie-breaks, entrants without a game last); a knockout's are ranked by
  its bracket (``ranked_by`` ``"bracket"``: a round's losers share the place after the
  players it leaves in, as :func:`arena.rounds.knockout_places`), once its first round is
  paired;
* ``bracket`` (a knockout only, else None): ``{"svg" (the report's bracket picture,
  :func:`arena.report.rounds.bracket_svg`), "champion" (None before the end)}``, None
  before its first round is paired;
* ``crosstable``: per variant ``{"variant", "bots" (the standings' order), "points",
  "games"}``: ``points[i][j]`` what ``bots[i]`` scored against ``bots[j]`` in
  ``games[i][j]`` games (both None where they did not meet, and on the diagonal);
* ``elo``: None before the first fit, else ``{"computed" (epoch seconds), "games" (the
  games it counts), "error" (None, or why the fit failed), "tables": [{"variant" (None:
  pooled), "label", "ranked_by", "rows": [{"rank", "place", "name", "elo", "low95",
  "high95", "prior" (the Elo rests on the prior: no maximum-likelihood Elo), "games",
  "wins", "draws", "losses", "points", "los_next"}, ...]}, ...]}``: :func:`arena.ratings.
  rate_all` (``arena rate``'s tables), fitted again at most every ``elo_every`` seconds;
* ``recent``: the last :data:`RECENT_GAMES` games, newest last, each ``{"id", "variant",
  "white", "black", "result", "termination", "plies", "upset"}``, ``upset`` True when the
  winner's Elo (in the last fit, its variant's table) is :data:`UPSET_GAP` or more below the
  loser's;
  ``last_upset``: the last game whose winner was rated so far below its loser when it arrived (an
  entry of the same shape plus ``"gap"``, the Elo difference), None before any;
* ``sprt`` (an SPRT only): ``{"a", "b", "model", "elo0", "elo1", "alpha", "beta", "lower",
  "upper" (the LLR bounds), "pairs" (pairs counted), "llr": [[games, llr], ...], "elo":
  [[games, elo, low95, high95], ...] (A's pentanomial Elo), "pentanomial": [LL, LD,
  WL+DD, WD, WW], "wdl": [w, d, l] (A's), "verdict": None, "H0" or "H1"}``, counted as
  ``arena sprt`` counts: the pairs of its seed's games, in pair order (a pair counts once
  both games are there), until the verdict (:class:`arena.ratings.SprtTest`);
* ``tune`` (a tune only): ``{"bot", "params": {name: [[iteration, value], ...]} (theta
  from ``trajectory.jsonl``, iteration 0 the start), "ranges": {name: [min, max]},
  "results": [[iteration, result], ...], "iterations" (done), "total_iterations",
  "pairs" (pairs counted in ``pairs.jsonl``), "pairs_per_iteration", "last_pair" (None or
  ``{"iteration", "pair", "plus", "minus", "result"}``)}``.
"""

from __future__ import annotations

import copy
import json
import math
import os
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from arena.errors import ArenaError
from arena.ratings import SprtTest, pentanomial_estimate, rate_all, sprt_decision
from arena.records import GameRecord
from arena.resultsfolder import CONFIG_FILE, GAMES_FILE
from arena.rounds import RoundsFileError, bracket_standings, folder_ranking
from arena.schedule import FORMAT_KINDS, Format, count_games
from arena.sprtrun import SPRT_FILE, sprt_game_id
from arena.standings import (DEFAULT_TIEBREAKS, Place, against_points, places, ranking,
                             tally_rows)
from arena.tallies import Game, GameTallies, VariantTally, parse_game_line
from arena.tuning.folder import PAIRS_FILE, TRAJECTORY_FILE, TUNE_FILE, PairResult
from arena.tuning.spsa import Spsa
from arena.watch.bracket import KnockoutView, is_knockout, least_games

__all__ = ["Follower", "Series", "Tail", "SERIES_POINTS", "RECENT_GAMES", "UPSET_GAP"]

#: the most points a series keeps (beyond, every other one, twice the step)
SERIES_POINTS = 2000
#: the games listed in ``recent``
RECENT_GAMES = 10
#: an upset: a win by a bot rated at least this many Elo below its opponent (a smaller gap
#: is well inside the fit's error, whatever the games)
UPSET_GAP = 50.0
#: per kind, the file that holds its settings (the first found decides the kind)
_KIND_FILES = (("tournament", CONFIG_FILE), ("sprt", SPRT_FILE), ("tune", TUNE_FILE))

Json = Any


def _num(x: Optional[float]) -> Optional[float]:
    """``x`` as a JSON number: None for None and for what is not finite."""
    return float(x) if x is not None and math.isfinite(x) else None


class Series:
    """Points added one at a time, at most ``limit`` kept: beyond, every other point is
    dropped and only every ``step``-th point kept from then on (twice the step each time);
    the last point added is always in :meth:`points`."""

    def __init__(self, limit: Optional[int] = None) -> None:
        self.limit = SERIES_POINTS if limit is None else limit
        self.kept: list[list[Optional[float]]] = []
        self.step = 1
        self.count = 0
        self.last: Optional[list[Optional[float]]] = None

    def add(self, *values: Optional[float]) -> None:
        point = [_num(v) for v in values]
        self.count += 1
        self.last = point
        if self.count % self.step == 0:
            self.kept.append(point)
            if len(self.kept) > self.limit:
                self.kept = self.kept[1::2]
                self.step *= 2

    def points(self) -> list[list[Optional[float]]]:
        """The kept points, and the last one added if it was not kept."""
        if self.last is not None and (not self.kept or self.kept[-1] is not self.last):
            return self.kept + [self.last]
        return list(self.kept)


class Tail:
    """An append-only file read from where the last read stopped, a complete line at a
    time (the offset and the file's identity are all it keeps)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.ident: Optional[tuple[int, int]] = None
        #: where the line :meth:`lines` gave last begins in the file
        self.line_start = 0

    def replaced(self) -> bool:
        """Whether the file went away, shrank or is another file (inode) than the one read
        so far; then the next :meth:`lines` start from its beginning."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            gone = self.ident is not None
            self.restart()
            return gone
        except OSError:
            return False
        ident = (st.st_dev, st.st_ino)
        if self.ident is not None and (ident != self.ident or st.st_size < self.offset):
            self.restart()
            return True
        return False

    def restart(self) -> None:
        """Read the file from its start next time."""
        self.offset, self.ident = 0, None

    def lines(self) -> Iterator[bytes]:
        """The complete lines appended since the last call, without their newlines (blank
        ones too), read one at a time; nothing when the file does not exist."""
        try:
            f = open(self.path, "rb")
        except OSError:
            return
        with f:
            st = os.fstat(f.fileno())
            ident = (st.st_dev, st.st_ino)
            if self.ident is None:
                self.ident = ident
            elif ident != self.ident:
                return  # replaced since :meth:`replaced` looked: the next poll starts over
            f.seek(self.offset)
            for line in f:
                if not line.endswith(b"\n"):
                    return  # a write in progress: read once complete
                self.line_start = self.offset
                self.offset += len(line)
                yield line[:-1]


def _read_settings(path: Path) -> Optional[dict[str, Any]]:
    """A settings file's settings (``config.json``'s ``config``, ``sprt.json``'s and
    ``tune.json``'s ``settings``), None when unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    inner = data.get("config", data.get("settings")) if isinstance(data, dict) else None
    return inner if isinstance(inner, dict) else None


def _stamp(path: Path) -> Optional[tuple[int, int, int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


class _SprtCount:
    """An SPRT's test fed as ``arena sprt`` feeds it: the pairs of its seed's games
    (:func:`arena.sprtrun.sprt_game_id`) in pair order, A's score in each game kept as one
    byte until its pair is counted, until the verdict."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.a = str(settings["a"]["name"])
        self.b = str(settings["b"]["name"])
        self.tag = f"sprt-{int(settings['seed'])}"
        # SprtRun.new_test's test, from the settings it stored
        self.test = SprtTest(float(settings["elo0"]), float(settings["elo1"]),
                             float(settings["alpha"]), float(settings["beta"]),
                             model=settings.get("model", "logistic"))
        self.scores = bytearray()  # per game (2 per pair): 0 not yet, else 1 + 2 × A's score
        self.next_pair = 1
        self.verdict: Optional[str] = None
        self.llr = Series()
        self.elo = Series()

    def add(self, game: Game) -> None:
        """Count ``game`` if it is one of the test's, and every pair it completes."""
        k = game.pair
        if game.tournament != self.tag or not isinstance(k, int) or k < 1:
            return
        g = next((g for g in (0, 1) if game.game_id == sprt_game_id(self.tag, k, g)), None)
        if g is None:
            return
        index = 2 * (k - 1) + g
        if len(self.scores) <= index:
            self.scores.extend(bytes(index + 1 - len(self.scores)))
        self.scores[index] = 1 + int(2 * game.score("white" if g == 0 else "black"))
        self._advance()

    def _advance(self) -> None:
        scores, test = self.scores, self.test
        while self.verdict is None:
            i = 2 * (self.next_pair - 1)
            if i + 1 >= len(scores) or not scores[i] or not scores[i + 1]:
                return
            test.add_games((scores[i] - 1) / 2, (scores[i + 1] - 1) / 2)
            self.next_pair += 1
            llr = test.llr
            self.verdict = sprt_decision(llr, test.bounds)
            games = 2 * test.pairs
            est = pentanomial_estimate(test.counts)
            self.llr.add(games, llr)
            self.elo.add(games, est.elo, est.elo - est.elo95, est.elo + est.elo95)

    def state(self) -> dict[str, Json]:
        t = self.test
        lower, upper = t.bounds
        return {"a": self.a, "b": self.b, "model": t.model, "elo0": t.elo0, "elo1": t.elo1,
                "alpha": t.alpha, "beta": t.beta, "lower": _num(lower), "upper": _num(upper),
                "pairs": t.pairs, "llr": self.llr.points(), "elo": self.elo.points(),
                "pentanomial": list(t.counts), "wdl": list(t.wdl), "verdict": self.verdict}


class _TuneCount:
    """A tune's trajectory (``trajectory.jsonl``) and pairs (``pairs.jsonl``)."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.spsa = Spsa.from_settings(settings)
        self.bot = str(settings["bot"]["name"])
        #: games per pair: + against -, or each against the fixed opponent in both colours
        self.per_pair = 2 if settings.get("opponent") is None else 4
        self.reset()

    def reset(self) -> None:
        self.params = {p.name: Series() for p in self.spsa.params}
        self.results = Series()
        self.iteration = 0
        self.pairs = 0
        self.last_pair: Optional[PairResult] = None

    @property
    def total(self) -> int:
        return self.spsa.total_pairs * self.per_pair

    def add_trajectory(self, raw: bytes) -> None:
        """One ``trajectory.jsonl`` line (:func:`arena.tuning.folder.trajectory_line`).

        :raises ValueError: not a trajectory line.
        """
        try:
            d = json.loads(raw)
            iteration, theta = int(d["iteration"]), d["theta"]
            values = {name: float(theta[name]) for name in self.params}
        except (TypeError, KeyError, AttributeError) as e:
            raise ValueError(f"not a trajectory line ({type(e).__name__}: {e})") from None
        for name, value in values.items():
            self.params[name].add(iteration, value)
        if iteration > 0 and isinstance(d.get("result"), (int, float)):
            self.results.add(iteration, d["result"])
        self.iteration = max(self.iteration, iteration)

    def add_pair(self, raw: bytes) -> None:
        """One ``pairs.jsonl`` line (:meth:`PairResult.from_json`; its ``ValueError``)."""
        try:
            self.last_pair = PairResult.from_json(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise ValueError(str(e)) from None
        self.pairs += 1

    def state(self) -> dict[str, Json]:
        last = self.last_pair
        return {"bot": self.bot,
                "params": {name: s.points() for name, s in self.params.items()},
                "ranges": {p.name: [p.min, p.max] for p in self.spsa.params},
                "results": self.results.points(), "iterations": self.iteration,
                "total_iterations": self.spsa.iterations, "pairs": self.pairs,
                "pairs_per_iteration": self.spsa.pairs,
                "last_pair": None if last is None else {
                    "iteration": last.iteration, "pair": last.pair, "plus": last.plus,
                    "minus": last.minus, "result": last.result}}


class Follower:
    """The state of the results folder ``folder`` as it grows (see the module's
    docstring): :meth:`poll` reads what was appended, :meth:`state` gives the page's dict.
    The Elo fit runs at most every ``elo_every`` seconds of ``clock`` (a monotonic clock in
    seconds)."""

    def __init__(self, folder: Path, *, elo_every: float = 2.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.folder = Path(folder)
        self.elo_every = elo_every
        self.clock = clock
        self._games_tail = Tail(self.folder / GAMES_FILE)
        self._pairs_tail = Tail(self.folder / PAIRS_FILE)
        self._trajectory_tail = Tail(self.folder / TRAJECTORY_FILE)
        self.kind = "unknown"
        self.settings: Optional[dict[str, Any]] = None
        self._stamp: Optional[tuple[int, int, int]] = None
        self.updated: Optional[float] = None
        self._reset_games()
        self._tune_bad = 0
        self._tune: Optional[_TuneCount] = None
        self._state = self._build()

    # -- reading -----------------------------------------------------------------------

    def poll(self) -> bool:
        """Read what was appended to the folder's files since the last poll; whether the
        state changed (a game, a line, the settings, a new Elo fit).  Never raises for
        what the files hold."""
        changed = self._read_settings()
        if self._games_tail.replaced():
            self._reset_games()
            changed = True
        for raw in self._games_tail.lines():
            changed |= self._add_line(raw)
        if self._knockout is not None and self._knockout.rounds_changed():
            changed = True  # a round paired: the bracket shows it before its first game
        if self._tune is not None:
            changed |= self._read_tune(self._tune)
        dirty = changed
        changed |= self._fit_elo()
        if changed:
            self.updated = time.time()
            self._state = self._build(dirty)
        return changed

    def _read_settings(self) -> bool:
        """Read the settings file again if it changed; a new kind, or an SPRT's or tune's
        other settings, start the state afresh."""
        kind, path = next(((k, self.folder / name) for k, name in _KIND_FILES
                           if (self.folder / name).is_file()), ("unknown", None))
        stamp = _stamp(path) if path is not None else None
        if kind == self.kind and stamp == self._stamp:
            return False
        settings = _read_settings(path) if path is not None else None
        fresh = kind != self.kind or (kind != "tournament" and settings != self.settings)
        self.kind, self.settings, self._stamp = kind, settings, stamp
        if fresh:
            for tail in (self._games_tail, self._pairs_tail, self._trajectory_tail):
                tail.restart()
            self._reset_games()
            self._tune_bad, self._tune = 0, None
            if kind == "tune" and settings is not None:
                try:
                    self._tune = _TuneCount(settings)
                except (KeyError, TypeError, ValueError):
                    self._tune = None
        return True

    def _reset_games(self) -> None:
        """Forget every game (``games.jsonl`` is read again from its start)."""
        self.tallies = GameTallies()
        self.games = 0
        self._games_bad = 0
        self._recent: deque[dict[str, Json]] = deque(maxlen=RECENT_GAMES)
        self._last_upset: Optional[dict[str, Json]] = None
        # where the games the page links (the recent ones, the last upset) begin in
        # games.jsonl, so that opening one reads one line, not the whole file
        self._where: dict[str, int] = {}
        self._sprt: Optional[_SprtCount] = None
        if self.kind == "sprt" and self.settings is not None:
            try:
                self._sprt = _SprtCount(self.settings)
            except (KeyError, TypeError, ValueError, ArenaError):
                self._sprt = None
        self._elo: Optional[dict[str, Json]] = None
        self._elo_at: Optional[float] = None
        self._elo_games = 0
        self._ratings: dict[Optional[str], dict[str, float]] = {}
        self._knockout = (KnockoutView(self.folder) if self.kind == "tournament"
                          and is_knockout(self.settings) else None)

    def _add_line(self, raw: bytes) -> bool:
        """Count one line of ``games.jsonl``: a record, a blank line (nothing) or a bad one."""
        if not raw.strip():
            return False
        try:
            item = parse_game_line(raw)  # the tallies' reader: no record built for most
            game = Game(item, None) if isinstance(item, GameRecord) else Game(None, item)
            self.tallies.add(game)
        except (ValueError, TypeError, KeyError, AttributeError, ArenaError):
            self._games_bad += 1
            return True
        self.games += 1
        if self._knockout is not None:
            self._knockout.add(game.full())
        entry = {"id": game.game_id, "variant": game.variant, "white": game.white,
                 "black": game.black, "result": game.result,
                 "termination": game.termination, "plies": game.plies}
        gap = self._gap(entry)
        if gap is not None and gap >= UPSET_GAP:
            self._last_upset = {**entry, "upset": True, "gap": gap}
        self._recent.append(entry)
        self._where[game.game_id] = self._games_tail.line_start
        if len(self._where) > 2 * RECENT_GAMES:
            keep = {e["id"] for e in self._recent}
            if self._last_upset is not None:
                keep.add(self._last_upset["id"])
            self._where = {k: v for k, v in self._where.items() if k in keep}
        if self._sprt is not None:
            self._sprt.add(game)
        return True

    def offset_of(self, game_id: str) -> Optional[int]:
        """Where ``game_id``'s line begins in ``games.jsonl``, for the games the page links
        (the recent ones and the last upset); None for the others (and where the file was
        read again since: check the line's id)."""
        return self._where.get(game_id)

    def _gap(self, entry: dict[str, Json]) -> Optional[float]:
        """The loser's Elo less the winner's in the last fit (None for a draw or where
        either has none): an upset from :data:`UPSET_GAP` on."""
        winner = {"1-0": "white", "0-1": "black"}.get(entry["result"])
        if winner is None:
            return None
        elo = self._ratings.get(entry["variant"], {})
        loser = "black" if winner == "white" else "white"
        w, lo = elo.get(entry[winner]), elo.get(entry[loser])
        return None if w is None or lo is None else lo - w

    def _read_tune(self, tune: _TuneCount) -> bool:
        """Read the tune's new trajectory and pair lines; one of its files rewritten (a
        start rewrites the trajectory), both are read again from their starts."""
        tails = ((self._trajectory_tail, tune.add_trajectory),
                 (self._pairs_tail, tune.add_pair))
        changed = any([tail.replaced() for tail, _ in tails])
        if changed:
            tune.reset()
            self._tune_bad = 0
            for tail, _ in tails:
                tail.restart()
        for tail, add in tails:
            for raw in tail.lines():
                if not raw.strip():
                    continue
                changed = True
                try:
                    add(raw)
                except ValueError:
                    self._tune_bad += 1
        return changed

    def _fit_elo(self) -> bool:
        """Fit the Elo tables again if games came since the last fit and ``elo_every``
        seconds have passed; whether it did."""
        if self.games == self._elo_games and self._elo is not None:
            return False
        now = self.clock()
        if self._elo_at is not None and now - self._elo_at < self.elo_every:
            return False
        if not self.games:
            return False
        self._elo_at, self._elo_games = now, self.games
        error, tables = None, []
        ratings: dict[Optional[str], dict[str, float]] = {}
        try:
            breaks, byes = self._ranking()
            for s in rate_all(self._finished_tallies(), tiebreaks=breaks, byes=byes or None):
                tables.append(_elo_table(s))
                ratings[s.variant] = {r.bot: float(r.rating) for r in s.rows
                                      if r.rating is not None and math.isfinite(r.rating)}
        except (ArenaError, ValueError, ArithmeticError) as e:
            error = f"{type(e).__name__}: {e}"
        self._ratings = ratings
        self._elo = {"computed": time.time(), "games": self.games, "error": error,
                     "tables": tables}
        return True

    # -- the state -----------------------------------------------------------------------

    def state(self) -> dict[str, Json]:
        """The page's state (see the module's docstring): JSON values only."""
        return self._state

    def _finished_tallies(self) -> GameTallies:
        """A copy of the tallies with their open pairs closed (lone games so far): closing
        the tallies' own would split a pair whose second game is yet to come."""
        return copy.deepcopy(self.tallies).finish()

    def _ranking(self) -> tuple[tuple[str, ...], dict[str, float]]:
        """The run's tie-breaks and Swiss byes (:func:`arena.rounds.folder_ranking`)."""
        chosen = (self.settings or {}).get("tiebreaks") if self.kind == "tournament" else None
        try:
            return folder_ranking(self.folder, chosen)
        except RoundsFileError:
            return DEFAULT_TIEBREAKS, {}

    def _build(self, dirty: bool = True) -> dict[str, Json]:
        """The state's dict; the tables only when games came (``dirty``)."""
        old = getattr(self, "_state", None)
        if dirty or old is None:
            standings, crosstable = self._tables()
        else:
            standings, crosstable = old["standings"], old["crosstable"]
        total, finished, title = self._progress()
        ko = self._knockout
        recent = [{**e, "upset": (self._gap(e) or 0.0) >= UPSET_GAP} for e in self._recent]
        return {"kind": self.kind, "title": title, "folder": str(self.folder),
                "games": self.games, "total": total, "finished": finished,
                "total_least": least_games(self.settings or {}) if ko is not None else None,
                "bracket": ko.state() if ko is not None else None,
                "updated": self.updated,
                "bad_lines": self._games_bad + self._tune_bad,
                "standings": standings, "crosstable": crosstable, "elo": self._elo,
                "recent": recent, "last_upset": self._last_upset,
                "sprt": self._sprt.state() if self._sprt is not None else None,
                "tune": self._tune.state() if self._tune is not None else None}

    def _progress(self) -> tuple[Optional[int], bool, str]:
        """``total``, ``finished`` and ``title`` of the state."""
        s = self.settings or {}
        if self.kind == "tournament":
            total = _tournament_total(s)
            done = (self._knockout.champion is not None if self._knockout is not None
                    else total is not None and self.games >= total)
            return total, done, str(s.get("name") or self.folder.name)
        if self.kind == "sprt" and self._sprt is not None:
            return None, self._sprt.verdict is not None, f"{self._sprt.a} vs {self._sprt.b}"
        if self.kind == "tune" and self._tune is not None:
            return (self._tune.total, self._tune.iteration >= self._tune.spsa.iterations,
                    self._tune.bot)
        return None, False, self.folder.name

    def _tables(self) -> tuple[list[dict[str, Json]], list[dict[str, Json]]]:
        """``standings`` and ``crosstable``, per variant."""
        if self._knockout is not None:
            self._knockout.update()
        if not self.games:
            return [], []
        tallies = self._finished_tallies()
        breaks, byes = self._ranking()
        players = [str(b.get("name")) for b in (self.settings or {}).get("bots") or ()
                   if isinstance(b, dict)] if self.kind == "tournament" else []
        variants = tallies.variant_names
        share = {n: p / len(variants) for n, p in byes.items()} if byes else None
        standings, crosstable = [], []
        for variant in variants:
            table = tallies.table(variant)
            placed = places(table, tiebreaks=breaks, byes=share)
            ranked_by = ranking(table, byes=share)
            if self._knockout is not None and self._knockout.places:  # by the bracket
                named = {p.name for p in placed}  # and a bye's player before its first game
                placed += [Place(n, len(placed) + 1, False, 0.0, None, 0.0)
                           for n in sorted(self._knockout.places) if n not in named]
                placed = bracket_standings({variant: placed}, self._knockout.places)[variant]
                ranked_by = "bracket"
            rows = _standing_rows(table, placed, players)
            standings.append({"variant": variant, "ranked_by": ranked_by, "rows": rows})
            crosstable.append(_crosstable(table, [r["name"] for r in rows]))
        return standings, crosstable


def _standing_rows(table: VariantTally, placed: list[Place],
                   players: list[str]) -> list[dict[str, Json]]:
    """The rows of one variant's table as :func:`arena.standings.compute_standings` ranks
    them: the placed bots, then the entrants without a game (by name, sharing the place
    after the last)."""
    counts = tally_rows(table)
    done = {p.name for p in placed}
    rest = sorted({n for n in players if n not in done})
    placed = placed + [Place(n, len(placed) + 1, len(rest) > 1, 0.0, None, 0.0) for n in rest]
    rows = []
    for p in placed:
        c = counts.get(p.name)
        wins, draws, losses = (c.wins, c.draws, c.losses) if c is not None else (0, 0, 0)
        games = wins + draws + losses
        rows.append({"rank": p.rank, "place": p.text, "name": p.name, "games": games,
                     "wins": wins, "draws": draws, "losses": losses,
                     "points": p.points,
                     "score": _num(100.0 * (wins + 0.5 * draws) / games) if games else None,
                     "forfeits": c.forfeits if c is not None else 0})
    return rows


def _crosstable(table: VariantTally, bots: list[str]) -> dict[str, Json]:
    """What each bot scored against each other in how many games (None: never met)."""
    points = against_points(table)
    games: dict[tuple[str, str], int] = {}
    for (w, b), counts in table.results.items():
        if w != b:
            games[w, b] = games.get((w, b), 0) + sum(counts)
            games[b, w] = games.get((b, w), 0) + sum(counts)
    return {"variant": table.variant, "bots": bots,
            "points": [[points.get((a, b)) if (a, b) in games else None for b in bots]
                       for a in bots],
            "games": [[games.get((a, b)) for b in bots] for a in bots]}


def _elo_table(s: Any) -> dict[str, Json]:
    """One :class:`arena.ratings.Standings` as the state's Elo table."""
    rows = []
    for r in s.rows:
        elo, half = _num(r.rating), _num(r.rating95)
        rows.append({"rank": r.rank, "place": r.place, "name": r.bot, "elo": elo,
                     "low95": elo - half if elo is not None and half is not None else None,
                     "high95": elo + half if elo is not None and half is not None else None,
                     "prior": r.prior, "games": r.games, "wins": r.wins, "draws": r.draws,
                     "losses": r.losses, "points": r.points, "los_next": _num(r.los_next)})
    return {"variant": s.variant, "label": s.label, "ranked_by": s.ranked_by, "rows": rows}


def _tournament_total(config: dict[str, Any]) -> Optional[int]:
    """The games ``config.json``'s configuration schedules (:func:`arena.schedule.
    count_games`); None for a knockout (a tied match plays on) or what cannot be read."""
    fmt = config.get("format")
    kind = next((k for k in FORMAT_KINDS if isinstance(fmt, dict) and fmt.get("type") == k),
                None)
    if kind is None or kind == "knockout" or not isinstance(fmt, dict):
        return None
    try:
        players = [str(b["name"]) for b in config["bots"]]
        return count_games(Format(kind, int(fmt.get("rounds", 1)),
                                  tuple(map(str, fmt.get("seeds") or ()))),
                           players, len(config["variants"]),
                           games_per_pairing=int(config["games_per_pairing"]))
    except (KeyError, TypeError, ValueError):
        return None
