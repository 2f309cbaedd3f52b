"""repository revision counters

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    table = op.create_table(
        "repository_revision",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("cards", sa.Integer, nullable=False),
        sa.Column("usage", sa.Integer, nullable=False),
    )
    op.bulk_insert(table, [{"id": 1, "cards": 0, "usage": 0}])


def downgrade() -> None:
    op.drop_table("repository_revision")
