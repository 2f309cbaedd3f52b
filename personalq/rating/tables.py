"""Rating's table: the append-only preference votes.

Declared on the repository's one declarative ``Base`` (one metadata, one Alembic history: migration 0003 creates
it, 0006 makes it append-only), but owned here: rating depends on the repository, never the reverse. Its
queries live in :mod:`personalq.rating.votes`; the assembled schema is :mod:`personalq.schema`.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import DateTime, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from personalq.repository.orm import Base


class PreferenceVote(Base):
    """One rater's blind judgement of one pair: append-only, one per (rater, item)."""

    __tablename__ = "preference_votes"
    __table_args__ = (UniqueConstraint("rater", "item_id", name="one_vote_per_item"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    rater: Mapped[str] = mapped_column(String(100), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime)
    item_id: Mapped[str] = mapped_column(String(64), index=True)
    prompt: Mapped[str] = mapped_column(Text)
    method_left: Mapped[str] = mapped_column(String(32))
    method_right: Mapped[str] = mapped_column(String(32))
    checkpoint_left: Mapped[str | None] = mapped_column(String(200), nullable=True)
    checkpoint_right: Mapped[str | None] = mapped_column(String(200), nullable=True)
    choice: Mapped[str] = mapped_column(String(16))  # left | right | tie | both_bad
