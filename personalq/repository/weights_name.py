"""The name the WebUI knows a checkpoint's weights by: what ``<lora:NAME:0.8>`` calls, what an image's PNG writes.

A WebUI user keeps one file per model in ``models/Lora`` and calls it by the file's stem. diffusers and PEFT save
every model under one generic file name inside a folder of its own (``teddybear-v2/pytorch_lora_weights.safetensors``),
so there the folder names the model. Check-in reads tags by this name and serving writes it into the PNG, so an
image's ``<lora:...>`` tags select the same checkpoints again; it lives at the repository layer because both read it.
"""

from __future__ import annotations

from pathlib import PurePath

GENERIC_WEIGHT_STEMS = frozenset(
    "pytorch_lora_weights adapter_model learned_embeds learned_embeds_2 diffusion_pytorch_model model unet".split()
)


def weights_name(weights: str | PurePath) -> str:
    """The stem of a weights file, or its folder's name when the file carries one of diffusers' generic names."""
    path = PurePath(weights)
    return path.parent.name if path.stem in GENERIC_WEIGHT_STEMS and path.parent.name else path.stem


__all__ = ["GENERIC_WEIGHT_STEMS", "weights_name"]
