"""Which architecture a checkpoint's weights were made for, from tensor names and shapes alone.

Metadata is often missing or wrong (a kohya LoRA trained without ``ss_base_model_version``, a Civitai file
renamed by hand), but the shapes cannot lie: cross-attention reads a 768-wide text context in SD 1.x, 1024 in
SD 2.x and 2048 in SDXL; SDXL files name its two text encoders (``lora_te1_`` / ``lora_te2_``, ``clip_l`` /
``clip_g``, ``conditioner.embedders.1``) or its SGM blocks; SD 1.x alone projects into its transformers with 1x1
convolutions. Only safetensors headers and config files are read. Importers use this to fill in the card's base,
serving to refuse weights that do not fit the base before loading them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal

from personalq.repository.importers.base import ImportProblem, read_safetensors_header

Architecture = Literal["sd1", "sd2", "sdxl"]

# the UNets' cross-attention context widths, and the text encoders' (CLIP-L for SD 1.x, OpenCLIP ViT-H for 2.x)
_CONTEXT_WIDTH: dict[int, Architecture] = {768: "sd1", 1024: "sd2", 2048: "sdxl"}
_TEXT_WIDTH: dict[int, Architecture] = {768: "sd1", 1024: "sd2"}
BASE_KEY_OF = {"sd1": "sd-1.5", "sd2": "sd-2.1", "sdxl": "sdxl"}  # the base an architecture's weights most often use

_SINGLE_FILE_ENCODERS: dict[str, Architecture] = {
    "conditioner.embedders.1.": "sdxl",
    "cond_stage_model.model.": "sd2",
    "cond_stage_model.transformer.": "sd1",
}
_EMBEDDING_NAMES = {"emb_params", "string_to_param", "clip_l", "clip_g"}
_SDXL_EMBEDDINGS = "learned_embeds_2.safetensors"  # diffusers' SDXL concept folders: the second encoder's vectors

# names with "_" read as "." so kohya's flattened names and diffusers' dotted ones match alike
_ATTN2_KV_DOWN = re.compile(r"attn2\.(processor\.)?to\.[kv]\.(lora\.)?(lora\.down|lora\.a|down)\.weight$")
_TEXT_DOWN = re.compile(r"(self\.attn\.[qkv]\.proj|mlp\.fc1)\.(lora\.linear\.layer\.down|lora\.down|lora\.a)\.weight$")
_PROJ_IN_DOWN = re.compile(r"proj\.in\.(lora\.down|lora\.a|down)\.weight$")
_DEEP_TRANSFORMER = re.compile(r"transformer\.blocks\.[1-9]")
_SDXL_BLOCKS = ("input_blocks", "middle_block", "output_blocks", "label_emb", "add_embedding")


def _one(verdicts: set) -> Architecture | None:
    verdicts = verdicts - {None}
    return verdicts.pop() if len(verdicts) == 1 else None


def _is_first_text_encoder(name: str) -> bool:
    return name.startswith(("lora_te1_", "lora_te_", "text_encoder.", "base_model.model.text_model"))


def lora_architecture(shapes: dict[str, tuple[int, ...]]) -> Architecture | None:
    """The architecture of a LoRA (kohya, diffusers or PEFT names), strongest evidence first."""
    normal = {name: name.lower().replace("_", ".") for name in shapes}
    by_context = _one(
        {
            _CONTEXT_WIDTH.get(shapes[n][1])
            for n, key in normal.items()
            if _ATTN2_KV_DOWN.search(key) and len(shapes[n]) >= 2
        }
    )
    if by_context:
        return by_context
    if any(n.startswith(("lora_te1_", "lora_te2_", "text_encoder_2.")) for n in shapes):
        return "sdxl"
    by_text = _one(
        {
            _TEXT_WIDTH.get(shapes[n][1])
            for n, key in normal.items()
            if _is_first_text_encoder(n) and _TEXT_DOWN.search(key) and len(shapes[n]) >= 2
        }
    )
    if by_text:
        return by_text
    if any(block in n for n in shapes for block in _SDXL_BLOCKS) or any(
        _DEEP_TRANSFORMER.search(key) for key in normal.values()
    ):
        return "sdxl"  # SGM block names (kohya SDXL), the added-condition MLP, or several transformer layers a block
    if any(_PROJ_IN_DOWN.search(key) and len(shapes[n]) == 4 for n, key in normal.items()):
        return "sd1"  # SD 1.x alone projects into its transformers with 1x1 convolutions (2.x and XL: linear)
    return None


def tensors_architecture(shapes: dict[str, tuple[int, ...]]) -> Architecture | None:
    """ "sd1", "sd2" or "sdxl" for a LoRA, textual inversion or whole checkpoint given as {tensor name: shape};
    None when the names and shapes do not tell (the demo's sizes, an unfamiliar layout)."""
    names = set(shapes)
    for prefix, architecture in _SINGLE_FILE_ENCODERS.items():  # WebUI single files: the text encoders' keys
        if any(n.startswith(prefix) for n in names):
            return architecture
    if "clip_g" in names:
        return "sdxl"
    if names & _EMBEDDING_NAMES or (len(names) == 1 and "lora" not in min(names)):  # an embedding's vectors
        shape = shapes[min(names)]
        return _TEXT_WIDTH.get(shape[-1]) if shape else None
    return lora_architecture(shapes)


def weights_architecture(path: Path) -> Architecture | None:
    """The architecture of the weights at ``path``: a ``.safetensors`` file, or a folder (a diffusers pipeline or
    UNet, a textual-inversion concept, a LoRA folder); None when it cannot be told or the files cannot be read
    (importing and loading report unreadable files on their own)."""
    path = Path(path)
    try:
        if path.is_dir():
            return _folder_architecture(path)
        if path.suffix.lower() == ".safetensors":
            header = read_safetensors_header(path, path.parent)
            return tensors_architecture(
                {
                    k: tuple(v.get("shape", []))
                    for k, v in header.items()
                    if k != "__metadata__" and isinstance(v, dict)
                }
            )
    except (ImportProblem, OSError, ValueError, AttributeError, TypeError):
        return None
    return None


def _folder_architecture(folder: Path) -> Architecture | None:
    index = folder / "model_index.json"
    if index.is_file() and "XL" in str(json.loads(index.read_text()).get("_class_name", "")):
        return "sdxl"
    if (folder / _SDXL_EMBEDDINGS).is_file():
        return "sdxl"
    for config in (folder / "unet" / "config.json", folder / "config.json"):
        if config.is_file():
            unet = json.loads(config.read_text())
            if unet.get("addition_embed_type") == "text_time":
                return "sdxl"
            return _CONTEXT_WIDTH.get(unet.get("cross_attention_dim"))
    for name in ("adapter_model.safetensors", "pytorch_lora_weights.safetensors", "learned_embeds.safetensors"):
        if (folder / name).is_file():
            return weights_architecture(folder / name)
    files = sorted(folder.glob("*.safetensors"))
    return weights_architecture(files[0]) if len(files) == 1 else None
