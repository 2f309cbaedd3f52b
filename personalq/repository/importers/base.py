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

import yaml

from personalq.repository.card import Card
from personalq.repository.safe_yaml import load_yaml

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

    def claims(self, path: Path, root: Path) -> bool:
        """True when ``path`` is in this importer's format, judged by content, not by name alone."""

    def read(self, path: Path, root: Path) -> list[ImportedCheckpoint]:
        """Parse ``path``, reading nothing that resolves outside ``root``; raises :class:`ImportProblem` with
        a message for a person."""


def ensure_inside(root: Path, path: Path, what: str = "path") -> Path:
    """Resolve ``path`` (symlinks included) and refuse it when it leaves ``root``."""
    try:
        resolved = path.resolve()
    except (
        OSError,
        RuntimeError,
        ValueError,
    ) as exc:  # 3.11 raises RuntimeError for a symlink loop, ValueError for NUL
        raise ImportProblem(f"{what} {path} cannot be resolved: {exc}") from exc
    if _within(resolved, root):
        return resolved  # the common case: the caller passed a resolved root, and the path is in it
    root = root.resolve()
    if not _within(resolved, root):
        raise ImportProblem(f"{what} {path} leads outside the imported folder {root}; refusing it")
    return resolved


def _within(resolved: Path, root: Path) -> bool:
    """``resolved`` (a real path) is ``root`` or lies under it, compared as text: a real path's leading part names
    real folders only, so when ``root`` is that text it is its own real path."""
    text, folder = str(resolved), str(root).rstrip(os.sep)
    return text == folder or text.startswith(folder + os.sep) or (not folder and text.startswith(os.sep))


def resolve_reference(root: Path, base_dir: Path, reference: str, what: str) -> Path:
    ref = Path(reference)
    if ref.is_absolute():
        raise ImportProblem(f"{what} must be a path relative to the card, got absolute path {reference!r}")
    path = ensure_inside(root, base_dir / ref, what)
    if not path.exists():
        raise ImportProblem(f"{what} {reference!r} does not exist next to the card")
    return path


def present(path: Path) -> bool:
    """A file, or a link of any kind: a link is then checked (and refused when it leaves the imported folder)
    rather than passed over as absent because its target is missing or a folder."""
    return path.is_file() or path.is_symlink()


def read_bounded(path: Path, limit: int, root: Path) -> bytes:
    """The bytes of ``path``, refused when it is bigger than ``limit`` or resolves outside ``root``.

    Every read of an imported file goes through here or :func:`read_safetensors_header`, so a link inside a
    folder (a ``token_identifier.txt`` pointing at someone's private file) is refused before it is opened.
    """
    resolved = ensure_inside(root, path, "file")
    size = resolved.stat().st_size
    if size > limit:
        raise ImportProblem(f"{path.name} is {size:,} bytes, more than the {limit:,} allowed for this kind of file")
    with resolved.open("rb") as handle:
        return handle.read(limit + 1)[:limit]


