"""The image prompt Check-in writes, asserted exactly, on invented Civitai-shaped cards: every word of the picture
kept, the words that only picked the model removed, the trigger once where the name stood (or in front), the
trained word that fits the request, a tag list's identity tag, WebUI syntax handled."""

import datetime as dt

import pytest
from factories import write_card

from personalq.checkin.agent import CheckIn
from personalq.repository.card import prompt_trigger
from personalq.repository.service import Repository

NOW = dt.datetime(2024, 3, 1, 12)
# id, name, family, version, triggers, tags, subjects, styles
CARDS = [
    ("statuary", "Marble Statuary", "statuary", "v1", ["statuary_bust"], ["concept"], ["statue"], ["sculpture"]),
    ("seasons", "Four Seasons Lake", "seasons", "v1", ["winter", "autumn", "summer", "spring"], ["landscape"], [], []),
    (
        "mirelle",
        "Mirelle Dawn | Ashen Crown",
        "mirelle",
        "v1",
        ["mirelle, 1girl, long hair, pleated skirt, hair ornament"],
        ["character", "ashen crown"],
        [],
        [],
    ),
    ("glimmer", "Glimmer Style", "glimmer", "v2", ["glimmer \\(style\\)", "<lora:glimmer_v2:1>"], ["style"], [], []),
    ("harbor-1", "Zenith Harbor v1", "harbor", "v1", ["zharbor"], ["background"], ["harbor"], []),
    ("harbor-2", "Zenith Harbor v2", "harbor", "v2", ["zharbor"], ["background"], ["harbor"], []),
    ("window", "Window Light", "window", "v1", ["winlight"], ["concept", "lighting"], [], []),
    ("vessa", "Vessa Quill", "vessa", "v2", ["vessaq"], ["character", "girl"], [], []),
    ("grainless", "Grainless Negative", "grainless", "v1", ["grainless"], ["negative"], [], []),
    ("otter", "Otter Pal", "otter", "v1", ["<otter-pal>"], ["animal"], ["otter"], ["watercolor"]),
]


@pytest.fixture(scope="module")
def checkin(tmp_path_factory):
    from personalq.config import load_settings

    root = tmp_path_factory.mktemp("prompts")
    for cid, name, family, version, triggers, tags, subjects, styles in CARDS:
        write_card(
            root / "cards",
            cid,
            name=name,
            family=family,
            version=version,
            triggers=triggers,
            tags=tags,
            subjects=subjects,
            styles=styles,
            created_at="2023-05-01",
        )
    repository = Repository(load_settings(home=root / "home"))
    assert repository.import_paths([root / "cards"]).ok
    return CheckIn(repository)


