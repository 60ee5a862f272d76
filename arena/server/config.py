"""A competition's settings: ``DIR/server.yaml`` checked once into a frozen :class:`ServerConfig`.

The file is YAML, checked like a tournament file (:mod:`arena.config`): unknown keys, wrong
types and values out of range are one :class:`~arena.errors.ConfigError` naming the key
path.  Every key is optional::

    name: classroom                # shown on the pages
    variants: [nine-mens-morris]   # the ladder's variants (a leaderboard each)
    time: 200                      # ms per move, "60+1" (a clock), or {movetime, handshake, margin}
    isolation: bwrap               # the sandbox level (default: best available)
    pairs: 2                       # colour-swapped pairs a new bot plays against each active bot
    check_games: 2                 # check games per variant against bots/random
    check_workers: 2               # uploads checked at once (each in a process of its own)
    check_timeout: 600             # seconds a check may take in all (build included)
    workers: 2                     # games played at once
    nice: 10                       # the niceness of the games and checks (0-19): the pages
                                   #   stay quick while they run (their clocks charge CPU time)
    executor: local                # or {kind: dask, scheduler: tcp://host:8786}
    upload:
      max_bytes: 5000000           # the archive
      max_unpacked_bytes: 50000000 # what it unpacks to
      max_files: 2000
      per_hour: 10                 # uploads per participant per hour
      max_kept_bytes: 300000000    # disk a participant's uploads may keep (archives + folders,
                                   #   built; by allocated blocks)
      max_kept_files: 20000        # files (and folders) a participant's kept folders may hold
      keep_versions: 3             # retired versions of a bot whose folders are kept
    rate_limit:                    # requests of any kind (429 with Retry-After beyond)
      participant: 600/minute      # per participant (admins are not limited)
      anonymous: 3000/minute       # per client address, for requests without a valid token
    trusted_proxies: []            # reverse proxies whose X-Forwarded-For/-Proto are believed
    db_url: sqlite:///...          # default: DIR/arena.db (a PostgreSQL URL is accepted)
    deadline: 2026-12-15T18:00:00+01:00  # ISO 8601 with an offset; none (default): no deadline
    final:
      pairs: 10                    # the final round robin: colour-swapped pairs per meeting, per variant
      format: round-robin          # or swiss: each round pairs equal or nearest scores
                                   #   (arena.swiss), pairs colour-swapped pairs per pairing
      rounds: 7                    # a Swiss's rounds (default: ceil(log2 N) + 2 of the N entries)
    ladder:
      opponents: 40                # a new version's ladder opponents (default: every active bot
                                   #   while there are at most 40, else 40)
      idle_games: false            # true: with nothing queued, the judge plays pairs between
                                   #   the bot with the fewest games and one near it in rating
    matches:
      per_hour: 20                 # unrated test matches a participant may ask for per hour
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, Optional

from arena import ranges as R
from arena.clock import TimeControl
from arena.errors import ConfigError
from arena.hints import did_you_mean
from arena.variants import Variant, get_variant

#: the settings file inside a competition folder
CONFIG_FILE = "server.yaml"

_TOP = ("name", "variants", "time", "isolation", "pairs", "check_games", "check_workers",
        "check_timeout", "workers", "nice", "executor", "upload", "rate_limit", "trusted_proxies",
        "db_url", "deadline", "final", "ladder", "matches")
_UPLOAD = ("max_bytes", "max_unpacked_bytes", "max_files", "per_hour", "max_kept_bytes",
           "max_kept_files", "keep_versions")
_TIME = ("movetime", "clock", "handshake", "margin", "charge", "wall_factor")
_EXECUTOR = ("kind", "scheduler")
_RATE = ("participant", "anonymous")
_FINAL = ("pairs", "format", "rounds")
_LADDER = ("opponents", "idle_games")
_MATCHES = ("per_hour",)

PAIRS = R.Range(1, 100, "pairs")
CHECK_GAMES = R.Range(1, 20, "games")
WORKERS = R.Range(1, 256, "workers")
NICE = R.Range(0, 19)
CHECK_WORKERS = R.Range(1, 64, "checks")
CHECK_TIMEOUT = R.Range(1, 86_400, "seconds")
BYTES = R.Range(1, 1 << 32, "bytes")
FILES = R.Range(1, 100_000, "files")
PER_HOUR = R.Range(1, 10_000, "uploads")
KEPT_BYTES = R.Range(1, 1 << 40, "bytes")
KEPT_FILES = R.Range(1, 10_000_000, "files")
KEEP_VERSIONS = R.Range(0, 1000, "versions")
FINAL_PAIRS = R.Range(1, 1000, "pairs")
SWISS_ROUNDS = R.Range(1, 1000, "rounds")
#: the formats of the final: a round robin (every entry meets every other) or a Swiss
FINAL_FORMATS = ("round-robin", "swiss")
OPPONENTS = R.Range(1, 100_000, "bots")
MATCHES_PER_HOUR = R.Range(0, 10_000, "matches")
#: a new version's ladder opponents when ``ladder.opponents`` is not set: every active bot
#: while there are at most this many, else this many
DEFAULT_OPPONENTS = 40


@dataclass(frozen=True)
class UploadLimits:
    """What one upload may be: the archive's size, what it unpacks to, and how often."""

    max_bytes: int = 5_000_000
    max_unpacked_bytes: int = 50_000_000
    max_files: int = 2000
    per_hour: int = 10
    #: bytes a participant's uploads may keep on disk: archives and unpacked (then built)
    #: folders, by allocated blocks (checked at the upload and again after the build)
    max_kept_bytes: int = 300_000_000
    #: entries (files, folders, links) a participant's kept folders may hold in all
    #: (checked after the build: an empty file takes no block, but an inode)
    max_kept_files: int = 20_000
    #: retired versions of each of a participant's bots whose folders and archives are kept
    keep_versions: int = 3


