"""Linear and Conv2d layers that hold their weights packed (int8, or two int4 codes per byte) and compute with them.

The weight is dequantized per call, layer by layer, so only one layer's float weight exists at a time and
the resident model stays at its packed size. Each layer optionally rounds its input to a static range
first (activation quantization). They subclass ``nn.Linear`` / ``nn.Conv2d`` without owning a float weight,
so peft wraps them like any layer: LoRA adapters stay in full precision on top of the quantized base.

A cross-attention K/V projection can also keep a float copy of its weight (``TAQConfig.protect_weights``):
the rows of protected tokens are then computed with it, so the trigger's K/V are exactly what the
full-precision model computes, not just spared activation rounding. That costs the copy's bytes, which is
why it is an option: 2% of SD 1.5's UNet parameters, 9% of the demo UNet's (its text width is large for
its channel count).

A smoothed layer (:mod:`personalq.taq.smoothing`) holds its packed weight with the smoothing factors folded in,
and divides its input by them before rounding it.

:meth:`_Quantized.allow_integer_kernel` lets a layer compute in integers (:mod:`personalq.taq.kernels`): the same
result without a float weight, several times faster where the processor has int8 units, from the layer's first call
large enough to pay for it.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator

import torch
import torch.nn.functional as F
from torch import nn

from personalq.taq.activations import ActivationQuantizer
from personalq.taq.context import QuantContext
from personalq.taq.kernels import SMALL_PRODUCT, IntegerConv2d, IntegerLinear, multiply_adds, runs_in_integers
from personalq.taq.packing import from_unsigned, pack, to_unsigned, unpack
from personalq.taq.quantizers import QuantizedWeight, QuantSpec, dequantize
from personalq.taq.smoothing import input_channel_dim, per_input_channel


class PackedWeight(nn.Module):
    """Buffers ``codes`` (uint8, packed), ``scale`` and ``offset`` (float32, one per slice) of one weight.

    Once an integer kernel that holds the codes in its own layout computes with them (:meth:`run_with`), ``codes``
    is released so the weight is not resident twice; :meth:`stored_codes` and the state dict rebuild the packed
    bytes from the kernel.
    """

    def __init__(
        self,
        codes: torch.Tensor,
        scale: torch.Tensor,
        offset: torch.Tensor,
        shape: torch.Size,
        spec: QuantSpec,
        row_length: int,
    ):
        super().__init__()
        self.register_buffer("codes", codes)
        self.register_buffer("scale", scale)
        self.register_buffer("offset", offset)
        self.shape = torch.Size(shape)
        self.spec = spec
        self.row_length = row_length
        self.kernel = None
        self.register_state_dict_post_hook(_stored_codes_into_state_dict)

    @classmethod
    def from_quantized(cls, quantized: QuantizedWeight) -> "PackedWeight":
        signed = quantized.spec.kind == "log"
        stored = pack(to_unsigned(quantized.codes, quantized.spec.bits, signed), quantized.spec.bits)
        return cls(
            stored,
            quantized.scale.float(),
            quantized.offset.float(),
            quantized.shape,
            quantized.spec,
            quantized.codes.shape[1],
        )

    def run_with(self, kernel: IntegerLinear | IntegerConv2d) -> None:
        self.kernel = kernel
        if kernel.holds_codes:
            self.codes = None

    def stored_codes(self) -> torch.Tensor:
        """The packed codes as they are saved, whichever form holds them now."""
        return self.codes if self.codes is not None else self.kernel.stored_codes(self.scale.shape[0])

    def unpacked_codes(self) -> torch.Tensor:
        return unpack(self.stored_codes(), self.spec.bits, self.row_length)

    def dequantize(self) -> torch.Tensor:
        if self.kernel is not None:
            return self.kernel.dequantized_weight().reshape(self.shape)
        stored = self.unpacked_codes()
        # linear codes are stored as they are (one conversion, one multiply-add); log codes carry a sign offset
        codes = stored if self.spec.kind == "linear" else from_unsigned(stored, self.spec.bits, signed=True)
        return dequantize(codes, self.scale, self.offset, self.spec).reshape(self.shape)


def _stored_codes_into_state_dict(module: PackedWeight, state_dict: dict, prefix: str, local_metadata) -> None:
    if module.codes is None:
        state_dict[prefix + "codes"] = module.stored_codes()


_last_weight = threading.local()  # inside weights_read_repeatedly: (layer, float type, its float weight)


@contextlib.contextmanager
def weights_read_repeatedly() -> Iterator[None]:
    """Within this block a quantized layer's float :attr:`~_Quantized.weight` is rebuilt once and kept until another
    layer's is asked for. peft reads a layer's ``weight`` about a dozen times while it attaches a LoRA to it (for its
    device and type), and each read is a whole dequantization. Keeping only the last layer's bounds what is held to
    one layer's float weight."""
    _last_weight.held, _last_weight.active = None, True
    try:
        yield
    finally:
        _last_weight.held, _last_weight.active = None, False


