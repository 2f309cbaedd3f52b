"""Alembic environment: runs on the connection handed over by ``personalq.repository.database.upgrade``.

The one migration history covers every package's tables, so its target metadata is the assembled schema
(:mod:`personalq.schema`), not the repository's own ``orm`` module, which holds only the repository's tables.
"""

from alembic import context
from sqlalchemy import engine_from_config, pool

from personalq.schema import metadata

config = context.config
target_metadata = metadata


def run() -> None:
    connection = config.attributes.get("connection")
    if connection is None:
        engine = engine_from_config(
            config.get_section(config.config_ini_section) or {}, prefix="sqlalchemy.", poolclass=pool.NullPool
        )
        with engine.begin() as connection:
            _migrate(connection)
    else:
        _migrate(connection)


def _migrate(connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


run()
