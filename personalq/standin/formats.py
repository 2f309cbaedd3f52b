"""Stand-in adapter files: LoRAs and textual-inversion embeddings in every format people download, with random weights.

Tests and benchmarks need real files of each format (kohya-ss LoRA and LoCon, diffusers' LoRA file, a PEFT folder,
AUTOMATIC1111 / kohya ``emb_params`` embeddings, SDXL ``clip_l``/``clip_g`` embeddings, diffusers' textual-inversion
concept folder), and none of these can be downloaded here. Each writer reproduces what the producing tool writes:
the tensor names, shapes, dtypes and header metadata, read from its source (kohya-ss/sd-scripts
``networks/lora.py``, ``train_network.py``, ``train_textual_inversion.py``, ``library/sai_model_spec.py``;
diffusers' ``save_lora_weights`` and ``examples/textual_inversion``; peft's ``save_pretrained``). Only the values
are random, drawn from ``seed`` and big enough that the generated image visibly changes.

Module names and shapes come from the pipeline given (a tiny stand-in, a real-size one, or one built on the
``meta`` device: only names and shapes are read), so the same writers serve tests and real-size benchmarks.
Nothing in the runtime imports this module.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import math
import random
from dataclasses import dataclass
from pathlib import Path

import safetensors.torch
import torch
from torch import nn

# kohya-ss/sd-scripts at the commit these writers follow; written where sd-scripts writes its own revision
SD_SCRIPTS_COMMIT = "48d368fa557731ad0488c07304dfeba8c07910eb"
STARTED_AT = 1_714_550_400.0  # a fixed training start, so that files are reproducible from the seed

# networks/lora.py: LoRANetwork.*_TARGET_REPLACE_MODULE
_UNET_TARGETS = ("Transformer2DModel",)
_UNET_CONV_TARGETS = ("ResnetBlock2D", "Downsample2D", "Upsample2D")
_TEXT_TARGETS = ("CLIPAttention", "CLIPSdpaAttention", "CLIPMLP")

# what diffusers' LoRA training scripts target (train_text_to_image_lora.py, train_dreambooth_lora_sdxl.py)
DIFFUSERS_UNET_TARGETS = ("to_k", "to_q", "to_v", "to_out.0")
DIFFUSERS_TEXT_TARGETS = ("q_proj", "k_proj", "v_proj", "out_proj")

# diffusers ResnetBlock2D child -> the SGM (Stability generative-models) name kohya's SDXL UNet uses
_SGM_RESNET = {
    "conv1": "in_layers.2",
    "time_emb_proj": "emb_layers.1",
    "conv2": "out_layers.3",
    "conv_shortcut": "skip_connection",
}


def is_xl(pipe) -> bool:
    return getattr(pipe, "text_encoder_2", None) is not None


def _text_encoders(pipe) -> list[tuple[str, nn.Module]]:
    encoders = [("text_encoder", pipe.text_encoder)]
    if is_xl(pipe):
        encoders.append(("text_encoder_2", pipe.text_encoder_2))
    return encoders


def text_module_name(encoder: nn.Module, path: str) -> str:
    """A CLIP text encoder module's name as files name it: under ``text_model.``, which transformers 5 dropped from
    ``CLIPTextModel`` (not from ``CLIPTextModelWithProjection``) but every file in circulation has."""
    return path if hasattr(encoder, "text_model") else "text_model." + path


# --- kohya-ss -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KohyaModule:
    """One module a kohya LoRA adapts: its kohya name, where it lives in the diffusers pipeline, and its rank."""

    lora_name: str  # e.g. lora_unet_input_blocks_4_1_transformer_blocks_0_attn1_to_q
    component: str  # "unet", "text_encoder", "text_encoder_2"
    path: str  # the module's name inside that component (diffusers naming)
    module: nn.Module
    rank: int
    alpha: float


def sgm_module_name(path: str, unet) -> str:
    """The name of a diffusers UNet module in the original SGM / LDM UNet (``input_blocks``, ``middle_block``,
    ``output_blocks``), which kohya-ss trains SDXL on: the inverse of diffusers'
    ``_maybe_map_sgm_blocks_to_diffusers``."""
    per_block = unet.config.layers_per_block
    if not isinstance(per_block, int):
        raise ValueError("SGM names need the same number of layers in every block")
    parts = path.split(".")
    head, rest = parts[:4], parts[4:]
    if head[0] == "mid_block":
        kind, index, rest = parts[1], int(parts[2]), parts[3:]
        block = "middle_block." + str({("resnets", 0): 0, ("attentions", 0): 1, ("resnets", 1): 2}[(kind, index)])
    elif head[0] in ("down_blocks", "up_blocks"):
        block_index, kind, layer = int(head[1]), head[2], int(head[3])
        if head[0] == "down_blocks":
            if kind == "downsamplers":
                block = f"input_blocks.{(block_index + 1) * (per_block + 1)}.0"
                rest = ["op" if p == "conv" else p for p in rest]
            else:
                block = f"input_blocks.{1 + block_index * (per_block + 1) + layer}.{0 if kind == 'resnets' else 1}"
        else:
            first = block_index * (per_block + 1)
            if kind == "upsamplers":
                inner = 2 if hasattr(unet.up_blocks[block_index], "attentions") else 1
                block = f"output_blocks.{first + per_block}.{inner}"
            else:
                block = f"output_blocks.{first + layer}.{0 if kind == 'resnets' else 1}"
    else:
        raise ValueError(f"{path}: kohya adapts no module outside the UNet's blocks")
    if kind == "resnets":
        rest = [_SGM_RESNET.get(rest[0], rest[0])] + rest[1:]
    return ".".join([block, *rest])


def kohya_modules(
    pipe,
    rank: int = 4,
    alpha: float = 1.0,
    conv_rank: int | None = None,
    conv_alpha: float | None = None,
    text_encoder: bool = True,
) -> list[KohyaModule]:
    """The modules kohya-ss ``networks.lora`` (``LoRANetwork.create_modules``) adapts in ``pipe``, in its order:
    text encoders first, then the UNet. Linear layers and 1x1 convolutions get ``rank``/``alpha``; 3x3 convolutions
    (ResNet blocks, down- and upsamplers) only with ``conv_rank`` (the LoCon ``conv_dim`` network argument)."""
    if conv_rank is not None and conv_alpha is None:
        conv_alpha = 1.0  # create_network's default
    xl = is_xl(pipe)
    found: list[KohyaModule] = []

    def collect(component: str, prefix: str, root: nn.Module, targets: tuple[str, ...], rename=None) -> None:
        for name, module in root.named_modules():
            if type(module).__name__ not in targets:
                continue
            for child_name, child in module.named_modules():
                is_linear = type(child).__name__ == "Linear"
                is_conv = type(child).__name__ == "Conv2d"
                if not (is_linear or is_conv):
                    continue
                path = f"{name}.{child_name}"
                kohya_path = rename(path) if rename else path
                if is_linear or child.kernel_size == (1, 1):
                    dim, dim_alpha = rank, alpha
                elif conv_rank:
                    dim, dim_alpha = conv_rank, conv_alpha
                else:
                    continue
                lora_name = f"{prefix}.{kohya_path}".replace(".", "_")
                found.append(KohyaModule(lora_name, component, path, child, dim, float(dim_alpha)))

    if text_encoder:
        for index, (component, encoder) in enumerate(_text_encoders(pipe), start=1):
            rename = functools.partial(text_module_name, encoder)
            collect(component, f"lora_te{index}" if xl else "lora_te", encoder, _TEXT_TARGETS, rename)
    targets = _UNET_TARGETS + (_UNET_CONV_TARGETS if conv_rank else ())
    rename = (lambda path: sgm_module_name(path, pipe.unet)) if xl else None  # noqa: E731
    collect("unet", "lora_unet", pipe.unet, targets, rename)
    names = [m.lora_name for m in found]
    if len(set(names)) != len(names):
        raise ValueError("duplicated kohya LoRA names")
    return found


def _shapes(module: nn.Module, rank: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(down, up) weight shapes, as kohya's LoRAModule and peft's LoRA layers build them."""
    weight = module.weight
    if weight.dim() == 4:  # Conv2d: down keeps the kernel, stride and padding; up is 1x1
        return (rank, weight.shape[1], *weight.shape[2:]), (weight.shape[0], rank, 1, 1)
    return (rank, weight.shape[1]), (weight.shape[0], rank)


