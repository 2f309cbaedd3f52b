"""Card files: YAML or JSON documents in the schema of DESIGN.md."""

from __future__ import annotations

from pathlib import Path

import yaml

from personalq.repository.importers.base import (
    MAX_CARD_BYTES,
    ImportedCheckpoint,
    ImportProblem,
    card_from_fields,
    read_bounded,
    resolve_reference,
)

CARD_SUFFIXES = (".yaml", ".yml", ".json")
_NOT_CARD_KEYS = ("trainedWords", "modelVersions", "modelId", "_class_name")


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: 10x faster on large imports


def _safe_load_without_aliases(text: str) -> object:
    """Safe YAML that refuses anchors/aliases, so a hostile card cannot expand into gigabytes ("billion laughs").

    Aliases are rejected on the event stream (parsed in C) before anything is constructed.
    """
    if "*" in text or "&" in text:
        for event in yaml.parse(text, Loader=_LOADER):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise yaml.constructor.ConstructorError(None, None, "YAML aliases are not allowed in cards", event.start_mark)
    return yaml.load(text, Loader=_LOADER)


def load_document(path: Path) -> object:
    raw = read_bounded(path, MAX_CARD_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportProblem(f"{path.name} is not UTF-8 text") from exc
    try:
        return _safe_load_without_aliases(text)  # JSON is a subset of YAML 1.2 for our purposes
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        kind = "JSON" if path.suffix.lower() == ".json" else "YAML"
        raise ImportProblem(f"malformed {kind} in {path.name}{where}: {getattr(exc, 'problem', exc)}") from exc


class CardFileImporter:
    format = "card"

    def claims(self, path: Path) -> bool:
        if not (path.is_file() and path.suffix.lower() in CARD_SUFFIXES):
            return False
        if path.suffix.lower() in (".yaml", ".yml"):
            return True  # YAML is only ever a card here, so parse errors are reported as card errors
        try:
            document = load_document(path)
        except ImportProblem:
            return True
        return isinstance(document, dict) and "id" in document and not any(k in document for k in _NOT_CARD_KEYS)

    def read(self, path: Path, root: Path) -> list[ImportedCheckpoint]:
        document = load_document(path)
        if not isinstance(document, dict):
            raise ImportProblem(f"{path.name}: a card must be a mapping of fields, got {type(document).__name__}")
        card = card_from_fields(document, path.name)
        weights = resolve_reference(root, path.parent, card.weights, "weights") if card.weights else None
        preview = resolve_reference(root, path.parent, card.preview, "preview") if card.preview else None
        claimed = tuple(p for p in (weights, preview) if p is not None)
        return [ImportedCheckpoint(card, self.format, path, weights, preview, True, claimed)]
