"""Previews drawn from the latents through a fitted linear map, instead of a VAE decode per step."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from diffusers import AutoencoderKL
from PIL import Image

from personalq.config import DEFAULT_ASSETS
from personalq.serving.previews import PREVIEW_SIDE, colour_fields, fit_latent_rgb, preview_image, readable


@torch.no_grad()
def test_the_fitted_map_gets_the_colours_about_as_right_as_the_vae_decoder():
    vae = AutoencoderKL.from_pretrained(DEFAULT_ASSETS / "zoo" / "base" / "vae")
    factors = fit_latent_rgb(vae, seed=0)
    images = colour_fields(8, 64, seed=5)  # other fields than the fit saw
    latents = vae.encode(images).latent_dist.mean * vae.config.scaling_factor
    truth = F.adaptive_avg_pool2d(images, latents.shape[-2:])
    previewed = torch.stack([factors(latent) for latent in latents])
    decoded = F.adaptive_avg_pool2d(vae.decode(latents / vae.config.scaling_factor).sample, latents.shape[-2:])
    preview_error, decode_error = F.mse_loss(previewed, truth), F.mse_loss(decoded, truth)
    assert preview_error < 1.5 * decode_error  # the demo VAE is lossy itself
    assert preview_error < 0.6 * truth.var()  # far better than a flat grey
    image = preview_image(latents, factors)
    assert image.size == (PREVIEW_SIDE, PREVIEW_SIDE)


def test_small_images_are_enlarged_for_the_eye_and_large_ones_left_alone():
    assert readable(Image.new("RGB", (64, 32))).size == (PREVIEW_SIDE, PREVIEW_SIDE // 2)
    large = Image.new("RGB", (512, 512))
    assert readable(large) is large


def test_previews_come_on_the_first_step_and_then_once_per_interval(monkeypatch):
    from types import SimpleNamespace

    from personalq.serving import generation

    clock = SimpleNamespace(now=0.0)
    monkeypatch.setattr(generation, "time", SimpleNamespace(perf_counter=lambda: clock.now))

    def pipeline(callback) -> str:
        for step in range(6):
            clock.now += 0.02  # a step every 20 ms
            callback(None, step, 0, {"latents": step})
        return "final"

    def drawn(latents) -> str:
        return f"preview {latents}"

    every = list(generation.stream(pipeline, 6, preview=drawn))
    assert [f.image for f in every] == [f"preview {i}" for i in range(6)] + ["final"]
    sparse = list(generation.stream(pipeline, 6, preview=drawn, preview_interval_s=0.05))
    assert [f.step for f in sparse] == [1, 2, 3, 4, 5, 6, 6]
    assert [f.image for f in sparse] == ["preview 0", None, None, "preview 3", None, None, "final"]
