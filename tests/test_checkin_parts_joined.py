"""How a composed request joins its parts and how each part's own words pick its model: "wearing" and "w/" stand
between two names; a kind word may open its clause before the name ("décor : l'embedding Magical Interior"); the kind
said of one part is not another's; a number a file's name ends with, said right before the version ("Scenery_V4
v2.0"), is the name's; a plain version number is not a lettered release ("v1.0", not "v.1.0b"); a word written with
its joins exactly as one version's trained word picks that version ("tfm_midna", not "tfmmidna"); a creator's
possessive opens a second name where only a particle stands before it; a name after "and" is listed beside one its
maker opens; words a bracket gives a maker and version of are a model's name ("a Vision Pro headset (LogicQI, v2.0)"),
and so are words said to be by a maker in another language ("Fitting Room de rullos"), owned by a handle ending in
"s" ("rullos' Priest Pack"), or written as a file ("Concept_Scenery_scene_V1"); a version is read after a role word
("the LASER outfit v1.0") and with the words its bracket holds ("v1.0 (Fix)", "(v2 Medium)"); a bracket saying whose
model it is names the maker ("hex maniac (Murky's lora)"), and what the picture does after it is no list of names."""

import datetime as dt

import pytest
from factories import checkin_among_many, versions_by_date, weighted_ids

