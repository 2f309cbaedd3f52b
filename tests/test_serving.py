"""Serving: the LRU cache under a budget, quantized variants made once, streamed and cancellable generation."""

from __future__ import annotations

import threading

import pytest

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


def test_a_variant_is_produced_once_stored_and_stays_under_the_budget(served):
    settings, repository = served
    card = repository.get("teddybear-v2")
    engine = Engine(settings, calibration_captions=4, calibration_steps=2)
    frames = list(engine.generate(card, "a photo of a <teddybear-v2> bear", "W8A8", params=GenerationParams(steps=3)))
    assert [f.step for f in frames] == [1, 2, 3, 3] and frames[-1].final and frames[-1].image.size == (64, 64)
    assert ("adapter", "teddybear-v2") in engine.cache.keys()  # the LoRA's tensors stay warm beside the UNets
    stored = variant_path(card, precision_config("W8A8"), settings.home / "taq")
    assert stored.exists()
    report = engine.memory()
    assert report.unet_bytes < 0.27 * engine.unet_bytes_at("FP32") and report.used_bytes <= report.budget_bytes

    list(engine.generate(card, "a photo of a <teddybear-v2> bear", "W8A8", params=GenerationParams(steps=2), float_kv=True))
    with_float_kv = variant_path(card, precision_config("W8A8", float_kv=True), settings.home / "taq")
    assert with_float_kv.exists() and with_float_kv != stored
    assert engine.memory().unet_bytes == engine.unet_bytes_at("W8A8", float_kv=True) > report.unet_bytes

    fresh = Engine(settings)  # a restart: the stored variant is loaded, not recalibrated
    before = stored.stat().st_mtime_ns
    list(fresh.generate(card, "a photo of a <teddybear-v2> bear", "W8A8", params=GenerationParams(steps=2)))
    assert stored.stat().st_mtime_ns == before

    fresh.set_budget_mb(100)  # the text encoder and VAE alone take ~90 MB: the float UNet no longer fits beside them
    with pytest.raises(BudgetError, match="memory budget"):
        list(fresh.generate(repository.get("biscuit-v3"), "a photo of <biscuit-v3>", "FP32", params=GenerationParams(steps=2)))
    assert fresh.memory().used_bytes <= 100 * MB


def test_closing_the_stream_cancels_the_generation(served):
    settings, repository = served
    engine = Engine(settings)
    card = repository.get("teddybear-v3")
    cancel = threading.Event()
    stream = engine.generate(card, "a photo of a <teddybear-v3> bear", params=GenerationParams(steps=50), cancel=cancel)
    first = next(stream)
    stream.close()
    assert first.step == 1 and cancel.is_set()
    frames = list(engine.generate(card, "a photo of a <teddybear-v3> bear", params=GenerationParams(steps=2)))
    assert frames[-1].final  # the engine is free again


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
    write_card(folder, "merged-v1", name="Merged bear v1", kind="checkpoint", subjects=["bear"], weights="merged.safetensors")
    repository.import_paths([folder / "merged-v1.yaml"])
    card = repository.get("merged-v1")
    engine = Engine(settings)
    frames = list(engine.generate(card, "a photo of <merged-v1>", params=GenerationParams(steps=2)))
    assert frames[-1].final
    loaded = engine.cache.get(("unet", "merged-v1", "FP32"))
    assert torch.equal(loaded.conv_out.bias, unet.conv_out.bias)
