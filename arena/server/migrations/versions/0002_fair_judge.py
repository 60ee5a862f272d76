"""The judge's fair share and the disk's accounting: jobs.started_at, jobs.cancel,
bots.archive_bytes, bots.folder_bytes, bots.removed_at.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("started_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("cancel", sa.String(200), nullable=False,
                                   server_default=""))
    with op.batch_alter_table("bots") as batch:
        batch.add_column(sa.Column("archive_bytes", sa.BigInteger(), nullable=False,
                                   server_default="0"))
        batch.add_column(sa.Column("folder_bytes", sa.BigInteger(), nullable=False,
                                   server_default="0"))
        batch.add_column(sa.Column("removed_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        for name in ("removed_at", "folder_bytes", "archive_bytes"):
            batch.drop_column(name)
    with op.batch_alter_table("jobs") as batch:
        for name in ("cancel", "started_at"):
            batch.drop_column(name)
