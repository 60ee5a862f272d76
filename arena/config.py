"""Tournament configuration: a YAML file checked once, at the edge, into frozen dataclasses.

Every error is one :class:`~arena.errors.ConfigError` naming the file, the key path and what
was expected, e.g. ``demo.yaml: bots[2].path: no bot folder at bots/nope (no bot.yaml)``.
Nothing past :func:`load_config` sees a raw dict.  The format is documented in
``docs/TOURNAMENTS.md``.

Relative paths (bot folders, globs, variant files) are looked up from the current directory
first, then from the directory of the tournament file (an opening book: from the tournament
file's directory first); ``output`` is relative to the current directory.

The module is longer than the usual 700 lines because it is the one checker of every key of
the tournament file, each error naming its key path; split, the key paths would be spread
over several modules.
"""

from __future__ import annotations

import dataclasses
import functools
import glob
import hashlib
import json
import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

from arena import ranges as R
from arena.adjudication import Adjudication, parse_adjudication
from arena.errors import ConfigError
from arena.hints import did_you_mean
from arena.openings import (BOOK_FORMATS, BOOK_ORDERS, Book, BookOrder, book_format, check_start,
                            parse_book, read_book_text)
from arena.protocol import format_setup
from arena.standings import parse_tiebreaks
from arena.schedule import (FORMAT_KINDS, SCHEME, Format, Slot, build_schedule, count_games,
                            count_pairings)
from arena.swiss import rounds_for
from arena.variants import Variant, load_variant

if TYPE_CHECKING:
    from arena.bot import BotSpec
    from arena.clock import TimeControl

TOP_KEYS = ("name", "bots", "variants", "format", "games_per_pairing", "openings", "time",
            "workers", "seed", "output", "report", "pgn_out", "executor", "isolation", "restart",
            "adjudicate", "cluster", "tiebreaks", "start_position")
BOT_KEYS = ("path", "engine", "name", "options")
FORMAT_KEYS = ("type", "rounds", "seeds", "tiebreak_pairs")
OPENING_KEYS = ("random", "file", "order", "format", "plies")
TIME_KEYS = ("movetime", "clock", "nodes", "depth", "handshake", "margin", "charge",
             "wall_factor")
EXECUTOR_KEYS = ("type", "scheduler", "ship_bots")
CLUSTER_KEYS = ("wait",)
#: ``cluster.wait``: seconds a Dask run waits for a worker (or its scheduler) before it stops
CLUSTER_WAIT_S = 600.0
#: ``cluster.wait``'s range, in seconds (1 s to a week)
CLUSTER_WAIT_RANGE = (1.0, 7 * 86400.0)
_WAIT_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h)?\s*$")
#: where games are played: this machine's process pool, or a Dask cluster (docs/CLUSTER.md)
EXECUTOR_KINDS = ("local", "dask")
#: ``executor.scheduler``: a local cluster started for the run
LOCAL_SCHEDULER = "local"
#: the largest tournament file read (bytes)
TOURNAMENT_FILE_CAP = 1 << 20
#: keys of the normalised configuration that do not change which games are played
_UNHASHED = ("workers", "output", "report", "executor", "isolation", "restart", "tiebreaks")
#: ``restart``: a fresh bot process for every game, or one kept for a pairing's games
RESTART_MODES = ("per-game", "per-pairing")
_SCHEDULER_RE = re.compile(r"^(?:(tcp|tls)://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$")


