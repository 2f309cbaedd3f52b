"""Cheap denoising previews: latents to RGB through a linear map fitted once per VAE, instead of a VAE decode.

Decoding every step's latents with the full VAE costs as much as a denoising step at 512 px on a CPU. The four
latent channels of an SD-style VAE are close to a linear function of the colour at that place (ComfyUI and the
WebUI ship such 4x3 "latent RGB factors" for the published VAEs), so a preview is one small matrix product,
upscaled to a readable size. The factors are fitted here for whatever VAE the base has (the demo's own, a
stand-in's random one) by least squares on smooth random colour fields encoded by that VAE; the final image is
always a full decode.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from PIL import Image

PREVIEW_SIDE = 256  # pixels a preview is drawn at, whatever the latent size


@dataclass(frozen=True)
class LatentRGB:
    """RGB in [-1, 1] = latents (as the pipeline holds them, scaled) x ``weight`` + ``bias``."""

    weight: torch.Tensor  # [channels, 3]
    bias: torch.Tensor  # [3]

    def __call__(self, latents: torch.Tensor) -> torch.Tensor:
        """[channels, h, w] -> [3, h, w]."""
        flat = latents.float().flatten(1).T  # [h*w, channels]
        return (flat @ self.weight + self.bias).T.reshape(3, *latents.shape[1:])


def colour_fields(count: int, side: int, seed: int = 0) -> torch.Tensor:
    """Smooth random images in [-1, 1]: coarse random colours, bilinearly upsampled (what a VAE reproduces well)."""
    generator = torch.Generator().manual_seed(seed)
    coarse = torch.rand(count, 3, 4, 4, generator=generator) * 2 - 1
    return F.interpolate(coarse, size=(side, side), mode="bilinear", align_corners=False)


@torch.no_grad()
def fit_latent_rgb(vae, samples: int = 16, side: int = 64, seed: int = 0) -> LatentRGB:
    """Least-squares factors from ``samples`` colour fields encoded by ``vae`` (a few encodes at ``side`` px)."""
    images = colour_fields(samples, side, seed).to(vae.device, vae.dtype)
    latents = vae.encode(images).latent_dist.mean.float() * vae.config.scaling_factor
    targets = F.adaptive_avg_pool2d(images.float(), latents.shape[-2:])
    x = latents.permute(0, 2, 3, 1).reshape(-1, latents.shape[1]).cpu()
    y = targets.permute(0, 2, 3, 1).reshape(-1, 3).cpu()
    design = torch.cat([x, torch.ones(len(x), 1)], dim=1)
    solution = torch.linalg.lstsq(design, y).solution  # [channels + 1, 3]
    return LatentRGB(solution[:-1], solution[-1])


def preview_image(latents: torch.Tensor, factors: LatentRGB, side: int = PREVIEW_SIDE, index: int = 0) -> Image.Image:
    """Image ``index`` of a latent batch as a PIL preview, ``side`` pixels on its longer edge."""
    rgb = factors(latents[index].detach().cpu()).clamp(-1, 1)
    height, width = rgb.shape[-2:]
    scale = side / max(height, width)
    rgb = F.interpolate(rgb[None], size=(round(height * scale), round(width * scale)), mode="bilinear")[0]
    pixels = ((rgb + 1) * 127.5).round().clamp(0, 255).to(torch.uint8).permute(1, 2, 0).numpy()
    return Image.fromarray(pixels)


def readable(image: Image.Image, side: int = PREVIEW_SIDE) -> Image.Image:
    """An image enlarged to ``side`` pixels on its longer edge when smaller (the demo's 64 px final image beside
    its previews); larger images are left as they are."""
    scale = side / max(image.size)
    if scale <= 1:
        return image
    return image.resize((round(image.width * scale), round(image.height * scale)), Image.Resampling.BICUBIC)
