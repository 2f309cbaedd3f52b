"""Folder formats: diffusers DreamBooth pipelines, LoRA folders (diffusers' and PEFT's), textual-inversion
concept folders."""

from __future__ import annotations

import re
from pathlib import Path

from personalq.repository.base_models import DEFAULT_BASE, normalise_base_model
from personalq.repository.importers.architecture import BASE_KEY_OF, weights_architecture
from personalq.repository.importers.base import (
    MAX_CARD_BYTES,
    ImportedCheckpoint,
    ImportProblem,
    card_from_fields,
    mtime,
    parse_yaml,
    present,
    read_bounded,
    read_json,
    read_safetensors_header,
    refuse_pickle,
    text_list,
    typed_field,
)
from personalq.repository.versions import family_stem, parse_version, slugify

_PROMPT_LEAD = re.compile(
    r"(?i)^\s*(?:a|an|the)?\s*(?:photo|picture|image|painting|drawing|render)?\s*(?:of)?\s*(?:a|an|the)?\s+"
)
_GENERIC_TAGS = ("dreambooth", "diffusers", "text-to-image", "stable-diffusion")


def model_card_front_matter(folder: Path, root: Path) -> dict:
    """The YAML front matter of the folder's Hugging Face model card (README.md), or {} when there is none.

    A front matter that cannot be read safely (malformed, aliased, not a mapping) is the folder's error rather
    than ignored: its instance prompt is what gives a DreamBooth model its trigger.
    """
    readme = folder / "README.md"
    if not present(readme):
        return {}
    text = read_bounded(readme, MAX_CARD_BYTES, root).decode("utf-8", errors="replace")
    match = re.match(r"^---\s*\n(.*?)\n---", text, re.S)
    if not match:
        return {}
    where = f"{folder.name}/README.md"
    data = parse_yaml(match.group(1), where)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ImportProblem(f"{where}: the front matter must be a mapping of fields, got {type(data).__name__}")
    return data


def split_instance_prompt(prompt: str) -> tuple[list[str], list[str]]:
    """``"a photo of sks dog"`` -> (triggers ``["sks"]``, subjects ``["dog"]``): DreamBooth's rare token + class."""
    words = _PROMPT_LEAD.sub("", " " + prompt.strip()).split()
    if not words:
        return [], []
    if len(words) == 1:
        return words, []
    return [" ".join(words[:-1])], [words[-1]]


def folder_base(meta: dict, folder: Path) -> str:
    """The base a model card's front matter names (a Hub id, or a list of them); else the one the weights' shapes
    fit; SD 1.5 when neither tells."""
    base = meta.get("base_model")
    if base:
        return normalise_base_model(" ".join(map(str, base)) if isinstance(base, list) else str(base))
    return BASE_KEY_OF.get(weights_architecture(folder) or "", DEFAULT_BASE)


def latest_mtime(folder: Path):
    return max(mtime(p) for p in [folder, *folder.rglob("*")] if not p.is_symlink())


def trained_folder_fields(
    path: Path, meta: dict, kind: str, label: str, bare: str, dropped_tags: tuple[str, ...] = ()
) -> dict:
    """Card fields of a folder a diffusers training script wrote (DreamBooth pipeline, LoRA): the folder name
    gives id, name, family and version; the model card's instance prompt the trigger and subject, its tags the
    tags (less the scripts' generic ones); ``label`` (with the prompt) or ``bare`` is the description."""
    where = f"{path.name}/README.md"
    prompt = str(typed_field(meta, "instance_prompt", (str, int, float), where, ""))
    triggers, subjects = split_instance_prompt(prompt) if prompt else ([], [])
    tags = [meta["tags"]] if isinstance(meta.get("tags"), str) else text_list(meta, "tags", where)
    version = parse_version(path.name)
    return {
        "id": slugify(path.name),
        "name": path.name.replace("_", " ").replace("-", " "),
        "family": family_stem(path.name),
        "version": version.short if version.number is not None else None,
        "kind": kind,
        "base_model": folder_base(meta, path),
        "triggers": triggers,
        "subjects": subjects,
        "tags": [t for t in tags if t not in (*_GENERIC_TAGS, *dropped_tags)],
        "description": f"{label}; instance prompt: {prompt}" if prompt else bare,
        "created_at": latest_mtime(path),
    }


