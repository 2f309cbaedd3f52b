"""Quantizing a UNet: packed weights for every Linear and Conv2d, static activation ranges, TAQ attention.

A quantized UNet is saved as one self-contained safetensors file: the packed codes and scales, the
remaining full-precision tensors (norms, biases, embeddings), the activation ranges, and in the metadata
the UNet config and the :class:`TAQConfig`; :func:`load_quantized` rebuilds it without ever materializing
the float weights.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Literal

import torch
from diffusers import UNet2DConditionModel
from pydantic import BaseModel, Field
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file
from torch import nn
from tqdm.auto import tqdm

from personalq.taq.activations import ActivationQuantizer, Observer
from personalq.taq.adaround import adaround_weight
from personalq.taq.attention import AttentionQuantizers, TriggerAwareAttnProcessor, cross_attention_names, install
from personalq.taq.calibration import quantizable_layers, takes_text
from personalq.taq.context import QuantContext, attach_timestep_hook
from personalq.taq.kernels import IntegerConv2d, IntegerLinear
from personalq.taq.layers import PackedWeight, QuantizedConv2d, QuantizedLinear
from personalq.taq.masks import Mode
from personalq.taq.packing import packed_length
from personalq.taq.quantizers import QuantSpec, quantize_weight
from personalq.taq.smoothing import (
    can_smooth,
    fold_into_weight,
    input_channel_dim,
    per_input_channel,
    smoothing_factors,
)

RANGE_PREFIX = "taq.range."
FIRST_AND_LAST = ("conv_in", "conv_out")  # the layers that read the noisy latent and write the noise prediction
ATTENTION_PARTS = {"q": "query", "k": "key", "v": "value", "p": "probs"}


class TAQConfig(BaseModel):
    """What ``personalq quantize`` and the app's precision control choose."""

    wbits: Literal[8, 4] = 8
    abits: Literal[8, 4, 16] = 8
    mode: Mode = "taq"
    quantizer: Literal["linear", "log"] = "linear"
    granularity: Literal["tensor", "channel", "group"] = "channel"
    group_size: int = Field(64, ge=8)
    timestep_groups: int = Field(4, ge=1, le=20)
    rounding: Literal["nearest", "adaround"] = "nearest"
    protect_weights: bool = False  # protected K/V rows use a float copy of the cross-attention K/V weights
    # The PTQ recipe under every separation mode alike (its effect: benchmarks/README.md, TAQ): SmoothQuant's
    # migration strength alpha for every layer whose input is rounded (None: no smoothing), and conv_in / conv_out
    # kept at 8-bit weights and inputs at any lower precision, as BRECQ, Q-Diffusion and TFMQ-DM do.
    smoothing: float | None = Field(0.75, ge=0.0, le=1.0)
    first_last_8bit: bool = True

    @property
    def tag(self) -> str:
        rounding = "-adaround" if self.rounding == "adaround" else ""
        smoothing = f"-sq{self.smoothing:g}" if self.smooths else ""
        ends = "-ends8" if self.keeps_ends_8bit else ""
        return (
            f"w{self.wbits}a{self.abits}-{self.mode}-{self.quantizer}{rounding}{smoothing}{ends}"
            f"{'-fpkv' if self.keeps_float_kv else ''}"
        )

    @property
    def keeps_ends_8bit(self) -> bool:
        """Whether ``first_last_8bit`` changes anything: only below 8 bits."""
        return self.first_last_8bit and min(self.wbits, self.abits) < 8

    def _bits_at(self, site: str, bits: int) -> int:
        return 8 if self.keeps_ends_8bit and site in FIRST_AND_LAST else bits

    def weight_spec_at(self, site: str) -> QuantSpec:
        """The weight quantizer of the layer at ``site``."""
        return QuantSpec(self._bits_at(site, self.wbits), self.quantizer, self.granularity, self.group_size)

    def activation_spec_at(self, site: str) -> QuantSpec | None:
        """The input quantizer of the layer at ``site`` (or of a cross-attention tensor); None: full precision."""
        return None if self.abits == 16 else QuantSpec(self._bits_at(site, self.abits), self.quantizer, "tensor")

    @property
    def smooths(self) -> bool:
        """Smoothing only helps where activations are rounded: weight-only variants keep their weights as they are."""
        return self.smoothing is not None and self.activation_spec is not None

    @property
    def keeps_float_kv(self) -> bool:
        """Whether the text-side K/V projections keep a float weight: only when some rows are protected."""
        return self.protect_weights and self.mode != "plain"

    @property
    def activation_spec(self) -> QuantSpec | None:
        """The quantizer of activations in general (the cross-attention tensors among them)."""
        return self.activation_spec_at("")

    @property
    def needs_calibration(self) -> bool:
        return self.abits != 16 or self.rounding == "adaround"


