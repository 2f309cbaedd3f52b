"""Candidate retrieval: dense (Chroma) and BM25 fused by reciprocal rank fusion, then widened.

Widening matters because versions of one concept have near-identical card text: text similarity cannot
tell v2 from v3, so every version of each retrieved family is brought in and competes on metadata. A third,
structured channel adds every checkpoint whose card names a subject the request names (the repository's
term table), so a family that text search ranked 11th is not silently lost.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import and_, or_, select

from personalq.checkin.intent import Intent

from personalq.checkin.lexicon import SUBJECT_SYNONYMS
from personalq.repository.index import reciprocal_rank_fusion
from personalq.repository.orm import Checkpoint, CheckpointTerm
from personalq.repository.revision import Revision
from personalq.repository.service import Repository, StoredCheckpoint

RRF_K = 60
TOP_K = 10
SUBJECT_CHANNEL_LIMIT = 400


@dataclass
class Candidates:
    checkpoints: list[StoredCheckpoint]
    fused: dict[str, float]  # RRF score of the text-retrieved ones; 0 for the widened
    dense: dict[str, float]


class CardCache:
    """Parsed cards by id, kept while the repository's revision stands; keeps per-request cost off JSON parsing.

    Call :meth:`refresh` once at the start of a request: it reads the revision (one primary-key read) and drops
    the cards if anything changed, including a last-used time; the request then shares that one check.
    """

    def __init__(self, repository: Repository):
        self.repository = repository
        self._revision: Revision | None = None
        self._cards: dict[str, StoredCheckpoint] = {}

    def refresh(self) -> Revision:
        revision = self.repository.revision()
        if revision != self._revision:
            self._cards, self._revision = {}, revision
        return revision

    def get_many(self, ids: list[str]) -> list[StoredCheckpoint]:
        missing = [i for i in ids if i not in self._cards]
        if missing:
            for card in self.repository.get_many(missing):
                self._cards[card.id] = card
        return [self._cards[i] for i in ids if i in self._cards]


def _family_ids(repository: Repository, ids: list[str]) -> list[str]:
    with repository.sessions() as session:
        return list(session.scalars(select(Checkpoint.family_id).where(Checkpoint.id.in_(ids)).distinct()))


def _family_member_ids(repository: Repository, family_ids: list[str]) -> list[str]:
    with repository.sessions() as session:
        return list(session.scalars(select(Checkpoint.id).where(Checkpoint.family_id.in_(family_ids))))


def _subject_ids(repository: Repository, subjects: list[str], limit: int) -> list[str]:
    words = {w for s in subjects for w in (s, *SUBJECT_SYNONYMS.get(s, ()))}
    if not words:
        return []
    with repository.sessions() as session:
        query = (
            select(CheckpointTerm.checkpoint_id)
            .join(Checkpoint, Checkpoint.id == CheckpointTerm.checkpoint_id)
            .where(CheckpointTerm.field.in_(("subject", "tag")), CheckpointTerm.value.in_(sorted(words)))
            .order_by(Checkpoint.created_at.desc())
            .distinct()
            .limit(limit)
        )
        return list(session.scalars(query))


def _window_ids(repository: Repository, intent: Intent, limit: int) -> list[str]:
    """For requests that name only a time ("the one I used yesterday"): checkpoints inside the windows."""
    column, windows = (Checkpoint.last_used_at, intent.used) if intent.used else (Checkpoint.created_at, intent.created)
    if not windows:
        return []
    condition = or_(*[and_(column >= w.start, column < w.end) for w in windows])
    with repository.sessions() as session:
        return list(session.scalars(select(Checkpoint.id).where(condition).order_by(column.desc()).limit(limit)))


def retrieve(repository: Repository, cache: CardCache, revision: Revision, intent: Intent, text: str, k: int = TOP_K) -> Candidates:
    dense = repository.search_dense(text, k=k * 3) if text.strip() else []
    sparse = repository.search_sparse(text, k=k * 3, cards_revision=revision.cards) if text.strip() else []
    fused = dict(reciprocal_rank_fusion([[i for i, _ in dense], [i for i, _ in sparse]], k=RRF_K)[:k])
    ids = list(fused)
    if ids:
        ids += [i for i in _family_member_ids(repository, _family_ids(repository, ids)) if i not in fused]
    ids += _subject_ids(repository, intent.subjects, SUBJECT_CHANNEL_LIMIT)
    if not intent.subjects and not intent.terms:
        ids += _window_ids(repository, intent, SUBJECT_CHANNEL_LIMIT)
    ids = list(dict.fromkeys(ids))
    return Candidates(cache.get_many(ids), fused, dict(dense))
