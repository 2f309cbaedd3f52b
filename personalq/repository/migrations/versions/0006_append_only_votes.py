"""preference votes are append-only in the database itself

Votes were append-only by convention (the code never updates or deletes one); a trigger makes the database
refuse UPDATE and DELETE on ``preference_votes`` from any client, so a stray script or a compromised
process cannot quietly rewrite the evaluation. SQLite and PostgreSQL get triggers; other databases keep the
convention only, and the upgrade says so.

A later migration that rebuilds ``preference_votes`` through ``batch_alter_table`` (SQLite copies the table)
must create these triggers again.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
"""

import logging

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

log = logging.getLogger(__name__)
MESSAGE = "preference votes are append-only"

SQLITE_UP = [
    f"""CREATE TRIGGER preference_votes_no_{action.lower()} BEFORE {action} ON preference_votes
        BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END"""
    for action in ("UPDATE", "DELETE")
]
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS preference_votes_no_update",
    "DROP TRIGGER IF EXISTS preference_votes_no_delete",
]

POSTGRESQL_UP = [
    f"""CREATE FUNCTION preference_votes_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION '{MESSAGE}'; END $$""",
    """CREATE TRIGGER preference_votes_no_update_or_delete BEFORE UPDATE OR DELETE ON preference_votes
        FOR EACH ROW EXECUTE FUNCTION preference_votes_append_only()""",
    # TRUNCATE skips row triggers: refuse it as a statement
    """CREATE TRIGGER preference_votes_no_truncate BEFORE TRUNCATE ON preference_votes
        FOR EACH STATEMENT EXECUTE FUNCTION preference_votes_append_only()""",
]
POSTGRESQL_DOWN = [
    "DROP TRIGGER IF EXISTS preference_votes_no_truncate ON preference_votes",
    "DROP TRIGGER IF EXISTS preference_votes_no_update_or_delete ON preference_votes",
    "DROP FUNCTION IF EXISTS preference_votes_append_only()",
]

STATEMENTS = {
    "sqlite": {"upgrade": SQLITE_UP, "downgrade": SQLITE_DOWN},
    "postgresql": {"upgrade": POSTGRESQL_UP, "downgrade": POSTGRESQL_DOWN},
}


def _run(step: str) -> None:
    dialect = op.get_context().dialect.name
    if dialect not in STATEMENTS:
        log.warning(
            "no append-only trigger for preference votes on %s: votes stay append-only by convention only", dialect
        )
        return
    for statement in STATEMENTS[dialect][step]:
        op.execute(statement)


def upgrade() -> None:
    _run("upgrade")


def downgrade() -> None:
    _run("downgrade")
