"""Check-in on character and series models, on invented Civitai-shaped cards: the name a request opens with is the
model it means, scene words that name other models stay scene, and a series present without the character asked for
is an honest no match that says what the series has."""

import datetime as dt

import pytest
from factories import checkin_among_many, write_card

from personalq.checkin.agent import CheckIn
from personalq.repository.service import Repository

NOW = dt.datetime(2024, 3, 1, 12)
# id, name, family, version, triggers, tags, created
CARDS = [
    (
        "lyra",
        "Lyra Venn | Starfall Saga",
        "lyra",
        "v1.0",
        ["lyravenn"],
        ["character", "starfall saga", "girl"],
        "2023-05-02",
    ),
    ("vessa", "Vessa Quill", "vessa", "v2", ["vessaq"], ["character", "overcast", "girl"], "2023-06-02"),
    ("window-1", "Window Light v1", "window", "v1", ["winlight"], ["concept", "lighting"], "2023-03-01"),
    ("window-2", "Window Light v2", "window", "v2", ["winlight"], ["concept", "lighting"], "2023-04-01"),
    ("mountain", "Mountain Vista", "mountain", "v1", ["mtvista"], ["background", "landscape"], "2023-02-01"),
    ("umbrella", "Paper Umbrella", "umbrella", "v1", ["pumbrella"], ["concept", "props"], "2023-02-03"),
    # a tag list: its identity tag, then what the training images wore
    (
        "tomas",
        "Tomas Reyes (Overcast)",
        "tomas",
        "v1",
        ["tomasr, red scarf, short hair"],
        ["character", "overcast", "boy"],
        "2023-01-01",
    ),
    ("hoshi", "Kirameki no Hoshi", "hoshi", "v1", ["kirahoshi"], ["character"], "2023-02-02"),
    ("hoshi-alt", "Hoshi Alt", "hoshialt", "v1", ["hoshialt"], ["character"], "2023-02-03"),
    ("zombies", "Zombies Horde", "zombies", "v1", ["zhorde"], ["concept"], "2023-02-04"),
    ("mochi", "Mochi Tanaka (Harbor Days)", "mochi", "v1", ["mochit"], ["character", "harbor days"], "2023-02-05"),
    ("bran-a", "Brannon", "brannon", "V1", ["brannon_a"], ["character"], "2023-02-06"),
    ("bran-b", "Brannon Vale / Ember Coast", "brannonvale", "v1.0", ["brannon vale"], ["character"], "2023-03-06"),
    ("nilla-1", "Nilla Brook v1", "nilla", "v1", ["nillab"], ["character"], "2022-10-01"),
    ("nilla-2", "Nilla Brook v2", "nilla", "v2", ["nillab"], ["character"], "2023-03-01"),
    ("nilla-3", "Nilla Brook v3", "nilla", "v3", ["nillab"], ["character"], "2023-05-01"),
    ("ren-a", "Ren Amari", "rena", "v1", ["renamari"], ["character", "gym leader", "microphone"], "2023-04-01"),
    ("ren-b", "Ren Amari | Blue Coast", "renb", "v1", ["ren_amari"], ["character"], "2023-04-02"),
    ("dusk", "Dusk Glow LoRA", "dusk", "v1", ["duskglow"], ["lighting"], "2023-04-03"),
    ("becher", "Becher", "becher", "v1", ["bechr"], ["photography"], "2023-04-04"),
    ("kit-1", "Kit Tanaka v1", "kit", "v1", ["kitt"], ["character"], "2023-03-01"),
    ("kit-2", "Kit Tanaka v2", "kit", "v2", ["kitt"], ["character"], "2023-05-01"),
    ("nobi", "Nobi Character LoRA (Little Mage Nobi)", "nobi", "v1", ["nobichr"], ["character"], "2023-04-07"),
    ("monna", "Monna Character LoRA (Little Mage Nobi)", "monna", "v1", ["monnachr"], ["character"], "2023-04-08"),
    ("wren", "Wren - Over-Under", "wren", "v1", ["wrenou"], ["character"], "2023-04-06"),
    ("tomas-mom", "Tomas's Mom V2-6", "tomasmom", "V2-6", ["tomasmom_v2"], ["character", "cartoon"], "2023-01-02"),
    ("whiskers", "Mr. Whiskers", "whiskers", "v1", ["mrwhisk"], ["character", "cat"], "2023-01-03"),
    ("jiro", "Jiro Max", "jiro", "v1", ["jiromax"], ["character"], "2023-01-06"),
    ("robe", "Wool Robe", "robe", "v1", ["woolrb"], ["clothing"], "2023-01-09"),
    ("yuling-lora", "Yuling | 2in1 LoRA & LoCon", "yuling", "v1.0", ["yuling"], ["character"], "2023-01-07"),
    ("yuling-locon", "Yuling | 2in1 LoRA & LoCon", "yuling", "V1.0_LoCon", ["yuling"], ["character"], "2023-01-08"),
    ("eldritch", "Lovecraft Horror", "eldritch", "v1", ["lvcraft"], ["horror"], "2023-01-04"),
    # a name that is another language's function word ("dan": Indonesian "and"), and a model of its other word
    ("dan", "Dan Hollow | Ember Coast", "danhollow", "v1", ["danhllw"], ["character"], "2023-01-10"),
    ("hollow", "Hollow Style", "hollowstyle", "v1", ["hllwstyle"], ["style"], "2023-01-11"),
    # a concept whose name glosses itself in brackets
    ("tired", "Tired Eyes (dark circles)", "tired", "v1", ["tiredeyes"], ["concept"], "2023-01-12"),
    ("harbor", "Taiwan Harbor Boats", "harbor", "v1", ["twboats"], ["concept"], "2023-01-05"),
    (
        "sakuya",
        "Sakuya 咲夜 / Moon Garden",
        "sakuya",
        "v1",
        ["skya"],
        ["character", "moon garden", "月之庭"],
        "2023-04-05",
    ),
    # three girls called Akiro; two cards give her first name only
    ("akiro", "Akiro Bunny Girl (Harbor Days)", "akiro", "v1", ["akiro bunny"], ["character"], "2023-04-10"),
    ("akiro-maid", "Akiro Maid Outfit (Ember Coast)", "akiromaid", "v1", ["akiromaid"], ["character"], "2023-04-11"),
    ("akiro-t", "Akiro Tsune", "akirot", "v1", ["akirotsune"], ["character"], "2023-04-12"),
    # one girl by two makers: one card names her in English, the other in Chinese, with her name in tags and trigger
    ("nika-a", "Nika / ニカ (Glass Orchard)", "nikaa", "v3", ["nika", "1girl", "halo"], ["character"], "2023-02-11"),
    (
        "nika-b",
        "琉璃果园-妮卡 ニカ（Glass Orcharda）",
        "nikab",
        "Nika:v1.0",
        ["nika", "halo"],
        ["character", "nika", "glass orchard"],
        "2023-02-15",
    ),
]

