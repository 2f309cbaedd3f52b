"""Training the demo base model: rendered data -> VAE -> latents -> text-conditioned UNet -> pipeline folder."""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from diffusers import AutoencoderKL, StableDiffusionPipeline, UNet2DConditionModel

from personalq.zoo import models
from personalq.zoo.catalog import TINT_NAMES
from personalq.zoo.data import RenderedSet, base_training_set, random_subject, render_set, to_pixels
from personalq.zoo.training import Run, RunConfig, diffusion_loss, reconstruction_loss, vae_loss

log = logging.getLogger(__name__)
CAPTION_DROPOUT = 0.1  # unconditional examples, so classifier-free guidance has something to subtract


@dataclass
class BaseBuildConfig:
    """The recipe the shipped base was trained with, sized for a GPU.

    On a CPU the same UNet stage would take days, and the earlier recipe sized for one (8,000 steps at batch 32 on
    the first 20,000 images) left the base far less able to draw its categories. Times and category rates of both:
    benchmarks/README.md, demo zoo.
    """

    images: int = 100000
    vae_steps: int = 1200
    vae_batch: int = 16
    unet_steps: int = 17000
    unet_batch: int = 256
    unet_lr: float = 5e-4
    # the decoder's second pass, on renders in every tint (see ``finetune_decoder``)
    decoder_images: int = 40000
    decoder_steps: int = 12000
    decoder_batch: int = 64
    decoder_lr: float = 2e-4
    seed: int = 0


def build_dataset(work: Path, cfg: BaseBuildConfig) -> RenderedSet:
    path = work / "base_set.npz"
    if not path.exists():
        base_training_set(cfg.images, cfg.seed).save(path)
    return RenderedSet.load(path)


def train_vae(work: Path, data: RenderedSet, cfg: BaseBuildConfig, device: str = "cpu") -> AutoencoderKL:
    out = work / "vae"
    if (out / "config.json").exists():
        return AutoencoderKL.from_pretrained(out).to(device)
    torch.manual_seed(cfg.seed)
    vae = models.make_vae().to(device)
    pixels = to_pixels(data.images).to(device)
    gen = torch.Generator(device).manual_seed(cfg.seed)

    def loss(step: int) -> torch.Tensor:
        idx = torch.randint(0, len(pixels), (cfg.vae_batch,), generator=gen, device=device)
        return vae_loss(vae, pixels[idx])

    run = Run("vae", vae, vae.parameters(), RunConfig(cfg.vae_steps, lr=1e-3, warmup=50), work / "vae.state.pt")
    vae = run.train(loss).eval()
    with torch.no_grad():
        latents = torch.cat(
            [vae.encode(pixels[i : i + 256]).latent_dist.mean for i in range(0, min(2048, len(pixels)), 256)]
        )
    vae.register_to_config(scaling_factor=float(1.0 / latents.std()))
    vae.save_pretrained(out)
    return vae


def finetune_decoder(work: Path, vae: AutoencoderKL, cfg: BaseBuildConfig, device: str = "cpu") -> AutoencoderKL:
    """The VAE's decoder trained again on renders in every tint, its encoder frozen.

    The VAE first learns from the base set, where every subject keeps its natural colours, and then cannot
    draw a tint back: a teal taxi comes back azure, a golden purse orange, whatever latent the UNet makes.
    Training only the decoder (as Stability's sd-vae-ft-mse did) keeps the latent space, so the UNet and every
    personalized checkpoint trained on it stay valid.
    """
    out = work / "vae-decoder"
    if (out / "config.json").exists():
        return AutoencoderKL.from_pretrained(out).to(device)
    rng = np.random.default_rng(cfg.seed + 2)
    subjects = [
        random_subject(rng, tint=TINT_NAMES[int(rng.integers(len(TINT_NAMES)))]) for _ in range(cfg.decoder_images)
    ]
    pixels = to_pixels(render_set(subjects, cfg.seed + 3, desc="render tinted set").images).to(device)
    vae = copy.deepcopy(vae).to(device).train()
    vae.encoder.requires_grad_(False)
    vae.quant_conv.requires_grad_(False)
    gen = torch.Generator(device).manual_seed(cfg.seed + 2)

    def loss(step: int) -> torch.Tensor:
        images = pixels[torch.randint(0, len(pixels), (cfg.decoder_batch,), generator=gen, device=device)]
        with torch.no_grad():
            latents = vae.encode(images).latent_dist.sample(gen)
        return reconstruction_loss(vae.decode(latents).sample, images)

    run = Run(
        "vae decoder",
        vae,
        vae.parameters(),
        RunConfig(cfg.decoder_steps, lr=cfg.decoder_lr, warmup=100),
        work / "vae-decoder.state.pt",
    )
    vae = run.train(loss).eval()
    vae.to("cpu").save_pretrained(out)
    return vae.to(device)


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
            dist = vae.encode(pixels[i : i + 256].to(vae.device)).latent_dist
            means.append((dist.mean * vae.config.scaling_factor).cpu())
            stds.append((dist.std * vae.config.scaling_factor).cpu())
    mean, std = torch.cat(means), torch.cat(stds)
    torch.save({"mean": mean, "std": std}, path)
    return mean, std


