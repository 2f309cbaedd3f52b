"""Integer compute for packed layers: int8 activations times int8 weights, accumulated exactly in int32.

The dequantizing path (:mod:`personalq.taq.layers`) rebuilds a float weight at every call and then runs a float
matmul, so low bits cost time instead of saving it. With a static activation grid (scale ``s``, zero point
``z``) and an affine per-output-channel weight (``W[n, k] = w[n] * c[n, k] + o[n]``, codes ``c`` in
``[0, 2**bits - 1]``), the same layer is an integer product plus corrections that depend on one row or one
column only::

    x ~ s * (q - z)                     q: the input's codes, uint8
    W = w * c' + o'                     c' = c - 2**(bits-1) fits int8; o' = o + 2**(bits-1) * w
    y = s*w[n] * sum_k (q - z) c'[n, k]  +  s*o'[n] * sum_k (q - z)  +  b[n]

The first sum is the int8 x int8 -> int32 product the processor's VNNI/AMX units are built for (oneDNN's int8
convolution folds ``z`` in itself; for Linear layers ``torch._int_mm`` runs on codes shifted into int8, whose
zero point is folded into the bias). The second is the weight offset's share: a per-row sum of the input codes
for a Linear, a box sum of the channel-summed codes over each output pixel's receptive field for a
convolution. Both are integers; the only roundings are the int32 product's conversion to float32 (past 2**24 for wide
layers) and the final scaling, so the result is the dequantizing path's value to float32 accuracy, not an
approximation of it (``tests/test_kernels.py`` holds it to that).

Input may be float32 or bfloat16 on the CPU (the types a base computes in there), any float type on CUDA: the codes
are made in the input's own type, as the dequantizing path rounds it, and the result is returned in it.

On CUDA the Linear layers run ``torch._int_mm`` (cuBLASLt's int8 GEMM on the GPU's int8 tensor cores) the same way,
with the row sums as a widening sum; PyTorch has no int8 convolution on CUDA, so convolutions keep the dequantizing
path there.

8-bit integer weights replace the packed codes in memory (:meth:`PackedWeight.run_with`), so such a layer stays at
one byte per weight; 4-bit codes stay packed and are unpacked per call, so W4 keeps its half-byte per weight.
Layers the kernels cannot run (the log quantizer, grouped weights, inputs that are not rounded such as the
cross-attention K/V projections, grouped convolutions) keep the dequantizing path.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from personalq import compute
from personalq.hardware import int8_units
from personalq.taq.packing import pack
from personalq.taq.quantizers import AffineGrid, QuantSpec

# Below this many multiply-adds a call takes the dequantizing path, and a layer builds its kernel only on its first
# call above it. One layer alone already gains from about 10 M (benchmarks/integer_kernels.py), but the demo zoo's
# UNet, whose calls are all smaller than that or near it, was no faster at W8 with every layer in integers and much
# slower at W4 (per-call unpacking); at 2**27 every demo layer dequantizes and every SD 1.5 layer at 256 px and up
# (200 M and more) runs in integers.
SMALL_PRODUCT = 1 << 27

# What the CPU kernels take: the float types a base computes in on a CPU (personalq.serving.float_type). bfloat16
# input is rounded to codes in bfloat16, as the dequantizing path rounds it; the products are the same integers.
CPU_FLOAT_TYPES = (torch.float32, torch.bfloat16)


@dataclass(frozen=True)
class KernelSupport:
    """Whether this process can run integer kernels, on what, and why not when it cannot."""

    available: bool
    units: str | None  # "AMX", "AVX512-VNNI", "AVX-VNNI", "NVIDIA H100 (sm_90)"; None: no int8 dot-product unit
    reason: str
    library: str = "oneDNN"
    convolutions: bool = True  # whether convolutions run in integers too (CUDA: Linear layers only)

    def describe(self) -> str:
        if not self.available:
            return f"dequantizing kernels ({self.reason})"
        scope = "" if self.convolutions else "; convolutions dequantize"
        return f"integer kernels ({self.library}, {self.units}{scope})"


@functools.lru_cache(maxsize=4)
def integer_support(device_type: str = "cpu") -> KernelSupport:
    """Integer kernels where the processor (or GPU) has int8 dot-product units and the kernels pass an exactness
    check here.

    The check runs the shapes' edge cases (odd sizes, padding, a non-trivial zero point) against an int64
    reference once per process: CPU int8 GEMMs have had wrong results on some processors, and a wrong kernel must
    fall back rather than draw wrong pictures.
    """
    if device_type == "cuda":
        return _cuda_support()
    units = int8_units()
    if units is None:
        return KernelSupport(False, None, "this processor has no VNNI or AMX int8 units")
    if not torch.backends.mkldnn.is_available():
        return KernelSupport(False, units, "this PyTorch build has no oneDNN")
    try:
        exact = compute.run_apart(_self_test)  # the app's readout asks too: not queued behind warm-up
    except (RuntimeError, AttributeError) as error:  # AttributeError: a build without the oneDNN int8 operators
        return KernelSupport(False, units, f"the int8 kernels failed to run: {error}")
    if not exact:
        return KernelSupport(False, units, "the int8 kernels gave wrong results on this processor")
    return KernelSupport(True, units, "")


def _cuda_support() -> KernelSupport:
    if not torch.cuda.is_available():
        return KernelSupport(False, None, "no CUDA device", "cuBLASLt", False)
    major, minor = torch.cuda.get_device_capability()
    units = f"{torch.cuda.get_device_name()} (sm_{major}{minor})"
    generator = torch.Generator().manual_seed(0)
    a = torch.randint(-128, 128, (40, 72), dtype=torch.int8, generator=generator)
    b = torch.randint(-128, 128, (24, 72), dtype=torch.int8, generator=generator)
    try:
        product = torch._int_mm(a.cuda(), b.cuda().t()).cpu()
    except RuntimeError as error:  # e.g. a GPU without int8 tensor cores
        return KernelSupport(False, units, f"torch._int_mm failed on this GPU: {error}", "cuBLASLt", False)
    if not torch.equal(product.long(), a.long() @ b.long().t()):
        return KernelSupport(False, units, "torch._int_mm gave wrong results on this GPU", "cuBLASLt", False)
    return KernelSupport(True, units, "", "cuBLASLt", False)


def _self_test() -> bool:
    generator = torch.Generator().manual_seed(0)
    a = torch.randint(-128, 128, (19, 72), dtype=torch.int8, generator=generator)
    b = torch.randint(-128, 128, (40, 72), dtype=torch.int8, generator=generator)
    linear_ok = torch.equal(torch._int_mm(a, b.t()).long(), a.long() @ b.long().t())
    weight = torch.randint(-128, 128, (24, 16, 3, 3), dtype=torch.int8, generator=generator)
    codes = torch.randint(0, 256, (2, 16, 9, 7), dtype=torch.uint8, generator=generator)
    ones = torch.ones(24)
    packed = torch.ops.onednn.qconv_prepack(weight, ones, 1.0, 0, [1, 1], [1, 1], [1, 1], 1, None)
    out = _onednn_conv(codes, 1.0, 37, packed, ones, None, (1, 1), (1, 1), (1, 1))
    reference = F.conv2d(codes.double() - 37, weight.double(), padding=1)
    return linear_ok and torch.equal(out.double(), reference)


def _onednn_conv(codes, scale, zero_point, weight, weight_scales, bias, stride, padding, dilation) -> torch.Tensor:
    return torch.ops.onednn.qconv2d_pointwise(
        codes.contiguous(memory_format=torch.channels_last),
        scale,
        zero_point,
        weight,
        weight_scales,
        _zero_points(len(weight_scales)),
        bias,
        list(stride),
        list(padding),
        list(dilation),
        1,
        1.0,
        0,
        torch.float32,
        "none",
        [],
        "",
    )


def multiply_adds(layer: nn.Module, x: torch.Tensor) -> int:
    """Multiply-adds of ``layer`` (a Linear or Conv2d) on input ``x``: what decides whether a call pays for the
    integer path."""
    if isinstance(layer, nn.Conv2d):
        images_and_channels = x.numel() // (x.shape[-2] * x.shape[-1])
        pixels = x.shape[-2] * x.shape[-1] // (layer.stride[0] * layer.stride[1])
        return images_and_channels * pixels * layer.out_channels * layer.kernel_size[0] * layer.kernel_size[1]
    return x.numel() * layer.out_features


@functools.lru_cache(maxsize=64)
def _zero_points(outputs: int) -> torch.Tensor:
    """The weights' zero points (all zero: the centred codes are symmetric), shared by every layer of that width."""
    return torch.zeros(outputs, dtype=torch.int64)


