"""The competition's database: the engine (SQLite in the folder, or a PostgreSQL URL), the
migrations (Alembic revisions shipped in the package, run by :func:`migrate`), sessions.

SQLite runs in WAL mode with a busy timeout, so that the web threads read while the judge
writes.  Write transactions are one at a time on every database (:func:`one_writer`):
SQLite's write lock taken at their start, PostgreSQL's advisory lock, so that a transaction that reads
before it writes (a new bot's verdict queueing games against the active bots) sees every
write committed before it began to write.  Nothing here generates migrations at run time: ``migrations/versions`` holds them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.orm import Session, sessionmaker

from arena.errors import ConfigError

#: the database file of a competition folder (unless the config names a URL)
DB_FILE = "arena.db"
MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def database_url(folder: str | Path, url: Optional[str] = None) -> str:
    """``url`` or the SQLite file inside ``folder``; a plain ``postgresql://`` (or
    ``postgres://``) URL names the psycopg driver that the ``server`` extra installs
    (SQLAlchemy's default for it would be psycopg2)."""
    if not url:
        return f"sqlite:///{Path(folder).resolve() / DB_FILE}"
    for plain in ("postgresql://", "postgres://"):
        if url.startswith(plain):
            return "postgresql+psycopg://" + url[len(plain):]
    return url


def open_engine(url: str) -> Engine:
    """An engine for ``url`` (SQLite: WAL, foreign keys, a 30 s busy timeout).

    :raises ConfigError: a URL SQLAlchemy cannot use (unknown dialect, missing driver).
    """
    try:
        if url.startswith("sqlite"):
            # as many connections as the web server's worker threads (40) use at once
            engine = create_engine(url, connect_args={"check_same_thread": False,
                                                      "timeout": 30},
                                   pool_size=8, max_overflow=40)

            @event.listens_for(engine, "connect")
            def _pragmas(conn: Any, _record: Any) -> None:
                cur = conn.cursor()
                cur.execute("PRAGMA journal_mode=WAL")
                cur.execute("PRAGMA foreign_keys=ON")
                cur.close()
        else:
            engine = create_engine(url, pool_pre_ping=True)
    except Exception as e:  # noqa: BLE001 - SQLAlchemy's errors for a bad URL vary
        raise ConfigError(f"cannot use database {url.split('@')[-1]!r}: {e}") from None
    return engine


#: the key of the advisory lock that PostgreSQL's write transactions take (any constant
#: 64-bit number; other programs sharing the database would have to avoid it)
WRITE_LOCK = 0x6D6F72726973  # "morris"


def one_writer(session: Session) -> None:
    """Make ``session``'s transaction the only writing one until it ends, from its first
    statement: on PostgreSQL a transaction-level advisory lock (released at commit or
    rollback), on SQLite ``BEGIN IMMEDIATE`` (its write lock at once: the driver would
    begin only at the first write, and the reads before it, such as the next pair number,
    would not be protected).  Without it, two read-committed transactions on PostgreSQL
    that each activate a bot and then look for active opponents miss each other."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": WRITE_LOCK})
    else:
        session.connection().exec_driver_sql("BEGIN IMMEDIATE")


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest revision (a no-op when it is there)."""
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


def table_names(engine: Engine) -> list[str]:
    """The tables in the database (for tests and ``init``'s check)."""
    return sorted(inspect(engine).get_table_names())


def session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions bound to ``engine`` (objects stay readable after commit)."""
    return sessionmaker(engine, expire_on_commit=False)
