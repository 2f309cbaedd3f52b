"""The Repository API: import, list, show, remove, reindex and search checkpoints.

One import is one short database transaction. Files are parsed, hashed and embedded before it starts, so
the write lock that other processes (the web app's votes and chat sessions) wait on is held only while rows
are written. Records are checked and written entry by entry inside savepoints, so one bad file is reported
and skipped while the rest land. The dense index follows the commit; should it fail, or the process die in
between, the next start (or ``personalq repo reindex``) finds the missing entries by their fingerprints.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Iterable, Iterator, Literal

from sqlalchemy import and_, delete, func, insert, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from personalq.config import Settings
from personalq.repository.base_models import normalise_base_model
from personalq.repository.card import Card, StoredCheckpoint
from personalq.repository.database import open_database
from personalq.repository.duplicates import Duplicate, primary_first
from personalq.repository.importers import ImportedCheckpoint, ImportProblem, ParsedEntry, parse_paths
from personalq.repository.importers.base import combine_digests, weights_files
from personalq.repository.importers.hashing import hash_files
from personalq.repository.index import DenseIndex, IndexedDoc, SparseIndex, SyncReport
from personalq.repository.orm import (
    TERM_FIELDS,
    Checkpoint,
    CheckpointLocation,
    CheckpointOverride,
    CheckpointTerm,
    Family,
)
from personalq.repository.overrides import CardEdit, apply_overrides, normalised
from personalq.repository.query_encoder import QueryEncoder
from personalq.repository.rescan import known_files
from personalq.repository.revision import Revision, read_revision
from personalq.repository.stat_cache import load_stat_cache, store_stat_cache
from personalq.repository.versions import slugify

log = logging.getLogger(__name__)
Status = Literal["imported", "updated", "unchanged", "duplicate", "error", "skipped"]
TimeField = Literal["created", "used"]  # a checkpoint's creation time or its last use
_TIME_COLUMNS = {"created": Checkpoint.created_at, "used": Checkpoint.last_used_at}


# What writing one record can raise besides ImportProblem: the database refusing it, or a value it cannot store
# (a date out of range, a field of the wrong type). The batch pass redoes the import entry by entry on these.
RECORD_FAILURES = (IntegrityError, ValueError, TypeError, ArithmeticError)


class CheckpointNotFound(KeyError):
    def __str__(self) -> str:
        return f"no checkpoint with id {self.args[0]!r}"


@dataclass
class ImportOutcome:
    path: str
    status: Status
    checkpoint_id: str | None = None
    message: str = ""


@dataclass
class ImportReport:
    outcomes: list[ImportOutcome] = field(default_factory=list)
    seconds: float = 0.0

    def count(self, status: Status) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def ok(self) -> bool:
        return self.count("error") == 0

    def summary(self) -> str:
        parts = [
            f"{self.count(s)} {s}"
            for s in ("imported", "updated", "unchanged", "duplicate", "skipped", "error")
            if self.count(s)
        ]
        return ", ".join(parts) or "nothing to import"


@dataclass
class CheckpointFilter:
    family: str | None = None
    style: str | None = None
    kind: str | None = None
    creator: str | None = None
    base_model: str | None = None  # a base key or anything that normalizes to one ("SD 1.5", "SDXL 1.0")
    text: str | None = None
    since: dt.datetime | None = None
    until: dt.datetime | None = None
    limit: int | None = None
    order: str = "family"  # one of ORDERS: family and version, name, newest, last used, base


ORDERS = {
    "family": (Checkpoint.family_id, Checkpoint.version_number, Checkpoint.created_at, Checkpoint.id),
    "name": (func.lower(Checkpoint.name), Checkpoint.version_number, Checkpoint.id),
    "newest": (Checkpoint.created_at.desc(), Checkpoint.id),
    "used": (Checkpoint.last_used_at.is_(None), Checkpoint.last_used_at.desc(), Checkpoint.id),  # never used last
    "base": (Checkpoint.base_model, Checkpoint.family_id, Checkpoint.version_number, Checkpoint.id),
}


def _content_hash(card: Card, digest: str | None) -> str:
    return hashlib.sha256(f"{card.content_hash()}:{digest or ''}".encode()).hexdigest()


def _to_stored(row: Checkpoint) -> StoredCheckpoint:
    data = Card.model_validate_json(row.card_json).model_dump()
    data.update(
        last_used_at=row.last_used_at,
        weights_path=row.weights_path,
        weights_sha256=row.weights_sha256,
        preview_path=row.preview_path,
        source_format=row.source_format,
        source_path=row.source_path,
        version_number=row.version_number,
        imported_at=row.imported_at,
        edited=row.edited_fields.split(",") if row.edited_fields else [],
    )
    return StoredCheckpoint.model_validate(data)


_ABSENT = object()


def _restore(mapping: dict, key: str, previous: object) -> None:
    if previous is _ABSENT:
        mapping.pop(key, None)
    else:
        mapping[key] = previous


@dataclass
class _Known:
    """Rows an import can collide with, loaded in bulk up front and kept current as the import adds rows."""

    by_id: dict[str, Checkpoint]
    by_sha: dict[str, Checkpoint]
    families: set[str]
    locations: dict[str, CheckpointLocation] = field(default_factory=dict)  # copies already recorded, by path
    terms: list[dict] = field(default_factory=list)  # written with one executemany after the rows
    stale_terms: list[str] = field(default_factory=list)  # ids whose old terms go first
    _undo: list[Callable[[], None]] | None = field(default=None, init=False, repr=False)

    @contextmanager
    def entry(self) -> Iterator[None]:
        """Write one entry inside its savepoint: should the database refuse it, what the entry added here (its
        family, its row, its terms) is forgotten with the rollback, or the entries after it would build on
        rows that no longer exist and fail in turn."""
        self._undo, terms, stale = [], len(self.terms), len(self.stale_terms)
        try:
            yield
        except BaseException:
            for undo in reversed(self._undo):
                undo()
            del self.terms[terms:], self.stale_terms[stale:]
            raise
        finally:
            self._undo = None

    def _set(self, mapping: dict, key: str, value: Checkpoint) -> None:
        if self._undo is not None:
            self._undo.append(partial(_restore, mapping, key, mapping.get(key, _ABSENT)))
        mapping[key] = value

    def add_family(self, session: Session, family_id: str, name: str) -> None:
        if family_id in self.families:
            return
        session.add(Family(id=family_id, name=name))
        self.families.add(family_id)
        if self._undo is not None:
            self._undo.append(partial(self.families.discard, family_id))

    def write_terms(self, session: Session) -> None:
        """Terms are plain rows: one batched INSERT instead of tens of thousands of ORM objects."""
        for start in range(0, len(self.stale_terms), 500):
            session.execute(
                delete(CheckpointTerm).where(CheckpointTerm.checkpoint_id.in_(self.stale_terms[start : start + 500]))
            )
        if self.terms:
            session.execute(insert(CheckpointTerm), self.terms)
        self.terms, self.stale_terms = [], []

    @classmethod
    def load(cls, session: Session, staged) -> "_Known":
        ids = sorted({record.card.id for _, record, _ in staged})
        shas = sorted({digest for _, _, digest in staged if digest})
        rows: list[Checkpoint] = []
        for chunk in range(0, max(len(ids), len(shas)), 500):
            condition = Checkpoint.id.in_(ids[chunk : chunk + 500]) | Checkpoint.weights_sha256.in_(
                shas[chunk : chunk + 500]
            )
            rows += session.scalars(select(Checkpoint).where(condition)).all()
        families = set(session.scalars(select(Family.id)))
        paths = sorted({str(record.weights_path) for _, record, _ in staged if record.weights_path})
        locations = {
            location.path: location
            for start in range(0, len(paths), 500)
            for location in session.scalars(
                select(CheckpointLocation).where(CheckpointLocation.path.in_(paths[start : start + 500]))
            )
        }
        by_sha = {r.weights_sha256: r for r in rows if r.weights_sha256}
        return cls({r.id: r for r in rows}, by_sha, families, locations)

    def fetch(self, session: Session, checkpoint_id: str) -> Checkpoint | None:
        """A row whose id was not among the staged ids (a made-up id after a collision)."""
        row = session.get(Checkpoint, checkpoint_id)
        if row is not None:
            self.remember(row)
        return row

    def set_location(self, path: str, location: CheckpointLocation | None) -> None:
        """Record (or, with None, forget) the copy at ``path``; undone with the entry's savepoint."""
        if self._undo is not None:
            self._undo.append(partial(_restore, self.locations, path, self.locations.get(path, _ABSENT)))
        if location is None:
            self.locations.pop(path, None)
        else:
            self.locations[path] = location

    def remember(self, row: Checkpoint) -> None:
        self._set(self.by_id, row.id, row)
        if row.weights_sha256:
            self._set(self.by_sha, row.weights_sha256, row)


