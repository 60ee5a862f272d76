"""Game records: one JSON object per game, appended to ``games.jsonl`` crash-safely.

A record is the single source of truth about a game; standings, ratings, charts and reports
are all computed from a list of records (see ``arena.ratings`` and ``arena.report``).
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

from arena.errors import ArenaError
from arena.protocol import SETUP, split_setup

SCHEMA = 1


@dataclass
class PlayerInfo:
    """Who played one colour: display name, bot folder name, folder path, options set, and
    how many games its process had played before this one (0: a fresh process; more only
    with ``restart: per-pairing``)."""

    name: str
    bot: str = ""
    path: str = ""
    options: dict[str, str] = field(default_factory=dict)
    games_before: int = 0


@dataclass
class MoveInfo:
    """One turn: the move text, the wall (and CPU, if measured) milliseconds, and the
    milliseconds the bot spent runnable but waiting for a CPU (``wait_ms``: the machine's
    load, where the kernel reports it)."""

    move: str
    wall_ms: float = 0.0
    cpu_ms: Optional[float] = None
    opening: bool = False
    wait_ms: Optional[float] = None
    #: what the bot said of its search for this move: the conventional ``info`` fields
    #: (:func:`arena.protocol.parse_info`: depth, seldepth, score, nodes, nps, time, pv,
    #: string, other), the later lines of the move overriding the earlier; None if it sent
    #: none.  Records written before it have no such key (read as None).
    info: Optional[dict[str, Any]] = None


@dataclass
class GameRecord:
    """Everything about one finished game.

    ``result`` is ``1-0`` / ``0-1`` / ``1/2-1/2``; ``termination`` a ``Termination`` value;
    ``forfeit`` names the colour that failed (``white``/``black``) for referee endings, with
    ``detail`` (a human sentence) and ``offending_line`` (what the bot sent, cut to a cap).
    ``host`` is the machine that played the game and ``worker`` the Dask worker's address
    (empty outside a cluster).
    """

    game_id: str
    variant: str
    variant_params: dict[str, Any]
    white: PlayerInfo
    black: PlayerInfo
    result: str
    termination: str
    forfeit: Optional[str] = None
    detail: str = ""
    offending_line: Optional[str] = None
    moves: list[MoveInfo] = field(default_factory=list)
    opening: list[str] = field(default_factory=list)
    final_position: str = ""
    time_control: dict[str, Any] = field(default_factory=dict)
    seed: Optional[int] = None
    tournament: Optional[str] = None
    round: Optional[int] = None
    pair: Optional[int] = None
    started: str = ""
    finished: str = ""
    host: str = ""
    worker: str = ""
    stderr: dict[str, str] = field(default_factory=dict)
    #: the sandbox level the bots ran at (``none``, ``basic``, ``bwrap``; see docs/SECURITY.md)
    isolation: str = ""
    #: ``per-game`` (fresh bot processes) or ``per-pairing`` (processes kept between the
    #: games of a pairing: see docs/TOURNAMENTS.md, *restart*)
    restart: str = "per-game"
    #: earlier plays of this game that were not counted: a bot lost on time while the
    #: machine starved it (each entry says what happened; see arena.referee.starved)
    replays: list[str] = field(default_factory=list)
    #: not empty: the game could not be played fairly (a bot was starved in every play):
    #: it does not count; runners leave it unplayed (it is played again later)
    void: str = ""
    #: a game ended early by the referee's adjudication (``termination`` ``adjudication``
    #: or ``tablebase``): ``{"rule": "draw"|"resign"|"max_turns"|"tablebase", "scores":
    #: [white's last score, black's]}``; None otherwise
    adjudication: Optional[dict[str, Any]] = None
    schema: int = SCHEMA
    #: the position the game started from, in the protocol's position text
    #: (``Position.to_text``), for a game from a set-up position (a position book,
    #: ``start_position:``, ``arena play --position``); None (and no key in the JSON: older
    #: records read the same) for the variant's start position.  ``opening`` and ``moves``
    #: are counted from it.
    start_position: Optional[str] = None

    def __post_init__(self) -> None:
        # an opening whose first item is ``setup <text>`` (a position book's line, carried
        # by a schedule's slot): its position is the start, the rest the opening's moves
        if self.opening and self.opening[0].startswith(SETUP + " "):
            start, self.opening = split_setup(self.opening)
            self.start_position = self.start_position or start

    @property
    def winner(self) -> Optional[str]:
        """``white``, ``black`` or ``None`` for a draw."""
        return {"1-0": "white", "0-1": "black"}.get(self.result)

    @property
    def plies(self) -> int:
        return len(self.moves)

    def score(self, color: str) -> float:
        """1, 0.5 or 0 for ``color``."""
        if self.result == "1/2-1/2":
            return 0.5
        return 1.0 if self.winner == color else 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if d["start_position"] is None:  # the variant's start: the JSON of older records
            del d["start_position"]
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GameRecord:
        d = dict(d)
        d["white"] = PlayerInfo(**d["white"])
        d["black"] = PlayerInfo(**d["black"])
        d["moves"] = [MoveInfo(**m) for m in d.get("moves", [])]
        return cls(**d)


def append_record(path: str | os.PathLike[str], record: GameRecord) -> None:
    """Append ``record`` as one line and fsync it before returning.

    A single ``write`` of one complete line on an ``O_APPEND`` descriptor: a crash leaves at
    worst a torn last line, which :func:`read_records` skips.
    """
    data = (record.to_json() + "\n").encode("utf-8")
    fd = os.open(os.fspath(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
    finally:
        os.close(fd)


def parse_record(line: bytes | str) -> GameRecord:
    """One ``games.jsonl`` line as a record.

    :raises ValueError: the line is not JSON, not an object, or not a game record (a missing
        or unknown field, a player or move of the wrong shape).
    """
    try:
        data = json.loads(line)
        if not isinstance(data, dict):
            raise ValueError(f"a JSON {type(data).__name__}, not an object")
        return GameRecord.from_dict(data)
    except (TypeError, KeyError, AttributeError) as e:
        raise ValueError(f"not a game record ({type(e).__name__}: {e})") from None


def set_aside_unreadable(path: str | os.PathLike[str],
                         side: str | os.PathLike[str]) -> int:
    """Move the lines of ``path`` that are not records to the end of ``side`` and return how
    many were moved (see :func:`repair_records`)."""
    return repair_records(path, side)[0]


def repair_records(path: str | os.PathLike[str],
                   side: str | os.PathLike[str]) -> tuple[int, list[GameRecord]]:
    """Move the lines of ``path`` that are not records (see :func:`parse_record`) to the end
    of ``side``; return how many were moved and the records that stay (read once: a resuming
    runner needs both).

    Every line that parses stays, in its order and byte for byte (blank lines go when the file
    is rewritten).  A last line without its newline (a write torn by a crash, or a hand edit)
    is moved aside like any other when it does not parse, and given its newline when it does.
    ``side`` is appended to and fsynced before ``path`` is replaced atomically
    (:func:`atomic_write`): a crash in between leaves the moved lines in both files (moved
    again next time), never in neither.  Nothing is written when there is nothing to change.

    The caller must own the file (no one may append to it meanwhile).

    :raises ArenaError: a file cannot be read or written.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        return 0, []
    except OSError as e:
        raise ArenaError(f"cannot read {p}: {e.strerror}") from None
    keep: list[bytes] = []
    records: list[GameRecord] = []
    moved: list[bytes] = []
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            records.append(parse_record(raw))
        except ValueError:
            moved.append(raw)
        else:
            keep.append(raw)
    if not moved and (not data or data.endswith(b"\n")):
        return 0, records
    if moved:
        _append_lines(Path(side), moved)
    try:
        atomic_write(p, b"".join(line + b"\n" for line in keep))
    except OSError as e:
        raise ArenaError(f"cannot rewrite {p}: {e.strerror}") from None
    return len(moved), records


