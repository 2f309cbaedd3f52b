"""Search indexes over card text: a persistent Chroma collection (dense) and an in-memory BM25 (sparse).

SQLite is the source of truth. Each Chroma entry carries a fingerprint of the card's content and of the text
embedded for it, so :meth:`DenseIndex.sync` can tell exactly which entries are missing, stale or orphaned and
patch only those — or rebuild from nothing when the index folder was deleted or cannot be opened.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import bm25s
import numpy as np

from personalq.repository.embedding import EMBEDDING_MODEL, embed, embed_query

log = logging.getLogger(__name__)
COLLECTION = "checkpoints"
STORE_FILE = "chroma.sqlite3"  # Chroma's own metadata store inside the index folder


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


class DenseIndex:
    """Chroma collection of card embeddings, cosine space, metadata ``{"hash": IndexedDoc.fingerprint}``."""

    def __init__(self, path: Path, encode_query: Callable[[str], np.ndarray] = embed_query):
        self.path = Path(path)
        self.encode_query = encode_query
        self._collection = None

    def _open(self):
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        if not (self.path / STORE_FILE).exists():
            _forget_cached_client(self.path)
        client = chromadb.PersistentClient(path=str(self.path), settings=ChromaSettings(anonymized_telemetry=False, allow_reset=True))
        collection = client.get_or_create_collection(
            COLLECTION,
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
        """Throw the index folder away and start an empty one (SQLite can always refill it)."""
        log.warning("Chroma index at %s is unusable (%s); rebuilding it from the database", self.path, reason)
        _forget_cached_client(self.path)
        shutil.rmtree(self.path, ignore_errors=True)
        self._collection = self._open()

    def fingerprints(self) -> dict[str, str]:
        got = self.collection.get(include=["metadatas"])
        return {i: (m or {}).get("hash", "") for i, m in zip(got["ids"], got["metadatas"])}

    def upsert(self, docs: list[IndexedDoc], batch: int = 512) -> None:
        vectors = embed([d.embed_text for d in docs])  # all at once: versions sharing a text are embedded once
        for start in range(0, len(docs), batch):
            chunk = docs[start : start + batch]
            # no documents: BM25 keeps the text, and Chroma would spend a third of the write indexing it again
            self.collection.upsert(
                ids=[d.id for d in chunk],
                embeddings=vectors[start : start + batch],
                metadatas=[{"hash": d.fingerprint} for d in chunk],
            )

    def delete(self, ids: list[str]) -> None:
        for start in range(0, len(ids), 1000):
            self.collection.delete(ids=ids[start : start + 1000])

    def sync(self, docs: list[IndexedDoc]) -> SyncReport:
        started = time.perf_counter()
        if self._collection is not None and not (self.path / STORE_FILE).exists():  # deleted under this client
            self.reset(FileNotFoundError(self.path / STORE_FILE))
        try:
            existing = self.fingerprints()
        except Exception as exc:  # files deleted or damaged under a running client
            self.reset(exc)
            existing = {}
        wanted = {d.id: d for d in docs}
        stale = [d for d in docs if d.id in existing and existing[d.id] != d.fingerprint]
        missing = [d for d in docs if d.id not in existing]
        orphans = [i for i in existing if i not in wanted]
        report = SyncReport(added=len(missing), updated=len(stale), removed=len(orphans), rebuilt=not existing and bool(docs))
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
        result = self.collection.query(query_embeddings=[self.encode_query(text).tolist()], n_results=k, include=["distances"])
        return [(i, 1.0 - float(d)) for i, d in zip(result["ids"][0], result["distances"][0])]


class SparseIndex:
    """BM25 (bm25s, Lucene variant) over the same card text; rebuilt in memory when the corpus changes."""

    def __init__(self, docs: list[IndexedDoc]):
        self.ids = [d.id for d in docs]
        self.retriever = bm25s.BM25()
        if docs:
            self.retriever.index(bm25s.tokenize([d.text for d in docs], stopwords="en", show_progress=False), show_progress=False)

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


