"""The look-ups the Repository API offers the layers above it (Check-in's time windows, the random baseline's
category pool), so that they never query the repository's tables themselves."""

import datetime as dt

import pytest
from factories import write_card


@pytest.fixture
def stocked(repository, tmp_path):
    write_card(tmp_path / "cards", "old-dog", created_at="2025-01-10", subjects=["dog"], tags=["beach"])
    write_card(tmp_path / "cards", "mid-cat", created_at="2025-03-05", subjects=["cat"], tags=["dog"])
    write_card(tmp_path / "cards", "new-owl", created_at="2025-06-20", subjects=["owl"], styles=["watercolor"])
    assert repository.import_paths([tmp_path / "cards"]).ok
    repository.touch("old-dog", dt.datetime(2025, 7, 2, 9))
    repository.touch("new-owl", dt.datetime(2025, 7, 1, 9))
    return repository


def test_newest_first_by_creation_or_by_last_use(stocked):
    assert stocked.newest_ids() == ["new-owl", "mid-cat", "old-dog"]
    assert stocked.newest_ids("created", limit=2) == ["new-owl", "mid-cat"]
    assert stocked.newest_ids("used") == ["old-dog", "new-owl"]  # never used: left out


def test_ids_inside_half_open_windows(stocked):
    first_quarter = (dt.datetime(2025, 1, 1), dt.datetime(2025, 4, 1))
    june = (dt.datetime(2025, 6, 1), dt.datetime(2025, 7, 1))
    assert stocked.ids_between([first_quarter]) == ["mid-cat", "old-dog"]
    assert stocked.ids_between([june, first_quarter], limit=2) == ["new-owl", "mid-cat"]
    assert stocked.ids_between([(dt.datetime(2025, 7, 1, 9), dt.datetime(2025, 7, 2))], "used") == ["new-owl"]
    assert stocked.ids_between([(dt.datetime(2025, 1, 1), dt.datetime(2025, 1, 10))]) == []  # the end is excluded
    assert stocked.ids_between([]) == []


def test_ids_with_terms(stocked):
    assert stocked.ids_with_terms(["dog"], ("subject", "tag")) == ["mid-cat", "old-dog"]
    assert stocked.ids_with_terms(["dog"], ("subject",)) == ["old-dog"]
    assert stocked.ids_with_terms(["dog", "owl"], ("subject", "tag"), limit=1) == ["new-owl"]
    assert stocked.ids_with_terms(["watercolor"]) == ["new-owl"]  # every field by default
    assert stocked.ids_with_terms([], ("subject",)) == []
    with pytest.raises(ValueError, match="unknown term fields"):
        stocked.ids_with_terms(["dog"], ("colour",))


def test_the_tables_orders_base_filter_and_counts(stocked, tmp_path):
    from personalq.repository.service import CheckpointFilter

    write_card(tmp_path / "xl", "xl-fox", created_at="2025-02-01", base_model="SDXL 1.0", name="a fox")
    stocked.import_paths([tmp_path / "xl"])
    ids = lambda order, **kw: [c.id for c in stocked.list(CheckpointFilter(order=order, **kw))]  # noqa: E731
    assert ids("newest") == ["new-owl", "mid-cat", "xl-fox", "old-dog"]
    assert ids("used")[:2] == ["old-dog", "new-owl"] and set(ids("used")[2:]) == {"mid-cat", "xl-fox"}  # unused last
    assert ids("name") == ["xl-fox", "mid-cat", "new-owl", "old-dog"]
    assert ids("base")[-1] == "xl-fox" and stocked.bases() == ["sd-1.5", "sdxl"]
    assert ids("family", base_model="SDXL") == ["xl-fox"]
    assert stocked.count(CheckpointFilter(base_model="sd-1.5")) == 3 and stocked.count() == 4
    with pytest.raises(ValueError, match="unknown order"):
        stocked.list(CheckpointFilter(order="random"))
