"""Uniform affine and sign-preserving logarithmic quantizers, for weights and for activations.

A quantizer maps a float tensor to integer codes plus a small set of parameters per slice (the whole
tensor, each output channel, or each group of ``group_size`` input weights). The uniform quantizer is
affine: ``x ~ code * scale + offset`` with codes in ``[0, 2**bits - 1]``. The logarithmic quantizer keeps the
sign and spends the remaining bits on exponents: ``x ~ sign * scale * base**-e`` with ``e`` in
``[0, 2**(bits-1) - 2]`` and one code kept for zero, which resolves small values finely and large ones
coarsely, the shape of weight and post-softmax distributions.

Clipping ranges are searched for the smallest mean squared error (round-to-nearest with MSE-searched
scales), because at 4 bits the min/max range wastes most levels on a few outliers.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import torch

warnings.filterwarnings("ignore", message=r"torch\.quantize_per_tensor", category=UserWarning)

Kind = Literal["linear", "log"]
Granularity = Literal["tensor", "channel", "group"]
CLIP_RATIOS = torch.linspace(1.0, 0.3, 36)


@dataclass(frozen=True)
class QuantSpec:
    bits: int
    kind: Kind = "linear"
    granularity: Granularity = "channel"
    group_size: int = 64

    def __post_init__(self):
        if self.bits not in (2, 3, 4, 8):
            raise ValueError(f"unsupported bit width {self.bits}")
        if self.kind not in ("linear", "log"):
            raise ValueError(f"unknown quantizer {self.kind!r}")

    @property
    def levels(self) -> int:
        return 2**self.bits

    def row_shape(self, weight_shape: torch.Size) -> tuple[int, int]:
        """(rows, elements per row): the slices of a weight of this shape that share quantization parameters."""
        numel = weight_shape.numel()
        if self.granularity == "tensor":
            return 1, numel
        if self.granularity == "channel":
            return weight_shape[0], numel // weight_shape[0]
        if (numel // weight_shape[0]) % self.group_size:
            raise ValueError(f"{numel // weight_shape[0]} inputs are not a multiple of group size {self.group_size}")
        return numel // self.group_size, self.group_size

    @property
    def log_exponents(self) -> int:
        """Magnitude levels of the log quantizer: half the codes per sign, one of them zero."""
        return 2 ** (self.bits - 1) - 1

    @property
    def log_base(self) -> float:
        """2 at 4 bits (as in the paper); finer at 8 bits so 127 levels span 16 octaves rather than 127."""
        return 2.0 ** (min(self.log_exponents, 16) / self.log_exponents)


# --- elementwise round trips (the arithmetic both weights and activations share) -----------------------------


def linear_codes(
    x: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, spec: QuantSpec
) -> tuple[torch.Tensor, torch.Tensor]:
    """Codes in ``[0, levels-1]`` and the scale for range ``[lo, hi]`` (broadcast against ``x``)."""
    scale = ((hi - lo) / (spec.levels - 1)).clamp_min(1e-12)
    codes = torch.clamp(torch.round((x - lo) / scale), 0, spec.levels - 1)
    return codes, scale


def linear_round_trip(x: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, spec: QuantSpec) -> torch.Tensor:
    codes, scale = linear_codes(x, lo, hi, spec)
    return codes * scale + lo


def log_codes(x: torch.Tensor, peak: torch.Tensor, spec: QuantSpec) -> torch.Tensor:
    """Signed codes: ``0`` is zero, ``±(e+1)`` is ``±peak * base**-e``."""
    peak = peak.clamp_min(1e-12)
    magnitude = x.abs() / peak
    exponent = torch.round(-torch.log(magnitude.clamp_min(1e-30)) / torch.log(torch.tensor(spec.log_base))).clamp_min(
        0
    )
    # values below half the smallest level's magnitude round to zero
    vanishing = exponent > spec.log_exponents - 1
    code = torch.where(vanishing, torch.zeros_like(exponent), exponent + 1)
    return torch.sign(x) * code


def log_values(codes: torch.Tensor, peak: torch.Tensor, spec: QuantSpec) -> torch.Tensor:
    magnitude = peak * torch.pow(torch.tensor(spec.log_base, dtype=peak.dtype), -(codes.abs() - 1))
    return torch.where(codes == 0, torch.zeros_like(magnitude), torch.sign(codes) * magnitude)


def log_round_trip(x: torch.Tensor, peak: torch.Tensor, spec: QuantSpec) -> torch.Tensor:
    return log_values(log_codes(x, peak, spec), peak, spec)


# --- ranges --------------------------------------------------------------------------------------------------


def weight_rows(weight: torch.Tensor, spec: QuantSpec) -> torch.Tensor:
    """The weight as rows that share quantization parameters: (slices, elements)."""
    return weight.reshape(spec.row_shape(weight.shape))


def search_range(rows: torch.Tensor, spec: QuantSpec) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row, the clipped range with the least squared round-trip error.

    Returns ``(lo, hi)`` for the linear quantizer and ``(peak, peak)`` for the log quantizer, each (rows, 1).
    """
    rows = rows.float()
    if spec.kind == "linear":
        lo0, hi0 = rows.min(1, keepdim=True).values.clamp_max(0), rows.max(1, keepdim=True).values.clamp_min(0)
    else:
        hi0 = rows.abs().max(1, keepdim=True).values
        lo0 = hi0
    best_err = torch.full_like(hi0, float("inf"))
    best_lo, best_hi = lo0.clone(), hi0.clone()
    for ratio in CLIP_RATIOS.tolist():
        lo, hi = lo0 * ratio, hi0 * ratio
        approx = linear_round_trip(rows, lo, hi, spec) if spec.kind == "linear" else log_round_trip(rows, hi, spec)
        err = (approx - rows).pow(2).sum(1, keepdim=True)
        better = err < best_err
        best_err = torch.where(better, err, best_err)
        best_lo, best_hi = torch.where(better, lo, best_lo), torch.where(better, hi, best_hi)
    return best_lo, best_hi


