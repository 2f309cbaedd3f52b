"""Stand-in bases: diffusers pipeline folders with the exact architecture of SD 1.5 or SDXL and random weights.

Their weights cannot be downloaded here, but their shapes and key names are all that loading, converting,
quantizing and serving depend on, and all that memory and speed depend on. The configurations below are the
published ones (``runwayml/stable-diffusion-v1-5``, ``stabilityai/stable-diffusion-xl-base-1.0``); the
``tiny`` sizes keep every class and every architectural switch (dual text encoders, text-time embedding,
linear projections, several transformer layers per block) at a size the tests can build in a second.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import torch
from diffusers import (
    AutoencoderKL,
    EulerDiscreteScheduler,
    PNDMScheduler,
    StableDiffusionPipeline,
    StableDiffusionXLPipeline,
    UNet2DConditionModel,
)
from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection, CLIPTokenizer

from personalq.standin.clip_vocab import VOCAB_SIZE, write_clip_tokenizer_files

log = logging.getLogger(__name__)

Arch = Literal["sd15", "sdxl"]
Size = Literal["real", "tiny"]

_SCHEDULE = {"beta_start": 0.00085, "beta_end": 0.012, "beta_schedule": "scaled_linear", "steps_offset": 1}

_CLIP_L = {  # openai/clip-vit-large-patch14, the text encoder of SD 1.5 and the first of SDXL
    "vocab_size": VOCAB_SIZE,
    "hidden_size": 768,
    "intermediate_size": 3072,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "max_position_embeddings": 77,
    "hidden_act": "quick_gelu",
    "projection_dim": 768,
    "bos_token_id": 0,
    "eos_token_id": 2,
    "pad_token_id": 1,
}
_CLIP_BIG_G = {  # laion/CLIP-ViT-bigG-14, SDXL's second text encoder
    **_CLIP_L,
    "hidden_size": 1280,
    "intermediate_size": 5120,
    "num_hidden_layers": 32,
    "num_attention_heads": 20,
    "hidden_act": "gelu",
    "projection_dim": 1280,
}
_TINY_CLIP = {
    **_CLIP_L,
    "hidden_size": 32,
    "intermediate_size": 37,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "projection_dim": 32,
}

_VAE = {
    "in_channels": 3,
    "out_channels": 3,
    "down_block_types": ["DownEncoderBlock2D"] * 4,
    "up_block_types": ["UpDecoderBlock2D"] * 4,
    "block_out_channels": [128, 256, 512, 512],
    "layers_per_block": 2,
    "latent_channels": 4,
    "norm_num_groups": 32,
    "sample_size": 512,
    "scaling_factor": 0.18215,
}
_TINY_VAE = {
    **_VAE,
    "down_block_types": ["DownEncoderBlock2D"] * 2,
    "up_block_types": ["UpDecoderBlock2D"] * 2,
    "block_out_channels": [32, 64],
    "layers_per_block": 1,
    "sample_size": 64,
}

_SD15_UNET = {
    "sample_size": 64,
    "in_channels": 4,
    "out_channels": 4,
    "down_block_types": ["CrossAttnDownBlock2D"] * 3 + ["DownBlock2D"],
    "up_block_types": ["UpBlock2D"] + ["CrossAttnUpBlock2D"] * 3,
    "block_out_channels": [320, 640, 1280, 1280],
    "layers_per_block": 2,
    "attention_head_dim": 8,
    "cross_attention_dim": 768,
    "norm_num_groups": 32,
}
_SDXL_UNET = {
    "sample_size": 128,
    "in_channels": 4,
    "out_channels": 4,
    "down_block_types": ["DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"],
    "up_block_types": ["CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"],
    "block_out_channels": [320, 640, 1280],
    "layers_per_block": 2,
    "attention_head_dim": [5, 10, 20],
    "transformer_layers_per_block": [1, 2, 10],
    "cross_attention_dim": 2048,
    "use_linear_projection": True,
    "addition_embed_type": "text_time",
    "addition_time_embed_dim": 256,
    "projection_class_embeddings_input_dim": 2816,  # 6 time ids x 256 + the pooled bigG embedding (1280)
    "norm_num_groups": 32,
}
_TINY_SD15_UNET = {
    **_SD15_UNET,
    "sample_size": 8,
    "down_block_types": ["CrossAttnDownBlock2D", "DownBlock2D"],
    "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D"],
    "block_out_channels": [32, 64],
    "layers_per_block": 1,
    "attention_head_dim": 4,
    "cross_attention_dim": 32,
}
_TINY_SDXL_UNET = {
    **_SDXL_UNET,
    "sample_size": 8,
    "down_block_types": ["DownBlock2D", "CrossAttnDownBlock2D"],
    "up_block_types": ["CrossAttnUpBlock2D", "UpBlock2D"],
    "block_out_channels": [32, 64],
    "attention_head_dim": [2, 4],
    "transformer_layers_per_block": [1, 2],
    "cross_attention_dim": 32 + 48,  # both tiny encoders' widths
    "addition_time_embed_dim": 8,
    "projection_class_embeddings_input_dim": 6 * 8 + 48,
}
# the tiny bigG is wider than the tiny CLIP-L, as at real size: diffusers' single-file loading tells the two
# encoders apart by their widths
_TINY_BIG_G = {**_TINY_CLIP, "hidden_size": 48, "projection_dim": 48, "hidden_act": "gelu"}


@dataclass(frozen=True)
class Architecture:
    """One pipeline architecture at one size: the configuration of each component."""

    name: Arch
    label: str
    unet: dict
    text_encoders: tuple[dict, ...]  # SDXL: CLIP-L, then bigG (with its projection)
    vae: dict
    pad_tokens: tuple[str, ...] = field(default=("<|endoftext|>",))

    @property
    def is_xl(self) -> bool:
        return len(self.text_encoders) == 2


ARCHITECTURES: dict[tuple[Arch, Size], Architecture] = {
    ("sd15", "real"): Architecture("sd15", "SD 1.5", _SD15_UNET, (_CLIP_L,), _VAE),
    ("sd15", "tiny"): Architecture("sd15", "SD 1.5 (tiny)", _TINY_SD15_UNET, (_TINY_CLIP,), _TINY_VAE),
    ("sdxl", "real"): Architecture(
        "sdxl",
        "SDXL",
        _SDXL_UNET,
        (_CLIP_L, _CLIP_BIG_G),
        {**_VAE, "sample_size": 1024, "scaling_factor": 0.13025, "force_upcast": True},
        ("<|endoftext|>", "!"),
    ),
    ("sdxl", "tiny"): Architecture(
        "sdxl",
        "SDXL (tiny)",
        _TINY_SDXL_UNET,
        (_TINY_CLIP, _TINY_BIG_G),
        {**_TINY_VAE, "scaling_factor": 0.13025},
        ("<|endoftext|>", "!"),
    ),
}


def tokenizer(vocab_dir: Path, pad_token: str) -> CLIPTokenizer:
    return CLIPTokenizer(
        vocab=str(vocab_dir / "vocab.json"),
        merges=str(vocab_dir / "merges.txt"),
        pad_token=pad_token,
        model_max_length=77,
    )


def build_pipeline(arch: Arch, size: Size = "tiny", seed: int = 0, vocab_dir: Path | None = None):
    """The pipeline in memory, float32, random weights drawn from ``seed``; ``vocab_dir`` holds the converted
    tokenizer files (written to a temporary folder when not given)."""
    spec = ARCHITECTURES[(arch, size)]
    if vocab_dir is None:
        import tempfile

        vocab_dir = Path(tempfile.mkdtemp(prefix="clip-vocab-"))
    if not (vocab_dir / "vocab.json").is_file():
        write_clip_tokenizer_files(vocab_dir)
    torch.manual_seed(seed)
    unet = UNet2DConditionModel(**spec.unet)
    vae = AutoencoderKL(**spec.vae)
    tokenizers = [tokenizer(vocab_dir, pad) for pad in spec.pad_tokens]
    if not spec.is_xl:
        text_encoder = CLIPTextModel(CLIPTextConfig(**spec.text_encoders[0]))
        scheduler = PNDMScheduler(**_SCHEDULE, skip_prk_steps=True, set_alpha_to_one=False)
        return StableDiffusionPipeline(
            vae=vae,
            text_encoder=text_encoder,
            tokenizer=tokenizers[0],
            unet=unet,
            scheduler=scheduler,
            safety_checker=None,
            feature_extractor=None,
            requires_safety_checker=False,
        )
    return StableDiffusionXLPipeline(
        vae=vae,
        text_encoder=CLIPTextModel(CLIPTextConfig(**spec.text_encoders[0])),
        text_encoder_2=CLIPTextModelWithProjection(CLIPTextConfig(**spec.text_encoders[1])),
        tokenizer=tokenizers[0],
        tokenizer_2=tokenizers[1],
        unet=unet,
        scheduler=EulerDiscreteScheduler(**_SCHEDULE, timestep_spacing="leading"),
    )


def write_stand_in(arch: Arch, out: Path, size: Size = "real", seed: int = 0, dtype=torch.float16) -> Path:
    """Write the stand-in base folder (``save_pretrained`` layout, safetensors in ``dtype``) with a README."""
    out = Path(out)
    spec = ARCHITECTURES[(arch, size)]
    vocab_dir = out / "tokenizer"
    write_clip_tokenizer_files(vocab_dir)
    log.info("building %s with random weights", spec.label)
    pipe = build_pipeline(arch, size, seed, vocab_dir)
    pipe.to(dtype)
    pipe.save_pretrained(out, safe_serialization=True)
    (out / "README.md").write_text(
        f"# Stand-in {spec.label} base\n\nRandom weights with the exact {spec.label} architecture (written by "
        f"`personalq base stand-in`): for testing checkpoint formats, quantization, memory and speed at real size; "
        f"it draws noise, not pictures.\n"
    )
    (out / "stand_in.json").write_text(json.dumps({"architecture": arch, "size": size, "seed": seed}) + "\n")
    return out
