"""``personalq generate`` with several checkpoints: ``--lora ID[:WEIGHT]``, ``--negative``, ``--seed -1``, ``--size``,
what ``--json`` lists, and the WebUI ``parameters`` chunk the PNG carries.

Two kohya LoRAs for a tiny stand-in SD 1.5 base are imported with ``personalq repo import`` (so the cards carry the
weights' SHA-256 as the repository stores it), Check-in picks one from the request, and the options adjust the set.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from typer.testing import CliRunner

from personalq.cli import app
from personalq.cli.lora_option import LoraOption, LoraOptionError, parse_lora
from personalq.serving.checkpoints import load_base
from personalq.serving.png_parameters import NetworkUse, read_parameters
from personalq.standin import formats
from personalq.standin.bases import write_stand_in

COMMON = ["--steps", "2", "--size", "64x64", "--guidance", "4.5"]


def test_a_lora_entry_is_an_id_and_perhaps_a_weight():
    assert parse_lora("pixelfox-v1:0.7") == LoraOption("pixelfox-v1", 0.7)
    assert parse_lora("pixelfox-v1") == LoraOption("pixelfox-v1", None)
    assert parse_lora("ink:wash:-0.5") == LoraOption("ink:wash", -0.5)  # ids may hold colons
    assert parse_lora("civitai:1234:v2") == LoraOption("civitai:1234:v2", None)
    with pytest.raises(LoraOptionError, match="from -2 to 2"):
        parse_lora("pixelfox-v1:3")


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> tuple[Path, dict[str, str], Path]:
    root = tmp_path_factory.mktemp("generate-cli")
    base = write_stand_in("sd15", root / "sd15-base", size="tiny", dtype=torch.float32)
    pipe = load_base(base)
    downloads = root / "downloads"
    # tags as captions had them; they also keep each header's length off a first byte of 0x80, which the
    # repository's header reader takes for a renamed pickle
    formats.write_kohya_lora(pipe, downloads / "pixelfox_v1.safetensors", trigger="pxlfox", tags=("fox",), seed=1)
    formats.write_kohya_lora(pipe, downloads / "claywork_v2.safetensors", trigger="clywrk", tags=("pottery",), seed=2)
    home = root / "home"
    env = {"PERSONALQ_BASE_MODELS": json.dumps({"sd-1.5": str(base)})}
    imported = CliRunner().invoke(app, ["repo", "import", str(downloads), "--home", str(home)], env=env)
    assert imported.exit_code == 0, imported.output
    return home, env, downloads


def generate(home, *args: str):
    folder, env, _ = home
    return CliRunner().invoke(app, ["generate", *args, "--home", str(folder)], env=env)


def printed(run) -> dict:
    assert run.exit_code == 0, run.output
    return json.loads(run.stdout.strip().splitlines()[-1])


def autov2(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:10]


@pytest.mark.slow
def test_loras_negative_and_a_drawn_seed_reach_the_image_and_its_parameters(home, tmp_path):
    _, _, downloads = home
    out = tmp_path / "lighthouse.png"
    run = generate(
        home,
        "a lighthouse with my pixelfox lora",
        "--lora", "claywork-v2:0.6",
        "--lora", "pixelfox-v1:0.8",
        "--negative", "blurry, lowres",
        "--seed", "-1",
        "--out", str(out),
        "--json",
        *COMMON,
    )  # fmt: skip
    result = printed(run)
    assert result["checkpoints"] == [
        {"checkpoint_id": "pixelfox-v1", "weight": 0.8},  # Check-in's pick, its weight set
        {"checkpoint_id": "claywork-v2", "weight": 0.6},  # added
    ]
    assert result["negative_prompt"] == "blurry, lowres" and 0 <= result["seed"] < 2**32
    assert "pxlfox" in result["prompt"] and "clywrk" in result["prompt"]  # the added one's trigger too

    parameters = read_parameters(out)
    assert parameters is not None
    assert (parameters.prompt, parameters.negative_prompt) == (result["prompt"], "blurry, lowres")
    assert (parameters.steps, parameters.cfg_scale, parameters.seed) == (2, 4.5, result["seed"])
    assert (parameters.width, parameters.height) == (64, 64)
    assert parameters.sampler == "PLMS"  # the stand-in's PNDMScheduler, by the WebUI's name
    assert parameters.model == "sd15-base"
    assert parameters.networks == [
        NetworkUse(name="pixelfox_v1", weight=0.8, hash=autov2(downloads / "pixelfox_v1.safetensors")),
        NetworkUse(name="claywork_v2", weight=0.6, hash=autov2(downloads / "claywork_v2.safetensors")),
    ]

    switched_off = tmp_path / "switched-off.png"  # the reported seed, the added LoRA at weight 0
    rerun = generate(
        home,
        "a lighthouse with my pixelfox lora",
        "--lora", "claywork-v2:0",
        "--lora", "pixelfox-v1:0.8",
        "--negative", "blurry, lowres",
        "--seed", str(result["seed"]),
        "--out", str(switched_off),
        *COMMON,
    )  # fmt: skip
    assert rerun.exit_code == 0, rerun.output
    assert f"seed: {result['seed']}" in rerun.stdout
    assert re.search(r"(?m)^checkpoint: claywork-v2 \(.*\) at weight 0$", rerun.stdout), rerun.stdout
    assert [n.name for n in read_parameters(switched_off).networks] == ["pixelfox_v1"]  # only what is in effect
    with Image.open(out) as first, Image.open(switched_off) as second:
        assert np.abs(np.asarray(first).astype(int) - np.asarray(second).astype(int)).mean() > 0.5


@pytest.mark.slow
def test_loras_named_when_check_in_finds_nothing_and_entries_it_refuses(home, tmp_path):
    out = tmp_path / "ramen.png"
    run = generate(
        home, "a bowl of ramen in watercolor", "--lora", "claywork-v2", "--out", str(out), "--json", *COMMON
    )
    result = printed(run)
    assert result["checkpoints"] == [{"checkpoint_id": "claywork-v2", "weight": 1.0}]
    assert "clywrk" in result["prompt"] and result["negative_prompt"] == "" and out.is_file()

    unknown = generate(home, "a lighthouse with my pixelfox lora", "--lora", "no-such-lora:0.5", *COMMON)
    assert unknown.exit_code == 1 and "no-such-lora: no such checkpoint" in unknown.output
    too_strong = generate(home, "a lighthouse with my pixelfox lora", "--lora", "claywork-v2:2.5", *COMMON)
    assert too_strong.exit_code == 1 and "from -2 to 2" in too_strong.output
