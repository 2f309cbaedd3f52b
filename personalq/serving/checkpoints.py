"""Applying a repository checkpoint to one shared base pipeline, and taking it off again.

LoRA adapters are loaded into the base UNet under their own adapter name (diffusers/peft), textual
inversions add their token, DreamBooth fine-tunes swap the UNet; nothing builds a pipeline per checkpoint.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from pathlib import Path
from typing import Iterator

import torch
from diffusers import DiffusionPipeline, StableDiffusionPipeline, UNet2DConditionModel

from personalq.bundled import base_dir
from personalq.repository.card import StoredCheckpoint
from personalq.serving.packaged import materialize

log = logging.getLogger(__name__)


class CheckpointLoadError(RuntimeError):
    """A checkpoint whose weights cannot be applied to the base it names."""


def load_base(path: Path, device: str = "cpu") -> DiffusionPipeline:
    """A base pipeline folder (as written by ``save_pretrained``), with the files it takes from installed
    packages copied in first (see :mod:`personalq.serving.packaged`).

    The class comes from the folder's model index (SD 1.5 layout for the demo, SDXL works the same way).
    """
    path = Path(path)
    materialize(path)
    index = json.loads((path / "model_index.json").read_text()) if (path / "model_index.json").exists() else {}
    pipe = DiffusionPipeline.from_pretrained(path, dtype=torch.float32, **_no_safety_checker(index))
    pipe.set_progress_bar_config(disable=True)
    return pipe.to(device)


def _no_safety_checker(index: dict) -> dict:
    if "safety_checker" not in index:
        return {}
    return {"safety_checker": None, "feature_extractor": None, "requires_safety_checker": False}


def resolve_base(settings, checkpoint: StoredCheckpoint | None = None) -> str:
    """The card's ``base_model`` as mapped in settings (a local folder or a Hub id); the bundled demo base otherwise,
    and for no card at all."""
    name = checkpoint.base_model if checkpoint is not None else None
    return settings.base_models.get(name or "", str(base_dir(settings)))


def adapter_name(checkpoint_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", checkpoint_id)


def lora_file(checkpoint: StoredCheckpoint) -> Path:
    """The adapter's safetensors file (a card may point at the file or at a folder holding it)."""
    weights = _require_weights(checkpoint)
    if weights.is_dir():
        files = sorted(weights.glob("*.safetensors"))
        if not files:
            raise CheckpointLoadError(f"{weights} holds no .safetensors LoRA weights")
        return files[0]
    return weights


def load_dreambooth_unet(
    checkpoint: StoredCheckpoint, dtype=torch.float32, device: str = "cpu", base: str | None = None
) -> UNet2DConditionModel:
    """The full UNet of a DreamBooth fine-tune (a diffusers folder) or of a single-file checkpoint.

    Single ``.safetensors`` files go through diffusers' single-file loading, which converts original SD 1.5
    (LDM) key names; the architecture comes from the base's ``unet/config.json``, so nothing is fetched.
    """
    weights = _require_weights(checkpoint)
    if weights.is_file():
        if weights.suffix != ".safetensors":
            raise CheckpointLoadError(
                f"{checkpoint.id}: only .safetensors single files are loaded, not {weights.suffix}"
            )
        if base is None:
            raise CheckpointLoadError(f"{checkpoint.id}: a single-file checkpoint needs its base model's config")
        return UNet2DConditionModel.from_single_file(
            str(weights), config=str(base), subfolder="unet", torch_dtype=dtype
        ).to(device)
    unet_dir = weights / "unet" if (weights / "unet").is_dir() else weights
    # low_cpu_mem_usage would leave meta tensors behind the dtype cast
    return UNet2DConditionModel.from_pretrained(unet_dir, dtype=dtype, low_cpu_mem_usage=False).to(device)


def replaces_unet(checkpoint: StoredCheckpoint) -> bool:
    return checkpoint.kind in ("dreambooth", "checkpoint")


def _require_weights(checkpoint: StoredCheckpoint) -> Path:
    if not checkpoint.weights_path:
        raise CheckpointLoadError(f"{checkpoint.id} is a metadata-only card: there are no weights to load")
    return Path(checkpoint.weights_path)


@contextlib.contextmanager
def adapters_applied(
    pipe: StableDiffusionPipeline, checkpoint: StoredCheckpoint, lora_tensors: dict[str, torch.Tensor] | None = None
) -> Iterator[StableDiffusionPipeline]:
    """LoRA or textual inversion on top of whatever UNet the pipeline holds (full precision or quantized).

    ``lora_tensors``: the adapter file's tensors when a cache already holds them (diffusers converts kohya or
    peft layouts from the dict exactly as from the file).
    """
    weights = _require_weights(checkpoint)
    if checkpoint.kind == "lora":
        adapter = adapter_name(checkpoint.id)
        if lora_tensors is not None:
            pipe.load_lora_weights(dict(lora_tensors), adapter_name=adapter)  # a copy: loading consumes the dict
        else:
            file = lora_file(checkpoint)
            pipe.load_lora_weights(str(file.parent), weight_name=file.name, adapter_name=adapter)
        pipe.set_adapters([adapter], adapter_weights=[1.0])
        try:
            yield pipe
        finally:
            pipe.unload_lora_weights()  # removes peft's wrappers too, so the base UNet is exactly restored
    elif checkpoint.kind == "textual_inversion":
        file = weights if weights.is_file() else weights / "learned_embeds.safetensors"
        token = checkpoint.canonical_trigger
        pipe.load_textual_inversion(str(file), token=token)
        try:
            yield pipe
        finally:
            pipe.unload_textual_inversion(token)
    elif replaces_unet(checkpoint):
        yield pipe  # nothing to add: the UNet itself is the checkpoint
    else:
        raise CheckpointLoadError(f"{checkpoint.id}: cannot load checkpoints of kind {checkpoint.kind!r}")


@contextlib.contextmanager
def applied(pipe: StableDiffusionPipeline, checkpoint: StoredCheckpoint) -> Iterator[StableDiffusionPipeline]:
    """``with applied(pipe, card) as p:`` generates with the checkpoint in full precision; the base is restored
    afterwards."""
    _require_weights(checkpoint)
    original = pipe.unet
    if replaces_unet(checkpoint):
        pipe.unet = load_dreambooth_unet(checkpoint, original.dtype, original.device, base=pipe.name_or_path)
    try:
        with adapters_applied(pipe, checkpoint):
            yield pipe
    finally:
        pipe.unet = original
