"""Diffusers pipeline -> one original-format (LDM / SGM) state dict, as WebUI single-file checkpoints store it.

Personalized checkpoints reach PersonalQ as AUTOMATIC1111 WebUI / Civitai ``.safetensors`` files: one flat state
dict whose key names are those of the original training code (CompVis LDM for SD 1.5, Stability's SGM for SDXL),
not diffusers'. Tests and benchmarks need such files at real and tiny size, and none can be downloaded here, so this
module writes them from a stand-in pipeline (:mod:`personalq.standin.bases`). Nothing in the runtime imports it.

The renaming is the inverse of diffusers' ``single_file_utils`` (``convert_ldm_unet_checkpoint``,
``convert_ldm_vae_checkpoint``, ``convert_ldm_clip_checkpoint``, ``convert_open_clip_checkpoint``) and follows
diffusers' ``scripts/convert_diffusers_to_original_{stable_diffusion,sdxl}.py``, but the module tables are built
from each model's config, so any number of levels, layers per level and transformer blocks is handled:

- UNet under ``model.diffusion_model.``: ``input_blocks.N.{0 resnet, 1 transformer}`` / ``input_blocks.N.0.op``
  (downsampler), ``middle_block.{0,1,2}``, ``output_blocks.N.{0 resnet, 1 transformer, 1|2 upsampler}``,
  ``time_embed``, ``label_emb.0`` (SDXL's text-time embedding), ``out``; the transformers keep diffusers' names.
- VAE under ``first_stage_model.``: ``{encoder.down,decoder.up}.N.block.M`` (decoder levels reversed),
  ``mid.block_{1,2}``, ``mid.attn_1.{norm,q,k,v,proj_out}`` with q/k/v/proj_out as 1x1 conv weights (4-D),
  ``nin_shortcut``, ``norm_out``, ``quant_conv``, ``post_quant_conv``.
- CLIP text encoders (SD 1.5's, SDXL's first) under ``...transformer.text_model.`` in Hugging Face names.
- SDXL's second text encoder (OpenCLIP bigG) under ``conditioner.embedders.1.model.`` in OpenCLIP names: fused
  ``attn.in_proj_weight``/``in_proj_bias`` (q, k, v), ``ln_1``/``ln_2``, ``mlp.c_fc``/``mlp.c_proj``, ``ln_final``
  and ``text_projection`` as the matrix OpenCLIP multiplies by (the transpose of the Linear weight).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import torch
from safetensors.torch import save_file

log = logging.getLogger(__name__)

StateDict = dict[str, torch.Tensor]

UNET_PREFIX = "model.diffusion_model."
VAE_PREFIX = "first_stage_model."
SD15_CLIP_PREFIX = "cond_stage_model.transformer."
SDXL_CLIP_PREFIX = "conditioner.embedders.0.transformer."
SDXL_OPEN_CLIP_PREFIX = "conditioner.embedders.1.model."


class LdmTarget(NamedTuple):
    """Where one diffusers module goes: its LDM prefix, renames of its first sub-module names, and whether its
    Linear weights are stored as 1x1 convolutions."""

    ldm: str
    renames: Mapping[str, str] = {}
    conv1x1: bool = False


# ------------------------------------------------------------------------------------------------------------- UNet

_UNET_RESNET = {
    "norm1": "in_layers.0",
    "conv1": "in_layers.2",
    "time_emb_proj": "emb_layers.1",
    "norm2": "out_layers.0",
    "conv2": "out_layers.3",
    "conv_shortcut": "skip_connection",
}
_UNET_TOP = {
    "time_embedding.linear_1.": LdmTarget("time_embed.0."),
    "time_embedding.linear_2.": LdmTarget("time_embed.2."),
    "add_embedding.linear_1.": LdmTarget("label_emb.0.0."),
    "add_embedding.linear_2.": LdmTarget("label_emb.0.2."),
    "conv_in.": LdmTarget("input_blocks.0.0."),
    "conv_norm_out.": LdmTarget("out.0."),
    "conv_out.": LdmTarget("out.2."),
}


def _per_level(value: int | list[int] | tuple[int, ...], level: int) -> int:
    return value if isinstance(value, int) else value[level]


def _has_attention(block_type: str) -> bool:
    if block_type not in {"CrossAttnDownBlock2D", "DownBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"}:
        raise ValueError(f"no LDM layout for UNet block type {block_type!r}")
    return block_type.startswith("CrossAttn")


def unet_module_table(config: Mapping[str, Any]) -> dict[str, LdmTarget]:
    """Diffusers module prefix -> LDM module prefix for a ``UNet2DConditionModel`` with this config."""
    if config.get("mid_block_type", "UNetMidBlock2DCrossAttn") != "UNetMidBlock2DCrossAttn":
        raise ValueError(f"no LDM layout for UNet mid block {config['mid_block_type']!r}")
    table = dict(_UNET_TOP)
    resnet = LdmTarget("", _UNET_RESNET)
    down_types, up_types = config["down_block_types"], config["up_block_types"]
    layers = config["layers_per_block"]

    index = 1  # input_blocks.0 is conv_in
    for level, block_type in enumerate(down_types):
        attention = _has_attention(block_type)
        for j in range(_per_level(layers, level)):
            table[f"down_blocks.{level}.resnets.{j}."] = resnet._replace(ldm=f"input_blocks.{index}.0.")
            if attention:
                table[f"down_blocks.{level}.attentions.{j}."] = LdmTarget(f"input_blocks.{index}.1.")
            index += 1
        if level < len(down_types) - 1:
            table[f"down_blocks.{level}.downsamplers.0.conv."] = LdmTarget(f"input_blocks.{index}.0.op.")
            index += 1

    table["mid_block.resnets.0."] = resnet._replace(ldm="middle_block.0.")
    table["mid_block.attentions.0."] = LdmTarget("middle_block.1.")
    table["mid_block.resnets.1."] = resnet._replace(ldm="middle_block.2.")

    index = 0
    for level, block_type in enumerate(up_types):
        attention = _has_attention(block_type)
        for j in range(_per_level(layers, len(up_types) - 1 - level) + 1):
            table[f"up_blocks.{level}.resnets.{j}."] = resnet._replace(ldm=f"output_blocks.{index}.0.")
            if attention:
                table[f"up_blocks.{level}.attentions.{j}."] = LdmTarget(f"output_blocks.{index}.1.")
            index += 1
        if level < len(up_types) - 1:
            slot = 2 if attention else 1  # the upsampler follows the last resnet (and its transformer)
            table[f"up_blocks.{level}.upsamplers.0.conv."] = LdmTarget(f"output_blocks.{index - 1}.{slot}.conv.")
    return table


# -------------------------------------------------------------------------------------------------------------- VAE

_VAE_ATTENTION = {"group_norm": "norm", "to_q": "q", "to_k": "k", "to_v": "v", "to_out.0": "proj_out"}
_VAE_RESNET = {"conv_shortcut": "nin_shortcut"}


def vae_module_table(config: Mapping[str, Any]) -> dict[str, LdmTarget]:
    """Diffusers module prefix -> LDM module prefix for an ``AutoencoderKL`` with this config."""
    levels = len(config["block_out_channels"])
    layers = config["layers_per_block"]
    table = {name: LdmTarget(name) for name in ("quant_conv.", "post_quant_conv.")}
    for side in ("encoder", "decoder"):
        table[f"{side}.conv_in."] = LdmTarget(f"{side}.conv_in.")
        table[f"{side}.conv_norm_out."] = LdmTarget(f"{side}.norm_out.")
        table[f"{side}.conv_out."] = LdmTarget(f"{side}.conv_out.")
        table[f"{side}.mid_block.resnets.0."] = LdmTarget(f"{side}.mid.block_1.", _VAE_RESNET)
        table[f"{side}.mid_block.resnets.1."] = LdmTarget(f"{side}.mid.block_2.", _VAE_RESNET)
        table[f"{side}.mid_block.attentions.0."] = LdmTarget(f"{side}.mid.attn_1.", _VAE_ATTENTION, conv1x1=True)
    for level in range(levels):
        down, up = f"encoder.down.{level}.", f"decoder.up.{levels - 1 - level}."  # the decoder counts levels upwards
        for j in range(layers):
            table[f"encoder.down_blocks.{level}.resnets.{j}."] = LdmTarget(f"{down}block.{j}.", _VAE_RESNET)
        for j in range(layers + 1):
            table[f"decoder.up_blocks.{level}.resnets.{j}."] = LdmTarget(f"{up}block.{j}.", _VAE_RESNET)
        if level < levels - 1:
            table[f"encoder.down_blocks.{level}.downsamplers.0.conv."] = LdmTarget(f"{down}downsample.conv.")
            table[f"decoder.up_blocks.{level}.upsamplers.0.conv."] = LdmTarget(f"{up}upsample.conv.")
    return table


# --------------------------------------------------------------------------------------------------------- renaming


def _lookup(key: str, table: Mapping[str, LdmTarget]) -> tuple[str, LdmTarget]:
    """The longest module prefix of ``key`` in ``table``."""
    parts = key.split(".")
    for n in range(len(parts) - 1, 0, -1):
        prefix = ".".join(parts[:n]) + "."
        if prefix in table:
            return prefix, table[prefix]
    raise KeyError(f"no original (LDM) name for {key!r}")


def _rename_tail(tail: str, renames: Mapping[str, str]) -> str:
    for old, new in renames.items():
        if tail.startswith(old + "."):
            return new + tail[len(old) :]
    return tail


def rename_state_dict(state_dict: Mapping[str, torch.Tensor], table: Mapping[str, LdmTarget]) -> StateDict:
    """Rename every key through a module table; a key no module covers is an error, not a silent pass-through."""
    out: StateDict = {}
    for key, tensor in state_dict.items():
        prefix, module = _lookup(key, table)
        tail = _rename_tail(key[len(prefix) :], module.renames)
        if module.conv1x1 and tensor.ndim == 2:
            tensor = tensor.reshape(*tensor.shape, 1, 1)
        out[module.ldm + tail] = tensor
    return out


def unet_to_ldm(state_dict: Mapping[str, torch.Tensor], config: Mapping[str, Any]) -> StateDict:
    """A ``UNet2DConditionModel`` state dict in LDM (SD 1.5) / SGM (SDXL) names, without ``model.diffusion_model.``."""
    return rename_state_dict(state_dict, unet_module_table(config))


def vae_to_ldm(state_dict: Mapping[str, torch.Tensor], config: Mapping[str, Any]) -> StateDict:
    """An ``AutoencoderKL`` state dict in LDM names, without ``first_stage_model.``."""
    return rename_state_dict(state_dict, vae_module_table(config))


# ------------------------------------------------------------------------------------------------------ text models


def _text_model_keys(state_dict: Mapping[str, torch.Tensor]) -> StateDict:
    """Keys relative to the CLIP text transformer, whichever way transformers nests it (``text_model.`` or not)."""
    return {key.removeprefix("text_model."): tensor for key, tensor in state_dict.items()}


def clip_to_ldm(state_dict: Mapping[str, torch.Tensor], extras: bool = True) -> StateDict:
    """A ``CLIPTextModel`` state dict as the original ``FrozenCLIPEmbedder`` holds it (``text_model.`` + Hugging Face
    names). ``extras`` adds the ``embeddings.position_ids`` buffer (int64 ``[[0 .. n-1]]``) that the original
    checkpoints carry (saved with transformers 4.x) and that current transformers no longer stores."""
    out = {"text_model." + key: tensor for key, tensor in _text_model_keys(state_dict).items()}
    if extras and "text_model.embeddings.position_ids" not in out:
        embedding = out["text_model.embeddings.position_embedding.weight"]
        out["text_model.embeddings.position_ids"] = torch.arange(embedding.shape[0], device=embedding.device)[None]
    return out


_OPEN_CLIP_TOP = {
    "embeddings.token_embedding.weight": "token_embedding.weight",
    "embeddings.position_embedding.weight": "positional_embedding",
    "final_layer_norm.weight": "ln_final.weight",
    "final_layer_norm.bias": "ln_final.bias",
}
_OPEN_CLIP_LAYER = {
    "self_attn.out_proj": "attn.out_proj",
    "layer_norm1": "ln_1",
    "layer_norm2": "ln_2",
    "mlp.fc1": "mlp.c_fc",
    "mlp.fc2": "mlp.c_proj",
}
_LAYER_KEY = re.compile(r"encoder\.layers\.(\d+)\.(.+)")
_QKV = re.compile(r"self_attn\.([qkv])_proj\.(weight|bias)")


def open_clip_to_ldm(state_dict: Mapping[str, torch.Tensor], extras: bool = True) -> StateDict:
    """A ``CLIPTextModelWithProjection`` state dict in OpenCLIP names, as SGM's ``FrozenOpenCLIPEmbedder2`` holds it
    (without ``conditioner.embedders.1.model.``): per layer q, k and v fused into ``attn.in_proj_*`` in that order,
    and ``text_projection`` transposed (OpenCLIP computes ``x @ text_projection``). ``extras`` adds the scalar
    ``logit_scale`` the original checkpoints carry from CLIP training (ln 100, unused for text encoding)."""
    out: StateDict = {}
    fused: dict[tuple[str, str], dict[str, torch.Tensor]] = {}
    for key, tensor in _text_model_keys(state_dict).items():
        if key in _OPEN_CLIP_TOP:
            out[_OPEN_CLIP_TOP[key]] = tensor
        elif key == "text_projection.weight":
            out["text_projection"] = tensor.T.contiguous()
        elif match := _LAYER_KEY.fullmatch(key):
            layer, tail = match.groups()
            if qkv := _QKV.fullmatch(tail):
                fused.setdefault((layer, qkv.group(2)), {})[qkv.group(1)] = tensor
            else:
                out[f"transformer.resblocks.{layer}.{_rename_tail(tail, _OPEN_CLIP_LAYER)}"] = tensor
        else:
            raise KeyError(f"no OpenCLIP name for {key!r}")
    for (layer, kind), parts in fused.items():
        if sorted(parts) != ["k", "q", "v"]:
            raise KeyError(f"text encoder layer {layer} lacks some of q, k, v ({kind})")
        out[f"transformer.resblocks.{layer}.attn.in_proj_{kind}"] = torch.cat([parts["q"], parts["k"], parts["v"]])
    if extras:
        embedding = out["token_embedding.weight"]
        out["logit_scale"] = torch.tensor(math.log(100.0), dtype=embedding.dtype, device=embedding.device)
    return out


# --------------------------------------------------------------------------------------------------------- pipeline


def _prefixed(prefix: str, state_dict: Mapping[str, torch.Tensor]) -> StateDict:
    return {prefix + key: tensor for key, tensor in state_dict.items()}


def pipeline_to_ldm(pipe: Any, extras: bool = True) -> StateDict:
    """The UNet, VAE and text encoder(s) of a ``StableDiffusionPipeline`` or ``StableDiffusionXLPipeline`` as one
    state dict in original key names (the tensors are the models' own, not copies, except where fused or reshaped);
    ``extras`` adds the original files' unused ``position_ids`` / ``logit_scale``. Works on ``meta`` models too."""
    if getattr(pipe, "text_encoder", None) is None:
        raise ValueError("the pipeline has no (first) text encoder; SDXL refiners are not supported")
    state = _prefixed(UNET_PREFIX, unet_to_ldm(pipe.unet.state_dict(), pipe.unet.config))
    state |= _prefixed(VAE_PREFIX, vae_to_ldm(pipe.vae.state_dict(), pipe.vae.config))
    text_encoder_2 = getattr(pipe, "text_encoder_2", None)
    clip = clip_to_ldm(pipe.text_encoder.state_dict(), extras)
    if text_encoder_2 is None:
        state |= _prefixed(SD15_CLIP_PREFIX, clip)
    else:
        state |= _prefixed(SDXL_CLIP_PREFIX, clip)
        state |= _prefixed(SDXL_OPEN_CLIP_PREFIX, open_clip_to_ldm(text_encoder_2.state_dict(), extras))
    return state


def write_ldm_checkpoint(
    pipe: Any,
    path: str | Path,
    dtype: torch.dtype | None = None,
    metadata: Mapping[str, str] | None = None,
    extras: bool = True,
) -> Path:
    """Write ``pipe`` as a WebUI-style single-file ``.safetensors`` checkpoint; ``dtype`` casts the floating-point
    tensors (``None`` keeps the pipeline's)."""
    path = Path(path)
    state = pipeline_to_ldm(pipe, extras)
    if dtype is not None:
        state = {key: t.to(dtype) if t.is_floating_point() else t for key, t in state.items()}
    state = {key: t.detach().contiguous() for key, t in state.items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(state, str(path), metadata={"format": "pt", **(metadata or {})})
    size = sum(t.numel() * t.element_size() for t in state.values())
    log.info("wrote %s: %d tensors, %.1f MiB", path, len(state), size / 2**20)
    return path