@pytest.mark.parametrize(
    "request_text, checkpoint, prompt",
    [
        # the scene's nouns stay whole; the trigger is never spliced into them
        (
            "a marble bust of an owl on a pedestal, statuary lora",
            "statuary",
            "a marble bust of an owl on a pedestal, statuary_bust",
        ),
        (
            "a harbor with the moon and red sails, zenith harbor v2",
            "harbor-2",
            "a harbor with the moon and red sails, zharbor",
        ),
        # the trained word the request says, not the card's first ("winter" for an autumn lake)
        ("four seasons lake lora, an autumn lake at dawn", "seasons", "an autumn lake at dawn"),
        # a tag-list trigger gives its identity tag, not the training images' outfit; "pls" is not the picture
        ("mirelle in a red raincoat at a bus stop pls", "mirelle", "a mirelle in a red raincoat at a bus stop"),
        ("mirelle dawn, the ashen crown one, dancing in a ballroom", "mirelle", "mirelle, dancing in a ballroom"),
        # a name the request opens with: the trigger stands where it stood
        ("vessa standing by a window", "vessa", "a vessaq standing by a window"),
        ("my otter on a frozen pond", "otter", "a <otter-pal> on a frozen pond"),
        # a style said with the name is how to draw it
        ("my watercolor otter on a frozen pond", "otter", "a watercolor <otter-pal> on a frozen pond"),
        # WebUI escapes in trained words are undone
        ("glimmer style lora, a fox in the snow", "glimmer", "glimmer (style), a fox in the snow"),
        # version talk and a negative embedding's placement are not the picture
        ("zenith harbor, the v2 version, fishing boats at dawn", "harbor-2", "zharbor, fishing boats at dawn"),
        ("portrait of a baker, put grainless in the negatives", "grainless", "a portrait of a baker, grainless"),
        # a kind word between words of a script without spaces, and version talk in other languages
        ("用grainless那个embedding画一个穿长裙的女孩", "grainless", "a grainless 那个画一个穿长裙的女孩"),
        ("zenith harbor v2, версия под anime - рыбацкие лодки", "harbor-2", "zharbor, рыбацкие лодки"),
        # a request's own WebUI tag names the model and leaves nothing half-cut
        ("<lora:glimmer_v2:0.8> a fox in the snow", "glimmer", "glimmer (style), a fox in the snow"),
        ("a fox in the snow <lora:Zenith Harbor v2:0.7>", "harbor-2", "a fox in the snow, zharbor"),
        # "one" that counts or stands for what is drawn stays; "my" of the picture stays; so do the person's own
        # last words, a negation that rules out no checkpoint, but not where the models are kept
        (
            "vessa holding one lantern, one cat at her feet",
            "vessa",
            "a vessaq holding one lantern, one cat at her feet",
        ),
        ("zenith harbor v2, a red one moored at the pier", "harbor-2", "zharbor, a red one moored at the pier"),
        ("vessa sketching my oc in a cafe", "vessa", "a vessaq sketching my oc in a cafe"),
        ("window light lora, a car with the headlights on", "window", "winlight, a car with the headlights on"),
        ("zenith harbor v2, a quay without boats", "harbor-2", "zharbor, a quay without boats"),
        ("vessa, a street without cars, the v2 one", "vessa", "vessaq, a street without cars"),
        ("mirelle (not vessa), dancing in a ballroom", "mirelle", "mirelle, dancing in a ballroom"),
        ("zenith harbor v2 from my collection, fishing boats at dawn", "harbor-2", "zharbor, fishing boats at dawn"),
        # a word after a version number that is not the version's label is the picture's
        ("zenith harbor v2 lighthouse", "harbor-2", "a zharbor lighthouse"),
        # a sentence of chat around the model's name says nothing of the picture
        (
            "ok so i have this idea. a fox in the snow at dusk. i think the glimmer style lora would work. the v2 one",
            "glimmer",
            "a fox in the snow at dusk. glimmer (style)",
        ),
        ("a fox in the snow. vessa, i guess. that's it", "vessa", "a fox in the snow. vessaq"),
        # the writer's own slot mark typed into a request is only a space
        ("zenith harbor v2, fishing \ue000boats at dawn", "harbor-2", "zharbor, fishing boats at dawn"),
    ],
)
def test_the_prompt_keeps_the_picture_and_puts_the_trigger_in_once(checkin, request_text, checkpoint, prompt):
    result = checkin.ask(request_text, NOW)
    assert (result.status, result.checkpoint_id, result.prompt) == ("selected", checkpoint, prompt)


@pytest.mark.parametrize(
    "trained, word",
    [
        ("hmmisaki, 1girl, long hair, symbol-shaped pupils", "hmmisaki"),
        ("1girl, cammyms, sf6, gloves", "cammyms"),
        ("sugimori ken \\(style\\)", "sugimori ken (style)"),
        ("<lora:hilda1-000010:1>", ""),
        (" <lora:qiyana>", "qiyana"),
        ("<lora:hilda1-000010:1> hilda", "hilda"),
        ("<otter-pal>", "<otter-pal>"),
    ],
)
def test_a_trained_word_as_a_prompt_takes_it(trained, word):
    assert prompt_trigger(trained) == word
