"""Previews by the conventions people's folders follow, never outside the imported folder, and a placeholder."""

import json

import pytest
from factories import write_card, write_civitai_info, write_kohya_lora
from PIL import Image

from personalq.ui.placeholder import SIDE, initials, placeholder_preview


def _picture(path, colour="red"):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (8, 8), colour).save(path)
    return path


@pytest.mark.parametrize("name", ["corgi.preview.png", "corgi.png", "corgi.jpg", "corgi.jpeg", "corgi.webp"])
def test_a_picture_beside_the_weights(repository, tmp_path, name):
    write_kohya_lora(tmp_path / "loras" / "corgi.safetensors")
    picture = _picture(tmp_path / "loras" / name)
    _picture(tmp_path / "loras" / "other.png")  # someone else's
    assert repository.import_paths([tmp_path / "loras"]).ok
    assert repository.get("corgi").preview_path == str(picture)


def test_the_webui_preview_wins_over_a_plain_picture(repository, tmp_path):
    write_kohya_lora(tmp_path / "corgi.safetensors")
    _picture(tmp_path / "corgi.png")
    preview = _picture(tmp_path / "corgi.preview.png")
    repository.import_paths([tmp_path])
    assert repository.get("corgi").preview_path == str(preview)


def _info_with_image(model_file, url):
    info_path = write_civitai_info(model_file)
    info = json.loads(info_path.read_text())
    info["images"] = [{"url": url, "nsfw": "None", "width": 512, "height": 768}, {"url": "second.png"}]
    info_path.write_text(json.dumps(info))
    return info_path


def test_the_first_image_of_a_civitai_info_when_it_is_on_disk(repository, tmp_path):
    model = write_kohya_lora(tmp_path / "ghibli.safetensors")
    url = "https://image.civitai.com/xG1nkqKTMzGDvpLrqFT7WA/0a1b2c3d/width=512/120345.jpeg"
    _info_with_image(model, url)
    downloaded = _picture(tmp_path / "120345.jpeg")
    assert repository.import_paths([tmp_path]).ok
    assert repository.get("civitai-101").preview_path == str(downloaded)


def test_a_civitai_image_that_is_only_a_url_is_not_fetched(repository, tmp_path):
    model = write_kohya_lora(tmp_path / "ghibli.safetensors")
    _info_with_image(model, "https://image.civitai.com/x/never-downloaded.png")
    assert repository.import_paths([tmp_path]).ok
    assert repository.get("civitai-101").preview_path is None


def test_a_relative_civitai_image_beside_the_info(repository, tmp_path):
    model = write_kohya_lora(tmp_path / "ghibli.safetensors")
    _info_with_image(model, "images/first.webp")
    first = _picture(tmp_path / "images" / "first.webp")
    repository.import_paths([tmp_path])
    assert repository.get("civitai-101").preview_path == str(first)


@pytest.mark.parametrize("url", ["../outside.png", "file:///{outside}", "file:../outside.png"])
def test_a_civitai_image_outside_the_folder_is_refused(repository, tmp_path, url):
    outside = _picture(tmp_path / "outside.png")
    model = write_kohya_lora(tmp_path / "repo" / "ghibli.safetensors")
    _info_with_image(model, url.format(outside=outside))
    report = repository.import_paths([tmp_path / "repo"])
    assert report.ok and repository.get("civitai-101").preview_path is None


def test_a_preview_link_out_of_the_folder_is_passed_over(repository, tmp_path):
    outside = _picture(tmp_path / "private" / "me.png")
    write_kohya_lora(tmp_path / "repo" / "corgi.safetensors")
    (tmp_path / "repo" / "corgi.preview.png").symlink_to(outside)
    fallback = _picture(tmp_path / "repo" / "corgi.webp")
    report = repository.import_paths([tmp_path / "repo"])
    assert report.count("imported") == 1  # the link itself is reported, and the rest imports
    (refused,) = [o for o in report.outcomes if o.status == "error"]
    assert refused.path.endswith("corgi.preview.png") and "outside the imported folder" in refused.message
    assert repository.get("corgi").preview_path == str(fallback)


def test_a_cards_own_preview_comes_first(repository, tmp_path):
    write_kohya_lora(tmp_path / "bear.safetensors")
    _picture(tmp_path / "bear.preview.png")
    chosen = _picture(tmp_path / "shots" / "chosen.png")
    write_card(tmp_path, "bear-card", weights="bear.safetensors", preview="shots/chosen.png")
    repository.import_paths([tmp_path])
    assert repository.get("bear-card").preview_path == str(chosen)


def test_a_card_without_a_preview_gets_the_picture_beside_its_weights(repository, tmp_path):
    write_kohya_lora(tmp_path / "bear.safetensors")
    beside = _picture(tmp_path / "bear.preview.png")
    write_card(tmp_path, "bear-card", weights="bear.safetensors")
    repository.import_paths([tmp_path])
    assert repository.get("bear-card").preview_path == str(beside)


def test_the_placeholder_shows_initials_base_and_kind(tmp_path):
    assert initials("Mochi corgi") == "MC" and initials("ghibli") == "GH" and initials("__") == "?"
    path = placeholder_preview("Mochi corgi", "sd-1.5", "lora", tmp_path)
    image = Image.open(path)
    assert image.size == (SIDE, SIDE) and len(image.getcolors(SIDE * SIDE)) > 2  # text drawn on the colour
    assert placeholder_preview("Mochi corgi", "sd-1.5", "lora", tmp_path) == path  # drawn once
    assert placeholder_preview("Mochi corgi", "sdxl", "lora", tmp_path) != path
