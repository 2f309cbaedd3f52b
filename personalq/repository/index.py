"""Search indexes over card text: a Chroma collection (dense) and an in-memory BM25 (sparse).

SQLite is the source of truth. Each Chroma entry carries a fingerprint of the card's content and of the text
embedded for it, so :meth:`DenseIndex.sync` can tell exactly which entries are missing, stale or orphaned and
patch only those — or rebuild from nothing when the index folder was deleted or cannot be opened.

Chroma runs in one of two modes. Embedded (the default), the collection lives in a folder of the home and
each process keeps its own copy of the vector index in memory: a process that sees the repository's revision
change (another process imported) reopens the folder to see the new vectors, and the folder is only ever
thrown away by a process that holds it alone. As a client of a ``chroma run`` server (``chroma_url``), every
process shares the server's one index, which is the supported way to write from several processes at once.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Iterator, Mapping
from urllib.parse import urlsplit

import bm25s
import numpy as np

from personalq.repository.embedding import EMBEDDING_MODEL, embed, embed_query
from personalq.repository.errors import RepositoryUnavailable

try:
    import fcntl
except ImportError:  # Windows: no advisory locks, so an unusable index folder is never deleted automatically
    fcntl = None

log = logging.getLogger(__name__)
COLLECTION = "checkpoints"
STORE_FILE = "chroma.sqlite3"  # Chroma's own metadata store inside the index folder


class IndexUnavailable(RepositoryUnavailable):
    """The dense index cannot be opened and must not be rebuilt from here (another process uses the folder,
    or the Chroma server is down); SQLite is untouched."""


def _forget_cached_client(path: Path) -> None:
    """Drop the Chroma system cached in-process for ``path``.

    Chroma keeps one system per folder for the life of the process; once the folder is deleted or replaced,
    that system still points at the old files (and fails whenever its pool opens a new connection), so a
    fresh client must not inherit it. Only this folder's entry goes: other indexes in the process keep theirs.
    """
    from chromadb.api.shared_system_client import SharedSystemClient

    system = SharedSystemClient._identifier_to_system.pop(str(path), None)
    SharedSystemClient._identifier_to_refcount.pop(str(path), None)
    if system is not None:
        try:
            system.stop()
        except Exception:  # the files under it are already gone; nothing left to close cleanly
            log.debug("stopping the stale Chroma system for %s failed", path, exc_info=True)


@dataclass
class IndexedDoc:
    id: str
    text: str  # full card text, for BM25
    content_hash: str
    dense_text: str = ""  # compact identity text, for the embedding; defaults to ``text``

    @property
    def embed_text(self) -> str:
        return self.dense_text or self.text

    @property
    def fingerprint(self) -> str:
        """Card content plus the exact text embedded: a change to either (a new card, or a new way of
        writing identity texts after an upgrade) makes :meth:`DenseIndex.sync` embed the card again."""
        return f"{self.content_hash}:{hashlib.sha256(self.embed_text.encode()).hexdigest()[:16]}"


@dataclass
class SyncReport:
    added: int = 0
    updated: int = 0
    removed: int = 0
    rebuilt: bool = False
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed or self.rebuilt)


class FolderLock:
    """Which processes use an embedded index folder: each holds a shared ``flock`` on ``<folder>.lock`` while
    its client is open, and the folder is deleted only under the exclusive lock, so an error in one process
    (a half-written file it read, a timeout) never destroys the index another process is serving from.

    ``fcntl.flock`` rather than ``filelock.ReadWriteLock``: the latter pins a hold to the thread that took it,
    and the web app opens the index in one worker thread and may rebuild it in another.
    """

    def __init__(self, folder: Path):
        self.path = folder.with_name(folder.name + ".lock")
        self._file: IO[bytes] | None = None

    def share(self) -> None:
        if fcntl is None or self._file is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "ab")
        fcntl.flock(self._file, fcntl.LOCK_SH)

    def release(self) -> None:
        if self._file is not None:
            self._file.close()  # closing the descriptor drops its lock
            self._file = None

    @contextmanager
    def alone(self) -> Iterator[bool]:
        """Yields whether this process is the folder's only user (then it holds the folder exclusively)."""
        if fcntl is None:
            yield False
            return
        self.release()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "ab") as exclusive:
            try:
                fcntl.flock(exclusive, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
            else:
                yield True
        self.share()


def _chroma_settings():
    from chromadb.config import Settings as ChromaSettings

    return ChromaSettings(anonymized_telemetry=False, allow_reset=True)


class DenseIndex:
    """Chroma collection of card embeddings, cosine space, metadata ``{"hash": IndexedDoc.fingerprint}``.

    Args:
        path: the embedded index folder (unused with ``url``).
        encode_query: turns a request into its query vector.
        url: a Chroma server (``http://host:8000``); ``None`` keeps the index embedded in ``path``.
        collection_name: the collection to use, so several repositories can share one server.
    """

    def __init__(
        self,
        path: Path,
        encode_query: Callable[[str], np.ndarray] = embed_query,
        url: str | None = None,
        collection_name: str = COLLECTION,
    ):
        self.path = Path(path)
        self.encode_query = encode_query
        self.url = url
        self.collection_name = collection_name
        self.lock = FolderLock(self.path)
        self._collection = None
        self._revision: int | None = None  # the repository revision the open client has seen

    @property
    def where(self) -> str:
        return f"the Chroma server at {self.url}" if self.url else f"the index folder {self.path}"

    def _client(self):
        import chromadb

        if self.url:
            parts = urlsplit(self.url)
            return chromadb.HttpClient(
                host=parts.hostname or "localhost",
                port=parts.port or 8000,
                ssl=parts.scheme == "https",
                settings=_chroma_settings(),
            )
        if not (self.path / STORE_FILE).exists():
            _forget_cached_client(self.path)
        self.lock.share()
        return chromadb.PersistentClient(path=str(self.path), settings=_chroma_settings())

    def _open(self):
        collection = self._client().get_or_create_collection(
            self.collection_name,
            embedding_function=None,
            configuration={"hnsw": {"space": "cosine"}},
            metadata={"embedding_model": EMBEDDING_MODEL},
        )
        collection.count()  # Chroma reports a corrupt store lazily; make it fail here
        return collection

    @property
    def collection(self):
        if self._collection is None:
            try:
                self._collection = self._open()
            except Exception as exc:  # a corrupt or foreign folder: the index is derived data, rebuild it
                self.reset(exc)
        return self._collection

    def reset(self, reason: Exception) -> None:
        """Throw the index folder away and start an empty one (SQLite can always refill it) — only when no
        other process has it open; a server's index is never thrown away from here."""
        if self.url:
            raise IndexUnavailable(f"{self.where} cannot be used ({reason}); is `chroma run` up?") from reason
        with self.lock.alone() as alone:
            if not alone:
                raise IndexUnavailable(
                    f"{self.where} cannot be opened ({reason}) and another PersonalQ process has it open, so it was "
                    "left as it is; stop the other process and run `personalq repo reindex`, or share the index "
                    "through a Chroma server (PERSONALQ_CHROMA_URL)"
                ) from reason
            log.warning("Chroma index at %s is unusable (%s); rebuilding it from the database", self.path, reason)
            _forget_cached_client(self.path)
            shutil.rmtree(self.path, ignore_errors=True)
        self._collection = self._open()

    def close(self) -> None:
        """Let go of the index: the client's cached system is stopped and the folder's shared lock released."""
        if not self.url:
            _forget_cached_client(self.path)
            self.lock.release()
        self._collection = None

    def follow(self, revision: int) -> None:
        """Called with the repository's card revision before each use: when another process changed the cards
        since this client opened, an embedded client reopens the folder to load the vectors it wrote."""
        if self._revision is not None and revision != self._revision and self._collection is not None and not self.url:
            log.info("the repository changed in another process; reopening %s", self.where)
            _forget_cached_client(self.path)
            self._collection = None
        self._revision = revision

    def seen(self, revision: int) -> None:
        """Record that this client already holds the index as of ``revision`` (after writing it itself)."""
        self._revision = revision

    def fingerprints(self, page: int = 5000) -> dict[str, str]:
        """Every indexed id and its content hash, read a page at a time: one read of 100,000 ids overflows
        SQLite's limit on bound variables inside Chroma."""
        found: dict[str, str] = {}
        while True:
            got = self.collection.get(include=["metadatas"], limit=page, offset=len(found))
            found.update((i, (m or {}).get("hash", "")) for i, m in zip(got["ids"], got["metadatas"]))
            if len(got["ids"]) < page:
                return found

    @staticmethod
    def embed(docs: list[IndexedDoc]) -> dict[str, np.ndarray]:
        """The vectors for the docs' texts, keyed by text: computed before a write so no lock is held meanwhile."""
        texts = list(dict.fromkeys(d.embed_text for d in docs))
        return dict(zip(texts, embed(texts)))

    def upsert(
        self, docs: list[IndexedDoc], vectors: Mapping[str, np.ndarray] | None = None, batch: int = 512
    ) -> None:
        """Write ``docs``; texts missing from ``vectors`` are embedded here (all at once: versions sharing a
        text are embedded once)."""
        vectors = dict(vectors or {})
        vectors.update(self.embed([d for d in docs if d.embed_text not in vectors]))
        for start in range(0, len(docs), batch):
            chunk = docs[start : start + batch]
            # no documents: BM25 keeps the text, and Chroma would spend a third of the write indexing it again
            self.collection.upsert(
                ids=[d.id for d in chunk],
                embeddings=np.stack([vectors[d.embed_text] for d in chunk]),
                metadatas=[{"hash": d.fingerprint} for d in chunk],
            )

    def delete(self, ids: list[str]) -> None:
        for start in range(0, len(ids), 1000):
            self.collection.delete(ids=ids[start : start + 1000])

    def sync(self, docs: list[IndexedDoc]) -> SyncReport:
        started = time.perf_counter()
        deleted_under_us = not self.url and self._collection is not None and not (self.path / STORE_FILE).exists()
        if deleted_under_us:
            self.reset(FileNotFoundError(self.path / STORE_FILE))
        try:
            existing = self.fingerprints()
        except IndexUnavailable:
            raise
        except Exception as exc:  # files deleted or damaged under a running client
            self.reset(exc)
            existing = {}
        wanted = {d.id: d for d in docs}
        stale = [d for d in docs if d.id in existing and existing[d.id] != d.fingerprint]
        missing = [d for d in docs if d.id not in existing]
        orphans = [i for i in existing if i not in wanted]
        report = SyncReport(
            added=len(missing), updated=len(stale), removed=len(orphans), rebuilt=not existing and bool(docs)
        )
        if orphans:
            self.delete(orphans)
        if stale or missing:
            self.upsert(stale + missing)
        report.seconds = time.perf_counter() - started
        if report.changed:
            log.info("dense index synced: %s", report)
        return report

    def query(self, text: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` nearest cards as ``(id, cosine similarity)``, best first."""
        result = self.collection.query(
            query_embeddings=[self.encode_query(text).tolist()], n_results=k, include=["distances"]
        )
        return [(i, 1.0 - float(d)) for i, d in zip(result["ids"][0], result["distances"][0])]


class SparseIndex:
    """BM25 (bm25s, Lucene variant) over the same card text; rebuilt in memory when the corpus changes."""

    def __init__(self, docs: list[IndexedDoc]):
        self.ids = [d.id for d in docs]
        self.retriever = bm25s.BM25()
        if docs:
            self.retriever.index(
                bm25s.tokenize([d.text for d in docs], stopwords="en", show_progress=False), show_progress=False
            )

    def query(self, text: str, k: int) -> list[tuple[str, float]]:
        if not self.ids:
            return []
        tokens = bm25s.tokenize([text], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        docs, scores = self.retriever.retrieve(tokens, k=min(k, len(self.ids)), show_progress=False, n_threads=1)
        return [(self.ids[int(d)], float(s)) for d, s in zip(docs[0], scores[0]) if s > 0]


def reciprocal_rank_fusion(rankings: list[list[str]], k: int = 60) -> list[tuple[str, float]]:
    """RRF: ``sum 1 / (k + rank)`` over the rankings, best first."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, doc_id in enumerate(ranking, start=1):
            scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
