"""Serving: the LRU cache under a budget, quantized variants made once, streamed and cancellable generation."""

from __future__ import annotations

import platform
import threading

import pytest
import torch

from personalq.config import DEFAULT_ASSETS
from personalq.runtime import start
from personalq.serving.cache import MB, BudgetError, ModelCache
from personalq.serving.engine import Engine
from personalq.serving.generation import GenerationParams
from personalq.serving.variants import precision_config, variant_path


def test_cache_evicts_least_recently_used_and_refuses_what_cannot_fit():
    cache = ModelCache(100)
    cache.pin(20, "fixed parts")
    cache.put("a", "A", 30)
    cache.put("b", "B", 30)
    assert cache.get("a") == "A"  # a is now more recent than b
    cache.put("c", "C", 30)
    assert "b" not in cache and {"a", "c"} <= set(cache.keys()) and cache.used_bytes == 80
    with pytest.raises(BudgetError, match="needs"):
        cache.put("huge", "H", 90)
    assert cache.used_bytes <= 100
    cache.set_budget(60)
    assert cache.used_bytes <= 60


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from personalq.config import load_settings

    settings = load_settings(home=tmp_path_factory.mktemp("home"), assets_dir=DEFAULT_ASSETS, memory_budget_mb=512)
    runtime = start(settings)
    return settings, runtime.repository


@pytest.mark.slow
def test_a_variant_is_produced_once_stored_and_stays_under_the_budget(served):
    settings, repository = served
    card = repository.get("teddybear-v2")
    engine = Engine(settings, calibration_captions=4, calibration_steps=2)
    frames = list(engine.generate(card, "a photo of a <teddybear-v2> bear", "W8A8", params=GenerationParams(steps=3)))
    assert [f.step for f in frames] == [1, 2, 3, 3] and frames[-1].final and frames[-1].image.size == (64, 64)
    assert ("adapter", card.weights_sha256) in engine.cache.keys()  # the LoRA's tensors stay warm beside the UNets
    stored = variant_path(card, precision_config("W8A8"), settings.home / "taq")
    assert stored.exists()
    report = engine.memory()
    assert report.unet_bytes < 0.27 * engine.unet_bytes_at("FP32") and report.used_bytes <= report.budget_bytes

    list(
        engine.generate(
            card, "a photo of a <teddybear-v2> bear", "W8A8", params=GenerationParams(steps=2), float_kv=True
        )
    )
    with_float_kv = variant_path(card, precision_config("W8A8", float_kv=True), settings.home / "taq")
    assert with_float_kv.exists() and with_float_kv != stored
    assert engine.memory().unet_bytes == engine.unet_bytes_at("W8A8", float_kv=True) > report.unet_bytes

    fresh = Engine(settings)  # a restart: the stored variant is loaded, not recalibrated
    before = stored.stat().st_mtime_ns
    list(fresh.generate(card, "a photo of a <teddybear-v2> bear", "W8A8", params=GenerationParams(steps=2)))
    assert stored.stat().st_mtime_ns == before

    fresh.set_budget_mb(100)  # the text encoder and VAE alone take ~90 MB: the float UNet no longer fits beside them
    with pytest.raises(BudgetError, match="memory budget"):
        list(
            fresh.generate(
                repository.get("biscuit-v3"), "a photo of <biscuit-v3>", "FP32", params=GenerationParams(steps=2)
            )
        )
    assert fresh.memory().used_bytes <= 100 * MB


@pytest.mark.slow
def test_the_engine_serves_variants_on_the_kernels_its_settings_and_processor_allow(served):
    """``kernels=auto`` (and ``integer``) let a variant's layers use integer kernels where the processor has them (each
    switches on a call large enough to pay: none of the demo's); ``dequantize`` keeps every layer dequantizing; all
    serve the same stored file, and the resident size is what the readout says."""
    from personalq.taq.kernels import integer_support
    from personalq.taq.layers import QuantizedConv2d, QuantizedLinear

    settings, repository = served
    card = repository.get("teddybear-v3")
    for kernels in ("auto", "integer", "dequantize"):
        engine = Engine(settings.model_copy(update={"kernels": kernels}), calibration_captions=4, calibration_steps=2)
        frames = list(
            engine.generate(card, "a photo of a <teddybear-v3> bear", "W8A8", params=GenerationParams(steps=2))
        )
        assert frames[-1].final
        variant = engine.quantized_unet(card, precision_config("W8A8"))
        layers = [m for m in variant.unet.modules() if isinstance(m, (QuantizedLinear, QuantizedConv2d))]
        integer = kernels != "dequantize" and integer_support().available
        assert engine.kernels.available == integer
        assert any(layer.integer_allowed for layer in layers) == integer
        assert all(layer.packed.kernel is None for layer in layers)  # the demo's calls are all too small to pay
        assert engine.memory().unet_bytes == engine.unet_bytes_at("W8A8")
        if kernels == "dequantize":
            assert engine.kernels.describe() == "dequantizing kernels (chosen in settings)"