def _term_rows(card: Card) -> list[dict]:
    """The card's list fields as ``checkpoint_terms`` rows."""
    return [
        {"checkpoint_id": card.id, "field": name, "value": value[:300], "position": pos}
        for name, values in (
            ("trigger", card.triggers),
            ("subject", card.subjects),
            ("style", card.styles),
            ("tag", card.tags),
        )
        for pos, value in enumerate(values)
    ]


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _record_copy(session: Session, known: _Known, checkpoint: Checkpoint, path: str) -> ImportOutcome:
    """A second path to a checkpoint's exact weights: a location of it, reported as a duplicate (not an error)."""
    location = known.locations.get(path)
    if location is not None and location.checkpoint_id == checkpoint.id:
        return ImportOutcome("", "duplicate", checkpoint.id, f"duplicate of {checkpoint.id} (already recorded)")
    if location is None:
        location = CheckpointLocation(path=path, checkpoint_id=checkpoint.id, recorded_at=_now())
        session.add(location)
        known.set_location(path, location)
    else:  # the file at this path now holds another checkpoint's bytes
        location.checkpoint_id = checkpoint.id
    return ImportOutcome("", "duplicate", checkpoint.id, f"duplicate of {checkpoint.id} ({checkpoint.weights_path})")


def _forget_copy(session: Session, known: _Known, record: ImportedCheckpoint) -> None:
    """A path recorded as a copy whose bytes changed since: it is no longer a copy of anything."""
    location = known.locations.get(str(record.weights_path)) if record.weights_path else None
    if location is not None:
        known.set_location(location.path, None)
        session.delete(location)


