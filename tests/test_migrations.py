from sqlalchemy import inspect, text

from personalq.repository.database import current_revision, make_engine, upgrade


def test_upgrade_from_an_empty_database(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'empty.sqlite'}")
    assert current_revision(engine) is None
    upgrade(engine)
    assert current_revision(engine) == "0005"
    assert {"checkpoints", "families", "checkpoint_terms"} <= set(inspect(engine).get_table_names())
    with engine.connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
    upgrade(engine)  # idempotent
    assert current_revision(engine) == "0005"


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