CREATORS = {
    "tomas": "inkwright",
    "zombies": "inkwright",
    "mochi": "h_kirin",
    "hoshi-alt": "h_kirin",
    "ren-a": "kozue_k",
    "ren-b": "tidewright",
}

DESCRIPTIONS = {
    "kit-1": "Mochi's little sister Kit.",
    "kit-2": "Mochi's little sister Kit, retrained.",
    "nika-a": "Nika of Glass Orchard. This is a very old LoRA; use any of the tags.",
}


@pytest.fixture
def checkin(settings, tmp_path):
    for cid, name, family, version, triggers, tags, created in CARDS:
        write_card(
            tmp_path / "cards",
            cid,
            name=name,
            family=family,
            version=version,
            triggers=triggers,
            tags=tags,
            subjects=[],
            styles=[],
            created_at=created,
            creator=CREATORS.get(cid, "someone"),
            description=DESCRIPTIONS.get(cid, ""),
        )
    repository = Repository(settings)
    assert repository.import_paths([tmp_path / "cards"]).ok
    return CheckIn(repository)


@pytest.mark.parametrize(
    "request_text, expected",
    [
        ("vessa standing by a window", "vessa"),  # "window" names a concept model, but the request opens with Vessa
        ("lyra venn holding a paper umbrella in the rain", "lyra"),
        ("vessa quill walking past a mountain vista at dawn", "vessa"),
    ],
)
def test_scene_words_that_name_another_model_stay_scene(checkin, request_text, expected):
    result = checkin.ask(request_text, NOW)
    assert (result.status, result.checkpoint_id) == ("selected", expected)