@dataclass
class QuantizedUNet:
    unet: UNet2DConditionModel
    config: TAQConfig
    context: QuantContext
    ranges: dict[str, torch.Tensor] = field(default_factory=dict)  # site -> (groups, 2)


def weight_bytes(module: nn.Module) -> int:
    """Bytes of every parameter and buffer the module holds: what its weights actually occupy in memory (tensors
    that share memory, such as a view of another buffer, count once)."""
    held = {}
    for tensor in list(module.parameters()) + list(module.buffers()):
        if tensor.is_meta or tensor.is_mkldnn:  # no storage to share: a meta UNet's sizes come from its shapes
            held[id(tensor)] = tensor.numel() * tensor.element_size()
        else:
            storage = tensor.untyped_storage()
            held[storage.data_ptr()] = storage.nbytes()
    return sum(held.values())


def quantized_bytes(unet: nn.Module, config: TAQConfig) -> int:
    """What :func:`weight_bytes` will report once ``unet`` is quantized with ``config``, computed from shapes alone.

    A layer that has switched to an integer kernel holds the same codes (int8 at 8 bits, still packed at 4) and, if
    it is a Linear, its weight's column sums: 4 bytes per output channel more."""
    total = weight_bytes(unet)
    for site, module in quantizable_layers(unet):
        spec = config.weight_spec_at(site)
        rows, per_row = spec.row_shape(module.weight.shape)
        scale_and_offset = 2 * 4  # float32 each, per row
        total += rows * (packed_length(per_row, spec.bits) + scale_and_offset)
        if not keeps_float_weight(config, site):
            total -= module.weight.numel() * module.weight.element_size()
        if is_smoothed(config, site, module):
            total += module.weight.shape[1] * 4  # one float32 factor per input channel
    return total


def keeps_float_weight(config: TAQConfig, site: str) -> bool:
    """Whether the layer at ``site`` keeps a float copy of its weight for the protected rows."""
    return config.keeps_float_kv and takes_text(site)


def is_smoothed(config: TAQConfig, site: str, module: nn.Module) -> bool:
    """Whether the layer at ``site`` folds smoothing factors into its weight: every layer whose input is rounded."""
    return config.smooths and not takes_text(site) and can_smooth(module)


def layer_smoothing(
    observer: Observer, config: TAQConfig, layers: list[tuple[str, nn.Module]]
) -> dict[str, torch.Tensor]:
    """The smoothing factors of every layer ``config`` smooths, from the calibration's per-channel extremes."""
    factors = {}
    for site, module in layers:
        if not is_smoothed(config, site, module):
            continue
        peaks = observer.channel_absmax(site)
        if peaks is None:
            raise KeyError(
                f"calibration has no per-channel range for {site}: calibrate the same UNet that is quantized"
            )
        factors[site] = smoothing_factors(peaks, module.weight, config.smoothing)
    return factors


def is_cross_attention_site(site: str) -> bool:
    """Cross-attention tensors are observed as ``layer:part`` (part q, k, v or p); layer inputs by the layer's name."""
    return ":" in site


def activation_ranges(
    observer: Observer,
    config: TAQConfig,
    cross_attention_only: bool = False,
    smoothing: dict[str, torch.Tensor] | None = None,
) -> dict[str, torch.Tensor]:
    """Frozen ranges for every site this configuration quantizes (K/V and probabilities: over the rows or
    columns its mode quantizes; K/V depend only on the prompt, so one range serves every timestep; a smoothed
    layer's input: after its division by ``smoothing[site]``)."""
    spec = config.activation_spec
    smoothing = smoothing or {}
    ranges = {}
    for site in sorted(observer.sites()):
        if cross_attention_only and not is_cross_attention_site(site):
            continue
        if "@" in site:
            base, mode = site.split("@")
            if mode == config.mode:
                ranges[base] = observer.ranges(
                    site, 1 if base.endswith((":k", ":v")) else config.timestep_groups, spec
                )
        else:
            ranges[site] = observer.ranges(
                site, config.timestep_groups, config.activation_spec_at(site), smoothing.get(site)
            )
    return ranges


def _quantizer(ranges: dict[str, torch.Tensor], site: str, spec: QuantSpec | None) -> ActivationQuantizer | None:
    if spec is None:
        return None
    if site not in ranges:
        raise KeyError(f"calibration has no range for {site}: calibrate the same UNet that is quantized")
    return ActivationQuantizer(spec, ranges[site])


