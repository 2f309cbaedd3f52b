from sqlalchemy import inspect, text

from personalq.repository.database import current_revision, make_engine, upgrade


def test_upgrade_from_an_empty_database(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'empty.sqlite'}")
    assert current_revision(engine) is None
    upgrade(engine)
    assert current_revision(engine) == "0006"
    assert {"checkpoints", "families", "checkpoint_terms"} <= set(inspect(engine).get_table_names())
    with engine.connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
    upgrade(engine)  # idempotent
    assert current_revision(engine) == "0006"


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