def _random_pair(module: nn.Module, rank: int, scale: float, strength: float, generator: torch.Generator):
    """Random down/up weights whose update ``scale * up @ down`` has entries of about ``strength / sqrt(fan_in)``,
    the size of the layer's own weights at initialisation: enough to change the picture visibly."""
    down_shape, up_shape = _shapes(module, rank)
    fan_in = math.prod(down_shape[1:])
    down = torch.randn(down_shape, generator=generator) / math.sqrt(fan_in)
    up = torch.randn(up_shape, generator=generator) * (strength / (scale * math.sqrt(rank)))
    return down, up


def _sai_metadata(
    xl: bool, lora: bool, title: str, timestamp: float, trigger: str | None = None, clip_skip: int | None = None
) -> dict[str, str]:
    """``modelspec.*`` as library/sai_model_spec.build_metadata writes it for a LoRA or a textual inversion."""
    architecture = "stable-diffusion-xl-v1-base" if xl else "stable-diffusion-v1"
    architecture += "/lora" if lora else "/textual-inversion"
    if lora and not xl:
        implementation = "diffusers"
    else:
        implementation = "https://github.com/Stability-AI/generative-models"
    meta = {
        "modelspec.architecture": architecture,
        "modelspec.implementation": implementation,
        "modelspec.title": title,
        "modelspec.resolution": "1024x1024" if xl else "512x512",
        "modelspec.sai_model_spec": "1.0.1",
        "modelspec.date": dt.datetime.fromtimestamp(int(timestamp)).isoformat(),
        "modelspec.prediction_type": "epsilon",
    }
    if clip_skip is not None:
        meta["modelspec.encoder_layer"] = str(clip_skip)
    if trigger:
        meta["modelspec.trigger_phrase"] = trigger
    meta["modelspec.implementation_version"] = f"sd-scripts/{SD_SCRIPTS_COMMIT}"
    return meta