NOW = dt.datetime(2025, 12, 31, 12)
CARDS = [
    dict(card_id="fubuki", name="[Velvo] Fubuki | One-Punch Man", tags=["character"], triggers=["fubuki"],
         creator="Velvo"),
    *versions_by_date("steampunk", ["v1.0", "v2.0"], name="Steampunk Clothing", tags=["clothing"],
                      triggers=["steampunk_costume"], creator="Quillon"),
    dict(card_id="akali", name="K/DA All Out Akali", tags=["character"], triggers=["kda_all_out_akali_lora"],
         creator="riftmaker"),
    dict(card_id="fashion", name="High Fashion Style", tags=["clothing"], triggers=["runwaystyle"],
         creator="Quillon"),
    *versions_by_date("scene-v4", ["v1.0", "v2.0"], name="Concept_Scenery_scene_V4", tags=["background"],
                      creator="mccq"),
    dict(card_id="scene-v1", version="v2.0", name="Concept_Scenery_scene_V1", tags=["background"], creator="mccq"),
    dict(card_id="scene-v2", version="v2.0", name="Concept_Scenery_scene_V2", tags=["background"], creator="mccq"),
    dict(card_id="jenny", name="Officer Jenny - Pokemon", tags=["character"], triggers=["officer jenny"],
         creator="sialiasia"),
    *versions_by_date("ereshkigal", ["v.1.0b", "v1.0"], name="Ereshkigal | Fate/Grand Order", tags=["character"],
                      triggers=["ereshkigal"], creator="Chamelo"),
    dict(card_id="opera", name="xifu 戏服 (Peking Opera costume)", tags=["clothing"], triggers=["xifu"],
         creator="XSELO"),
    *versions_by_date("smurfette", ["v1.0", "v2.0"], name="Smurfette [ The Smurfs ]", tags=["character"],
                      triggers=["smurfette"], creator="Goodero"),
    dict(card_id="interior", name="Magical Interior Style: Hobbit inspired", kind="textual_inversion",
         tags=["background"], triggers=["magicalinterior"], creator="Peakso"),
    dict(card_id="midna-v2", family="midna", version="V2", name="TFM Midna LoRA", tags=["character"],
         triggers=["tfm_midna"], creator="foodmage", created_at="2025-03-01"),
    dict(card_id="midna-genesis", family="midna", version="Genesis", name="TFM Midna LoRA", tags=["character"],
         triggers=["tfmmidna"], creator="foodmage", created_at="2025-02-01"),
    dict(card_id="yae-ti", name="genshin_yae", kind="textual_inversion", tags=["character"], triggers=["genshin_yae"],
         creator="ygohal"),
    dict(card_id="yae-lora", name="Yae Miko Genshin Impact", tags=["character"], triggers=["miko_genshin"],
         creator="SettingsOK"),
    dict(card_id="gongbi", name="Gongbi 工笔", tags=["style"], triggers=["gongbi"], creator="Ainrub"),
    dict(card_id="yuki", name="Yuki Mori | Space Battleship Yamato 2199", tags=["character"], triggers=["mori yuki"],
         creator="Velvo"),
    dict(card_id="hanbok", name="[badbrother]-modernized hanbok", tags=["clothing"], triggers=["hanbok"],
         creator="badbrother"),
    dict(card_id="ashe", name="Ashe from League of Legends", tags=["character"], triggers=["ashe (league of legends)"],
         creator="riftmaker"),
    dict(card_id="lux", name="Star Guardian Lux", tags=["character"], triggers=["star guardian lux"],
         creator="riftmaker"),
    dict(card_id="fitting", version="v2.0", name="Fitting Room", tags=["background"], creator="rullos"),
    dict(card_id="fortune", name="Ms. Fortune | Skullgirls LoRa", tags=["character"], triggers=["msfortune"],
         creator="skullmaker"),
    dict(card_id="priest", name="Priest Pack (Mitre hats and church backgrounds)", tags=["clothing"],
         triggers=["mitre"], creator="rullos"),
    *versions_by_date("laser", ["v230626", "v1.0"], name="LASER - 镭射衣", tags=["clothing"], triggers=["laser"],
                      creator="apyrr"),
    dict(card_id="hex", name="Hex Maniac (Pokemon) LoRA", tags=["character"], triggers=["hexmaniac"],
         creator="Murky"),
    dict(card_id="murky-style", name="Murky's Special Style LoRA", tags=["style"], triggers=["murkystyle"],
         creator="Murky"),
    dict(card_id="vector", name="Western Illustration Vector Style LoRA", tags=["style"], triggers=["westernvector"],
         creator="vectorer"),
    dict(card_id="tarot", name="Tarot512 - fortune cards", tags=["concept"], triggers=["tarot512"], creator="cardist"),
    dict(card_id="momiji", name="Momiji - Ninja Gaiden", tags=["character"], triggers=["momiji"], creator="gaidenfan"),
    *[dict(card, card_id=card_id) for card, card_id in zip(
        versions_by_date("serval", ["v1.0", "v1.0 (Fix)"], name="Serval Landau (Honkai: Star Rail)",
                         tags=["character"], triggers=["serval"], creator="zakq"), ["serval", "serval-fix"])],
    *[dict(card, card_id=card_id) for card, card_id in zip(
        versions_by_date("protogen", ["Protogen v2 Hard", "Protogen v2 Medium"], name="Protogen LoRA",
                         tags=["character"], triggers=["protogen"], creator="MichaelYours"),
        ["protogen-hard", "protogen-medium"])],
    dict(card_id="saratoga", version="v1.2", name="Saratoga (Warship Girls)", tags=["character"],
         triggers=["saratoga"], creator="tlfq"),
    dict(card_id="menma", name="menma (enaic31) style", tags=["style"], triggers=["menmastyle"], creator="enaic"),
    dict(card_id="senko-multi", name="[LoRA] Senko-san | Multiple outfits", tags=["character"],
         triggers=["senko-san"], creator="kitsunefan"),
    dict(card_id="shiro", name="Shiro (Sewayaki kitsune no Senko-san)", tags=["character"], triggers=["shiro"],
         creator="kitsunefan2"),
    *versions_by_date("robin", ["v0.1", "v1.0"], name="Nico Robin", tags=["character"], triggers=["nico robin"],
                      creator="piratefan"),
    dict(card_id="robin-ti", name="Nico Robin embedding", kind="textual_inversion", tags=["character"],
         triggers=["robinti"], creator="piratefan2"),
    dict(card_id="weiss", name="Weiss Schnee | RWBY", tags=["character"], triggers=["weiss schnee"], creator="Velvo"),
    dict(card_id="samus", name="Zero Suit Samus", tags=["character"], triggers=["zero suit samus"],
         creator="splitrick"),
    *versions_by_date("vision", ["v1.0", "v2.0"], name="Vision Pro", tags=["concept"], triggers=["vr headset"],
                      creator="LogicQI"),
]  # fmt: skip


@pytest.fixture
def checkin(settings, tmp_path):
    return checkin_among_many(settings, tmp_path / "cards", CARDS)


