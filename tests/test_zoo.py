"""The demo zoo: the whole build on tiny data, and the shipped model generating."""

from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from diffusers import StableDiffusionPipeline

from personalq.config import PROJECT_ROOT
from personalq.repository.service import Repository
from personalq.serving.checkpoints import applied, load_base
from personalq.zoo.build import ZooBuildConfig, build_zoo
from personalq.zoo.catalog import CATEGORIES, CATEGORY_GLYPHS, Subject
from personalq.zoo.models import load_tokenizer, materialize_text_encoder
from personalq.zoo.render import render

SHIPPED = PROJECT_ROOT / "assets" / "zoo"


def test_every_category_renders_and_triggers_split_into_sub_tokens():
    for category in CATEGORIES:
        image = np.asarray(render(Subject(category, CATEGORY_GLYPHS[category][0], "crimson", "sunny beach", "dawn", "anime"), 64, seed=1))
        assert image.shape == (64, 64, 3) and image.std() > 10
    assert load_tokenizer().tokenize("<teddybear-v2>") == ["<", "teddy", "##be", "##ar", "-", "v", "##2", ">"]


@pytest.mark.slow
def test_tiny_build_runs_every_stage_and_loads_with_diffusers(tmp_path, settings):
    out = build_zoo(tmp_path / "work", tmp_path / "zoo", ZooBuildConfig.tiny())
    materialize_text_encoder(out / "base")
    pipe = StableDiffusionPipeline.from_pretrained(out / "base", safety_checker=None, feature_extractor=None, requires_safety_checker=False)
    image = pipe("a photo of a dog", num_inference_steps=2, height=64, width=64, output_type="np").images[0]
    assert image.shape == (64, 64, 3)
    cards = sorted((out / "repository").glob("*.yaml"))
    assert [c.stem for c in cards] == ["biscuit-v1", "biscuit-v3", "oakley-v1"]
    assert {yaml.safe_load(c.read_text())["kind"] for c in cards} == {"lora", "dreambooth", "textual_inversion"}
    assert (out / "evaluator.safetensors").exists()
    repository = Repository(settings)
    assert repository.import_paths([out / "repository"]).count("imported") == 3
    # resumable: a second build finds every stage done and trains nothing
    assert build_zoo(tmp_path / "work", tmp_path / "zoo", ZooBuildConfig.tiny()) == out


@pytest.mark.skipif(not (SHIPPED / "base" / "model_index.json").exists(), reason="the demo zoo is not built in this checkout")
def test_shipped_model_generates_with_its_checkpoints(settings):
    pipe = load_base(SHIPPED / "base")
    repository = Repository(settings)
    report = repository.import_paths([SHIPPED / "repository"])
    assert report.ok and report.count("imported") >= 3
    kinds = {}
    for card in repository.list():
        kinds.setdefault(card.kind, card)
    for card in kinds.values():
        with applied(pipe, card) as p:
            image = p(f"a photo of {card.canonical_trigger}", num_inference_steps=4, height=64, width=64,
                      generator=torch.Generator().manual_seed(0), output_type="np").images[0]
        assert image.shape == (64, 64, 3) and np.isfinite(image).all()
    plain = pipe("a photo of a dog", num_inference_steps=4, height=64, width=64, generator=torch.Generator().manual_seed(0), output_type="np").images[0]
    assert plain.std() > 0.01
