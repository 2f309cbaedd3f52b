"""duplicate locations and the weights stat cache

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "checkpoint_locations",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "checkpoint_id", sa.String(128), sa.ForeignKey("checkpoints.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("path", sa.Text, nullable=False, unique=True),
        sa.Column("recorded_at", sa.DateTime, nullable=False),
    )
    op.create_index("ix_checkpoint_locations_checkpoint_id", "checkpoint_locations", ["checkpoint_id"])
    op.create_table(
        "weights_stat_cache",
        sa.Column("path", sa.Text, primary_key=True),
        sa.Column("size", sa.BigInteger, nullable=False),
        sa.Column("mtime_ns", sa.BigInteger, nullable=False),
        sa.Column("inode", sa.BigInteger, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("weights_stat_cache")
    op.drop_index("ix_checkpoint_locations_checkpoint_id", "checkpoint_locations")
    op.drop_table("checkpoint_locations")