def test_a_series_present_without_the_character_is_no_match_that_offers_the_series(checkin):
    result = checkin.ask("korvin from starfall saga reading in a library", NOW)
    assert result.status == "no_match"
    assert "from starfall saga there is Lyra Venn | Starfall Saga" in result.reason
    assert [a.checkpoint_id for a in result.alternatives] == ["lyra"]


@pytest.mark.parametrize(
    "request_text",
    [
        # a clause of the picture spells a model whole ("window light", "mountain vista"): the request asked for a
        # name, and said where from
        "korvin from starfall saga, window light, a rainy street",
        "korvin from starfall saga next to the harbor, mountain vista at dusk",
    ],
)
def test_a_name_said_with_its_series_is_who_is_asked_whatever_a_clause_spells(checkin, request_text):
    result = checkin.ask(request_text, NOW)
    assert result.status == "no_match"
    assert result.reason == "No korvin in the repository; from starfall saga there is Lyra Venn | Starfall Saga."


def test_an_answer_that_picks_a_model_leaves_its_version_to_what_the_request_said(settings, tmp_path):
    # "someone from harbor days in her witch uniform" -> "mochi": the request's words pick her witch version
    cards = [
        dict(card_id=f"{who}-{outfit}", name=f"{who.title()} Tanaka (Harbor Days)", family=who, version=label)
        for who in ("mochi", "suzu")
        for outfit, label in (("casual", "Casual Outfit"), ("witch", "Witch Outfit"))
    ]
    among = checkin_among_many(settings, tmp_path / "cards", cards)
    first = among.ask("someone from harbor days in her witch apprentice uniform, flying over the town", NOW)
    assert first.status == "clarify"
    assert among.answer(first.session, "mochi").checkpoint_id == "mochi-witch"


def test_another_languages_function_word_in_an_english_request_is_a_name(checkin):
    result = checkin.ask("dan hollow lora pls. dan walking home in the rain", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "dan")


@pytest.mark.parametrize(
    "request_text, expected, prompt",
    [
        # "stp" is French "please", and names nothing
        ("nilla brook, la version v2 stp : elle lit dans un train", "nilla-2", "nillab, elle lit dans un train"),
        # "the old v1": an old version said with its number
        ("nilla brook, the old v1 — reading by a window", "nilla-1", "nillab, reading by a window"),
    ],
)
def test_a_version_said_with_please_or_old_and_the_prompt_it_leaves(checkin, request_text, expected, prompt):
    result = checkin.ask(request_text, NOW)
    assert (result.status, result.checkpoint_id, result.prompt) == ("selected", expected, prompt)


def test_a_title_a_name_glosses_in_brackets_is_the_picture_when_listed(checkin):
    # "dark circles" is the gloss inside "Tired Eyes (dark circles)": listed after the scene it is the picture's
    result = checkin.ask("vessa quill at her desk at night, dark circles", NOW)
    assert [c.checkpoint_id for c in result.checkpoints] == ["vessa"]


def test_an_opening_name_no_card_has_beats_a_clause_a_model_spells(checkin):
    # "zarvonel" is in no card and no English word: a name we lack, not the "window light" concept of the picture
    result = checkin.ask("zarvonel on a throne in a dark hall, window light, rain", NOW)
    assert result.status == "no_match"
    assert "zarvonel" in result.reason


def test_a_character_of_another_series_is_not_the_one_meant(checkin):
    # Vessa is from Overcast: "vessa from starfall saga" names a Vessa the repository does not have
    assert checkin.ask("vessa from starfall saga on a rooftop", NOW).status == "no_match"
    assert checkin.ask("vessa from overcast on a rooftop", NOW).checkpoint_id == "vessa"


def test_a_name_no_card_has_is_no_match_whatever_the_scene_names(checkin):
    result = checkin.ask("korvin training on a mountain vista", NOW)
    assert result.status == "no_match"


def test_a_role_from_a_series_is_its_character(checkin):
    result = checkin.ask("the girl from starfall saga sitting on a train", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "lyra")