@dataclass(frozen=True)
class ExecutorConfig:
    """Where the games are played.

    ``kind`` ``local``: a process pool on this machine.  ``dask``: a Dask cluster, started
    for the run (``scheduler`` ``local``: a LocalCluster of ``workers`` processes) or reached
    at ``scheduler`` (``tcp://HOST:PORT`` or ``tls://HOST:PORT``); ``ship_bots`` sends the bot
    folders to the workers instead of expecting them at the same path there.
    """

    kind: str = "local"
    scheduler: str = LOCAL_SCHEDULER
    ship_bots: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The setting as JSON values (part of ``config.json``, not of its hash)."""
        return {"type": self.kind, "scheduler": self.scheduler, "ship_bots": self.ship_bots}


def parse_scheduler(value: Any, where: str) -> str:
    """A scheduler address checked and normalised: ``local``, or ``tcp://HOST:PORT`` /
    ``tls://HOST:PORT`` (a bare ``HOST:PORT`` means tcp).

    :raises ConfigError: at ``where``, for anything else.
    """
    if value == LOCAL_SCHEDULER:
        return LOCAL_SCHEDULER
    match = _SCHEDULER_RE.match(value) if isinstance(value, str) else None
    if match is None or not 0 < int(match.group(3)) < 65536:
        raise ConfigError(f"expected 'local' or a scheduler address such as tcp://HOST:8786 "
                          f"(or tls://HOST:PORT), got {value!r}", where)
    return f"{match.group(1) or 'tcp'}://{match.group(2)}:{int(match.group(3))}"


def check_executor(kind: str, scheduler: Optional[str], ship_bots: Optional[bool], *,
                   where: Mapping[str, str]) -> ExecutorConfig:
    """An :class:`ExecutorConfig` from its parts (None: not given), checked together.

    ``where`` names each part for messages (``executor.type`` in a file, ``--executor`` on
    the command line).

    :raises ConfigError: an unknown kind, a bad address, or a cluster setting with the local
        executor.
    """
    if kind not in EXECUTOR_KINDS:
        raise ConfigError(f"expected one of {', '.join(EXECUTOR_KINDS)}, got {kind!r}",
                          where["type"])
    if scheduler is not None:
        scheduler = parse_scheduler(scheduler, where["scheduler"])
    if ship_bots is not None and not isinstance(ship_bots, bool):
        raise ConfigError(f"expected true or false, got {ship_bots!r}", where["ship_bots"])
    if kind == "local":
        for key, value in (("scheduler", scheduler), ("ship_bots", ship_bots)):
            if value is not None and value is not False:
                raise ConfigError(f"only the dask executor uses it ({where['type']} is local)",
                                  where[key])
        return ExecutorConfig()
    return ExecutorConfig(kind, scheduler or LOCAL_SCHEDULER, bool(ship_bots))


def parse_wait(value: Any, where: str) -> float:
    """A duration in seconds: a number, or text such as ``90``, ``30s``, ``10m`` or ``1h``,
    within :data:`CLUSTER_WAIT_RANGE`.

    :raises ConfigError: at ``where``, for anything else.
    """
    seconds: Optional[float] = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and (match := _WAIT_RE.match(value)):
        unit = {"m": 60.0, "min": 60.0, "h": 3600.0}.get(match.group(2) or "s", 1.0)
        seconds = float(match.group(1)) * unit
    low, high = CLUSTER_WAIT_RANGE
    if seconds is None or not low <= seconds <= high:
        raise ConfigError(f"expected a duration from 1 s to 7 days, in seconds or with a "
                          f"unit (30s, 10m, 1h), got {_shown(value)}", where)
    return seconds


def with_executor(config: TournamentConfig, *, kind: Optional[str] = None,
                  scheduler: Optional[str] = None,
                  ship_bots: Optional[bool] = None) -> TournamentConfig:
    """``config`` with its executor overridden from the command line (None: keep the file's).

    A ``scheduler`` or ``ship_bots`` alone implies the dask executor.  Errors name the
    options (``--scheduler``...).

    :raises ConfigError: as :func:`check_executor`.
    """
    old = config.executor
    if kind is None:
        kind = "dask" if scheduler is not None or ship_bots else old.kind
    if kind == "dask" and old.kind == "dask":
        scheduler = old.scheduler if scheduler is None else scheduler
        ship_bots = old.ship_bots if ship_bots is None else ship_bots
    executor = check_executor(kind, scheduler, ship_bots, where=_CLI_EXECUTOR)
    return dataclasses.replace(config, executor=executor)


_FILE_EXECUTOR = {k: f"executor.{k}" for k in EXECUTOR_KEYS}
_CLI_EXECUTOR = {"type": "--executor", "scheduler": "--scheduler", "ship_bots": "--ship-bots"}
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class OpeningBook:
    """``openings: {file: ..., order: ...}``: the book's path (as written, for messages), its
    order, the SHA-256 of its text (a changed book changes the games) and its lines checked
    for each of the tournament's variants (by variant name)."""

    path: str
    order: BookOrder
    sha256: str
    books: Mapping[str, Book]
    #: ``text`` (one opening a line) or ``pgn`` (one a game); ``plies``: each cut to that
    #: many turns (None: whole)
    fmt: str = "text"
    plies: Optional[int] = None
    #: ``start_position:``: every game starts from this position (a book of one position)
    position: Optional[str] = None

    def to_dict(self) -> dict[str, Any]:
        """The book as JSON values (part of ``config.json``; ``format`` and ``plies`` only
        when not the defaults, so that a text book's configuration keeps its hash)."""
        if self.position is not None:
            return {"start_position": self.position}
        return {"file": self.path, "order": self.order, "sha256": self.sha256,
                **({"format": self.fmt} if self.fmt != "text" else {}),
                **({"plies": self.plies} if self.plies is not None else {})}


@dataclass(frozen=True)
class TournamentConfig:
    """A checked tournament configuration.

    ``bots`` are the entrants in file order (globs expanded, sorted), each with its display
    name (a resumed tournament puts them in the order they joined it, see
    :func:`arena.tournament.prepare_results`); ``opening_turns`` is the number of random
    opening turns (0: none) and ``book`` the opening book (None: none); ``workers`` is the
    size of the worker pool; ``output`` the results folder; ``scheme`` the schedule's scheme
    (:data:`arena.schedule.SCHEME`; 1 for a results folder made before tournaments grew).
    """

    name: str
    bots: tuple[BotSpec, ...]
    variants: tuple[Variant, ...]
    format: Format
    time_control: TimeControl
    games_per_pairing: int = 2
    opening_turns: int = 0
    workers: int = 1
    seed: int = 0
    output: Path = Path("results")
    report: bool = True
    #: ``pgn_out``: a PGN file each game is appended to as it ends (:mod:`arena.pgn`); not
    #: part of the stored configuration (a run may resume with or without it)
    pgn_out: Optional[Path] = None
    source: Optional[Path] = None
    executor: ExecutorConfig = ExecutorConfig()
    #: how bots are sandboxed (an ``arena.sandbox.Isolation``); None: the best available
    isolation: Any = None
    book: Optional[OpeningBook] = None
    scheme: int = SCHEME
    #: ``per-game`` (a fresh process for every game) or ``per-pairing`` (kept between the
    #: games of a pairing: docs/TOURNAMENTS.md, *restart*)
    restart: str = "per-game"
    #: ending games early (:mod:`arena.adjudication`); off by default
    adjudicate: Adjudication = Adjudication()
    #: ``cluster.wait``: seconds a run on Dask waits for a worker or for its scheduler
    #: before it stops (docs/CLUSTER.md, *Failures*); not part of the configuration's hash
    cluster_wait: float = CLUSTER_WAIT_S
    #: the standings' tie-breaks, in order (:data:`arena.standings.TIEBREAKS`); None: the
    #: format's default (a Swiss's :data:`~arena.standings.SWISS_TIEBREAKS`, else direct
    #: encounter then Sonneborn-Berger).  They rank, they decide no game: not hashed
    tiebreaks: Optional[tuple[str, ...]] = None

    @property
    def chosen_tiebreaks(self) -> tuple[str, ...]:
        """:attr:`tiebreaks`, or the format's default."""
        from arena.standings import DEFAULT_TIEBREAKS, SWISS_TIEBREAKS

        if self.tiebreaks is not None:
            return self.tiebreaks
        return SWISS_TIEBREAKS if self.format.kind == "swiss" else DEFAULT_TIEBREAKS

    @property
    def players(self) -> tuple[str, ...]:
        """The entrants' display names, in order."""
        return tuple(b.name for b in self.bots)

    def normalised(self) -> dict[str, Any]:
        """The configuration as plain JSON values (stored as ``config.json``)."""
        return {
            "name": self.name,
            "bots": [_bot_dict(b) for b in self.bots],
            "variants": [v.to_dict() for v in self.variants],
            "format": {"type": self.format.kind, "rounds": self.format.rounds,
                       "seeds": list(self.format.seeds),
                       **({"tiebreak_pairs": self.format.tiebreak_pairs}
                          if self.format.kind == "knockout" else {})},
            "games_per_pairing": self.games_per_pairing,
            "openings": (self.book.to_dict() if self.book is not None
                         else {"random": self.opening_turns}),
            "time": _plain(self.time_control.to_dict()),
            "seed": self.seed,
            "schedule": self.scheme,
            "workers": self.workers,
            "output": str(self.output),
            "report": self.report,
            "executor": self.executor.to_dict(),
            "isolation": self.isolation.to_dict() if self.isolation is not None else "best",
            "restart": self.restart,
            # only when on: a configuration without it keeps the digest it always had
            **({"adjudicate": self.adjudicate.to_dict()} if self.adjudicate.active else {}),
            **({"tiebreaks": list(self.tiebreaks)} if self.tiebreaks is not None else {}),
        }

    def digest(self) -> str:
        """A hash of everything that decides which games are played and how.

        The worker count, the output folder, the report switch and the executor are left out:
        changing them does not change the games, so a tournament may resume with another
        worker count, or on a cluster.
        """
        return config_digest(self.normalised())

    def schedule(self) -> list[Slot]:
        """Every game of the tournament, in playing order (:func:`arena.schedule.build_schedule`
        of this configuration)."""
        return build_schedule(self.players, self.variants, self.format,
                              games_per_pairing=self.games_per_pairing,
                              opening_turns=self.opening_turns, seed=self.seed,
                              books=self.book.books if self.book is not None else None,
                              book_order=self.book.order if self.book is not None
                              else "sequential", scheme=self.scheme)


def default_workers() -> int:
    """``workers: auto``: games at once that leave the machine able to run the bots.

    A game needs one core: its two bots think in turn, never both at once.  One core is
    kept for the referees (each reads and checks every move, and starts two bot processes
    per game) and the rest of the machine; the cores that other programs keep busy when
    the run starts (the 1-minute load average, rounded down) are left to them.  So: the
    usable cores, less one, less that load, and at least 1."""
    try:
        busy = int(os.getloadavg()[0])
    except (AttributeError, OSError):  # no load average on this system
        busy = 0
    return max(1, R.usable_cpus() - 1 - busy)


def config_digest(normalised: Mapping[str, Any]) -> str:
    """The hash of a normalised configuration (see :meth:`TournamentConfig.digest`)."""
    kept = {k: v for k, v in normalised.items() if k not in _UNHASHED}
    text = json.dumps(kept, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _plain(value: Any) -> Any:
    """``value`` with tuples as lists and paths as text, for JSON."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def _bot_dict(bot: BotSpec) -> dict[str, Any]:
    """A bot as JSON; the interpreter path is written ``{python}`` again, so that the hash
    does not change with the virtual environment's location."""
    command = [a.replace(sys.executable, "{python}") for a in bot.command]
    return {"name": bot.name, "path": _display_path(Path(bot.path)), "command": command,
            "options": dict(bot.options)}


def _display_path(p: Path) -> str:
    """``p`` relative to the current directory when it is inside it, else absolute."""
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p.resolve())


# -- loading ------------------------------------------------------------------------------


def load_config(path: str | os.PathLike[str], *, workers: Optional[int] = None,
                format_type: Optional[str] = None, rounds: Optional[int] = None
                ) -> TournamentConfig:
    """Read and check a tournament YAML file.

    ``workers`` overrides the file's ``workers`` setting (``--workers`` in messages);
    ``format_type`` and ``rounds`` its ``format.type`` and ``format.rounds`` (``arena run --format
    swiss --rounds 9``), checked as the file's would be (another type drops the file's other
    format keys).

    Every number must be in its documented range (:mod:`arena.ranges`), and the tournament
    may have at most :data:`arena.ranges.GAMES_MAX` games (counted, not built).

    :raises ConfigError: for an unreadable or broken file and for every invalid setting, with
        the file name and the key path in the message.
    """
    import yaml

    if workers is not None:
        R.workers_range().check(workers, "--workers")
    p = Path(path)
    try:
        if not stat.S_ISREG(os.stat(p).st_mode):  # a FIFO would block, /dev/zero never end
            raise ConfigError("not a regular file", str(p))
        with open(p, "rb") as f:
            raw = f.read(TOURNAMENT_FILE_CAP + 1)
    except OSError as e:
        raise ConfigError(f"cannot read tournament file: {e.strerror}", str(p)) from None
    if len(raw) > TOURNAMENT_FILE_CAP:
        raise ConfigError(f"the tournament file is larger than {TOURNAMENT_FILE_CAP >> 20} MiB",
                          str(p))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"not UTF-8 text (byte {e.start + 1})", str(p)) from None
    try:
        data = yaml.load(text, Loader=_strict_loader())  # noqa: S506 (a SafeLoader subclass)
    except ConfigError as e:
        raise ConfigError(str(e), p.name) from None
    except yaml.YAMLError as e:
        raise ConfigError(f"broken YAML: {_yaml_problem(e)}", p.name) from None
    except RecursionError:
        raise ConfigError("broken YAML: nested too deeply", p.name) from None
    except (ValueError, TypeError, OverflowError) as e:  # a tagged or dated value
        raise ConfigError(f"broken YAML: a value that cannot be read ({str(e)[:100]})",
                          p.name) from None
    if (format_type is not None or rounds is not None) and isinstance(data, dict):
        given = data.get("format", "round-robin")
        fm = dict(given) if isinstance(given, dict) else {"type": given}
        if format_type is not None and format_type != fm.get("type"):
            fm = {"type": format_type}
        if rounds is not None:
            fm["rounds"] = rounds
        data = {**data, "format": fm}
    return parse_config(data, source=p, workers=workers)