def parse_json(raw: bytes, what: str) -> object:
    """Parse untrusted JSON; every way it fails on hostile input is an :class:`ImportProblem` naming ``what``.

    ``json.loads`` raises more than JSONDecodeError: RecursionError for deep nesting, ValueError for integers
    of more than 4,300 digits.
    """
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ImportProblem(f"{what} is not UTF-8 text: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise ImportProblem(f"malformed JSON in {what}: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    except RecursionError as exc:
        raise ImportProblem(f"{what} is nested too deeply to read") from exc
    except ValueError as exc:
        raise ImportProblem(f"malformed JSON in {what}: {exc}") from exc


def read_json(path: Path, root: Path, limit: int = MAX_JSON_BYTES) -> object:
    return parse_json(read_bounded(path, limit, root), path.name)


def parse_yaml(text: str, what: str, kind: str = "YAML") -> object:
    """Untrusted YAML through the package's safe loader, its errors turned into one line naming ``what``."""
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise ImportProblem(f"malformed {kind} in {what}{where}: {getattr(exc, 'problem', None) or exc}") from exc


_TYPE_NAMES = {
    str: "text",
    int: "a number",
    float: "a number",
    list: "a list",
    dict: "an object",
    bool: "true or false",
}


def typed_field(
    document: dict, key: str, kinds: type | tuple[type, ...], where: str, default: object = None
) -> object:
    """``document[key]`` checked for type; ``default`` when it is absent or null.

    Untrusted JSON and YAML put anything anywhere. Checking where a field is read turns ``"tags": 5`` into an
    error naming the file and the field, instead of a TypeError deep inside an importer.
    """
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    value = document.get(key)
    if value is None:
        return default
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        expected = " or ".join(dict.fromkeys(_TYPE_NAMES.get(k, k.__name__) for k in kinds))
        raise ImportProblem(f"{where}: '{key}' should be {expected}, got {type(value).__name__} {_preview(value)}")
    return value


def text_list(document: dict, key: str, where: str) -> list[str]:
    """A list of words (trained words, tags); items may be numbers or ``{"name": ...}`` objects (Civitai's API
    writes tags that way), anything else is the file's error."""
    words = []
    for item in typed_field(document, key, list, where, []):
        name = item.get("name") if isinstance(item, dict) else item
        if not isinstance(name, (str, int, float)) or isinstance(name, bool):
            raise ImportProblem(f"{where}: '{key}' should list text, found {type(item).__name__} {_preview(item)}")
        words.append(str(name).strip().strip(",").strip())
    return list(dict.fromkeys(w for w in words if w))


def _preview(value: object, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def refuse_pickle(path: Path) -> None:
    """Pickle checkpoints execute code when loaded; we never open them."""
    if path.suffix.lower() in PICKLE_SUFFIXES:
        raise ImportProblem(
            f"{path.name} is a pickle checkpoint ({path.suffix}), which can run arbitrary code when loaded; "
            "convert it to .safetensors (for example with diffusers' conversion scripts) and import that"
        )


def read_safetensors_header(path: Path, root: Path) -> dict:
    """The JSON header of a safetensors file, validated against the file size; tensor data is never read."""
    resolved = ensure_inside(root, path, "file")
    size = resolved.stat().st_size
    with resolved.open("rb") as handle:
        prefix = handle.read(9)
        if len(prefix) < 8:
            raise ImportProblem(f"{path.name}: truncated safetensors file ({size} bytes, no header length)")
        (length,) = struct.unpack("<Q", prefix[:8])
        # a header length whose low byte is 0x80 (or whose two low bytes read "PK") is a safetensors file all the
        # same: only a file that is not one (no JSON header after the length) is taken for a renamed pickle or zip
        if (prefix[:2] == b"PK" or prefix[:1] == b"\x80") and prefix[8:9] != b"{":
            raise ImportProblem(f"{path.name} is a pickle/zip checkpoint renamed to .safetensors; refusing to load it")
        if length == 0 or length > MAX_SAFETENSORS_HEADER or 8 + length > size:
            raise ImportProblem(
                f"{path.name}: corrupt safetensors header (declared length {length:,}, file size {size:,})"
            )
        raw = prefix[8:] + handle.read(length - len(prefix[8:]))
    try:
        header = parse_json(raw, "the header")
    except ImportProblem as exc:
        raise ImportProblem(f"{path.name}: corrupt safetensors header ({exc})") from exc
    if not isinstance(header, dict):
        raise ImportProblem(f"{path.name}: corrupt safetensors header (not a JSON object)")
    data_size = size - 8 - length
    for name, info in header.items():
        if name != "__metadata__" and not _offsets_fit(info, data_size):
            raise ImportProblem(f"{path.name}: tensor {name!r} points outside the file (truncated or corrupt)")
    return header


def _offsets_fit(info: object, data_size: int) -> bool:
    """Whether a tensor entry's ``data_offsets`` are two whole numbers inside the data section."""
    offsets = info.get("data_offsets") if isinstance(info, dict) else None
    if not (isinstance(offsets, list) and len(offsets) == 2):
        return False
    if not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets):
        return False
    return 0 <= offsets[0] <= offsets[1] <= data_size


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def weights_digest(path: Path, root: Path | None = None) -> str:
    """SHA-256 of a weights file, or of a folder's safetensors files (names and contents, sorted).

    During an import ``root`` is the imported folder and each file is checked against it first: a folder's
    weights may be links, and a link out of the imported folder is refused rather than hashed. Serving hashes
    weights the repository already holds, with no root. An import hashes through
    :mod:`personalq.repository.importers.hashing` instead (the stat cache and a worker pool), with the same
    :func:`weights_files` and :func:`combine_digests`.
    """
    files = weights_files(path, root)
    return combine_digests(files, {resolved: sha256_file(resolved) for _, resolved in files})


WeightsFile = tuple[str | None, Path]  # (its name inside a weights folder, or None for a single file; resolved path)


def weights_files(path: Path, root: Path | None = None) -> list[WeightsFile]:
    """The files a weights digest covers, each resolved (and refused when it leaves ``root``)."""
    if path.is_file():
        return [(None, _inside(root, path))]
    files = sorted(p for p in path.rglob("*.safetensors") if p.is_file())
    if not files:
        raise ImportProblem(f"{path.name} holds no .safetensors weights")
    return [(str(file.relative_to(path)), _inside(root, file)) for file in files]


def combine_digests(files: list[WeightsFile], digests: dict[Path, str]) -> str:
    """A single file's own SHA-256; for a folder, the hash of each file's name inside it and its digest."""
    if len(files) == 1 and files[0][0] is None:
        return digests[files[0][1]]
    digest = hashlib.sha256()
    for name, resolved in files:
        digest.update(str(name).encode())
        digest.update(digests[resolved].encode())
    return digest.hexdigest()


def _inside(root: Path | None, path: Path) -> Path:
    return path.resolve() if root is None else ensure_inside(root, path, "weights file")


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
            problems.append(
                f"missing required field '{where}'" if error["type"] == "missing" else f"{where}: {error['msg']}"
            )
        raise ImportProblem(f"{what}: " + "; ".join(problems)) from exc