@dataclass(frozen=True)
class RateLimits:
    """Requests allowed in a moving window, in the notation of the ``limits`` library
    (``"600/minute"``, ``"10 per second"``): per participant, and per client address for
    requests without a valid token.  The address's default lets a class of 40 behind one
    address (a school's NAT) browse: a page every 5 s each is 480 a minute for 40
    browsers, a live game 2 requests per browser (its page and its event stream);
    docs/SERVER.md."""

    participant: str = "600/minute"
    anonymous: str = "3000/minute"


@dataclass(frozen=True)
class FinalSettings:
    """The final that starts at the deadline: a round robin (the default) or a Swiss
    (:mod:`arena.server.final`)."""

    #: colour-swapped pairs per meeting of two bots (a Swiss's pairing), per variant
    pairs: int = 10
    #: ``round-robin`` or ``swiss`` (:data:`FINAL_FORMATS`)
    format: str = "round-robin"
    #: a Swiss's rounds; None: ⌈log₂ N⌉ + 2 of the N entries (at most what N entries can
    #: play without meeting twice), as a tournament file's Swiss; always None for a round robin
    rounds: Optional[int] = None

    @property
    def swiss(self) -> bool:
        """Whether the final is a Swiss."""
        return self.format == "swiss"


@dataclass(frozen=True)
class LadderSettings:
    """How many opponents a new version plays on the ladder."""

    #: None: every active bot while there are at most :data:`DEFAULT_OPPONENTS`, else that many
    opponents: Optional[int] = None
    #: with nothing queued, keep playing: the bot with the fewest games against one of the
    #: nearest in rating (:meth:`~arena.server.ladder.Ladder.queue_idle_games`)
    idle_games: bool = False

    def opponents_for(self, active: int) -> int:
        """How many of ``active`` other bots a new version plays."""
        limit = DEFAULT_OPPONENTS if self.opponents is None else self.opponents
        return min(active, limit)


@dataclass(frozen=True)
class MatchSettings:
    """Unrated test matches asked for by participants (``POST /api/matches``)."""

    #: matches a participant may ask for in an hour (admins are not limited); 0: none
    per_hour: int = 20


