"""The stat cache's table: read before hashing, written after, each in its own short transaction.

Kept apart from the import's write transaction on purpose: a digest is true of the file whatever happens to the
import, and writing it early keeps the lock that other processes wait on short.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping

from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session, sessionmaker

from personalq.repository.importers.hashing import CachedDigest, FileStat
from personalq.repository.orm import WeightsStat

_CHUNK = 500


def load_stat_cache(sessions: sessionmaker, paths: Iterable[Path]) -> dict[str, CachedDigest]:
    """The cached digests of ``paths`` (keyed by the path as text); paths never hashed are absent."""
    keys = sorted({str(p) for p in paths})
    found: dict[str, CachedDigest] = {}
    with sessions() as session:
        for start in range(0, len(keys), _CHUNK):
            rows = session.execute(select(WeightsStat).where(WeightsStat.path.in_(keys[start : start + _CHUNK])))
            for (row,) in rows:
                found[row.path] = CachedDigest(FileStat(row.size, row.mtime_ns, row.inode), row.sha256)
    return found


def store_stat_cache(sessions: sessionmaker, fresh: Mapping[Path, CachedDigest]) -> None:
    """Record what was just hashed, replacing what the cache held for those paths."""
    if not fresh:
        return
    rows = [
        {"path": str(p), "size": d.stat.size, "mtime_ns": d.stat.mtime_ns, "inode": d.stat.inode, "sha256": d.sha256}
        for p, d in fresh.items()
    ]
    with sessions.begin() as session:
        _replace(session, rows)


def _replace(session: Session, rows: list[dict]) -> None:
    for start in range(0, len(rows), _CHUNK):
        chunk = rows[start : start + _CHUNK]
        session.execute(delete(WeightsStat).where(WeightsStat.path.in_([r["path"] for r in chunk])))
        session.execute(insert(WeightsStat), chunk)
