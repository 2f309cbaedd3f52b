"""Civitai metadata: ``*.civitai.info`` (a model-version object, as the Civitai Helper extension saves it) or
the API's model / model-version JSON, next to the model file it describes."""

from __future__ import annotations

import html
import re
from pathlib import Path

from personalq.repository.importers.base import (
    ImportedCheckpoint,
    ImportProblem,
    card_from_fields,
    read_json,
    refuse_pickle,
)
from personalq.repository.versions import slugify

MODEL_SUFFIXES = (".safetensors", ".ckpt", ".pt", ".bin", ".pth")
_KINDS = {"lora": "lora", "locon": "lora", "lycoris": "lora", "dora": "lora", "textualinversion": "textual_inversion",
          "checkpoint": "checkpoint", "hypernetwork": "lora"}
_TAG = re.compile(r"<[^>]+>")


def normalise_base_model(name: str | None) -> str:
    """"SD 1.5" -> "sd-1.5", "SDXL 1.0" -> "sdxl", "SD 2.1 768" -> "sd-2.1"."""
    if not name:
        return "sd-1.5"
    text = name.lower()
    if "xl" in text:
        return "sdxl"
    match = re.search(r"(\d)\.(\d)", text)
    return f"sd-{match.group(1)}.{match.group(2)}" if match else slugify(name)


def plain_text(markup: str | None, limit: int = 2000) -> str:
    return re.sub(r"\s+", " ", html.unescape(_TAG.sub(" ", markup or ""))).strip()[:limit]


def version_card_fields(version: dict, model: dict) -> dict:
    """Card fields for one Civitai model version; ``model`` is the parent model object."""
    model_id = version.get("modelId") or model.get("id")
    model_name = model.get("name") or version.get("model", {}).get("name") or f"civitai model {model_id}"
    version_name = version.get("name") or ""
    triggers = []
    for word in version.get("trainedWords") or []:
        word = str(word).strip().strip(",").strip()
        if word and word not in triggers:
            triggers.append(word)
    tags = [t if isinstance(t, str) else t.get("name", "") for t in (model.get("tags") or [])]
    creator = model.get("creator")
    if isinstance(creator, dict):  # the API nests it: {"username": ..., "image": ...}
        creator = creator.get("username")
    return {
        "id": f"civitai-{version.get('id')}",
        "name": f"{model_name} {version_name}".strip() if version_name and version_name not in model_name else model_name,
        "family": f"civitai-{model_id}-{slugify(model_name)[:60]}" if model_id else None,
        "version": version_name or None,
        "kind": _KINDS.get(str(model.get("type", "lora")).lower().replace(" ", ""), "lora"),
        "base_model": normalise_base_model(version.get("baseModel")),
        "creator": creator if isinstance(creator, str) and creator.strip() else None,
        "triggers": triggers,
        "tags": [t for t in tags if t],
        "description": plain_text(version.get("description") or model.get("description")),
        "created_at": version.get("createdAt") or version.get("publishedAt"),
    }


class CivitaiImporter:
    format = "civitai"

    def claims(self, path: Path) -> bool:
        name = path.name.lower()
        if name.endswith(".civitai.info"):
            return True
        if not (path.is_file() and name.endswith(".json")):
            return False
        try:
            document = read_json(path)
        except ImportProblem:
            return False
        return isinstance(document, dict) and any(k in document for k in ("trainedWords", "modelVersions", "modelId"))

    def _model_file(self, info: Path) -> Path | None:
        stem = info.name[: -len(".civitai.info")] if info.name.lower().endswith(".civitai.info") else info.stem
        for suffix in MODEL_SUFFIXES:
            candidate = info.with_name(stem + suffix)
            if candidate.exists():
                refuse_pickle(candidate)
                return candidate
        return None

    def read(self, path: Path, root: Path) -> list[ImportedCheckpoint]:
        document = read_json(path)
        if not isinstance(document, dict):
            raise ImportProblem(f"{path.name}: expected a Civitai model or model-version object")
        if "modelVersions" in document:
            pairs = [(v, document) for v in document["modelVersions"] if isinstance(v, dict)]
        else:
            pairs = [(document, document.get("model") or {})]
        if not pairs:
            raise ImportProblem(f"{path.name}: the Civitai model lists no versions")
        weights = self._model_file(path) if len(pairs) == 1 else None
        records = []
        for version, model in pairs:
            if version.get("id") is None:
                raise ImportProblem(f"{path.name}: a model version has no 'id'")
            card = card_from_fields(version_card_fields(version, model), path.name)
            claimed = (weights,) if weights else ()
            records.append(ImportedCheckpoint(card, self.format, path, weights, None, True, claimed))
        return records