@dataclass(frozen=True)
class ServerConfig:
    """A competition's settings (see the module's docstring for the file)."""

    name: str = "competition"
    variants: tuple[Variant, ...] = field(default_factory=lambda: (get_variant("nine-mens-morris"),))
    time_control: TimeControl = field(default_factory=lambda: _time(None))
    #: the sandbox level's name or settings as given (None: the best available)
    isolation: Any = None
    pairs: int = 2
    check_games: int = 2
    check_workers: int = 2
    check_timeout: int = 600
    workers: int = 2
    nice: int = 10
    executor: str = "local"
    scheduler: Optional[str] = None
    upload: UploadLimits = field(default_factory=UploadLimits)
    rate_limit: RateLimits = field(default_factory=RateLimits)
    #: the reverse proxies (addresses or networks, as written: "127.0.0.1", "10.0.0.0/8")
    #: whose X-Forwarded-For and X-Forwarded-Proto are believed; none by default
    trusted_proxies: tuple[str, ...] = ()
    db_url: Optional[str] = None
    #: uploads close here and the final round robin starts (timezone-aware); None: never
    deadline: Optional[datetime] = None
    final: FinalSettings = field(default_factory=FinalSettings)
    ladder: LadderSettings = field(default_factory=LadderSettings)
    matches: MatchSettings = field(default_factory=MatchSettings)

    def isolation_object(self) -> Any:
        """The :class:`arena.sandbox.Isolation` the judge uses (None: the best available)."""
        if self.isolation is None:
            return None
        from arena.sandbox import Isolation

        return Isolation.parse(self.isolation, "isolation")

    def to_dict(self) -> dict[str, Any]:
        """Plain data that :func:`parse_server_config` reads back to an equal config."""
        tc = self.time_control
        time: dict[str, Any] = {"handshake": tc.handshake_ms, "margin": tc.margin_ms,
                                "charge": tc.clock}
        if tc.clock != "wall":
            time["wall_factor"] = tc.wall_factor
        if tc.movetime_ms is not None:
            time["movetime"] = tc.movetime_ms
        if tc.base_ms is not None:
            time["clock"] = f"{tc.base_ms / 1000:g}+{tc.increment_ms / 1000:g}"
        out: dict[str, Any] = {
            "name": self.name, "variants": [v.name for v in self.variants], "time": time,
            "pairs": self.pairs, "check_games": self.check_games,
            "check_workers": self.check_workers, "check_timeout": self.check_timeout,
            "workers": self.workers, "nice": self.nice,
            "executor": (self.executor if self.scheduler is None
                         else {"kind": self.executor, "scheduler": self.scheduler}),
            "upload": {k: getattr(self.upload, k) for k in _UPLOAD},
            "rate_limit": {k: getattr(self.rate_limit, k) for k in _RATE},
            "trusted_proxies": list(self.trusted_proxies)}
        if self.isolation is not None:
            out["isolation"] = self.isolation
        if self.db_url is not None:
            out["db_url"] = self.db_url
        if self.deadline is not None:
            out["deadline"] = self.deadline.isoformat()
        out["final"] = {"pairs": self.final.pairs}
        if self.final.swiss:
            out["final"]["format"] = "swiss"
            if self.final.rounds is not None:
                out["final"]["rounds"] = self.final.rounds
        ladder: dict[str, Any] = {}
        if self.ladder.opponents is not None:
            ladder["opponents"] = self.ladder.opponents
        if self.ladder.idle_games:
            ladder["idle_games"] = True
        if ladder:
            out["ladder"] = ladder
        out["matches"] = {"per_hour": self.matches.per_hour}
        return out


def _mapping(value: Any, where: str, known: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"expected a mapping with keys {', '.join(known)}, got "
                          f"{type(value).__name__}", where or "(top level)")
    for key in value:
        if key not in known:
            raise ConfigError(f"unknown key ({did_you_mean(str(key), known)}expected one of: "
                              f"{', '.join(known)})",
                              f"{where}.{key}" if where else str(key))
    return dict(value)


def _time(value: Any) -> TimeControl:
    """The judge's time control; ``charge`` (``auto`` by default: the CPU clock where this
    machine has one, :func:`arena.sandbox.default_charge`) and ``wall_factor`` as in a
    tournament file."""
    from arena.clock import CHARGES
    from arena.sandbox import default_charge

    if value is None:
        return TimeControl(movetime_ms=200, clock=default_charge())
    if isinstance(value, (int, str)) and not isinstance(value, bool):
        try:
            return TimeControl.parse(str(value), clock=default_charge())
        except ConfigError as e:
            raise ConfigError(str(e), "time") from None
    tm = _mapping(value, "time", _TIME)
    kwargs: dict[str, Any] = {"movetime_ms": None}
    if "movetime" in tm:
        kwargs["movetime_ms"] = R.MOVETIME_MS.check(tm["movetime"], "time.movetime")
    if "handshake" in tm:
        kwargs["handshake_ms"] = R.HANDSHAKE_MS.check(tm["handshake"], "time.handshake")
    if "margin" in tm:
        kwargs["margin_ms"] = R.MARGIN_MS.check(tm["margin"], "time.margin")
    charge = tm.get("charge", "auto")
    if charge not in CHARGES:
        raise ConfigError(f"expected one of {', '.join(CHARGES)}, got {str(charge)[:40]!r}",
                          "time.charge")
    kwargs["clock"] = default_charge() if charge == "auto" else charge
    if "wall_factor" in tm:
        kwargs["wall_factor"] = float(R.check_wall_factor(tm["wall_factor"], "time.wall_factor"))
    if "clock" in tm:
        if not isinstance(tm["clock"], str):
            raise ConfigError("expected base+increment in seconds (e.g. 60+1)", "time.clock")
        try:
            clock = TimeControl.parse(tm["clock"])
        except ConfigError as e:
            raise ConfigError(str(e), "time.clock") from None
        kwargs["base_ms"], kwargs["increment_ms"] = clock.base_ms, clock.increment_ms
    if kwargs["movetime_ms"] is None and "base_ms" not in kwargs:
        raise ConfigError("expected 'movetime' (ms per move), 'clock' or both", "time")
    try:
        return TimeControl(**kwargs)
    except ConfigError as e:
        raise ConfigError(str(e), "time") from None