def test_wearing_stands_between_two_owned_names(checkin):
    result = checkin.ask(
        "Velvo's Fubuki wearing Quillon's Steampunk Clothing v2.0 at 0.7, standing on an airship deck", NOW
    )
    assert weighted_ids(result) == [("fubuki", 1.0), ("steampunk-v2.0", 0.7)]
    assert "airship deck" in result.prompt and "steampunk_costume" in result.prompt


def test_w_slash_stands_between_two_names(checkin):
    result = checkin.ask(
        "K/DA All Out Akali (the kda_all_out_akali_lora file) @0.75 w/ Quillon's High Fashion Style @0.6, "
        "strutting through a neon parking garage",
        NOW,
    )
    assert weighted_ids(result) == [("akali", 0.75), ("fashion", 0.6)]


def test_a_number_a_file_name_ends_with_before_its_version_is_the_names(checkin):
    result = checkin.ask(
        "Officer Jenny directing traffic at a rainy intersection, background via mccq's Concept_Scenery_scene_V4 v2.0",
        NOW,
    )
    assert weighted_ids(result) == [("jenny", 1.0), ("scene-v4-v2.0", 1.0)]


def test_a_name_written_as_its_file_picks_its_model(checkin):
    result = checkin.ask(
        "Officer Jenny on a cliff above a ruined fortress, mccq's Concept_Scenery_scene_V2 (0.8)", NOW
    )
    assert weighted_ids(result) == [("jenny", 1.0), ("scene-v2", 0.8)]


def test_a_plain_version_number_is_not_a_lettered_release(checkin):
    result = checkin.ask("Chamelo's Ereshkigal v1.0 with XSELO's xifu lora at 0.6, singing on an old opera stage", NOW)
    assert weighted_ids(result) == [("ereshkigal-v1.0", 1.0), ("opera", 0.6)]


def test_the_number_with_its_letter_still_picks_the_lettered_release(checkin):
    result = checkin.ask("Ereshkigal v1.0b with the xifu lora, singing on an old opera stage", NOW)
    assert weighted_ids(result) == [("ereshkigal-v.1.0b", 1.0), ("opera", 1.0)]


@pytest.mark.parametrize(
    "request_text",
    [
        "La Smurfette de Goodero (v2.0) dans une cuisine ronde, décor : l'embedding Magical Interior de Peakso à 0,7",
        "Smurfette v2.0 baking a pie in a round kitchen, the embedding Magical Interior by Peakso at 0.7",
    ],
)
def test_a_kind_word_may_open_its_clause_before_the_name(checkin, request_text):
    result = checkin.ask(request_text, NOW)
    assert weighted_ids(result) == [("interior", 0.7), ("smurfette-v2.0", 1.0)]
    assert "embedding" not in result.prompt and "magicalinterior" in result.prompt


def test_what_a_model_does_after_a_clause_opening_kind_word_names_none(checkin):
    result = checkin.ask("Smurfette v2.0 in a round kitchen. The embedding makes everything glow", NOW)
    assert weighted_ids(result) == [("smurfette-v2.0", 1.0)]


def test_a_trained_word_written_with_its_joins_picks_its_version(checkin):
    result = checkin.ask("tfm_midna, Gongbi 工笔 lora at 0.4, twirling an umbrella on a foggy bridge", NOW)
    assert weighted_ids(result) == [("gongbi", 0.4), ("midna-v2", 1.0)]


def test_the_kind_said_of_another_part_is_not_this_ones(checkin):
    result = checkin.ask("genshin_yae at 0.9 with Ainrub's Gongbi 工笔 lora at 0.6, feeding koi from a bridge", NOW)
    assert weighted_ids(result) == [("gongbi", 0.6), ("yae-ti", 0.9)]


def test_a_creators_possessive_opens_a_second_name_after_a_particle(checkin):
    result = checkin.ask(
        "Velvo의 Yuki Mori에 badbrother의 modernized hanbok 로라를 가중치 0.8로 입혀서, 함교에서", NOW
    )
    assert weighted_ids(result) == [("hanbok", 0.8), ("yuki", 1.0)]


def test_a_name_after_and_is_listed_beside_one_its_maker_opens(checkin):
    result = checkin.ask("riftmaker's Ashe and Star Guardian Lux having a picnic on a grassy cliff, gongbi lora", NOW)
    assert weighted_ids(result) == [("ashe", 1.0), ("gongbi", 1.0), ("lux", 1.0)]
    assert "having a picnic on a grassy cliff" in result.prompt


