"""Integer kernels: the same results as the dequantizing path, on every layer shape SD 1.5 uses; the stored format,
the resident size (W4 stays packed) unchanged; layers they cannot run keep dequantizing. TAQ's exact protected rows on
integer kernels: tests/test_taq_processor.py."""

from __future__ import annotations

import pytest
import torch
from diffusers import UNet2DConditionModel
from peft import LoraConfig
from taq_models import TOKENS, calibrated, tiny_unet, unet_inputs
from torch import nn

import personalq.taq.layers as layers
from personalq.taq.activations import ActivationQuantizer
from personalq.taq.calibration import quantizable_layers, takes_text
from personalq.taq.context import QuantContext
from personalq.taq.kernels import IntegerConv2d, IntegerLinear, integer_support, multiply_adds
from personalq.taq.layers import PackedWeight, QuantizedConv2d, QuantizedLinear
from personalq.taq.quantize import (
    TAQConfig,
    allow_integer_kernels,
    load_quantized,
    quantize_unet,
    quantized_bytes,
    save_quantized,
    weight_bytes,
)
from personalq.taq.quantizers import AffineGrid, QuantSpec, quantize_weight

support = integer_support()
pytestmark = pytest.mark.skipif(not support.available, reason=f"no integer kernels here: {support.reason}")

RANGES = torch.tensor([[-1.5, 2.0], [-0.3, 3.0]])  # two timestep groups, one with a zero point far from the middle


@pytest.fixture
def every_call_in_integers(monkeypatch):
    """Tiny test layers are below the size where the integer path pays; compute them in integers anyway."""
    monkeypatch.setattr(layers, "SMALL_PRODUCT", 0)


def quantized_layer(source: nn.Module, wbits: int, abits: int, granularity: str, smoothing: bool, context):
    spec = QuantSpec(wbits, "linear", granularity, group_size=8)
    packed = PackedWeight.from_quantized(quantize_weight(source.weight, spec))
    quantizer = ActivationQuantizer(QuantSpec(abits, "linear", "tensor"), RANGES)
    channels = source.weight.shape[1]
    factors = torch.rand(channels, generator=torch.Generator().manual_seed(1)) + 0.5 if smoothing else None
    kind = QuantizedConv2d if isinstance(source, nn.Conv2d) else QuantizedLinear
    return kind(source, packed, quantizer, context, smoothing=factors)


LAYERS = {
    "linear-3d": (lambda: nn.Linear(72, 40), (3, 19, 72)),
    "linear-2d": (lambda: nn.Linear(64, 24, bias=False), (17, 64)),
    "conv3x3": (lambda: nn.Conv2d(16, 24, 3, padding=1), (2, 16, 9, 7)),
    "conv-stride2": (lambda: nn.Conv2d(16, 8, 3, stride=2, padding=1), (2, 16, 9, 8)),
    "conv1x1": (lambda: nn.Conv2d(24, 16, 1), (2, 24, 5, 5)),
    "conv-dilated": (lambda: nn.Conv2d(8, 8, 3, padding=2, dilation=2), (1, 8, 10, 10)),
}


@pytest.mark.parametrize("granularity", ["channel", "tensor"])
@pytest.mark.parametrize("wbits,abits", [(8, 8), (4, 8), (8, 4), (4, 4)])
@pytest.mark.parametrize("layer", list(LAYERS))
def test_integer_layers_compute_what_the_dequantizing_path_computes(
    layer, wbits, abits, granularity, every_call_in_integers
):
    torch.manual_seed(0)
    make, shape = LAYERS[layer]
    source, x = make(), torch.randn(shape) * 2
    context = QuantContext()
    dequantizing = quantized_layer(source, wbits, abits, granularity, True, context)
    integer = quantized_layer(source, wbits, abits, granularity, True, context)
    assert integer.allow_integer_kernel() and integer.packed.kernel is None  # built on the first call that pays
    with torch.no_grad():
        for group in (0, 1):
            context.group = group
            expected, got = dequantizing(x), integer(x)
            assert got.shape == expected.shape
            assert float((got - expected).abs().max()) <= 2e-6 * float(expected.abs().max())
    assert isinstance(integer.packed.kernel, (IntegerLinear, IntegerConv2d))
    assert (integer.packed.codes is None) == (wbits == 8)  # 8-bit codes move into the kernel; 4-bit ones stay packed