def parse_config(data: Any, *, source: Optional[Path] = None,
                 workers: Optional[int] = None) -> TournamentConfig:
    """Check ``data`` (the parsed YAML of a tournament file) into a :class:`TournamentConfig`.

    ``source`` is the file it came from (for messages, the default name and relative paths).

    :raises ConfigError: naming the key path and what was expected.
    """
    label = source.name if source is not None else "config"
    base_dirs = [Path.cwd()]
    if source is not None and source.parent.resolve() != Path.cwd().resolve():
        base_dirs.append(source.parent)
    try:
        return _Parser(base_dirs, source, workers).parse(data)
    except ConfigError as e:
        raise ConfigError(str(e), label) from None


class _Parser:
    """Walks the YAML data; every failure is a ConfigError with its key path."""

    def __init__(self, base_dirs: list[Path], source: Optional[Path],
                 workers: Optional[int]) -> None:
        self.base_dirs = base_dirs
        self.source = source
        self.workers_override = workers

    def parse(self, data: Any) -> TournamentConfig:
        if data is None:
            raise ConfigError("the file is empty: expected a mapping with at least 'bots'")
        top = _mapping(data, "", TOP_KEYS)
        name = self.name(top.get("name"))
        if "bots" not in top:
            raise ConfigError("missing: expected a list of bot folders", "bots")
        bots = self.bots(top["bots"])
        variants = self.variants(top.get("variants", ["nine-mens-morris"]))
        _check_bot_variants(bots, variants)
        fmt = self.format(top.get("format", "round-robin"), tuple(b.name for b in bots))
        gpp = R.GAMES_PER_PAIRING.check(top.get("games_per_pairing", 2), "games_per_pairing")
        if gpp % 2:
            raise ConfigError(f"expected an even number (games are played in colour-swapped "
                              f"pairs), got {gpp}", "games_per_pairing")
        total = count_games(fmt, tuple(b.name for b in bots), len(variants),
                            games_per_pairing=gpp)
        if total > R.GAMES_MAX:
            raise ConfigError(f"the tournament has {total:,} games (pairings x format.rounds x "
                              f"games_per_pairing x variants), over the cap of "
                              f"{R.GAMES_MAX:,}: play fewer rounds or games per pairing")
        seed = R.SEED.check(top.get("seed", 0), "seed")
        output = self.output(top.get("output", f"results/{name}"))
        report = top.get("report", True)
        if not isinstance(report, bool):
            raise ConfigError(f"expected true or false, got {_shown(report)}", "report")
        pgn_out = self.pgn_out(top.get("pgn_out"))
        restart = top.get("restart", "per-game")
        if restart not in RESTART_MODES:
            raise ConfigError(f"expected per-game (a fresh bot process for every game) or "
                              f"per-pairing (one kept for a pairing's games), got "
                              f"{_shown(restart)}", "restart")
        return TournamentConfig(
            name=name, bots=bots, variants=variants, format=fmt,
            time_control=self.time(top.get("time")), games_per_pairing=gpp,
            opening_turns=self.openings(top.get("openings"), variants),
            book=(self.start_position(top["start_position"], top.get("openings"), variants)
                  if "start_position" in top else self.book(top.get("openings"), variants)),
            workers=self.workers(top.get("workers", "auto")), seed=seed,
            output=output, report=report, pgn_out=pgn_out, source=self.source,
            executor=self.executor(top.get("executor", "local")),
            isolation=self.isolation(top.get("isolation")), restart=restart,
            adjudicate=parse_adjudication(top.get("adjudicate")),
            cluster_wait=self.cluster_wait(top.get("cluster")),
            tiebreaks=parse_tiebreaks(top["tiebreaks"]) if "tiebreaks" in top else None)

    def output(self, value: Any) -> Path:
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"expected a folder path, got {_shown(value)}", "output")
        folder = Path(value)
        for p in (folder, *folder.parents):  # the nearest part that exists must be a folder
            if os.path.lexists(p):
                if not p.is_dir():
                    what = "it is a file" if p == folder else f"{p} is a file"
                    raise ConfigError(f"{value} cannot be a results folder: {what}", "output")
                break
        return folder

    def pgn_out(self, value: Any) -> Optional[Path]:
        """``pgn_out``: a file path (relative to the current directory), or None."""
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"expected a file path for the PGN file, got {_shown(value)}",
                              "pgn_out")
        path = Path(value)
        if path.is_dir():
            raise ConfigError(f"{value} is a folder: expected a file path for the PGN file",
                              "pgn_out")
        for p in path.parents:  # the nearest part that exists must be a folder
            if os.path.lexists(p):
                if not p.is_dir():
                    raise ConfigError(f"{value} cannot be written: {p} is a file", "pgn_out")
                break
        return path

    def isolation(self, value: Any) -> Any:
        if value is None:
            return None
        from arena.sandbox import Isolation

        limits = value.get("limits") if isinstance(value, Mapping) else None
        if isinstance(limits, Mapping):  # ranges here; types and unknown keys in Limits
            for key, allowed in R.LIMITS.items():
                item = limits.get(key)
                if isinstance(item, int) and not isinstance(item, bool):
                    allowed.check(item, f"isolation.limits.{key}")
        return Isolation.parse(value, "isolation")

    def name(self, value: Any) -> str:
        if value is None:
            if self.source is None:
                raise ConfigError("missing: expected the tournament's name", "name")
            value = self.source.stem
        if not isinstance(value, str) or not _NAME_RE.match(value) or len(value) > R.NAME_MAX:
            raise ConfigError(f"expected a name of letters, digits, '.', '_' or '-', at most "
                              f"{R.NAME_MAX} characters (it names the results folder), "
                              f"got {_shown(value)}", "name")
        return value

    # -- bots ---------------------------------------------------------------------------
    def bots(self, value: Any) -> tuple[BotSpec, ...]:
        from arena.bot import load_bot
        from arena.manifest import is_engine_string

        if not isinstance(value, list) or not value:
            raise ConfigError(f"expected a non-empty list of bot folders or engine strings, "
                              f"got {value!r}", "bots")
        specs: list[BotSpec] = []
        owners: dict[str, str] = {}
        for i, item in enumerate(value):
            where = f"bots[{i}]"
            if isinstance(item, str):
                item = {"engine" if is_engine_string(item) else "path": item}
            entry = _mapping(item, where, BOT_KEYS)
            if "engine" in entry:
                spec = self.engine(entry, where)
                if spec.name in owners:
                    raise ConfigError(f"the display name {spec.name!r} is already used by "
                                      f"{owners[spec.name]}: give this engine its own name",
                                      f"{where}.name" if "name" in entry else f"{where}.engine")
                owners[spec.name] = where
                specs.append(spec)
                continue
            pattern = entry.get("path")
            if not isinstance(pattern, str) or not pattern.strip():
                raise ConfigError(f"expected a bot folder or a glob, got {pattern!r}",
                                  f"{where}.path")
            folders = self.bot_folders(pattern, f"{where}.path")
            name = entry.get("name")
            if name is not None:
                if not isinstance(name, str) or not name.strip() or "\n" in name:
                    raise ConfigError(f"expected a display name, got {name!r}", f"{where}.name")
                if len(folders) > 1:
                    raise ConfigError(f"one display name for {len(folders)} bots matched by "
                                      f"{pattern}: remove 'name' or list the bots apart",
                                      f"{where}.name")
            options = entry.get("options") or {}
            if not isinstance(options, Mapping):
                raise ConfigError(f"expected a mapping of option names to values, "
                                  f"got {options!r}", f"{where}.options")
            for folder in folders:
                try:
                    spec = load_bot(folder, name=name, options=options)
                except ConfigError as e:
                    if e.path.startswith("options."):  # one of this entry's options
                        message = str(e)[len(e.path) + 2:]
                        raise ConfigError(message, f"{where}.{e.path}") from None
                    raise ConfigError(str(e), f"{where}.path") from None
                if spec.name in owners:
                    raise ConfigError(f"the display name {spec.name!r} (from {folder}) is already "
                                      f"used by {owners[spec.name]}: give this entry its own "
                                      f"'name'", f"{where}.name")
                owners[spec.name] = where
                specs.append(spec)
        return tuple(specs)

    def engine(self, entry: Mapping[str, Any], where: str) -> BotSpec:
        """``{engine: "cmd=... name=...", name: ..., options: {...}}`` (or the string alone):
        an engine without a bot folder (:func:`arena.manifest.parse_engine`; a relative
        ``dir`` from the current folder, then the tournament file's); ``name`` and
        ``options`` given beside it override the string's."""
        from arena.manifest import parse_engine

        if "path" in entry:
            raise ConfigError("a bot folder (path) or an engine string (engine), not both",
                              where)
        text = entry["engine"]
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(f"expected an engine string such as \"cmd=./mybot name=mine\", "
                              f"got {_shown(text)}", f"{where}.engine")
        try:
            spec = parse_engine(text, bases=self.base_dirs[1:])
        except ConfigError as e:
            raise ConfigError(str(e), f"{where}.engine") from None
        name = entry.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip() or "\n" in name):
            raise ConfigError(f"expected a display name, got {name!r}", f"{where}.name")
        options = entry.get("options") or {}
        if not isinstance(options, Mapping):
            raise ConfigError(f"expected a mapping of option names to values, "
                              f"got {options!r}", f"{where}.options")
        merged = dict(spec.options)
        from arena.manifest import option_text

        for key, value in options.items():
            merged[str(key)] = option_text(value, f"{where}.options.{key}")
        return dataclasses.replace(spec, name=name if name is not None else spec.name,
                                   options=merged)

    def bot_folders(self, pattern: str, where: str) -> list[Path]:
        """The bot folders ``pattern`` names: one folder, or every folder a glob matches."""
        if glob.has_magic(pattern):
            for base in self.base_dirs:
                found = sorted(Path(p) for p in glob.glob(str(base / pattern))
                               if _has_manifest(Path(p)))
                if found:
                    return [_relative(p) for p in found]
            raise ConfigError(f"no bot folder (a folder with a bot.yaml) matches {pattern}", where)
        for base in self.base_dirs:
            folder = base / pattern
            if _has_manifest(folder):
                return [_relative(folder)]
        raise ConfigError(f"no bot folder at {pattern} (no bot.yaml)", where)

    # -- variants -----------------------------------------------------------------------
    def variants(self, value: Any) -> tuple[Variant, ...]:
        if isinstance(value, (str, Mapping)):
            value = [value]
        if not isinstance(value, list) or not value:
            raise ConfigError(f"expected a list of variant presets or mappings, got {value!r}",
                              "variants")
        out: list[Variant] = []
        seen: dict[str, str] = {}
        for i, item in enumerate(value):
            where = f"variants[{i}]"
            if isinstance(item, str) and item.endswith((".yaml", ".yml")):
                variant = self.variant_file(item, where)
            else:
                variant = Variant.from_mapping(item, path=where)
            if variant.name in seen:
                raise ConfigError(f"the variant name {variant.name!r} is already used by "
                                  f"{seen[variant.name]}: give this one its own 'name'", where)
            seen[variant.name] = where
            out.append(variant)
        return tuple(out)

    def variant_file(self, spec: str, where: str) -> Variant:
        for base in self.base_dirs:
            if (base / spec).is_file():
                try:
                    return load_variant(str(base / spec))
                except ConfigError as e:
                    raise ConfigError(str(e), where) from None
        raise ConfigError(f"no variant file at {spec}", where)

    # -- format, openings, time, workers ------------------------------------------------
    def format(self, value: Any, players: tuple[str, ...]) -> Format:
        fm = _mapping({"type": value} if isinstance(value, str) else value, "format",
                      FORMAT_KEYS)
        kind = fm.get("type")
        if kind not in FORMAT_KINDS:
            raise ConfigError(f"expected one of {', '.join(FORMAT_KINDS)}, got {kind!r}",
                              "format" if isinstance(value, str) else "format.type")
        staged = kind in ("swiss", "knockout")
        if kind == "knockout" and "rounds" in fm:
            raise ConfigError("a knockout has as many rounds as its bracket needs: leave "
                              "'rounds' out", "format.rounds")
        n = len(players)
        rounds = (R.ROUNDS.check(fm["rounds"], "format.rounds") if "rounds" in fm
                  else min(rounds_for(n), max(1, n - 1 + n % 2)) if kind == "swiss" else
                  max(1, (n - 1).bit_length()) if kind == "knockout" else 1)
        if kind == "swiss" and rounds > n - 1 + n % 2:
            raise ConfigError(f"{n} players can play at most {n - 1 + n % 2} Swiss rounds "
                              f"without meeting twice, got {rounds}", "format.rounds")
        if "tiebreak_pairs" in fm and kind != "knockout":
            raise ConfigError(f"only a knockout has tiebreak_pairs (this is a {kind})",
                              "format.tiebreak_pairs")
        tiebreak_pairs = R.TIEBREAK_PAIRS.check(fm.get("tiebreak_pairs", 2),
                                                "format.tiebreak_pairs")
        seeds_value = fm.get("seeds", [])
        if staged and isinstance(seeds_value, str):  # a rating list
            seeds_value = self.rating_list(seeds_value, players)
        if isinstance(seeds_value, str):
            seeds_value = [seeds_value]
        if not isinstance(seeds_value, list):
            raise ConfigError(f"expected a list of bot display names, got {seeds_value!r}",
                              "format.seeds")
        if seeds_value and kind not in ("gauntlet", "swiss", "knockout"):
            raise ConfigError(f"only a gauntlet, a Swiss or a knockout has seeds (this is a "
                              f"{kind})", "format.seeds")
        for j, s in enumerate(seeds_value):
            if s not in players:
                raise ConfigError(f"no bot named {s!r} (bots: {', '.join(players)})",
                                  f"format.seeds[{j}]")
        if len(set(seeds_value)) != len(seeds_value):
            raise ConfigError("a bot is named twice", "format.seeds")
        if staged:  # every player, best first: those named, then the others in file order
            seeds_value = list(seeds_value) + [p for p in players if p not in seeds_value]
        fmt = Format(kind=kind, rounds=rounds, seeds=tuple(seeds_value),
                     tiebreak_pairs=tiebreak_pairs)
        try:
            count_pairings(fmt, players)
        except ValueError as e:
            where = "format.seeds" if kind == "gauntlet" else "bots"
            raise ConfigError(f"{e} (bots: {', '.join(players)})", where) from None
        return fmt

    def rating_list(self, value: str, players: tuple[str, ...]) -> list[str]:
        """``format.seeds: FILE``: the bots of a rating list (a CSV with a ``name`` or
        ``bot`` column, ranked by its ``elo`` column when it has one, else in its order, as
        ``arena rate --csv`` and ``standings.csv`` write them), those of this tournament."""
        import csv

        bases = ([self.source.parent] if self.source is not None else []) + [Path.cwd()]
        path = next((b / value for b in bases if (b / value).exists()), bases[0] / value)
        try:
            with open(path, newline="", encoding="utf-8") as f:
                rows = list(csv.DictReader(f))
        except (OSError, UnicodeDecodeError, csv.Error) as e:
            raise ConfigError(f"cannot read the rating list {path}: "
                              f"{getattr(e, 'strerror', None) or e}", "format.seeds") from None
        column = next((c for c in ("name", "bot") if rows and c in rows[0]), None)
        if column is None:
            raise ConfigError(f"the rating list {path} has no 'name' or 'bot' column",
                              "format.seeds")
        if "elo" in rows[0]:
            def elo(row: dict[str, Any]) -> float:
                try:
                    return float(row["elo"])
                except (TypeError, ValueError):
                    return float("-inf")
            rows.sort(key=elo, reverse=True)
        listed = [str(r[column]) for r in rows]
        return [n for k, n in enumerate(listed) if n in players and n not in listed[:k]]

    def openings(self, value: Any, variants: tuple[Variant, ...]) -> int:
        if value is None or value == "none":
            return 0
        op = _mapping(value, "openings", OPENING_KEYS)
        if "random" in op and "file" in op:
            raise ConfigError("random openings or a book, not both", "openings")
        if "file" in op:
            return 0
        for key, what in (("order", "an order"), ("format", "a format"), ("plies", "plies")):
            if key in op:
                raise ConfigError(f"only a book has {what} (add 'file')", f"openings.{key}")
        if "random" not in op:
            raise ConfigError("expected 'none', {random: K} or {file: BOOK, order: "
                              "sequential|random}", "openings")
        turns = R.OPENING_TURNS.check(op["random"], "openings.random")
        for variant in variants:  # an opening stays within the placement phase
            if turns > variant.placement_turns:
                raise ConfigError(f"expected at most {variant.placement_turns} turns for "
                                  f"{variant.name} (its placement phase: 2 x {variant.men} "
                                  f"men), got {turns}", "openings.random")
        return turns

    def start_position(self, value: Any, openings: Any,
                       variants: tuple[Variant, ...]) -> OpeningBook:
        """``start_position: TEXT``: every game starts from this position (docs/PROTOCOL.md,
        *Position text*), checked in each variant: a book of one position."""
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"expected a position text (docs/PROTOCOL.md, Position text), "
                              f"got {_shown(value)}", "start_position")
        if openings not in (None, "none"):
            raise ConfigError("a start position or openings, not both (a book of positions: "
                              "openings: {file: BOOK.epd})", "start_position")
        books = {v.name: ((format_setup(check_start(v, value, "start_position")),),)
                 for v in variants}
        text = " ".join(value.split())
        return OpeningBook(path="start_position", order="sequential",
                           sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
                           books=books, fmt="epd", position=text)

    def book(self, value: Any, variants: tuple[Variant, ...]) -> Optional[OpeningBook]:
        """``openings: {file: BOOK, order: ...}`` (the mapping is checked by :meth:`openings`)."""
        if not isinstance(value, Mapping) or "file" not in value:
            return None
        name = value["file"]
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"expected the path of an opening book, got {_shown(name)}",
                              "openings.file")
        order = value.get("order", "sequential")
        if order not in BOOK_ORDERS:
            raise ConfigError(f"expected one of {', '.join(BOOK_ORDERS)}, got {_shown(order)}",
                              "openings.order")
        # relative to the tournament file (then the current directory)
        bases = ([self.source.parent] if self.source is not None else []) + [Path.cwd()]
        path = next((b / name for b in bases if (b / name).exists()), bases[0] / name)
        given = value.get("format")
        if given is not None and given not in BOOK_FORMATS:
            raise ConfigError(f"expected one of {', '.join(BOOK_FORMATS)}, got "
                              f"{_shown(given)}", "openings.format")
        fmt = book_format(path, given)
        plies = (R.BOOK_PLIES.check(value["plies"], "openings.plies") if "plies" in value
                 else None)
        text = read_book_text(path)
        shown = _display_path(path)
        books = {v.name: parse_book(text, v, source=shown, fmt=fmt, plies=plies)
                 for v in variants}
        return OpeningBook(path=shown, order=order,
                           sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
                           books=books, fmt=fmt, plies=plies)

    def time(self, value: Any) -> TimeControl:
        from arena.clock import CHARGES, TimeControl
        from arena.sandbox import default_charge

        if value is None:
            return TimeControl(clock=default_charge())
        if isinstance(value, (int, str)) and not isinstance(value, bool):
            return _time_control(lambda: TimeControl.parse(str(value), clock=default_charge()),
                                 "time")
        tm = _mapping(value, "time", TIME_KEYS)
        if not {"movetime", "clock", "nodes", "depth"} & set(tm):
            raise ConfigError("expected 'movetime' (ms per move), 'clock' (base+increment in "
                              "seconds, e.g. 60+1, or moves/base+increment, e.g. 40/60+0.6), "
                              "'nodes' or 'depth', or several", "time")
        movetime = (R.MOVETIME_MS.check(tm["movetime"], "time.movetime") if "movetime" in tm
                    else None)
        nodes = R.NODES.check(tm["nodes"], "time.nodes") if "nodes" in tm else None
        depth = R.DEPTH.check(tm["depth"], "time.depth") if "depth" in tm else None
        clock = tm.get("clock")
        if clock is not None and not isinstance(clock, str):
            raise ConfigError(f"expected base+increment in seconds (e.g. 60+1) or "
                              f"moves/base+increment (e.g. 40/60+0.6), got {_shown(clock)}",
                              "time.clock")
        handshake = (R.HANDSHAKE_MS.check(tm["handshake"], "time.handshake")
                     if "handshake" in tm else None)
        margin = R.MARGIN_MS.check(tm["margin"], "time.margin") if "margin" in tm else None
        charge = tm.get("charge", "auto")
        if charge not in CHARGES:
            raise ConfigError(f"expected auto (the own clock where there is one), own (the "
                              f"bot's own time: wall time less its waits for a CPU), wall "
                              f"(elapsed time) or cpu (the bot's CPU time), got "
                              f"{_shown(charge)}", "time.charge")
        if charge == "auto":
            charge = default_charge()
        wall_factor = tm.get("wall_factor")
        if wall_factor is not None:
            R.check_wall_factor(wall_factor, "time.wall_factor")

        def build() -> TimeControl:
            if clock is None and movetime is None:  # nodes and/or depth only: capped
                tc = TimeControl(movetime_ms=None, nodes=nodes, depth=depth, clock=charge)
            else:
                tc = TimeControl.parse(clock if clock is not None else str(movetime),
                                       clock=charge)
                tc = dataclasses.replace(tc, nodes=nodes, depth=depth)
            if clock is not None and movetime is not None:
                tc = dataclasses.replace(tc, movetime_ms=movetime)
            if wall_factor is not None:
                tc = dataclasses.replace(tc, wall_factor=float(wall_factor))
            return tc.with_limits(handshake_ms=handshake, margin_ms=margin)

        return _time_control(build, "time.clock" if clock is not None else "time.movetime")

    def executor(self, value: Any) -> ExecutorConfig:
        if isinstance(value, str):
            return check_executor(value, None, None, where={**_FILE_EXECUTOR, "type": "executor"})
        ex = _mapping(value, "executor", EXECUTOR_KEYS)
        if "type" not in ex:
            raise ConfigError(f"missing: expected one of {', '.join(EXECUTOR_KINDS)}",
                              "executor.type")
        return check_executor(ex["type"], ex.get("scheduler"), ex.get("ship_bots"),
                              where=_FILE_EXECUTOR)

    def cluster_wait(self, value: Any) -> float:
        """``cluster: {wait: ...}``: seconds, or a number with ``s``, ``m`` or ``h``."""
        if value is None:
            return CLUSTER_WAIT_S
        wait = _mapping(value, "cluster", CLUSTER_KEYS).get("wait", CLUSTER_WAIT_S)
        return parse_wait(wait, "cluster.wait")

    def workers(self, value: Any) -> int:
        if self.workers_override is not None:
            return R.workers_range().check(self.workers_override, "--workers")
        if value in ("auto", None):
            return default_workers()
        return R.workers_range().check(value, "workers")


