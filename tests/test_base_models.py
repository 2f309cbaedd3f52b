"""Base keys, the architecture weights were made for, and which base serves a card."""

from __future__ import annotations

import datetime as dt

import pytest

from personalq.config import DEFAULT_ASSETS, load_settings
from personalq.repository.base_models import architecture_of, normalise_base_model
from personalq.repository.card import StoredCheckpoint
from personalq.repository.importers.architecture import tensors_architecture
from personalq.serving.bases import BaseMismatch, configured_bases, pipeline_architecture, served_base


@pytest.mark.parametrize(
    "written, key, architecture",
    [
        ("SD 1.5", "sd-1.5", "sd1"),
        ("SD 1.4", "sd-1.4", "sd1"),
        ("SD 2.1 768", "sd-2.1", "sd2"),
        ("SDXL 1.0", "sdxl", "sdxl"),
        ("SDXL Turbo", "sdxl", "sdxl"),
        ("Pony", "pony", "sdxl"),
        ("Illustrious", "illustrious", "sdxl"),
        ("runwayml/stable-diffusion-v1-5", "sd-1.5", "sd1"),
        ("stabilityai/stable-diffusion-2-1", "sd-2.1", "sd2"),
        ("Flux.1 D", "flux-1-d", None),
        ("SD 3.5 Large", "sd-3.5", None),
        ("Other", "other", None),
        (None, "sd-1.5", "sd1"),
        ("personalq-demo-base", "personalq-demo", "demo"),
    ],
)
def test_base_names_normalize_to_keys_that_map_to_themselves(written, key, architecture):
    assert normalise_base_model(written) == key
    assert normalise_base_model(key) == key
    assert architecture_of(key) == architecture


def test_architecture_from_single_file_and_lora_names_and_widths():
    assert tensors_architecture({"conditioner.embedders.1.model.ln_final.weight": (1280,)}) == "sdxl"
    assert tensors_architecture({"cond_stage_model.transformer.text_model.final_layer_norm.weight": (768,)}) == "sd1"
    assert tensors_architecture({"cond_stage_model.model.ln_final.weight": (1024,)}) == "sd2"
    down = "lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn2_to_k.lora_down.weight"
    assert tensors_architecture({down: (32, 768)}) == "sd1"
    assert tensors_architecture({down: (32, 1024)}) == "sd2"
    te1 = "lora_te1_text_model_encoder_layers_0_self_attn_q_proj"
    assert tensors_architecture({f"{te1}.lora_down.weight": (4, 32), f"{te1}.lora_up.weight": (32, 4)}) == "sdxl"
    assert tensors_architecture({"emb_params": (2, 768)}) == "sd1"
    assert tensors_architecture({"clip_l": (2, 768), "clip_g": (2, 1280)}) == "sdxl"
    assert tensors_architecture({down: (4, 32)}) is None  # the demo's widths tell nothing


def card(base_model: str) -> StoredCheckpoint:
    return StoredCheckpoint(
        id="flux-thing", name="Flux thing", base_model=base_model, created_at=dt.datetime(2025, 1, 1)
    )


def test_a_card_whose_base_is_not_configured_is_refused_naming_it(tmp_path):
    settings = load_settings(home=tmp_path, assets_dir=DEFAULT_ASSETS, base_models={"SD 1.5": "/models/sd15"})
    assert configured_bases(settings)["sd-1.5"] == "/models/sd15"  # keys are normalized like the cards'
    assert served_base(settings, card("personalq-demo")).architecture == "demo"
    with pytest.raises(BaseMismatch, match=r"flux-1-d .*no base is configured.*sd-1.5 -> /models/sd15"):
        served_base(settings, card("Flux.1 D"))


def test_the_demo_base_is_told_apart_from_clip_bases():
    assert pipeline_architecture(str(DEFAULT_ASSETS / "zoo" / "base")) == "demo"
