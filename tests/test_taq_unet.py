"""Whole UNets: every layer packed, the file round trip, the default recipe, switching activation quantization
per part, the cross-attention ablation, LoRA on a quantized base, the size estimate."""

from __future__ import annotations

import copy

import pytest
import torch
from peft import LoraConfig
from taq_models import TOKENS, calibrated, tiny_unet, unet_inputs

from personalq.taq.attention import cross_attention_names
from personalq.taq.layers import QuantizedConv2d, QuantizedLinear, weights_read_repeatedly
from personalq.taq.quantize import (
    QuantizedFileError,
    TAQConfig,
    load_quantized,
    quantize_cross_attention,
    quantize_unet,
    save_quantized,
    weight_bytes,
)


@pytest.mark.parametrize("sdxl", [False, True], ids=["sd15", "sdxl"])
def test_every_layer_is_packed_and_the_file_round_trips(sdxl, tmp_path):
    unet = tiny_unet(sdxl)
    sample, kwargs = unet_inputs(sdxl, seed=1)
    with torch.no_grad():
        reference = unet(sample, 400, **kwargs).sample
    full_bytes = weight_bytes(unet)
    observer = calibrated(unet, sdxl)
    quantized = quantize_unet(unet, TAQConfig(wbits=4, abits=8, mode="taq"), observer)
    layers = [m for m in unet.modules() if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d))]
    assert layers and all(isinstance(m, (QuantizedLinear, QuantizedConv2d)) for m in layers)
    assert not any(p.dtype.is_floating_point and p.dim() >= 2 and p.numel() > 256 for p in unet.parameters())
    assert weight_bytes(unet) < 0.2 * full_bytes
    processors = [type(p).__name__ for name, p in unet.attn_processors.items() if ".attn2." in name]
    assert processors and set(processors) == {"TriggerAwareAttnProcessor"}

    protected = torch.zeros(2, TOKENS, dtype=torch.bool)
    protected[1, 1:3] = True
    with torch.no_grad(), quantized.context.protecting(protected):
        output = unet(sample, 400, **kwargs).sample
    error = float((output - reference).pow(2).mean() / reference.pow(2).mean())
    assert 0 < error < 0.5

    path = save_quantized(quantized, tmp_path / "unet.safetensors")
    reloaded = load_quantized(path)
    with torch.no_grad(), reloaded.context.protecting(protected):
        assert torch.equal(reloaded.unet(sample, 400, **kwargs).sample, output)


def test_the_default_recipe_smooths_every_rounded_input_and_keeps_the_ends_at_8_bits(tmp_path):
    """W4A4 with the default recipe: conv_in / conv_out packed and rounded at 8 bits, every other layer at 4; every
    layer whose input is rounded holds smoothing factors, the text-side K/V projections none; the file keeps both,
    and a file whose factors do not match its config is refused."""
    from safetensors import safe_open
    from safetensors.torch import save_file

    unet = tiny_unet()
    observer = calibrated(unet, False)
    config = TAQConfig(wbits=4, abits=4, mode="taq")
    assert config.smoothing == 0.75 and config.first_last_8bit and config.tag == "w4a4-taq-linear-sq0.75-ends8"
    assert (
        TAQConfig(wbits=8, abits=8).tag == "w8a8-taq-linear-sq0.75" and TAQConfig(abits=16).tag == "w8a16-taq-linear"
    )
    quantized = quantize_unet(unet, config, observer)
    layers = {name: m for name, m in unet.named_modules() if isinstance(m, (QuantizedLinear, QuantizedConv2d))}
    for name, layer in layers.items():
        ends = name in ("conv_in", "conv_out")
        assert layer.packed.spec.bits == (8 if ends else 4), name
        text_side = name.endswith(("attn2.to_k", "attn2.to_v"))
        assert (layer.smoothing is None) == text_side, name
        assert (layer.input_quantizer is None) == text_side, name
        if not text_side:
            assert layer.input_quantizer.spec.bits == (8 if ends else 4), name

    sample, kwargs = unet_inputs(False, seed=1)
    with torch.no_grad():
        output = unet(sample, 400, **kwargs).sample
    path = save_quantized(quantized, tmp_path / "unet.safetensors")
    with torch.no_grad():
        assert torch.equal(load_quantized(path).unet(sample, 400, **kwargs).sample, output)

    with safe_open(str(path), framework="pt") as handle:
        metadata, tensors = handle.metadata(), {key: handle.get_tensor(key) for key in handle.keys()}
    tensors.pop("conv_out.smoothing")
    save_file(tensors, str(tmp_path / "tampered.safetensors"), metadata=metadata)
    with pytest.raises(QuantizedFileError, match="smoothing factors of conv_out"):
        load_quantized(tmp_path / "tampered.safetensors")


