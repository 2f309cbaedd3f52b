"""Smoothing (SmoothQuant, Xiao et al. 2023): move each input channel's outliers from the activation into the weight.

A per-tensor activation grid is only as fine as its largest channel allows. In a diffusion UNet a few channels
of the feed-forward, projection and skip-connection inputs are many times larger than the rest (the up
blocks' skip connections concatenate two differently scaled tensors: the bimodal input Q-Diffusion splits),
so at 4 bits most channels are rounded onto a handful of levels. Dividing input channel ``c`` by ``s_c`` and
multiplying the weight's column ``c`` by ``s_c`` leaves the layer's float output unchanged; with
``s_c = max|x_c|**alpha / max|W_c|**(1 - alpha)`` the activation grid sees evened-out channels while the weight,
quantized per output channel, absorbs the spread. The factors are folded into the packed weight before it is
quantized, and the layer divides its input by them before rounding it. An integer kernel fuses that division
into the elementwise pass that quantizes the input (or into a preceding norm's affine weights), so the matrix
product itself keeps one activation scale, which per-channel activation scales would not allow. It applies to
every separation mode alike, so it changes no comparison between them.
"""

from __future__ import annotations

import torch
from torch import nn

FLOOR = 1e-5  # keeps dead channels (never active in calibration) and zero weight columns from dividing by zero


def can_smooth(module: nn.Module) -> bool:
    """Linear layers and ungrouped convolutions: each input channel then meets exactly one weight column."""
    return isinstance(module, nn.Linear) or (isinstance(module, nn.Conv2d) and module.groups == 1)


def weight_column_absmax(weight: torch.Tensor) -> torch.Tensor:
    """Each input channel's largest weight magnitude over the outputs (and kernel positions of a convolution)."""
    return weight.detach().float().abs().transpose(0, 1).reshape(weight.shape[1], -1).amax(1)


def smoothing_factors(activation_absmax: torch.Tensor, weight: torch.Tensor, alpha: float) -> torch.Tensor:
    """``s`` per input channel: ``alpha`` = 1 evens out the activation's channels completely (their spread moves into
    the weight), 0 evens out the weight's columns instead; SmoothQuant's default is 0.5, this recipe's 0.75."""
    activation = activation_absmax.float().clamp_min(FLOOR)
    column = weight_column_absmax(weight).clamp_min(FLOOR)
    return (activation.pow(alpha) / column.pow(1 - alpha)).clamp_min(FLOOR)


def input_channel_dim(module: nn.Module) -> int:
    """Where a layer's input holds its channels: dimension 1 of a convolution's, the last of a Linear's."""
    return 1 if isinstance(module, nn.Conv2d) else -1


def per_input_channel(factors: torch.Tensor, dims: int, channel_dim: int) -> torch.Tensor:
    """``factors`` shaped to broadcast along dimension ``channel_dim`` of a ``dims``-dimensional tensor."""
    shape = [1] * dims
    shape[channel_dim] = -1
    return factors.reshape(shape)


def fold_into_weight(weight: torch.Tensor, factors: torch.Tensor) -> torch.Tensor:
    """The weight whose column ``c`` is scaled by ``s_c``: fed ``x / s``, it computes what ``weight`` computes from
    ``x``."""
    return weight.detach().float() * per_input_channel(factors, weight.dim(), 1)