def test_a_request_that_opens_with_the_picture_still_finds_the_model_named_later(checkin):
    result = checkin.ask("a lighthouse keeper on a stormy night, mountain vista", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "mountain")


@pytest.mark.parametrize(
    "request_text, expected",
    [
        # a Japanese "no" between two words of a name rules nothing out
        ("kirameki no hoshi giving a speech to a crowd", "hoshi"),
        # "by" before a word no creator has is the picture's
        ("vessa quill surrounded by zombies, eating a potato", "vessa"),
        # a season said of the picture is no date of the model
        ("nilla brook v1 walking down a paris street in autumn", "nilla-1"),
        # "pls" after a version is no part of the name
        ("nilla brook v3 pls, girl holding a paper lantern", "nilla-3"),
        # the n-th version in other languages, and a kind word followed by "de" and the name
        ("la segunda versión del lora de nilla brook, regando flores en el pueblo", "nilla-2"),
        ("usa el lora de vessa quill, tirando con arco en el bosque", "vessa"),
        # a kind word in another case ("с лорой": with the lora) names the model after it
        ("нарисуй с лорой vessa: девушка в лесу", "vessa"),
        ("nilla brook第二版，在演唱会上唱歌", "nilla-2"),
    ],
)
def test_names_versions_and_scenes_read_across_languages(checkin, request_text, expected):
    result = checkin.ask(request_text, NOW)
    assert (result.status, result.checkpoint_id) == ("selected", expected)


@pytest.mark.parametrize(
    "request_text, expected, prompt",
    [
        # "from" in other languages: the series, not the name, and neither stays in the prompt
        ("dessine tomas reyes des overcast sur une plage", "tomas", "a tomasr sur une plage"),
        ("Tomas Reyes aus Overcast am Strand, bitte mit der LoRA", "tomas", "a tomasr am Strand"),
        ("gambar tomas reyes dari overcast di pantai pakai lora", "tomas", "a tomasr di pantai"),
        ("la lora de tomas reyes de overcast en la playa al atardecer", "tomas", "a tomasr en la playa al atardecer"),
        # the newest and the first in other languages
        ("nilla brook, la versión más reciente, en un jardín", "nilla-3", "nillab, en un jardín"),
        ("nilla brook, la primera versión, en un tejado", "nilla-1", "nillab, en un tejado"),
        # the name before "in the version" ("na versão"), in Portuguese
        ("usa o lora nilla brook na versão 2, uma menina sorrindo", "nilla-2", "nillab, uma menina sorrindo"),
        # the n-th version in German, Russian, Indonesian
        ("nilla brook, die zweite Version, im Garten", "nilla-2", "nillab, im Garten"),
        ("nilla brook, вторая версия: девушка в саду", "nilla-2", "nillab, девушка в саду"),
        ("nilla brook versi 3 dong, perempuan di taman", "nilla-3", "nillab, perempuan di taman"),
        # a name spelt in Cyrillic from its English sound
        ("Джиро Макс на крыше ночью", "jiro", "a jiromax на крыше ночью"),
    ],
)
def test_requests_written_in_other_languages(checkin, request_text, expected, prompt):
    result = checkin.ask(request_text, NOW)
    assert (result.status, result.checkpoint_id, result.prompt) == ("selected", expected, prompt)


def test_a_japanese_no_inside_a_name_is_no_preposition(checkin):
    # "no" and "na" are Portuguese prepositions, and words of Japanese names
    result = checkin.ask("kirameki no hoshi playing guitar in a music store", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "hoshi")


def test_a_creator_said_is_one_the_model_must_have(checkin):
    assert checkin.ask("inkwright's tomas reyes in a cafe", NOW).checkpoint_id == "tomas"
    mismatch = checkin.ask("inkwright's vessa quill on a rooftop", NOW)
    assert (mismatch.status, mismatch.reason) == (
        "no_match",
        "Close candidates exist, but none of them is by inkwright.",
    )
    assert checkin.ask("vessa quill by inkwright, on a rooftop", NOW).status == "no_match"


def test_a_name_only_a_description_mentions_is_no_model_of_it(checkin, tmp_path):
    # "korvin" is in no card's name; a scene word naming another model does not stand in for him
    assert checkin.ask("korvin training on a mountain vista", NOW).status == "no_match"