class DiffusersFolderImporter:
    format = "diffusers"

    def claims(self, path: Path, root: Path) -> bool:
        return path.is_dir() and (path / "model_index.json").is_file()

    def read(self, path: Path, root: Path) -> list[ImportedCheckpoint]:
        index = read_json(path / "model_index.json", root)
        if not isinstance(index, dict) or "Pipeline" not in str(index.get("_class_name", "")):
            raise ImportProblem(f"{path.name}/model_index.json does not describe a diffusers pipeline")
        unet = path / "unet"
        weights = sorted(unet.glob("*.safetensors")) if unet.is_dir() else []
        if not weights:
            pickles = sorted(unet.glob("*.bin")) if unet.is_dir() else []
            if pickles:
                refuse_pickle(pickles[0])
            raise ImportProblem(f"{path.name}: no unet/*.safetensors weights in the pipeline folder")
        for file in weights:
            read_safetensors_header(file, root)
        meta = model_card_front_matter(path, root)
        fields = trained_folder_fields(path, meta, "dreambooth", "DreamBooth fine-tune", "DreamBooth fine-tune")
        card = card_from_fields(fields, path.name)
        return [ImportedCheckpoint(card, self.format, path, path, None, False, (path,))]


def _small_text(path: Path, root: Path) -> str:
    return read_bounded(path, 1024, root).decode("utf-8", errors="replace").strip()


class TextualInversionImporter:
    format = "textual_inversion"

    def claims(self, path: Path, root: Path) -> bool:
        return (
            path.is_dir()
            and (path / "token_identifier.txt").is_file()
            and any((path / name).is_file() for name in ("learned_embeds.safetensors", "learned_embeds.bin"))
        )

    def read(self, path: Path, root: Path) -> list[ImportedCheckpoint]:
        weights = path / "learned_embeds.safetensors"
        if not weights.is_file():
            refuse_pickle(path / "learned_embeds.bin")
        header = read_safetensors_header(weights, root)
        if len([k for k in header if k != "__metadata__"]) == 0:
            raise ImportProblem(f"{path.name}: learned_embeds.safetensors holds no embedding")
        token = _small_text(path / "token_identifier.txt", root)
        if not token:
            raise ImportProblem(f"{path.name}: token_identifier.txt is empty")
        concept_file = path / "type_of_concept.txt"
        concept = _small_text(concept_file, root).lower() if present(concept_file) else "object"
        name = token.strip("<>") or path.name
        words = [w for w in re.split(r"[^a-z]+", name.lower()) if len(w) > 2]
        fields = {
            "id": slugify(path.name),
            "name": name.replace("-", " ").replace("_", " "),
            "family": family_stem(name),
            "kind": "textual_inversion",
            "triggers": [token],
            "subjects": [] if concept == "style" else words,
            "styles": [name.replace("-", " ")] if concept == "style" else [],
            "base_model": folder_base({}, path),
            "tags": [concept],
            "description": f"Textual-inversion {concept} concept {token}",
            "created_at": latest_mtime(path),
        }
        card = card_from_fields(fields, path.name)
        return [ImportedCheckpoint(card, self.format, path, weights, None, False, (path,))]


LORA_FILES = ("pytorch_lora_weights.safetensors", "adapter_model.safetensors")


class LoraFolderImporter:
    """A LoRA saved as a folder: diffusers' ``save_lora_weights`` (``pytorch_lora_weights.safetensors``, and a
    model card from its training scripts) or PEFT's ``save_pretrained`` (``adapter_model.safetensors`` with
    ``adapter_config.json``, whose ``base_model_name_or_path`` names the base)."""

    format = "diffusers_lora"

    def claims(self, path: Path, root: Path) -> bool:
        return path.is_dir() and any((path / name).is_file() for name in LORA_FILES)

    def read(self, path: Path, root: Path) -> list[ImportedCheckpoint]:
        weights = next(path / name for name in LORA_FILES if (path / name).is_file())
        if not [k for k in read_safetensors_header(weights, root) if k != "__metadata__"]:
            raise ImportProblem(f"{path.name}/{weights.name} holds no tensors")
        meta = model_card_front_matter(path, root)
        adapter_config = path / "adapter_config.json"
        peft = read_json(adapter_config, root) if present(adapter_config) else {}
        if not isinstance(peft, dict):
            raise ImportProblem(f"{path.name}/adapter_config.json must be a JSON object")
        if not meta.get("base_model") and peft.get("base_model_name_or_path"):
            meta = {**meta, "base_model": str(peft["base_model_name_or_path"])}
        fields = trained_folder_fields(path, meta, "lora", "LoRA", "LoRA adapter", ("lora", "template:sd-lora"))
        card = card_from_fields(fields, path.name)
        return [ImportedCheckpoint(card, self.format, path, path, None, False, (path,))]
