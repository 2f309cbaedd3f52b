"""The float type bases compute in on the CPU: bfloat16 where the processor has the units and the UNet is wide enough
to gain, float32 otherwise, and every part of a generation (pipeline, float UNet, quantized variant) in that type."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import personalq.serving.float_type as float_type
from personalq.config import DEFAULT_ASSETS, load_settings
from personalq.runtime import start
from personalq.serving.bases import served_base
from personalq.serving.engine import Engine
from personalq.serving.generation import GenerationParams
from personalq.serving.variants import precision_config


def pipeline_folder(tmp_path, name: str, widths: list[int]) -> str:
    folder = tmp_path / name / "unet"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"block_out_channels": widths}))
    return str(folder.parent)


@pytest.mark.parametrize("has_units", [True, False])
def test_auto_picks_bf16_for_wide_bases_on_a_cpu_with_bf16_units_only(tmp_path, monkeypatch, has_units):
    monkeypatch.setattr(float_type, "native_bf16", lambda: has_units)
    settings = load_settings(home=tmp_path / "home", device="cpu")
    wide = pipeline_folder(tmp_path, "sd15", [320, 640, 1280, 1280])
    narrow = pipeline_folder(tmp_path, "tiny", [32, 64])
    expected = torch.bfloat16 if has_units else torch.float32
    assert float_type.float_dtype(settings, wide) == expected
    assert float_type.float_dtype(settings, "stable-diffusion-v1-5/stable-diffusion-v1-5") == expected  # a Hub id
    assert float_type.float_dtype(settings, narrow) == torch.float32
    demo = served_base(load_settings(home=tmp_path / "home", assets_dir=DEFAULT_ASSETS)).location
    assert float_type.unet_width(demo) == 128 and float_type.float_dtype(settings, demo) == torch.float32
    for chosen in ("float32", "bfloat16"):  # an explicit setting holds whatever the processor and the base
        pinned = settings.model_copy(update={"cpu_dtype": chosen})
        assert float_type.float_dtype(pinned, narrow) == float_type.float_dtype(pinned, wide) == getattr(torch, chosen)


def test_a_broken_unet_config_counts_as_unknown_width(tmp_path):
    folder = tmp_path / "broken" / "unet"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{not json")
    assert float_type.unet_width(str(folder.parent)) is None
    (folder / "config.json").write_text(json.dumps({"block_out_channels": "wide"}))
    assert float_type.unet_width(str(folder.parent)) is None


@pytest.mark.slow
def test_a_bf16_engine_computes_every_part_in_bf16_and_draws_what_float32_draws(tmp_path):
    """The demo pinned to bfloat16: pipeline, float UNet and the W8A8 variant's float parts are bf16, the readout says
    so, and the images stay close to float32's (the same seed)."""
    settings = load_settings(home=tmp_path / "home", assets_dir=DEFAULT_ASSETS, memory_budget_mb=1024)
    card = start(settings).repository.get("teddybear-v2")
    prompt = "a photo of a <teddybear-v2> bear on a beach"
    params = GenerationParams(steps=4, seed=3)
    engines = {
        dtype: Engine(settings.model_copy(update={"cpu_dtype": dtype}), calibration_captions=2, calibration_steps=2)
        for dtype in ("float32", "bfloat16")
    }

    def image(engine: Engine, precision: str) -> np.ndarray:
        frames = list(engine.generate(card, prompt, precision, params=params, previews=False))
        return np.asarray(frames[-1].image, dtype=np.float64) / 255

    bf16 = engines["bfloat16"]
    base = bf16.base_location(card)
    for precision in ("FP32", "W8A8"):  # float32 first: its W8A8 variant is stored, and the bf16 engine serves it
        float32_image = image(engines["float32"], precision)
        error = np.abs(image(bf16, precision) - float32_image).mean()
        assert error < 0.05, f"{precision}: mean pixel difference {error:.3f}"  # 0.018 / 0.026 here
    assert bf16.pipeline(base).vae.dtype == bf16.pipeline(base).text_encoder.dtype == torch.bfloat16
    assert bf16.float_unet(base).dtype == torch.bfloat16
    variant = bf16.quantized_unet(card, precision_config("W8A8"))
    assert variant.unet.conv_norm_out.weight.dtype == torch.bfloat16
    assert variant.unet.conv_in.packed.scale.dtype == torch.float32  # scales keep float32, as on a GPU
    assert bf16.float_line() == "float layers in bfloat16" and engines["float32"].float_line() == ""
