"""checkpoint creator: who trained a checkpoint, filterable and searchable

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

import json

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("checkpoints") as batch:
        batch.add_column(sa.Column("creator", sa.String(200), nullable=True))
        batch.create_index("ix_checkpoints_creator", ["creator"])
    # cards imported before this revision keep their JSON; a creator already in it becomes the column
    checkpoints = sa.table(
        "checkpoints", sa.column("id", sa.String), sa.column("card_json", sa.Text), sa.column("creator", sa.String)
    )
    connection = op.get_bind()
    for row in connection.execute(sa.select(checkpoints.c.id, checkpoints.c.card_json)):
        try:
            creator = json.loads(row.card_json).get("creator")
        except (ValueError, AttributeError):
            continue
        if isinstance(creator, str) and creator.strip():
            connection.execute(
                checkpoints.update().where(checkpoints.c.id == row.id).values(creator=creator.strip()[:200])
            )


def downgrade() -> None:
    with op.batch_alter_table("checkpoints") as batch:
        batch.drop_index("ix_checkpoints_creator")
        batch.drop_column("creator")
