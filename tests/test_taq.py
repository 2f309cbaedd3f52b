"""TAQ: quantizer error bounds, int4 packing, trigger masks, the processor's protected rows, whole UNets."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch
from diffusers import UNet2DConditionModel
from diffusers.models.attention_processor import Attention
from peft import LoraConfig

from personalq.taq.activations import ActivationQuantizer, Observer
from personalq.taq.attention import AttentionQuantizers, TriggerAwareAttnProcessor, cross_attention_names
from personalq.taq.calibration import observing
from personalq.taq.context import QuantContext
from personalq.taq.layers import QuantizedConv2d, QuantizedLinear
from personalq.taq.masks import MODES, token_mask
from personalq.taq.packing import pack, unpack
from personalq.taq.quantize import (QuantizedFileError, TAQConfig, load_quantized, quantize_cross_attention, quantize_unet,
                                    save_quantized, weight_bytes)
from personalq.taq.quantizers import QuantSpec, quantize_weight
from personalq.zoo.models import load_tokenizer

TOKENS = 8
TEXT_DIM = 32


# --- quantizers ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("granularity", ["tensor", "channel", "group"])
@pytest.mark.parametrize("bits", [8, 4])
def test_linear_round_trip_is_within_half_a_step_inside_the_range(bits, granularity):
    weight = torch.randn(16, 64, generator=torch.Generator().manual_seed(bits))
    spec = QuantSpec(bits, "linear", granularity, group_size=32)
    q = quantize_weight(weight, spec)
    rows = weight.reshape(q.codes.shape[0], -1)
    step = q.scale
    lo, hi = q.offset, q.offset + step * (2**bits - 1)
    inside = (rows >= lo) & (rows <= hi)
    error = (q.dequantize().reshape(rows.shape) - rows).abs()
    assert bool((error[inside] <= (step / 2 + 1e-6).expand_as(rows)[inside]).all())
    assert int(q.codes.min()) >= 0 and int(q.codes.max()) <= 2**bits - 1
    relative = float((error**2).mean() / rows.pow(2).mean())
    assert relative < (1e-4 if bits == 8 else 2e-2)


@pytest.mark.parametrize("bits", [8, 4])
def test_log_round_trip_keeps_sign_and_bounded_relative_error(bits):
    weight = torch.randn(8, 128, generator=torch.Generator().manual_seed(3))
    spec = QuantSpec(bits, "log", "channel")
    q = quantize_weight(weight, spec)
    approx = q.dequantize()
    nonzero = approx != 0
    assert bool((torch.sign(approx[nonzero]) == torch.sign(weight[nonzero])).all())
    peak = q.scale.expand_as(weight)
    smallest = peak * spec.log_base ** -(spec.log_exponents - 1)
    resolved = (weight.abs() >= smallest) & (weight.abs() <= peak)
    relative = ((approx - weight).abs() / weight.abs())[resolved]
    assert float(relative.max()) <= math.sqrt(spec.log_base) - 1 + 1e-4
    assert int(q.codes.abs().max()) <= spec.log_exponents


def test_mse_search_clips_outliers_at_4_bits():
    weight = torch.randn(1, 4096, generator=torch.Generator().manual_seed(0))
    weight[0, 0] = 40.0
    q = quantize_weight(weight, QuantSpec(4, "linear", "tensor"))
    assert float(q.offset + q.scale * 15) < 40.0  # the range was clipped below the outlier


@pytest.mark.parametrize("length", [1, 7, 64, 65])
def test_int4_pack_unpack_is_exact(length):
    codes = torch.randint(0, 16, (5, length), generator=torch.Generator().manual_seed(length))
    packed = pack(codes, 4)
    assert packed.dtype == torch.uint8 and packed.shape == (5, (length + 1) // 2)
    assert torch.equal(unpack(packed, 4, length).to(torch.int64), codes)
    assert torch.equal(unpack(pack(codes * 16, 8), 8, length).to(torch.int64), codes * 16)


# --- smoothing -----------------------------------------------------------------------------------------------------


def outlier_channels(shape, channel_dim: int, seed: int = 0) -> torch.Tensor:
    """Activations whose channels 3 and 5 are 40x the others: the imbalance smoothing is for."""
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
    scale = torch.ones(shape[channel_dim])
    scale[[3, 5]] = 40.0
    view = [1] * len(shape)
    view[channel_dim] = -1
    return x * scale.reshape(view)


def channel_peaks(x: torch.Tensor, channel_dim: int) -> torch.Tensor:
    return x.abs().amax(dim=[d for d in range(x.dim()) if d != channel_dim % x.dim()])


@pytest.mark.parametrize("kind", ["linear", "conv"])
def test_smoothing_keeps_the_float_output_and_evens_out_the_channels(kind):
    from personalq.taq.smoothing import fold_into_weight, per_input_channel, smoothing_factors

    torch.manual_seed(0)
    if kind == "linear":
        layer, x, channel_dim = torch.nn.Linear(16, 8), outlier_channels((2, 10, 16), -1), -1
    else:
        layer, x, channel_dim = torch.nn.Conv2d(16, 8, 3, padding=1), outlier_channels((2, 16, 6, 6), 1), 1
    factors = smoothing_factors(channel_peaks(x, channel_dim), layer.weight, alpha=0.75)
    smoothed = x / per_input_channel(factors, x.dim(), channel_dim)
    folded = copy.deepcopy(layer)
    with torch.no_grad():
        folded.weight.copy_(fold_into_weight(layer.weight, factors))
        assert torch.allclose(folded(smoothed), layer(x), rtol=1e-4, atol=1e-4)

    def imbalance(t: torch.Tensor) -> float:
        peaks = channel_peaks(t, channel_dim)
        return float(peaks.max() / peaks.median())

    assert imbalance(x) > 20 and imbalance(smoothed) < 0.5 * imbalance(x)


@pytest.mark.parametrize("channel_dim, shape", [(-1, (2, 10, 16)), (1, (2, 16, 6, 6))], ids=["linear", "conv"])
def test_observer_gives_the_smoothed_input_the_ranges_it_would_observe_after_the_division(channel_dim, shape):
    """One calibration pass serves any smoothing: per-channel extremes and the channel of each sample make the ranges
    of ``x / s`` exactly those of an observer that saw ``x / s`` itself."""
    from personalq.taq.smoothing import per_input_channel

    factors = torch.rand(16, generator=torch.Generator().manual_seed(1)) * 10 + 0.1
    direct, per_channel = Observer(seed=2), Observer(seed=2)
    for call in range(3):
        x = outlier_channels(shape, channel_dim, seed=call)
        per_channel.record("site", 0, x, channel_dim)
        direct.record("site", 0, x / per_input_channel(factors, x.dim(), channel_dim))
    spec = QuantSpec(4, "linear", "tensor")
    assert torch.equal(per_channel.ranges("site", 1, spec, divisor=factors), direct.ranges("site", 1, spec))
    peaks = per_channel.channel_absmax("site")
    assert peaks.shape == (16,) and peaks[[3, 5]].min() > 10 * peaks[:3].max()
    with pytest.raises(KeyError, match="per channel"):
        direct.ranges("site", 1, spec, divisor=factors)


# --- masks ------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer()


def _masked_tokens(tokenizer, prompt, triggers, mode="taq"):
    mask = token_mask(tokenizer, [prompt], triggers, mode)[0]
    ids = tokenizer(prompt, padding="max_length", max_length=tokenizer.model_max_length, truncation=True)["input_ids"]
    return [tokenizer.convert_ids_to_tokens(i) for i, keep in zip(ids, mask.tolist()) if keep]


def test_mask_covers_every_sub_token_of_a_split_trigger(tokenizer):
    assert _masked_tokens(tokenizer, "a photo of <teddybear-v2> on a beach", ["<teddybear-v2>"]) == \
        ["<", "teddy", "##be", "##ar", "-", "v", "##2", ">"]


def test_mask_covers_repeated_and_several_triggers(tokenizer):
    prompt = "<teddybear-v2> meets <mochi-v3>, then <TEDDYBEAR-v2> again"
    tokens = _masked_tokens(tokenizer, prompt, ["<teddybear-v2>", "<mochi-v3>"])
    assert tokens.count("teddy") == 2 and tokens.count("mo") + tokens.count("mochi") >= 1
    assert "meets" not in tokens and "again" not in tokens


def test_unconditional_half_protects_nothing_and_bos_protects_the_start(tokenizer):
    masks = {mode: token_mask(tokenizer, ["", "a <teddybear-v2> bear"], ["<teddybear-v2>"], mode) for mode in MODES}
    assert not masks["plain"].any()
    assert not masks["taq"][0].any() and masks["taq"][1].sum() >= 5
    assert masks["bos"][:, 0].all() and masks["bos"].sum() == 2
    with pytest.raises(ValueError):
        token_mask(tokenizer, ["x"], [], "everything")


# --- the processor ----------------------------------------------------------------------------------------------


def tiny_unet(sdxl: bool = False) -> UNet2DConditionModel:
    torch.manual_seed(0)
    extra = dict(addition_embed_type="text_time", addition_time_embed_dim=8, projection_class_embeddings_input_dim=6 * 8 + TEXT_DIM,
                 use_linear_projection=True, transformer_layers_per_block=(1, 2)) if sdxl else {}
    return UNet2DConditionModel(sample_size=8, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(32, 64),
                                down_block_types=("CrossAttnDownBlock2D", "CrossAttnDownBlock2D"),
                                up_block_types=("CrossAttnUpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=TEXT_DIM,
                                norm_num_groups=8, attention_head_dim=8, **extra).eval()


def unet_inputs(sdxl: bool, batch: int = 2, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    kwargs = {"encoder_hidden_states": torch.randn(batch, TOKENS, TEXT_DIM, generator=g)}
    if sdxl:
        kwargs["added_cond_kwargs"] = {"text_embeds": torch.randn(batch, TEXT_DIM, generator=g), "time_ids": torch.randn(batch, 6, generator=g)}
    return torch.randn(batch, 4, 8, 8, generator=g), kwargs


def test_processor_leaves_protected_rows_bit_identical():
    unet = tiny_unet()
    name = cross_attention_names(unet)[0]
    attn = unet.get_submodule(name)
    spec = QuantSpec(4, "linear", "tensor")
    coarse = ActivationQuantizer(spec, torch.tensor([[-0.5, 0.5]]))
    context = QuantContext()
    processor = TriggerAwareAttnProcessor(name, context, AttentionQuantizers(query=coarse, key=coarse, value=coarse))
    hidden, text = torch.randn(2, 16, 32), torch.randn(2, TOKENS, TEXT_DIM) * 3
    protected = torch.zeros(2, TOKENS, dtype=torch.bool)
    protected[1, 2:5] = True  # the conditional prompt's trigger span; the unconditional row has none
    with torch.no_grad(), context.protecting(protected):
        _, key, value = processor.project(attn, hidden, text)
        full_key, full_value = attn.to_k(text), attn.to_v(text)
    assert torch.equal(key[protected], full_key[protected]) and torch.equal(value[protected], full_value[protected])
    assert not torch.equal(key[~protected], full_key[~protected])
    assert not torch.equal(value[~protected], full_value[~protected])


def test_probability_ranges_leave_out_the_columns_each_mode_protects():
    attn = Attention(query_dim=8, cross_attention_dim=8, heads=2, dim_head=4)
    protected = torch.zeros(1, 4, dtype=torch.bool)
    protected[0, 2] = True
    context = QuantContext(observer=Observer())
    context.observed_masks = {"plain": torch.zeros_like(protected), "taq": protected}
    processor = TriggerAwareAttnProcessor("attn2", context)
    key = torch.zeros(1, 4, 8)
    key[0, 2] = 10.0  # token 2 takes nearly all the attention of every pixel
    with torch.no_grad():
        processor.attend(attn, torch.ones(1, 5, 8), key, torch.randn(1, 4, 8))
    assert context.observer.extremes[("attn2:p@plain", 0)][1] > 0.99
    assert context.observer.extremes[("attn2:p@taq", 0)][1] < 0.01


@pytest.mark.parametrize("trigger_scale", [1.0, 25.0], ids=["ordinary-trigger", "outlier-trigger"])
def test_range_ratios_show_whether_protection_narrows_the_other_tokens_ranges(trigger_scale):
    """Separation narrows the K/V ranges of what it still rounds only when the protected rows were the extremes."""
    from personalq.eval.taq_bench import TaqReport
    from personalq.taq.headroom import range_ratios

    unet = tiny_unet()
    observer = calibrated(unet, False, trigger_scale)
    taq, bos = range_ratios(observer, TAQConfig(abits=8, mode="taq")), range_ratios(observer, TAQConfig(abits=8, mode="bos"))
    layers = len(cross_attention_names(unet))
    assert len(taq.by_part["k"]) == layers and len(taq.by_part["p"]) == 4 * layers  # one per layer; p also per timestep group
    if trigger_scale > 1:
        assert taq.median("k") < 0.3 and taq.median("v") < 0.3
        assert bos.least("k") > 0.8  # the start token was no extreme: leaving it out frees nothing
    else:
        assert 0.8 < taq.median("k") <= 1.05 and 0.8 < taq.median("v") <= 1.05
    table = TaqReport({}, None, [], ["a"], 1, headroom={(8, "linear", "taq"): [taq, taq], (8, "linear", "bos"): [bos]}).headroom_table()
    assert f"| A8 | linear | taq | {taq.median('k'):.3f} ({taq.least('k'):.3f}) |" in table
    assert table.index("| bos |") < table.index("| taq |")
    with pytest.raises(KeyError, match="no cross-attention"):
        range_ratios(Observer(), TAQConfig(abits=8))


@pytest.mark.parametrize("trigger_scale", [1.0, 25.0], ids=["ordinary-trigger", "outlier-trigger"])
def test_taq_at_a8_gains_where_the_trigger_sets_the_ranges_and_barely_elsewhere(trigger_scale):
    """The paper's case, trigger rows far outside the other tokens' values: plain A8 rounds every other token on a
    grid stretched to reach them, TAQ keeps them exact and fits the grid to the rest. With an ordinary trigger
    there is next to nothing to win. Only the cross-attention activations are quantized (the bench's ablation)."""
    unet = tiny_unet()
    observer, protected = calibrated(unet, False, trigger_scale), trigger_rows()
    sample, kwargs = unet_inputs(False, seed=7)  # held out from calibration
    kwargs["encoder_hidden_states"][protected] *= trigger_scale
    with torch.no_grad():
        reference = unet(sample, 300, **kwargs).sample
    errors = {}
    for mode in ("plain", "taq"):
        quantized = quantize_cross_attention(copy.deepcopy(unet), TAQConfig(abits=8, mode=mode), observer)
        with torch.no_grad(), quantized.context.protecting(protected if mode == "taq" else None):
            output = quantized.unet(sample, 300, **kwargs).sample
        errors[mode] = float((output - reference).pow(2).mean() / reference.pow(2).mean())
    if trigger_scale > 1:
        assert errors["taq"] < 0.25 * errors["plain"]
    else:
        assert 0.8 * errors["plain"] < errors["taq"] < errors["plain"]


def test_observer_samples_the_whole_run_and_each_site_on_its_own():
    """Late calls reach the sample once it is full, and a site's sample does not depend on the other sites."""
    calls = 64
    alone, crowded, reseeded = Observer(seed=3), Observer(seed=3), Observer(seed=4)
    for call in range(calls):
        values = torch.full((4096,), float(call))
        alone.record("attn2:k", 0, values)
        reseeded.record("attn2:k", 0, values)
        crowded.record("attn2:q", 0, torch.randn(4096))  # another site recorded in between
        crowded.record("attn2:k", 0, values)
    sample = alone.samples[("attn2:k", 0)]
    assert len(sample) < calls * 1024 and float(sample.max()) >= calls - 4  # bounded, yet the last calls are in it
    assert abs(float(sample.mean()) - (calls - 1) / 2) < 2  # every call about equally represented
    assert torch.equal(sample, crowded.samples[("attn2:k", 0)])
    assert not torch.equal(sample, reseeded.samples[("attn2:k", 0)])


def test_float_kv_weights_make_protected_rows_match_the_float_model(tmp_path):
    """With ``protect_weights`` the trigger rows of K/V come from the float weights, through a W4A8 UNet and its file."""
    unet = tiny_unet()
    name = cross_attention_names(unet)[0]
    text = torch.randn(2, TOKENS, TEXT_DIM, generator=torch.Generator().manual_seed(3)) * 3
    with torch.no_grad():
        attn = unet.get_submodule(name)
        full_key, full_value = attn.to_k(text), attn.to_v(text)
    quantized = quantize_unet(unet, TAQConfig(wbits=4, abits=8, mode="taq", protect_weights=True), calibrated(unet, False))
    reloaded = load_quantized(save_quantized(quantized, tmp_path / "unet.safetensors"))
    protected = torch.zeros(2, TOKENS, dtype=torch.bool)
    protected[1, 2:5] = True
    hidden = torch.randn(2, 16, 32)
    for model in (quantized, reloaded):
        attn = model.unet.get_submodule(name)
        with torch.no_grad(), model.context.protecting(protected):
            _, key, value = attn.processor.project(attn, hidden, text)
        assert torch.equal(key[protected], full_key[protected]) and torch.equal(value[protected], full_value[protected])
        assert not torch.equal(key[~protected], full_key[~protected])


def trigger_rows() -> torch.Tensor:
    """The calibration's trigger span: tokens 1-2 of the conditional prompt (the unconditional one has none)."""
    mask = torch.zeros(2, TOKENS, dtype=torch.bool)
    mask[1, 1:3] = True
    return mask


def calibrated(unet, sdxl: bool, trigger_scale: float = 1.0) -> Observer:
    """Observe three timesteps; ``trigger_scale`` multiplies the text's trigger rows (25: the paper's outlier case)."""
    context = QuantContext(observer=Observer())
    mask = trigger_rows()
    context.observed_masks = {"plain": torch.zeros_like(mask), "bos": torch.zeros_like(mask).index_fill_(1, torch.tensor([0]), True), "taq": mask}
    with torch.no_grad(), observing(unet, context):
        for t in (900, 500, 100):
            sample, kwargs = unet_inputs(sdxl, seed=t)
            kwargs["encoder_hidden_states"][mask] *= trigger_scale
            unet(sample, t, **kwargs)
    return context.observer


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
    assert TAQConfig(wbits=8, abits=8).tag == "w8a8-taq-linear-sq0.75" and TAQConfig(abits=16).tag == "w8a16-taq-linear"
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
    """What peft and diffusers read as ``.weight`` is the layer's weight as it acts on its input, the factors divided out."""
    source = tiny_unet()
    floats = {name: m.weight.detach().clone() for name, m in source.named_modules() if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d))}
    quantize_unet(source, TAQConfig(wbits=8, abits=8), calibrated(source, False))
    smoothed = [(name, m) for name, m in source.named_modules() if isinstance(m, (QuantizedLinear, QuantizedConv2d)) and m.smoothing is not None]
    assert smoothed
    for name, layer in smoothed:
        relative = float((layer.weight - floats[name]).norm() / floats[name].norm())
        assert relative < 0.02, name


