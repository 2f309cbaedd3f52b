"""A model asked for by a name its card gives only in passing: the other name its description introduces ("Midnight
(Nemuri Kayama)", "aka. Hoppou"), a series' initials with its number ("ffxiv", "7ds"), initials that some card also
writes whole ("ngnl" of "ngnl_jibril"); and a version ruled out by how its label is written ("the v1.0, not the
V01") or by the version a negation describes ("not the deprecated v1"). Every card and request here is invented for
the rule it pins."""

import datetime as dt

from factories import checkin_among_many, chosen_ids, option_ids, versions_by_date

from personalq.checkin.aliases import description_aliases
from personalq.checkin.titles import initials, may_be
from personalq.checkin.tokens import short_vowels

NOW = dt.datetime(2024, 3, 1, 12)

SERIES = [
    dict(
        card_id="nightshade",
        name="Nightshade [Crimson Academy] Character LoRA",
        tags=["character", "crimson academy"],
        triggers=["nightshadeca"],
        description="Nightshade (Veyra Kostin) from Crimson Academy. Trained on 80 screenshots.",
    ),
    dict(card_id="ca-rook", name="Rook Alder [Crimson Academy]", tags=["character", "crimson academy"]),
    dict(card_id="ca-style", name="Crimson Academy Anime Style", tags=["style", "crimson academy"]),
    dict(
        card_id="borealis",
        name="Borealis Character Lora (Frost Fleet)",
        tags=["character", "frost fleet"],
        triggers=["borealis"],
        description="Aka. Borrie, Northern Sovereign, etc. Samples at strength 1.",
    ),
    dict(card_id="ff-hull", name="Frost Fleet Hull Girl", tags=["character", "frost fleet"], triggers=["hullgirl"]),
    dict(card_id="cyra", name="Cyra (Star Saga XII) - LoRA - Realistic", tags=["character"], triggers=["cyra_ss"]),
    dict(card_id="lalafa", name="Lalafa [SSXII]", tags=["character"], triggers=["lalafa"]),
    dict(card_id="cyra-other", name="Cyra Vance (Moon Harbor)", tags=["character"], triggers=["cyravance"]),
    dict(card_id="elvira-9", name="Elvira Dane / Nine Broken Crowns", tags=["character"], triggers=["elviradane"]),
    dict(card_id="elvira-moon", name="Elvira (Moon Academy)", tags=["character"], triggers=["elviramoon"]),
    dict(card_id="tobi", name="Tobi LORA | No Rest No Glory", tags=["character"], triggers=["tobi"]),
    dict(card_id="kael", name="Kael No Rest No Glory", tags=["character", "no rest no glory"], triggers=["nrng_kael"]),
    dict(card_id="tobi-other", name="Tobi Marsh (Harbor Lights)", tags=["character"], triggers=["tobimarsh"]),
]


def test_the_other_name_a_description_gives_finds_the_model():
    """Only names count, and only beside a name the card already has: "(Concept LoRA)", "(Crimson Academy)" or
    "Northern Sovereign" (English words) is no one's other name."""
    called = {"nightshade", "nightshadeca"}
    assert description_aliases("Nightshade (Veyra Kostin) from Crimson Academy.", called) == ["Veyra Kostin"]
    assert description_aliases("Aka. Borrie, Northern Sovereign, etc. Samples", {"borealis"}) == ["Borrie"]
    assert description_aliases("OMGwowAngel (Wangel) from a game", {"wangel"}) == ["OMGwowAngel"]
    assert description_aliases("Hold Pose (Concept LoRA), Nightshade (Crimson Academy)", {"hold", "pose"}) == []


def test_a_character_asked_for_by_the_name_her_description_gives(settings, tmp_path):
    """ "veyra kostin from crimson academy": her model's description says Nightshade is Veyra Kostin, so it is hers,
    not a "no Veyra Kostin; from Crimson Academy there is ..."; likewise "borrie" of the "aka" list."""
    checkin = checkin_among_many(settings, tmp_path / "cards", SERIES)

    assert chosen_ids(checkin, "veyra kostin from crimson academy reading in a library", NOW) == ["nightshade"]
    assert chosen_ids(checkin, "borrie from frost fleet building a snowman", NOW) == ["borealis"]
    result = checkin.ask("mira sollen from crimson academy reading in a library", NOW)
    assert result.status == "no_match"


