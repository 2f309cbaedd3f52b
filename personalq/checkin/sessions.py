"""Check-in sessions in SQLite: what was asked, which candidates remain, which options were offered.

Check-in owns the ``checkin_sessions`` table (:mod:`personalq.checkin.tables`) and its queries, here; it reaches
the database through the sessionmaker the repository exposes (``Repository.sessions``), whose ``begin()`` is the
write transaction that takes SQLite's write lock up front.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid

from pydantic import BaseModel
from sqlalchemy import delete

from personalq.checkin.clarify import Option
from personalq.checkin.tables import CheckinSession
from personalq.repository.service import Repository


class PartState(BaseModel):
    """One part of a request that names several models (:mod:`personalq.checkin.composition`): the request words
    that named it, its strength, and its checkpoint once decided."""

    words: list[int]
    label: str = ""  # the request's words for it, for the question ("For ghibli style: ...")
    weight: float | None = None
    candidate_ids: list[str] = []
    chosen: str | None = None


class SessionState(BaseModel):
    prompt: str
    candidate_ids: list[str]
    options: list[Option]
    scores: dict[str, float] = {}
    weight: float | None = None  # the strength the request said of the model
    negative: str = ""  # the negative prompt the request carried
    parts: list[PartState] = []  # a composed picture's parts; the question is about the first undecided one
    typed: list[tuple[str, str, int]] = []  # words read mended (spelling.Fix): the answer's prompt keeps them as typed


class SessionNotFound(KeyError):
    def __str__(self) -> str:
        return f"no Check-in session {self.args[0]!r} (it may have been answered already or never existed)"


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


class SessionStore:
    def __init__(self, repository: Repository):
        self.sessions = repository.sessions

    def create(self, query: str, now: dt.datetime, status: str, state: SessionState) -> str:
        session_id = uuid.uuid4().hex
        with self.sessions.begin() as db:
            db.add(
                CheckinSession(
                    id=session_id,
                    created_at=_utcnow(),
                    updated_at=_utcnow(),
                    query=query,
                    now=now,
                    status=status,
                    state_json=state.model_dump_json(),
                )
            )
        return session_id

    def load(self, session_id: str) -> tuple[CheckinSession, SessionState]:
        with self.sessions() as db:
            row = db.get(CheckinSession, session_id)
            if row is None:
                raise SessionNotFound(session_id)
            return row, SessionState.model_validate(json.loads(row.state_json))

    def update(self, session_id: str, status: str, state: SessionState) -> None:
        with self.sessions.begin() as db:
            row = db.get(CheckinSession, session_id)
            if row is None:
                raise SessionNotFound(session_id)
            row.status, row.state_json, row.updated_at = status, state.model_dump_json(), _utcnow()

    def purge(self, older_than: dt.timedelta, now: dt.datetime | None = None) -> int:
        """Delete sessions untouched for ``older_than`` before ``now`` (naive UTC); returns how many went."""
        cutoff = (now or _utcnow()) - older_than
        with self.sessions.begin() as db:
            return db.execute(delete(CheckinSession).where(CheckinSession.updated_at < cutoff)).rowcount or 0
