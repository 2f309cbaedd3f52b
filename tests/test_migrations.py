from sqlalchemy import inspect, text

from personalq.repository.database import current_revision, make_engine, upgrade


def test_upgrade_from_an_empty_database(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'empty.sqlite'}")
    assert current_revision(engine) is None
    upgrade(engine)
    assert current_revision(engine) == "0008"
    assert {"checkpoints", "families", "checkpoint_terms"} <= set(inspect(engine).get_table_names())
    with engine.connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
    upgrade(engine)  # idempotent
    assert current_revision(engine) == "0008"


def test_downgrade_and_upgrade_round_trip(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    upgrade(engine)
    from alembic import command

    from personalq.repository.database import alembic_config

    config = alembic_config(engine)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "base")
    assert "checkpoints" not in inspect(engine).get_table_names()
    upgrade(engine)
    assert "checkpoints" in inspect(engine).get_table_names()


def test_any_sqlalchemy_url_works(tmp_path):
    from personalq.config import load_settings
    from personalq.repository.service import Repository

    other = tmp_path / "elsewhere.sqlite"
    settings = load_settings(home=tmp_path / "home", database_url=f"sqlite:///{other}")
    Repository(settings)
    assert other.exists() and not settings.sqlite_path.exists()


def test_0005_backfills_the_creator_from_cards_imported_before_it(tmp_path):
    from alembic import command
    from factories import write_card

    from personalq.config import load_settings
    from personalq.repository.database import alembic_config
    from personalq.repository.service import CheckpointFilter, Repository

    settings = load_settings(home=tmp_path / "home")
    write_card(tmp_path / "cards", "by-ada", creator="ada_lovelace")
    write_card(tmp_path / "cards", "nobody")
    repository = Repository(settings)
    assert repository.import_paths([tmp_path / "cards"]).ok
    engine = make_engine(settings.resolved_database_url)
    config = alembic_config(engine)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0004")  # as a database from before the column
        connection.execute(text("UPDATE checkpoints SET card_json = '{not json' WHERE id = 'nobody'"))
    assert "creator" not in {c["name"] for c in inspect(engine).get_columns("checkpoints")}
    upgrade(engine)
    with engine.connect() as connection:
        rows = dict(connection.execute(text("SELECT id, creator FROM checkpoints")).all())
    assert rows == {"by-ada": "ada_lovelace", "nobody": None}
    assert [c.id for c in Repository(settings).list(CheckpointFilter(creator="ADA_lovelace"))] == ["by-ada"]


def _fresh_python(script: str) -> str:
    """Run ``script`` in a new interpreter, where only what it imports is loaded; its standard output."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_one_history_matches_every_packages_tables(tmp_path):
    """Check-in and rating own their tables (declared outside the repository, on its one ``Base``); the one
    migration history creates exactly the assembled schema, and the Alembic environment sees every table."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from personalq.schema import metadata

    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    upgrade(engine)
    assert {"checkin_sessions", "preference_votes", "checkpoints"} <= set(metadata.tables)
    with engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), metadata) == []
    # autogenerate through migrations/env.py in a process that imported nothing else: it raises when the
    # environment's target metadata misses a table (here every table module is already imported)
    _fresh_python(
        "from alembic import command\n"
        "from personalq.repository.database import alembic_config, make_engine\n"
        f"engine = make_engine({str(engine.url)!r})\n"
        "config = alembic_config(engine)\n"
        "with engine.begin() as connection:\n"
        "    config.attributes['connection'] = connection\n"
        "    command.check(config)\n"
    )


def test_the_repository_imports_no_upper_layer():
    """Upper layers depend on the repository, never the reverse: importing every repository module loads
    neither Check-in nor rating (their tables register on the shared ``Base`` when they are imported)."""
    loaded = _fresh_python(
        "import importlib, pkgutil, sys\n"
        "import personalq.repository as r\n"
        "for m in pkgutil.walk_packages(r.__path__, 'personalq.repository.'):\n"
        "    if '.migrations' not in m.name: importlib.import_module(m.name)\n"
        "print(sorted(m for m in sys.modules if m.startswith(('personalq.checkin', 'personalq.rating'))))\n"
    )
    assert loaded.strip() == "[]"