def _append_lines(path: Path, lines: list[bytes]) -> None:
    """Append ``lines`` (each given its newline) to ``path`` and fsync it."""
    data = b"".join(line + b"\n" for line in lines)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as e:
        raise ArenaError(f"cannot write {path}: {e.strerror}") from None


def iter_records(path: str | os.PathLike[str]) -> Iterator[GameRecord]:
    """The records of a ``games.jsonl`` file; a torn last line (a crash mid-write) is skipped."""
    p = Path(path)
    try:
        lines = p.read_bytes().split(b"\n")
    except FileNotFoundError:
        return
    except OSError as e:
        raise ArenaError(f"cannot read {p}: {e.strerror}") from None
    last = len(lines) - 1
    for n, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            yield parse_record(raw)
        except ValueError as e:
            if n >= last - 1 and not raw.endswith(b"}"):
                continue  # torn final line
            raise ArenaError(f"{p}:{n + 1}: not a game record ({e})") from None


def read_records(path: str | os.PathLike[str]) -> list[GameRecord]:
    """All records of a ``games.jsonl`` file (see :func:`iter_records`)."""
    return list(iter_records(path))


#: the columns of ``games.csv`` (and of :func:`records_table`)
GAMES_CSV_COLUMNS = ("game_id", "tournament", "round", "pair", "variant", "white", "black",
                     "result", "white_score", "black_score", "termination", "forfeit", "plies",
                     "opening", "seed", "started", "finished", "host", "worker")


def record_rows(records: Iterable[GameRecord]) -> list[dict[str, Any]]:
    """One plain row per game (the columns of :data:`GAMES_CSV_COLUMNS`)."""
    return [{
        "game_id": r.game_id, "tournament": r.tournament, "round": r.round, "pair": r.pair,
        "variant": r.variant, "white": r.white.name, "black": r.black.name,
        "result": r.result, "white_score": r.score("white"), "black_score": r.score("black"),
        "termination": r.termination, "forfeit": r.forfeit, "plies": r.plies,
        "opening": " ".join(r.opening), "seed": r.seed, "started": r.started,
        "finished": r.finished, "host": r.host, "worker": r.worker,
    } for r in records]


def records_table(records: list[GameRecord]) -> Any:
    """One row per game as a pandas DataFrame (pandas is imported here, lazily)."""
    import pandas as pd

    return pd.DataFrame(record_rows(records), columns=list(GAMES_CSV_COLUMNS))


def spreadsheet_safe(value: Any) -> Any:
    """``value`` as a CSV cell a spreadsheet will not run as a formula: text starting with
    ``= + - @``, a tab or a carriage return gets a ``'`` in front (bot names are anyone's
    text); anything else is returned as it is."""
    if isinstance(value, str) and value and value[0] in "=+-@\t\r":
        return "'" + value
    return value


def write_games_csv(path: str | os.PathLike[str], records: Iterable[GameRecord]) -> None:
    """``games.csv``: one row per game, names made :func:`spreadsheet_safe`, written with the
    csv module (no pandas: a run's tables cost no import of it) and atomically."""
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(GAMES_CSV_COLUMNS)
    for row in record_rows(records):
        writer.writerow(["" if row[c] is None else spreadsheet_safe(row[c])
                         for c in GAMES_CSV_COLUMNS])
    atomic_write(path, out.getvalue().encode("utf-8"))


def atomic_write(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``.

    A crash leaves either the old file or the new one, never half of one.
    """
    folder, name = os.path.split(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