def test_activation_quantization_can_be_kept_to_one_part_of_the_unet():
    """The attribution's switch: off everywhere gives the weight-only model (to float rounding); kept only in the
    cross-attention tensors, no layer rounds its input and every attn2 processor still rounds Q, K/V and probabilities."""
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
    assert torch.allclose(output(nothing.unet), weights_only, atol=1e-6) and not torch.allclose(full, weights_only, atol=1e-6)

    cross = keep_activation_quantization(quantize_unet(copy.deepcopy(source), w8a8, observer), lambda site: ".attn2:" in site)
    assert all(m.input_quantizer is None for m in cross.unet.modules() if isinstance(m, (QuantizedLinear, QuantizedConv2d)))
    attn2 = [p for name, p in cross.unet.attn_processors.items() if ".attn2." in name]
    assert attn2 and all(None not in (p.quantizers.query, p.quantizers.key, p.quantizers.value, p.quantizers.probs) for p in attn2)


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
    unet.add_adapter(LoraConfig(r=4, lora_alpha=4, target_modules=["to_k", "to_v", "to_q", "to_out.0"], init_lora_weights=False))
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


def test_adaround_moves_the_layer_output_less_than_rounding_to_nearest():
    from personalq.taq.adaround import adaround_weight

    torch.manual_seed(0)
    layer = torch.nn.Linear(64, 32)
    inputs = [torch.randn(2, 16, 64) for _ in range(4)]
    spec = QuantSpec(4, "linear", "channel")
    x = torch.cat(inputs)
    reference = torch.nn.functional.linear(x, layer.weight)

    def error(quantized):
        return float((torch.nn.functional.linear(x, quantized.dequantize()) - reference).pow(2).mean())

    with torch.no_grad():
        learned = adaround_weight(layer, inputs, spec, iterations=300)
    nearest = quantize_weight(layer.weight, spec)
    assert error(learned) < 0.9 * error(nearest)
    assert int(learned.codes.min()) >= 0 and int(learned.codes.max()) <= 15
    with pytest.raises(ValueError):
        adaround_weight(layer, [], spec)