def test_small_calls_dequantize_and_build_no_kernel_until_a_call_pays(monkeypatch):
    torch.manual_seed(0)
    source, x = nn.Linear(32, 16), torch.randn(4, 32)
    context = QuantContext()
    dequantizing = quantized_layer(source, 8, 8, "channel", False, context)
    integer = quantized_layer(source, 8, 8, "channel", False, context)
    assert integer.allow_integer_kernel()
    assert multiply_adds(integer, x) < layers.SMALL_PRODUCT
    assert torch.equal(integer(x), dequantizing(x)) and integer.packed.kernel is None
    monkeypatch.setattr(layers, "SMALL_PRODUCT", multiply_adds(integer, x))  # this call now pays: the kernel is built
    assert torch.allclose(integer(x), dequantizing(x), rtol=0, atol=1e-5) and integer.packed.kernel is not None
    monkeypatch.undo()  # small calls after that dequantize from the kernel's int8 weight: the very same numbers
    assert torch.equal(integer(x), dequantizing(x)) and torch.equal(integer.weight, dequantizing.weight)


def test_layers_the_kernels_cannot_run_keep_dequantizing():
    context = QuantContext()
    linear = nn.Linear(32, 16)
    log_weights = QuantizedLinear(
        linear,
        PackedWeight.from_quantized(quantize_weight(linear.weight, QuantSpec(8, "log"))),
        ActivationQuantizer(QuantSpec(8, "linear", "tensor"), RANGES),
        context,
    )
    grouped_weights = quantized_layer(linear, 8, 8, "group", False, context)
    unrounded_input = QuantizedLinear(
        linear, PackedWeight.from_quantized(quantize_weight(linear.weight, QuantSpec(8))), None, context
    )
    grouped = nn.Conv2d(8, 8, 3, groups=2)
    grouped_conv = QuantizedConv2d(
        grouped,
        PackedWeight.from_quantized(quantize_weight(grouped.weight, QuantSpec(8))),
        ActivationQuantizer(QuantSpec(8, "linear", "tensor"), RANGES),
        context,
    )
    same = nn.Conv2d(8, 8, 3, padding="same")
    same_padding = QuantizedConv2d(
        same,
        PackedWeight.from_quantized(quantize_weight(same.weight, QuantSpec(8))),
        ActivationQuantizer(QuantSpec(8, "linear", "tensor"), RANGES),
        context,
    )
    for layer in (log_weights, grouped_weights, unrounded_input, grouped_conv, same_padding):
        assert not layer.allow_integer_kernel()
        layer(torch.randn(2, 8, 6, 6) if isinstance(layer, nn.Conv2d) else torch.randn(3, 32))
        assert layer.packed.kernel is None and layer.packed.codes is not None


def test_a_switched_unet_matches_saves_and_sizes_as_before(every_call_in_integers, tmp_path):
    """A whole W8A8 UNet: the output of the dequantizing path to float accuracy, the text-side K/V projections (whose
    input is not rounded) left dequantizing, the state dict and the saved file unchanged, the size estimate exact,
    and a LoRA on top still changing the output."""
    unet = tiny_unet()
    sample, kwargs = unet_inputs(False, seed=2)
    config = TAQConfig(wbits=8, abits=8, mode="taq")
    quantized = quantize_unet(unet, config, calibrated(unet, False))
    protected = torch.zeros(2, TOKENS, dtype=torch.bool)
    protected[1, 1:3] = True
    before = {name: tensor.clone() for name, tensor in quantized.unet.state_dict().items()}
    with torch.no_grad(), quantized.context.protecting(protected):
        expected = quantized.unet(sample, 300, **kwargs).sample
    full = tiny_unet()
    allowed = allow_integer_kernels(quantized)
    sites = dict(quantizable_layers(quantized.unet))
    assert allowed == sum(not takes_text(site) for site in sites)

    with torch.no_grad(), quantized.context.protecting(protected):
        got = quantized.unet(sample, 300, **kwargs).sample
        float_output = full(sample, 300, **kwargs).sample
    assert all((module.packed.kernel is None) == takes_text(site) for site, module in sites.items())
    column_sums = sum(4 * m.out_features for s, m in sites.items() if isinstance(m, nn.Linear) and not takes_text(s))
    assert weight_bytes(quantized.unet) == quantized_bytes(full, config) + column_sums
    # each layer agrees to float accuracy; an input that lands on a rounding boundary may then take the next code,
    # so across the UNet the paths differ by a small fraction of what quantization itself changes
    quantization_error = float((expected - float_output).pow(2).mean())
    assert 0 < float((got - expected).pow(2).mean()) < 0.05 * quantization_error

    after = quantized.unet.state_dict()
    assert after.keys() == before.keys() and all(torch.equal(after[k], before[k]) for k in before)
    reloaded = load_quantized(save_quantized(quantized, tmp_path / "unet.safetensors"))
    with torch.no_grad(), reloaded.context.protecting(protected):
        assert torch.equal(reloaded.unet(sample, 300, **kwargs).sample, expected)

    lora = LoraConfig(r=4, lora_alpha=4, target_modules=["to_q", "conv1"], init_lora_weights=False)
    quantized.unet.add_adapter(lora)
    with torch.no_grad(), quantized.context.protecting(protected):
        with_lora = quantized.unet(sample, 300, **kwargs).sample
    assert float((with_lora - got).abs().max()) > 1e-3


