"""The repository on a real PostgreSQL server (a throwaway cluster started here) through the same SQLAlchemy URL:
migrations, import and Check-in, clarification sessions, votes from several raters at once, the append-only
trigger; and PostgreSQL with a Chroma server, shared by two processes' worth of repositories."""

from __future__ import annotations

import threading

import pytest
import servers
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.exc import DatabaseError

from personalq.checkin.backends import make_checkin
from personalq.config import DEFAULT_ASSETS, load_settings
from personalq.rating.votes import AlreadyVoted, Vote, VoteStore
from personalq.repository.database import alembic_config
from personalq.repository.service import Repository
from personalq.runtime import start

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def postgres():
    with servers.postgres_cluster() as url:
        yield url


@pytest.fixture
def settings(postgres, tmp_path):
    database = servers.new_database(postgres)
    return load_settings(home=tmp_path / "home", database_url=database, assets_dir=DEFAULT_ASSETS)


def test_migrations_run_to_head_and_votes_are_append_only(settings):
    repository = start(settings, import_demo=False).repository
    assert repository.engine.dialect.name == "postgresql"
    head = ScriptDirectory.from_config(alembic_config(repository.engine)).get_current_head()
    with repository.engine.connect() as connection:
        assert connection.execute(text("SELECT version_num FROM alembic_version")).scalar() == head
    store = VoteStore(repository)
    store.add(Vote("alice", "item-1", "a dog", "checkin", "random", "dog-v1", "cat-v1", "left"))
    with pytest.raises(AlreadyVoted):
        store.add(Vote("alice", "item-1", "a dog", "checkin", "random", "dog-v1", "cat-v1", "right"))
    for statement in ("UPDATE preference_votes SET choice = 'right'", "DELETE FROM preference_votes"):
        with pytest.raises(DatabaseError, match="append-only"):
            with repository.engine.begin() as connection:
                connection.execute(text(statement))
    assert [v.choice for v in store.all()] == ["left"]


def test_import_checkin_and_clarification_sessions(settings):
    runtime = start(settings)  # imports the bundled demo zoo into the empty database
    repository = runtime.repository
    assert runtime.demo_import is not None and runtime.demo_import.ok and repository.count() >= 40
    checkin = make_checkin(settings, repository)
    picked = checkin.ask("teddy bear v2 on a beach")
    assert (picked.status, picked.checkpoint_id) == ("selected", "teddybear-v2")
    question = checkin.ask("my teddy bear in the snow")
    assert question.status == "clarify" and len(question.options) >= 2
    # the session lives in PostgreSQL: a second repository (another process's) answers it
    other = make_checkin(settings, Repository(settings))
    answered = other.answer(question.session, question.options[0].label)
    assert answered.status == "selected" and answered.checkpoint_id.startswith("teddybear")
    repository.touch("teddybear-v2")
    assert repository.newest_ids(by="used") == ["teddybear-v2"]


def test_votes_from_many_raters_at_once(settings):
    repository = start(settings, import_demo=False).repository
    store = VoteStore(repository)
    errors = []

    def rater(index: int) -> None:
        try:
            for item in range(10):
                store.add(Vote(f"rater-{index}", f"item-{item}", "p", "checkin", "random", "a", "b", "tie"))
        except Exception as error:  # recorded: the point is that there are none
            errors.append(error)

    threads = [threading.Thread(target=rater, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(store.all()) == 80


def test_postgres_and_a_chroma_server_serve_two_repositories(postgres, tmp_path):
    """The shared-state deployment: every process points at one PostgreSQL database and one Chroma server."""
    database = servers.new_database(postgres)
    with servers.chroma_server(tmp_path / "chroma") as chroma:

        def settings_in(home: str):
            return load_settings(
                home=tmp_path / home, database_url=database, chroma_url=chroma, assets_dir=DEFAULT_ASSETS
            )

        writer = start(settings_in("app")).repository
        reader = Repository(settings_in("worker"))
        assert reader.count() == writer.count() >= 40
        assert reader.sync_index().changed is False  # the server's index already matches the shared database
        assert reader.search_dense("a teddy bear", k=3)[0][0].startswith("teddybear")
        picked = make_checkin(reader.settings, reader).ask("the newest biscuit")
        assert picked.status == "selected" and picked.checkpoint_id.startswith("biscuit")
