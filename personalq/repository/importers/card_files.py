"""Card files: YAML or JSON documents in the schema of DESIGN.md."""

from __future__ import annotations

from pathlib import Path

from personalq.repository.importers.base import (
    MAX_CARD_BYTES,
    ImportedCheckpoint,
    ImportProblem,
    card_from_fields,
    parse_yaml,
    read_bounded,
    resolve_reference,
)

CARD_SUFFIXES = (".yaml", ".yml", ".json")
_NOT_CARD_KEYS = ("trainedWords", "modelVersions", "modelId", "_class_name")


def load_document(path: Path, root: Path) -> object:
    raw = read_bounded(path, MAX_CARD_BYTES, root)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportProblem(f"{path.name} is not UTF-8 text") from exc
    kind = "JSON" if path.suffix.lower() == ".json" else "YAML"
    return parse_yaml(text, path.name, kind)  # JSON is a subset of YAML 1.2 for our purposes


class CardFileImporter:
    format = "card"

    def claims(self, path: Path, root: Path) -> bool:
        if not (path.is_file() and path.suffix.lower() in CARD_SUFFIXES):
            return False
        if path.suffix.lower() in (".yaml", ".yml"):
            return True  # YAML is only ever a card here, so parse errors are reported as card errors
        try:
            document = load_document(path, root)
        except ImportProblem:
            return True
        return isinstance(document, dict) and "id" in document and not any(k in document for k in _NOT_CARD_KEYS)

    def read(self, path: Path, root: Path) -> list[ImportedCheckpoint]:
        document = load_document(path, root)
        if not isinstance(document, dict):
            raise ImportProblem(f"{path.name}: a card must be a mapping of fields, got {type(document).__name__}")
        card = card_from_fields(document, path.name)
        weights = resolve_reference(root, path.parent, card.weights, "weights") if card.weights else None
        preview = resolve_reference(root, path.parent, card.preview, "preview") if card.preview else None
        claimed = tuple(p for p in (weights, preview) if p is not None)
        return [ImportedCheckpoint(card, self.format, path, weights, preview, True, claimed)]
