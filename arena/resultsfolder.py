"""The results folder of a tournament: taking it (its lock), creating or checking it against
the configuration it holds (``config.json``: the same games, or only more of them), and moving
the lines of ``games.jsonl`` that are not records aside.

:func:`arena.tournament.run_tournament` calls these first (steps 1 and 2 of its docstring);
:mod:`arena.sprtrun` and :mod:`arena.tuning` use the same file names and repair.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from arena.config import TournamentConfig
from arena.errors import ArenaError, ConfigError
from arena.lock import LOCK_FILE, FolderLock
from arena.records import GameRecord, atomic_write, repair_records

log = logging.getLogger("arena.tournament")

GAMES_FILE = "games.jsonl"
#: where lines of ``games.jsonl`` that are not records are moved (see :func:`repair_games`)
REJECTED_FILE = "games.rejected.jsonl"
CONFIG_FILE = "config.json"
LOG_FILE = "arena.log"
STANDINGS_FILE = "standings.csv"
GAMES_CSV = "games.csv"
#: exit status of an interrupted run (128 + SIGINT, as shells report it)
INTERRUPTED_STATUS = 130


class ResultsMismatch(ConfigError):
    """The results folder holds games of a different configuration."""


class WorkerFailure(ArenaError):
    """The executor broke (a worker process of the local pool died outside a game's
    control): see :meth:`arena.executors.GameExecutor.broken`."""


# --------------------------------------------------------------------------------------
# The results folder
# --------------------------------------------------------------------------------------


def lock_results(config: TournamentConfig) -> FolderLock:
    """Take the lock of ``config``'s results folder (creating the folder) and return it;
    release it (or use it as a context manager) when the run ends.

    A folder that exists and is not a results folder is refused first, so that no lock
    file is left in it.

    :raises FolderInUse: another runner holds the folder ("results/NAME is in use by pid N").
    :raises ResultsMismatch: ``output`` is a file, or a folder that is not a results folder.
    """
    folder = config.output
    _refuse_foreign(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ResultsMismatch(f"cannot create {folder}: {e.strerror}", "output") from None
    lock = FolderLock(folder, shown=str(folder))
    lock.acquire()
    return lock


def prepare_results(config: TournamentConfig, *, restart: bool = False) -> Path:
    """Create or check the results folder and return it (:func:`open_results`, for callers
    that need only the folder)."""
    return open_results(config, restart=restart)[0]


def open_results(config: TournamentConfig, *,
                 restart: bool = False) -> tuple[Path, TournamentConfig]:
    """Create or check the results folder; return it and the configuration to run.

    A new (or empty) folder gets ``config.json``; ``restart`` discards an existing folder's
    contents first.  An existing folder resumes when ``config`` plays every game the stored
    configuration plays, unchanged (:func:`compare_configs`): the same configuration, or one
    that only adds games (``games_per_pairing`` or ``format.rounds`` raised, bots or variants
    added).  The configuration returned is ``config`` with its bots in the order they joined
    the tournament (the stored ones first, new ones after), so that every game keeps its id,
    colours, opening and seed; when it adds games, ``config.json`` is rewritten to it
    (atomically, before any new game is played: a crash leaves the old or the new file, and
    either resumes).  ``games.jsonl`` is never touched here.  Call it holding the folder's
    lock (:func:`lock_results`), as :func:`run_tournament` does.

    :raises ResultsMismatch: the folder holds games this configuration would play
        differently or drop (naming the keys), or is not a results folder at all.
    """
    folder = config.output
    stored_path = folder / CONFIG_FILE
    _refuse_foreign(folder)
    created, grown = _now(), False
    if folder.is_dir() and _has_content(folder):
        stored = _read_stored_config(stored_path)
        if restart:
            _clear_results(folder)
        else:
            old = stored.get("config")
            if not isinstance(old, dict):
                raise ResultsMismatch(f"{stored_path} holds no configuration; run with "
                                      f"--restart to start over")
            comparison = compare_configs(old, config)
            if comparison.refused:
                raise ResultsMismatch(_mismatch_message(folder, comparison))
            if not comparison.added:
                return folder, comparison.config
            created, grown = str(stored.get("created", created)), True
            config = comparison.config
            log.info("%s grows: %s", folder, "; ".join(comparison.added))
    folder.mkdir(parents=True, exist_ok=True)
    stored = {"digest": config.digest(), "created": created, "config": config.normalised()}
    if grown:
        stored["grown"] = _now()
    atomic_write(stored_path, (json.dumps(stored, indent=2) + "\n").encode("utf-8"))
    return folder, config


@dataclass(frozen=True)
class Comparison:
    """A configuration against the one stored in a results folder.

    ``refused``: the keys whose change alters or drops games already scheduled, each with
    what changed (``time``, ``bots (removed: x)``...).  ``added``: what only adds games
    (``games_per_pairing 2 -> 4``...).  ``config``: the new configuration with its bots in
    joining order (and the stored schedule scheme), the one to run when nothing is refused.
    """

    refused: tuple[str, ...]
    added: tuple[str, ...]
    config: TournamentConfig


#: keys that must not change at all: each decides how every game is played
_FIXED = ("name", "time", "seed")


def compare_configs(old: dict[str, Any], config: TournamentConfig) -> Comparison:
    """Compare ``config`` with ``old``, a stored normalised configuration.

    Allowed, as they only add games: raising ``games_per_pairing`` or ``format.rounds``,
    adding bots (anywhere in the file: bots are matched by display name) or variants
    (matched by name), and reordering either list.  Refused, as they alter or drop games
    already scheduled: a change of ``name``, ``time``, ``seed``, ``openings`` (the book's
    content and order; not its path), ``format.type`` or ``format.seeds``, a bot's path,
    command or options, a variant's rules, ``isolation.limits`` (they decide whether a bot
    can play: its level may change, as may ``workers``, ``output``, ``report`` and
    ``executor``), and lowering a count or removing a bot or a variant (their games would
    silently leave the standings).  A folder made before tournaments could grow (no
    ``schedule`` key) resumes only unchanged.
    """
    new = config.normalised()
    refused: list[str] = [k for k in _FIXED if old.get(k) != new.get(k)]
    added: list[str] = []
    old_openings = {k: v for k, v in (old.get("openings") or {}).items() if k != "file"}
    if old_openings != {k: v for k, v in new["openings"].items() if k != "file"}:
        refused.append("openings")
    old_format = old.get("format") or {}
    for key in ("type", "seeds", "tiebreak_pairs"):
        if old_format.get(key) != new["format"].get(key):
            refused.append(f"format.{key}")
    _compare_count(old_format.get("rounds"), new["format"]["rounds"], "format.rounds",
                   refused, added)
    _compare_count(old.get("games_per_pairing"), new["games_per_pairing"], "games_per_pairing",
                   refused, added)
    if _limits(old.get("isolation")) != _limits(new["isolation"]):
        refused.append("isolation.limits")
    old_bots = _by_name(old.get("bots"))
    _compare_named("bots", old_bots, _by_name(new["bots"]), refused, added)
    _compare_named("variants", _by_name(old.get("variants")), _by_name(new["variants"]),
                   refused, added)
    if config.format.staged:  # its rounds were paired from the games before them
        grown = [a for a in added if not (a.startswith("format.rounds")
                                          and config.format.kind == "swiss")]
        if grown:
            refused.append(f"{', '.join(grown)} (a {config.format.kind} grows only by further "
                           f"Swiss rounds: its rounds were paired from the games before them)")
            added = [a for a in added if a not in grown]
    rank = {name: i for i, name in enumerate(old_bots)}
    bots = tuple(sorted(config.bots, key=lambda b: rank.get(b.name, len(rank))))  # stable
    scheme = old.get("schedule", 1)
    if scheme != config.scheme and (refused or added):
        refused = [f"{', '.join(refused + added)}; the folder was made before tournaments "
                   f"could grow, so it resumes only unchanged"]
    return Comparison(tuple(refused), tuple(added),
                      dataclasses.replace(config, bots=bots, scheme=scheme))


def _compare_count(old: Any, new: int, key: str, refused: list[str], added: list[str]) -> None:
    if old == new:
        return
    if isinstance(old, int) and new > old:
        added.append(f"{key} {old} -> {new}")
    else:
        refused.append(f"{key} (lowered from {old} to {new})" if isinstance(old, int) else key)


def _compare_named(key: str, old: dict[str, Any], new: dict[str, Any], refused: list[str],
                   added: list[str]) -> None:
    """Compare two lists of named entries (bots, variants) by name."""
    gone = [name for name in old if name not in new]
    changed = [name for name in old if name in new and old[name] != new[name]]
    if gone:
        refused.append(f"{key} (removed: {', '.join(gone)})")
    for name in changed:
        parts = sorted(k for k in set(old[name]) | set(new[name])
                       if old[name].get(k) != new[name].get(k))
        refused.append(f"{key} ({name}: {', '.join(parts)})")
    fresh = [name for name in new if name not in old]
    if fresh:
        added.append(f"{key} + {', '.join(fresh)}")


def _by_name(entries: Any) -> dict[str, Any]:
    """A stored list of bots or variants by name (in order)."""
    if not isinstance(entries, list):
        return {}
    return {str(e.get("name")): e for e in entries if isinstance(e, dict)}


def _limits(isolation: Any) -> Any:
    """The limits of a stored ``isolation`` (``best``: the default limits)."""
    if isinstance(isolation, dict):
        return isolation.get("limits")
    from dataclasses import asdict

    from arena.sandbox import Limits

    return asdict(Limits())


def _mismatch_message(folder: Path, comparison: Comparison) -> str:
    return (f"{folder} holds games that this configuration would play differently or drop "
            f"(changed: {'; '.join(comparison.refused)}); only adding games (raising "
            f"games_per_pairing or format.rounds, adding bots or variants) keeps them: run "
            f"with --restart to discard them, or give the tournament a new name")


def _refuse_foreign(folder: Path) -> None:
    """Refuse an ``output`` that is a file, or a folder with content but no ``config.json``."""
    if folder.exists() and not folder.is_dir():
        raise ResultsMismatch(f"{folder} is a file, not a results folder", "output")
    if folder.is_dir() and not (folder / CONFIG_FILE).is_file() and _has_content(folder):
        raise ResultsMismatch(f"{folder} exists and is not a Morris Arena results folder "
                              f"(no {CONFIG_FILE}): choose another 'output' or name", "output")


def _has_content(folder: Path) -> bool:
    """True when ``folder`` holds anything besides its lock file."""
    return any(child.name != LOCK_FILE for child in folder.iterdir())


def _read_stored_config(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ResultsMismatch(f"{path} is unreadable ({e}); run with --restart to start over")
    if not isinstance(data, dict):
        raise ResultsMismatch(f"{path} is not a stored configuration; run with --restart")
    return data


def _clear_results(folder: Path) -> None:
    """Remove the contents of a results folder (known to be ours: it has config.json), but
    its lock file, which this process holds."""
    import shutil

    for child in folder.iterdir():
        if child.name == LOCK_FILE:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def repair_games(folder: Path) -> int:
    """Move the lines of ``folder/games.jsonl`` that are not records (a torn last line left
    by a crash, a hand edit, a stray comment) to ``games.rejected.jsonl`` beside it and return
    how many were moved.  Every line that parses stays; the games of the moved lines are no
    longer finished, so the run plays them again.  Call it holding the folder's lock.

    :raises ArenaError: a file cannot be read or written.
    """
    return read_repaired_games(folder)[0]


def read_repaired_games(folder: Path) -> tuple[int, list[GameRecord]]:
    """:func:`repair_games`, also returning the records that stay (``games.jsonl`` is read
    once)."""
    return repair_records(folder / GAMES_FILE, folder / REJECTED_FILE)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