def _addnet_hashes(tensors: dict[str, torch.Tensor], metadata: dict[str, str]) -> tuple[str, str]:
    """train_util.precalculate_safetensors_hashes: sha256 of the tensor data (after the header) of the file
    written with only the ``ss_*`` metadata, and the legacy 8-digit hash of 64 KiB at offset 1 MiB."""
    data = safetensors.torch.save(tensors, {k: v for k, v in metadata.items() if k.startswith("ss_")})
    header = int.from_bytes(data[:8], "little")
    model_hash = hashlib.sha256(data[8 + header :]).hexdigest()
    legacy_hash = hashlib.sha256(data[0x100000 : 0x100000 + 0x10000]).hexdigest()[0:8]
    return model_hash, legacy_hash


def write_kohya_lora(
    pipe,
    path: Path,
    *,
    rank: int = 4,
    alpha: float = 1.0,
    conv_rank: int | None = None,
    conv_alpha: float | None = None,
    text_encoder: bool = True,
    seed: int = 0,
    output_name: str | None = None,
    trigger: str = "sks",
    tags: tuple[str, ...] = ("solo", "looking at viewer", "smile"),
    base_model: str | None = None,
    metadata_trigger_phrase: str | None = None,
    strength: float = 0.5,
    dtype: torch.dtype = torch.float16,
    started_at: float = STARTED_AT,
) -> Path:
    """A LoRA as kohya-ss ``train_network.py --network_module networks.lora`` saves it (``--save_precision`` =
    ``dtype``); ``conv_rank`` adds ``--network_args conv_dim=... conv_alpha=...`` (LoCon: the 3x3 convolutions of the
    ResNet blocks, downsamplers and upsamplers); ``text_encoder=False`` is ``--network_train_unet_only``;
    ``metadata_trigger_phrase`` is ``--metadata_trigger_phrase`` (``modelspec.trigger_phrase``). The caption tags
    (``ss_tag_frequency``) lead with ``trigger``; ``output_name`` (default: the file's stem) is ``--output_name``.

    Per module: ``<lora_name>.lora_down.weight``, ``.lora_up.weight`` and the scalar ``.alpha``, in ``dtype``. The
    header carries the ``ss_*`` training metadata, the additional-networks hashes and ``modelspec.*``.
    """
    path = Path(path)
    xl = is_xl(pipe)
    output_name = output_name or path.stem
    modules = kohya_modules(pipe, rank, alpha, conv_rank, conv_alpha, text_encoder)
    generator = torch.Generator().manual_seed(seed)
    tensors: dict[str, torch.Tensor] = {}
    for m in modules:
        down, up = _random_pair(m.module, m.rank, m.alpha / m.rank, strength, generator)
        tensors[f"{m.lora_name}.alpha"] = torch.tensor(m.alpha).to(dtype)
        tensors[f"{m.lora_name}.lora_down.weight"] = down.to(dtype).contiguous()
        tensors[f"{m.lora_name}.lora_up.weight"] = up.to(dtype).contiguous()

    rng = random.Random(seed)
    images, repeats, batch, epochs = 20, 10, 2, 10
    steps_per_epoch = images * repeats // batch
    folder = f"{repeats}_{trigger}"
    frequency = {folder: {trigger: images, **{tag: images - 3 - i for i, tag in enumerate(tags)}}}
    resolution = (1024, 1024) if xl else (512, 512)
    finished_at = started_at + 3600.0
    meta: dict[str, object] = {
        "ss_session_id": rng.randint(0, 2**32),
        "ss_training_started_at": started_at,
        "ss_output_name": output_name,
        "ss_learning_rate": 0.0001,
        "ss_text_encoder_lr": 5e-05 if text_encoder else None,
        "ss_unet_lr": 0.0001,
        "ss_num_train_images": images * repeats,
        "ss_num_validation_images": 0,
        "ss_num_reg_images": 0,
        "ss_num_batches_per_epoch": steps_per_epoch,
        "ss_num_epochs": epochs,
        "ss_gradient_checkpointing": xl,
        "ss_gradient_accumulation_steps": 1,
        "ss_max_train_steps": steps_per_epoch * epochs,
        "ss_lr_warmup_steps": 0,
        "ss_lr_scheduler": "cosine",
        "ss_network_module": "networks.lora",
        "ss_network_dim": rank,
        "ss_network_alpha": float(alpha),
        "ss_network_dropout": None,
        "ss_mixed_precision": "fp16",
        "ss_full_fp16": False,
        "ss_v2": False,
        "ss_base_model_version": "sdxl_base_v1-0" if xl else "sd_v1",
        "ss_clip_skip": None if xl else 2,
        "ss_max_token_length": None if xl else 225,
        "ss_cache_latents": True,
        "ss_seed": seed,
        "ss_lowram": False,
        "ss_noise_offset": None,
        "ss_multires_noise_iterations": None,
        "ss_multires_noise_discount": 0.3,
        "ss_adaptive_noise_scale": None,
        "ss_zero_terminal_snr": False,
        "ss_training_comment": None,
        "ss_sd_scripts_commit_hash": SD_SCRIPTS_COMMIT,
        "ss_optimizer": "bitsandbytes.optim.adamw.AdamW8bit",
        "ss_max_grad_norm": 1.0,
        "ss_caption_dropout_rate": 0.0,
        "ss_caption_dropout_every_n_epochs": 0,
        "ss_caption_tag_dropout_rate": 0.0,
        "ss_face_crop_aug_range": None,
        "ss_prior_loss_weight": 1.0,
        "ss_min_snr_gamma": 5.0,
        "ss_scale_weight_norms": None,
        "ss_ip_noise_gamma": None,
        "ss_debiased_estimation": False,
        "ss_noise_offset_random_strength": False,
        "ss_ip_noise_gamma_random_strength": False,
        "ss_loss_type": "l2",
        "ss_huber_schedule": "snr",
        "ss_huber_scale": 1,
        "ss_huber_c": 0.1,
        "ss_fp8_base": False,
        "ss_fp8_base_unet": False,
        "ss_validation_seed": None,
        "ss_validation_split": 0.0,
        "ss_max_validation_steps": None,
        "ss_validate_every_n_epochs": None,
        "ss_validate_every_n_steps": None,
        "ss_resize_interpolation": None,
        "ss_batch_size_per_device": batch,
        "ss_total_batch_size": batch,
        "ss_resolution": resolution,
        "ss_color_aug": False,
        "ss_flip_aug": False,
        "ss_random_crop": False,
        "ss_shuffle_caption": True,
        "ss_enable_bucket": True,
        "ss_bucket_no_upscale": False,
        "ss_min_bucket_reso": 256,
        "ss_max_bucket_reso": 2048 if xl else 1024,
        "ss_keep_tokens": 1,
        "ss_dataset_dirs": json.dumps({folder: {"n_repeats": repeats, "img_count": images}}),
        "ss_reg_dataset_dirs": json.dumps({}),
        "ss_tag_frequency": json.dumps(frequency),
        "ss_bucket_info": json.dumps(
            {"buckets": {"0": {"resolution": list(resolution), "count": images * repeats}}, "mean_img_ar_error": 0.0}
        ),
    }
    if conv_rank:
        # train_network.py adds "dropout" to the network kwargs before writing them (a workaround for LyCORIS)
        network_args = {"conv_dim": str(conv_rank), "conv_alpha": str(conv_alpha if conv_alpha is not None else 1)}
        meta["ss_network_args"] = json.dumps({**network_args, "dropout": None})
    meta["ss_sd_model_name"] = base_model or (
        "stabilityai/stable-diffusion-xl-base-1.0" if xl else "runwayml/stable-diffusion-v1-5"
    )
    metadata = {k: str(v) for k, v in meta.items()}
    metadata["ss_training_finished_at"] = str(finished_at)
    metadata["ss_steps"] = str(steps_per_epoch * epochs)
    metadata["ss_epoch"] = str(epochs)
    metadata.update(
        _sai_metadata(xl, True, output_name, started_at, metadata_trigger_phrase, clip_skip=None if xl else 2)
    )
    metadata["sshs_model_hash"], metadata["sshs_legacy_hash"] = _addnet_hashes(tensors, metadata)
    path.parent.mkdir(parents=True, exist_ok=True)
    safetensors.torch.save_file(tensors, str(path), metadata)
    return path


