"""Where a composed request's parts are found by what the repository knows rather than by how the sentence is built:
a made-up word that is one model's whole name names it wherever it stands ("..., vaporwavex1 backdrop"); words
beside a maker that are one of their models' names are that model ("background: Fitting Room made by rullos"); a
maker said goes with the name of theirs ("eula (Jackspringer) ..., konen darkest dungeon style"), and their handle
said beside a name calls the model with it; a part's question is answered by the one model whose every name word the
part's clause says, when the others are less of it ("girls und panzer kay": not "Girls und Panzer") and say less
of what was said. Scene words beside a maker whose model is named already add nothing, and a real question stays."""

import datetime as dt

import pytest
from factories import checkin_among_many, versions_by_date, weighted_ids

from personalq.checkin.strength import read_strengths

NOW = dt.datetime(2025, 12, 31, 12)
CARDS = [
    dict(card_id="elbe", name="Elbe (Azur Lane)", tags=["character"], triggers=["elbe"], creator="shipfan"),
    dict(card_id="vapor", name="VaporWaveX1", tags=["style"], creator="lawyne"),
    dict(card_id="futaba", name="Sakura Futaba (Persona 5)", tags=["character"], triggers=["sakura futaba"],
         creator="KCanHan"),
    dict(card_id="icons", name="IconLab_omkt_Lora", tags=["style"], triggers=["game icon"], creator="iconer"),
    dict(card_id="fortune", name="Ms. Fortune | Skullgirls LoRa", tags=["character"], triggers=["msfortune"],
         creator="skullmaker"),
    *versions_by_date("fitting", ["v1.0", "v2.0"], name="Fitting Room", tags=["background"],
                      triggers=["fittingroom"], creator="rullos"),
    dict(card_id="priest", name="Priest Pack (Mitre hats and church backgrounds)", tags=["clothing"],
         triggers=["mitre"], creator="rullos"),
    dict(card_id="pixel", name="[Falconerd] Big Pixel Style", tags=["style"], creator="Falconerd"),
    dict(card_id="sticker", name="Cartoon cute sticker effect（卡通Q版贴纸效果）LoRa", tags=["concept"],
         triggers=["sticker"], creator="axebru"),
    dict(card_id="eula", name="Eula Lawrence (Genshin Impact)", tags=["character"], triggers=["eulalawrencegi"],
         creator="Jackspringer"),
    dict(card_id="dungeon", name="Darkest Dungeon style - LORA", tags=["style"], triggers=["darkestdungeon"],
         creator="Konen"),
    dict(card_id="gup", name="Girls und Panzer", tags=["character"], triggers=["girls und panzer"],
         creator="tankfan"),
    dict(card_id="gup-kay", name="Girls und Panzer Kay", tags=["character"], triggers=["kay (girls und panzer)"],
         creator="tankfan2"),
    dict(card_id="asanagi", name="style asanagi", tags=["style"], triggers=["asanagi"], creator="stylist"),
    dict(card_id="nhatbinh", name="Nhat Binh Dress", tags=["clothing"], triggers=["nhat binh"], creator="aodai"),
    dict(card_id="nhatbinh-royal", name="Royal Nhat Binh Dress", tags=["clothing"], triggers=["royal nhat binh"],
         creator="hue"),
    dict(card_id="mona", name="Mona (Genshin Impact)", tags=["character"], triggers=["mona"], creator="genfan"),
    dict(card_id="komi", name="Komi Shuuko", tags=["character"], triggers=["komi shuuko"], creator="2cupColdBrew"),
    dict(card_id="renaissance", name="Renaissance Painting Style (LORA)", tags=["style"], triggers=["renaissance"],
         creator="thestanmen"),
    dict(card_id="runes", version="Glowing Runes R10", name="Glowing Runes", tags=["concept"], triggers=["gl0w1ngR"],
         creator="LDWorksDerv"),
    *versions_by_date("vampire", ["V01", "v1.0"], name="Vampire facing", tags=["concept"], triggers=["fangs"],
                      creator="Gillestonik"),
    *versions_by_date("kanata", ["v1", "v2"], name="Amane Kanata / Hololive", tags=["character"],
                      triggers=["amane_kanata"], creator="h_madoko"),
    dict(card_id="kanata-costume", name="Amane Kanata Third Costume LoRA", tags=["character"],
         triggers=["kanata third costume"], creator="costumer"),
    *versions_by_date("neon", ["100 Steps", "500 Steps"], name="Neon Glow Diffusion", kind="textual_inversion",
                      tags=["background"], triggers=["eonn"], creator="jungle"),
    dict(card_id="starfire", name="Starfire / DC Comics", tags=["character"], triggers=["sf1"], creator="h_madoko"),
    dict(card_id="views", name="multiple views", tags=["concept"], triggers=["multiple views"], creator="yinxian"),
    dict(card_id="aerith", version="tifa_v1", name="Aerith_meenow", tags=["character"],
         triggers=["aerith gainsborough"], creator="Meenov"),
    dict(card_id="aerith-real", version="v1", name="Realistic_Aerith_meenow", tags=["character"],
         triggers=["aerith gainsborough"], creator="Meenov"),
    dict(card_id="lofi", version="Beta", name="Lo-Fi Aesthetic", tags=["style"], triggers=["LoFi Aesthetic"],
         creator="duskfallkrew"),
    dict(card_id="splithair", name="Split-Color Hair (Black & White)", tags=["concept"],
         triggers=["split-color hair"], creator="rerorerora"),
    dict(card_id="quiz", name="Grim Aloe (Quiz Magic Academy)", tags=["character"], triggers=["grim aloe"],
         creator="rerorerora"),
    dict(card_id="elemental", name="ElementalMagicAI", tags=["concept"], triggers=["fireMagicAI"], creator="konycon"),
    dict(card_id="chair", name="Gaming Chair (EGirls)", tags=["concept"], triggers=["gaming chair"], creator="jiwen"),
    dict(card_id="egirl", name="Egirl", tags=["style"], triggers=["egirl"], creator="desyn"),
]  # fmt: skip


