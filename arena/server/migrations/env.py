"""Alembic's environment for the competition's database: the connection is handed over by
:func:`arena.server.db.migrate` (``config.attributes["connection"]``); no autogenerate at run
time, the revisions in ``versions/`` are written by hand."""

from __future__ import annotations

from alembic import context

from arena.server.models import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata,
                  render_as_batch=connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()