@functools.lru_cache(maxsize=64)
def _ones(length: int) -> torch.Tensor:
    """An int8 column of ``length`` ones, shared by every layer of that input width."""
    return torch.ones(length, 1, dtype=torch.int8)


def runs_in_integers(spec: QuantSpec, input_spec: QuantSpec | None, layer: nn.Module, device: torch.device) -> bool:
    """Whether the integer kernels compute this layer on ``device``: affine weights per channel (or per tensor), an
    input rounded to a per-tensor affine grid, and no groups in a convolution; on CUDA, Linear layers whose widths
    are multiples of 8 (what cuBLASLt's int8 GEMM takes)."""
    if input_spec is None or input_spec.kind != "linear" or spec.kind != "linear" or spec.granularity == "group":
        return False
    if device.type == "cuda":
        return isinstance(layer, nn.Linear) and layer.in_features % 8 == 0 and layer.out_features % 8 == 0
    return not isinstance(layer, nn.Conv2d) or (layer.groups == 1 and not isinstance(layer.padding, str))


class _IntegerKernel(nn.Module):
    """What both kernels share: the weight's per-output-channel scale ``w`` and centred offset ``o'``, the codes'
    centre (the stored codes are ``c' + centre``), and where the centred codes come from.

    8-bit codes are held here as int8, one byte each as stored, in the kernel's own layout (:attr:`holds_codes`:
    the packed copy is released). 4-bit codes stay packed two to a byte and are unpacked per call (and, for a
    convolution, prepacked into oneDNN's layout), so a W4 layer keeps its resident size; that costs one or two passes
    over the weight per call, most where a layer has many weights and few pixels. The bias stays the layer's and is
    passed in.
    """

    def __init__(self, codes_of: Callable[[], torch.Tensor], scale: torch.Tensor, offset: torch.Tensor, bits: int):
        super().__init__()
        self.bits = bits
        self.centre = 2 ** (bits - 1)
        self.holds_codes = bits == 8
        self._codes_of = codes_of  # the packed weight's unpacked codes, (slices, elements), when not held here
        out = self.weight_shape[0]
        # the packed weight's own per-channel scales and offsets (views, not copies), or per-tensor ones widened
        self.register_buffer("weight_scale", scale.reshape(-1).expand(out).contiguous(), persistent=False)
        self.register_buffer("stored_offset", offset.reshape(-1).expand(out).contiguous(), persistent=False)

    @property
    def weight_offset(self) -> torch.Tensor:
        """``o' = o + centre * w``: the offset of the centred codes."""
        return self.stored_offset + self.centre * self.weight_scale

    weight_shape: tuple[int, ...]

    def _centred(self, codes: torch.Tensor) -> torch.Tensor:
        return (codes.to(torch.int16) - self.centre).to(torch.int8).reshape(self.weight_shape).contiguous()

    def centred_weight(self) -> torch.Tensor:
        """The int8 weight ``c'`` in the layer's weight shape."""
        raise NotImplementedError

    def dequantized_weight(self) -> torch.Tensor:
        """The float weight for calls too small to pay: ``w * c + o`` from the stored codes ``c = c' + centre``, the
        same arithmetic as :func:`personalq.taq.quantizers.dequantize`, so it is bit-identical to the weight before the
        kernel existed (a small request gives the same image whether or not a large one came first)."""
        centred = self.centred_weight()
        shape = (-1,) + (1,) * (centred.dim() - 1)
        codes = centred.float() + self.centre
        return codes * self.weight_scale.view(shape) + self.stored_offset.view(shape)

    def stored_codes(self, rows: int) -> torch.Tensor:
        """The packed bytes :class:`PackedWeight` stores (``rows`` slices), rebuilt from the centred int8 weight."""
        return pack((self.centred_weight().to(torch.int16) + self.centre).reshape(rows, -1), self.bits)


