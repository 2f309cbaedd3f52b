"""Bare ``.safetensors`` model files, with kohya-ss training metadata when the header carries it.

Only the header is read. kohya-ss writes ``ss_*`` keys (output name, tag frequencies, training times, base
model); the newer ``modelspec.*`` keys (title, date, description, tags, trigger phrase) take precedence.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from personalq.repository.base_models import DEFAULT_BASE
from personalq.repository.card import derive_subjects
from personalq.repository.importers.architecture import BASE_KEY_OF, tensors_architecture
from personalq.repository.importers.base import (
    ImportedCheckpoint,
    ImportProblem,
    card_from_fields,
    mtime,
    read_safetensors_header,
)
from personalq.repository.importers.naming import readable_name
from personalq.repository.importers.tag_roles import sort_tags
from personalq.repository.versions import family_stem, parse_version, slugify


def _timestamp(value: object) -> dt.datetime | None:
    """A kohya training time (Unix seconds, written as a string), or None when it is not a usable date."""
    try:
        seconds = float(value)  # kohya writes Unix seconds as strings
        return dt.datetime.fromtimestamp(seconds, tz=dt.timezone.utc).replace(tzinfo=None)
    except (TypeError, ValueError, OverflowError, OSError):  # not a number, NaN, or out of the calendar's range
        return None


def _base_model(meta: dict, shapes: dict[str, list[int]]) -> str:
    """The base kohya's metadata names; else the one the tensor shapes fit (a file trained without metadata, an
    embedding); SD 1.5 when neither tells."""
    text = " ".join(
        str(meta.get(k, "")) for k in ("modelspec.architecture", "ss_base_model_version", "ss_sd_model_name")
    ).lower()
    if "xl" in text:
        return "sdxl"
    if "v2" in text or "2-1" in text or "2.1" in text or "768-v" in text:
        return "sd-2.1"
    return BASE_KEY_OF.get(tensors_architecture(shapes) or "", DEFAULT_BASE)


def _tag_frequency(meta: dict) -> list[tuple[str, int]]:
    """Caption tags by how often kohya saw them, most frequent first; counts that are not whole numbers are
    skipped (the tags are hints for triggers, not worth refusing a model over)."""
    try:
        folders = json.loads(meta.get("ss_tag_frequency") or "{}")
    except (ValueError, RecursionError):  # malformed, 4,300-digit numbers, or nested too deep
        return []
    totals: dict[str, int] = {}
    for tags in folders.values() if isinstance(folders, dict) else []:
        for tag, count in tags.items() if isinstance(tags, dict) else []:
            tag = tag.strip()
            if tag and isinstance(count, int) and not isinstance(count, bool):
                totals[tag] = totals.get(tag, 0) + count
    return sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))


def _metadata(header: dict, path: Path) -> dict[str, str]:
    """``__metadata__``: the safetensors format allows only text values, and the importer relies on that."""
    meta = header.get("__metadata__") or {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise ImportProblem(f"{path.name}: __metadata__ must be a JSON object of strings")
    return meta


def _kind(tensor_names: list[str], meta: dict) -> str:
    joined = " ".join(tensor_names[:200])
    if "lora_" in joined or ".lora_down" in joined or "lora_A" in joined or meta.get("ss_network_module"):
        return "lora"
    if (
        any(n in ("emb_params", "string_to_param", "clip_l", "clip_g") for n in tensor_names)
        and len(tensor_names) <= 4
    ):
        return "textual_inversion"
    return "checkpoint"


class SafetensorsImporter:
    format = "kohya"

    def claims(self, path: Path, root: Path) -> bool:
        return path.is_file() and path.suffix.lower() == ".safetensors"

    def read(self, path: Path, root: Path) -> list[ImportedCheckpoint]:
        header = read_safetensors_header(path, root)
        meta = _metadata(header, path)
        shapes = {k: v.get("shape", []) for k, v in header.items() if k != "__metadata__" and isinstance(v, dict)}
        tensors = list(shapes)
        if not tensors:
            raise ImportProblem(f"{path.name}: the safetensors file holds no tensors")
        output_name = meta.get("ss_output_name") or path.stem
        readable, output_version = readable_name(output_name)
        title = meta.get("modelspec.title") or readable
        frequencies = _tag_frequency(meta)
        trigger = meta.get("modelspec.trigger_phrase")
        triggers = (
            [t.strip() for t in str(trigger).split(",") if t.strip()] if trigger else [t for t, _ in frequencies[:1]]
        )
        kind = _kind(tensors, meta)
        if kind == "textual_inversion" and not triggers:
            triggers = [path.stem]  # the WebUI calls an embedding by its file name
        tags = [t.strip() for t in str(meta.get("modelspec.tags", "")).split(",") if t.strip()]
        tags += [t for t, _ in frequencies[1:9] if t not in tags]
        roles = sort_tags([*[t for t, _ in frequencies[:9]], *tags], title)
        trigger_words = {t.lower() for t in triggers}
        created = (
            meta.get("modelspec.date")
            or _timestamp(meta.get("ss_training_started_at"))
            or _timestamp(meta.get("ss_training_finished_at"))
            or mtime(path)
        )
        version = parse_version(path.stem)
        fields = {
            "id": slugify(path.stem),
            "name": title,
            "family": family_stem(output_name),
            "version": version.short if version.number is not None else output_version,
            "kind": kind,
            "base_model": _base_model(meta, shapes),
            "creator": meta.get("modelspec.author") or None,
            "triggers": triggers,
            "tags": tags,
            "subjects": derive_subjects(title, [s for s in roles.subjects if s not in trigger_words], ""),
            "styles": [s for s in roles.styles if s not in trigger_words] or roles.styles,
            "description": str(meta.get("modelspec.description", ""))[:2000],
            "created_at": created,
        }
        card = card_from_fields(fields, path.name)
        return [ImportedCheckpoint(card, self.format, path, path, None, False, (path,))]