# --- the bench's paired comparison -------------------------------------------------------------------------------


def test_paired_comparison_calls_a_difference_only_when_its_interval_excludes_zero():
    from personalq.eval.taq_bench import ConfigResult, TaqReport

    rng = torch.Generator().manual_seed(0)
    base = (torch.rand(40, generator=rng) * 1e-3).tolist()  # per-image error of plain PTQ, spread over prompts
    noise = ((torch.rand(40, generator=rng) - 0.5) * 1e-4).tolist()

    def report(taq_mse: list[float]) -> TaqReport:
        rows = {("FP32", "-", "-"): ConfigResult("FP32", "-", "-", 4, mse=[0.0] * 40),
                ("W8A8", "plain", "linear"): ConfigResult("W8A8", "plain", "linear", 1, mse=base, fidelity=[True] * 40),
                ("W8A8", "taq", "linear"): ConfigResult("W8A8", "taq", "linear", 1, mse=taq_mse, fidelity=[True] * 20 + [False] * 20)}
        return TaqReport(rows, None, [], ["a"], 40)

    # 10% lower on every image: far inside the spread across images, yet certain when paired
    closer = report([b * 0.9 for b in base]).paired()[0]
    assert closer.verdict == "taq closer to FP32" and closer.closer == 1.0 and closer.mse.high < 0
    assert closer.fidelity is not None and closer.fidelity.mean == -0.5
    tied = report([b + n for b, n in zip(base, noise)]).paired()[0]
    assert tied.verdict == "no significant difference" and tied.mse.low < 0 < tied.mse.high
    worse = report([b + 2e-4 for b in base]).paired()[0]
    assert worse.verdict == "plain closer to FP32"
    assert report(base).paired("taq", "bos") == []  # no BOS row to compare with
    assert "| W8A8 | linear | taq - plain |" in report(base).paired_table()
    # the step error gets its own interval and verdict beside the image MSE's
    rows = report(base).results
    rows[("W8A8", "plain", "linear")].step_mse = [1e-4] * 40
    rows[("W8A8", "taq", "linear")].step_mse = [1e-4 - 1e-5 + n * 1e-3 for n in noise]
    (paired,) = TaqReport(rows, None, [], ["a"], 40).paired()
    assert paired.verdict == "no significant difference" and paired.step_verdict == "taq closer to FP32"
    assert paired.step.mean == pytest.approx(-1e-5 + 1e-3 * float(np.mean(noise)))
    assert "| taq closer to FP32 |" in TaqReport(rows, None, [], ["a"], 40).paired_table()
    assert report(base).paired()[0].step_verdict == "n/a"


