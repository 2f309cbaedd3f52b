"""Bumping the repository's revision counters on every flush that writes a checkpoint.

A flush listener rather than calls sprinkled over the write paths: import, replace, remove and "mark as used"
all go through the ORM, so none of them (nor a future one) can forget to invalidate the readers' caches.
"""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import event, inspect, select, update
from sqlalchemy.orm import Session, sessionmaker

from personalq.repository.orm import Checkpoint, RepositoryRevision

USAGE_COLUMNS = frozenset({"last_used_at"})


class Revision(NamedTuple):
    cards: int  # any card content, row added or removed
    usage: int  # last-used times only


def _changed_columns(row: Checkpoint) -> set[str]:
    return {attr.key for attr in inspect(row).attrs if attr.history.has_changes()}


def _bump(session: Session, _context) -> None:
    """After-flush hook: the session still lists what it just wrote, with each attribute's history."""
    content = usage = False
    for row in (*session.new, *session.deleted):
        content = content or isinstance(row, Checkpoint)
    for row in session.dirty:
        if isinstance(row, Checkpoint):
            changed = _changed_columns(row)
            content = content or bool(changed - USAGE_COLUMNS)
            usage = usage or bool(changed & USAGE_COLUMNS)
    if content or usage:
        values = {"usage": RepositoryRevision.usage + 1}
        if content:
            values["cards"] = RepositoryRevision.cards + 1
        session.execute(update(RepositoryRevision).where(RepositoryRevision.id == 1).values(**values))


def track_revisions(sessions: sessionmaker) -> None:
    event.listen(sessions, "after_flush", _bump)


def read_revision(session: Session) -> Revision:
    row = session.execute(
        select(RepositoryRevision.cards, RepositoryRevision.usage).where(RepositoryRevision.id == 1)
    ).one()
    return Revision(*row)
