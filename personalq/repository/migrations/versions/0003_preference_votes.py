"""blind pairwise preference votes

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "preference_votes",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("rater", sa.String(100), nullable=False, index=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("item_id", sa.String(64), nullable=False, index=True),
        sa.Column("prompt", sa.Text, nullable=False),
        sa.Column("method_left", sa.String(32), nullable=False),
        sa.Column("method_right", sa.String(32), nullable=False),
        sa.Column("checkpoint_left", sa.String(200), nullable=True),
        sa.Column("checkpoint_right", sa.String(200), nullable=True),
        sa.Column("choice", sa.String(16), nullable=False),
        sa.UniqueConstraint("rater", "item_id", name="one_vote_per_item"),
    )


def downgrade() -> None:
    op.drop_table("preference_votes")
