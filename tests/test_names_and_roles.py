"""Readable names from file names, and tags sorted into subjects, styles and concepts.

The tag lists below are copied as they are from Civitai models (model id and name given), so the rule is checked
on what people actually tag with; the test reads no shared data.
"""

import json

import pytest
from factories import write_civitai_info, write_kohya_lora

from personalq.repository.importers.naming import readable_name
from personalq.repository.importers.tag_roles import sort_tags
from personalq.repository.service import CheckpointFilter


@pytest.mark.parametrize(
    "stem, name, version",
    [
        ("mochi_corgi_v2", "Mochi corgi", "v2"),
        ("mochiCorgi_v1", "Mochi corgi", "v1"),
        ("ink_wash_painting-000010", "Ink wash painting", "epoch 10"),
        ("GhibliBackground_v2.0_offset", "Ghibli Background offset", "v2.0"),
        ("pixel-art-xl-v1.1", "Pixel art xl", "v1.1"),
        ("sks_dog_lora", "Sks dog", None),
        ("epiCRealism_naturalSinRC1VAE", "epiCRealism natural SinRC1VAE", None),  # its own capitals stay
    ],
)
def test_readable_names(stem, name, version):
    assert readable_name(stem) == (name, version)


# (Civitai model id, name, tags as published) -> (subjects, styles, concepts)
REAL_TAG_LISTS = [
    (
        26068,
        "[Lora] Guilty Gear Strive Style",
        ["character art", "style", "cellshading", "2d", "artstyle"],
        ([], ["guilty gear strive style", "character art", "cellshading", "2d"], ["style", "artstyle"]),
    ),
    (
        12597,
        "墨心 MoXin",
        ["character", "girl", "chinese", "chinese dress", "hanfu", "paintings", "artstyle"],
        (["girl", "chinese", "chinese dress", "hanfu"], ["paintings"], ["character", "artstyle"]),
    ),
    (
        44297,
        "DemonMawAI",
        ["horror", "style", "demon", "demonic"],
        (["horror", "demon", "demonic"], ["demonmawai"], ["style"]),  # a style model: its name is its style
    ),
    (45322, "Food Photography ", ["objects", "food"], (["objects", "food"], ["food photography"], [])),
    (19291, "Grillaz", ["animals", "gorilla", "animal"], (["animals", "gorilla", "animal"], [], [])),
    (
        9064,
        "Isometric TI sets",
        ["anime", "photorealistic", "concept", "textual inversion", "embedding", "isometric"],
        ([], ["anime", "photorealistic", "isometric"], ["concept", "textual inversion", "embedding"]),
    ),
    (
        25263,
        "Korean Warrior Hanbok - Korean Clothes",
        ["warrior", "korea clothes", "hanbok"],
        (["warrior", "korea clothes", "hanbok"], [], []),
    ),
]


@pytest.mark.parametrize("model_id, name, tags, expected", REAL_TAG_LISTS, ids=[str(r[0]) for r in REAL_TAG_LISTS])
def test_real_civitai_tag_lists_are_sorted_by_the_rule(model_id, name, tags, expected):
    roles = sort_tags(tags, name)
    assert (roles.subjects, roles.styles, roles.concepts) == expected


def test_kohya_caption_tags_give_a_style_lora_its_style(repository, tmp_path):
    frequencies = {"10_inkwash": {"inkwash": 30, "ink wash painting": 28, "mountain": 12, "1girl": 9, "pine tree": 7}}
    write_kohya_lora(
        tmp_path / "ink_wash_v2.safetensors",
        output_name="ink_wash_v2",
        ss_tag_frequency=json.dumps(frequencies),
    )
    assert repository.import_paths([tmp_path]).ok
    card = repository.get("ink-wash-v2")
    assert (card.name, card.version, card.triggers) == ("Ink wash", "v2", ["inkwash"])
    assert card.styles == ["ink wash painting"]
    assert card.subjects[:2] == ["mountain", "pine tree"] and "1girl" not in card.subjects
    assert [c.id for c in repository.list(CheckpointFilter(style="ink wash painting"))] == ["ink-wash-v2"]


def test_kohya_output_name_gives_name_and_version(repository, tmp_path):
    write_kohya_lora(tmp_path / "last.safetensors", output_name="mochi_corgi_v2")
    repository.import_paths([tmp_path])
    card = repository.get("last")
    assert (card.name, card.version, card.family) == ("Mochi corgi", "v2", "mochi-corgi")


def test_civitai_tags_fill_styles_and_subjects(repository, tmp_path):
    model = write_kohya_lora(tmp_path / "ghibli.safetensors")
    info_path = write_civitai_info(model)
    info = json.loads(info_path.read_text())
    info["model"]["tags"] = ["anime", "style", "landscape", "buildings", "background"]
    info_path.write_text(json.dumps(info))
    repository.import_paths([tmp_path])
    card = repository.get("civitai-101")
    assert card.styles == ["anime"] and card.subjects[:3] == ["landscape", "buildings", "background"]
    assert card.tags == ["anime", "style", "landscape", "buildings", "background"]  # every tag stays searchable
