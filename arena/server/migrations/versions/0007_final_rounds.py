"""A final may be a Swiss: its rounds are recorded with it (``finals.rounds``, JSON: one
object per round paired so far, ``{"round", "format": "swiss", "pairs": [[a, b], ...],
"bye", "bye_points"}`` with the bots' ids, the shape of the offline runner's
``rounds.jsonl``), in the transaction that queues the round's games.  A round robin's, and
every final played before, is ``[]``.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # in place (ALTER TABLE ... ADD COLUMN), as 0006 added games.final_id
    op.add_column("finals", sa.Column("rounds", sa.Text(), nullable=False,
                                      server_default="[]"))


def downgrade() -> None:
    with op.batch_alter_table("finals") as batch:
        batch.drop_column("rounds")
