"""What an image made here says about itself in the WebUI's ``parameters`` chunk (:mod:`png_parameters`).

The chunk names things the way the AUTOMATIC1111 WebUI does, so that its PNG Info tab, ComfyUI and Civitai read
it: the sampler by the WebUI's name for the diffusers scheduler the pipeline ran, the model by its file or folder
name, and each LoRA as ``<lora:stem:weight>`` with the file's stem (what a WebUI user has in ``models/Lora``) and
the first 10 hex digits of its SHA-256 (the WebUI's AutoV2 hash, which Civitai looks models up by).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping

from personalq.repository.card import StoredCheckpoint
from personalq.repository.weights_name import weights_name
from personalq.serving.checkpoints import replaces_unet
from personalq.serving.composition import Composition
from personalq.serving.generation import GenerationParams
from personalq.serving.png_parameters import ImageParameters, NetworkUse

# diffusers scheduler class -> the WebUI's sampler name (modules/sd_samplers_kdiffusion.py, sd_samplers_timesteps.py)
_SAMPLERS = {
    "EulerDiscreteScheduler": "Euler",
    "EulerAncestralDiscreteScheduler": "Euler a",
    "DPMSolverMultistepScheduler": "DPM++ 2M",
    "DPMSolverSinglestepScheduler": "DPM++ 2S",
    "DPMSolverSDEScheduler": "DPM++ SDE",
    "KDPM2DiscreteScheduler": "DPM2",
    "KDPM2AncestralDiscreteScheduler": "DPM2 a",
    "HeunDiscreteScheduler": "Heun",
    "LMSDiscreteScheduler": "LMS",
    "DDIMScheduler": "DDIM",
    "PNDMScheduler": "PLMS",
    "UniPCMultistepScheduler": "UniPC",
    "LCMScheduler": "LCM",
}
AUTOV2_DIGITS = 10


def sampler_name(scheduler_class: str, config: Mapping | None = None) -> str:
    """The WebUI's name for a diffusers scheduler class (``DPM++ 2M Karras`` with Karras sigmas in its ``config``),
    else the class name itself."""
    webui = _SAMPLERS.get(scheduler_class)
    if webui is None:
        return scheduler_class
    return f"{webui} Karras" if (config or {}).get("use_karras_sigmas") else webui


def stored_scheduler(base: str) -> tuple[str, dict]:
    """The scheduler class and config a base pipeline folder stores, read without loading it (("", {}) for a Hub id
    or a folder without one)."""
    path = Path(base) / "scheduler" / "scheduler_config.json"
    if not path.is_file():
        return "", {}
    config = json.loads(path.read_text())
    return str(config.get("_class_name", "")), config


def file_stem(checkpoint: StoredCheckpoint) -> str:
    """The name the WebUI knows a checkpoint file by (:func:`~personalq.repository.weights_name.weights_name`: its
    stem, or its folder's name for diffusers' generic file names), else the card's id."""
    return weights_name(checkpoint.weights_path) if checkpoint.weights_path else checkpoint.id


def autov2(checkpoint: StoredCheckpoint) -> str:
    """The first 10 hex digits of the weights' SHA-256, when the card has it (the repository stores it at import)."""
    return (checkpoint.weights_sha256 or "")[:AUTOV2_DIGITS]


def image_parameters(
    composition: Composition, prompt: str, params: GenerationParams, sampler: str, base: str
) -> ImageParameters:
    """The parameters of an image made from ``prompt`` with ``composition`` on ``base`` (a pipeline folder or a Hub
    id) with ``sampler`` (:func:`sampler_name`).

    The model is the base's name, or the fine-tune's file when the set runs on a full UNet (what the WebUI's
    ``Model`` field names: the checkpoint the UNet came from). Every LoRA in effect is a network at its weight;
    embeddings are called by their trigger in the prompt, as in the WebUI, so the prompt already names them."""
    full_unet = next((c for c in composition.checkpoints if replaces_unet(c)), None)
    return ImageParameters(
        prompt=prompt,
        negative_prompt=params.negative_prompt,
        steps=params.steps,
        sampler=sampler,
        cfg_scale=params.guidance,
        seed=params.seed,
        width=params.width,
        height=params.height,
        model=file_stem(full_unet) if full_unet else Path(base.rstrip("/")).name,
        model_hash=autov2(full_unet) if full_unet else "",
        networks=[
            NetworkUse(name=file_stem(use.checkpoint), weight=use.weight, hash=autov2(use.checkpoint))
            for use in composition.loras
        ],
    )
