"""What every importer shares: the imported record, the per-file error, and defensive file reading.

Importers read untrusted files. Everything here is bounded: headers and cards are read up to a size limit,
weights are hashed in chunks and never loaded, and every referenced path must stay inside the imported root.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from personalq.repository.card import Card

MAX_CARD_BYTES = 1 << 20
MAX_JSON_BYTES = 8 << 20
MAX_SAFETENSORS_HEADER = 64 << 20
PICKLE_SUFFIXES = frozenset({".ckpt", ".bin", ".pt", ".pth", ".pkl", ".pickle"})
IGNORED_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".webp", ".gif", ".md", ".txt", ".gitattributes", ".gitignore"})


class ImportProblem(Exception):
    """A file that cannot be imported; the message is shown to the person as-is."""


@dataclass
class ImportedCheckpoint:
    card: Card
    source_format: str
    source_path: Path
    weights_path: Path | None = None
    preview_path: Path | None = None
    id_is_explicit: bool = True  # False when the importer made the id up from a file name
    claimed_paths: tuple[Path, ...] = ()  # files this record accounts for (weights, previews, siblings)


class Importer(Protocol):
    format: str

    def claims(self, path: Path) -> bool:
        """True when ``path`` is in this importer's format, judged by content, not by name alone."""

    def read(self, path: Path, root: Path) -> list[ImportedCheckpoint]:
        """Parse ``path``; raises :class:`ImportProblem` with a message for a person."""


def ensure_inside(root: Path, path: Path, what: str = "path") -> Path:
    """Resolve ``path`` (symlinks included) and refuse it when it leaves ``root``."""
    resolved = path.resolve()
    root = root.resolve()
    if resolved != root and root not in resolved.parents:
        raise ImportProblem(f"{what} {path} leads outside the imported folder {root}; refusing it")
    return resolved


def resolve_reference(root: Path, base_dir: Path, reference: str, what: str) -> Path:
    ref = Path(reference)
    if ref.is_absolute():
        raise ImportProblem(f"{what} must be a path relative to the card, got absolute path {reference!r}")
    path = ensure_inside(root, base_dir / ref, what)
    if not path.exists():
        raise ImportProblem(f"{what} {reference!r} does not exist next to the card")
    return path


def read_bounded(path: Path, limit: int) -> bytes:
    size = path.stat().st_size
    if size > limit:
        raise ImportProblem(f"{path.name} is {size:,} bytes, more than the {limit:,} allowed for this kind of file")
    with path.open("rb") as handle:
        return handle.read(limit + 1)[:limit]


def read_json(path: Path, limit: int = MAX_JSON_BYTES) -> object:
    try:
        return json.loads(read_bounded(path, limit).decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ImportProblem(f"{path.name} is not UTF-8 text: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise ImportProblem(f"malformed JSON in {path.name}: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc


def refuse_pickle(path: Path) -> None:
    """Pickle checkpoints execute code when loaded; we never open them."""
    if path.suffix.lower() in PICKLE_SUFFIXES:
        raise ImportProblem(
            f"{path.name} is a pickle checkpoint ({path.suffix}), which can run arbitrary code when loaded; "
            "convert it to .safetensors (for example with diffusers' conversion scripts) and import that"
        )


def read_safetensors_header(path: Path) -> dict:
    """The JSON header of a safetensors file, validated against the file size; tensor data is never read."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        prefix = handle.read(8)
        if len(prefix) < 8:
            raise ImportProblem(f"{path.name}: truncated safetensors file ({size} bytes, no header length)")
        if prefix[:2] == b"PK" or prefix[:1] == b"\x80":
            raise ImportProblem(f"{path.name} is a pickle/zip checkpoint renamed to .safetensors; refusing to load it")
        (length,) = struct.unpack("<Q", prefix)
        if length == 0 or length > MAX_SAFETENSORS_HEADER or 8 + length > size:
            raise ImportProblem(f"{path.name}: corrupt safetensors header (declared length {length:,}, file size {size:,})")
        raw = handle.read(length)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ImportProblem(f"{path.name}: corrupt safetensors header ({exc})") from exc
    if not isinstance(header, dict):
        raise ImportProblem(f"{path.name}: corrupt safetensors header (not a JSON object)")
    data_size = size - 8 - length
    for name, info in header.items():
        if name == "__metadata__":
            continue
        offsets = info.get("data_offsets") if isinstance(info, dict) else None
        if not (isinstance(offsets, list) and len(offsets) == 2 and 0 <= offsets[0] <= offsets[1] <= data_size):
            raise ImportProblem(f"{path.name}: tensor {name!r} points outside the file (truncated or corrupt)")
    return header


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def weights_digest(path: Path) -> str:
    """SHA-256 of a weights file, or of a folder's safetensors files (names and contents, sorted)."""
    if path.is_file():
        return sha256_file(path)
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*.safetensors") if p.is_file())
    if not files:
        raise ImportProblem(f"{path.name} holds no .safetensors weights")
    for file in files:
        digest.update(str(file.relative_to(path)).encode())
        digest.update(sha256_file(file).encode())
    return digest.hexdigest()


def mtime(path: Path) -> dt.datetime:
    return dt.datetime.fromtimestamp(os.stat(path).st_mtime, tz=dt.timezone.utc).replace(tzinfo=None)


def card_from_fields(fields: dict, what: str) -> Card:
    """Validate a field mapping into a :class:`Card`, turning pydantic errors into one readable line."""
    from pydantic import ValidationError

    try:
        return Card.model_validate(fields)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            where = ".".join(str(p) for p in error["loc"]) or "card"
            problems.append(f"missing required field '{where}'" if error["type"] == "missing" else f"{where}: {error['msg']}")
        raise ImportProblem(f"{what}: " + "; ".join(problems)) from exc
