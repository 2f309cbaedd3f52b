"""Identical weights are one checkpoint: which path of a set of copies is the checkpoint, and how copies are listed.

The rule for "the first file imported keeps its id": a file imported earlier keeps the checkpoint whatever comes
later. Within one import, copies of the same bytes are ordered so the original comes first: a name that looks like
a copy ("x (1)", "x copy", "x - Copy", "x_copy2") goes after one that does not, then the older file (``cp`` gives a
copy a new modification time), then the path. The rest become locations of that checkpoint ("duplicate of ID").
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

_COPY_NAME = re.compile(r"(?:\s*\(\d+\)|[\s_-]+copy(?:[\s_-]*\(?\d+\)?)?)$", re.I)


@dataclass
class Duplicate:
    """A checkpoint with the other paths that hold its exact weights."""

    checkpoint_id: str
    name: str
    weights_path: str | None
    copies: list[str] = field(default_factory=list)


def looks_like_a_copy(path: Path) -> bool:
    """``mochiCorgi_v1 (1).safetensors``, ``x copy.safetensors``, ``x - Copy.safetensors``: names file managers
    and browsers give a second copy."""
    stem = path.name.split(".")[0] if path.is_dir() else path.stem
    return bool(_COPY_NAME.search(stem))


def _mtime_ns(path: Path) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def primary_first(staged: list) -> list:
    """``staged`` (entry, record, digest) with, among records sharing a digest, the original first; other records
    keep their order (a stable sort on a key that only copies change)."""
    groups: dict[str, list[int]] = {}
    for index, (_, record, digest) in enumerate(staged):
        if digest and record.weights_path is not None:
            groups.setdefault(digest, []).append(index)
    demoted: set[int] = set()
    for members in groups.values():
        if len(members) < 2:
            continue
        paths = {i: staged[i][1].weights_path for i in members}
        if len(set(paths.values())) < 2:
            continue  # several records of one file (a Civitai file's versions): not copies
        primary = min(members, key=lambda i: (looks_like_a_copy(paths[i]), _mtime_ns(paths[i]), str(paths[i])))
        demoted.update(i for i in members if paths[i] != paths[primary])
    if not demoted:
        return staged
    return [item for i, item in enumerate(staged) if i not in demoted] + [
        item for i, item in enumerate(staged) if i in demoted
    ]