def test_words_a_bracket_gives_a_maker_and_version_of_name_a_model(checkin):
    result = checkin.ask(
        "splitrick's Zero Suit Samus wearing a Vision Pro headset (LogicQI, v2.0), lounging in a conversation pit, "
        "Gongbi 工笔 lora",
        NOW,
    )
    assert weighted_ids(result) == [("gongbi", 1.0), ("samus", 1.0), ("vision-v2.0", 1.0)]


def test_words_another_language_says_a_maker_made_name_a_model(checkin):
    result = checkin.ask(
        "Ms. Fortune de Skullgirls qui essaie des chapeaux, décor : Fitting Room de rullos (v2.0) à 0,7", NOW
    )
    assert weighted_ids(result) == [("fitting", 0.7), ("fortune", 1.0)]


def test_a_handle_ending_in_s_owns_the_name_after_its_apostrophe(checkin):
    result = checkin.ask(
        "Officer Jenny lighting candles at the altar, rullos' Priest Pack at 0.5 for the backdrop", NOW
    )
    assert weighted_ids(result) == [("jenny", 1.0), ("priest", 0.5)]


def test_a_version_after_a_role_word_is_that_parts(checkin):
    result = checkin.ask("Officer Jenny repairing a pylon in the rain, wearing the LASER 镭射衣 outfit v1.0", NOW)
    assert weighted_ids(result) == [("jenny", 1.0), ("laser-v1.0", 1.0)]


@pytest.mark.parametrize(
    ("request_text", "version"),
    [
        ("zakq's Serval Landau v1.0 (Fix) at 0.75 playing guitar on a balcony, Gongbi 工笔 lora", "serval-fix"),
        ("MichaelYours' Protogen LoRA (v2 Medium) tinkering with an engine, Gongbi 工笔 lora", "protogen-medium"),
    ],
)
def test_the_words_a_versions_bracket_holds_are_its_label(checkin, request_text, version):
    result = checkin.ask(request_text, NOW)
    assert [i for i, _ in weighted_ids(result)] == sorted(["gongbi", version])


def test_a_bracket_saying_whose_model_names_its_maker_and_the_picture_follows(checkin):
    result = checkin.ask("hex maniac (Murky's lora) reading fortune cards by candlelight, western vector style", NOW)
    assert weighted_ids(result) == [("hex", 1.0), ("vector", 1.0)]
    assert "reading fortune cards by candlelight" in result.prompt


def test_a_name_written_as_its_file_is_a_part_wherever_it_stands(checkin):
    result = checkin.ask(
        "ok so momiji from ninja gaiden on a windy seaside cliff, bg = mccq Concept_Scenery_scene_V1", NOW
    )
    assert weighted_ids(result) == [("momiji", 1.0), ("scene-v1", 1.0)]


def test_a_series_before_a_makers_bracket_is_no_second_name(checkin):
    result = checkin.ask(
        "saratoga from warship girls (tlfq's, v1.2) at 0.75 sketching seagulls, Gongbi 工笔 lora at 0.5", NOW
    )
    assert weighted_ids(result) == [("gongbi", 0.5), ("saratoga", 0.75)]


def test_names_listed_after_the_picture_with_a_connector_still_count(checkin):
    result = checkin.ask(
        "Officer Jenny (pokemon) crossing a rope bridge over a canyon, in the Gongbi 工笔 style "
        "plus the menma (enaic31) style",
        NOW,
    )
    assert weighted_ids(result) == [("gongbi", 1.0), ("jenny", 1.0), ("menma", 1.0)]


def test_a_joined_name_another_candidate_says_too_is_still_a_question(checkin):
    result = checkin.ask("senko-san cooking dinner for a tired salaryman", NOW)
    assert result.status == "clarify"


def test_a_bracket_of_parts_after_a_version_is_no_label(checkin):
    result = checkin.ask("Chamelo's Ereshkigal v1.0 (with the gongbi lora at 0.5) in the fog", NOW)
    assert weighted_ids(result) == [("ereshkigal-v1.0", 1.0), ("gongbi", 0.5)]


def test_a_kind_said_in_the_plural_is_every_parts(checkin):
    result = checkin.ask("Nico Robin and Weiss Schnee loras at a tea party", NOW)
    assert result.status == "clarify"
    assert [o.label for o in result.options] == ["v1.0", "v0.1"]
