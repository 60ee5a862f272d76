"""A competition's games taken away: the finished games of a competition folder as
:class:`~arena.records.GameRecord` s (:func:`competition_records`), and as a results folder
in the layout ``arena run`` writes (:func:`export_competition`: ``games.jsonl``,
``games.csv``, ``standings.csv``, and ``games.pgn``), which ``arena rate``, ``arena report``
and ``arena export`` read like any other.

Which games (``kind``): ``final``, a final round robin's (the latest, as ``arena server
results`` takes it, or final N: its finished games so far if it is still being played);
``ladder``, every finished ladder game (those of retired versions too: the leaderboard
counts the active bots' alone); ``all``, the ladder's and every final's.  The default is
``final`` once a final has started, else ``ladder``.  Test matches (``match``) are
unrated and never exported.  The players are named as the site's game pages name them
(``minimax v4 (alice)``), not by the records' labels (``minimax#12``), so that a table
says whose bot it is.

The competition is only read, never written: the folder gets no file, the database no
write.  SQLite is opened read-only (``mode=ro``); a database no server has open (no
``-wal`` file) is read as ``immutable``, so that not even SQLite's shared-memory files are
made beside it, and the read is refused if the file changed meanwhile (a server started).
PostgreSQL (the settings' ``db_url``) is read in a read-only transaction.  A server may be
running on the competition meanwhile: each read is one statement, so one snapshot.

Importing this module is cheap and needs no ``server`` extra
(:func:`is_competition_folder` is what ``arena rate`` asks first); reading a database needs
SQLAlchemy, imported when used.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sqlite3
import tempfile
import urllib.parse
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Literal, Optional

from arena.errors import ArenaError
from arena.server.config import CONFIG_FILE

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from arena.records import GameRecord

#: what a results folder holds (as :data:`arena.tournament.GAMES_FILE`); a folder with it
#: is a results folder, never a competition
GAMES_FILE = "games.jsonl"
#: the database file of a competition folder (as :data:`arena.server.db.DB_FILE`, which
#: cannot be imported without SQLAlchemy)
DB_FILE = "arena.db"
#: the PGN file of an export (``arena export``'s format)
PGN_FILE = "games.pgn"
Kind = Literal["final", "ladder", "all"]
KINDS: tuple[Kind, ...] = ("final", "ladder", "all")
#: the one line said where a competition folder is given and SQLAlchemy is missing
EXTRA_HINT = ("this is a competition folder; install the server extra "
              "(pip install morris-arena[server]) or run arena server export")


@dataclass(frozen=True)
class Exported:
    """What :func:`export_competition` wrote: the results folder, which games, how many."""

    folder: Path
    kind: Kind
    #: the final's number (None: not a final's games, or a database without numbers)
    final: Optional[int]
    games: int
    files: tuple[str, ...]


def is_competition_folder(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a competition folder: a folder holding ``server.yaml`` or
    ``arena.db`` and no ``games.jsonl`` (a results folder wins)."""
    p = Path(path)
    return (p.is_dir() and not (p / GAMES_FILE).exists()
            and ((p / CONFIG_FILE).is_file() or (p / DB_FILE).is_file()))


def competition_records(folder: str | os.PathLike[str], kind: Optional[Kind] = None, *,
                        final: Optional[int] = None,
                        db_url: Optional[str] = None) -> Iterator[GameRecord]:
    """The finished games of the competition in ``folder`` (oldest first) of ``kind`` (None:
    :func:`default_kind`), read without writing anything (see the module's docstring).

    ``final`` picks a final by its number (``arena server final`` lists them; None: the
    latest); it implies ``kind`` ``final``.  ``db_url`` names the database instead of the
    settings' ``db_url`` or ``DIR/arena.db``.

    :raises ArenaError: not a competition folder, the server extra missing
        (:data:`EXTRA_HINT`), an unknown kind, no such final, a database that cannot be
        read or is older than this version, a stored record that does not parse, or
        (SQLite) the database changed on disk while it was read without a server.
    """
    kind = _check_kind(kind, final)
    with _database(folder, db_url) as read:
        with read() as conn:
            chosen = kind or _default_kind(conn)
        with read() as conn:
            yield from _records(conn, chosen, final)


