"""A class competition a teacher can close: finals as rows of their own (``finals``: each
with the settings it was played with, its entries, its state and once done its frozen
standings; ``games.final_id`` names the final a game belongs to), the final entry a
participant chose (``users.entry_id``; none: their latest active bot), and the uploads that
were refused (``refusals``: who, when, the file's name and the reason), for the teacher's
overview.  A final already played (the ``final`` row of ``settings``) becomes final 1.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import json
from datetime import datetime

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "finals",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("status", sa.String(16), nullable=False, server_default="running"),
        sa.Column("reason", sa.String(200), nullable=False, server_default=""),
        sa.Column("settings", sa.Text(), nullable=False, server_default="{}"),
        sa.Column("entries", sa.Text(), nullable=False, server_default="[]"),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("games_done", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("games_total", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("tables", sa.Text(), nullable=False, server_default="[]"))
    op.create_table(
        "refusals",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id"), nullable=False,
                  index=True),
        sa.Column("filename", sa.String(200), nullable=False, server_default=""),
        sa.Column("size", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("reason", sa.Text(), nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "entries",
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id"), primary_key=True),
        sa.Column("bot_id", sa.Integer(), sa.ForeignKey("bots.id"), nullable=False))
    # in place (ALTER TABLE ... ADD COLUMN): no copy of the games table, which the records
    # refer to
    op.add_column("games", sa.Column("final_id", sa.Integer(), nullable=True))
    op.create_index("ix_games_final_id", "games", ["final_id"])
    conn = op.get_bind()
    old = conn.execute(sa.text("SELECT value FROM settings WHERE key = 'final'")).scalar()
    if old:
        state = json.loads(old)
        finals = sa.table("finals", *(sa.column(n, t) for n, t in (
            ("id", sa.Integer()), ("status", sa.String()), ("reason", sa.String()),
            ("settings", sa.Text()), ("entries", sa.Text()),
            ("started_at", sa.DateTime(timezone=True)),
            ("finished_at", sa.DateTime(timezone=True)), ("games_done", sa.Integer()),
            ("games_total", sa.Integer()), ("tables", sa.Text()))))

        def when(key: str) -> datetime | None:
            text = state.get(key)
            return datetime.fromisoformat(text) if text else None

        conn.execute(sa.insert(finals).values(
            id=1, status=state.get("status", "running"), reason="the deadline", settings="{}",
            entries=json.dumps(state.get("bots", [])), started_at=when("started"),
            finished_at=when("finished"), games_done=state.get("games_done", 0),
            games_total=state.get("games_total", 0),
            tables=json.dumps(state.get("tables", []))))
        conn.execute(sa.text("UPDATE games SET final_id = 1 WHERE kind = 'final'"))
        conn.execute(sa.text("DELETE FROM settings WHERE key = 'final'"))


def downgrade() -> None:
    op.drop_index("ix_games_final_id", "games")
    op.drop_column("games", "final_id")
    op.drop_table("entries")
    op.drop_table("refusals")
    op.drop_table("finals")
