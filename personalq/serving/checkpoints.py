"""Applying repository checkpoints to one shared base pipeline, and taking them off again.

LoRA adapters are loaded into the base UNet under their own adapter names (diffusers/peft), each at its weight,
textual inversions add their tokens, DreamBooth fine-tunes swap the UNet; nothing builds a pipeline per checkpoint.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from pathlib import Path
from typing import Iterator, Mapping, Sequence

import torch
from diffusers import DiffusionPipeline, StableDiffusionPipeline, UNet2DConditionModel

from personalq.repository.card import StoredCheckpoint
from personalq.repository.weighted import Weighted
from personalq.serving.adapter_files import (
    AdapterFileError,
    LoraWeights,
    load_textual_inversion,
    read_lora,
    read_textual_inversion,
    unload_textual_inversion,
)
from personalq.serving.packaged import materialize

log = logging.getLogger(__name__)


class CheckpointLoadError(RuntimeError):
    """A checkpoint whose weights cannot be applied to the base it names."""


def load_base(
    path: Path, device: str = "cpu", dtype: torch.dtype = torch.float32, with_unet: bool = True
) -> DiffusionPipeline:
    """A base pipeline folder (as written by ``save_pretrained``), with the files it takes from installed
    packages copied in first (see :mod:`personalq.serving.packaged`).

    The class comes from the folder's model index: ``StableDiffusionPipeline`` for the demo and SD 1.x/2.x,
    ``StableDiffusionXLPipeline`` for SDXL and its fine-tunes. ``with_unet=False`` leaves the UNet slot empty,
    for a caller that fills it itself (serving a quantized variant never needs the float UNet in memory).
    """
    path = Path(path)
    materialize(path)
    index = json.loads((path / "model_index.json").read_text()) if (path / "model_index.json").exists() else {}
    skipped = {} if with_unet else {"unet": None}
    pipe = DiffusionPipeline.from_pretrained(path, dtype=dtype, **_no_safety_checker(index), **skipped)
    pipe.set_progress_bar_config(disable=True)
    return pipe.to(device)


def _no_safety_checker(index: dict) -> dict:
    if "safety_checker" not in index:
        return {}
    return {"safety_checker": None, "feature_extractor": None, "requires_safety_checker": False}


def adapter_name(checkpoint_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", checkpoint_id)


def load_dreambooth_unet(
    checkpoint: StoredCheckpoint, dtype=torch.float32, device: str = "cpu", base: str | None = None
) -> UNet2DConditionModel:
    """The full UNet of a DreamBooth fine-tune (a diffusers folder) or of a single-file checkpoint.

    Single ``.safetensors`` files (WebUI / Civitai checkpoints) go through diffusers' single-file loading, which
    converts the original LDM / SGM key names of SD 1.x, 2.x and SDXL; the architecture comes from the base's
    ``unet/config.json``, so nothing is fetched. Only the UNet is taken: the request runs on the base's text
    encoders and VAE, which fine-tunes rarely change.
    """
    weights = _require_weights(checkpoint)
    if weights.is_file():
        if weights.suffix != ".safetensors":
            raise CheckpointLoadError(
                f"{checkpoint.id}: only .safetensors single files are loaded, not {weights.suffix}"
            )
        if base is None:
            raise CheckpointLoadError(f"{checkpoint.id}: a single-file checkpoint needs its base model's config")
        local = Path(base).exists()  # a Hub id's config may be fetched; a folder's never
        return UNet2DConditionModel.from_single_file(
            str(weights), config=str(base), subfolder="unet", torch_dtype=dtype, local_files_only=local
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


def read_adapter(checkpoint: StoredCheckpoint) -> LoraWeights:
    """A LoRA checkpoint's weights in any layout people download (kohya, diffusers, PEFT), read and checked."""
    try:
        return read_lora(_require_weights(checkpoint))
    except AdapterFileError as error:
        raise CheckpointLoadError(f"{checkpoint.id}: {error}") from error


def adapter_names(uses: Sequence[Weighted]) -> list[str]:
    """peft adapter names for ``uses``, one each: the id made a Python name, numbered where two ids make the same."""
    names: list[str] = []
    for use in uses:
        name = adapter_name(use.id)
        names.append(name if name not in names else f"{name}_{len(names)}")
    return names


