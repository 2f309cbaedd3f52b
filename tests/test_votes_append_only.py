"""Votes stay as cast: the database itself refuses UPDATE and DELETE, and the CSV export cannot run formulas."""

from __future__ import annotations

import csv
import io

import pytest
from alembic import command
from sqlalchemy import delete, text
from sqlalchemy.exc import DatabaseError

from personalq.rating.tables import PreferenceVote
from personalq.rating.votes import Vote, VoteStore
from personalq.repository.database import alembic_config, upgrade


def cast(
    store: VoteStore,
    rater: str = "alice",
    item: str = "item-1",
    prompt: str = "a dog on a beach",
    checkpoint: str = "dog-v1",
) -> None:
    store.add(Vote(rater, item, prompt, "checkin", "random", checkpoint, "cat-v1", "left"))


def choices(repository) -> list[str]:
    with repository.engine.connect() as connection:
        return list(connection.execute(text("SELECT choice FROM preference_votes ORDER BY id")).scalars())


def test_the_database_refuses_to_change_or_delete_a_vote(repository):
    store = VoteStore(repository)
    cast(store)
    for statement in ("UPDATE preference_votes SET choice = 'right'", "DELETE FROM preference_votes"):
        with pytest.raises(DatabaseError, match="append-only"):
            with repository.engine.begin() as connection:
                connection.execute(text(statement))
    with pytest.raises(DatabaseError, match="append-only"):  # the ORM goes through the same trigger
        with repository.sessions.begin() as session:
            session.execute(delete(PreferenceVote))
    cast(store, rater="bob")  # appending still works
    assert choices(repository) == ["left", "left"]


def test_the_trigger_comes_and_goes_with_its_migration(repository):
    cast(VoteStore(repository))
    config = alembic_config(repository.engine)
    with repository.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0005")
    with repository.engine.begin() as connection:
        connection.execute(text("UPDATE preference_votes SET choice = 'tie'"))
    upgrade(repository.engine)
    with pytest.raises(DatabaseError, match="append-only"):
        with repository.engine.begin() as connection:
            connection.execute(text("UPDATE preference_votes SET choice = 'right'"))
    assert choices(repository) == ["tie"]


def test_csv_export_defuses_cells_a_spreadsheet_would_run_as_formulas(repository):
    store = VoteStore(repository)
    cast(store, rater="@alice", item="+item", prompt='=HYPERLINK("http://evil.example","click")', checkpoint="-2+3")
    cast(store, rater="bob", item="item-2", prompt="a dog = a friend")
    header, hostile, plain = list(csv.reader(io.StringIO(store.csv())))
    row = dict(zip(header, hostile))
    assert row["rater"] == "'@alice" and row["item_id"] == "'+item" and row["checkpoint_left"] == "'-2+3"
    assert row["prompt"] == "'" + '=HYPERLINK("http://evil.example","click")'
    assert row["method_left"] == "checkin" and row["choice"] == "left"
    assert dict(zip(header, plain))["prompt"] == "a dog = a friend"  # only a leading character is a formula