@pytest.mark.parametrize(
    "request_text, expected",
    [
        # the owner and a role describe; the name after them names ("harbor days" is Mochi's series)
        ("korvin's friend mochi tanaka cooking a giant dinner", ("selected", "mochi")),
        # "re:zero"-like names with punctuation inside stay one series
        ("korvin blake from harbor:days standing in a store", ("no_match", None)),
        ("mochi tanaka from harbor:days standing in a store", ("selected", "mochi")),
    ],
)
def test_owners_roles_and_punctuated_series(checkin, request_text, expected):
    result = checkin.ask(request_text, NOW)
    assert (result.status, result.checkpoint_id) == expected


def test_one_character_by_two_creators_is_a_question(checkin):
    # "Brannon" spells one model's name whole, but the other is Brannon too: which is meant is for the person
    result = checkin.ask("brannon walking in the rain", NOW)
    assert result.status == "clarify"
    assert sorted(i for o in result.options for i in o.checkpoint_ids) == ["bran-a", "bran-b"]


def test_a_creator_handle_with_underscores_is_one_maker(checkin):
    made = checkin.ask("h_kirin's mochi tanaka, reading on a train", NOW)
    assert (made.status, made.checkpoint_id, made.prompt) == ("selected", "mochi", "mochit, reading on a train")
    other = checkin.ask("h_kirin's vessa quill lora, sleeping on a leaf", NOW)
    assert (other.status, other.reason) == ("no_match", "Close candidates exist, but none of them is by h_kirin.")


def test_the_creator_one_is_who_made_it(checkin):
    assert checkin.ask("ren amari at the beach", NOW).status == "clarify"  # two creators' Ren Amari
    # a scene word one of them is tagged with does not tell them apart
    assert checkin.ask("ren amari singing into a microphone at her gym on stream", NOW).status == "clarify"
    # nor do they when a version is said, in a clause of their own
    assert checkin.ask("ren amari v1, singing into a microphone, gym leader outfit", NOW).status == "clarify"
    # said before the picture begins, the same words pick one
    assert checkin.ask("ren amari, the gym leader one, at the beach", NOW).checkpoint_id == "ren-a"
    result = checkin.ask("ren amari (the kozue_k one) at the beach", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "ren-a")
    assert result.prompt == "a renamari at the beach"


def test_what_a_description_says_of_any_model_is_no_evidence(checkin):
    result = checkin.ask("the lora that makes everything look like zombies, a ruined mall", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "zombies")


def test_a_misspelt_name_never_stands_for_a_kind_word(checkin):
    result = checkin.ask("lowra lora, dark moody portrait by candlelight", NOW)
    assert result.status == "no_match"


def test_a_possessive_that_ends_its_clause_is_a_place_not_an_owner(checkin):
    # "mochi" names a model, but "at a mochi's" is where the picture is, not whose model
    result = checkin.ask("vessa quill eating at a mochi's", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "vessa")
    # after a place's preposition it says where the picture is
    result = checkin.ask("vessa quill sitting on mochi's porch", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "vessa")


def test_one_letter_changed_in_a_name_is_a_typo_only_when_it_starts_the_same(checkin):
    assert checkin.ask("windaw light v2 over a bed", NOW).checkpoint_id == "window-2"
    assert checkin.ask("my escher lora, endless stairs", NOW).status == "no_match"
    # a longer word that differs in its first letter is another word ("hovercraft", "lovecraft")
    assert checkin.ask("hovercraft lora, a rescue boat skimming over a flood", NOW).status == "no_match"
    # a letter dropped from a five-letter word leaves another word ("kitty" is not Kit's "kitt"), but for a plural
    assert checkin.ask("kitty lora, curled up on a sofa", NOW).status == "no_match"
    assert checkin.ask("the wool robes lora, a monk in the snow", NOW).checkpoint_id == "robe"


def test_a_name_we_lack_is_no_match_whatever_the_scene_words_find(checkin):
    # rare words the request opens with, that no card is called by: not a concept LoRA the scene's words find
    result = checkin.ask("korra sato beyond the window light, a mountain in the distance", NOW)
    assert result.status == "no_match"


