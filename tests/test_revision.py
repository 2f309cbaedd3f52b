"""Readers cache parsed cards and the BM25 index keyed on the repository revision; every write must move it."""

import datetime as dt

from factories import write_card

from personalq.checkin.retrieval import CardCache
from personalq.repository.service import Repository


def test_imports_and_removals_move_the_card_revision(repository, tmp_path):
    before = repository.revision()
    write_card(tmp_path / "cards", "ck-a", description="a bear")
    repository.import_paths([tmp_path / "cards"])
    imported = repository.revision()
    assert imported.cards > before.cards
    repository.import_paths([tmp_path / "cards"])  # unchanged: nothing written, nothing invalidated
    assert repository.revision() == imported
    repository.remove("ck-a")
    assert repository.revision().cards > imported.cards


def test_marking_as_used_moves_only_the_usage_revision(repository, tmp_path):
    write_card(tmp_path / "cards", "ck-a", description="a bear")
    repository.import_paths([tmp_path / "cards"])
    before = repository.revision()
    repository.touch("ck-a", dt.datetime(2026, 11, 21, 9, 0))
    after = repository.revision()
    assert after.cards == before.cards and after.usage > before.usage


def test_caches_follow_writes_made_by_another_process(settings, repository, tmp_path):
    write_card(tmp_path / "cards", "ck-a", description="a bear")
    repository.import_paths([tmp_path / "cards"])
    cache = CardCache(repository)
    cache.refresh()
    assert cache.get_many(["ck-a"])[0].last_used_at is None
    sparse = repository.sparse()
    other = Repository(settings)  # a second Repository on the same files stands in for another process
    when = dt.datetime(2026, 11, 21, 9, 0)
    other.touch("ck-a", when)
    cache.refresh()
    assert cache.get_many(["ck-a"])[0].last_used_at == when
    assert repository.sparse() is sparse  # usage alone leaves the text index alone
    write_card(tmp_path / "cards", "ck-a", description="a wolf")
    assert other.import_paths([tmp_path / "cards"], replace=True).count("updated") == 1
    cache.refresh()
    assert cache.get_many(["ck-a"])[0].description == "a wolf"
    assert repository.search_sparse("wolf")[0][0] == "ck-a"