def encode_captions(work: Path, captions: list[str], device: str = "cpu") -> torch.Tensor:
    path = work / "text.pt"
    if path.exists():
        return torch.load(path, weights_only=True)
    embeds = (
        models.encode_text(models.load_tokenizer(), models.load_text_encoder().to(device), captions + [""])
        .half()
        .cpu()
    )
    torch.save(embeds, path)
    return embeds


def prior_data(work: Path, vae: AutoencoderKL, cfg: BaseBuildConfig, device: str = "cpu") -> None:
    """Base-set renders, latents and caption embeddings in ``work``, where personalization draws its
    prior-preservation batches from. A build leaves them behind; a ready-made base (the shipped zoo in a fresh
    clone) comes without them, so they are rendered and encoded again (any VAE with the same encoder will do)."""
    data = build_dataset(work, cfg)
    encode_latents(work, vae, data)
    encode_captions(work, data.captions, device)


def train_unet(
    work: Path,
    latents: tuple[torch.Tensor, torch.Tensor],
    text: torch.Tensor,
    cfg: BaseBuildConfig,
    device: str = "cpu",
) -> UNet2DConditionModel:
    """Data, model and random draws all live on ``device``: on a GPU the loop never waits on the host."""
    out = work / "unet"
    if (out / "config.json").exists():
        return UNet2DConditionModel.from_pretrained(out)
    torch.manual_seed(cfg.seed)
    unet = models.make_unet().to(device)
    scheduler = models.make_train_scheduler()
    mean, std, text = latents[0].to(device), latents[1].to(device), text.to(device)
    empty = len(text) - 1
    gen = torch.Generator(device).manual_seed(cfg.seed + 1)

    def loss(step: int) -> torch.Tensor:
        idx = torch.randint(0, len(mean), (cfg.unet_batch,), generator=gen, device=device)
        z = mean[idx] + std[idx] * torch.randn(mean[idx].shape, generator=gen, device=device)
        drop = torch.rand(cfg.unet_batch, generator=gen, device=device) < CAPTION_DROPOUT
        cond = text[torch.where(drop, torch.full_like(idx, empty), idx)].float()
        return diffusion_loss(unet, scheduler, z, cond, gen)

    config = RunConfig(cfg.unet_steps, lr=cfg.unet_lr, warmup=200, ema_decay=0.999)
    trained = Run("unet", unet, unet.parameters(), config, work / "unet.state.pt").train(loss)
    trained.to("cpu").save_pretrained(out)
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


def build_base(work: Path, out: Path, cfg: BaseBuildConfig, device: str = "cpu") -> Path:
    """Run every base stage that has not finished yet and write the pipeline folder to ``out``."""
    data = build_dataset(work, cfg)
    vae = train_vae(work, data, cfg, device)
    latents = encode_latents(work, vae, data)
    text = encode_captions(work, data.captions, device)
    unet = train_unet(work, latents, text, cfg, device)
    vae = finetune_decoder(work, vae, cfg, device)
    assemble_pipeline(vae.to("cpu"), unet).save_pretrained(out)
    return out
