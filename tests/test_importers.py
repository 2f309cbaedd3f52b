"""Every importer on files in its real format, recognised by content."""

import datetime as dt
import json
import shutil

from factories import (
    write_card,
    write_civitai_info,
    write_dreambooth_folder,
    write_kohya_lora,
    write_textual_inversion,
)


def test_a_relative_path_is_stored_absolute(repository, tmp_path, monkeypatch):
    """The app and the CLI run from different folders: what one stores, the other must find."""
    write_kohya_lora(tmp_path / "loras" / "bear_v2.safetensors", output_name="bear_v2")
    monkeypatch.chdir(tmp_path)
    assert repository.import_paths(["loras"]).count("imported") == 1
    monkeypatch.chdir("/")
    card = repository.list()[0]
    assert card.weights_path == str(tmp_path / "loras" / "bear_v2.safetensors")
    assert card.source_path == str(tmp_path / "loras" / "bear_v2.safetensors")


def test_card_folder_with_weights_and_preview(repository, tmp_path):
    folder = tmp_path / "cards"
    lora = write_kohya_lora(folder / "weights" / "bear-v4.safetensors")
    (folder / "bear-v4.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    write_card(
        folder,
        "bear-v4",
        name="Teddy bear v4",
        family="teddy-bear",
        version=4,
        weights="weights/bear-v4.safetensors",
        preview="bear-v4.png",
        styles=["realistic"],
        subjects=["bear", "teddy bear"],
    )
    (folder / "second.json").write_text(
        json.dumps({"id": "cat-v1", "name": "Cat v1", "created_at": "2024-01-02", "triggers": ["<cat>"]})
    )
    report = repository.import_paths([folder])
    assert report.ok, report.outcomes
    assert report.count("imported") == 2  # the LoRA file is claimed by its card, not imported twice
    bear = repository.get("bear-v4")
    assert bear.weights_path == str(lora.resolve())
    assert len(bear.weights_sha256) == 64
    assert bear.preview_path.endswith("bear-v4.png")
    assert bear.version_number == 4.0
    assert repository.get("cat-v1").triggers == ["<cat>"]


def test_civitai_info_next_to_model_file(repository, tmp_path):
    model = write_kohya_lora(tmp_path / "ghibli_v20.safetensors")
    write_civitai_info(model)
    report = repository.import_paths([tmp_path])
    assert report.count("imported") == 1, report.outcomes
    card = repository.get("civitai-101")
    assert card.triggers == ["ghibli style", "sks landscape"]
    assert card.created_at == dt.datetime(2023, 4, 2, 10, 11, 12)
    assert card.base_model == "sd-1.5"
    assert card.version == "v2.0_offset" and card.version_number == 2.0
    assert card.tags == ["anime", "landscape"]
    assert card.family == "civitai-7-ghibli-background"
    assert card.description == "Second version with offset noise ."
    assert card.weights_path == str(model.resolve())


def test_civitai_model_json_gives_one_checkpoint_per_version(repository, tmp_path):
    model = {
        "id": 9,
        "name": "Pixel Sprites",
        "type": "LORA",
        "tags": ["pixel art"],
        "modelVersions": [
            {
                "id": 1,
                "name": "v1.0",
                "createdAt": "2023-01-01T00:00:00Z",
                "baseModel": "SD 1.5",
                "trainedWords": ["pixsprite"],
            },
            {
                "id": 2,
                "name": "v3.0 (morden_pixel)",
                "createdAt": "2023-03-01T00:00:00Z",
                "baseModel": "SDXL 1.0",
                "trainedWords": [],
            },
        ],
    }
    (tmp_path / "model.json").write_text(json.dumps(model))
    report = repository.import_paths([tmp_path / "model.json"])
    assert report.count("imported") == 2
    first, second = repository.get("civitai-1"), repository.get("civitai-2")
    assert first.family == second.family
    assert second.base_model == "sdxl" and second.version_number == 3.0