# --- diffusers and peft ---------------------------------------------------------------------------------------


def peft_modules(root: nn.Module, targets: tuple[str, ...]) -> list[tuple[str, nn.Module]]:
    """The Linear / Conv2d modules of ``root`` that peft's ``LoraConfig(target_modules=targets)`` adapts: those whose
    name is a target or ends with ``.`` + a target (peft's ``check_target_module_exists`` for a list)."""
    return [
        (name, module)
        for name, module in root.named_modules()
        if isinstance(module, (nn.Linear, nn.Conv2d)) and any(name == t or name.endswith("." + t) for t in targets)
    ]


def _lora_config(rank: int, alpha: float, targets: tuple[str, ...]):
    from peft import LoraConfig

    return LoraConfig(r=rank, lora_alpha=alpha, init_lora_weights="gaussian", target_modules=list(targets))


def _peft_tensors(
    modules: list[tuple[str, nn.Module]], rank: int, scale: float, strength: float, generator, dtype
) -> dict[str, torch.Tensor]:
    tensors = {}
    for name, module in modules:
        down, up = _random_pair(module, rank, scale, strength, generator)
        tensors[f"{name}.lora_A.weight"] = down.to(dtype).contiguous()
        tensors[f"{name}.lora_B.weight"] = up.to(dtype).contiguous()
    return tensors


