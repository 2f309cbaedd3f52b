"""Civitai metadata: ``*.civitai.info`` (a model-version object, as the Civitai Helper extension saves it) or
the API's model / model-version JSON, next to the model file it describes."""

from __future__ import annotations

import html
import re
from pathlib import Path

from personalq.repository.base_models import normalise_base_model
from personalq.repository.card import derive_subjects
from personalq.repository.importers.base import (
    ImportedCheckpoint,
    ImportProblem,
    card_from_fields,
    ensure_inside,
    present,
    read_json,
    refuse_pickle,
    text_list,
    typed_field,
)
from personalq.repository.importers.previews import civitai_image, sidecar_preview
from personalq.repository.importers.tag_roles import sort_tags
from personalq.repository.versions import slugify

MODEL_SUFFIXES = (".safetensors", ".ckpt", ".pt", ".bin", ".pth")
_KINDS = {
    "lora": "lora",
    "locon": "lora",
    "lycoris": "lora",
    "dora": "lora",
    "textualinversion": "textual_inversion",
    "checkpoint": "checkpoint",
    "hypernetwork": "lora",
}
_TAG = re.compile(r"<[^>]+>")


def plain_text(markup: str | None, limit: int = 2000) -> str:
    return re.sub(r"\s+", " ", html.unescape(_TAG.sub(" ", markup or ""))).strip()[:limit]


def _text(obj: dict, key: str, where: str) -> str:
    """A free-text field; numbers are accepted as text ("name": 2), anything else is the file's error."""
    return str(typed_field(obj, key, (str, int, float), where, ""))


def _creator(model: dict, where: str) -> str | None:
    creator = typed_field(model, "creator", (dict, str), where)
    if isinstance(creator, dict):  # the API nests it: {"username": ..., "image": ...}
        creator = typed_field(creator, "username", str, where)
    return creator if creator and creator.strip() else None


# the family a Civitai model's versions share: "civitai-<model id>-<slug of its name>"
CIVITAI_FAMILY = re.compile(r"^civitai-(?P<model>\d+)-")


def version_card_fields(version: dict, model: dict, where: str = "Civitai metadata") -> dict:
    """Card fields for one Civitai model version; ``model`` is the parent model object.

    Every field is type-checked where it is read, so a wrong type is an error naming ``where`` and the field.
    """
    model_id = typed_field(version, "modelId", (int, str), where) or typed_field(model, "id", (int, str), where)
    nested = typed_field(version, "model", dict, where, {})
    model_name = _text(model, "name", where) or _text(nested, "name", where) or f"civitai model {model_id}"
    version_name = _text(version, "name", where)
    tags = text_list(model, "tags", where)
    roles = sort_tags(tags, model_name)
    return {
        "id": f"civitai-{typed_field(version, 'id', (int, str), where)}",
        "name": f"{model_name} {version_name}".strip()
        if version_name and version_name not in model_name
        else model_name,
        "family": f"civitai-{model_id}-{slugify(model_name)[:60]}" if model_id else None,
        "version": version_name or None,
        "kind": _KINDS.get(str(typed_field(model, "type", str, where, "lora")).lower().replace(" ", ""), "lora"),
        "base_model": normalise_base_model(typed_field(version, "baseModel", str, where)),
        "creator": _creator(model, where),
        "triggers": text_list(version, "trainedWords", where),
        "tags": tags,
        "subjects": derive_subjects(model_name, roles.subjects, ""),
        "styles": roles.styles,
        "description": plain_text(_text(version, "description", where) or _text(model, "description", where)),
        "created_at": version.get("createdAt") or version.get("publishedAt"),
    }


class CivitaiImporter:
    format = "civitai"

    def claims(self, path: Path, root: Path) -> bool:
        name = path.name.lower()
        if name.endswith(".civitai.info"):
            return True
        if not (path.is_file() and name.endswith(".json")):
            return False
        try:
            document = read_json(path, root)
        except ImportProblem:
            return False
        return isinstance(document, dict) and any(k in document for k in ("trainedWords", "modelVersions", "modelId"))

    def _model_file(self, info: Path, root: Path) -> Path | None:
        """The model file next to ``info`` with the same stem; a link out of the imported folder is refused."""
        stem = info.name[: -len(".civitai.info")] if info.name.lower().endswith(".civitai.info") else info.stem
        for suffix in MODEL_SUFFIXES:
            candidate = info.with_name(stem + suffix)
            if present(candidate):
                ensure_inside(root, candidate, "model file")
                refuse_pickle(candidate)
                return candidate
        return None

    def _preview(self, info: dict, path: Path, weights: Path | None, root: Path) -> Path | None:
        """A picture beside the model file first (Civitai Helper saves images[0] as ``<name>.preview.png``), then
        a local copy of the info's first image (see :mod:`personalq.repository.importers.previews`)."""
        stem = path.name[: -len(".civitai.info")] if path.name.lower().endswith(".civitai.info") else path.stem
        return sidecar_preview(weights or path.with_name(stem + ".safetensors"), root) or civitai_image(
            info, path, root
        )

    def _pairs(self, document: dict, where: str) -> list[tuple[dict, dict]]:
        """(version, model) pairs: every version of an API model object, or the one version of a .civitai.info."""
        versions = typed_field(document, "modelVersions", list, where)
        if versions is None:
            return [(document, typed_field(document, "model", dict, where, {}))]
        pairs = [(v, document) for v in versions if isinstance(v, dict)]
        if not pairs:
            raise ImportProblem(f"{where}: the Civitai model lists no versions")
        return pairs

    def read(self, path: Path, root: Path) -> list[ImportedCheckpoint]:
        document = read_json(path, root)
        if not isinstance(document, dict):
            raise ImportProblem(f"{path.name}: expected a Civitai model or model-version object")
        pairs = self._pairs(document, path.name)
        weights = self._model_file(path, root) if len(pairs) == 1 else None
        preview = self._preview(document, path, weights, root) if len(pairs) == 1 else None
        records = []
        for version, model in pairs:
            if version.get("id") is None:
                raise ImportProblem(f"{path.name}: a model version has no 'id'")
            card = card_from_fields(version_card_fields(version, model, path.name), path.name)
            claimed = (weights,) if weights else ()
            records.append(ImportedCheckpoint(card, self.format, path, weights, preview, True, claimed))
        return records
