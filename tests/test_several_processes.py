"""Several processes on one repository: the web app keeps serving (and writing votes and chat sessions) while
a CLI import runs, sees what that import added, and never throws away an index another process uses."""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import servers
from factories import write_card

from personalq.checkin.sessions import SessionState, SessionStore
from personalq.config import load_settings
from personalq.repository.index import DenseIndex, IndexUnavailable
from personalq.repository.service import Repository

PERSONALQ = str(Path(sys.executable).with_name("personalq"))


def _cli_import(home: Path, folder: Path, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [PERSONALQ, "repo", "import", str(folder), "--home", str(home)],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _cards(folder: Path, count: int, subject: str = "a lighthouse") -> Path:
    for i in range(count):
        write_card(folder, f"{folder.name}-{i:04d}", description=f"{subject} number {i}", subjects=[subject])
    return folder


def test_an_import_embeds_before_it_takes_the_write_lock(repository, settings, tmp_path, monkeypatch):
    """Embedding is the slow part of an import; other processes must be able to write meanwhile."""
    locked_while_embedding = []
    embed = DenseIndex.embed

    def embed_and_probe(docs):
        probe = sqlite3.connect(settings.sqlite_path, timeout=0)
        try:
            probe.execute("BEGIN IMMEDIATE")
            probe.execute("ROLLBACK")
            locked_while_embedding.append(False)
        except sqlite3.OperationalError:
            locked_while_embedding.append(True)
        finally:
            probe.close()
        return embed(docs)

    monkeypatch.setattr(DenseIndex, "embed", staticmethod(embed_and_probe))
    report = repository.import_paths([_cards(tmp_path / "cards", 5)])
    assert report.count("imported") == 5
    assert locked_while_embedding and not any(locked_while_embedding)


@pytest.mark.slow
def test_sessions_and_writes_keep_working_while_another_process_imports(repository, settings, tmp_path):
    """Read-then-write transactions (a Check-in answer updates its session) used to fail at once with
    'database is locked' whenever the importing process committed between their read and their write."""
    store = SessionStore(repository)
    state = SessionState(prompt="a lighthouse", candidate_ids=[], options=[])
    session_ids = [store.create("a lighthouse", dt.datetime(2025, 1, 1), "asked", state) for _ in range(4)]
    importer = _cli_import(settings.home, _cards(tmp_path / "cards", 300))
    writes, errors = 0, []
    while importer.poll() is None or writes < 40:
        try:
            for session_id in session_ids:
                store.update(session_id, "asked", state)
            store.create("another request", dt.datetime(2025, 1, 1), "asked", state)
            if repository.count():
                repository.touch("cards-0000")
            writes += 1
        except Exception as error:  # noqa: BLE001 - every failure is the finding
            errors.append(repr(error))
    output = importer.communicate()[0]
    assert importer.returncode == 0, output
    assert errors == []
    assert repository.count() == 300


@pytest.mark.slow
def test_an_import_by_another_process_is_visible_to_a_running_app(repository, settings, tmp_path):
    repository.import_paths([_cards(tmp_path / "first", 20, "a teddy bear")])
    assert repository.search_dense("a teddy bear", k=1)[0][0].startswith("first-")  # the app's client is open
    importer = _cli_import(settings.home, _cards(tmp_path / "later", 20, "a red sports car"))
    assert importer.wait(timeout=300) == 0, importer.stdout.read()
    found = repository.search_dense("a red sports car", k=3)
    assert [doc_id for doc_id, _ in found] and all(doc_id.startswith("later-") for doc_id, _ in found)
    assert repository.sync_index().changed is False


HOLD_INDEX = """
import sys
from personalq.config import load_settings
from personalq.repository.service import Repository
repository = Repository(load_settings(home=sys.argv[1]))
repository.search_dense("anything", k=1)
print("open", flush=True)
sys.stdin.readline()
"""


@pytest.mark.slow
def test_an_index_another_process_uses_is_never_deleted(repository, settings, tmp_path, monkeypatch):
    repository.import_paths([_cards(tmp_path / "cards", 3)])
    repository.dense.close()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_INDEX, str(settings.home)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "open"
        before = sorted(p.name for p in settings.chroma_dir.rglob("*"))

        def failing_open(self):
            raise RuntimeError("database is locked")  # what a client can meet while another process writes

        monkeypatch.setattr(DenseIndex, "_open", failing_open)
        with pytest.raises(IndexUnavailable, match="another PersonalQ process has it open"):
            Repository(settings).search_dense("a lighthouse")
        assert sorted(p.name for p in settings.chroma_dir.rglob("*")) == before
    finally:
        holder.communicate("\n", timeout=60)
    monkeypatch.undo()
    alone = Repository(settings)
    monkeypatch.setattr(DenseIndex, "_open", failing_open)
    with pytest.raises(RuntimeError, match="database is locked"):  # alone, it rebuilds; the stub fails that too
        alone.search_dense("a lighthouse")
    monkeypatch.undo()
    assert alone.sync_index().added == 3


@pytest.fixture
def chroma_server(tmp_path):
    with servers.chroma_server(tmp_path / "chroma-server") as url:
        yield url


@pytest.mark.slow
def test_a_chroma_server_is_shared_by_every_process(chroma_server, tmp_path):
    settings = load_settings(home=tmp_path / "home", chroma_url=chroma_server, chroma_collection="shared-test")
    app = Repository(settings)
    app.import_paths([_cards(tmp_path / "first", 10, "a teddy bear")])
    assert app.search_dense("a teddy bear", k=1)[0][0].startswith("first-")
    assert not settings.chroma_dir.exists()  # nothing embedded in the home
    importer = _cli_import(
        settings.home,
        _cards(tmp_path / "later", 10, "a red sports car"),
        PERSONALQ_CHROMA_URL=chroma_server,
        PERSONALQ_CHROMA_COLLECTION="shared-test",
    )
    assert importer.wait(timeout=300) == 0, importer.stdout.read()
    assert app.search_dense("a red sports car", k=1)[0][0].startswith("later-")
    assert app.sync_index().changed is False
    other_home = Repository(
        load_settings(home=tmp_path / "other", chroma_url=chroma_server, chroma_collection="other-home")
    )
    assert other_home.dense.fingerprints() == {}  # one collection per repository on a shared server


def test_a_vote_waits_for_a_writer_instead_of_failing(repository, settings):
    """A write transaction takes the lock at BEGIN and waits its turn (busy timeout) behind another writer."""
    from personalq.rating.votes import Vote, VoteStore

    blocker = sqlite3.connect(settings.sqlite_path, isolation_level=None, check_same_thread=False)
    blocker.execute("BEGIN IMMEDIATE")
    release = threading.Timer(1.0, lambda: blocker.execute("COMMIT"))
    release.start()
    started = time.perf_counter()
    VoteStore(repository).add(Vote("ana", "item-1", "a lighthouse", "checkin", "dense", None, None, "left"))
    assert time.perf_counter() - started >= 0.9
    assert [v.rater for v in VoteStore(repository).all()] == ["ana"]
    release.join()
    blocker.close()
