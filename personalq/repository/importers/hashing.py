"""Hashing weights for an import: only files whose stat changed, in a worker pool, with a progress bar.

Reading every byte of every weights file on each import made a re-scan of a large folder as slow as the first
one. A file's SHA-256 is kept with its size, modification time (nanoseconds) and inode (the stat cache); when
all three still match, the file is taken as unchanged and not read. A file rewritten in place with the same size
gets a new ``mtime_ns`` and is hashed again; a file replaced by another (``mv``) gets a new inode.

Hashing runs in threads: ``hashlib`` releases the GIL on large buffers and reading is I/O, so threads overlap
both without the cost of processes.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from tqdm import tqdm

from personalq.repository.importers.base import sha256_file

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FileStat:
    """What the stat cache compares: a change to any of these means the bytes may have changed."""

    size: int
    mtime_ns: int
    inode: int

    @classmethod
    def of(cls, path: Path) -> "FileStat":
        st = os.stat(path)
        return cls(st.st_size, st.st_mtime_ns, st.st_ino)


@dataclass(frozen=True)
class CachedDigest:
    stat: FileStat
    sha256: str


@dataclass
class HashResult:
    digests: dict[Path, str]
    errors: dict[Path, str]
    fresh: dict[Path, CachedDigest]  # what was hashed now, for the stat cache
    hashed_bytes: int = 0


def hash_files(files: Iterable[Path], cached: Mapping[str, CachedDigest], workers: int | None = None) -> HashResult:
    """SHA-256 of each file, read only when its stat differs from ``cached`` (keyed by the path as text).

    A file that cannot be stat'ed or read becomes an error for it alone; the rest are still hashed.
    """
    result = HashResult({}, {}, {})
    todo: list[tuple[Path, FileStat]] = []
    for file in dict.fromkeys(files):
        try:
            stat = FileStat.of(file)
        except OSError as exc:
            result.errors[file] = f"cannot read {file.name}: {exc.strerror or exc}"
            continue
        known = cached.get(str(file))
        if known is not None and known.stat == stat:
            result.digests[file] = known.sha256
        else:
            todo.append((file, stat))
    if not todo:
        return result
    total = sum(stat.size for _, stat in todo)
    workers = workers or min(8, (os.cpu_count() or 2) + 2)
    log.info("hashing %d changed or new weights files (%.1f MB)", len(todo), total / 1e6)
    with (
        ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hash") as pool,
        tqdm(total=total, unit="B", unit_scale=True, desc="hashing", leave=False, disable=None) as bar,
    ):
        futures = {pool.submit(sha256_file, file): (file, stat) for file, stat in todo}
        for future in as_completed(futures):
            file, stat = futures[future]
            bar.update(stat.size)
            try:
                sha = future.result()
            except OSError as exc:
                result.errors[file] = f"cannot read {file.name}: {exc.strerror or exc}"
                continue
            after = _stat_or_none(file)
            result.digests[file] = sha
            result.hashed_bytes += stat.size
            if after == stat:  # a file written while it was read is hashed again next time
                result.fresh[file] = CachedDigest(stat, sha)
    return result


def _stat_or_none(path: Path) -> FileStat | None:
    try:
        return FileStat.of(path)
    except OSError:
        return None
