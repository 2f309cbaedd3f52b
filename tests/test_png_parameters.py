"""The WebUI's ``parameters`` PNG chunk: written so other tools read it, read back for reuse."""

from pathlib import Path

from PIL import Image

from personalq.serving.png_parameters import (
    ImageParameters,
    NetworkUse,
    parse_parameters,
    read_parameters,
    save_png,
)

WEBUI_TEXT = (
    "masterpiece, a corgi in the rain <lora:mochi_corgi_v2:0.8> <lora:ink_wash:-0.5>\n"
    "Negative prompt: blurry, lowres\n"
    "Steps: 28, Sampler: DPM++ 2M Karras, CFG scale: 6.5, Seed: 3141592653, Size: 512x768, Model hash: 6ce0161689, "
    'Model: v1-5-pruned-emaonly, Lora hashes: "mochi_corgi_v2: 0123456789, ink_wash: abcdefabcd", Version: v1.6.0'
)


def test_a_webui_parameters_chunk_is_read_field_by_field():
    parameters = parse_parameters(WEBUI_TEXT)
    assert parameters is not None
    assert parameters.prompt == "masterpiece, a corgi in the rain"
    assert parameters.negative_prompt == "blurry, lowres"
    assert (parameters.steps, parameters.sampler, parameters.cfg_scale) == (28, "DPM++ 2M Karras", 6.5)
    assert (parameters.seed, parameters.width, parameters.height) == (3141592653, 512, 768)
    assert (parameters.model, parameters.model_hash) == ("v1-5-pruned-emaonly", "6ce0161689")
    assert parameters.networks == [
        NetworkUse(name="mochi_corgi_v2", weight=0.8, hash="0123456789"),
        NetworkUse(name="ink_wash", weight=-0.5, hash="abcdefabcd"),
    ]


def test_an_image_written_here_carries_its_parameters_and_reads_back_the_same(tmp_path: Path):
    parameters = ImageParameters(
        prompt="a lighthouse keeper, mochicorgi",
        negative_prompt="",
        steps=20,
        sampler="Euler",
        cfg_scale=5,
        seed=7,
        width=512,
        height=512,
        model="sd15-standin",
        networks=[NetworkUse(name="mochi", weight=0.75), NetworkUse(name="watercolor", weight=1.0)],
    )
    path = save_png(Image.new("RGB", (8, 8)), tmp_path / "image.png", parameters)
    with Image.open(path) as image:
        text = image.info["parameters"]
    assert text.splitlines()[0] == "a lighthouse keeper, mochicorgi <lora:mochi:0.75> <lora:watercolor:1>"
    assert "Negative prompt" not in text  # the WebUI leaves the line out when there is none
    assert read_parameters(path) == parameters


def test_files_without_usable_parameters_read_as_none(tmp_path: Path):
    plain = tmp_path / "plain.png"
    Image.new("RGB", (4, 4)).save(plain)
    not_an_image = tmp_path / "notes.png"
    not_an_image.write_text("hello")
    assert read_parameters(plain) is None
    assert read_parameters(not_an_image) is None
    assert parse_parameters("just a prompt") is None
    assert parse_parameters("a prompt\nSteps: many, Seed: x") is None
