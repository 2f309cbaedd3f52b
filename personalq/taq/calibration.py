"""Calibration: run the full-precision pipeline on the paper's templated trigger prompts and observe activations.

"a photo of a <sks> {class}, {scene}, {time}, {style}, {action}" with the checkpoint's own trigger and class,
64 captions by default. One pass records every site for every protection mode at once, so the plain, BOS
and TAQ variants of a checkpoint are calibrated on exactly the same data.
"""

from __future__ import annotations

import contextlib
import logging
import random
from typing import Iterator, Sequence

import torch
from diffusers import StableDiffusionPipeline
from torch import nn
from tqdm.auto import tqdm

from personalq.taq.activations import Observer
from personalq.taq.attention import TriggerAwareAttnProcessor, cross_attention_names
from personalq.taq.context import QuantContext, attach_timestep_hook
from personalq.taq.masks import MODES, token_mask
from personalq.taq.smoothing import input_channel_dim

log = logging.getLogger(__name__)

# the paper's pool sizes: 16 scenes, 8 times of day / lighting, 13 styles, 12 actions
SCENES = (
    "on a sunny beach",
    "in a lush park",
    "on a snowy mountain",
    "on a city street at night",
    "in a living room",
    "by a forest lake",
    "in a desert",
    "in a kitchen",
    "in a library",
    "on a rooftop",
    "in a garden",
    "at a train station",
    "in a meadow",
    "on a wooden pier",
    "in a cafe",
    "in a studio",
)
TIMES = (
    "at dawn",
    "in the morning",
    "at noon",
    "at golden hour",
    "at sunset",
    "at blue hour",
    "at neon night",
    "on an overcast day",
)
STYLES = (
    "photo",
    "realistic",
    "sketch",
    "pencil drawing",
    "flat anime style",
    "watercolor",
    "oil painting",
    "pixel art",
    "vintage polaroid",
    "3d render",
    "comic style",
    "pastel illustration",
    "black and white",
)
ACTIONS = (
    "centered",
    "close-up",
    "seen from the side",
    "in the distance",
    "looking at the camera",
    "on the left",
    "on the right",
    "from above",
    "from below",
    "sitting",
    "standing",
    "in motion",
)


def calibration_prompts(trigger: str, subject: str, count: int = 64, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [
        f"a photo of a {trigger} {subject}, {rng.choice(SCENES)}, {rng.choice(TIMES)}, "
        f"{rng.choice(STYLES)}, {rng.choice(ACTIONS)}"
        for _ in range(count)
    ]


def layer_site(module_name: str) -> str:
    """A layer's site name, the same with or without peft's LoRA wrapper around it."""
    return module_name.replace(".base_layer", "")


def quantizable_layers(unet: nn.Module) -> Iterator[tuple[str, nn.Module]]:
    """Every Linear and Conv2d of the UNet (LoRA adapter matrices excluded: they stay in full precision)."""
    for name, module in unet.named_modules():
        if isinstance(module, (nn.Linear, nn.Conv2d)) and ".lora_" not in name:
            yield layer_site(name), module


def takes_text(site: str) -> bool:
    """K and V projections of cross-attention: their input is the prompt, quantized per row by the processor."""
    return site.endswith(("attn2.to_k", "attn2.to_v"))


def _observe(context: QuantContext, site: str, values: torch.Tensor, channel_dim: int) -> None:
    context.observer.record(site, context.group, values, channel_dim)
    context.observer.keep(site, values)


@contextlib.contextmanager
def observing(unet: nn.Module, context: QuantContext) -> Iterator[None]:
    handles = [attach_timestep_hook(unet, context)]
    for site, module in quantizable_layers(unet):
        if not takes_text(site):
            handles.append(
                module.register_forward_pre_hook(
                    lambda m, args, site=site: _observe(context, site, args[0], input_channel_dim(m))
                )
            )
    originals = unet.attn_processors
    modules = dict(unet.named_modules())
    for name in cross_attention_names(unet):
        modules[name].set_processor(TriggerAwareAttnProcessor(name, context))
    try:
        yield
    finally:
        unet.set_attn_processor(originals)
        for handle in handles:
            handle.remove()


@torch.no_grad()
def calibrate(
    pipe: StableDiffusionPipeline,
    prompts: Sequence[str],
    triggers: Sequence[str],
    steps: int = 10,
    timestep_groups: int = 4,
    guidance_scale: float = 5.0,
    batch: int = 16,
    seed: int = 0,
    keep_inputs: int = 0,
    size: int | None = None,
) -> Observer:
    """Observe every activation site of ``pipe.unet`` while generating ``prompts``; K/V per protection mode.

    ``keep_inputs`` > 0 also keeps that many whole inputs per layer, which AdaRound optimizes against. ``size``:
    the image side to generate at (the pipeline's default when None).
    """
    context = QuantContext(timestep_groups=timestep_groups, observer=Observer(seed=seed, keep_inputs=keep_inputs))
    with observing(pipe.unet, context):
        for start in tqdm(range(0, len(prompts), batch), desc="calibrate", leave=False):
            chunk = list(prompts[start : start + batch])
            every = [""] * len(chunk) + chunk  # classifier-free guidance: unconditional half first
            context.observed_masks = {mode: token_mask(pipe.tokenizer, every, triggers, mode) for mode in MODES}
            pipe(
                chunk,
                num_inference_steps=steps,
                guidance_scale=guidance_scale,
                output_type="latent",
                height=size,
                width=size,
                generator=torch.Generator().manual_seed(seed + start),
            )
    log.info("calibrated %d sites on %d prompts x %d steps", len(context.observer.sites()), len(prompts), steps)
    return context.observer