class IntegerLinear(_IntegerKernel):
    """``torch._int_mm`` on input codes shifted into int8 against the centred weight, (out, in)."""

    def __init__(self, codes_of, scale: torch.Tensor, offset: torch.Tensor, bits: int, layer: nn.Linear):
        self.weight_shape = (layer.out_features, layer.in_features)
        super().__init__(codes_of, scale, offset, bits)
        centred = self._centred(codes_of())
        self.register_buffer("weight", centred if self.holds_codes else None, persistent=False)
        column_sums = centred.sum(1, dtype=torch.int32).float()  # the one thing a kernel adds: 4 bytes per output
        self.register_buffer("column_sums", column_sums, persistent=False)

    def centred_weight(self) -> torch.Tensor:
        return self.weight if self.holds_codes else self._centred(self._codes_of())

    @staticmethod
    def accepts(x: torch.Tensor) -> bool:
        """On CUDA, ``torch._int_mm`` takes more than 16 rows; on the CPU, float32 or bfloat16 input (the float
        types a base computes in there)."""
        if x.is_cuda:
            return x.numel() // x.shape[-1] > 16
        return x.dtype in CPU_FLOAT_TYPES

    def forward(self, x: torch.Tensor, grid: AffineGrid, bias: torch.Tensor | None) -> torch.Tensor:
        leading, features = x.shape[:-1], x.shape[-1]
        signed = grid.signed_codes(x.reshape(-1, features))
        # per output: the product's scale s*w, and the constant b - s*z'*w*colsum(c') (signed codes carry the zero
        # point z' = grid.signed_zero_point); vectors as long as the output, computed per call
        product = grid.scale * self.weight_scale
        constant = product * self.column_sums * -grid.signed_zero_point
        if bias is not None:
            constant += bias
        offset_scale = grid.scale * self.weight_offset
        # sum_k (q - z): on the CPU the row sums as one more int8 product, exact and far faster than a widening sum
        # there; cuBLASLt takes no product one column wide
        if signed.is_cuda:
            row_sums = signed.sum(1, dtype=torch.int32)
        else:
            row_sums = torch._int_mm(signed, _ones(features)).squeeze(1)
        row_sums = row_sums - features * grid.signed_zero_point
        product_codes = torch._int_mm(signed, self.centred_weight().t())
        # converted in place: the float result takes the int32 product's memory, element by element (an
        # elementwise cast reads each element before writing it), so no second output-sized buffer is allocated
        y = product_codes.view(torch.float32).copy_(product_codes)
        y.mul_(product).add_(constant).addr_(row_sums.float(), offset_scale)
        return y.reshape(*leading, -1).to(x.dtype)


