"""Several checkpoints in one image, served: real kohya LoRA, LoCon and textual-inversion files written for one tiny
stand-in SD 1.5 base, applied together by the engine at their weights on the float base and on a W8A8 variant.

What each test compares against is the engine's own output for another set: the same request with an adapter left
out (weight 0 must draw exactly that), with the adapter at a smaller weight (a larger weight must draw further
from it), and the anchor alone at weight 0 (nothing on top: the base's picture, which must be bit-identical before
and after a set was applied). TAQ's token mask is read from the quantized UNet's context while it denoises, with a
forward hook, so it is the mask the engine really protected with.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
from restoration import Snapshot, adapter_layers, difference

from personalq.config import load_settings
from personalq.repository.card import StoredCheckpoint
from personalq.repository.weighted import Weighted
from personalq.serving.checkpoints import CheckpointLoadError, load_base
from personalq.serving.composition import Composition, CompositionError
from personalq.serving.engine import Engine
from personalq.serving.generation import GenerationParams
from personalq.serving.variants import precision_config
from personalq.standin import formats
from personalq.standin.bases import write_stand_in

PARAMS = GenerationParams(steps=2, width=64, height=64, seed=3)
PROMPT = "pxlfox sitting on a chair, clywrk style, glimmerkat"


@dataclass
class Cards:
    pixelfox: StoredCheckpoint  # kohya LoRA
    claywork: StoredCheckpoint  # kohya LoRA
    mosslocon: StoredCheckpoint  # kohya LoCon (3x3 convolutions too)
    glimmerkat: StoredCheckpoint  # AUTOMATIC1111 embedding
    marblecat: StoredCheckpoint  # DreamBooth folder (a full UNet)

    def set(self, **weights: float) -> list[Weighted]:
        return [Weighted(getattr(self, name), weight) for name, weight in weights.items()]


def card(card_id: str, kind: str, trigger: str, weights: Path | None = None, base: str = "sd-1.5"):
    return StoredCheckpoint(
        id=card_id,
        name=card_id.replace("-", " "),
        kind=kind,
        base_model=base,
        triggers=[trigger],
        weights_path=str(weights) if weights else None,
        created_at=dt.datetime(2025, 5, 1),
    )


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> tuple[Engine, Cards]:
    root = tmp_path_factory.mktemp("composition")
    base = write_stand_in("sd15", root / "sd15-base", size="tiny", dtype=torch.float32)
    pipe = load_base(base)
    files = root / "downloads"
    # tags as the files' captions had them; they also keep each header's length off a first byte of 0x80, which the
    # repository's header reader takes for a renamed pickle
    formats.write_kohya_lora(pipe, files / "pixelfox_v1.safetensors", trigger="pxlfox", tags=("fox",), seed=1)
    formats.write_kohya_lora(pipe, files / "claywork_v2.safetensors", trigger="clywrk", tags=("pottery",), seed=2)
    formats.write_kohya_lora(
        pipe, files / "moss_locon.safetensors", conv_rank=4, conv_alpha=2, trigger="mssgdn", seed=3
    )
    formats.write_a1111_embedding(pipe, files / "glimmerkat.safetensors", seed=4)
    with torch.no_grad():  # a fine-tune: the base with one tensor moved, by enough to change the picture
        pipe.unet.conv_out.weight += 0.2 * torch.randn(pipe.unet.conv_out.weight.shape)
    pipe.save_pretrained(files / "marblecat-dreambooth", safe_serialization=True)
    cards = Cards(
        card("pixelfox-v1", "lora", "pxlfox", files / "pixelfox_v1.safetensors"),
        card("claywork-v2", "lora", "clywrk", files / "claywork_v2.safetensors"),
        card("moss-locon", "lora", "mssgdn", files / "moss_locon.safetensors"),
        card("glimmerkat", "textual_inversion", "glimmerkat", files / "glimmerkat.safetensors"),
        card("marblecat-dreambooth", "dreambooth", "mrblct", files / "marblecat-dreambooth"),
    )
    settings = load_settings(home=root / "home", base_models={"sd-1.5": str(base)}, calibration_size=64)
    return Engine(settings, calibration_captions=2, calibration_steps=1), cards


def image(engine: Engine, uses, precision: str, prompt: str = PROMPT) -> np.ndarray:
    frames = list(engine.generate(uses, prompt, precision, params=PARAMS, previews=False))
    assert frames[-1].final
    return np.asarray(frames[-1].image)


def served_unets(engine: Engine, anchor: StoredCheckpoint, precision: str) -> dict:
    """The UNets a request at ``precision`` runs on (and the float one a variant is made from)."""
    base = engine.base_location(anchor)
    unets = {"unet": engine.float_unet(base)}
    config = precision_config(precision)
    if config is not None:
        unets["variant"] = engine.quantized_unet(anchor, config).unet
    return unets


@pytest.mark.parametrize("precision", ["FP32", "W8A8"])
def test_two_loras_and_an_embedding_at_their_weights(world, precision):
    engine, cards = world
    without_claywork = image(engine, cards.set(pixelfox=1.0, glimmerkat=1.0), precision)
    switched_off = image(engine, cards.set(pixelfox=1.0, claywork=0.0, glimmerkat=1.0), precision)
    assert np.array_equal(switched_off, without_claywork), "weight 0 should draw the set without that adapter"

    half = image(engine, cards.set(pixelfox=1.0, claywork=0.5, glimmerkat=1.0), precision)
    full = image(engine, cards.set(pixelfox=1.0, claywork=1.0, glimmerkat=1.0), precision)
    assert 0.5 < difference(half, without_claywork) < difference(full, without_claywork), (
        difference(half, without_claywork),
        difference(full, without_claywork),
    )
    assert difference(full, half) > 0.5, "the weight does not reach the adapter"
    without_embedding = image(engine, cards.set(pixelfox=1.0, claywork=1.0), precision)
    assert difference(full, without_embedding) > 0.5, "the embedding changes nothing beside two LoRAs"


@pytest.mark.parametrize("precision", ["FP32", "W8A8"])
def test_removing_the_set_restores_the_base_bit_for_bit(world, precision):
    engine, cards = world
    nothing_on_top = cards.set(pixelfox=0.0)  # the anchor switched off: the base (or its variant) alone
    base_picture = image(engine, nothing_on_top, precision)
    pipe = engine.pipeline(engine.base_location(cards.pixelfox))
    unets = served_unets(engine, cards.pixelfox, precision)
    before = Snapshot.of(pipe, **unets)

    composed = image(engine, cards.set(pixelfox=0.8, mosslocon=1.2, glimmerkat=1.0), precision)
    assert difference(composed, base_picture) > 1.0

    assert not adapter_layers(pipe, *unets.values()), "peft layers were left behind"
    Snapshot.of(pipe, **unets).assert_same(before, f"after a set at {precision}")
    assert np.array_equal(image(engine, nothing_on_top, precision), base_picture)


def protected_words(engine: Engine, cards: Cards, uses: list[Weighted], prompt: str) -> list[str]:
    """The words the quantized UNet kept in full precision in ``prompt`` while it denoised (its context's mask, read
    by a forward hook at every call, decoded with the tokenizer as it was then: embeddings loaded)."""
    pipe = engine.pipeline(engine.base_location(cards.pixelfox))
    variant = engine.quantized_unet(Composition.of(uses).anchor, precision_config("W8A8"))
    seen: list[list[str]] = []

    def record(module, args):
        mask = variant.context.protected
        ids = pipe.tokenizer(prompt, padding="max_length", max_length=mask.shape[1], truncation=True).input_ids
        row = mask[-1].tolist()  # the batch is (negative, prompt)
        kept = "".join(token if keep else " " for token, keep in zip(pipe.tokenizer.convert_ids_to_tokens(ids), row))
        seen.append(kept.replace("</w>", " ").split())

    hook = variant.unet.register_forward_pre_hook(record)
    try:
        list(engine.generate(uses, prompt, "W8A8", params=PARAMS, previews=False))
    finally:
        hook.remove()
    assert seen and all(words == seen[0] for words in seen)
    return seen[0]


def test_taq_protects_every_trigger_of_the_set(world):
    engine, cards = world
    uses = cards.set(pixelfox=1.0, claywork=0.7, glimmerkat=1.0)
    assert protected_words(engine, cards, uses, PROMPT) == ["pxlfox", "clywrk", "glimmerkat"]
    assert protected_words(engine, cards, cards.set(pixelfox=1.0), PROMPT) == ["pxlfox"]


def test_a_dreambooth_unet_carries_the_set_and_two_full_unets_are_refused(world):
    engine, cards = world
    tuned = cards.set(pixelfox=1.0, marblecat=1.0)
    assert Composition.of(tuned).anchor == cards.marblecat  # the full UNet, wherever it is in the set
    fine_tune_alone = image(engine, cards.set(marblecat=1.0), "FP32")
    unet = engine.float_unet(engine.base_location(cards.marblecat), cards.marblecat)
    before = Snapshot.of(engine.pipeline(engine.base_location(cards.marblecat)), unet=unet)
    with_lora = image(engine, tuned, "FP32")
    assert difference(with_lora, fine_tune_alone) > 1.0
    assert difference(with_lora, image(engine, cards.set(pixelfox=1.0), "FP32")) > 1.0
    assert not adapter_layers(engine.pipeline(engine.base_location(cards.marblecat)), unet)
    Snapshot.of(engine.pipeline(engine.base_location(cards.marblecat)), unet=unet).assert_same(before, "fine-tune")

    for kind in ("dreambooth", "checkpoint"):  # a second DreamBooth, or a WebUI single-file checkpoint
        other = card("copperdream-v2", kind, "cpprdrm")
        with pytest.raises(CompositionError, match="marblecat-dreambooth.*copperdream-v2.*one UNet"):
            list(engine.generate([*tuned, Weighted(other)], PROMPT))


def test_a_set_that_mixes_bases_is_refused_naming_both(world):
    engine, cards = world
    inkwolf = card("inkwolf-xl", "lora", "inkwlf", base="sdxl")
    with pytest.raises(CompositionError, match=r"pixelfox-v1 is for sd-1\.5 .*inkwolf-xl for sdxl"):
        list(engine.generate([Weighted(cards.pixelfox), Weighted(inkwolf)], PROMPT))
    with pytest.raises(CompositionError, match="twice"):
        Composition.of(cards.set(pixelfox=1.0) * 2)


def test_ray_routes_a_set_by_its_anchor_and_batches_only_equal_weights(world):
    pytest.importorskip("ray.serve", reason="Ray Serve is not installed (pip install 'personalq[ray]')")
    from personalq.serving.ray_serving import GenerationRequest, variant_id

    _, cards = world
    composed = GenerationRequest.of(cards.set(pixelfox=1.0, claywork=0.6, glimmerkat=1.0), PROMPT, "W8A8")
    reweighted = GenerationRequest.of(cards.set(pixelfox=1.0, claywork=0.9, glimmerkat=1.0), PROMPT, "W8A8")
    assert composed.variant == reweighted.variant == variant_id(cards.pixelfox, "W8A8")  # one UNet: one replica
    assert composed.batch_key != reweighted.batch_key  # one pipeline call holds one set of weights
    tuned = GenerationRequest.of(cards.set(claywork=1.0, marblecat=1.0), PROMPT, "FP32")
    assert tuned.variant == variant_id(cards.marblecat, "FP32")
    with pytest.raises(CompositionError, match="sd-1.5 .*sdxl"):  # refused in the app, before it travels
        GenerationRequest.of([Weighted(cards.pixelfox), Weighted(card("inkwolf-xl", "lora", "x", base="sdxl"))], "")


def test_a_set_that_fails_to_load_leaves_nothing_behind(world):
    """A second embedding under a token the first already added is refused by diffusers after the first loaded and
    the token table grew: everything comes off again."""
    engine, cards = world
    twin = card("glimmerkat-copy", "textual_inversion", "glimmerkat", Path(cards.glimmerkat.weights_path))
    pipe = engine.pipeline(engine.base_location(cards.pixelfox))
    unets = served_unets(engine, cards.pixelfox, "FP32")
    before = Snapshot.of(pipe, **unets)
    with pytest.raises(CheckpointLoadError, match="glimmerkat-copy"):
        list(engine.generate([*cards.set(pixelfox=1.0, glimmerkat=1.0), Weighted(twin)], PROMPT, params=PARAMS))
    assert not adapter_layers(pipe, *unets.values())
    Snapshot.of(pipe, **unets).assert_same(before, "after a refused set")
