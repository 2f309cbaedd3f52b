"""Turning paths into checkpoint records: walk, recognise each entry by content, and report per entry.

Folder formats (diffusers pipelines, LoRA folders, textual-inversion concepts) are units of their own and are not
descended into. Card files and Civitai metadata run first, because the weights and previews they reference
are then "claimed" and not imported a second time as bare files.

Imported files come from strangers. Whatever goes wrong with one entry (a malformed header, a field of the
wrong type, a link out of the imported folder) becomes that entry's error, and the others still import.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from personalq.repository.importers.base import (
    IGNORED_SUFFIXES,
    ImportedCheckpoint,
    Importer,
    ImportProblem,
    ensure_inside,
    refuse_pickle,
)
from personalq.repository.importers.card_files import CardFileImporter
from personalq.repository.importers.civitai import CivitaiImporter
from personalq.repository.importers.folders import (
    DiffusersFolderImporter,
    LoraFolderImporter,
    TextualInversionImporter,
)
from personalq.repository.importers.previews import sidecar_preview
from personalq.repository.importers.safetensors_file import SafetensorsImporter

FOLDER_IMPORTERS: tuple[Importer, ...] = (DiffusersFolderImporter(), LoraFolderImporter(), TextualInversionImporter())
METADATA_IMPORTERS: tuple[Importer, ...] = (CivitaiImporter(), CardFileImporter())
FILE_IMPORTERS: tuple[Importer, ...] = (SafetensorsImporter(),)

log = logging.getLogger(__name__)
__all__ = ["ImportedCheckpoint", "ImportProblem", "ParsedEntry", "parse_paths"]


@dataclass
class ParsedEntry:
    """One file or folder of an import and what came of reading it."""

    path: Path
    records: list[ImportedCheckpoint] = field(default_factory=list)
    error: str | None = None
    skipped: str | None = None
    root: Path | None = None  # the imported folder: nothing the records name may be read outside it
    known_as: str | None = None  # a checkpoint id: the file is as it was last imported, and was not read again
    known_copy: bool = False  # ... and it is a recorded copy of that checkpoint


# Given an entry (a file not claimed by a card or Civitai file), its real path and the imported root: a ParsedEntry
# with ``known_as`` set when the repository already holds the file as it is now (see repository/rescan.py).
KnownFiles = Callable[[Path, Path, Path], "ParsedEntry | None"]


def _folder_importer(path: Path, root: Path) -> Importer | None:
    return next((imp for imp in FOLDER_IMPORTERS if imp.claims(path, root)), None)


def _walk(root: Path) -> tuple[list[Path], list[ParsedEntry]]:
    """Entries under ``root`` (folder units and files), plus errors for links that leave it."""
    entries: list[Path] = []
    problems: list[ParsedEntry] = []
    for current, dirs, files in os.walk(root, followlinks=False):
        here = Path(current)
        dirs.sort()
        kept = []
        for name in dirs:
            sub = here / name
            if sub.is_symlink():
                try:
                    ensure_inside(root, sub, "link")
                except ImportProblem as exc:
                    problems.append(ParsedEntry(sub, error=str(exc)))
                    continue
            if name.startswith("."):
                continue
            if _folder_importer(sub, root):
                entries.append(sub)
            elif not sub.is_symlink():
                kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            if name.startswith("."):
                continue
            entries.append(here / name)
    return entries, problems


def _guarded(entry: Path, work: Callable[[], ParsedEntry | None]) -> ParsedEntry | None:
    """Run the reading of one entry; any failure becomes that entry's error, so one file never aborts an import.

    Importers raise :class:`ImportProblem` for what they anticipate. Anything else is a case they did not
    (a hostile file finds them all), so it is logged with its traceback and still reported against the file.
    """
    try:
        return work()
    except ImportProblem as exc:
        return ParsedEntry(entry, error=str(exc))
    except OSError as exc:
        return ParsedEntry(entry, error=f"cannot read {entry.name}: {exc.strerror or exc}")
    except RecursionError:
        return ParsedEntry(entry, error=f"{entry.name} is nested too deeply to read")
    except Exception as exc:
        log.warning("unexpected failure importing %s", entry, exc_info=True)
        return ParsedEntry(entry, error=f"cannot import {entry.name}: {type(exc).__name__}: {exc}"[:500])


def parse_paths(paths: list[Path], known: KnownFiles | None = None) -> list[ParsedEntry]:
    """Read every importable thing under ``paths``; never raises for a bad file. Files ``known`` vouches for
    are not read at all (a re-scan of an unchanged folder)."""
    results: list[ParsedEntry] = []
    for given in paths:
        given = Path(given)
        if not given.exists() and not given.is_symlink():
            results.append(ParsedEntry(given, error=f"{given} does not exist"))
            continue
        root = given.resolve() if given.is_dir() and not given.is_symlink() else given.parent.resolve()
        if given.is_dir() and _folder_importer(given, root) is None:
            entries, problems = _walk(given)
            results.extend(problems)
        else:
            entries = [given]
        results.extend(_parse_entries(entries, root, known))
    return results


def _read_metadata(entry: Path, root: Path, resolved: dict[Path, Path]) -> ParsedEntry | None:
    """The entry read as a card or Civitai file, or None when it is neither; its real path goes into ``resolved``.

    This runs first for every entry, so the check that it stays inside ``root`` comes before any importer
    opens it (claiming a JSON file means reading it).
    """
    resolved[entry] = ensure_inside(root, entry, "file")
    if entry.is_dir():
        return None
    importer = next((i for i in METADATA_IMPORTERS if i.claims(entry, root)), None)
    return None if importer is None else ParsedEntry(entry, importer.read(entry, root), root=root)


def _read_content(entry: Path, root: Path) -> ParsedEntry | None:
    """The entry read as a folder unit or a weights file; None for files that are ignored on purpose."""
    folder = _folder_importer(entry, root) if entry.is_dir() else None
    if folder is not None:
        return ParsedEntry(entry, folder.read(entry, root), root=root)
    suffix = entry.suffix.lower()
    refuse_pickle(entry)
    importer = next((i for i in FILE_IMPORTERS if i.claims(entry, root)), None)
    if importer is not None:
        return ParsedEntry(entry, importer.read(entry, root), root=root)
    if suffix not in IGNORED_SUFFIXES and not entry.name.lower().endswith(".civitai.info"):
        return ParsedEntry(entry, skipped=f"{entry.name}: not a recognised checkpoint format")
    return None


def _with_previews(parsed: ParsedEntry | None, root: Path) -> ParsedEntry | None:
    """Records without a preview of their own get the picture beside their weights, if there is one."""
    for record in parsed.records if parsed is not None else []:
        if record.preview_path is None and record.weights_path is not None:
            try:
                record.preview_path = sidecar_preview(record.weights_path, root)
            except OSError as exc:
                log.warning("cannot look for a preview of %s: %s", record.weights_path, exc)
    return parsed


def _parse_entries(entries: list[Path], root: Path, known: KnownFiles | None = None) -> list[ParsedEntry]:
    results: list[ParsedEntry] = []
    claimed: set[Path] = set()
    remaining: list[Path] = []
    real: dict[Path, Path] = {}  # each entry's resolved path, found once
    # metadata first: what cards and Civitai files reference is theirs, not a checkpoint of its own
    for entry in entries:
        parsed = _with_previews(_guarded(entry, partial(_read_metadata, entry, root, real)), root)
        if parsed is None:
            remaining.append(entry)
            continue
        results.append(parsed)
        for record in parsed.records:
            claimed.update(p.resolve() for p in record.claimed_paths)
    for entry in remaining:
        resolved = real[entry]  # _read_metadata resolved every remaining entry
        if claimed and (resolved in claimed or any(parent in claimed for parent in resolved.parents)):
            continue
        if claimed and entry.is_dir() and any(resolved in path.parents for path in claimed):
            continue  # a folder unit whose files a card already imports (a LoRA folder the card's weights point in)
        unchanged = known(entry, resolved, root) if known is not None else None
        if unchanged is not None:
            results.append(unchanged)
            continue
        parsed = _with_previews(_guarded(entry, partial(_read_content, entry, root)), root)
        if parsed is not None:
            results.append(parsed)
    return results
