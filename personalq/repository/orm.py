"""SQLAlchemy 2 typed ORM: the repository's system of record, and the one declarative ``Base`` of the schema.

This module holds the repository's own tables. The packages above it declare theirs on the same ``Base`` in their
own modules (``personalq.checkin.tables``, ``personalq.rating.tables``): one metadata and one Alembic history,
while each package owns its tables and the repository imports none of them. :mod:`personalq.schema` assembles
the whole metadata.

List-valued card fields (triggers, subjects, styles, tags) live in one ``checkpoint_terms`` table with a
``field`` column, so "every checkpoint with style anime" is an indexed join rather than a JSON scan.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import BigInteger, DateTime, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
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
    edited_fields: Mapped[str | None] = mapped_column(String(200))  # the person's overrides, named (see below)

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


class CheckpointLocation(Base):
    """Another path holding a checkpoint's exact weights (same SHA-256): a copy, not a second checkpoint.

    The first file imported keeps the checkpoint (its id and ``weights_path``); every later path to the same
    bytes is listed here, so ``personalq repo duplicates`` can say where the copies are and a re-scan reports
    them as duplicates rather than as conflicts.
    """

    __tablename__ = "checkpoint_locations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    checkpoint_id: Mapped[str] = mapped_column(ForeignKey("checkpoints.id", ondelete="CASCADE"), index=True)
    path: Mapped[str] = mapped_column(Text, unique=True)
    recorded_at: Mapped[dt.datetime] = mapped_column(DateTime)


class WeightsStat(Base):
    """The stat cache: a weights file's SHA-256 as of its size, modification time and inode.

    A re-scan hashes only files whose stat changed (see :mod:`personalq.repository.importers.hashing`); a file
    rewritten in place with the same size gets a new ``mtime_ns`` and is hashed again.
    """

    __tablename__ = "weights_stat_cache"

    path: Mapped[str] = mapped_column(Text, primary_key=True)
    size: Mapped[int] = mapped_column(BigInteger)
    mtime_ns: Mapped[int] = mapped_column(BigInteger)
    inode: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))


class CheckpointOverride(Base):
    """What the person corrected on a checkpoint (name, triggers, styles, subjects, tags, base), kept apart from
    what the files say so that a re-import of the same file keeps the corrections.

    ``checkpoints.card_json`` holds the card with the overrides applied (what search, Check-in and serving read);
    ``imported_card_json`` is the card as last imported, so an override can be taken back. ``edited_fields`` on the
    checkpoint names the overridden fields without a join, for the table's "edited" mark.
    """

    __tablename__ = "checkpoint_overrides"

    checkpoint_id: Mapped[str] = mapped_column(ForeignKey("checkpoints.id", ondelete="CASCADE"), primary_key=True)
    fields_json: Mapped[str] = mapped_column(Text)
    imported_card_json: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime)
