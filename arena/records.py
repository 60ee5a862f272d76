"""Game records: one JSON object per game, appended to ``games.jsonl`` crash-safely.

A record is the single source of truth about a game; standings, ratings, charts and reports
are all computed from records (see ``arena.ratings`` and ``arena.report``).

The file is read and written a line (or a row) at a time, never whole (issue 39):
:func:`iter_records` and :func:`iter_lines` read it, skipping a torn last line;
:func:`scan_records` gives every line with its offset and record; :func:`repair_lines`
moves the lines that are not records aside (:func:`repair_records` keeps a list of the
rest); :func:`write_games_csv` and :func:`atomic_write_chunks` write through a temporary
file as their input comes.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, TypeVar

from arena.errors import ArenaError
from arena.protocol import SETUP, split_setup

SCHEMA = 1

T = TypeVar("T")


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
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to the descriptor ``fd``."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


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


# ---------------------------------------------------------------------------------------
# Reading games.jsonl a line at a time (never the whole file, never a list of its records)
# ---------------------------------------------------------------------------------------


def _file_lines(path: Path) -> Iterator[bytes]:
    """The lines of ``path`` as read, each with its newline (the last one may have none);
    nothing for a file that does not exist.

    :raises ArenaError: the file cannot be read.
    """
    try:
        with open(path, "rb") as f:
            yield from f
    except FileNotFoundError:
        return
    except OSError as e:
        raise ArenaError(f"cannot read {path}: {e.strerror}") from None


def scan_records(path: str | os.PathLike[str]
                 ) -> Iterator[tuple[int, bytes, Optional[GameRecord]]]:
    """``(offset, line, record)`` of every line of a ``games.jsonl`` file that is not blank,
    read one at a time: where the line starts, the line without its newline, and its record
    (:func:`parse_record`), None when it does not parse.  No line is skipped as torn (see
    :func:`repair_lines`, which moves such lines aside).

    :raises ArenaError: the file cannot be read.
    """
    offset = 0
    for line in _file_lines(Path(path)):
        size = len(line)
        raw = line[:-1] if line.endswith(b"\n") else line
        if raw.strip():
            try:
                record: Optional[GameRecord] = parse_record(raw)
            except ValueError:
                record = None
            yield offset, raw, record
        offset += size


def ends_open(path: str | os.PathLike[str]) -> bool:
    """Whether the file at ``path`` is not empty and does not end with a newline (a torn
    last write, or a hand edit).

    :raises ArenaError: the file cannot be read.
    """
    try:
        with open(path, "rb") as f:
            if f.seek(0, os.SEEK_END) == 0:
                return False
            f.seek(-1, os.SEEK_END)
            return f.read(1) != b"\n"
    except FileNotFoundError:
        return False
    except OSError as e:
        raise ArenaError(f"cannot read {path}: {e.strerror}") from None


def iter_lines(path: str | os.PathLike[str], parse: Callable[[bytes], T]) -> Iterator[T]:
    """``parse(line)`` of every line of a ``games.jsonl`` file that is not blank (the line
    without its newline), read one line at a time.

    A line ``parse`` refuses (``ValueError``) is skipped when it is torn (a crash
    mid-write): among the file's last two (the last two elements of the file split at
    newlines: its last line, or the one before a last line without its newline) and not
    ending with ``}``; any other is an :class:`ArenaError` naming the file and line with
    ``parse``'s error.

    :raises ArenaError: a line that is not torn does not parse, or the file cannot be read.
    """
    p = Path(path)
    lines = _file_lines(p)
    ahead: deque[bytes] = deque()
    n = 0
    while True:
        line = ahead.popleft() if ahead else next(lines, b"")
        if not line:
            return
        n += 1
        raw = line[:-1] if line[-1:] == b"\n" else line
        try:
            item = parse(raw)
        except ValueError as e:
            if not raw.strip():
                continue  # a blank line
            while len(ahead) < 2:  # only for a line that does not parse: look ahead
                more = next(lines, b"")
                if not more:
                    break
                ahead.append(more)
            last = not ahead or (len(ahead) == 1 and not ahead[0].endswith(b"\n"))
            if last and not raw.endswith(b"}"):
                continue  # a torn final line
            raise ArenaError(f"{p}:{n}: not a game record ({e})") from None
        yield item


def iter_records(path: str | os.PathLike[str]) -> Iterator[GameRecord]:
    """The records of a ``games.jsonl`` file, read one line at a time; a torn last line (a
    crash mid-write) is skipped, any other line that is not a record is an
    :class:`ArenaError` (:func:`iter_lines`)."""
    return iter_lines(path, parse_record)


def read_records(path: str | os.PathLike[str]) -> list[GameRecord]:
    """All records of a ``games.jsonl`` file (see :func:`iter_records`)."""
    return list(iter_records(path))


# ---------------------------------------------------------------------------------------
# Repairing games.jsonl: the lines that are not records moved aside
# ---------------------------------------------------------------------------------------


def set_aside_unreadable(path: str | os.PathLike[str],
                         side: str | os.PathLike[str]) -> int:
    """Move the lines of ``path`` that are not records to the end of ``side`` and return how
    many were moved (see :func:`repair_records`; no record is kept)."""
    return repair_lines(path, side)[0]


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

    The caller must own the file (no one may append to it meanwhile).  The file is read a
    line at a time (:func:`repair_lines`); only the list returned holds every record.

    :raises ArenaError: a file cannot be read or written.
    """
    records: list[GameRecord] = []
    moved, _ = repair_lines(path, side, lambda record, _offset: records.append(record))
    return moved, records