class _Quantized:
    """What the quantized Linear and Conv2d share: the packed weight, the bias, the smoothing factors, the input
    quantizer."""

    packed: PackedWeight
    input_quantizer: ActivationQuantizer | None
    context: QuantContext | None

    def _init_quantized(
        self,
        packed: PackedWeight,
        bias: torch.Tensor | None,
        input_quantizer,
        context,
        smoothing: torch.Tensor | None = None,
    ) -> None:
        self.packed = packed
        self.bias = nn.Parameter(bias.detach().float().clone(), requires_grad=False) if bias is not None else None
        self.input_quantizer = input_quantizer
        self.context = context
        self.integer_allowed = False
        self.float_dtype = torch.float32  # the pipeline's float type (match_float_dtype): what the layer computes in
        self.register_buffer("smoothing", None if smoothing is None else smoothing.detach().float().clone())

    @property
    def weight(self) -> torch.Tensor:
        """The float weight, in the pipeline's float type: what peft reads (device, and the type it makes a LoRA's
        matrices in, so a bf16 pipeline's LoRA runs in bf16 rather than casting every activation to float32);
        computing uses the packed form."""
        held = getattr(_last_weight, "held", None)
        if held is not None and held[0] is self and held[1] == self.float_dtype:
            return held[2]
        weight = self.packed.dequantize()
        weight = weight if self.smoothing is None else weight / per_input_channel(self.smoothing, weight.dim(), 1)
        weight = weight.to(self.float_dtype)
        if getattr(_last_weight, "active", False):
            _last_weight.held = (self, self.float_dtype, weight)
        return weight

    @property
    def _group(self) -> int:
        return self.context.group if self.context else 0

    def _smoothed(self, x: torch.Tensor) -> torch.Tensor:
        if self.smoothing is None:  # the weight holds the factors: divided here whether or not x is then rounded
            return x
        return x / per_input_channel(self.smoothing.to(x.dtype), x.dim(), input_channel_dim(self))

    def _quantize_input(self, x: torch.Tensor) -> torch.Tensor:
        x = self._smoothed(x)
        return x if self.input_quantizer is None else self.input_quantizer(x, self._group)

    def allow_integer_kernel(self) -> bool:
        """Let this layer compute with an integer kernel if it can (:func:`personalq.taq.kernels.runs_in_integers`).

        The kernel is built on the first call large enough to pay for it (``SMALL_PRODUCT``), and 8-bit codes then
        move into it; a layer that only ever sees small inputs keeps dequantizing and holds nothing more.
        """
        input_spec = None if self.input_quantizer is None else self.input_quantizer.spec
        self.integer_allowed = runs_in_integers(self.packed.spec, input_spec, self, self.packed.scale.device)
        return self.integer_allowed

    def _integer_forward(self, x: torch.Tensor) -> torch.Tensor | None:
        """The layer's output from the integer kernel; None where it does not run (not allowed, an input the kernel
        does not take, or a product too small to pay for the integer path's calls)."""
        if not self.integer_allowed or multiply_adds(self, x) < SMALL_PRODUCT:
            return None
        kind = IntegerConv2d if isinstance(self, nn.Conv2d) else IntegerLinear
        if not kind.accepts(x):
            return None
        packed = self.packed
        if packed.kernel is None:
            packed.run_with(kind(packed.unpacked_codes, packed.scale, packed.offset, packed.spec.bits, self))
        return packed.kernel(self._smoothed(x), self.input_quantizer.grid(self._group), self.bias)

    def _bias_for(self, x: torch.Tensor) -> torch.Tensor | None:
        return None if self.bias is None else self.bias.to(x.dtype)

    def _float_weight(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The dequantized weight and the bias in ``x``'s float type: a half-precision pipeline (CUDA) computes the
        layer in half precision, as its float layers do."""
        return self.packed.dequantize().to(x.dtype), self._bias_for(x)


class QuantizedLinear(_Quantized, nn.Linear):
    def __init__(
        self,
        source: nn.Linear,
        packed: PackedWeight,
        input_quantizer=None,
        context=None,
        protected_weight: torch.Tensor | None = None,
        smoothing: torch.Tensor | None = None,
    ):
        nn.Module.__init__(self)
        self.in_features, self.out_features = source.in_features, source.out_features
        self._init_quantized(packed, source.bias, input_quantizer, context, smoothing)
        if protected_weight is not None and context is None:
            raise ValueError("a protected weight needs the QuantContext that says which rows it computes")
        self.register_buffer(
            "protected_weight", None if protected_weight is None else protected_weight.detach().clone()
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self._integer_forward(x)
        if out is None:
            out = F.linear(self._quantize_input(x), *self._float_weight(x))
        if self.protected_weight is None or x.dim() != 3:
            return out
        rows = self.context.protected_rows(x.shape[0], x.shape[1], x.device)
        if rows is None or not bool(rows.any()):
            return out
        # every row through the float weight, then a select: the same kernel as the float model, so the
        # protected rows match it bit for bit (a matmul over only the selected rows may round differently)
        return torch.where(rows[..., None], F.linear(x, self.protected_weight, self._bias_for(x)), out)


class QuantizedConv2d(_Quantized, nn.Conv2d):
    def __new__(cls, *args, **kwargs):
        """Constructed with ``nn.Conv2d``'s own signature (``in_channels, out_channels, kernel_size, ...``), the
        class gives a plain float ``nn.Conv2d``: peft builds a LoRA's low-rank convolutions as
        ``type(base_layer)(in_channels, rank, kernel_size, ...)``, and those stay in full precision on top of the
        quantized layer."""
        if args and not isinstance(args[0], nn.Conv2d):
            return nn.Conv2d(*args, **kwargs)
        return super().__new__(cls)

    def __init__(
        self,
        source: nn.Conv2d,
        packed: PackedWeight,
        input_quantizer=None,
        context=None,
        smoothing: torch.Tensor | None = None,
    ):
        nn.Module.__init__(self)
        for name in (
            "in_channels",
            "out_channels",
            "kernel_size",
            "stride",
            "padding",
            "dilation",
            "groups",
            "padding_mode",
            "transposed",
            "output_padding",
        ):
            setattr(self, name, getattr(source, name))
        if self.padding_mode != "zeros":
            raise ValueError(f"padding mode {self.padding_mode!r} is not supported by quantized convolutions")
        self._init_quantized(packed, source.bias, input_quantizer, context, smoothing)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self._integer_forward(x)
        if out is not None:
            return out
        return F.conv2d(
            self._quantize_input(x),
            *self._float_weight(x),
            self.stride,
            self.padding,
            self.dilation,
            self.groups,
        )
