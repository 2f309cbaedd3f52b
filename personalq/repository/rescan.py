"""A re-scan that does not read what it already holds: bare weights files whose stat matches the stat cache.

The stat cache spares hashing an unchanged file, but every file was still opened and its header (tens of kilobytes
of JSON for a kohya LoRA) parsed on each import, which put an unchanged re-scan of 30,000 LoRAs near a minute. A
bare ``.safetensors`` file that the repository holds (as a checkpoint's weights or as a recorded copy), whose size,
modification time and inode are those the stat cache recorded, and whose preview beside it is the one stored, is
reported as it was ("unchanged", or "duplicate of ID") without being opened.

Files read through a card or a Civitai file are always read: their card may have changed while the weights did not.
``import --replace`` reads everything, so cards are rebuilt after an upgrade that reads files differently.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from sqlalchemy import false, func, or_, select
from sqlalchemy.orm import sessionmaker

from personalq.repository.importers import KnownFiles, ParsedEntry
from personalq.repository.importers.hashing import FileStat
from personalq.repository.importers.previews import SIDECAR_SUFFIXES, sidecar_preview
from personalq.repository.importers.safetensors_file import SafetensorsImporter
from personalq.repository.orm import Checkpoint, CheckpointLocation, WeightsStat


def _under(column, folders: list[Path]):
    """``column`` (a path as text) lies in one of ``folders``; a prefix compare, without LIKE's wildcards."""
    prefixes = [str(folder).rstrip(os.sep) + os.sep for folder in folders]
    return or_(false(), *[func.substr(column, 1, len(prefix)) == prefix for prefix in prefixes])


def known_files(sessions: sessionmaker, paths: list[Path]) -> KnownFiles:
    """The check :func:`~personalq.repository.importers.parse_paths` runs on each bare file (see the module); only
    what lies in the imported folders is loaded (a file given by itself counts as its folder)."""
    folders = [p if p.is_dir() else p.parent for p in paths]
    real_folders = [Path(os.path.realpath(f)) for f in folders]
    with sessions() as session:
        held = {
            path: (checkpoint_id, preview)
            for path, checkpoint_id, preview in session.execute(
                select(Checkpoint.weights_path, Checkpoint.id, Checkpoint.preview_path).where(
                    Checkpoint.source_format == SafetensorsImporter.format, _under(Checkpoint.weights_path, folders)
                )
            )
        }
        copies = dict(
            session.execute(
                select(CheckpointLocation.path, CheckpointLocation.checkpoint_id).where(
                    _under(CheckpointLocation.path, folders)
                )
            ).all()
        )
        stats = {
            path: FileStat(size, mtime_ns, inode)
            for path, size, mtime_ns, inode in session.execute(
                select(WeightsStat.path, WeightsStat.size, WeightsStat.mtime_ns, WeightsStat.inode).where(
                    _under(WeightsStat.path, real_folders)
                )
            )
        }

    @lru_cache(maxsize=4096)
    def names_in(folder: Path) -> frozenset[str]:
        try:
            return frozenset(os.listdir(folder))
        except OSError:
            return frozenset()

    def preview_now(entry: Path, root: Path) -> str | None:
        stem, names = entry.stem, names_in(entry.parent)
        if not any(stem + suffix in names for suffix in SIDECAR_SUFFIXES):
            return None  # one listing per folder instead of eight look-ups per file
        found = sidecar_preview(entry, root)
        return str(found) if found else None

    def check(entry: Path, resolved: Path, root: Path) -> ParsedEntry | None:
        key = str(entry)
        if key in held:
            checkpoint_id, preview = held[key]
        elif key in copies:
            checkpoint_id, preview = copies[key], None
        else:
            return None
        try:
            if stats.get(str(resolved)) != FileStat.of(resolved):
                return None
        except OSError:
            return None  # read it, and report what is wrong with it
        if key in held and preview_now(entry, root) != preview:
            return None
        return ParsedEntry(entry, root=root, known_as=checkpoint_id, known_copy=key not in held)

    return check