def test_a_role_from_a_series_beats_a_clause_a_name_spells(checkin):
    # "mountain vista" is a clause of the picture that a background LoRA's name spells; the request asks for anyone
    # from Overcast
    result = checkin.ask("one of the overcast characters at a bus stop, mountain vista, rain", NOW)
    assert result.status == "clarify"
    assert sorted(o.label for o in result.options) == ["Tomas Reyes (Overcast)", "Vessa Quill"]


def test_a_name_the_request_opens_with_beats_a_clause_a_trigger_spells(checkin):
    # "lighting" is a clause of the picture that a concept's tag spells; the request opens with Vessa
    result = checkin.ask("vessa quill floating over a castle, lighting, her hair in the wind", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "vessa")


def test_a_name_ending_in_ing_that_is_a_clause_of_its_own_and_its_locon_version(checkin):
    # "yuling," is a name, not a verb; "locon" tells the versions apart though the model's name says it too
    result = checkin.ask("yuling, the locon version - dashing across the rooftops at night", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "yuling-locon")


def test_a_possessive_after_a_place_and_the_is_where(checkin):
    # "at the mochi's counter" is where the picture is, not Mochi's model
    result = checkin.ask("vessa quill, the one from june - as a clerk at the mochi's counter", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "vessa")


def test_a_word_made_from_a_name_finds_it(checkin):
    result = checkin.ask("the taiwanese harbor boats lora, fishing boats at dawn", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "harbor")


@pytest.mark.parametrize(
    "request_text, expected, prompt",
    [
        # the words a request opens with before it names anyone are no name, and leave the prompt
        (
            "ok so i want tomas's mom baking bread in a sunny kitchen",
            "tomas-mom",
            "a tomasmom_v2 baking bread in a sunny kitchen",
        ),
        # "she's" is "she is", not an owner whose words name a model
        (
            "I'd like lyra venn from starfall saga on a cliff, her cape floating like she's flying",
            "lyra",
            "a lyravenn on a cliff, her cape floating like she's flying",
        ),
        # a title's period ends nothing: "mr. whiskers" is one name
        ("mr. whiskers napping on a windowsill", "whiskers", "a mrwhisk napping on a windowsill"),
    ],
)
def test_how_a_request_opens_does_not_name(checkin, request_text, expected, prompt):
    result = checkin.ask(request_text, NOW)
    assert (result.status, result.checkpoint_id, result.prompt) == ("selected", expected, prompt)


@pytest.mark.parametrize(
    "request_text, expected",
    [
        # "<series>的<name>" / "<series>の<name>" is the name and where it is from, each found on its own
        ("月之庭的咲夜，在花园里喝茶", ("selected", "sakuya")),
        # a series the repository has without the name is an honest no match
        ("月之庭的芙宁娜，在花园里喝茶", ("no_match", None)),
        # a series no card has says nothing of who: the name alone decides
        ("チェンソーマンの咲夜、雪の中で笑ってる", ("selected", "sakuya")),
        # a version written against the name with no space leaves the name whole
        ("咲夜第一版，在花园里喝茶", ("selected", "sakuya")),
    ],
)
def test_a_series_and_name_joined_by_a_particle(checkin, request_text, expected):
    result = checkin.ask(request_text, NOW)
    assert (result.status, result.checkpoint_id) == expected
    if result.status == "no_match":
        assert "from 月之庭 there is Sakuya" in result.reason


def test_a_series_no_card_has_offers_nothing_from_it(checkin):
    """ "月之花" shares a character pair with "月之庭" only: the honest no match lists no series' models, and says
    the name as written, not its pairs."""
    result = checkin.ask("月之花的芙宁娜，在花园里喝茶", NOW)
    assert result.status == "no_match"
    assert "there is" not in result.reason and "芙宁娜" in result.reason and "芙宁 宁娜" not in result.reason


def test_a_name_from_a_series_asked_in_vietnamese(checkin):
    """ "có lora X của Y không?" is "is there a lora of X from Y?": the kind word leads into the name and "của" into
    the series, so both of her models fit and Check-in asks, as it does in English."""
    for request_text in (
        "có lora nika của glass orchard không? cô bé đọc sách trong thư viện",
        "nika from glass orchard reading in a library",
    ):
        result = checkin.ask(request_text, NOW)
        assert result.status == "clarify", request_text
        assert sorted(i for o in result.options for i in o.checkpoint_ids) == ["nika-a", "nika-b"]