def _rate(value: Any, where: str) -> str:
    """A rate in the ``limits`` library's notation, checked by that library."""
    from limits import parse

    if not isinstance(value, str):
        raise ConfigError("expected a rate such as 600/minute or 10 per second", where)
    try:
        item = parse(value)
    except ValueError:
        raise ConfigError(f"expected a rate such as 600/minute or 10 per second, got "
                          f"{value[:40]!r}", where) from None
    if item.amount < 1:
        raise ConfigError("expected at least 1 request in the window", where)
    return value


def _proxies(value: Any) -> tuple[str, ...]:
    """A list of addresses or networks (CIDR), each checked by :mod:`ipaddress`."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise ConfigError("expected a list of addresses or networks (127.0.0.1, 10.0.0.0/8)",
                          "trusted_proxies")
    out = []
    for i, item in enumerate(value):
        try:
            if not isinstance(item, str):
                raise ValueError
            ipaddress.ip_network(item.strip(), strict=False)
        except ValueError:
            raise ConfigError(f"expected an address or network (127.0.0.1, 10.0.0.0/8, ::1), "
                              f"got {str(item)[:40]!r}", f"trusted_proxies[{i}]") from None
        out.append(item.strip())
    return tuple(out)


def _deadline(value: Any) -> Optional[datetime]:
    """An ISO 8601 date and time with a UTC offset (YAML reads an unquoted one as a
    timestamp; a quoted one is parsed here); None or ``none``: no deadline."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("none", "")):
        return None
    expected = "expected an ISO 8601 date and time with an offset (2026-12-15T18:00:00+01:00)"
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ConfigError(f"{expected}, got {value[:40]!r}", "deadline") from None
    if not isinstance(value, datetime):
        shown = value.isoformat() if isinstance(value, date) else repr(value)[:40]
        raise ConfigError(f"{expected}, got {shown}", "deadline")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ConfigError(f"{expected}: {value.isoformat()} has no offset (add +00:00 for "
                          f"UTC)", "deadline")
    return value


def _final(value: Any) -> FinalSettings:
    """``final``: ``pairs``, ``format`` (``round-robin`` or ``swiss``) and, for a Swiss only,
    ``rounds``."""
    fin = _mapping(value or {}, "final", _FINAL)
    kind = fin.get("format", "round-robin")
    if kind not in FINAL_FORMATS:
        raise ConfigError(f"expected one of {', '.join(FINAL_FORMATS)}, got "
                          f"{str(kind)[:40]!r}", "final.format")
    rounds = fin.get("rounds")
    if rounds is not None and kind != "swiss":
        raise ConfigError("a round robin plays every meeting: 'rounds' goes with "
                          "format: swiss", "final.rounds")
    return FinalSettings(pairs=FINAL_PAIRS.check(fin.get("pairs", 10), "final.pairs"),
                         format=kind, rounds=None if rounds is None
                         else SWISS_ROUNDS.check(rounds, "final.rounds"))


def proxy_networks(config: ServerConfig) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network,
                                                  ...]:
    """The networks of ``config.trusted_proxies`` (an address is a network of one)."""
    return tuple(ipaddress.ip_network(p, strict=False) for p in config.trusted_proxies)


