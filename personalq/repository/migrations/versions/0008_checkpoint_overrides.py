"""the person's overrides of a checkpoint's card, kept across re-imports

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "checkpoint_overrides",
        sa.Column(
            "checkpoint_id",
            sa.String(128),
            sa.ForeignKey("checkpoints.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("fields_json", sa.Text, nullable=False),
        sa.Column("imported_card_json", sa.Text, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
    )
    with op.batch_alter_table("checkpoints") as batch:
        batch.add_column(sa.Column("edited_fields", sa.String(200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("checkpoints") as batch:
        batch.drop_column("edited_fields")
    op.drop_table("checkpoint_overrides")
