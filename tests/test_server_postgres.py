"""The competition server on PostgreSQL: a throwaway cluster (Debian's ``postgresql``
package, started here as an unprivileged user on a Unix socket in a private folder, stopped
by its postmaster's pid) holds a fresh database per test; the SQL layer's tests of
``tests/test_server_parts.py`` run on it, and a real ``arena server run`` process judges two
uploads and plays their ladder games with a ``postgresql://`` URL.  Skipped with a reason
where PostgreSQL, psycopg or the ``server`` extra is missing."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

pytest.importorskip("sqlalchemy", reason="the server extra is not installed "
                                         "(pip install -e '.[server]')")
pytest.importorskip("fastapi", reason="the server extra is not installed")
pytest.importorskip("psycopg", reason="no psycopg (pip install -e '.[server]')")

from tests.test_server import (SETTINGS, Server, _competition,  # noqa: E402
                               play_two_uploads)
from tests.test_server_parts import (check_judges_queue, check_library,  # noqa: E402
                                     check_migrations, check_verdicts_at_once)

PG_BIN = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"),
                key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0)
#: the user the cluster runs as when the tests run as root (PostgreSQL refuses root)
PG_USER = "nobody"


def _gone(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _stop_postmaster(data: Path) -> None:
    """Stop the cluster by its postmaster's pid (``postmaster.pid``'s first line): SIGINT
    (a fast shutdown), then SIGQUIT (immediate) if it is still there after 20 s."""
    try:
        pid = int((data / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return  # it never started
    for sig, wait in ((signal.SIGINT, 20.0), (signal.SIGQUIT, 10.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if _gone(pid):
                return
            time.sleep(0.05)
    raise AssertionError(f"the PostgreSQL postmaster {pid} did not stop")


@pytest.fixture(scope="module")
def postgres() -> Iterator[Callable[[str], str]]:
    """A new PostgreSQL cluster for this module; yields ``database(name) -> URL``, which
    makes an empty database in it."""
    if not PG_BIN:
        pytest.skip("no PostgreSQL server here (apt-get install postgresql)")
    import psycopg

    bindir = PG_BIN[-1].parent
    folder = Path(tempfile.mkdtemp(prefix="arena-pg-"))  # pytest's own folders are private
    as_user: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            shutil.rmtree(folder)
            pytest.skip("running as root without runuser: cannot start PostgreSQL unprivileged")
        entry = pwd.getpwnam(PG_USER)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
        as_user = ["runuser", "-u", PG_USER, "--"]
    data, log = folder / "data", folder / "log"

    def run(*args: str) -> None:
        done = subprocess.run([*as_user, *args], cwd=folder, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, f"{args[0]} failed: {done.stdout}{done.stderr}"

    # a Unix socket in the folder only (no TCP port), trust for its owner: nothing else on
    # the machine can reach it
    try:
        run(str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "arena", "-N")
        run(str(bindir / "pg_ctl"), "-D", str(data), "-w", "-t", "60", "-l", str(log),
            "-o", f"-k {folder} -c listen_addresses='' -c fsync=off", "start")
        dsn = f"host={folder} user=arena dbname=postgres"

        def database(name: str) -> str:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{name}"')
            return f"postgresql://arena@/{name}?host={folder}"

        yield database
    finally:
        _stop_postmaster(data)
        shutil.rmtree(folder, ignore_errors=True)


def test_the_migrations_on_postgresql(postgres: Callable[[str], str]) -> None:
    url = postgres("migrations")
    from sqlalchemy import text

    from arena.server.db import database_url, open_engine

    check_migrations(url)
    engine = open_engine(database_url(".", url))
    try:
        with engine.connect() as conn:  # really PostgreSQL, through psycopg
            assert conn.dialect.name == "postgresql" and conn.dialect.driver == "psycopg"
            assert conn.execute(text("SELECT current_database()")).scalar() == "migrations"
    finally:
        engine.dispose()


def test_the_library_on_postgresql(postgres: Callable[[str], str], tmp_path: Path) -> None:
    check_library(tmp_path, postgres("library"))
    assert not (tmp_path / "c" / "arena.db").exists()


def test_the_judges_queue_on_postgresql(postgres: Callable[[str], str], tmp_path: Path) -> None:
    check_judges_queue(tmp_path, postgres("queue"))


def test_verdicts_stored_at_once_on_postgresql(postgres: Callable[[str], str],
                                               tmp_path: Path) -> None:
    check_verdicts_at_once(tmp_path, lambda r: postgres(f"verdicts{r}"))


@pytest.mark.slow
def test_a_real_server_on_postgresql(postgres: Callable[[str], str], tmp_path: Path) -> None:
    """Upload over the API, the check, the ladder's games and the leaderboard, with every
    row in PostgreSQL (no SQLite file is made)."""
    import psycopg

    url = postgres("ladder")
    folder = tmp_path / "comp"
    tokens = _competition(folder, SETTINGS.replace("pairs: 2", "pairs: 1")
                          + f"db_url: {url!r}\n")
    assert not (folder / "arena.db").exists()
    server = Server(folder)
    server.start()
    try:
        play_two_uploads(server, tokens, 2)
        game = server.get("/api/games")[0]
        assert server.get(f"/api/games/{game['id']}")["result"] == game["result"]
    finally:
        server.stop()
    assert not (folder / "arena.db").exists()
    dsn = url.replace("postgresql://arena@/ladder?host=", "dbname=ladder user=arena host=")
    with psycopg.connect(dsn) as conn:
        statuses = conn.execute("SELECT status, count(*) FROM games GROUP BY status").fetchall()
        bots = conn.execute("SELECT name, status FROM bots ORDER BY id").fetchall()
    assert statuses == [("done", 2)]
    assert bots == [("random", "active"), ("greedy", "active")]