def write_diffusers_lora(
    pipe,
    out_dir: Path,
    *,
    rank: int = 4,
    alpha: float | None = None,
    targets: tuple[str, ...] = DIFFUSERS_UNET_TARGETS,
    text_encoder: bool = False,
    text_targets: tuple[str, ...] = DIFFUSERS_TEXT_TARGETS,
    seed: int = 0,
    key_style: str = "peft",
    adapter_metadata: bool = True,
    strength: float = 0.5,
    dtype: torch.dtype = torch.float32,
) -> Path:
    """``pytorch_lora_weights.safetensors`` as diffusers' LoRA training scripts write it: a peft adapter's
    ``get_peft_model_state_dict`` per component, saved with ``StableDiffusionPipeline.save_lora_weights`` (or the
    SDXL one): keys ``unet.<module>.lora_A.weight`` / ``lora_B``, ``text_encoder.…``, ``text_encoder_2.…``.

    ``key_style="diffusers"`` first passes each component through ``convert_state_dict_to_diffusers``, as the older
    scripts did (``…to_q.lora.down.weight``, ``…q_proj.lora_linear_layer.down.weight``). ``adapter_metadata`` writes
    each component's ``LoraConfig`` into the header (``lora_adapter_metadata``), which is where ``alpha`` (default:
    ``rank``, as the scripts set it) lives. Returns the file's path.
    """
    from diffusers import StableDiffusionPipeline, StableDiffusionXLPipeline
    from diffusers.utils import convert_state_dict_to_diffusers

    alpha = float(rank if alpha is None else alpha)
    generator = torch.Generator().manual_seed(seed)
    components = [("unet", pipe.unet, targets)]
    if text_encoder:
        components += [(name, encoder, text_targets) for name, encoder in _text_encoders(pipe)]
    kwargs = {}
    for name, root, component_targets in components:
        modules = peft_modules(root, component_targets)
        if name != "unet":
            modules = [(text_module_name(root, path), module) for path, module in modules]
        layers = _peft_tensors(modules, rank, alpha / rank, strength, generator, dtype)
        if key_style == "diffusers":
            layers = convert_state_dict_to_diffusers(layers)
        elif key_style != "peft":
            raise ValueError(f"key_style must be 'peft' or 'diffusers', not {key_style!r}")
        kwargs[f"{name}_lora_layers"] = layers
        if adapter_metadata:
            kwargs[f"{name}_lora_adapter_metadata"] = _lora_config(rank, alpha, component_targets).to_dict()
    loader = StableDiffusionXLPipeline if is_xl(pipe) else StableDiffusionPipeline
    out_dir = Path(out_dir)
    loader.save_lora_weights(out_dir, safe_serialization=True, **kwargs)
    return out_dir / "pytorch_lora_weights.safetensors"