def parse_server_config(data: Any) -> ServerConfig:
    """Check ``data`` (parsed YAML; None for an empty file) into a :class:`ServerConfig`.

    :raises ConfigError: naming the key path and what was expected.
    """
    top = _mapping({} if data is None else data, "", _TOP)
    name = top.get("name", "competition")
    if not isinstance(name, str) or not name.strip() or len(name) > R.NAME_MAX:
        raise ConfigError(f"expected a name of 1..{R.NAME_MAX} characters", "name")
    raw_variants = top.get("variants", ["nine-mens-morris"])
    if isinstance(raw_variants, str):
        raw_variants = [raw_variants]
    if not isinstance(raw_variants, list) or not raw_variants:
        raise ConfigError("expected a list of variant names", "variants")
    variants = []
    for i, v in enumerate(raw_variants):
        if not isinstance(v, str):
            raise ConfigError("expected a variant name", f"variants[{i}]")
        try:
            variants.append(get_variant(v))
        except KeyError as e:
            raise ConfigError(str(e.args[0]), f"variants[{i}]") from None
    isolation = top.get("isolation")
    if isolation is not None:
        from arena.sandbox import Isolation

        Isolation.parse(isolation, "isolation")  # checked now; kept as given (plain data)
    executor, scheduler = top.get("executor", "local"), None
    if isinstance(executor, Mapping):
        ex = _mapping(executor, "executor", _EXECUTOR)
        executor, scheduler = ex.get("kind", "local"), ex.get("scheduler")
        if scheduler is not None and (not isinstance(scheduler, str) or not scheduler):
            raise ConfigError("expected a scheduler address (tcp://host:8786)",
                              "executor.scheduler")
    if executor not in ("local", "dask"):
        raise ConfigError(f"expected local or dask, got {executor!r}", "executor")
    if executor == "dask" and scheduler is None:
        raise ConfigError("a dask executor needs a scheduler address", "executor.scheduler")
    up = _mapping(top.get("upload", {}), "upload", _UPLOAD)
    upload = UploadLimits(
        max_bytes=BYTES.check(up.get("max_bytes", 5_000_000), "upload.max_bytes"),
        max_unpacked_bytes=BYTES.check(up.get("max_unpacked_bytes", 50_000_000),
                                       "upload.max_unpacked_bytes"),
        max_files=FILES.check(up.get("max_files", 2000), "upload.max_files"),
        per_hour=PER_HOUR.check(up.get("per_hour", 10), "upload.per_hour"),
        max_kept_bytes=KEPT_BYTES.check(up.get("max_kept_bytes", 300_000_000),
                                        "upload.max_kept_bytes"),
        max_kept_files=KEPT_FILES.check(up.get("max_kept_files", 20_000),
                                        "upload.max_kept_files"),
        keep_versions=KEEP_VERSIONS.check(up.get("keep_versions", 3), "upload.keep_versions"))
    rl = _mapping(top.get("rate_limit", {}), "rate_limit", _RATE)
    rate_limit = RateLimits(**{k: _rate(rl[k], f"rate_limit.{k}") for k in _RATE if k in rl})
    db_url = top.get("db_url")
    if db_url is not None and (not isinstance(db_url, str) or "://" not in db_url):
        raise ConfigError("expected a database URL (postgresql://user@host/db)", "db_url")
    final = _final(top.get("final"))
    lad = _mapping(top.get("ladder") or {}, "ladder", _LADDER)
    opponents = lad.get("opponents")
    idle = lad.get("idle_games", False)
    if not isinstance(idle, bool):
        raise ConfigError(f"expected true or false, not {idle!r}", "ladder.idle_games")
    ladder = LadderSettings(None if opponents is None
                            else OPPONENTS.check(opponents, "ladder.opponents"), idle)
    mat = _mapping(top.get("matches") or {}, "matches", _MATCHES)
    matches = MatchSettings(MATCHES_PER_HOUR.check(mat.get("per_hour", 20), "matches.per_hour"))
    return ServerConfig(
        name=name.strip(), variants=tuple(variants), time_control=_time(top.get("time")),
        isolation=isolation, pairs=PAIRS.check(top.get("pairs", 2), "pairs"),
        check_games=CHECK_GAMES.check(top.get("check_games", 2), "check_games"),
        check_workers=CHECK_WORKERS.check(top.get("check_workers", 2), "check_workers"),
        check_timeout=CHECK_TIMEOUT.check(top.get("check_timeout", 600), "check_timeout"),
        workers=WORKERS.check(top.get("workers", 2), "workers"),
        nice=NICE.check(top.get("nice", 10), "nice"), executor=executor,
        scheduler=scheduler, upload=upload, rate_limit=rate_limit,
        trusted_proxies=_proxies(top.get("trusted_proxies")), db_url=db_url,
        deadline=_deadline(top.get("deadline")), final=final, ladder=ladder, matches=matches)


def load_server_config(path: str | os.PathLike[str]) -> ServerConfig:
    """Read and check a server YAML file.

    :raises ConfigError: unreadable, not YAML, or a wrong value (with the file's name).
    """
    import yaml

    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"cannot read {p}: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{p.name}: not valid YAML ({str(e).splitlines()[0]})") from None
    try:
        return parse_server_config(data)
    except ConfigError as e:
        raise ConfigError(str(e), p.name) from None