def test_a_smoothed_layer_reports_its_effective_weight():
    """What peft and diffusers read as ``.weight`` is the layer's weight as it acts on its input, the factors divided
    out."""
    source = tiny_unet()
    floats = {
        name: m.weight.detach().clone()
        for name, m in source.named_modules()
        if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d))
    }
    quantize_unet(source, TAQConfig(wbits=8, abits=8), calibrated(source, False))
    smoothed = [
        (name, m)
        for name, m in source.named_modules()
        if isinstance(m, (QuantizedLinear, QuantizedConv2d)) and m.smoothing is not None
    ]
    assert smoothed
    for name, layer in smoothed:
        relative = float((layer.weight - floats[name]).norm() / floats[name].norm())
        assert relative < 0.02, name


def test_while_weights_are_read_repeatedly_each_layer_rebuilds_its_weight_once_and_only_the_last_is_kept():
    """peft reads a layer's ``.weight`` a dozen times while attaching a LoRA: inside the block those reads share one
    rebuilt tensor (the same values as outside it), and leaving the block keeps nothing."""
    source = tiny_unet()
    quantize_unet(source, TAQConfig(wbits=8, abits=8), calibrated(source, False))
    first, second = [m for m in source.modules() if isinstance(m, (QuantizedLinear, QuantizedConv2d))][:2]
    outside = first.weight
    assert first.weight is not outside  # rebuilt at every read
    with weights_read_repeatedly():
        held = first.weight
        assert first.weight is held and torch.equal(held, outside)
        assert second.weight is second.weight and first.weight is not held  # another layer's read replaces it
    assert first.weight is not first.weight
    from personalq.taq.layers import _last_weight

    assert _last_weight.held is None


def test_activation_quantization_can_be_kept_to_one_part_of_the_unet():
    """The attribution's switch: off everywhere gives the weight-only model (to float rounding); kept only in the
    cross-attention tensors, no layer rounds its input and every attn2 processor still rounds Q, K/V and
    probabilities."""
    from personalq.taq.quantize import keep_activation_quantization

    source = tiny_unet()
    sample, kwargs = unet_inputs(False, seed=1)
    observer = calibrated(source, False)

    def output(unet) -> torch.Tensor:
        with torch.no_grad():
            return unet(sample, 400, **kwargs).sample

    # unsmoothed, so that W8A8 with every activation switch off has the very weights of the W8A16 model
    w8a8 = TAQConfig(wbits=8, abits=8, mode="plain", smoothing=None)
    weights_only = output(quantize_unet(copy.deepcopy(source), TAQConfig(wbits=8, abits=16, mode="plain")).unet)
    everything = quantize_unet(copy.deepcopy(source), w8a8, observer)
    full = output(everything.unet)
    assert torch.equal(output(keep_activation_quantization(everything, lambda site: True).unet), full)
    nothing = keep_activation_quantization(quantize_unet(copy.deepcopy(source), w8a8, observer), lambda site: False)
    assert torch.allclose(output(nothing.unet), weights_only, atol=1e-6) and not torch.allclose(
        full, weights_only, atol=1e-6
    )

    cross = keep_activation_quantization(
        quantize_unet(copy.deepcopy(source), w8a8, observer), lambda site: ".attn2:" in site
    )
    assert all(
        m.input_quantizer is None for m in cross.unet.modules() if isinstance(m, (QuantizedLinear, QuantizedConv2d))
    )
    attn2 = [p for name, p in cross.unet.attn_processors.items() if ".attn2." in name]
    assert attn2 and all(
        None not in (p.quantizers.query, p.quantizers.key, p.quantizers.value, p.quantizers.probs) for p in attn2
    )