def write_peft_folder(
    pipe,
    out_dir: Path,
    *,
    rank: int = 4,
    alpha: float | None = None,
    targets: tuple[str, ...] = DIFFUSERS_UNET_TARGETS,
    seed: int = 0,
    strength: float = 0.5,
    dtype: torch.dtype = torch.float32,
) -> Path:
    """A UNet adapter as ``peft``'s ``PeftModel.save_pretrained`` writes it: ``adapter_config.json`` (the
    ``LoraConfig``, ``inference_mode`` true, the ``auto_mapping`` peft adds for a non-transformers model) and
    ``adapter_model.safetensors`` with keys ``base_model.model.<module>.lora_A.weight`` / ``lora_B`` and
    ``{"format": "pt"}`` metadata, plus peft's README. ``alpha`` defaults to ``rank``. Returns the folder."""
    alpha = float(rank if alpha is None else alpha)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    unet = pipe.unet
    generator = torch.Generator().manual_seed(seed)
    tensors = _peft_tensors(peft_modules(unet, targets), rank, alpha / rank, strength, generator, dtype)
    tensors = {f"base_model.model.{key}": value for key, value in tensors.items()}
    safetensors.torch.save_file(tensors, str(out_dir / "adapter_model.safetensors"), metadata={"format": "pt"})
    config = _lora_config(rank, alpha, targets)
    config.inference_mode = True
    auto_mapping = {"base_model_class": type(unet).__name__, "parent_library": type(unet).__module__}
    config.save_pretrained(str(out_dir), auto_mapping_dict=auto_mapping)
    (out_dir / "README.md").write_text(
        "---\nlibrary_name: peft\ntags:\n- lora\n---\n\n# Model Card for Model ID\n\n"
        "<!-- Provide a quick summary of what the model is/does. -->\n\n"
        "### Framework versions\n\n- PEFT " + _peft_version() + "\n"
    )
    return out_dir


def _peft_version() -> str:
    import peft

    return peft.__version__


