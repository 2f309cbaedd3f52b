"""SQLite is the source of truth; Chroma is checked against it at start-up and patched or rebuilt."""

import shutil

from factories import write_card
from sqlalchemy import update

from personalq.repository.orm import Checkpoint
from personalq.repository.service import Repository
from personalq.runtime import start


def _import_three(repository, tmp_path):
    for i, subject in enumerate(["bear", "dog", "anime girl"]):
        write_card(tmp_path / "cards", f"ck-{i}", description=f"a {subject}")
    assert repository.import_paths([tmp_path / "cards"]).count("imported") == 3


def test_deleted_index_is_rebuilt_at_start(settings, repository, tmp_path):
    _import_three(repository, tmp_path)
    shutil.rmtree(settings.chroma_dir)
    runtime = start(settings, import_demo=False)
    # rebuilt on disk, not served from the deleted files a client cached in this process still holds open
    assert (settings.chroma_dir / "chroma.sqlite3").is_file()
    assert sorted(runtime.repository.dense.fingerprints()) == ["ck-0", "ck-1", "ck-2"]
    assert runtime.repository.search_dense("a dog", k=1)[0][0] == "ck-1"


def test_corrupt_index_folder_is_rebuilt(settings, repository, tmp_path):
    _import_three(repository, tmp_path)
    shutil.rmtree(settings.chroma_dir)
    settings.chroma_dir.mkdir()
    (settings.chroma_dir / "chroma.sqlite3").write_bytes(b"this is not a database" * 100)
    repository.dense.close()  # what a restart does: no client of the old folder open
    fresh = Repository(settings)
    report = fresh.sync_index()
    assert report.added == 3
    assert sorted(fresh.dense.fingerprints()) == ["ck-0", "ck-1", "ck-2"]


def test_rows_added_changed_and_removed_behind_the_index_are_patched(settings, repository, tmp_path):
    _import_three(repository, tmp_path)
    repository.dense.delete(["ck-0"])  # a row the index lost
    with repository.sessions.begin() as session:  # a card changed in the database
        session.execute(
            update(Checkpoint)
            .where(Checkpoint.id == "ck-1")
            .values(card_json=Checkpoint.card_json, content_hash="changed", description="a wolf")
        )
    from personalq.repository.index import IndexedDoc

    repository.dense.upsert([IndexedDoc("orphan", "nothing", "x")])  # an entry with no row
    report = Repository(settings).sync_index()
    assert (report.added, report.updated, report.removed) == (1, 1, 1)
    assert sorted(repository.dense.fingerprints()) == ["ck-0", "ck-1", "ck-2"]
    assert Repository(settings).sync_index().changed is False


def test_removal_updates_both_stores_and_bm25(repository, tmp_path):
    _import_three(repository, tmp_path)
    assert repository.search_sparse("dog")[0][0] == "ck-1"
    repository.remove("ck-1")
    assert repository.count() == 2
    assert "ck-1" not in repository.dense.fingerprints()
    assert all(doc_id != "ck-1" for doc_id, _ in repository.search_sparse("dog"))


def test_full_rebuild(repository, tmp_path):
    _import_three(repository, tmp_path)
    report = repository.sync_index(rebuild=True)
    assert report.rebuilt and report.added == 3


def test_a_new_way_of_writing_the_embedded_text_re_embeds_unchanged_cards(settings):
    from personalq.repository.index import DenseIndex, IndexedDoc

    index = DenseIndex(settings.chroma_dir)
    index.sync([IndexedDoc("ck-a", "full card text", "same-content", "Aurora dog v3. dog")])
    report = index.sync([IndexedDoc("ck-a", "full card text", "same-content", "Aurora dog")])  # after an upgrade
    assert (report.added, report.updated, report.removed) == (0, 1, 0)
    assert index.sync([IndexedDoc("ck-a", "full card text", "same-content", "Aurora dog")]).changed is False