def _finish(
    unet: UNet2DConditionModel, config: TAQConfig, context: QuantContext, ranges: dict[str, torch.Tensor]
) -> QuantizedUNet:
    """Install the cross-attention processors and the timestep hook on a UNet whose layers are quantized."""
    spec = config.activation_spec
    if spec is not None:  # weight-only variants keep diffusers' fused attention
        processors = {}
        for name in cross_attention_names(unet):
            parts = {
                field_name: _quantizer(ranges, f"{name}:{short}", spec)
                for short, field_name in ATTENTION_PARTS.items()
            }
            processors[name] = TriggerAwareAttnProcessor(name, context, AttentionQuantizers(**parts))
        install(unet, processors)
    attach_timestep_hook(unet, context)
    unet.requires_grad_(False)
    return QuantizedUNet(unet, config, context, ranges)


def _replace(root: nn.Module, site: str, module: nn.Module) -> None:
    parent, _, child = site.rpartition(".")
    setattr(root.get_submodule(parent) if parent else root, child, module)


def _quantized_layer(
    source: nn.Module,
    packed: PackedWeight,
    input_quantizer,
    context,
    protected_weight: torch.Tensor | None = None,
    smoothing: torch.Tensor | None = None,
) -> nn.Module:
    if isinstance(source, nn.Conv2d):
        return QuantizedConv2d(source, packed, input_quantizer, context, smoothing)
    return QuantizedLinear(source, packed, input_quantizer, context, protected_weight, smoothing)


@torch.no_grad()
def quantize_unet(unet: UNet2DConditionModel, config: TAQConfig, observer: Observer | None = None) -> QuantizedUNet:
    """Quantize ``unet`` in place (its float weights are released layer by layer)."""
    if config.needs_calibration and observer is None:
        raise ValueError(f"A{config.abits} needs calibration data: pass the observer from calibrate()")
    layers = list(quantizable_layers(unet))
    smoothing = layer_smoothing(observer, config, layers) if config.smooths else {}
    ranges = activation_ranges(observer, config, smoothing=smoothing) if config.activation_spec is not None else {}
    context = QuantContext(timestep_groups=config.timestep_groups)
    for site, module in tqdm(layers, desc="adaround", leave=False, disable=config.rounding != "adaround"):
        spec = config.weight_spec_at(site)
        factors = smoothing.get(site)
        weight = module.weight if factors is None else fold_into_weight(module.weight, factors)
        if config.rounding == "adaround" and observer.inputs.get(site):
            inputs = observer.inputs[site]
            if factors is not None:
                inputs = [x / per_input_channel(factors, x.dim(), input_channel_dim(module)) for x in inputs]
            quantized = adaround_weight(module, inputs, spec, weight=weight)
        else:  # round to nearest (also for layers AdaRound saw no input of: the text-side K/V projections)
            quantized = quantize_weight(weight, spec)
        packed = PackedWeight.from_quantized(quantized)
        input_quantizer = None if takes_text(site) else _quantizer(ranges, site, config.activation_spec_at(site))
        float_copy = module.weight if keeps_float_weight(config, site) else None
        _replace(unet, site, _quantized_layer(module, packed, input_quantizer, context, float_copy, factors))
    return _finish(unet, config, context, ranges)


@torch.no_grad()
def quantize_cross_attention(unet: UNet2DConditionModel, config: TAQConfig, observer: Observer) -> QuantizedUNet:
    """Only the cross-attention activations (Q, the K/V rows, the probabilities) at ``config.abits``; every weight
    and every other activation stays in full precision.

    An ablation, not a serving format (nothing is packed, ``wbits`` is ignored): what remains quantized is
    exactly what the protection modes treat differently, so plain, BOS and TAQ compared this way show the
    protection's own effect without the weight and convolution error that buries it in a full W8A4 model.
    """
    if config.activation_spec is None:
        raise ValueError("quantizing only the cross-attention activations needs abits 8 or 4, not 16")
    ranges = activation_ranges(observer, config, cross_attention_only=True)
    return _finish(unet, config, QuantContext(timestep_groups=config.timestep_groups), ranges)


def keep_activation_quantization(quantized: QuantizedUNet, keep: Callable[[str], bool]) -> QuantizedUNet:
    """Switch activation quantization off at every site ``keep`` rejects; the weights stay packed.

    Sites are layer names (``up_blocks.1.resnets.0.conv_shortcut``) and cross-attention tensors
    (``...attn2:k``). An analysis tool (``personalq bench taq-attribution``): which layers' rounded inputs
    make a precision's error.
    """
    for site, module in quantized.unet.named_modules():
        if isinstance(module, (QuantizedLinear, QuantizedConv2d)) and not keep(site):
            module.input_quantizer = None
    for processor in quantized.unet.attn_processors.values():
        if isinstance(processor, TriggerAwareAttnProcessor):
            parts = {
                field_name: None
                if not keep(f"{processor.site}:{short}")
                else getattr(processor.quantizers, field_name)
                for short, field_name in ATTENTION_PARTS.items()
            }
            processor.quantizers = AttentionQuantizers(**parts)
    return quantized