def test_closing_the_stream_cancels_the_generation(served):
    settings, repository = served
    engine = Engine(settings)
    card = repository.get("teddybear-v3")
    cancel = threading.Event()
    stream = engine.generate(
        card, "a photo of a <teddybear-v3> bear", params=GenerationParams(steps=50), cancel=cancel
    )
    first = next(stream)
    stream.close()
    assert first.step == 1 and cancel.is_set()
    frames = list(engine.generate(card, "a photo of a <teddybear-v3> bear", params=GenerationParams(steps=2)))
    assert frames[-1].final  # the engine is free again


def test_generation_computes_on_the_compute_thread_whichever_thread_asks(served):
    settings, repository = served
    engine = Engine(settings)
    card = repository.get("teddybear-v3")
    unet = engine.float_unet(engine.base_location(card), card)
    seen = set()
    hook = unet.register_forward_pre_hook(lambda module, args: seen.add(threading.current_thread().name))

    def ask() -> None:
        frames = list(engine.generate(card, "a photo of a <teddybear-v3> bear", params=GenerationParams(steps=2)))
        assert frames[-1].final

    try:
        ask()
        caller = threading.Thread(target=ask)
        caller.start()
        caller.join()
    finally:
        hook.remove()
    assert seen == {"personalq-compute"}


def test_a_single_file_checkpoint_loads_through_diffusers_single_file_loading(served, tmp_path):
    import torch
    from diffusers import UNet2DConditionModel
    from factories import write_card
    from safetensors.torch import save_file

    settings, repository = served
    base = DEFAULT_ASSETS / "zoo" / "base"
    unet = UNet2DConditionModel.from_pretrained(base / "unet")
    with torch.no_grad():
        unet.conv_out.bias += 0.5  # a fine-tune that differs from the base
    folder = tmp_path / "single"
    folder.mkdir()
    save_file({k: v.contiguous() for k, v in unet.state_dict().items()}, str(folder / "merged.safetensors"))
    write_card(
        folder,
        "merged-v1",
        name="Merged bear v1",
        kind="checkpoint",
        base_model="personalq-demo",
        subjects=["bear"],
        weights="merged.safetensors",
    )
    repository.import_paths([folder / "merged-v1.yaml"])
    card = repository.get("merged-v1")
    engine = Engine(settings)
    frames = list(engine.generate(card, "a photo of <merged-v1>", params=GenerationParams(steps=2)))
    assert frames[-1].final
    loaded = engine.cache.get(("unet", card.weights_sha256, "FP32"))
    assert torch.equal(loaded.conv_out.bias, unet.conv_out.bias)


def test_quantize_command_writes_the_recipe_it_is_given_and_refuses_a_bad_one(served, tmp_path):
    """``personalq quantize``: the default recipe (smoothing, 8-bit ends) and the options that turn it off each write
    their own loadable file whose weight bytes are what the command prints."""
    import json

    from typer.testing import CliRunner

    from personalq.cli import app
    from personalq.taq.quantize import load_quantized, weight_bytes

    settings, _ = served
    common = [
        "teddybear-v2",
        "--wbits",
        "4",
        "--abits",
        "4",
        "--captions",
        "4",
        "--calibration-steps",
        "2",
        "--out",
        str(tmp_path),
        "--home",
        str(settings.home),
    ]
    printed = {}
    for options in ([], ["--smoothing", "none", "--no-first-last-8bit"]):
        result = CliRunner().invoke(app, ["quantize", *common, *options])
        assert result.exit_code == 0, result.output
        line = json.loads(result.output.strip().splitlines()[-1])
        assert (
            line["ratio"] < 0.15 and weight_bytes(load_quantized(line["path"]).unet) == line["weight_bytes_quantized"]
        )
        printed[line["config"]] = line
    assert set(printed) == {"w4a4-taq-linear-sq0.75-ends8", "w4a4-taq-linear"}
    # the recipe's factors and 8-bit ends cost a little: more bytes, not fewer
    assert (
        printed["w4a4-taq-linear-sq0.75-ends8"]["weight_bytes_quantized"]
        > printed["w4a4-taq-linear"]["weight_bytes_quantized"]
    )

    result = CliRunner().invoke(app, ["quantize", *common, "--smoothing", "2"])
    assert result.exit_code != 0 and "--smoothing takes a number from 0 to 1 or 'none'" in result.output