class Repository:
    """The system of record for checkpoints; the UI, Check-in and serving all go through it."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.engine, self.sessions = open_database(settings.resolved_database_url)
        self.dense = DenseIndex(
            settings.chroma_dir,
            QueryEncoder(settings.model_cache),
            url=settings.chroma_url,
            collection_name=settings.chroma_collection,
        )
        self._sparse: tuple[int, SparseIndex] | None = None
        self.last_hashed_bytes = 0  # bytes the last import read to hash (the stat cache spared the rest)

    # -- reading ---------------------------------------------------------------------------------------

    def get(self, checkpoint_id: str) -> StoredCheckpoint:
        with self.sessions() as session:
            row = session.get(Checkpoint, checkpoint_id)
            if row is None:
                raise CheckpointNotFound(checkpoint_id)
            return _to_stored(row)

    def get_many(self, ids: Iterable[str]) -> list[StoredCheckpoint]:
        ids = list(ids)
        with self.sessions() as session:
            rows = {r.id: r for r in session.scalars(select(Checkpoint).where(Checkpoint.id.in_(ids)))}
        return [_to_stored(rows[i]) for i in ids if i in rows]

    def list(self, filters: CheckpointFilter | None = None) -> list[StoredCheckpoint]:
        f = filters or CheckpointFilter()
        if f.order not in ORDERS:
            raise ValueError(f"unknown order {f.order!r}; expected one of {', '.join(ORDERS)}")
        query = self._filtered(select(Checkpoint).order_by(*ORDERS[f.order]), f)
        if f.limit:
            query = query.limit(f.limit)
        with self.sessions() as session:
            return [_to_stored(row) for row in session.scalars(query)]

    @staticmethod
    def _filtered(query, f: CheckpointFilter):
        """``query`` narrowed by every filter ``f`` sets (the limit and order aside)."""
        if f.family:
            query = query.where(Checkpoint.family_id == slugify(f.family))
        if f.kind:
            query = query.where(Checkpoint.kind == f.kind)
        if f.creator:
            query = query.where(func.lower(Checkpoint.creator) == f.creator.lower())
        if f.base_model:
            query = query.where(Checkpoint.base_model == normalise_base_model(f.base_model))
        if f.since:
            query = query.where(Checkpoint.created_at >= f.since)
        if f.until:
            query = query.where(Checkpoint.created_at <= f.until)
        if f.style:
            styled = select(CheckpointTerm.checkpoint_id).where(
                CheckpointTerm.field == "style", func.lower(CheckpointTerm.value) == f.style.lower()
            )
            query = query.where(Checkpoint.id.in_(styled))
        if f.text:
            needle = f"%{f.text.lower()}%"
            query = query.where(func.lower(Checkpoint.card_json).like(needle))
        return query

    def newest_ids(self, by: TimeField = "created", limit: int | None = None) -> list[str]:
        """Ids of the checkpoints, newest first by creation or by last use (``by="used"`` leaves out those
        never used)."""
        column = _TIME_COLUMNS[by]
        query = select(Checkpoint.id).where(column.is_not(None)).order_by(column.desc()).limit(limit)
        with self.sessions() as session:
            return list(session.scalars(query))

    def ids_between(
        self, windows: Iterable[tuple[dt.datetime, dt.datetime]], by: TimeField = "created", limit: int | None = None
    ) -> list[str]:
        """Ids of the checkpoints created (or last used) inside any of ``windows``, each a half-open
        ``(start, end)`` of naive datetimes as stored, newest first; none when no window is given."""
        column = _TIME_COLUMNS[by]
        windows = list(windows)
        if not windows:
            return []
        condition = or_(*[and_(column >= start, column < end) for start, end in windows])
        query = select(Checkpoint.id).where(condition).order_by(column.desc()).limit(limit)
        with self.sessions() as session:
            return list(session.scalars(query))

    def ids_with_terms(
        self, values: Iterable[str], fields: Iterable[str] = TERM_FIELDS, limit: int | None = None
    ) -> list[str]:
        """Ids of the checkpoints whose card lists one of ``values`` (exactly, as stored) under one of ``fields``
        (``trigger``, ``subject``, ``style``, ``tag``), newest first: an indexed look-up in ``checkpoint_terms``."""
        values, fields = sorted(set(values)), tuple(fields)
        unknown = set(fields) - set(TERM_FIELDS)
        if unknown:
            raise ValueError(f"unknown term fields {sorted(unknown)}; expected some of {', '.join(TERM_FIELDS)}")
        if not values or not fields:
            return []
        query = (
            select(CheckpointTerm.checkpoint_id)
            .join(Checkpoint, Checkpoint.id == CheckpointTerm.checkpoint_id)
            .where(CheckpointTerm.field.in_(fields), CheckpointTerm.value.in_(values))
            .order_by(Checkpoint.created_at.desc())
            .distinct()
            .limit(limit)
        )
        with self.sessions() as session:
            return list(session.scalars(query))

    def duplicates(self) -> list[Duplicate]:
        """Checkpoints whose weights were found at more than one path, with the other paths (oldest first)."""
        query = (
            select(Checkpoint.id, Checkpoint.name, Checkpoint.weights_path, CheckpointLocation.path)
            .join(CheckpointLocation, CheckpointLocation.checkpoint_id == Checkpoint.id)
            .order_by(Checkpoint.id, CheckpointLocation.recorded_at, CheckpointLocation.id)
        )
        found: dict[str, Duplicate] = {}
        with self.sessions() as session:
            for checkpoint_id, name, weights_path, path in session.execute(query):
                found.setdefault(checkpoint_id, Duplicate(checkpoint_id, name, weights_path)).copies.append(path)
        return list(found.values())

    def bases(self) -> list[str]:
        """The base keys the repository's checkpoints are for, for a filter's choices."""
        with self.sessions() as session:
            return sorted(session.scalars(select(Checkpoint.base_model).distinct()))

    def count(self, filters: CheckpointFilter | None = None) -> int:
        if filters is not None:
            with self.sessions() as session:
                query = self._filtered(select(func.count()).select_from(Checkpoint), filters)
                return session.scalar(query) or 0
        return self._count_all()

    def _count_all(self) -> int:
        with self.sessions() as session:
            return session.scalar(select(func.count()).select_from(Checkpoint)) or 0

    def documents(self) -> list[IndexedDoc]:
        with self.sessions() as session:
            rows = session.execute(select(Checkpoint.id, Checkpoint.card_json, Checkpoint.content_hash)).all()
        cards = [(i, Card.model_validate_json(j), h) for i, j, h in rows]
        return [IndexedDoc(i, card.index_text(), h, card.identity_text()) for i, card, h in cards]

    # -- search ----------------------------------------------------------------------------------------

    def revision(self) -> Revision:
        """Where the repository stands; equal revisions mean nothing cached from it went stale."""
        with self.sessions() as session:
            return read_revision(session)

    def sparse(self, cards_revision: int | None = None) -> SparseIndex:
        """The BM25 index, rebuilt when cards changed; a caller that already read the revision passes it."""
        cards = self.revision().cards if cards_revision is None else cards_revision
        if self._sparse is None or self._sparse[0] != cards:
            self._sparse = (cards, SparseIndex(self.documents()))
        return self._sparse[1]

    def search_dense(self, text: str, k: int = 10, cards_revision: int | None = None) -> list[tuple[str, float]]:
        self.dense.follow(self.revision().cards if cards_revision is None else cards_revision)
        return self.dense.query(text, k)

    def search_sparse(self, text: str, k: int = 10, cards_revision: int | None = None) -> list[tuple[str, float]]:
        return self.sparse(cards_revision).query(text, k)

    def sync_index(self, rebuild: bool = False) -> SyncReport:
        """Make Chroma agree with SQLite; with ``rebuild`` start from an empty collection."""
        self.dense.follow(self.revision().cards)
        if rebuild:
            existing = list(self.dense.fingerprints())
            self.dense.delete(existing)
        report = self.dense.sync(self.documents())
        report.rebuilt = report.rebuilt or rebuild
        return report

    # -- writing ---------------------------------------------------------------------------------------

    def edit(self, checkpoint_id: str, edit: CardEdit) -> StoredCheckpoint:
        """Lay the person's corrections over a checkpoint's card; they are kept across re-imports of its file, and
        search, Check-in and serving see them at once (the card revision moves and the dense index is updated).
        Raises :class:`CheckpointNotFound`, or :class:`~personalq.repository.overrides.InvalidEdit` for a value
        no card may hold."""
        with self.sessions.begin() as session:
            before = read_revision(session).cards
            row = session.get(Checkpoint, checkpoint_id)
            if row is None:
                raise CheckpointNotFound(checkpoint_id)
            override = session.get(CheckpointOverride, checkpoint_id)
            imported = Card.model_validate_json(override.imported_card_json if override else row.card_json)
            fields = {} if override is None or edit.reset else json.loads(override.fields_json)
            current = apply_overrides(imported, fields)
            fields = normalised({**fields, **edit.changes(current)}, imported)
            card = apply_overrides(imported, fields)
            if override is None:
                override = CheckpointOverride(checkpoint_id=checkpoint_id, imported_card_json=row.card_json)
                session.add(override)
            override.fields_json = json.dumps(fields, sort_keys=True)
            override.updated_at = _now()
            row.name, row.base_model, row.card_json = card.name, card.base_model, card.model_dump_json()
            row.content_hash = _content_hash(card, row.weights_sha256)
            row.edited_fields = ",".join(sorted(fields)) or None
            session.execute(delete(CheckpointTerm).where(CheckpointTerm.checkpoint_id == checkpoint_id))
            if rows := _term_rows(card):
                session.execute(insert(CheckpointTerm), rows)
            session.flush()
            stored = _to_stored(row)
            doc = IndexedDoc(card.id, card.index_text(), row.content_hash, card.identity_text())
            after = read_revision(session).cards
        self._follow_own_write(before, after, lambda: self.dense.upsert([doc]))
        return stored

    def touch(self, checkpoint_id: str, when: dt.datetime | None = None) -> None:
        with self.sessions.begin() as session:
            row = session.get(Checkpoint, checkpoint_id)
            if row is None:
                raise CheckpointNotFound(checkpoint_id)
            row.last_used_at = when or dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)

    def remove(self, checkpoint_id: str) -> StoredCheckpoint:
        with self.sessions.begin() as session:
            before = read_revision(session).cards
            row = session.get(Checkpoint, checkpoint_id)
            if row is None:
                raise CheckpointNotFound(checkpoint_id)
            stored = _to_stored(row)
            family_id = row.family_id
            session.delete(row)
            session.flush()
            if not session.scalar(
                select(func.count()).select_from(Checkpoint).where(Checkpoint.family_id == family_id)
            ):
                session.execute(Family.__table__.delete().where(Family.id == family_id))
            after = read_revision(session).cards
        self._follow_own_write(before, after, lambda: self.dense.delete([checkpoint_id]))
        return stored

    def _follow_own_write(self, before: int, after: int, update_index: Callable[[], None]) -> None:
        """Bring the dense index after a committed write. Should that fail, the rows stay (SQLite decides) and a
        sync from SQLite is tried; if even that fails, the next start or ``repo reindex`` patches the index."""
        self.dense.follow(before)  # a change by another process before ours is loaded first
        try:
            update_index()
        except Exception:
            log.exception("updating the dense index failed; resynchronising it from the database")
            try:
                self.dense.sync(self.documents())
            except Exception:
                log.exception(
                    "the dense index is behind the database until the next start or `personalq repo reindex`"
                )
        self.dense.seen(after)

    def import_paths(
        self,
        paths: Iterable[Path | str],
        replace: bool = False,
        on_entry: Callable[[ParsedEntry], None] | None = None,
    ) -> ImportReport:
        """Import files and folders; every entry gets an outcome, and a failure never leaves partial state."""
        started = time.perf_counter()
        report = ImportReport()
        pending: list[tuple[ParsedEntry, list]] = []  # each entry with the weights files of each of its records
        paths = [Path(p).absolute() for p in paths]  # stored paths must not depend on the cwd
        known = None if replace else known_files(self.sessions, paths)  # --replace reads every file again
        for entry in parse_paths(paths, known):
            if on_entry:
                on_entry(entry)
            if entry.known_as:
                status: Status = "duplicate" if entry.known_copy else "unchanged"
                message = f"duplicate of {entry.known_as} (already recorded)" if entry.known_copy else "not changed"
                report.outcomes.append(ImportOutcome(str(entry.path), status, entry.known_as, message))
                continue
            if entry.error:
                report.outcomes.append(ImportOutcome(str(entry.path), "error", message=entry.error))
                continue
            if entry.skipped:
                report.outcomes.append(ImportOutcome(str(entry.path), "skipped", message=entry.skipped))
                continue
            try:
                files = [weights_files(r.weights_path, entry.root) if r.weights_path else None for r in entry.records]
            except (ImportProblem, OSError) as exc:
                report.outcomes.append(ImportOutcome(str(entry.path), "error", message=str(exc)))
                continue
            pending.append((entry, files))
        staged = primary_first(self._digest(pending, report))
        if staged:
            vectors = self._embed_new(staged)
            self._write(staged, replace, report, vectors)
        report.seconds = time.perf_counter() - started
        return report

    def _digest(self, pending: list[tuple[ParsedEntry, list]], report: ImportReport):
        """Each record with its weights digest, hashing only the files the stat cache does not vouch for; an
        entry with an unreadable weights file becomes that entry's error."""
        wanted = [resolved for _, files in pending for listed in files if listed for _, resolved in listed]
        hashed = hash_files(wanted, load_stat_cache(self.sessions, wanted))
        store_stat_cache(self.sessions, hashed.fresh)
        self.last_hashed_bytes = hashed.hashed_bytes
        staged: list[tuple[ParsedEntry, ImportedCheckpoint, str | None]] = []
        for entry, files in pending:
            problem = next(
                (hashed.errors[f] for listed in files if listed for _, f in listed if f in hashed.errors), None
            )
            if problem:
                report.outcomes.append(ImportOutcome(str(entry.path), "error", message=problem))
                continue
            digests = [combine_digests(listed, hashed.digests) if listed else None for listed in files]
            staged.extend((entry, record, digest) for record, digest in zip(entry.records, digests))
        return staged

    def _embed_new(self, staged) -> dict:
        """Embed, before any lock is taken, the records whose content the repository does not hold yet (the
        expensive part of an import); a record whose id changes while writing is embedded after the commit."""
        contents = [_content_hash(record.card, digest) for _, record, digest in staged]
        hashes = sorted(set(contents))
        with self.sessions() as session:
            stored = {
                h
                for start in range(0, len(hashes), 500)
                for h in session.scalars(
                    select(Checkpoint.content_hash).where(Checkpoint.content_hash.in_(hashes[start : start + 500]))
                )
            }
        new = [record.card for (_, record, _), content in zip(staged, contents) if content not in stored]
        return self.dense.embed([IndexedDoc(card.id, "", "", card.identity_text()) for card in new])

    def _write(self, staged, replace: bool, report: ImportReport, vectors: dict) -> None:
        """Fast path: everything decided in memory and flushed once (batched INSERTs). Should the database
        still refuse something, redo the import entry by entry inside savepoints to pin the failure down."""
        try:
            outcomes, written, revisions = self._write_batch(staged, replace, isolate=False)
        except RECORD_FAILURES:
            log.info("a record could not be stored; importing entry by entry to find it", exc_info=True)
            outcomes, written, revisions = self._write_batch(staged, replace, isolate=True)
        report.outcomes.extend(outcomes)
        if written:
            self._follow_own_write(*revisions, lambda: self.dense.upsert(written, vectors))

    def _write_batch(self, staged, replace: bool, isolate: bool):
        """One write transaction; returns the outcomes, the documents to index and the card revision before
        and after it."""
        written: list[IndexedDoc] = []
        outcomes: list[ImportOutcome] = []
        with self.sessions.begin() as session:
            with session.no_autoflush:
                before = read_revision(session).cards
                known = _Known.load(session, staged)
                for entry, record, digest in staged:
                    try:
                        if isolate:
                            with session.begin_nested(), known.entry():
                                outcome, doc = self._write_one(session, known, record, digest, replace)
                                session.flush()
                                known.write_terms(session)
                        else:
                            outcome, doc = self._write_one(session, known, record, digest, replace)
                    except ImportProblem as exc:
                        outcome, doc = ImportOutcome(str(entry.path), "error", record.card.id, str(exc)), None
                    except RECORD_FAILURES as exc:
                        if not isolate:  # the session may hold half of this record: redo the batch entry by entry
                            raise
                        reason = (
                            f"database refused the record: {exc.orig}"
                            if isinstance(exc, IntegrityError)
                            else f"cannot store the record: {exc}"
                        )
                        outcome, doc = ImportOutcome(str(entry.path), "error", record.card.id, reason), None
                    outcome.path = str(entry.path)
                    outcomes.append(outcome)
                    if doc is not None:
                        written.append(doc)
                session.flush()
                known.write_terms(session)
                after = read_revision(session).cards
        return outcomes, written, (before, after)

    def _write_one(
        self, session: Session, known: "_Known", record: ImportedCheckpoint, digest: str | None, replace: bool
    ) -> tuple[ImportOutcome, IndexedDoc | None]:
        card = record.card
        content = _content_hash(card, digest)
        same_weights = known.by_sha.get(digest) if digest else None
        if same_weights is not None and record.weights_path and same_weights.weights_path != str(record.weights_path):
            return _record_copy(session, known, same_weights, str(record.weights_path)), None
        _forget_copy(session, known, record)
        target = same_weights or known.by_id.get(card.id)  # every staged id was loaded up front
        if (
            target is not None
            and same_weights is None
            and not record.id_is_explicit
            and target.weights_sha256 != digest
            and target.weights_path != str(record.weights_path)  # the same file rewritten is the same checkpoint
        ):
            card = card.model_copy(update={"id": f"{card.id}-{(digest or content)[:8]}"})  # a made-up id that collides
            target = known.by_id.get(card.id) or known.fetch(session, card.id)
        override = session.get(CheckpointOverride, target.id) if target is not None and target.edited_fields else None
        if override is not None:  # the person's corrections outlive a re-import of the same file
            imported = card.model_copy(update={"id": target.id})
            card = apply_overrides(imported, json.loads(override.fields_json))
            content = _content_hash(card, digest)
        if target is not None:
            if target.content_hash == content:
                preview = str(record.preview_path) if record.preview_path else None
                if preview and target.preview_path != preview:  # a picture put beside the weights since
                    target.preview_path = preview
                    return ImportOutcome("", "updated", target.id, "new preview"), None
                return ImportOutcome("", "unchanged", target.id, "already in the repository"), None
            if not replace:
                reason = "these weights are already imported" if same_weights is not None else "this id already exists"
                raise ImportProblem(
                    f"{reason} as {target.id!r} with different content (from {target.source_path}); "
                    "use --replace to overwrite it"
                )
            card = card.model_copy(update={"id": target.id})
        if override is not None:  # what the files say now, for a later edit or reset
            override.imported_card_json = imported.model_dump_json()
        row = target or Checkpoint(id=card.id)
        family_id = slugify(card.family or card.name)
        known.add_family(session, family_id, card.family or card.name)
        row.name = card.name
        row.family_id = family_id
        row.version = card.version
        row.version_number = card.version_info.number
        row.kind = card.kind
        row.base_model = card.base_model
        row.creator = card.creator
        row.description = card.description
        row.created_at = card.created_at
        row.last_used_at = card.last_used_at if target is None else (card.last_used_at or target.last_used_at)
        row.weights_path = str(record.weights_path) if record.weights_path else None
        row.weights_sha256 = digest
        row.preview_path = str(record.preview_path) if record.preview_path else None
        row.source_format = record.source_format
        row.source_path = str(record.source_path)
        row.card_json = card.model_dump_json()
        row.content_hash = content
        row.imported_at = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
        if target is None:
            session.add(row)
        else:
            known.stale_terms.append(row.id)
        known.terms += _term_rows(card)
        known.remember(row)
        status: Status = "updated" if target is not None else "imported"
        warning = "" if card.triggers else " (no trigger: prompts cannot be rewritten for it)"
        return ImportOutcome("", status, card.id, f"{card.kind} {card.name!r}{warning}"), IndexedDoc(
            card.id, card.index_text(), content, card.identity_text()
        )