def allow_integer_kernels(quantized: QuantizedUNet) -> int:
    """Let every layer the integer kernels can run compute with them (:mod:`personalq.taq.kernels`; each switches on
    its first call large enough to pay, the others keep dequantizing); returns how many layers may. Saving still
    writes the packed format, so a variant is stored the same whichever kernels served it."""
    layers = [m for m in quantized.unet.modules() if isinstance(m, (QuantizedLinear, QuantizedConv2d))]
    return sum(layer.allow_integer_kernel() for layer in layers)


@torch.no_grad()
def match_float_dtype(quantized: QuantizedUNet, dtype: torch.dtype) -> None:
    """Cast the variant's float parts (norms, embeddings, biases, protected K/V weights) to the pipeline's float type;
    packed weights, their scales (and integer kernels' sums), smoothing factors and activation ranges keep theirs. A
    variant made in float32 on the CPU then runs in a half-precision pipeline on a GPU."""
    for module in quantized.unet.modules():
        if isinstance(module, (PackedWeight, ActivationQuantizer, IntegerLinear, IntegerConv2d)):
            continue
        if isinstance(module, (QuantizedLinear, QuantizedConv2d)):
            module.float_dtype = dtype
        for name, tensor in [*module.named_parameters(recurse=False), *module.named_buffers(recurse=False)]:
            if tensor.is_floating_point() and tensor.dtype != dtype and name != "smoothing":
                tensor.data = tensor.data.to(dtype)


def save_quantized(quantized: QuantizedUNet, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tensors = {name: tensor.contiguous() for name, tensor in quantized.unet.state_dict().items()}
    tensors |= {RANGE_PREFIX + site: r for site, r in quantized.ranges.items()}
    metadata = {
        "taq_config": quantized.config.model_dump_json(),
        "unet_config": json.dumps(
            {key: value for key, value in quantized.unet.config.items() if not key.startswith("_")}
        ),
    }
    temporary = path.with_suffix(".partial")
    save_file(tensors, str(temporary), metadata=metadata)
    temporary.replace(path)  # a crash mid-write never leaves a truncated variant where serving would find it
    return path


class QuantizedFileError(ValueError):
    """A file that is not a quantized UNet written by :func:`save_quantized`."""


@torch.no_grad()
def load_quantized(path: Path, device: str = "cpu") -> QuantizedUNet:
    try:
        with safe_open(str(path), framework="pt") as handle:
            metadata = handle.metadata() or {}
            tensors = {key: handle.get_tensor(key) for key in handle.keys()}
        config = TAQConfig.model_validate_json(metadata["taq_config"])
        unet_config = json.loads(metadata["unet_config"])
    except (OSError, KeyError, ValueError, SafetensorError) as error:
        raise QuantizedFileError(f"{path} is not a readable quantized UNet: {error}") from error
    ranges = {key[len(RANGE_PREFIX) :]: tensors.pop(key) for key in list(tensors) if key.startswith(RANGE_PREFIX)}
    with torch.device("meta"):
        unet = UNet2DConditionModel.from_config(unet_config)
    context = QuantContext(timestep_groups=config.timestep_groups)
    for site, module in list(quantizable_layers(unet)):
        try:
            codes, scale, offset = (tensors.pop(f"{site}.packed.{part}") for part in ("codes", "scale", "offset"))
        except KeyError as error:
            raise QuantizedFileError(f"{path} lacks the packed weight of {site}") from error
        spec = config.weight_spec_at(site)
        packed = PackedWeight(codes, scale, offset, module.weight.shape, spec, spec.row_shape(module.weight.shape)[1])
        input_quantizer = None if takes_text(site) else _quantizer(ranges, site, config.activation_spec_at(site))
        float_copy = tensors.pop(f"{site}.protected_weight", None)
        if keeps_float_weight(config, site) and float_copy is None:
            raise QuantizedFileError(f"{path} lacks the float K/V weight of {site} that its config keeps")
        factors = tensors.pop(f"{site}.smoothing", None)
        if is_smoothed(config, site, module) != (factors is not None):
            raise QuantizedFileError(f"{path}: the smoothing factors of {site} do not match its config")
        layer = _quantized_layer(module, packed, input_quantizer, context, float_copy, factors)
        if module.bias is not None:
            layer.bias = nn.Parameter(tensors.pop(f"{site}.bias"), requires_grad=False)
        _replace(unet, site, layer)
    missing, unexpected = unet.load_state_dict(tensors, strict=False, assign=True)
    left_on_meta = [name for name, t in list(unet.named_parameters()) + list(unet.named_buffers()) if t.is_meta]
    if unexpected or left_on_meta:
        raise QuantizedFileError(
            f"{path} does not match its UNet config (unexpected {unexpected[:3]}, missing {left_on_meta[:3]})"
        )
    return _finish(unet.to(device), config, context, ranges)