@pytest.mark.parametrize(
    "request_text, expected",
    [
        # a role from a series: the series' models whose cards say the role's words
        ("the boy from overcast reading a map", ("selected", "tomas")),
        # a role no card says: every model of the series is a question
        ("the singer from overcast on a stage", ("clarify", None)),
        # a title of words that open scenes ("over", "under") is still the series when a name spells it whole
        ("the girl from over under skating on a lake", ("selected", "wren")),
        # a bare phrase ending in a role is a name ("beast boy"): one the series lacks is an honest no match
        ("sky knight from starfall saga on a train", ("no_match", None)),
        ("the knight from starfall saga on a train", ("selected", "lyra")),
        # the main one is the one the title is named after; any other is a question
        ("the main mage from little mage nobi in a dark castle", ("selected", "nobi")),
        ("the mage from little mage nobi in a dark castle", ("clarify", None)),
    ],
)
def test_a_role_from_a_series_is_one_of_its_models(checkin, request_text, expected):
    result = checkin.ask(request_text, NOW)
    assert (result.status, result.checkpoint_id) == expected
    if request_text.startswith("the singer"):
        assert sorted(i for o in result.options for i in o.checkpoint_ids) == ["tomas", "vessa"]


@pytest.mark.parametrize(
    "request_text, expected",
    [
        # anyone of a series: every model of it is a question that names the models
        ("someone from overcast sitting on a bench", ("clarify", None)),
        ("a random overcast character at a bus stop", ("clarify", None)),
        # a series with one model is that model
        ("somebody from starfall saga reading a map", ("selected", "lyra")),
        # a series no card has, its title opening with a verb: an honest no match that says so
        ("someone from breaking waves on a beach", ("no_match", None)),
        # anything from a series with one model; a name said after the series picks among its models
        ("got anything from starfall saga? a girl reading a map", ("selected", "lyra")),
        ("someone from overcast: tomas, reading a map on a bench", ("selected", "tomas")),
        # words of a tag list's outfit in the scene say nothing of who ("her red scarf")
        ("someone from overcast, her red scarf blowing in the wind", ("clarify", None)),
        # one of a group said in the plural is any of them
        ("one of the overcast characters at a bus stop", ("clarify", None)),
        # "something" from no series is no one: a description of the model
        ("something that draws mountain vistas, a valley at dawn", ("selected", "mountain")),
    ],
)
def test_anyone_from_a_series_is_one_of_its_models(checkin, request_text, expected):
    result = checkin.ask(request_text, NOW)
    assert (result.status, result.checkpoint_id) == expected
    if result.status == "clarify":
        assert sorted(o.label for o in result.options) == ["Tomas Reyes (Overcast)", "Vessa Quill"]
        assert checkin.answer(result.session, "tomas").checkpoint_id == "tomas"
    if result.status == "no_match":
        assert result.reason == "No checkpoint from breaking waves in the repository."


@pytest.mark.parametrize(
    "request_text, expected",
    [
        # a role owned by a series is someone of that series
        ("starfall saga's girl reading a map", ("selected", "lyra")),
        # a relation of a name, found where a card's description says it, with the version asked for
        ("mochi's little sister, v2, at the market", ("selected", "kit-2")),
        # a relation is never the owner: only Vessa's own model has her name
        ("vessa's little brother reading a map", ("no_match", None)),
    ],
)
def test_a_role_owned_by_a_name_is_someone_of_its_story(checkin, request_text, expected):
    result = checkin.ask(request_text, NOW)
    assert (result.status, result.checkpoint_id) == expected


def test_a_request_listing_dozens_of_names_is_refused_before_any_search(checkin):
    # each name listed is a search of the repository: a flood of them is refused unread
    result = checkin.ask("vessa lora, lyra venn lora, " * 12 + "on a beach", NOW)
    assert (result.status, result.reason) == (
        "no_match",
        "That request lists 24 names; an image takes at most 5 checkpoints.",
    )


