"""The competition server (``arena server``): participants upload bots over the web, a
sandboxed judge checks them and plays a live ladder (``docs/SERVER.md``).

Needs the ``server`` extra (``pip install -e '.[server]'``).  One module per concern:

* :mod:`~arena.server.config`: ``server.yaml`` checked into a frozen :class:`ServerConfig`;
* :mod:`~arena.server.models` and :mod:`~arena.server.db`: the SQLAlchemy schema, the engine
  (SQLite in the folder, or a PostgreSQL URL) and the Alembic migrations shipped here;
* :mod:`~arena.server.unpack`: :func:`safe_unpack` of uploaded archives;
* :mod:`~arena.server.service`: :class:`Competition`, the library the CLI, the API, the pages
  and the judge call;
* :mod:`~arena.server.judge`: the checker and game dispatcher threads;
* :mod:`~arena.server.live`: games in progress, ply by ply (the live board);
* :mod:`~arena.server.web`: the FastAPI app (JSON API and Jinja2 pages) and :func:`serve`.

Importing this package is cheap; the web framework and the database load with the modules
that use them.
"""

from __future__ import annotations

SERVER_EXTRA_HINT = ("the competition server needs its extra: pip install -e '.[server]' "
                     "(FastAPI, uvicorn, SQLAlchemy, Alembic, python-multipart, limits)")


def require_server_extra() -> None:
    """:raises ConfigError: the ``server`` extra is not installed (a one-line hint)."""
    import importlib.util

    from arena.errors import ConfigError

    for module in ("fastapi", "uvicorn", "sqlalchemy", "alembic", "multipart", "limits"):
        if importlib.util.find_spec(module) is None:
            raise ConfigError(f"{SERVER_EXTRA_HINT}; missing: {module}")


__all__ = ["SERVER_EXTRA_HINT", "require_server_extra"]
