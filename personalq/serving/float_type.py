"""The float type a base computes in on this machine.

On CUDA: bfloat16 where the GPU supports it, else float16 (``PERSONALQ_GPU_DTYPE``). On the CPU: bfloat16 where
the processor has bfloat16 units and the base's UNet is wide enough to gain from them, else float32
(``PERSONALQ_CPU_DTYPE``). Emulated bfloat16 is slower than float32, and bfloat16 units pay only on large
products: they halve an SD 1.5 image (1280 channels at its widest) and leave the demo zoo's UNet (128 channels) as
fast as in float32 while moving its images (``benchmarks/README.md``, CPU float type). So the demo keeps float32,
and with it the images its evaluation was run on, while a real base gets the faster type.

The type covers the whole pipeline (text encoders, UNet, VAE). Quantized variants follow it: their float parts are
cast to it (:func:`personalq.taq.quantize.match_float_dtype`) and their integer kernels round their input in it. A
stored variant serves every type: it was calibrated in whichever type made it, whose activation ranges differ from
another type's by rounding only.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from personalq.config import Settings
from personalq.hardware import native_bf16

# The narrowest UNet (widest block, in channels) that computes in bfloat16 on a CPU with bfloat16 units: SD 1.x/2.x
# and SDXL reach 1280, the demo zoo 128, the test suite's tiny stand-ins 64.
WIDE_UNET_CHANNELS = 320


def unet_width(location: str) -> int | None:
    """The widest block of the UNet of the pipeline folder at ``location``; None for a Hub id or an unreadable
    config."""
    config = Path(location) / "unet" / "config.json"
    try:
        return max(int(channels) for channels in json.loads(config.read_text())["block_out_channels"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def float_dtype(settings: Settings, location: str) -> torch.dtype:
    """The float type of the base pipeline at ``location`` (a folder or a Hub id) on the settings' device."""
    if settings.resolved_device() == "cuda":
        if settings.gpu_dtype == "auto":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return getattr(torch, settings.gpu_dtype)
    if settings.cpu_dtype != "auto":
        return getattr(torch, settings.cpu_dtype)
    width = unet_width(location)
    wide = width is None or width >= WIDE_UNET_CHANNELS  # a Hub id is a published base: all of them are wide
    return torch.bfloat16 if wide and native_bf16() else torch.float32


def type_name(dtype: torch.dtype) -> str:
    """``bfloat16``, ``float32``: how the app and the command line name a float type."""
    return str(dtype).removeprefix("torch.")
