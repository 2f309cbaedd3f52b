"""Quantized layers and variants in a half-precision pipeline (what CUDA serves in), and the CUDA integer kernels.

The CPU tests run everywhere; the CUDA ones where a GPU is present (``benchmarks/gpu_kernels.py`` measures them).
"""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
from peft import LoraConfig
from taq_models import calibrated, tiny_unet, unet_inputs
from torch import nn

import personalq.taq.layers as layers
from personalq.taq.activations import ActivationQuantizer
from personalq.taq.context import QuantContext
from personalq.taq.kernels import IntegerLinear, integer_support
from personalq.taq.layers import PackedWeight, QuantizedConv2d, QuantizedLinear
from personalq.taq.quantize import TAQConfig, allow_integer_kernels, match_float_dtype, quantize_unet
from personalq.taq.quantizers import QuantSpec, quantize_weight

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
RANGE = torch.tensor([[-1.5, 2.0]])


def quantized_layer(source: nn.Module, smoothing: bool = True) -> nn.Module:
    packed = PackedWeight.from_quantized(quantize_weight(source.weight, QuantSpec(8)))
    quantizer = ActivationQuantizer(QuantSpec(8, "linear", "tensor"), RANGE.to(source.weight.device))
    factors = torch.rand(source.weight.shape[1], generator=torch.Generator().manual_seed(1)) + 0.5
    kind = QuantizedConv2d if isinstance(source, nn.Conv2d) else QuantizedLinear
    return kind(
        source, packed, quantizer, QuantContext(), smoothing=factors.to(source.weight.device) if smoothing else None
    )


@pytest.mark.parametrize(
    "source,shape", [(nn.Linear(24, 16), (2, 5, 24)), (nn.Conv2d(8, 16, 3, padding=1), (2, 8, 6, 6))]
)
def test_quantized_layers_compute_in_the_inputs_half_precision(source, shape):
    torch.manual_seed(0)
    layer, x = quantized_layer(source), torch.randn(shape)
    with torch.no_grad():
        full, half = layer(x), layer(x.bfloat16())
    assert half.dtype == torch.bfloat16 and full.dtype == torch.float32
    assert float((half.float() - full).abs().max()) <= 0.05 * float(full.abs().max())


def test_a_float32_variant_runs_in_a_bf16_pipeline_once_its_float_parts_match():
    unet = tiny_unet()
    config = TAQConfig(wbits=8, abits=8, mode="taq")
    variant = quantize_unet(copy.deepcopy(unet), config, calibrated(unet, False))
    sample, kwargs = unet_inputs(False)
    with torch.no_grad():
        full = variant.unet(sample, 500, **kwargs).sample
        match_float_dtype(variant, torch.bfloat16)
        half = variant.unet(sample.bfloat16(), 500, encoder_hidden_states=kwargs["encoder_hidden_states"].bfloat16())
    assert half.sample.dtype == torch.bfloat16
    assert float((half.sample.float() - full).abs().mean()) <= 0.05 * float(full.abs().mean())
    packed = variant.unet.conv_in.packed  # the packed weight's scales keep float32; the norms follow the pipeline
    assert packed.scale.dtype == packed.offset.dtype == torch.float32
    assert variant.unet.conv_norm_out.weight.dtype == torch.bfloat16
    # peft makes a LoRA's matrices in the type its base layer's weight reports: the pipeline's, so a bf16 pipeline's
    # LoRA computes in bf16 instead of casting every activation to float32 and back
    assert variant.unet.conv_in.weight.dtype == torch.bfloat16
    variant.unet.add_adapter(LoraConfig(r=4, target_modules=["to_k", "to_q"], init_lora_weights=False))
    lora = [p for name, p in variant.unet.named_parameters() if "lora_" in name]
    assert lora and all(p.dtype == torch.bfloat16 for p in lora)


@cuda
def test_cuda_has_integer_linear_kernels_and_no_integer_convolutions():
    support = integer_support("cuda")
    assert support.available, support.reason
    assert not support.convolutions and "convolutions dequantize" in support.describe()
    conv = quantized_layer(nn.Conv2d(16, 16, 3, padding=1).cuda())
    assert quantized_layer(nn.Linear(64, 32).cuda()).allow_integer_kernel()
    assert not conv.allow_integer_kernel()
    assert not quantized_layer(nn.Linear(60, 32).cuda()).allow_integer_kernel()  # cuBLASLt takes widths of 8n


@cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("shape", [(2, 4096, 320), (512, 1280), (3, 19, 64)])
def test_cuda_integer_linear_is_the_quantized_layer_computed_exactly(dtype, shape, monkeypatch):
    """The integer kernel against the same quantized arithmetic in float64: same input codes, same weight."""
    monkeypatch.setattr(layers, "SMALL_PRODUCT", 0)
    torch.manual_seed(0)
    features = shape[-1]
    source = nn.Linear(features, 2 * features).cuda()
    layer = quantized_layer(source)
    x = (torch.randn(shape, device="cuda") * 1.5).to(dtype)
    assert layer.allow_integer_kernel()
    with torch.no_grad():
        got = layer(x)
        assert isinstance(layer.packed.kernel, IntegerLinear) and got.dtype == dtype
        grid = layer.input_quantizer.grid(0)
        smoothed = x / layer.smoothing.to(dtype)
        codes = grid.signed_codes(smoothed.reshape(-1, features)).double() - grid.signed_zero_point
        expected = F.linear(codes * grid.scale, layer.packed.dequantize().double(), layer.bias.double())
    tolerance = {torch.float32: 1e-5, torch.bfloat16: 1e-2, torch.float16: 2e-3}[dtype]
    error = (got.reshape(expected.shape).double() - expected).abs().max()
    assert float(error) <= tolerance * float(expected.abs().max())


