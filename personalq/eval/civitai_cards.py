"""Card files from the Civitai metadata dump (one JSON model per line, as in shared/data), for benchmarks."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from tqdm import tqdm

from personalq.repository.importers.civitai import version_card_fields


def api_model(record: dict) -> dict:
    """The dump's field names mapped back to the Civitai API's model object."""
    return {
        "id": record["civitai_model_id"],
        "name": record["name"],
        "type": record.get("type", "LORA"),
        "tags": record.get("tags") or [],
        "creator": record.get("creator"),
        "description": record.get("description") or "",
        "modelVersions": record.get("versions") or [],
    }


def read_models(jsonl: Path) -> list[dict]:
    with Path(jsonl).open(encoding="utf-8") as handle:
        return [api_model(json.loads(line)) for line in handle if line.strip()]


def write_cards(jsonl: Path, out: Path) -> int:
    """One YAML card per model version; returns how many were written."""
    out.mkdir(parents=True, exist_ok=True)
    written = 0
    for model in tqdm(read_models(jsonl), desc="writing cards", unit=" models"):
        for version in model["modelVersions"]:
            fields = version_card_fields({**version, "modelId": model["id"]}, model)
            (out / f"{fields['id']}.yaml").write_text(
                yaml.safe_dump(fields, sort_keys=False, allow_unicode=True), encoding="utf-8"
            )
            written += 1
    return written