# --- textual inversion ----------------------------------------------------------------------------------------


def _embedding_vectors(encoder: nn.Module, n_vectors: int, generator: torch.Generator) -> torch.Tensor:
    """Random vectors of the token-embedding width, about as large as the encoder's own token embeddings (CLIP's
    are ~0.014 per entry at real size), times 3 so that the token stands out."""
    table = encoder.get_input_embeddings().weight
    scale = 0.014 if table.is_meta else float(table.detach().float().std())
    return torch.randn((n_vectors, table.shape[1]), generator=generator) * scale * 3


def write_a1111_embedding(
    pipe, path: Path, *, n_vectors: int = 2, seed: int = 0, name: str | None = None, dtype=torch.float32
) -> Path:
    """An SD 1.x embedding as AUTOMATIC1111's WebUI loads it from ``.safetensors``: ``{"emb_params": [n, width]}``
    with ``modelspec.*`` metadata, as kohya-ss ``train_textual_inversion.py`` saves it."""
    if is_xl(pipe):
        raise ValueError("emb_params embeddings are for SD 1.x / 2.x; SDXL's have clip_l and clip_g")
    path = Path(path)
    generator = torch.Generator().manual_seed(seed)
    tensors = {"emb_params": _embedding_vectors(pipe.text_encoder, n_vectors, generator).to(dtype)}
    metadata = _sai_metadata(False, False, name or path.stem, STARTED_AT)
    path.parent.mkdir(parents=True, exist_ok=True)
    safetensors.torch.save_file(tensors, str(path), metadata)
    return path


def write_sdxl_embedding(
    pipe, path: Path, *, n_vectors: int = 2, seed: int = 0, name: str | None = None, dtype=torch.float32
) -> Path:
    """An SDXL embedding as Civitai and the WebUIs share it: ``{"clip_l": [n, 768], "clip_g": [n, 1280]}`` (one
    vector set per text encoder) with ``modelspec.*`` metadata, as kohya-ss ``sdxl_train_textual_inversion.py``
    saves it."""
    if not is_xl(pipe):
        raise ValueError("clip_l/clip_g embeddings are for SDXL")
    path = Path(path)
    generator = torch.Generator().manual_seed(seed)
    tensors = {
        "clip_l": _embedding_vectors(pipe.text_encoder, n_vectors, generator).to(dtype),
        "clip_g": _embedding_vectors(pipe.text_encoder_2, n_vectors, generator).to(dtype),
    }
    metadata = _sai_metadata(True, False, name or path.stem, STARTED_AT)
    path.parent.mkdir(parents=True, exist_ok=True)
    safetensors.torch.save_file(tensors, str(path), metadata)
    return path


def write_diffusers_embedding(
    pipe,
    out_dir: Path,
    *,
    token: str = "<concept>",
    n_vectors: int = 1,
    concept_type: str = "object",
    seed: int = 0,
) -> Path:
    """A concept folder as the sd-concepts-library holds them: ``learned_embeds.safetensors`` written the way
    diffusers' ``examples/textual_inversion/textual_inversion.py`` saves it (``{token: [n, width]}``, metadata
    ``{"format": "pt"}``), ``token_identifier.txt`` and ``type_of_concept.txt``. For SDXL, the second encoder's
    vectors go to ``learned_embeds_2.safetensors``, as ``textual_inversion_sdxl.py`` saves them. Returns the folder."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    generator = torch.Generator().manual_seed(seed)
    for (_, encoder), name in zip(_text_encoders(pipe), ("learned_embeds", "learned_embeds_2")):
        tensors = {token: _embedding_vectors(encoder, n_vectors, generator)}
        safetensors.torch.save_file(tensors, str(out_dir / f"{name}.safetensors"), metadata={"format": "pt"})
    (out_dir / "token_identifier.txt").write_text(token)
    (out_dir / "type_of_concept.txt").write_text(concept_type)
    (out_dir / "README.md").write_text(
        f"---\nlicense: mit\n---\n### {out_dir.name} on Stable Diffusion\nThis is the `{token}` concept taught to "
        "Stable Diffusion via Textual Inversion.\n"
    )
    return out_dir
