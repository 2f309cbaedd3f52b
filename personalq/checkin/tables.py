"""Check-in's table: the conversations waiting for (or done with) a clarification answer.

Declared on the repository's one declarative ``Base`` (one metadata, one Alembic history: migration 0002 creates
it), but owned here: Check-in depends on the repository, never the reverse. Its queries live in
:mod:`personalq.checkin.sessions`; the assembled schema is :mod:`personalq.schema`.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import DateTime, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from personalq.repository.orm import Base


class CheckinSession(Base):
    """A Check-in conversation waiting for (or done with) a clarification answer; survives restarts."""

    __tablename__ = "checkin_sessions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime)
    query: Mapped[str] = mapped_column(Text)
    now: Mapped[dt.datetime] = mapped_column(DateTime)
    status: Mapped[str] = mapped_column(String(16))
    state_json: Mapped[str] = mapped_column(Text)
