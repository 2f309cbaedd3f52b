"""Training the demo base model: rendered data -> VAE -> latents -> text-conditioned UNet -> pipeline folder."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import torch
from diffusers import AutoencoderKL, StableDiffusionPipeline, UNet2DConditionModel

from personalq.zoo import models
from personalq.zoo.data import RenderedSet, base_training_set, to_pixels
from personalq.zoo.training import Run, RunConfig, diffusion_loss, vae_loss

log = logging.getLogger(__name__)
CAPTION_DROPOUT = 0.1  # unconditional examples, so classifier-free guidance has something to subtract


@dataclass
class BaseBuildConfig:
    images: int = 20000
    vae_steps: int = 1200
    vae_batch: int = 16
    unet_steps: int = 8000
    unet_batch: int = 32
    seed: int = 0


def build_dataset(work: Path, cfg: BaseBuildConfig) -> RenderedSet:
    path = work / "base_set.npz"
    if not path.exists():
        base_training_set(cfg.images, cfg.seed).save(path)
    return RenderedSet.load(path)


def train_vae(work: Path, data: RenderedSet, cfg: BaseBuildConfig) -> AutoencoderKL:
    out = work / "vae"
    if (out / "config.json").exists():
        return AutoencoderKL.from_pretrained(out)
    torch.manual_seed(cfg.seed)
    vae = models.make_vae()
    pixels = to_pixels(data.images)
    gen = torch.Generator().manual_seed(cfg.seed)

    def loss(step: int) -> torch.Tensor:
        idx = torch.randint(0, len(pixels), (cfg.vae_batch,), generator=gen)
        return vae_loss(vae, pixels[idx])

    run = Run("vae", vae, vae.parameters(), RunConfig(cfg.vae_steps, lr=1e-3, warmup=50), work / "vae.state.pt")
    vae = run.train(loss).eval()
    with torch.no_grad():
        latents = torch.cat([vae.encode(pixels[i : i + 256]).latent_dist.mean for i in range(0, min(2048, len(pixels)), 256)])
    vae.register_to_config(scaling_factor=float(1.0 / latents.std()))
    vae.save_pretrained(out)
    return vae


def encode_latents(work: Path, vae: AutoencoderKL, data: RenderedSet) -> tuple[torch.Tensor, torch.Tensor]:
    """Posterior mean and std of every training image, scaled by the VAE's scaling factor."""
    path = work / "latents.pt"
    if path.exists():
        saved = torch.load(path, weights_only=True)
        return saved["mean"], saved["std"]
    pixels = to_pixels(data.images)
    means, stds = [], []
    with torch.no_grad():
        for i in range(0, len(pixels), 256):
            dist = vae.encode(pixels[i : i + 256]).latent_dist
            means.append(dist.mean * vae.config.scaling_factor)
            stds.append(dist.std * vae.config.scaling_factor)
    mean, std = torch.cat(means), torch.cat(stds)
    torch.save({"mean": mean, "std": std}, path)
    return mean, std


def encode_captions(work: Path, captions: list[str]) -> torch.Tensor:
    path = work / "text.pt"
    if path.exists():
        return torch.load(path, weights_only=True)
    embeds = models.encode_text(models.load_tokenizer(), models.load_text_encoder(), captions + [""]).half()
    torch.save(embeds, path)
    return embeds


def train_unet(work: Path, latents: tuple[torch.Tensor, torch.Tensor], text: torch.Tensor, cfg: BaseBuildConfig) -> UNet2DConditionModel:
    out = work / "unet"
    if (out / "config.json").exists():
        return UNet2DConditionModel.from_pretrained(out)
    torch.manual_seed(cfg.seed)
    unet = models.make_unet()
    scheduler = models.make_train_scheduler()
    mean, std = latents
    empty = len(text) - 1
    gen = torch.Generator().manual_seed(cfg.seed + 1)

    def loss(step: int) -> torch.Tensor:
        idx = torch.randint(0, len(mean), (cfg.unet_batch,), generator=gen)
        z = mean[idx] + std[idx] * torch.randn(mean[idx].shape, generator=gen)
        drop = torch.rand(cfg.unet_batch, generator=gen) < CAPTION_DROPOUT
        cond = text[torch.where(drop, torch.full_like(idx, empty), idx)].float()
        return diffusion_loss(unet, scheduler, z, cond, gen)

    config = RunConfig(cfg.unet_steps, lr=4e-4, warmup=200, ema_decay=0.999)
    trained = Run("unet", unet, unet.parameters(), config, work / "unet.state.pt").train(loss)
    trained.save_pretrained(out)
    return trained


def assemble_pipeline(vae: AutoencoderKL, unet: UNet2DConditionModel) -> StableDiffusionPipeline:
    return StableDiffusionPipeline(
        vae=vae,
        text_encoder=models.load_text_encoder(),
        tokenizer=models.load_tokenizer(),
        unet=unet,
        scheduler=models.make_inference_scheduler(),
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )


def build_base(work: Path, out: Path, cfg: BaseBuildConfig) -> Path:
    """Run every base stage that has not finished yet and write the pipeline folder to ``out``."""
    data = build_dataset(work, cfg)
    vae = train_vae(work, data, cfg)
    latents = encode_latents(work, vae, data)
    text = encode_captions(work, data.captions)
    unet = train_unet(work, latents, text, cfg)
    assemble_pipeline(vae, unet).save_pretrained(out)
    return out