def test_paired_comparison_averages_each_image_over_calibrations():
    """Two calibrations that disagree: one interval over the 10 images of their mean, each calibration's mean beside it."""
    from personalq.eval.taq_bench import ConfigResult, TaqReport

    plain = [1e-3 + i * 1e-5 for i in range(10)] * 2
    shift = [-2e-4] * 10 + [1e-4] * 10  # calibration 0 favours TAQ, calibration 1 plain
    images, calibration = [f"a/{i}" for i in range(10)] * 2, [0] * 10 + [1] * 10
    rows = {("W8A4", "plain", "linear"): ConfigResult("W8A4", "plain", "linear", 1, mse=plain, images=images, calibration=calibration),
            ("W8A4", "taq", "linear"): ConfigResult("W8A4", "taq", "linear", 1, mse=[p + d for p, d in zip(plain, shift)],
                                                    images=images, calibration=calibration)}
    (paired,) = TaqReport(rows, None, [], ["a"], 10, calibrations=2).paired()
    assert paired.per_calibration == pytest.approx((-2e-4, 1e-4))
    assert paired.mse.mean == pytest.approx(-5e-5) and paired.closer == 1.0
    assert "-2.0e-04 / +1.0e-04" in TaqReport(rows, None, [], ["a"], 10, calibrations=2).paired_table()


