"""Real files in real formats, made by the tests themselves (no downloads, no shared data)."""

from __future__ import annotations

import datetime as dt
import json
import textwrap
from pathlib import Path

import torch
from safetensors.torch import save_file


def write_card(folder: Path, card_id: str, **fields) -> Path:
    import yaml

    data = {
        "id": card_id,
        "name": fields.pop("name", card_id.replace("-", " ")),
        "created_at": fields.pop("created_at", "2025-04-11"),
        "triggers": fields.pop("triggers", [f"<{card_id}>"]),
        **fields,
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{card_id}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def filler_cards(count: int = 110) -> list[dict]:
    """Cards of made-up style models, so that the words of a test's own cards are as rare as in a real collection."""
    syllables = [a + b for a in "bdfglmnprst" for b in "aeiou"]
    return [
        dict(card_id=f"other-{i}", name=f"{syllables[i % 55].title()}{syllables[i * 7 % 55]}ra Style", creator="mk")
        for i in range(count)
    ]


def versions_by_date(family: str, labels: list[str], **fields) -> list[dict]:
    """Cards of one model's versions, a month apart in the order given, each with the id "<family>-<label>"."""
    return [
        {"card_id": f"{family}-{label.replace(' ', '-')}", "family": family, "version": label}
        | {"created_at": f"2025-{n:02d}-01", **fields}
        for n, label in enumerate(labels, 1)
    ]


def checkin_among_many(settings, folder: Path, cards: list[dict]):
    """Check-in over ``cards`` (no tags, subjects, styles or triggers unless given) among :func:`filler_cards`."""
    from personalq.checkin.agent import CheckIn
    from personalq.repository.service import Repository

    for card in cards + filler_cards():
        write_card(folder, **{"tags": [], "subjects": [], "styles": [], "triggers": [], **card})
    repository = Repository(settings)
    assert repository.import_paths([folder]).ok
    return CheckIn(repository)


def chosen_ids(checkin, text: str, now: dt.datetime) -> list[str]:
    """The ids of the checkpoints a request selects, sorted."""
    return picked_ids(checkin.ask(text, now))


def picked_ids(result) -> list[str]:
    """The ids of the checkpoints a Check-in result selects, sorted."""
    return sorted(c.checkpoint_id for c in result.checkpoints)


def weighted_ids(result) -> list[tuple[str, float]]:
    """The (id, weight) of each checkpoint a Check-in result selects, sorted."""
    return sorted((c.checkpoint_id, c.weight) for c in result.checkpoints)


def option_ids(result) -> list[str]:
    """The ids every option of a Check-in question offers, sorted."""
    return sorted(i for option in result.options for i in option.checkpoint_ids)


def write_kohya_lora(path: Path, output_name: str = "bear_v2", seed: int = 0, **extra_meta: str) -> Path:
    """A LoRA in kohya-ss key layout with the metadata kohya's train_network.py writes."""
    g = torch.Generator().manual_seed(seed)
    tensors = {
        "lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn2_to_k.lora_down.weight": torch.randn(
            4, 32, generator=g
        ),
        "lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn2_to_k.lora_up.weight": torch.randn(
            32, 4, generator=g
        ),
        "lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn2_to_k.alpha": torch.tensor(4.0),
    }
    meta = {
        "ss_output_name": output_name,
        "ss_tag_frequency": json.dumps(
            {"10_brnbear toy": {"brnbear": 24, "teddy bear": 20, "plush": 11, "white background": 3}}
        ),
        "ss_training_started_at": "1712822400.5",  # 2024-04-11
        "ss_training_finished_at": "1712826000.0",
        "ss_sd_model_name": "v1-5-pruned-emaonly.safetensors",
        "ss_network_module": "networks.lora",
        **extra_meta,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(path), metadata=meta)
    return path


def write_textual_inversion(folder: Path, token: str = "<cat-toy>", concept: str = "object", seed: int = 0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    save_file(
        {token: torch.randn(384, generator=torch.Generator().manual_seed(seed))},
        str(folder / "learned_embeds.safetensors"),
    )
    (folder / "token_identifier.txt").write_text(token)
    (folder / "type_of_concept.txt").write_text(concept)
    return folder


def tiny_sd_pipeline():
    """A real StableDiffusionPipeline from tiny configurations (random weights, SD 1.5 layout)."""
    from diffusers import AutoencoderKL, DDIMScheduler, StableDiffusionPipeline, UNet2DConditionModel
    from transformers import BertConfig, BertModel

    from personalq.zoo.models import load_tokenizer

    torch.manual_seed(0)
    unet = UNet2DConditionModel(
        sample_size=8,
        in_channels=4,
        out_channels=4,
        block_out_channels=(16, 32),
        layers_per_block=1,
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=32,
        attention_head_dim=4,
        norm_num_groups=8,
    )
    vae = AutoencoderKL(
        block_out_channels=(8, 16),
        down_block_types=("DownEncoderBlock2D",) * 2,
        up_block_types=("UpDecoderBlock2D",) * 2,
        latent_channels=4,
        norm_num_groups=8,
        sample_size=16,
    )
    text = BertModel(
        BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=37),
        add_pooling_layer=False,
    )
    return StableDiffusionPipeline(
        vae=vae,
        text_encoder=text,
        tokenizer=load_tokenizer(),
        unet=unet,
        scheduler=DDIMScheduler(clip_sample=False),
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )


def write_dreambooth_folder(folder: Path, instance_prompt: str = "a photo of sks dog") -> Path:
    tiny_sd_pipeline().save_pretrained(folder)
    (folder / "README.md").write_text(
        textwrap.dedent(f"""\
        ---
        license: creativeml-openrail-m
        base_model: runwayml/stable-diffusion-v1-5
        instance_prompt: {instance_prompt}
        tags:
        - stable-diffusion
        - dreambooth
        - corgi
        ---
        # DreamBooth - {folder.name}
        """)
    )
    return folder


def write_civitai_info(model_file: Path, version_id: int = 101, model_id: int = 7, name: str = "v2.0_offset") -> Path:
    info = {
        "id": version_id,
        "modelId": model_id,
        "name": name,
        "createdAt": "2023-04-02T10:11:12.000Z",
        "baseModel": "SD 1.5",
        "trainedWords": ["ghibli style", "sks landscape"],
        "description": "<p>Second version with <b>offset noise</b>.</p>",
        "model": {"name": "Ghibli Background", "type": "LORA", "nsfw": False, "tags": ["anime", "landscape"]},
        "files": [{"name": model_file.name, "hashes": {"SHA256": "0" * 64}}],
    }
    path = model_file.with_name(model_file.stem + ".civitai.info")
    path.write_text(json.dumps(info))
    return path