def _check_bot_variants(bots: tuple[BotSpec, ...], variants: tuple[Variant, ...]) -> None:
    """Refuse a variant a bot's ``bot.yaml`` does not list (``variants:``; empty: any)."""
    for bot in bots:
        for variant in variants:
            if bot.variants and variant.name not in bot.variants:
                raise ConfigError(f"{bot.name} plays only {', '.join(bot.variants)} (its "
                                  f"bot.yaml 'variants:'), not {variant.name}: remove the "
                                  f"variant or the bot", "variants")


def _has_manifest(folder: Path) -> bool:
    """A folder with a ``bot.yaml`` entry of any kind: :func:`arena.bot.load_bot` decides
    whether it may be read (a link out of the folder or a FIFO is refused there, loudly,
    rather than skipped here)."""
    return folder.is_dir() and os.path.lexists(folder / "bot.yaml")


def _time_control(build: Callable[[], TimeControl], where: str) -> TimeControl:
    """``build()``, with a TimeControl's own ConfigError moved to the key path ``where``."""
    try:
        return build()
    except ConfigError as e:
        message = str(e)
        if e.path and message.startswith(f"{e.path}: "):
            message = message[len(e.path) + 2:]
        raise ConfigError(message, where) from None


def _relative(p: Path) -> Path:
    """``p`` relative to the current directory when inside it (shorter messages and records);
    links are not resolved, so the path reads as the user wrote it."""
    absolute = Path(os.path.normpath(os.path.abspath(p)))
    try:
        return absolute.relative_to(Path(os.path.normpath(os.getcwd())))
    except ValueError:
        return absolute