def repair_lines(path: str | os.PathLike[str], side: str | os.PathLike[str],
                 keep: Optional[Callable[[GameRecord, int], object]] = None
                 ) -> tuple[int, bool]:
    """:func:`repair_records` a line at a time: ``keep(record, offset)`` is called for every
    record of ``path`` as it is read (``offset``: where its line started before any rewrite);
    returns how many lines were moved to ``side`` and whether ``path`` was rewritten (then
    the offsets have changed: read it again).  One pass when nothing has to change (the
    common case); else one more, :func:`rewrite_records`.

    :raises ArenaError: a file cannot be read or written.
    """
    moved = 0
    for offset, _raw, record in scan_records(path):
        if record is None:
            moved += 1
        elif keep is not None:
            keep(record, offset)
    if not moved and not ends_open(path):
        return 0, False
    return rewrite_records(path, side), True


def rewrite_records(path: str | os.PathLike[str], side: str | os.PathLike[str]) -> int:
    """Move the lines of ``path`` that are not records to the end of ``side`` and replace
    ``path`` by its record lines, each ended by a newline (blank lines dropped), in one pass
    streamed through a temporary file (:func:`atomic_write_chunks`); ``side`` is synced
    before ``path`` is replaced.  Returns how many lines were moved (see
    :func:`repair_records`, which rewrites only when something has to change).

    :raises ArenaError: a file cannot be read or written.
    """
    p = Path(path)
    moved = _Appender(Path(side))

    def record_lines() -> Iterator[bytes]:
        for _offset, raw, record in scan_records(p):
            if record is None:
                moved.add(raw + b"\n")
            else:
                yield raw + b"\n"
        moved.sync()  # before atomic_write_chunks replaces path

    try:
        atomic_write_chunks(p, record_lines())
    except OSError as e:
        raise ArenaError(f"cannot rewrite {p}: {e.strerror}") from None
    finally:
        moved.close()
    return moved.count


class _Appender:
    """Lines appended to a file (opened on the first one), synced by :meth:`sync`.

    :raises ArenaError: the file cannot be written.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        self._fd: Optional[int] = None

    def add(self, data: bytes) -> None:
        try:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT
                                   | os.O_CLOEXEC, 0o644)
            _write_all(self._fd, data)
        except OSError as e:
            raise ArenaError(f"cannot write {self.path}: {e.strerror}") from None
        self.count += 1

    def sync(self) -> None:
        if self._fd is not None:
            try:
                os.fsync(self._fd)
            except OSError as e:
                raise ArenaError(f"cannot write {self.path}: {e.strerror}") from None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


# ---------------------------------------------------------------------------------------
# Tables and atomic writes
# ---------------------------------------------------------------------------------------


#: the columns of ``games.csv`` (and of :func:`records_table`)
GAMES_CSV_COLUMNS = ("game_id", "tournament", "round", "pair", "variant", "white", "black",
                     "result", "white_score", "black_score", "termination", "forfeit", "plies",
                     "opening", "seed", "started", "finished", "host", "worker")


def record_row(r: GameRecord) -> dict[str, Any]:
    """One game as a plain row (the columns of :data:`GAMES_CSV_COLUMNS`)."""
    return {
        "game_id": r.game_id, "tournament": r.tournament, "round": r.round, "pair": r.pair,
        "variant": r.variant, "white": r.white.name, "black": r.black.name,
        "result": r.result, "white_score": r.score("white"), "black_score": r.score("black"),
        "termination": r.termination, "forfeit": r.forfeit, "plies": r.plies,
        "opening": " ".join(r.opening), "seed": r.seed, "started": r.started,
        "finished": r.finished, "host": r.host, "worker": r.worker,
    }


def record_rows(records: Iterable[GameRecord]) -> list[dict[str, Any]]:
    """One plain row per game (:func:`record_row`)."""
    return [record_row(r) for r in records]


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
    csv module (no pandas: a run's tables cost no import of it) and atomically, a row at a
    time (``records`` are read once, in their order, and never held together)."""
    atomic_write_chunks(path, _csv_lines(records))


def _csv_lines(records: Iterable[GameRecord]) -> Iterator[bytes]:
    """The lines of ``games.csv`` (:func:`write_games_csv`), encoded, one at a time."""
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(GAMES_CSV_COLUMNS)
    yield out.getvalue().encode("utf-8")
    for record in records:
        out.seek(0)
        out.truncate()
        row = record_row(record)
        writer.writerow(["" if row[c] is None else spreadsheet_safe(row[c])
                         for c in GAMES_CSV_COLUMNS])
        yield out.getvalue().encode("utf-8")


def atomic_write(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``.

    A crash leaves either the old file or the new one, never half of one.
    """
    atomic_write_chunks(path, (data,))


def atomic_write_chunks(path: str | os.PathLike[str], chunks: Iterable[bytes]) -> None:
    """:func:`atomic_write` of the concatenated ``chunks``, written as they come (never
    joined in memory): a temporary file in ``path``'s folder, synced, then ``os.replace``.
    An error (from writing, or from ``chunks``) leaves the old file and no temporary one."""
    folder, name = os.path.split(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
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
