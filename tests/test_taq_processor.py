"""The trigger-aware processor: which tokens the masks protect, protected rows left exact, the ranges each
separation observes, and what protection gains at A8."""

from __future__ import annotations

import copy

import pytest
import torch
from diffusers.models.attention_processor import Attention
from taq_models import TEXT_DIM, TOKENS, calibrated, tiny_unet, trigger_rows, unet_inputs

import personalq.taq.layers as layers
from personalq.taq.activations import ActivationQuantizer, Observer
from personalq.taq.attention import AttentionQuantizers, TriggerAwareAttnProcessor, cross_attention_names
from personalq.taq.context import QuantContext
from personalq.taq.kernels import integer_support
from personalq.taq.masks import MODES, token_mask
from personalq.taq.quantize import (
    TAQConfig,
    allow_integer_kernels,
    load_quantized,
    quantize_cross_attention,
    quantize_unet,
    save_quantized,
)
from personalq.taq.quantizers import QuantSpec
from personalq.zoo.models import load_tokenizer

# --- masks -------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer()


def _masked_tokens(tokenizer, prompt, triggers, mode="taq"):
    mask = token_mask(tokenizer, [prompt], triggers, mode)[0]
    ids = tokenizer(prompt, padding="max_length", max_length=tokenizer.model_max_length, truncation=True)["input_ids"]
    return [tokenizer.convert_ids_to_tokens(i) for i, keep in zip(ids, mask.tolist()) if keep]


def test_mask_covers_every_sub_token_of_a_split_trigger(tokenizer):
    assert _masked_tokens(tokenizer, "a photo of <teddybear-v2> on a beach", ["<teddybear-v2>"]) == [
        "<",
        "teddy",
        "##be",
        "##ar",
        "-",
        "v",
        "##2",
        ">",
    ]


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


# --- the processor -----------------------------------------------------------------------------------------------


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
    taq, bos = (
        range_ratios(observer, TAQConfig(abits=8, mode="taq")),
        range_ratios(observer, TAQConfig(abits=8, mode="bos")),
    )
    layers = len(cross_attention_names(unet))
    assert (
        len(taq.by_part["k"]) == layers and len(taq.by_part["p"]) == 4 * layers
    )  # one per layer; p also per timestep group
    if trigger_scale > 1:
        assert taq.median("k") < 0.3 and taq.median("v") < 0.3
        assert bos.least("k") > 0.8  # the start token was no extreme: leaving it out frees nothing
    else:
        assert 0.8 < taq.median("k") <= 1.05 and 0.8 < taq.median("v") <= 1.05
    table = TaqReport(
        {}, None, [], ["a"], 1, headroom={(8, "linear", "taq"): [taq, taq], (8, "linear", "bos"): [bos]}
    ).headroom_table()
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


def test_float_kv_weights_make_protected_rows_match_the_float_model(tmp_path, monkeypatch):
    """With ``protect_weights`` the trigger rows of K/V come from the float weights, through a W4A8 UNet, its file,
    and (where the processor has them) that file with integer kernels computing the rest of the UNet."""
    unet = tiny_unet()
    name = cross_attention_names(unet)[0]
    text = torch.randn(2, TOKENS, TEXT_DIM, generator=torch.Generator().manual_seed(3)) * 3
    with torch.no_grad():
        attn = unet.get_submodule(name)
        full_key, full_value = attn.to_k(text), attn.to_v(text)
    quantized = quantize_unet(
        unet, TAQConfig(wbits=4, abits=8, mode="taq", protect_weights=True), calibrated(unet, False)
    )
    path = save_quantized(quantized, tmp_path / "unet.safetensors")
    models = [quantized, load_quantized(path)]
    if integer_support().available:
        monkeypatch.setattr(layers, "SMALL_PRODUCT", 0)  # the tiny UNet's calls are below the size that pays
        models.append(load_quantized(path))
        allow_integer_kernels(models[-1])
    protected = torch.zeros(2, TOKENS, dtype=torch.bool)
    protected[1, 2:5] = True
    hidden = torch.randn(2, 16, 32)
    for model in models:
        attn = model.unet.get_submodule(name)
        with torch.no_grad(), model.context.protecting(protected):
            _, key, value = attn.processor.project(attn, hidden, text)
        assert torch.equal(key[protected], full_key[protected]) and torch.equal(
            value[protected], full_value[protected]
        )
        assert not torch.equal(key[~protected], full_key[~protected])
    if len(models) == 3:
        assert models[-1].unet.get_submodule(name).to_q.packed.kernel is not None  # the image side ran in integers