@contextlib.contextmanager
def set_applied(
    pipe: StableDiffusionPipeline, uses: Sequence[Weighted], loras: Mapping[str, LoraWeights] | None = None
) -> Iterator[StableDiffusionPipeline]:
    """Every LoRA (LoCon included) of ``uses`` at its weight and every textual inversion's tokens, on top of whatever
    UNet the pipeline holds (the float base, a DreamBooth fine-tune, a quantized variant); all taken off again
    afterwards, so the base is exactly restored. A full UNet in ``uses`` adds nothing here: it is the UNet itself.

    Each LoRA is loaded under its own peft adapter name and ``set_adapters`` gives each its weight, so diffusers sums
    ``weight * scale * up @ down`` of every adapter over the same base layer (what the WebUI does with several
    ``<lora:name:w>``). ``unload_lora_weights`` then removes every adapter and peft's wrappers with them, which
    ``delete_adapters`` would leave behind. ``loras``: adapters already read, by checkpoint id (the engine's cache).
    """
    lora_uses = [use for use in uses if use.checkpoint.kind == "lora"]
    with contextlib.ExitStack() as stack:
        for use in uses:
            checkpoint = use.checkpoint
            _require_weights(checkpoint)
            if checkpoint.kind == "textual_inversion":
                stack.enter_context(_embedding_loaded(pipe, checkpoint))
            elif checkpoint.kind != "lora" and not replaces_unet(checkpoint):
                raise CheckpointLoadError(f"{checkpoint.id}: cannot load checkpoints of kind {checkpoint.kind!r}")
        if lora_uses:
            stack.enter_context(_loras_loaded(pipe, lora_uses, loras or {}))
        yield pipe


@contextlib.contextmanager
def _loras_loaded(
    pipe: StableDiffusionPipeline, uses: Sequence[Weighted], loras: Mapping[str, LoraWeights]
) -> Iterator[None]:
    names = adapter_names(uses)
    current = uses[0].checkpoint
    try:
        for use, name in zip(uses, names):
            current = use.checkpoint
            lora = loras.get(use.id) or read_adapter(current)
            pipe.load_lora_weights(dict(lora.state_dict), adapter_name=name)  # a copy: loading consumes the dict
        pipe.set_adapters(names, adapter_weights=[use.weight for use in uses])
    except (ValueError, TypeError, RuntimeError, KeyError) as error:  # shapes or names this base does not have
        pipe.unload_lora_weights()
        raise CheckpointLoadError(f"{current.id}: the LoRA does not fit this base: {error}"[:1000]) from error
    try:
        yield
    finally:
        pipe.unload_lora_weights()  # removes peft's wrappers too, so the base UNet is exactly restored


@contextlib.contextmanager
def _embedding_loaded(pipe: StableDiffusionPipeline, checkpoint: StoredCheckpoint) -> Iterator[None]:
    """A textual inversion's tokens added under its card's trigger, and taken off again. An embedding has no strength
    in diffusers: any weight but 0 loads it as it is (the WebUI weights one with prompt emphasis instead)."""
    token = checkpoint.canonical_trigger
    if not token:
        raise CheckpointLoadError(f"{checkpoint.id}: an embedding needs a trigger to load under; its card has none")
    try:
        embedding = read_textual_inversion(_require_weights(checkpoint))
        load_textual_inversion(pipe, embedding, token)
    except (AdapterFileError, ValueError) as error:
        raise CheckpointLoadError(f"{checkpoint.id}: {error}") from error
    try:
        yield
    finally:
        unload_textual_inversion(pipe, embedding, token)


def adapters_applied(
    pipe: StableDiffusionPipeline, checkpoint: StoredCheckpoint, lora: LoraWeights | None = None
) -> contextlib.AbstractContextManager[StableDiffusionPipeline]:
    """One checkpoint's LoRA or textual inversion on top of the pipeline's UNet (:func:`set_applied` of a set of
    one, at weight 1). ``lora``: the adapter as :func:`read_adapter` gives it, when a cache already holds it."""
    return set_applied(pipe, [Weighted(checkpoint)], {checkpoint.id: lora} if lora is not None else None)


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