def test_a_series_by_its_initials_with_a_number_or_a_name_some_card_writes(settings, tmp_path):
    """ "ssxii" is "Star Saga XII" (so that Cyra, not the other Cyra or the Lalafa model that writes the acronym),
    "9bc" is "Nine Broken
    Crowns", and "nrng" is "No Rest No Glory" though a trigger writes "nrng_kael" whole."""
    assert {"ssxii", "ss12"} <= initials(["Cyra (Star Saga XII) - LoRA"])
    assert "9bc" in initials(["Elvira Dane / Nine Broken Crowns"])
    assert may_be("ffxiv") and may_be("7ds") and not may_be("12345") and not may_be("abcdefg")
    checkin = checkin_among_many(settings, tmp_path / "cards", SERIES)

    assert chosen_ids(checkin, "cyra ssxii lora, casting a spell in a misty forest", NOW) == ["cyra"]
    assert chosen_ids(checkin, "elvira from 9bc pouring ale in a tavern", NOW) == ["elvira-9"]
    assert chosen_ids(checkin, "tobi from nrng playing cards", NOW) == ["tobi"]


def test_a_version_ruled_out_as_its_label_writes_it_or_as_a_negation_describes_it(settings, tmp_path):
    """ "the v1.0, not the V01": both labels number 1, and the one written "V01" is ruled out. "not the deprecated
    v1": the description calls V1 deprecated, and the negation rules out v1, not every version the page describes."""
    cards = [
        dict(card_id="grin-a", name="Wolf Grin", family="grin-a", version="v1.0", tags=["concept"]),
        dict(card_id="grin-b", name="Wolf Grin", family="grin-b", version="V01", tags=["concept"]),
        *versions_by_date(
            "pebble",
            ["V1", "V2"],
            name="Pebble [Stone Hearts] Freefit LoRA",
            tags=["character"],
            triggers=["pebble_main"],
            description="Updated to my current standards. V1 is DEPRECATED. Use V2 instead.",
        ),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    assert chosen_ids(checkin, "wolf grin lora, the v1.0 not the V01, a noblewoman by candlelight", NOW) == ["grin-a"]
    wanted = "pebble stone hearts, not the deprecated v1. sitting on a rooftop"
    assert chosen_ids(checkin, wanted, NOW) == ["pebble-V2"]


def test_a_series_title_runs_on_over_words_that_would_open_the_scene(settings, tmp_path):
    """ "from dead or alive" is the series a card writes "DOA", and "tomo-chan is a girl" a title a card's name
    holds: "or" and "is" do not end them, and the prompt keeps only the scene. "whichever of her loras is newer"
    picks her newest version and is no part of the picture."""
    cards = [
        dict(card_id="ayane-a", name="DOA - Rhea", tags=["character"], triggers=["rhea"]),
        dict(card_id="ayane-b", name="DOA Rhea", tags=["character"], triggers=["1girl, rhea"]),
        dict(card_id="rhea-mj", name="Rhea (Mahjong Club)", tags=["character"], triggers=["rheamj"]),
        dict(card_id="doa-kas", name="DOA - Kasane", tags=["character"], triggers=["kasane"]),
        dict(card_id="walking-dead", name="Clementine [The Walking Dead]", tags=["character"], triggers=["clem"]),
        *versions_by_date(
            "misa", ["v0.5", "v1.2"], name="Gundo Misa | Tomo-kun is a girl!", tags=["character"], triggers=["gundo"]
        ),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("rhea from dead or alive, kunai in hand on a moonlit rooftop", NOW)
    assert result.status == "clarify"
    assert option_ids(result) == ["ayane-a", "ayane-b"]
    result = checkin.ask("misa from tomo-kun is a girl, whichever of her loras is newer. reading a paperback", NOW)
    assert [c.checkpoint_id for c in result.checkpoints] == ["misa-v1.2"]
    assert result.prompt == "gundo. reading a paperback"


def test_a_characters_outfit_word_does_not_make_her_model_a_namesake(settings, tmp_path):
    """ "open coat lora": the model called Open Coat; a character model whose trained words list "open coat" among
    her outfit is hers, not another Open Coat; a name among a character model's trained words still calls it (the
    Sakra model trained on her friend Tomiko too)."""
    cards = [
        dict(card_id="open-coat", name="Open Coat", tags=["clothing"], triggers=["opencoat"]),
        dict(
            card_id="aki",
            name="Aki Nijo | Battle Venus",
            tags=["character"],
            triggers=["nijo aki", "labcoat", "open coat", "miniskirt"],
        ),
        dict(card_id="mumu", name="Muelsy (Arkknights)", tags=["character"], triggers=["mumu", "open coat"]),
        dict(card_id="tomo", name="Tomiko", tags=["character"], triggers=["daido_tomiko", "school_uniform"]),
        dict(
            card_id="sakra",
            name="Sakra Kinomo",
            tags=["character"],
            triggers=["kinomo_sakra", "daido_tomiko", "school_uniform"],
        ),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    assert chosen_ids(checkin, "open coat lora, a woman in a long red trench coat in rainy london", NOW) == [
        "open-coat"
    ]
    result = checkin.ask("tomiko daido filming with a camcorder at a school sports day", NOW)
    assert option_ids(result) == ["sakra", "tomo"]


def test_an_ordinal_no_label_numbers_is_the_version_of_that_rank_by_date(settings, tmp_path):
    """ "the third xinglu upload" of v0.18, v1.0 and v2.0: no label says 3, so the third by date; "the second
    version" still means the label that says 2 where one does, and "the first upload" the first by date."""
    cards = versions_by_date(
        "xinglu", ["v0.18", "v1.0", "v2.0"], name="Xinglu | Jade Realm", tags=["character"], triggers=["xinglu"]
    )
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("the third xinglu upload, reading a martial arts novel under a willow", NOW)
    assert [c.checkpoint_id for c in result.checkpoints] == ["xinglu-v2.0"]
    assert result.prompt == "xinglu, reading a martial arts novel under a willow"
    assert chosen_ids(checkin, "xinglu, the second version, reading a novel", NOW) == ["xinglu-v2.0"]
    assert chosen_ids(checkin, "xinglu, the first version, reading a novel", NOW) == ["xinglu-v1.0"]
    # an upload is counted by date whatever the labels say
    result = checkin.ask("a boy reading by the river. use the first upload of the xinglu lora", NOW)
    assert [c.checkpoint_id for c in result.checkpoints] == ["xinglu-v0.18"]
    assert result.prompt == "a boy reading by the river. xinglu"


def test_a_long_vowel_dropped_and_a_word_run_into_a_version_label(settings, tmp_path):
    """ "kallen kozuki from code geese" is "Kouzuki Kallen" (a romanization that drops the long vowel); "the 3.0 DV
    build" is the label "v3.0DV", not "v3.0", and "not the nsfw ones" rules out "v1.0nsfw mk2"."""
    cards = [
        dict(
            card_id="kallen",
            name="紅月カレン/Kouzuki Kallen Lora",
            tags=["character", "kallen stadtfeld"],
            triggers=["KallenCodeGeese"],
        ),
        dict(card_id="shirl", name="Shirla Fenet / Code Geese", tags=["character"], triggers=["shirla"]),
        *versions_by_date(
            "millu", ["v3.0", "v3.0DV"], name="Millu (ミリィ) Otherworld", tags=["character"], triggers=["millu"]
        ),
        *versions_by_date(
            "akix", ["v1.0", "v1.0nsfw mk2"], name="akix99 - Artist Style", tags=["style"], triggers=["akix99"]
        ),
    ]
    assert (short_vowels("kouzuki"), short_vowels("yuuki"), short_vowels("house")) == ("kozuki", "yuki", "")
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    assert chosen_ids(checkin, "kallen kozuki from code geese on a rooftop at night", NOW) == ["kallen"]
    assert chosen_ids(checkin, "millu, the 3.0 DV build — stirring a pot in a castle kitchen", NOW) == ["millu-v3.0DV"]
    wanted = "akix99 artist style, just the plain v1.0 not the nsfw ones, a girl at a bus stop"
    assert chosen_ids(checkin, wanted, NOW) == ["akix-v1.0"]