def test_taq_bench_cli_refuses_unknown_quantizers_and_no_calibration():
    from typer.testing import CliRunner

    from personalq.cli import app

    result = CliRunner().invoke(app, ["bench", "taq", "--quantizers", "linear,cubic"])
    assert result.exit_code != 0 and "--quantizers takes linear and/or log" in result.output
    result = CliRunner().invoke(app, ["bench", "taq", "--calibrations", "0"])
    assert result.exit_code != 0 and "--calibrations must be at least 1" in result.output
    result = CliRunner().invoke(app, ["bench", "taq", "--precisions", "W8A8,W2A2"])
    assert result.exit_code != 0 and "--precisions takes some of W8A8, W4A8, W8A4, W4A4, xattn-A8, xattn-A4" in result.output
    for smoothing in ("1.5", "strong"):
        result = CliRunner().invoke(app, ["bench", "taq", "--smoothing", smoothing])
        assert result.exit_code != 0 and "--smoothing takes a number from 0 to 1 or 'none'" in result.output


def test_recipe_options_override_only_what_they_name():
    from personalq.cli.common import recipe_overrides

    assert recipe_overrides(None, None) == {}
    assert recipe_overrides("none", False) == {"smoothing": None, "first_last_8bit": False}
    config = TAQConfig(wbits=4, abits=4, **recipe_overrides("0.5", None))
    assert config.smoothing == 0.5 and config.first_last_8bit and config.tag == "w4a4-taq-linear-sq0.5-ends8"
    assert TAQConfig(**recipe_overrides("none", False)).tag == "w8a8-taq-linear"