class IntegerConv2d(_IntegerKernel):
    """oneDNN's int8 convolution (uint8 input codes with their zero point, int8 weights in oneDNN's blocked layout)
    and the weight offset's share as a box sum over each output pixel's receptive field."""

    def __init__(self, codes_of, scale: torch.Tensor, offset: torch.Tensor, bits: int, layer: nn.Conv2d):
        self.weight_shape = (layer.out_channels, layer.in_channels, *layer.kernel_size)
        super().__init__(codes_of, scale, offset, bits)
        self.stride, self.padding, self.dilation = layer.stride, layer.padding, layer.dilation
        held = self._prepacked(self._centred(codes_of())) if self.holds_codes else None
        self.register_buffer("weight", held, persistent=False)
        self.kernel_size = layer.kernel_size

    def _prepacked(self, centred: torch.Tensor) -> torch.Tensor:
        return torch.ops.onednn.qconv_prepack(
            centred, self.weight_scale, 1.0, 0, list(self.stride), list(self.padding), list(self.dilation), 1, None
        )

    def centred_weight(self) -> torch.Tensor:
        return self.weight.to_dense() if self.holds_codes else self._centred(self._codes_of())

    @staticmethod
    def accepts(x: torch.Tensor) -> bool:
        return x.dtype in CPU_FLOAT_TYPES

    def forward(self, x: torch.Tensor, grid: AffineGrid, bias: torch.Tensor | None) -> torch.Tensor:
        codes = grid.codes(x)
        weight = self.weight if self.holds_codes else self._prepacked(self.centred_weight())
        y = _onednn_conv(
            codes,
            grid.scale,
            grid.zero_point,
            weight,
            self.weight_scale,
            None if bias is None else bias.float(),
            self.stride,
            self.padding,
            self.dilation,
        )
        channel_sums = (codes.sum(1, keepdim=True, dtype=torch.int32) - x.shape[1] * grid.zero_point).float()
        y = y.addcmul_(self._window_sums(channel_sums), (grid.scale * self.weight_offset).view(1, -1, 1, 1))
        return y.to(x.dtype)

    def _window_sums(self, channel_sums: torch.Tensor) -> torch.Tensor:
        """Sums of ``channel_sums`` over each output pixel's receptive field, zero outside the image (as zero-padded
        ``x`` is). Sum pooling where it applies: the same integers exactly (they stay below 2**24), at a tenth of a
        one-channel convolution's fixed cost."""
        kernel = self.kernel_size
        if kernel == (1, 1) and self.stride == (1, 1) and self.padding == (0, 0):
            return channel_sums
        if self.dilation == (1, 1) and all(p <= k // 2 for p, k in zip(self.padding, kernel)):
            return F.avg_pool2d(channel_sums, kernel, self.stride, self.padding, divisor_override=1)
        window = torch.ones(1, 1, *kernel)
        return F.conv2d(channel_sums, window, None, self.stride, self.padding, self.dilation)