def default_kind(folder: str | os.PathLike[str], *, db_url: Optional[str] = None) -> Kind:
    """``final`` when the competition's final has started (a game of it exists), else
    ``ladder``.  :raises ArenaError: as :func:`competition_records`."""
    with _database(folder, db_url) as read:
        with read() as conn:
            return _default_kind(conn)


def final_number(folder: str | os.PathLike[str], final: Optional[int] = None, *,
                 db_url: Optional[str] = None) -> Optional[int]:
    """The number of the final :func:`competition_records` reads for ``final`` (None: the
    latest); None where the competition's database numbers no finals.
    :raises ArenaError: as :func:`competition_records`."""
    with _database(folder, db_url) as read:
        with read() as conn:
            return _final_number(conn, _check_schema(conn), final)


def load_competition(folder: str | os.PathLike[str], kind: Optional[Kind] = None, *,
                     final: Optional[int] = None,
                     db_url: Optional[str] = None) -> list[GameRecord]:
    """:func:`competition_records` as a list of at least one record (as
    :func:`arena.report.load_games` gives a results folder's).

    :raises ArenaError: as :func:`competition_records`, or no finished game of that kind.
    """
    chosen = _check_kind(kind, final) or default_kind(folder, db_url=db_url)
    records = list(competition_records(folder, chosen, final=final, db_url=db_url))
    if not records:
        raise ArenaError(f"no finished {_kind_text(chosen, final)} games in {folder} yet")
    return records