@pytest.fixture
def checkin(settings, tmp_path):
    return checkin_among_many(settings, tmp_path / "cards", CARDS)


def test_a_made_up_name_names_its_model_wherever_it_stands(checkin):
    result = checkin.ask("elbe lounging on an inflatable flamingo sipping a soda, vaporwavex1 backdrop", NOW)
    assert weighted_ids(result) == [("elbe", 1.0), ("vapor", 1.0)]
    assert "inflatable flamingo" in result.prompt


def test_a_file_name_without_its_kind_suffix_names_its_model(checkin):
    result = checkin.ask("KCanHan's sakura futaba hunched over three monitors, add IconLab_omkt", NOW)
    assert weighted_ids(result) == [("futaba", 1.0), ("icons", 1.0)]
    assert "game icon" in result.prompt


def test_words_beside_a_maker_that_name_their_model_are_a_part(checkin):
    result = checkin.ask(
        "Ms. Fortune from Skullgirls trying on hats, background: Fitting Room v2.0 made by rullos at 0.7", NOW
    )
    assert weighted_ids(result) == [("fitting-v2.0", 0.7), ("fortune", 1.0)]


def test_two_words_of_a_makers_model_beside_them_are_a_part(checkin):
    result = checkin.ask("paper boat drifting down a rainy gutter, big pixel style, axebru sticker effect", NOW)
    assert weighted_ids(result) == [("pixel", 1.0), ("sticker", 1.0)]
    assert "paper boat drifting down a rainy gutter" in result.prompt


def test_a_makers_handle_beside_a_name_calls_the_model(checkin):
    result = checkin.ask(
        "eula lawrence (Jackspringer) standing guard at a crypt entrance, konen darkest dungeon style", NOW
    )
    assert weighted_ids(result) == [("dungeon", 1.0), ("eula", 1.0)]
    assert "standing guard at a crypt entrance" in result.prompt


def test_scene_words_beside_a_maker_whose_model_is_named_add_nothing(checkin):
    result = checkin.ask("Mona wearing rullos' Priest Pack, blessing a crowd in a fitting room", NOW)
    assert weighted_ids(result) == [("mona", 1.0), ("priest", 1.0)]
    assert "fitting room" in result.prompt


def test_the_model_named_most_fully_answers_its_parts_question(checkin):
    result = checkin.ask("girls und panzer kay eating a burger next to her tank, style asanagi", NOW)
    assert weighted_ids(result) == [("asanagi", 1.0), ("gup-kay", 1.0)]


def test_a_model_most_of_whose_name_is_said_keeps_the_question(checkin):
    result = checkin.ask("mona wearing the nhat binh dress lora, stargazing from a palace courtyard", NOW)
    assert result.status == "clarify"
    assert "Royal Nhat Binh Dress" in result.question and "Nhat Binh Dress" in result.question