@pytest.mark.slow
def test_the_chat_says_when_a_precision_is_prepared_for_first_use(served, tmp_path):
    from personalq.access import WriteAccess
    from personalq.checkin.backends import make_checkin
    from personalq.conversation import ChatState, Conversation
    from personalq.ui.chat_tab import _callbacks

    settings, repository = served
    engine = Engine(settings, calibration_captions=4, calibration_steps=2)
    chat = _callbacks(
        Conversation(make_checkin(settings), repository), engine, tmp_path, tmp_path, WriteAccess(None, False, False)
    )

    def replies(precision: str) -> list[str]:
        *_, (history, *_) = chat.respond(
            "sneaks shoe v1 on a beach", [], ChatState(), precision, True, 512, 0, 2, 5.0, "64"
        )
        return [m["content"] for m in history if isinstance(m["content"], str)]

    assert not any("Preparing" in text for text in replies("FP32"))
    assert any(text.startswith("Preparing W4A4 for Sneaks shoe v1") for text in replies("W4A4"))
    assert not any("Preparing" in text for text in replies("W4A4"))  # stored by the first request


def test_previews_are_drawn_at_a_readable_size_and_only_the_final_image_is_decoded(served):
    settings, repository = served
    engine, card = Engine(settings), repository.get("sneaks-v1")
    frames = list(engine.generate(card, "a <sneaks-v1> on a beach", params=GenerationParams(steps=2)))
    assert [f.final for f in frames] == [False, False, True]
    assert frames[0].image.size == (256, 256) and frames[-1].image.size == (64, 64)
    quiet = list(engine.generate(card, "a <sneaks-v1> on a beach", params=GenerationParams(steps=2), previews=False))
    assert quiet[0].image is None and quiet[-1].image.size == (64, 64)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the allocator setting is glibc's")
def test_the_engine_keeps_freed_large_blocks_for_reuse():
    """Once the engine has started, an allocation above glibc's default mmap threshold comes from the heap, whose
    freed pages are reused, instead of being mapped (and page-faulted in) afresh: mmapped bytes do not grow."""
    import ctypes

    from personalq.serving.allocator import reuse_freed_memory

    class MallInfo2(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_size_t)
            for name in (
                "arena",
                "ordblks",
                "smblks",
                "hblks",
                "hblkhd",
                "usmblks",
                "fsmblks",
                "uordblks",
                "fordblks",
                "keepcost",
            )
        ]

    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = MallInfo2
    assert reuse_freed_memory()
    before = libc.mallinfo2().hblkhd
    block = torch.empty(64 * 2**20, dtype=torch.uint8)  # 64 MiB: above even glibc's largest dynamic threshold
    mapped = libc.mallinfo2().hblkhd - before
    del block
    assert mapped < 64 * 2**20


def test_a_batch_draws_each_prompt_as_its_own_request_would(served):
    """One pipeline call for several prompts (what Ray Serve's batching runs): each keeps its seed and negative
    prompt, so its image is the single request's image up to batched arithmetic; previews come per prompt."""
    import numpy as np

    settings, repository = served
    engine = Engine(settings)
    card = repository.get("mochi-v3")
    prompts = [f"a photo of {card.canonical_trigger} on a beach", f"a photo of {card.canonical_trigger} in snow"]
    params = [GenerationParams(steps=4, seed=1), GenerationParams(steps=4, seed=2, negative_prompt="blurry")]
    steps = list(engine.generate_many(card, prompts, "FP32", True, params))
    assert len(steps) == 5 and all(len(frames) == 2 for frames in steps)
    assert all(frame.image is not None for frame in steps[0] + steps[-1])  # the first step's previews, the images
    batched = [np.asarray(frame.image, dtype=np.float64) for frame in steps[-1]]
    single = [
        np.asarray(list(engine.generate(card, p, params=q))[-1].image, dtype=np.float64)
        for p, q in zip(prompts, params)
    ]
    for one, alone in zip(batched, single):
        assert np.abs(one - alone).mean() < 1.0  # of 255
    assert np.abs(batched[0] - batched[1]).mean() > 5.0  # two different pictures
    with pytest.raises(ValueError, match="same steps"):
        list(engine.generate_many(card, prompts, "FP32", True, [params[0], GenerationParams(steps=5)]))