def test_kohya_header_only(repository, tmp_path):
    path = write_kohya_lora(tmp_path / "bear_v2-000004.safetensors", output_name="bear_v2")
    report = repository.import_paths([path])
    assert report.count("imported") == 1, report.outcomes
    card = repository.list()[0]
    assert card.kind == "lora"
    assert card.triggers == ["brnbear"]
    assert card.tags[:2] == ["teddy bear", "plush"]
    assert card.created_at == dt.datetime(2024, 4, 11, 8, 0, 0, 500000)
    assert card.family == "bear"
    assert card.version_number == 4.0 and card.base_model == "sd-1.5"


def test_kohya_modelspec_keys_win(repository, tmp_path):
    path = write_kohya_lora(
        tmp_path / "anime_sketch.safetensors",
        **{
            "modelspec.title": "Anime Sketch",
            "modelspec.date": "2025-05-06",
            "modelspec.description": "rough pencil lines",
            "modelspec.tags": "anime, sketch",
            "modelspec.trigger_phrase": "anmsketch",
            "modelspec.architecture": "stable-diffusion-xl-v1-base/lora",
        },
    )
    repository.import_paths([path])
    card = repository.list()[0]
    assert (card.name, card.triggers, card.base_model) == ("Anime Sketch", ["anmsketch"], "sdxl")
    assert card.created_at == dt.datetime(2025, 5, 6) and card.description == "rough pencil lines"
    assert card.tags[:2] == ["anime", "sketch"]


def test_diffusers_dreambooth_folder(repository, tmp_path):
    folder = write_dreambooth_folder(tmp_path / "corgi-dreambooth-v2")
    report = repository.import_paths([tmp_path])
    assert report.count("imported") == 1, report.outcomes
    card = repository.list()[0]
    assert card.kind == "dreambooth"
    assert card.triggers == ["sks"] and card.subjects == ["dog"]
    assert "corgi" in card.tags
    assert card.weights_path == str(folder.resolve())
    assert card.version_number == 2.0


def test_textual_inversion_folder(repository, tmp_path):
    write_textual_inversion(tmp_path / "cat-toy", "<cat-toy>", "object")
    write_textual_inversion(tmp_path / "midas-style", "<midas>", "style", seed=1)
    report = repository.import_paths([tmp_path])
    assert report.count("imported") == 2, report.outcomes
    toy, midas = repository.get("cat-toy"), repository.get("midas-style")
    assert toy.kind == "textual_inversion" and toy.triggers == ["<cat-toy>"] and toy.subjects == ["cat", "toy"]
    assert midas.styles == ["midas"]


def test_reimport_is_idempotent_and_identity_is_the_weights(repository, tmp_path):
    path = write_kohya_lora(tmp_path / "a" / "bear_v2.safetensors")
    assert repository.import_paths([path]).count("imported") == 1
    assert repository.import_paths([path]).count("unchanged") == 1
    copy = tmp_path / "b" / "bear_v2.safetensors"
    copy.parent.mkdir()
    shutil.copy(path, copy)
    report = repository.import_paths([copy])  # same bytes elsewhere: the same checkpoint, and a copy of it
    assert report.count("duplicate") == 1 and "duplicate of bear-v2" in report.outcomes[0].message
    assert repository.count() == 1


def test_made_up_ids_do_not_collide(repository, tmp_path):
    write_kohya_lora(tmp_path / "a" / "model.safetensors", seed=1)
    write_kohya_lora(tmp_path / "b" / "model.safetensors", seed=2)
    report = repository.import_paths([tmp_path / "a", tmp_path / "b"])
    assert report.count("imported") == 2
    assert len({c.id for c in repository.list()}) == 2


def test_replace_updates_a_changed_card(repository, tmp_path):
    write_card(tmp_path, "bear-v4", description="tan bear")
    repository.import_paths([tmp_path])
    write_card(tmp_path, "bear-v4", description="brown bear", styles=["anime"])
    report = repository.import_paths([tmp_path], replace=True)
    assert report.count("updated") == 1
    assert repository.get("bear-v4").styles == ["anime"]
    assert [c.id for c in repository.list()] == ["bear-v4"]
