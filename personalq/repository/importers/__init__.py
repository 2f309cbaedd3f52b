"""Turning paths into checkpoint records: walk, recognise each entry by content, and report per entry.

Folder formats (diffusers pipelines, textual-inversion concepts) are units of their own and are not
descended into. Card files and Civitai metadata run first, because the weights and previews they reference
are then "claimed" and not imported a second time as bare files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from personalq.repository.importers.base import (
    IGNORED_SUFFIXES,
    PICKLE_SUFFIXES,
    ImportedCheckpoint,
    Importer,
    ImportProblem,
    ensure_inside,
    refuse_pickle,
)
from personalq.repository.importers.card_files import CardFileImporter
from personalq.repository.importers.civitai import CivitaiImporter
from personalq.repository.importers.folders import DiffusersFolderImporter, TextualInversionImporter
from personalq.repository.importers.safetensors_file import SafetensorsImporter

FOLDER_IMPORTERS: tuple[Importer, ...] = (DiffusersFolderImporter(), TextualInversionImporter())
METADATA_IMPORTERS: tuple[Importer, ...] = (CivitaiImporter(), CardFileImporter())
FILE_IMPORTERS: tuple[Importer, ...] = (SafetensorsImporter(),)

__all__ = ["ImportedCheckpoint", "ImportProblem", "ParsedEntry", "parse_paths"]


@dataclass
class ParsedEntry:
    """One file or folder of an import and what came of reading it."""

    path: Path
    records: list[ImportedCheckpoint] = field(default_factory=list)
    error: str | None = None
    skipped: str | None = None


def _folder_importer(path: Path) -> Importer | None:
    return next((imp for imp in FOLDER_IMPORTERS if imp.claims(path)), None)


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
            if _folder_importer(sub):
                entries.append(sub)
            elif not sub.is_symlink():
                kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            if name.startswith("."):
                continue
            entries.append(here / name)
    return entries, problems


def _read(importer: Importer, entry: Path, root: Path) -> ParsedEntry:
    try:
        ensure_inside(root, entry, "file")
        return ParsedEntry(entry, records=importer.read(entry, root))
    except ImportProblem as exc:
        return ParsedEntry(entry, error=str(exc))
    except OSError as exc:
        return ParsedEntry(entry, error=f"cannot read {entry.name}: {exc.strerror or exc}")


def parse_paths(paths: list[Path]) -> list[ParsedEntry]:
    """Read every importable thing under ``paths``; never raises for a bad file."""
    results: list[ParsedEntry] = []
    for given in paths:
        given = Path(given)
        if not given.exists() and not given.is_symlink():
            results.append(ParsedEntry(given, error=f"{given} does not exist"))
            continue
        root = given.resolve() if given.is_dir() and not given.is_symlink() else given.parent.resolve()
        if given.is_dir() and _folder_importer(given) is None:
            entries, problems = _walk(given)
            results.extend(problems)
        else:
            entries = [given]
        results.extend(_parse_entries(entries, root))
    return results


def _parse_entries(entries: list[Path], root: Path) -> list[ParsedEntry]:
    results: list[ParsedEntry] = []
    claimed: set[Path] = set()
    remaining: list[Path] = []
    # metadata first: what cards and Civitai files reference is theirs, not a checkpoint of its own
    for entry in entries:
        importer = None if entry.is_dir() else next((i for i in METADATA_IMPORTERS if i.claims(entry)), None)
        if importer is None:
            remaining.append(entry)
            continue
        parsed = _read(importer, entry, root)
        results.append(parsed)
        for record in parsed.records:
            claimed.update(p.resolve() for p in record.claimed_paths)
    for entry in remaining:
        try:
            resolved = entry.resolve()
        except OSError:
            resolved = entry
        if resolved in claimed or any(parent in claimed for parent in resolved.parents):
            continue
        folder = _folder_importer(entry) if entry.is_dir() else None
        if folder is not None:
            results.append(_read(folder, entry, root))
            continue
        suffix = entry.suffix.lower()
        if suffix in PICKLE_SUFFIXES:
            try:
                refuse_pickle(entry)
            except ImportProblem as exc:
                results.append(ParsedEntry(entry, error=str(exc)))
            continue
        importer = next((i for i in FILE_IMPORTERS if i.claims(entry)), None)
        if importer is not None:
            results.append(_read(importer, entry, root))
        elif suffix not in IGNORED_SUFFIXES and not entry.name.lower().endswith(".civitai.info"):
            results.append(ParsedEntry(entry, skipped=f"{entry.name}: not a recognised checkpoint format"))
    return results
