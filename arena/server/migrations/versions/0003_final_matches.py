"""The deadline's final, test matches and fast standings: games.kind (ladder | final |
match), games.forfeit (the side that lost by a referee ending, filled from the stored
records), games.requested_by (who asked for a match); indexes on games.kind,
games.variant, games.requested_by.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("kind", sa.String(16), nullable=False,
                                   server_default="ladder"))
        batch.add_column(sa.Column("forfeit", sa.String(8), nullable=False, server_default=""))
        batch.add_column(sa.Column("requested_by", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_games_requested_by_users", "users", ["requested_by"],
                                 ["id"])
        batch.create_index("ix_games_kind", ["kind"])
        batch.create_index("ix_games_variant", ["variant"])
        batch.create_index("ix_games_requested_by", ["requested_by"])
    # the forfeits of the games played so far, from their records (once)
    conn = op.get_bind()
    games = sa.table("games", sa.column("id", sa.Integer()), sa.column("record", sa.Text()),
                     sa.column("status", sa.String()), sa.column("forfeit", sa.String()))
    rows = conn.execute(sa.select(games.c.id, games.c.record)
                        .where(games.c.status == "done", games.c.record != "")).all()
    for game_id, record in rows:
        try:
            side = json.loads(record).get("forfeit")
        except (ValueError, AttributeError):
            continue
        if side in ("white", "black"):
            conn.execute(sa.update(games).where(games.c.id == game_id).values(forfeit=side))


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_index("ix_games_requested_by")
        batch.drop_index("ix_games_variant")
        batch.drop_index("ix_games_kind")
        batch.drop_constraint("fk_games_requested_by_users", type_="foreignkey")
        for name in ("requested_by", "forfeit", "kind"):
            batch.drop_column(name)