# --- weights ---------------------------------------------------------------------------------------------------


@dataclass
class QuantizedWeight:
    """Integer codes (unpacked, int16 to hold signed log codes) and per-slice parameters of one weight."""

    codes: torch.Tensor  # (slices, elements)
    scale: torch.Tensor  # (slices, 1): linear step, or the log quantizer's peak
    offset: torch.Tensor  # (slices, 1): linear range start; unused (zeros) for log
    shape: torch.Size
    spec: QuantSpec

    def dequantize(self) -> torch.Tensor:
        return dequantize(self.codes, self.scale, self.offset, self.spec).reshape(self.shape)


def dequantize(codes: torch.Tensor, scale: torch.Tensor, offset: torch.Tensor, spec: QuantSpec) -> torch.Tensor:
    if spec.kind == "linear":
        return codes.float() * scale + offset
    return log_values(codes.float(), scale, spec)


def quantize_weight(weight: torch.Tensor, spec: QuantSpec) -> QuantizedWeight:
    rows = weight_rows(weight.detach().float(), spec)
    lo, hi = search_range(rows, spec)
    if spec.kind == "linear":
        codes, scale = linear_codes(rows, lo, hi, spec)
        offset = lo
    else:
        codes, scale, offset = log_codes(rows, hi, spec), hi, torch.zeros_like(hi)
    return QuantizedWeight(codes.to(torch.int16), scale, offset, weight.shape, spec)


# --- activations -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AffineGrid:
    """A per-tensor uniform grid whose zero point is a whole code, so zero stays exactly representable."""

    scale: float
    zero_point: int
    levels: int

    @classmethod
    def for_range(cls, lo: float, hi: float, spec: QuantSpec) -> "AffineGrid":
        scale = max((hi - lo) / (spec.levels - 1), 1e-12)
        return cls(scale, int(min(max(round(-lo / scale), 0), spec.levels - 1)), spec.levels)

    def _quantized(self, x: torch.Tensor, signed: bool = False) -> torch.Tensor:
        """``x`` as a quantized tensor on this grid (float32 only): quint8, or qint8 with codes shifted by -128.

        quint8's vectorized kernels are far faster on CPU than fake_quantize_per_tensor_affine (see
        docs/architecture.md, TAQ); clamping first keeps the codes inside the 2**bits grid when bits < 8.
        """
        if self.levels != 256:
            x = x.clamp(-self.zero_point * self.scale, (self.levels - 1 - self.zero_point) * self.scale)
        if signed:
            return torch.quantize_per_tensor(x, self.scale, self.signed_zero_point, torch.qint8)
        return torch.quantize_per_tensor(x, self.scale, self.zero_point, torch.quint8)

    @property
    def signed_zero_point(self) -> int:
        """The zero point of :meth:`signed_codes`: codes shifted by 128 at 8 bits; below 8 bits ``code - zero_point``
        fits int8 as it is, so zero is code 0 and nothing needs correcting for it."""
        return self.zero_point - 128 if self.levels > 128 else 0

    def codes(self, x: torch.Tensor) -> torch.Tensor:
        """The codes of ``x`` (uint8, ``[0, levels-1]``): what the integer kernels multiply. Made as
        :meth:`round_trip` makes them for ``x``'s type."""
        if x.dtype == torch.float32:
            return self._quantized(x).int_repr()
        return self._rounded(x).to(torch.uint8)

    def signed_codes(self, x: torch.Tensor) -> torch.Tensor:
        """The codes shifted into int8 (zero point :attr:`signed_zero_point`): the operand of ``torch._int_mm``.
        Made as :meth:`round_trip` makes them for ``x``'s type, so both paths round every input alike."""
        if x.dtype == torch.float32:
            return self._quantized(x, signed=True).int_repr()
        return self._rounded(x).sub_(self.zero_point - self.signed_zero_point).to(torch.int8)

    def _rounded(self, x: torch.Tensor) -> torch.Tensor:
        """The codes of half-precision ``x`` in its own type (quantized tensors take float32 only)."""
        return x.div(self.scale).round_().add_(self.zero_point).clamp_(0, self.levels - 1)

    def round_trip(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype == torch.float32:
            return self._quantized(x).dequantize()
        return self._rounded(x).sub_(self.zero_point).mul_(self.scale)