def sd15_layer_shapes() -> dict[str, set]:
    """Every distinct Linear (in, out) and Conv2d (in, out, kernel, stride) of the SD 1.5 UNet, from its published
    configuration on the meta device."""
    from personalq.standin.bases import ARCHITECTURES

    with torch.device("meta"):
        unet = UNet2DConditionModel(**ARCHITECTURES[("sd15", "real")].unet)
    shapes = {"linear": set(), "conv": set()}
    for _, module in quantizable_layers(unet):
        if isinstance(module, nn.Conv2d):
            shapes["conv"].add((module.in_channels, module.out_channels, module.kernel_size, module.stride))
        else:
            shapes["linear"].add((module.in_features, module.out_features))
    return shapes


@pytest.mark.slow
def test_the_int8_products_are_exact_on_every_sd15_layer_shape():
    """CPU int8 GEMMs have had wrong results on some processors for some shapes: every shape SD 1.5 runs is
    checked here against an int64 reference (a few rows or pixels each; the shapes, not the sizes, are the risk)."""
    generator = torch.Generator().manual_seed(0)
    shapes = sd15_layer_shapes()
    assert len(shapes["linear"]) >= 10 and len(shapes["conv"]) >= 10
    for features, outputs in sorted(shapes["linear"]):
        layer = nn.Linear(features, outputs, device="meta")
        codes = torch.randint(0, 256, (outputs, features), dtype=torch.uint8, generator=generator)
        kernel = IntegerLinear(lambda: codes, torch.ones(outputs, 1), torch.zeros(outputs, 1), 8, layer)
        signed = torch.randint(-128, 128, (24, features), dtype=torch.int8, generator=generator)
        reference = signed.long() @ (codes.long() - 128).t()
        assert torch.equal(torch._int_mm(signed, kernel.weight.t()).long(), reference), (features, outputs)
    for channels, outputs, size, stride in sorted(shapes["conv"]):
        layer = nn.Conv2d(channels, outputs, size, stride, padding=size[0] // 2, device="meta")
        codes = torch.randint(0, 256, (outputs, channels * size[0] * size[1]), dtype=torch.uint8, generator=generator)
        kernel = IntegerConv2d(lambda: codes, torch.ones(outputs, 1), torch.full((outputs, 1), -128.0), 8, layer)
        zero = 77  # on a unit grid with this zero point, x's codes are x + 77: every code from 0 to 255
        x = (torch.randint(0, 256, (1, channels, 5, 4), generator=generator) - zero).float()
        out = kernel(x, AffineGrid(1.0, zero, 256), None)
        weight = (codes.double() - 128).reshape(outputs, channels, *size)
        reference = torch.nn.functional.conv2d(x.double(), weight, None, stride, size[0] // 2)
        # the int32 sums, rounded once to float32 (the only rounding when every scale is 1)
        assert torch.equal(out, reference.float()), (channels, outputs, size, stride)