cpu_integers = pytest.mark.skipif(not integer_support("cpu").available, reason="no CPU integer kernels here")


@cpu_integers
@pytest.mark.parametrize(
    "source,shape",
    [
        (nn.Linear(64, 96), (2, 37, 64)),
        (nn.Conv2d(16, 24, 3, padding=1), (2, 16, 9, 7)),
        (nn.Conv2d(16, 8, 1), (1, 16, 5, 5)),
    ],
)
def test_cpu_integer_kernels_take_bf16_input_and_compute_the_quantized_layer_exactly(source, shape, monkeypatch):
    """A bf16 pipeline on a CPU with bf16 units (personalq.serving.float_type): the kernels round the input to codes in
    bf16, as the dequantizing path does, and compute with the same integers."""
    monkeypatch.setattr(layers, "SMALL_PRODUCT", 0)
    torch.manual_seed(0)
    layer = quantized_layer(source)
    x = (torch.randn(shape) * 1.5).bfloat16()
    assert layer.allow_integer_kernel()
    with torch.no_grad():
        got = layer(x)
        assert layer.packed.kernel is not None and got.dtype == torch.bfloat16
        grid = layer.input_quantizer.grid(0)
        channel = -1 if isinstance(source, nn.Linear) else 1
        shaped = layer.smoothing.bfloat16().reshape([-1] + [1] * (x.dim() - 2) if channel == 1 else [-1])
        # the reference rounds in float64, not through the grid under test: bf16 rounding may move a code by one
        exact = ((x / shaped).double() / grid.scale).round() + grid.zero_point
        inputs = (exact.clamp(0, grid.levels - 1) - grid.zero_point) * grid.scale
        weight, bias = layer.packed.dequantize().double(), layer.bias.double()
        if isinstance(source, nn.Linear):
            expected = F.linear(inputs, weight, bias)
        else:
            expected = F.conv2d(inputs, weight, bias, source.stride, source.padding)
    error = (got.double() - expected).abs().max()
    assert float(error) <= 1e-2 * float(expected.abs().max())  # bf16's own rounding of the output


@pytest.mark.parametrize("device", [pytest.param("cpu", marks=cpu_integers), pytest.param("cuda", marks=cuda)])
def test_a_bf16_variant_with_integer_kernels_is_as_close_to_float32_as_its_dequantizing_twin(device, monkeypatch):
    """In bf16 the dequantizing path rounds the weight and multiplies in bf16; the integer path's product is exact.
    Against the same variant computed in float32, integer kernels must be no further off than dequantizing. On CUDA
    the Linear layers run in integers, on the CPU the convolutions too."""
    monkeypatch.setattr(layers, "SMALL_PRODUCT", 0)
    unet = tiny_unet()
    config = TAQConfig(wbits=8, abits=8, mode="taq")
    observer = calibrated(unet, False)
    sample, kwargs = unet_inputs(False)
    sample, text = sample.to(device), kwargs["encoder_hidden_states"].to(device)
    outputs = {}
    for name, dtype, integer in (
        ("float32", torch.float32, False),
        ("bf16", torch.bfloat16, False),
        ("int", torch.bfloat16, True),
    ):
        variant = quantize_unet(copy.deepcopy(unet), config, observer)
        variant.unet.to(device)
        match_float_dtype(variant, dtype)
        if integer:
            assert allow_integer_kernels(variant) > 0
        with torch.no_grad():
            outputs[name] = variant.unet(sample.to(dtype), 500, encoder_hidden_states=text.to(dtype)).sample.float()
        if integer:
            kernels = [
                m.kernel for m in variant.unet.modules() if isinstance(m, PackedWeight) and m.kernel is not None
            ]
            assert kernels and any(isinstance(k, IntegerLinear) for k in kernels)
            assert device == "cpu" or all(isinstance(k, IntegerLinear) for k in kernels)
    reference = outputs["float32"]
    dequantizing, integer = ((outputs[name] - reference).abs().mean() for name in ("bf16", "int"))
    assert float(integer) <= 1.1 * float(dequantizing) and float(integer) <= 0.05 * float(reference.abs().mean())


@cuda
def test_on_cuda_auto_dequantizes_and_integer_asks_for_the_int8_linear_layers(tmp_path):
    from personalq.config import load_settings
    from personalq.serving.engine import Engine

    settings = load_settings(home=tmp_path, device="cuda")
    auto, integer = (Engine(settings.model_copy(update={"kernels": k})).kernels for k in ("auto", "integer"))
    assert not auto.available and "PERSONALQ_KERNELS=integer" in auto.describe()
    assert integer.available and integer.describe().startswith("integer kernels (cuBLASLt")