def test_words_a_bracket_says_a_maker_owns_are_their_model(checkin):
    result = checkin.ask(
        "Renaissance Painting Style by thestanmen on Komi Shuuko (2cupColdBrew's). She's baking cookies.", NOW
    )
    assert weighted_ids(result) == [("komi", 1.0), ("renaissance", 1.0)]


def test_a_makers_model_is_found_beside_them_not_in_the_picture_before(checkin):
    result = checkin.ask(
        "Mona meditating under a waterfall with runes glowing along her arms; LDWorksDerv Glowing Runes R10 at 0.4",
        NOW,
    )
    assert weighted_ids(result) == [("mona", 1.0), ("runes", 0.4)]
    assert "runes glowing along her arms" in result.prompt


def test_a_version_written_as_its_label_picks_that_release(checkin):
    result = checkin.ask("Mona baring sharp fangs on a temple roof, Gillestonik's Vampire facing v1.0", NOW)
    assert weighted_ids(result) == [("mona", 1.0), ("vampire-v1.0", 1.0)]


def test_an_aside_between_dashes_says_whose_model_it_is(checkin):
    result = checkin.ask("amane kanata — h_madoko's lora, v2 — perched on a neon rooftop sign, asanagi style", NOW)
    assert weighted_ids(result) == [("asanagi", 1.0), ("kanata-v2", 1.0)]


def test_a_quantity_said_after_a_part_is_that_parts(checkin):
    result = checkin.ask("Mona by genfan, backdrop: Neon Glow Diffusion TI (500 Steps), dancing on a plaza", NOW)
    assert weighted_ids(result) == [("mona", 1.0), ("neon-500-Steps", 1.0)]


def test_a_strength_said_in_indonesian_is_no_version(checkin):
    result = checkin.ask(
        "Tolong buatkan Starfire (DC Comics, lora h_madoko) dengan lora multiple views dari yinxian bobot 0.5: "
        "tampak depan, samping, dan belakang",
        NOW,
    )
    assert weighted_ids(result) == [("starfire", 1.0), ("views", 0.5)]


def test_lower_case_tags_beside_webui_tags_are_the_prompt(checkin):
    result = checkin.ask(
        "<lora:Egirl:0.6>, <lora:mona:0.8>, streaming setup, ring light, gaming chair, peace sign", NOW
    )
    assert weighted_ids(result) == [("egirl", 0.6), ("mona", 0.8)]
    assert "gaming chair" in result.prompt


def test_a_version_label_in_the_bracket_after_a_part_picks_that_model(checkin):
    result = checkin.ask(
        "Meenov's Aerith lora (file tifa_v1, weird name I know) twirling in a dance hall, asanagi style @0.5", NOW
    )
    assert weighted_ids(result) == [("aerith", 1.0), ("asanagi", 0.5)]


def test_a_hyphenated_name_beside_its_maker_across_a_version_bracket_is_a_part(checkin):
    result = checkin.ask("Mona on a balcony, Lo-Fi Aesthetic (Beta) from duskfallkrew as the look, late light", NOW)
    assert weighted_ids(result) == [("lofi", 1.0), ("mona", 1.0)]


def test_a_part_named_as_written_is_not_a_makers_other_model(checkin):
    result = checkin.ask(
        "Mona + konycon ElementalMagicAI + Split-Color Hair (rerorerora): summoning fire and ice", NOW
    )
    assert weighted_ids(result) == [("elemental", 1.0), ("mona", 1.0), ("splithair", 1.0)]


@pytest.mark.parametrize(
    ("text", "weights"),
    [
        ("Spiderwoman x0.8 in the Thai Nurse outfit x0.6, checking a chart", [0.8, 0.6]),
        ("burger lora v2 (novowels) → 0.65, at a food stall", [0.65]),
        ("Starry Style v3.0 : 0.6", [0.6]),
        ("the v2.0 Faun version, 0.85; a goat-legged fellow", [0.85]),
        ("herge-style embedding'i %80 ağırlıkla; bir limanda", [0.8]),
        ("multiple views dari yinxian bobot 0.5: tampak depan", [0.5]),
        ("a 1x1 grid, 3x4 panels, 16:9, size = 1.5 m", []),
    ],
)
def test_strengths_written_as_operators_and_in_more_languages(text, weights):
    assert [s.weight for s in read_strengths(text)] == weights
