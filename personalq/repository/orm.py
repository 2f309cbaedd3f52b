"""SQLAlchemy 2 typed ORM: the repository's system of record.

List-valued card fields (triggers, subjects, styles, tags) live in one ``checkpoint_terms`` table with a
``field`` column, so "every checkpoint with style anime" is an indexed join rather than a JSON scan.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import DateTime, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

TERM_FIELDS = ("trigger", "subject", "style", "tag")


class Base(DeclarativeBase):
    pass


class Family(Base):
    __tablename__ = "families"

    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    name: Mapped[str] = mapped_column(String(300))
    checkpoints: Mapped[list["Checkpoint"]] = relationship(back_populates="family")


class Checkpoint(Base):
    __tablename__ = "checkpoints"

    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    name: Mapped[str] = mapped_column(String(300))
    family_id: Mapped[str] = mapped_column(ForeignKey("families.id"), index=True)
    version: Mapped[str | None] = mapped_column(String(200))
    version_number: Mapped[float | None] = mapped_column(Float)
    kind: Mapped[str] = mapped_column(String(32), index=True)
    base_model: Mapped[str] = mapped_column(String(200))
    creator: Mapped[str | None] = mapped_column(String(200), index=True)
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, index=True)
    last_used_at: Mapped[dt.datetime | None] = mapped_column(DateTime, index=True)
    weights_path: Mapped[str | None] = mapped_column(Text)
    weights_sha256: Mapped[str | None] = mapped_column(String(64), unique=True)
    preview_path: Mapped[str | None] = mapped_column(Text)
    source_format: Mapped[str] = mapped_column(String(32))
    source_path: Mapped[str] = mapped_column(Text)
    card_json: Mapped[str] = mapped_column(Text)
    content_hash: Mapped[str] = mapped_column(String(64))
    imported_at: Mapped[dt.datetime] = mapped_column(DateTime)

    family: Mapped[Family] = relationship(back_populates="checkpoints")
    terms: Mapped[list["CheckpointTerm"]] = relationship(
        back_populates="checkpoint", cascade="all, delete-orphan", order_by="CheckpointTerm.position"
    )


class CheckpointTerm(Base):
    __tablename__ = "checkpoint_terms"
    __table_args__ = (
        UniqueConstraint("checkpoint_id", "field", "position"),
        Index("ix_terms_field_value", "field", "value"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    checkpoint_id: Mapped[str] = mapped_column(ForeignKey("checkpoints.id", ondelete="CASCADE"), index=True)
    field: Mapped[str] = mapped_column(String(16))
    value: Mapped[str] = mapped_column(String(300))
    position: Mapped[int] = mapped_column(Integer)

    checkpoint: Mapped[Checkpoint] = relationship(back_populates="terms")


class RepositoryRevision(Base):
    """Counters that every write to ``checkpoints`` bumps (see :mod:`personalq.repository.revision`).

    Readers keep parsed cards, the BM25 index and the version vocabulary in memory and re-check them with one
    primary-key read per request. ``usage`` moves alone when only ``last_used_at`` changed, so marking a
    checkpoint used refreshes cached cards without rebuilding the text index.
    """

    __tablename__ = "repository_revision"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cards: Mapped[int] = mapped_column(Integer, default=0)
    usage: Mapped[int] = mapped_column(Integer, default=0)


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