def test_mean_interval_brackets_the_mean_and_is_a_point_without_spread():
    from personalq.stats import mean_interval

    interval = mean_interval([0.0, 1.0] * 20)
    assert interval.low < interval.mean == 0.5 < interval.high
    assert mean_interval([3.0, 3.0]) == mean_interval([3.0]) and mean_interval([3.0]).low == 3.0
    with pytest.raises(ValueError):
        mean_interval([])


# --- the bench's step error ----------------------------------------------------------------------------------------


def test_step_error_replays_each_pipeline_call_and_is_zero_for_the_same_unet():
    """Two pipeline calls of two prompts each: every 2nd of 5 steps recorded per call (3 each), each call its own batch;
    the same UNet replayed gives exactly zero, a perturbed one a positive error per image, in generation order."""
    import copy

    from factories import tiny_sd_pipeline

    from personalq.eval.step_error import guided, recording_calls, step_error

    pipe = tiny_sd_pipeline()
    pipe.set_progress_bar_config(disable=True)
    with recording_calls(pipe.unet, every=2) as calls:
        for seed in (0, 1):
            pipe(["a photo of a dog", "a cat"], num_inference_steps=5, guidance_scale=5.0, height=32, width=32,
                 generator=torch.Generator().manual_seed(seed), output_type="latent")
    assert [c.batch for c in calls] == [0, 0, 0, 1, 1, 1]
    assert all(c.sample.shape[0] == 4 for c in calls)  # classifier-free guidance: unconditional half first
    assert float(calls[0].timestep) > float(calls[1].timestep) > float(calls[2].timestep)

    same = step_error(pipe.unet, calls, 5.0)
    assert same.shape == (4,) and (same == 0).all()
    perturbed = copy.deepcopy(pipe.unet)
    with torch.no_grad():
        perturbed.conv_out.bias.add_(torch.tensor([0.0, 0.0, 0.0, 0.1]))
    # a constant shift of one output channel moves both halves alike, so guidance does not amplify it
    assert step_error(perturbed, calls, 5.0) == pytest.approx([0.1**2 / 4] * 4, rel=1e-4)
    with torch.no_grad():
        perturbed.conv_out.weight.mul_(1.1)
    assert (step_error(perturbed, calls, 5.0) > 0.1**2 / 4).all()

    # an SDXL UNet's extra conditioning is recorded and replayed with the call
    sdxl = tiny_unet(sdxl=True)
    with recording_calls(sdxl, every=1) as sdxl_calls, torch.no_grad():
        for t in (900, 500):
            sample, kwargs = unet_inputs(True, seed=t)
            sdxl(sample, t, **kwargs)
    assert [c.batch for c in sdxl_calls] == [0, 0] and set(sdxl_calls[0].added_cond_kwargs) == {"text_embeds", "time_ids"}
    assert (step_error(sdxl, sdxl_calls, 5.0) == 0).all()

    uncond, cond = torch.zeros(2, 4, 2, 2), torch.ones(2, 4, 2, 2)
    assert torch.equal(guided(torch.cat([uncond, cond]), 3.0), torch.full((2, 4, 2, 2), 3.0))
    with pytest.raises(ValueError):
        step_error(pipe.unet, [], 5.0)