def export_competition(folder: str | os.PathLike[str], out: str | os.PathLike[str],
                       kind: Optional[Kind] = None, *, final: Optional[int] = None,
                       db_url: Optional[str] = None) -> Exported:
    """Write the games of the competition in ``folder`` (:func:`load_competition`) as the
    results folder ``out``: ``games.jsonl``, ``games.csv`` and ``standings.csv`` by the
    writers ``arena run`` uses, and ``games.pgn`` as ``arena export`` writes it.

    Atomic: the files are written into a temporary folder beside ``out`` that is renamed to
    ``out`` at the end; an error leaves nothing.  The competition is only read.

    :raises ArenaError: ``out`` exists and is not an empty folder, or lies inside the
        competition folder; and as :func:`load_competition`.
    """
    from arena.export import format_games
    from arena.records import atomic_write, atomic_write_chunks, write_games_csv
    from arena.standings import compute_standings, write_standings_csv
    from arena.tournament import GAMES_CSV, STANDINGS_FILE

    kind = _check_kind(kind, final)
    src, dest = Path(folder).resolve(), Path(out).resolve()
    _competition_url(Path(folder), db_url)  # a competition folder, before anything about OUT
    if dest == src or src in dest.parents:
        raise ArenaError(f"{out} is inside the competition folder {folder}: nothing is "
                         f"written there; choose a folder outside it")
    _check_empty(dest, out)
    chosen = kind or default_kind(folder, db_url=db_url)
    number = final_number(folder, final, db_url=db_url) if chosen == "final" else None
    records = load_competition(folder, chosen, final=number, db_url=db_url)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent))
    except OSError as e:
        raise ArenaError(f"cannot write beside {out}: {e.strerror}") from None
    try:
        atomic_write_chunks(tmp / GAMES_FILE,
                            ((r.to_json() + "\n").encode("utf-8") for r in records))
        write_games_csv(tmp / GAMES_CSV, records)
        rounds = (final_rounds(folder, number, db_url=db_url)
                  if chosen == "final" and number is not None else [])
        if rounds:  # a Swiss final: its rounds, and its standings as the server ranks them
            from arena.rounds import ROUNDS_FILE, round_byes
            from arena.standings import SWISS_TIEBREAKS

            atomic_write(tmp / ROUNDS_FILE, "".join(
                json.dumps(r.to_json(), sort_keys=True) + "\n" for r in rounds).encode())
            standings = compute_standings(records, tiebreaks=SWISS_TIEBREAKS,
                                          byes=round_byes(rounds))
        else:
            standings = compute_standings(records)
        write_standings_csv(tmp / STANDINGS_FILE, standings)
        atomic_write_chunks(tmp / PGN_FILE, (g.encode("utf-8") for g in format_games(records)))
        os.chmod(tmp, 0o755)  # mkdtemp's 0700 would hide the results from others
        _check_empty(dest, out)
        os.replace(tmp, dest)  # onto an empty folder too; a folder filled meanwhile: refused
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ArenaError(f"cannot write {out}: {e.strerror}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _fsync_folder(dest.parent)
    return Exported(dest, chosen, number, len(records),
                    (GAMES_FILE, GAMES_CSV, STANDINGS_FILE, PGN_FILE))


# ---- reading ----------------------------------------------------------------------------


def _check_kind(kind: Optional[Kind], final: Optional[int]) -> Optional[Kind]:
    if kind is not None and kind not in KINDS:
        raise ArenaError(f"unknown kind of games {kind!r}: choose one of {', '.join(KINDS)}")
    if final is not None:
        if kind not in (None, "final"):
            raise ArenaError(f"a final's number goes with the final's games, not {kind!r}")
        return "final"
    return kind


def _kind_text(kind: Kind, final: Optional[int] = None) -> str:
    if kind == "final" and final is not None:
        return f"final {final}"
    return "ladder or final" if kind == "all" else kind


def _check_empty(dest: Path, shown: str | os.PathLike[str]) -> None:
    if dest.is_dir():
        if any(dest.iterdir()):
            raise ArenaError(f"{shown} exists and is not empty: choose a new folder")
    elif dest.exists() or dest.is_symlink():
        raise ArenaError(f"{shown} exists and is not a folder: choose a new folder")


def _fsync_folder(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _competition_url(folder: Path, db_url: Optional[str]) -> str:
    """The database URL of the competition in ``folder`` (``db_url``, the settings'
    ``db_url``, or the SQLite file in it).  :raises ArenaError: not a competition folder."""
    if (folder / GAMES_FILE).exists():
        raise ArenaError(f"{folder} is a results folder ({GAMES_FILE}), not a competition "
                         f"folder: arena rate, report and export read it as it is")
    if not folder.is_dir() or not ((folder / CONFIG_FILE).is_file()
                                   or (folder / DB_FILE).is_file()):
        raise ArenaError(f"{folder} is not a competition folder (no {CONFIG_FILE} or "
                         f"{DB_FILE}; arena server init makes one)")
    if db_url is None and (folder / CONFIG_FILE).is_file():
        from arena.server.config import load_server_config

        db_url = load_server_config(folder / CONFIG_FILE).db_url
    if not db_url and not (folder / DB_FILE).is_file():
        raise ArenaError(f"{folder} has no database ({DB_FILE}) and its {CONFIG_FILE} names "
                         f"none (db_url)")
    if importlib.util.find_spec("sqlalchemy") is None:
        raise ArenaError(EXTRA_HINT)
    from arena.server.db import database_url

    return database_url(folder, db_url)


@contextmanager
def _database(folder: str | os.PathLike[str],
              db_url: Optional[str]) -> Iterator[Any]:
    """A function that opens a read-only connection (a context manager) to the
    competition's database; the engine is closed at the end."""
    url_text = _competition_url(Path(folder), db_url)
    from sqlalchemy import create_engine, exc, make_url
    from sqlalchemy.pool import NullPool

    url = make_url(url_text)
    stamp: Optional[tuple[int, int, int]] = None
    if url.get_backend_name() == "sqlite":
        path = Path(url.database or "").resolve()
        if not url.database or not path.is_file():
            raise ArenaError(f"no database file {path}")
        # no -wal file: no server has it open (WAL mode removes it at the last close), so
        # read it as immutable (no -shm or -wal made beside it) and check it did not change
        immutable = not Path(f"{path}-wal").exists()
        uri = f"file:{urllib.parse.quote(str(path))}?" + ("immutable=1" if immutable
                                                           else "mode=ro")
        stamp = _stamp(path) if immutable else None
        engine = create_engine("sqlite://", poolclass=NullPool,
                               creator=lambda: sqlite3.connect(uri, uri=True,
                                                               check_same_thread=False))
    else:
        from arena.server.db import open_engine

        engine = open_engine(url.render_as_string(hide_password=False))

    @contextmanager
    def read() -> Iterator[Connection]:
        try:
            with engine.connect() as conn:
                if conn.dialect.name == "postgresql":
                    conn = conn.execution_options(postgresql_readonly=True)
                yield conn
        except exc.SQLAlchemyError as e:
            where = url.render_as_string(hide_password=True)
            raise ArenaError(f"cannot read the competition's database {where}: "
                             f"{str(e).splitlines()[0]}") from None

    try:
        yield read
    finally:
        engine.dispose()
    if stamp is not None and (_stamp(path) != stamp or Path(f"{path}-wal").exists()):
        raise ArenaError(f"{path} changed while it was read (a server started on it?): "
                         f"run the command again")


def _stamp(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


def _columns(conn: Connection, table: str) -> set[str]:
    from sqlalchemy import inspect

    return {c["name"] for c in inspect(conn).get_columns(table)}


def _check_schema(conn: Connection) -> set[str]:
    """The columns of ``games`` (``final_id`` tells finals apart where the schema has it).

    :raises ArenaError: not a competition's database, or one older than the records table
        (a server of this version upgrades it when it starts)."""
    from sqlalchemy import inspect

    tables = set(inspect(conn).get_table_names())
    if "games" not in tables:
        raise ArenaError("not a competition's database (no games table)")
    games = _columns(conn, "games")
    if "records" not in tables or "kind" not in games:
        raise ArenaError("the competition's database is older than this version of arena: "
                         "start its server once (arena server run) to upgrade it")
    return games


def _default_kind(conn: Connection) -> Kind:
    from sqlalchemy import select

    from arena.server.models import Game

    _check_schema(conn)
    final = conn.execute(select(Game.id).where(Game.kind == "final").limit(1)).first()
    return "final" if final is not None else "ladder"


def _final_number(conn: Connection, games: set[str], number: Optional[int]) -> Optional[int]:
    """The final to read: ``number``, else the latest (as ``arena server results`` takes
    it); None where the schema has one final only (no ``games.final_id``).

    :raises ArenaError: no final ``number``."""
    from sqlalchemy import column, func, inspect, select, table

    if "final_id" not in games:
        if number not in (None, 1):
            raise ArenaError(f"no final {number}: this competition has played one final")
        return None
    games_t = table("games", column("kind"), column("final_id"))
    numbers = set(conn.execute(select(games_t.c.final_id).distinct()
                               .where(games_t.c.kind == "final")).scalars())
    if "finals" in inspect(conn).get_table_names():  # a final started: no game stored yet
        finals = table("finals", column("id"))
        latest = conn.execute(select(func.max(finals.c.id))).scalar()
        if latest is not None:
            numbers.add(latest)
    numbers.discard(None)
    if number is None:
        return max(numbers, default=None)
    if number not in numbers:
        shown = ", ".join(str(n) for n in sorted(numbers)) or "none yet"
        raise ArenaError(f"no final {number} in this competition (finals: {shown})")
    return number


def _records(conn: Connection, kind: Kind, number: Optional[int]) -> Iterator[GameRecord]:
    """The finished games of ``kind`` (``final``: of final ``number``, None: the latest),
    oldest first, in one statement (one snapshot), the players named as people know
    them."""
    from sqlalchemy import literal_column, select
    from sqlalchemy.orm import aliased

    from arena.records import parse_record
    from arena.server.models import Bot, Game, Record, User

    games = _check_schema(conn)
    wb, bb, wu, bu = aliased(Bot), aliased(Bot), aliased(User), aliased(User)
    kinds = ("ladder", "final") if kind == "all" else (kind,)
    query = (select(Game.id, Record.record, wb.id, wb.name, wb.version, wu.name,
                    bb.id, bb.name, bb.version, bu.name)
             .join(Record, Record.game_id == Game.id)
             .join(wb, wb.id == Game.white_id).join(wu, wu.id == wb.owner_id)
             .join(bb, bb.id == Game.black_id).join(bu, bu.id == bb.owner_id)
             .where(Game.status == "done", Game.kind.in_(kinds))
             .order_by(Game.id))
    if kind == "final":
        chosen = _final_number(conn, games, number)
        if chosen is not None:  # the column may be newer than this module's models
            final_id: Any = literal_column("games.final_id")
            query = query.where(final_id == chosen)
    rows = conn.execution_options(stream_results=True, yield_per=500).execute(query)
    for game_id, text, *players in rows:
        if not text:
            continue
        try:
            record = parse_record(text)
        except ValueError as e:
            raise ArenaError(f"game {game_id}'s stored record is not a game record "
                             f"({e})") from None
        _rename(record, players)
        yield record


def final_rounds(folder: str | os.PathLike[str], number: Optional[int], *,
                 db_url: Optional[str] = None) -> list[Any]:
    """A Swiss final's rounds (:class:`arena.rounds.Round`, the players named as
    :func:`competition_records` names them), none for a round-robin final or a database
    without rounds.  :raises ArenaError: as :func:`competition_records`."""
    with _database(folder, db_url) as read:
        with read() as conn:
            return _final_rounds(conn, number)


def _final_rounds(conn: Connection, number: Optional[int]) -> list[Any]:
    from sqlalchemy import column, inspect, select, table

    from arena.rounds import Round
    from arena.server.models import Bot, User

    if number is None or "finals" not in set(inspect(conn).get_table_names()):
        return []
    if "rounds" not in _columns(conn, "finals"):  # older than migration 0007: no Swiss
        return []
    finals = table("finals", column("id"), column("rounds"))
    text = conn.execute(select(finals.c.rounds).where(finals.c.id == number)).scalar()
    try:
        rounds = json.loads(text or "[]")
    except ValueError:
        return []
    names = {bot_id: f"{name} v{version} ({owner})" for bot_id, name, version, owner in
             conn.execute(select(Bot.id, Bot.name, Bot.version, User.name)
                          .join(User, User.id == Bot.owner_id))}
    out = []
    for entry in rounds:
        try:
            out.append(Round(int(entry["round"]), "swiss",
                             pairs=tuple((names[a], names[b]) for a, b in entry["pairs"]),
                             bye=(names[entry["bye"]],) if entry.get("bye") else (),
                             bye_points=float(entry.get("bye_points") or 0.0)))
        except (KeyError, TypeError, ValueError):
            return []
    return out


def _rename(record: GameRecord, players: list[Any]) -> None:
    """The players named as the site's game pages name them: ``bot vN (owner)`` (the
    records hold ``bot#id`` labels, unique but nobody's name)."""
    white, black = players[:4], players[4:]
    for info, (bot_id, name, version, owner) in ((record.white, white),
                                                  (record.black, black)):
        if info.name == f"{name}#{bot_id}":
            info.name = f"{name} v{version} ({owner})"


__all__ = ["DB_FILE", "EXTRA_HINT", "Exported", "GAMES_FILE", "KINDS", "Kind", "PGN_FILE",
           "competition_records", "default_kind", "export_competition", "final_number",
           "final_rounds",
           "is_competition_folder", "load_competition"]
