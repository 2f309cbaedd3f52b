"""AdaRound (Nagel et al., 2020): learn, per weight, whether to round up or down.

Round-to-nearest is optimal for each weight alone but not for the layer's output; AdaRound keeps the
MSE-searched grid and optimizes a soft rounding offset per weight against the layer's full-precision output
on calibration inputs, with a regularizer that anneals the offsets to exactly 0 or 1.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from personalq.taq.quantizers import QuantizedWeight, QuantSpec, search_range, weight_rows

ZETA, GAMMA = 1.1, -0.1  # the rectified sigmoid's stretch, from the paper


def _rectified(v: torch.Tensor) -> torch.Tensor:
    return torch.clamp(torch.sigmoid(v) * (ZETA - GAMMA) + GAMMA, 0, 1)


def _apply(module: nn.Module, weight: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    if isinstance(module, nn.Conv2d):
        return F.conv2d(x, weight, None, module.stride, module.padding, module.dilation, module.groups)
    return F.linear(x, weight)


def adaround_weight(
    module: nn.Module,
    inputs: list[torch.Tensor],
    spec: QuantSpec,
    iterations: int = 300,
    regularization: float = 0.01,
    lr: float = 1e-2,
    weight: torch.Tensor | None = None,
) -> QuantizedWeight:
    """Quantize ``weight`` (default: the module's own) as the layer computing from ``inputs``."""
    if spec.kind != "linear":
        raise ValueError("AdaRound learns rounding on a uniform grid: use it with the linear quantizer")
    if not inputs:
        raise ValueError("AdaRound needs captured layer inputs: calibrate with keep_inputs > 0")
    weight = (module.weight if weight is None else weight).detach().float()
    rows = weight_rows(weight, spec)
    lo, hi = search_range(rows, spec)
    scale = ((hi - lo) / (spec.levels - 1)).clamp_min(1e-12)
    position = (rows - lo) / scale
    floor = torch.floor(position)
    rest = (position - floor).clamp(0.01, 0.99)
    v = (-torch.log((ZETA - GAMMA) / (rest - GAMMA) - 1)).requires_grad_(True)
    x = torch.cat([i.float() for i in inputs])
    with torch.no_grad():
        target = _apply(module, weight, x)
    optimizer = torch.optim.Adam([v], lr=lr)
    with torch.enable_grad():  # quantization as a whole runs under no_grad
        _optimize(module, v, floor, scale, lo, weight.shape, x, target, optimizer, spec, iterations, regularization)
    with torch.no_grad():
        codes = torch.clamp(floor + (_rectified(v) >= 0.5).float(), 0, spec.levels - 1)
    return QuantizedWeight(codes.to(torch.int16), scale, lo, weight.shape, spec)


def _optimize(
    module, v, floor, scale, lo, shape, x, target, optimizer, spec: QuantSpec, iterations: int, regularization: float
) -> None:
    for step in range(iterations):
        soft = _rectified(v)
        codes = torch.clamp(floor + soft, 0, spec.levels - 1)
        approx = (codes * scale + lo).reshape(shape)
        loss = F.mse_loss(_apply(module, approx, x), target)
        warm = step < iterations // 5
        if not warm:
            beta = 20 - (20 - 2) * (step - iterations // 5) / max(iterations - iterations // 5, 1)
            loss = loss + regularization * (1 - (2 * soft - 1).abs().pow(beta)).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