@pytest.mark.parametrize(
    "request_text, expected",
    [
        # a series said whole meets the acronym a card writes ("Mira (ToE)"), and is not only its style model's
        ("mira from tales of ember on a mossy stump", "mira"),
        # a series said by its initials meets the title a card writes ("my star academy" of Rana's tags)
        ("rana from msa swimming in a pond", "rana"),
        # a name said with "style" asks for the style model, not the same maker's character of that game
        ("lykonics botv style, a traveler gliding over a green field", "valley-style"),
        ("hero from botv on a cliff", "valley-hero"),
    ],
)
def test_series_by_initials_and_style_models(settings, tmp_path, request_text, expected):
    cards = [
        dict(card_id="mira", name="Mira (ToE)", tags=["character"]),
        dict(card_id="ember-style", name="Tales of Ember Style (Low Poly)", tags=["style"]),
        dict(card_id="rana", name="Asui Rana", tags=["character", "my star academy"]),
        dict(card_id="kiri", name="Kiri Hano - MSA", tags=["character"]),
        dict(card_id="valley-style", name="Breath of the Valley | Style LoRA", tags=["landscapes"], creator="lykonic"),
        dict(
            card_id="valley-hero",
            name="Hero (Blue Tunic - Breath of the Valley)",
            tags=["character"],
            creator="lykonic",
        ),
    ]
    result = checkin_among_many(settings, tmp_path / "cards", cards).ask(request_text, NOW)
    assert (result.status, result.checkpoint_id) == ("selected", expected)


@pytest.mark.parametrize(
    "request_text, expected",
    [
        # a story no card has, and the only Tomas is another story's ("Tomas Reyes (Overcast)"): not him
        ("tomas reyes from starlight city reading a map", ("no_match", None)),
        # a card that names no story of its own may still be the one meant
        ("vessa quill from starlight city reading a map", ("selected", "vessa")),
    ],
)
def test_a_name_from_a_story_no_card_has(checkin, request_text, expected):
    result = checkin.ask(request_text, NOW)
    assert (result.status, result.checkpoint_id) == expected


@pytest.mark.parametrize(
    "request_text, expected, kept",
    [
        # the words that ask, greetings of other languages included, name nothing
        ("gimme the mountain vista lora. a valley at dawn", "mountain", "a valley at dawn"),
        ("hola! quiero el lora de paper umbrella: una chica bajo la lluvia", "umbrella", "una chica bajo la lluvia"),
        # a year long before any checkpoint is the picture's
        ("can u do the vessa quill lora? a street in 1952", "vessa", "a street in 1952"),
        # the WebUI's emphasis of words of the picture stays as written, and names no model
        ("lyra venn on a bench, (pink hair:1.1)", "lyra", "(pink hair:1.1)"),
    ],
)
def test_asking_words_old_years_and_emphasis_are_no_names(checkin, request_text, expected, kept):
    result = checkin.ask(request_text, NOW)
    assert (result.status, result.checkpoint_id) == ("selected", expected)
    assert kept in result.prompt


def test_a_sign_off_after_a_series_is_no_part_of_it_and_one_of_them_is_the_picture(checkin):
    result = checkin.ask("someone from overcast pls, at a bus stop", NOW)
    assert sorted(o.label for o in result.options) == ["Tomas Reyes (Overcast)", "Vessa Quill"]
    result = checkin.ask("mountain vista lora, three hikers, one of them waving", NOW)
    assert result.checkpoint_id == "mountain" and "one of them waving" in result.prompt


@pytest.mark.parametrize(
    "request_text, expected",
    [
        # a surname no card has heard of: no Akiro we have is that one
        ("kurozawa akiro lora? on a theater stage under a spotlight", ("no_match", None)),
        ("akiro bunny girl on a theater stage under a spotlight", ("selected", "akiro")),
        # a misspelt word is no unheard name: two letters swapped, or nearly the same
        ("harbor dyas akiro bunny on a theater stage under a spotlight", ("selected", "akiro")),
        ("akiro bunnny girl on a theater stage under a spotlight", ("selected", "akiro")),
        # the series said first, then a name no card has: no Glass Orchard girl we have is her
        ("glass orchard korvina lora, reading on a train", ("no_match", None)),
        ("overcast korvina, reading in a library", ("no_match", None)),
    ],
)
def test_a_name_no_card_has_heard_of_is_someone_else(checkin, request_text, expected):
    result = checkin.ask(request_text, NOW)
    assert (result.status, result.checkpoint_id) == expected
