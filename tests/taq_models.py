"""Tiny UNets and calibrations for the TAQ tests."""

from __future__ import annotations

import torch
from diffusers import UNet2DConditionModel

from personalq.taq.activations import Observer
from personalq.taq.calibration import observing
from personalq.taq.context import QuantContext

TOKENS = 8
TEXT_DIM = 32


def tiny_unet(sdxl: bool = False) -> UNet2DConditionModel:
    torch.manual_seed(0)
    extra = (
        dict(
            addition_embed_type="text_time",
            addition_time_embed_dim=8,
            projection_class_embeddings_input_dim=6 * 8 + TEXT_DIM,
            use_linear_projection=True,
            transformer_layers_per_block=(1, 2),
        )
        if sdxl
        else {}
    )
    return UNet2DConditionModel(
        sample_size=8,
        in_channels=4,
        out_channels=4,
        layers_per_block=1,
        block_out_channels=(32, 64),
        down_block_types=("CrossAttnDownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=TEXT_DIM,
        norm_num_groups=8,
        attention_head_dim=8,
        **extra,
    ).eval()


def unet_inputs(sdxl: bool, batch: int = 2, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    kwargs = {"encoder_hidden_states": torch.randn(batch, TOKENS, TEXT_DIM, generator=g)}
    if sdxl:
        kwargs["added_cond_kwargs"] = {
            "text_embeds": torch.randn(batch, TEXT_DIM, generator=g),
            "time_ids": torch.randn(batch, 6, generator=g),
        }
    return torch.randn(batch, 4, 8, 8, generator=g), kwargs


def trigger_rows() -> torch.Tensor:
    """The calibration's trigger span: tokens 1-2 of the conditional prompt (the unconditional one has none)."""
    mask = torch.zeros(2, TOKENS, dtype=torch.bool)
    mask[1, 1:3] = True
    return mask


def calibrated(unet, sdxl: bool, trigger_scale: float = 1.0) -> Observer:
    """Observe three timesteps; ``trigger_scale`` multiplies the text's trigger rows (25: the paper's outlier case)."""
    context = QuantContext(observer=Observer())
    mask = trigger_rows()
    context.observed_masks = {
        "plain": torch.zeros_like(mask),
        "bos": torch.zeros_like(mask).index_fill_(1, torch.tensor([0]), True),
        "taq": mask,
    }
    with torch.no_grad(), observing(unet, context):
        for t in (900, 500, 100):
            sample, kwargs = unet_inputs(sdxl, seed=t)
            kwargs["encoder_hidden_states"][mask] *= trigger_scale
            unet(sample, t, **kwargs)
    return context.observer
