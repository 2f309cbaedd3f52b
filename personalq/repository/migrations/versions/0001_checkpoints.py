"""checkpoints, families and their filterable terms

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "families",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column("name", sa.String(300), nullable=False),
    )
    op.create_table(
        "checkpoints",
        sa.Column("id", sa.String(128), primary_key=True),
        sa.Column("name", sa.String(300), nullable=False),
        sa.Column("family_id", sa.String(200), sa.ForeignKey("families.id"), nullable=False, index=True),
        sa.Column("version", sa.String(200)),
        sa.Column("version_number", sa.Float),
        sa.Column("kind", sa.String(32), nullable=False, index=True),
        sa.Column("base_model", sa.String(200), nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False, index=True),
        sa.Column("last_used_at", sa.DateTime, index=True),
        sa.Column("weights_path", sa.Text),
        sa.Column("weights_sha256", sa.String(64), unique=True),
        sa.Column("preview_path", sa.Text),
        sa.Column("source_format", sa.String(32), nullable=False),
        sa.Column("source_path", sa.Text, nullable=False),
        sa.Column("card_json", sa.Text, nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("imported_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "checkpoint_terms",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "checkpoint_id",
            sa.String(128),
            sa.ForeignKey("checkpoints.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("field", sa.String(16), nullable=False),
        sa.Column("value", sa.String(300), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.UniqueConstraint("checkpoint_id", "field", "position"),
    )
    op.create_index("ix_terms_field_value", "checkpoint_terms", ["field", "value"])


def downgrade() -> None:
    op.drop_index("ix_terms_field_value", table_name="checkpoint_terms")
    op.drop_table("checkpoint_terms")
    op.drop_table("checkpoints")
    op.drop_table("families")
