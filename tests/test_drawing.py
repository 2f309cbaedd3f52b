"""The chat's image set and its edits, the PNG it writes and reads back, the visitor's gallery files, and the sizes
offered per base: the library under the chat's chips, settings and gallery."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import pytest
from factories import write_card, write_kohya_lora
from PIL import Image

from personalq.drawing import (
    MAX_USES,
    Drawing,
    DrawingRefused,
    clamp_weight,
    from_parameters,
    generation_params,
)
from personalq.image_history import ImageHistory
from personalq.repository.card import StoredCheckpoint
from personalq.repository.weighted import Weighted
from personalq.repository.weights_name import weights_name
from personalq.serving.allowance import Refused
from personalq.serving.generation import GenerationParams
from personalq.serving.png_parameters import read_parameters
from personalq.serving.sizes import parse_size, size_presets
from personalq.serving.webui_parameters import file_stem


def card(card_id: str, kind: str = "lora", base: str = "sd-1.5", **fields) -> StoredCheckpoint:
    return StoredCheckpoint.model_validate(
        {
            "id": card_id,
            "name": card_id.replace("-", " ").title(),
            "kind": kind,
            "base_model": base,
            "triggers": fields.pop("triggers", [f"{card_id.split('-')[0]}tok"]),
            "created_at": dt.datetime(2025, 1, 1),
            **fields,
        }
    )


CORGI, INK = card("corgi-v2"), card("inkwash-v1", triggers=["inkwash style", "inkwash"])


def corgi_in_ink() -> Drawing:
    return Drawing("corgitok sitting in a park, inkwash style", (Weighted(CORGI), Weighted(INK, 0.6)))


# --- the set and its edits --------------------------------------------------------------------------------------


def test_a_strength_is_held_to_the_webui_range_on_the_slider_step():
    assert [clamp_weight(w) for w in (3.0, -7, 0.333, 0.6, math.nan)] == [2.0, -2.0, 0.35, 0.6, 1.0]
    drawing = corgi_in_ink().reweighted(1, 5.0)
    assert [u.weight for u in drawing.uses] == [1.0, 2.0] and drawing.prompt == corgi_in_ink().prompt
    with pytest.raises(DrawingRefused):
        corgi_in_ink().reweighted(2, 0.5)  # a chip for a checkpoint the set no longer has
    assert hash(corgi_in_ink()) == hash(corgi_in_ink()) != hash(drawing)  # what tells Gradio the set changed


def test_removing_a_checkpoint_takes_its_triggers_out_of_the_prompt():
    without_style = corgi_in_ink().without(1)
    assert without_style.prompt == "corgitok sitting in a park"
    assert [u.id for u in without_style.uses] == ["corgi-v2"]
    without_subject = corgi_in_ink().without(0)
    assert without_subject.prompt == "sitting in a park, inkwash style"
    with pytest.raises(DrawingRefused, match="at least one"):
        without_style.without(0)


def test_adding_a_checkpoint_puts_its_trigger_in_once_and_keeps_one_base_and_one_unet():
    alone = Drawing("corgitok sitting in a park", (Weighted(CORGI),))
    added = alone.with_checkpoint(INK, 0.7)
    assert added.prompt == "corgitok sitting in a park, inkwash style"
    assert [(u.id, u.weight) for u in added.uses] == [("corgi-v2", 1.0), ("inkwash-v1", 0.7)]
    assert corgi_in_ink().without(1).with_checkpoint(INK).prompt == "corgitok sitting in a park, inkwash style"
    started = Drawing("", ()).with_checkpoint(CORGI)  # a set started from the search box
    assert started.prompt == "corgitok" and started.base_model == "sd-1.5"

    with pytest.raises(DrawingRefused, match="inkwash-v1 is in the set twice"):
        added.with_checkpoint(INK)
    with pytest.raises(DrawingRefused, match="one image runs on one base"):
        alone.with_checkpoint(card("xlstyle-v1", base="sdxl"))
    dreambooth = alone.with_checkpoint(card("dbone-v1", kind="dreambooth"))
    assert dreambooth.anchor.id == "dbone-v1"  # the image runs on the fine-tuned UNet, the LoRA on top
    with pytest.raises(DrawingRefused, match="dbone-v1 .* and dbtwo-v1 .* full UNet"):
        dreambooth.with_checkpoint(card("dbtwo-v1", kind="dreambooth"))
    full = alone
    for number in range(MAX_USES - 1):
        full = full.with_checkpoint(card(f"extra{number}-v1"))
    with pytest.raises(DrawingRefused, match=f"at most {MAX_USES}"):
        full.with_checkpoint(card("onemore-v1"))


# --- the PNG it writes and one click reads back -----------------------------------------------------------------


def test_the_png_names_every_adapter_at_its_weight_and_gives_the_same_set_back(settings, tmp_path):
    from personalq.repository.service import Repository

    folder = tmp_path / "cards"
    write_kohya_lora(folder / "mochiCorgi_v2.safetensors")
    write_card(folder, "mochi-corgi-v2", weights="mochiCorgi_v2.safetensors", triggers=["mochicorgi"])
    write_card(folder, "ink-wash-v1", triggers=["inkwash style"])
    repository = Repository(settings)
    assert repository.import_paths([folder]).ok
    corgi, ink = repository.get("mochi-corgi-v2"), repository.get("ink-wash-v1")
    assert (file_stem(corgi), file_stem(ink)) == ("mochiCorgi_v2", "ink-wash-v1")  # the file's stem, or the id
    # diffusers' one file name for every LoRA says nothing: its folder names the model, as Check-in reads a tag
    assert weights_name("zoo/weights/teddybear-v2/pytorch_lora_weights.safetensors") == "teddybear-v2"

    drawing = Drawing("mochicorgi in the rain, inkwash style", (Weighted(corgi, 0.8), Weighted(ink, -0.5)))
    params = GenerationParams(steps=12, guidance=6.5, seed=1234, width=64, height=96, negative_prompt="blurry")
    history = ImageHistory(tmp_path / "outputs")
    gallery = history.new_id()
    made = drawing.parameters(params, str(tmp_path / "v1-5-pruned"))
    path = history.save(gallery, Image.new("RGB", (64, 96)), made)

    text = Image.open(path).info["parameters"]
    assert "<lora:mochiCorgi_v2:0.8> <lora:ink-wash-v1:-0.5>" in text and "Negative prompt: blurry" in text
    assert f"mochiCorgi_v2: {corgi.weights_sha256[:10]}" in text  # the WebUI's AutoV2 hash of the file
    read = history.parameters(gallery, f"/gradio_api/file=/tmp/gradio/abc/{path.name}")
    assert (read.seed, read.steps, read.cfg_scale, read.width, read.height) == (1234, 12, 6.5, 64, 96)
    back = from_parameters(read, repository)
    assert back.prompt == drawing.prompt and read.negative_prompt == "blurry"
    assert [(u.id, u.weight) for u in back.uses] == [("mochi-corgi-v2", 0.8), ("ink-wash-v1", -0.5)]

    repository.remove("ink-wash-v1")
    assert [u.id for u in from_parameters(read, repository).uses] == ["mochi-corgi-v2"]  # what is left
    repository.remove("mochi-corgi-v2")
    with pytest.raises(DrawingRefused):
        from_parameters(read, repository)


# --- the visitor's gallery -------------------------------------------------------------------------------------


def test_a_gallery_is_named_only_by_ids_it_drew_and_serves_only_its_own_images(tmp_path):
    history = ImageHistory(tmp_path / "outputs", max_images=3)
    mine, theirs = history.new_id(), history.new_id()
    assert history.own_id(mine) == mine
    for claimed in ("../../etc", mine.upper(), mine + "/..", "", None, 42, {"id": mine}):
        drawn = history.own_id(claimed)
        assert drawn != claimed and history.own_id(drawn) == drawn

    parameters = Drawing("a tok", (Weighted(CORGI),)).parameters(GenerationParams(), "stable-diffusion-v1-5")
    saved = [history.save(mine, Image.new("RGB", (8, 8)), parameters) for _ in range(5)]
    other = history.save(theirs, Image.new("RGB", (8, 8)), parameters)
    assert history.images(mine) == saved[:1:-1]  # newest first, the oldest beyond three deleted
    assert not saved[0].exists() and not saved[1].exists()

    assert history.find(mine, str(saved[-1])) == saved[-1]
    assert history.find(mine, str(other)) is None  # another visitor's image, by its full path
    for hostile in ("../" + theirs + "/" + other.name, "/etc/passwd", saved[-1].name + "/..", "x.png", None):
        assert history.find(mine, hostile) is None
    (history.folder(mine) / "notes.png").write_bytes(b"not ours")
    assert history.find(mine, "notes.png") is None and len(history.images(mine)) == 3
    assert read_parameters(saved[-1]) is not None


# --- sizes and settings ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("native", [64, 512, 1024])
def test_the_sizes_offered_never_go_below_the_base_and_start_with_its_square(native):
    presets = size_presets(native)
    sizes = [parse_size(value) for _, value in presets]
    assert sizes[0] == (native, native) and (native, native * 3 // 2) in sizes and (native * 3 // 2, native) in sizes
    assert all(min(side) == native and side[0] % 8 == 0 and side[1] % 8 == 0 for side in sizes)
    assert all(label.startswith(value) for label, value in presets)


def test_the_settings_a_page_sends_are_checked_and_a_seed_of_minus_one_is_drawn():
    assert parse_size("512") == (512, 512) and parse_size("512 x 768 (2:3)") == (512, 768)
    params = generation_params(-1, 20, 5.0, "64 x 96", "  blurry ")
    assert 0 <= params.seed < 2**32 and (params.width, params.height, params.negative_prompt) == (64, 96, "blurry")
    assert generation_params(7, 20, 5.0, "64", "").seed == 7
    for seed, size, negative in [(-2, "64", ""), (0, "63 x 64", ""), (0, "64 x 4096", ""), (0, "big", "")]:
        with pytest.raises(Refused):
            generation_params(seed, 20, 5.0, size, negative)
    with pytest.raises(Refused, match="negative"):
        generation_params(0, 20, 5.0, "64", "x" * 5000)


def test_an_image_history_folder_is_inside_the_outputs(tmp_path: Path):
    history = ImageHistory(tmp_path)
    with pytest.raises(ValueError):
        history.folder("../outside")
    assert history.folder(history.new_id()).parent == tmp_path
