"""The ladder's fair share of games: two partial indexes of the queued ladder games, by
White (with the game's number in its pair, then its id) and by Black, from which each bot's
oldest queued game is one step (``arena.server.ladder.claim_ladder``).

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

#: as ``arena.server.models.QUEUED_LADDER`` is now (a migration keeps its own copy)
_QUEUED_LADDER = "kind = 'ladder' AND status = 'queued'"
_INDEXES = (("ix_games_queued_white", "white_id"), ("ix_games_queued_black", "black_id"))


def upgrade() -> None:
    for name, side in _INDEXES:
        op.create_index(name, "games", [side, "game", "id"],
                        sqlite_where=sa.text(_QUEUED_LADDER),
                        postgresql_where=sa.text(_QUEUED_LADDER))


def downgrade() -> None:
    for name, _ in _INDEXES:
        op.drop_index(name, table_name="games")