def _mapping(value: Any, where: str, known: tuple[str, ...]) -> dict[str, Any]:
    """``value`` as a dict with only ``known`` keys, or a ConfigError at ``where``."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"expected a mapping with keys {', '.join(known)}, got {_shown(value)}",
                          where or "(top level)")
    for key in value:
        if key not in known:
            path = f"{where}.{key}" if where else str(key)
            raise ConfigError(f"unknown key ({did_you_mean(str(key), known)}expected one of: "
                              f"{', '.join(known)})", path)
    return dict(value)


def _shown(value: Any) -> str:
    """``value`` for a message, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}... ({len(text)} characters)"


def _yaml_problem(e: Any) -> str:
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    if mark is not None:
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    return str(problem)


@functools.cache
def _strict_loader() -> type:
    """The YAML loader class for tournament files (built on first use: yaml loads lazily)."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        """A SafeLoader that refuses duplicate keys (the later one would silently win)."""

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    mark = key_node.start_mark
                    raise ConfigError(f"duplicate key {key!r} at line {mark.line + 1}")
                try:
                    seen.add(key)
                except TypeError:
                    pass
            return super().construct_mapping(node, deep=deep)

    return StrictLoader


__all__ = ["TournamentConfig", "ExecutorConfig", "Format", "OpeningBook", "load_config",
           "parse_config", "config_digest", "with_executor"]