def test_cross_attention_ablation_quantizes_only_what_the_separations_treat_differently():
    """Weights and every layer input stay float; in each attn2, Q, K/V and probabilities are rounded, and the
    protected K/V rows stay exact, so the protection modes differ only where they should."""
    unet = tiny_unet()
    sample, kwargs = unet_inputs(False, seed=1)
    with torch.no_grad():
        reference = unet(sample, 400, **kwargs).sample
    full_bytes, observer = weight_bytes(unet), calibrated(unet, False)
    with pytest.raises(ValueError, match="abits 8 or 4"):
        quantize_cross_attention(unet, TAQConfig(abits=16), observer)
    outputs = {}
    for mode in ("plain", "taq"):
        model = tiny_unet()
        quantized = quantize_cross_attention(model, TAQConfig(abits=4, mode=mode), observer)
        assert weight_bytes(model) == full_bytes
        assert not any(isinstance(m, (QuantizedLinear, QuantizedConv2d)) for m in model.modules())
        assert set(quantized.ranges) and all(":" in site for site in quantized.ranges)
        processors = [p for name, p in model.attn_processors.items() if ".attn2." in name]
        assert processors and all(None not in vars(p.quantizers).values() for p in processors)
        protected = torch.zeros(2, TOKENS, dtype=torch.bool)
        protected[1, 1:3] = True
        with torch.no_grad(), quantized.context.protecting(protected if mode == "taq" else None):
            outputs[mode] = model(sample, 400, **kwargs).sample
            attn = model.get_submodule(cross_attention_names(model)[0])
            text = kwargs["encoder_hidden_states"]
            _, key, _ = attn.processor.project(attn, torch.randn(2, 16, 32), text)
            full_key = attn.to_k(text)
        rows = protected if mode == "taq" else torch.zeros_like(protected)
        assert torch.equal(key[rows], full_key[rows]) and not torch.equal(key[~rows], full_key[~rows])
    assert not torch.equal(outputs["plain"], reference) and not torch.equal(outputs["taq"], outputs["plain"])


def test_lora_stays_full_precision_on_a_quantized_base():
    unet = tiny_unet()
    quantize_unet(unet, TAQConfig(wbits=8, abits=16))
    unet.add_adapter(
        LoraConfig(r=4, lora_alpha=4, target_modules=["to_k", "to_v", "to_q", "to_out.0"], init_lora_weights=False)
    )
    lora = [p for name, p in unet.named_parameters() if "lora_" in name]
    assert lora and all(p.dtype == torch.float32 for p in lora)
    sample, kwargs = unet_inputs(False)
    with torch.no_grad():
        with_adapter = unet(sample, 10, **kwargs).sample
        unet.disable_adapters()
        without = unet(sample, 10, **kwargs).sample
    assert not torch.allclose(with_adapter, without)


def test_activation_quantization_needs_calibration_and_bad_files_are_refused(tmp_path):
    with pytest.raises(ValueError, match="calibration"):
        quantize_unet(tiny_unet(), TAQConfig(wbits=8, abits=8))
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x00" * 64)
    with pytest.raises(QuantizedFileError):
        load_quantized(bad)


@pytest.mark.parametrize("abits", [16, 4], ids=["weights-only", "smoothed"])
@pytest.mark.parametrize("protect_weights", [False, True], ids=["packed", "float-kv"])
@pytest.mark.parametrize("wbits", [8, 4])
def test_size_estimate_matches_the_quantized_model(wbits, protect_weights, abits):
    from personalq.taq.quantize import quantized_bytes

    unet = tiny_unet()
    config = TAQConfig(wbits=wbits, abits=abits, protect_weights=protect_weights)
    expected = quantized_bytes(unet, config)
    observer = calibrated(unet, False) if abits != 16 else None
    assert weight_bytes(quantize_unet(unet, config, observer).unet) == expected
