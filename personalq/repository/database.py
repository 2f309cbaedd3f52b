"""Engine and session creation, SQLite pragmas, and schema upgrades through Alembic.

Several processes share one repository (the web app, a CLI import, the rater tab's votes). SQLite lets one of
them write at a time; every write therefore goes through :meth:`Sessions.begin`, which takes the write lock
when the transaction starts (``BEGIN IMMEDIATE``) instead of at its first write. A deferred transaction that
reads and then writes fails at once with "database is locked" when another process wrote in between (its
snapshot went stale, so SQLite cannot let it wait); an immediate one waits its turn for up to
``BUSY_TIMEOUT_MS``. Reads stay deferred, so in WAL mode they never wait for a writer.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, inspect
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from personalq.repository.errors import RepositoryUnavailable

log = logging.getLogger(__name__)
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
BUSY_TIMEOUT_MS = 10_000
BEGIN_MODE = "sqlite_begin"  # execution option read by _begin: "DEFERRED" (reads) or "IMMEDIATE" (writes)


class RepositoryBusy(RepositoryUnavailable):
    """Another process held the repository's write lock for longer than the busy timeout."""

    def __init__(self, detail: object):
        super().__init__(
            f"the repository is busy: another process (an import?) has been writing for over "
            f"{BUSY_TIMEOUT_MS // 1000} s; try again in a moment ({detail})"
        )


def _is_lock_timeout(error: OperationalError) -> bool:
    return "locked" in str(error.orig).lower() or "busy" in str(error.orig).lower()


class Sessions(sessionmaker):
    """A sessionmaker whose ``begin()`` is a write transaction: it takes SQLite's write lock up front, and a
    lock still held by another process after the busy timeout becomes :class:`RepositoryBusy` (a message for
    the person) instead of a bare ``OperationalError``. ``Sessions()`` sessions stay for reading."""

    @contextmanager
    def begin(self) -> Iterator[Session]:
        with self() as session:
            try:
                with session.begin():
                    session.connection(execution_options={BEGIN_MODE: "IMMEDIATE"})
                    yield session
            except OperationalError as error:
                if _is_lock_timeout(error):
                    raise RepositoryBusy(error.orig) from error
                raise


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    # pysqlite's own transaction handling would let RELEASE SAVEPOINT commit: take it over (SQLAlchemy's
    # documented recipe), so an import's savepoints nest inside one real transaction.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _sqlite_begin(connection) -> None:
    connection.exec_driver_sql(f"BEGIN {connection.get_execution_options().get(BEGIN_MODE, 'DEFERRED')}")


def make_engine(url: str) -> Engine:
    is_sqlite = url.startswith("sqlite")
    timeout = {"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000}
    engine = create_engine(url, connect_args=timeout if is_sqlite else {})
    if is_sqlite:
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
    return engine


def alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False))
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to ``revision``; a fresh database is created, an old one migrated in place."""
    config = alembic_config(engine)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def current_revision(engine: Engine) -> str | None:
    if "alembic_version" not in inspect(engine).get_table_names():
        return None
    with engine.connect() as connection:
        return connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()


def open_database(url: str) -> tuple[Engine, Sessions]:
    from personalq.repository.revision import track_revisions

    engine = make_engine(url)
    upgrade(engine)
    sessions = Sessions(engine, expire_on_commit=False)
    track_revisions(sessions)
    return engine, sessions
