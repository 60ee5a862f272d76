"""The deadline's final, test matches and fast standings: games.kind (ladder | final |
match), games.forfeit (the side that lost by a referee ending, filled from the stored
records), games.requested_by (who asked for a match); the records move to a table of their
own (``records``: the games' rows stay small, so that lists and standings read few pages);
an index that holds everything the standings read (ix_games_standings), and indexes on
games.variant and games.requested_by.

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

_STANDINGS = ["kind", "status", "variant", "white_id", "black_id", "result", "pair"]


def upgrade() -> None:
    # the records wait in a table without a foreign key while SQLite copies the games
    # table to drop its record column (a key to it would forbid dropping the old copy)
    op.create_table("records_moving", sa.Column("game_id", sa.Integer(), primary_key=True),
                    sa.Column("record", sa.Text(), nullable=False))
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("kind", sa.String(16), nullable=False,
                                   server_default="ladder"))
        batch.add_column(sa.Column("forfeit", sa.String(8), nullable=False, server_default=""))
        batch.add_column(sa.Column("requested_by", sa.Integer(), nullable=True))
    conn = op.get_bind()
    games = sa.table("games", sa.column("id", sa.Integer()), sa.column("record", sa.Text()),
                     sa.column("status", sa.String()), sa.column("forfeit", sa.String()))
    # the records move; the forfeits of the games played so far are read from them (once)
    conn.execute(sa.text("INSERT INTO records_moving (game_id, record) "
                         "SELECT id, record FROM games WHERE record != ''"))
    rows = conn.execute(sa.select(games.c.id, games.c.record)
                        .where(games.c.status == "done", games.c.record != "")).all()
    for game_id, record in rows:
        try:
            side = json.loads(record).get("forfeit")
        except (ValueError, AttributeError):
            continue
        if side in ("white", "black"):
            conn.execute(sa.update(games).where(games.c.id == game_id).values(forfeit=side))
    with op.batch_alter_table("games") as batch:
        batch.drop_column("record")
        batch.create_foreign_key("fk_games_requested_by_users", "users", ["requested_by"],
                                 ["id"])
        batch.create_index("ix_games_standings", _STANDINGS)
        batch.create_index("ix_games_variant", ["variant"])
        batch.create_index("ix_games_requested_by", ["requested_by"])
    op.create_table(
        "records",
        sa.Column("game_id", sa.Integer(), sa.ForeignKey("games.id"), primary_key=True),
        sa.Column("record", sa.Text(), nullable=False))
    conn.execute(sa.text("INSERT INTO records (game_id, record) "
                         "SELECT game_id, record FROM records_moving"))
    op.drop_table("records_moving")


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("record", sa.Text(), nullable=False, server_default=""))
    op.execute("UPDATE games SET record = (SELECT record FROM records "
               "WHERE records.game_id = games.id) WHERE id IN (SELECT game_id FROM records)")
    op.drop_table("records")
    with op.batch_alter_table("games") as batch:
        batch.drop_index("ix_games_requested_by")
        batch.drop_index("ix_games_variant")
        batch.drop_index("ix_games_standings")
        batch.drop_constraint("fk_games_requested_by_users", type_="foreignkey")
        for name in ("requested_by", "forfeit", "kind"):
            batch.drop_column(name)
