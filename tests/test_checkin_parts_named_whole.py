"""A part of a composed picture whose words are one model's whole name picks that model, where other models only share
some of its words ("the offset noise lora": "[LoCon/LoRA] Offset noise", not "rMadArt3_NoiseOffset"; "Star Trek
Uniforms", not "Star Trek TNG uniforms"); it stays a question where another model says the same words in a row inside
a longer name ("Gothic Horror Style" and "GothicHorrorAI") or shares a proper name ("Higuchi Madoka" and
"character-Madoka"), and one plain word of the picture is never made a part by it ("in summer")."""

import datetime as dt

import pytest
from factories import checkin_among_many, option_ids, picked_ids

NOW = dt.datetime(2023, 7, 31, 12)
CARDS = [
    dict(card_id="nagant", name="Lady Nagant (My Hero Academia)", tags=["character"], triggers=["lady nagant"],
         creator="heroes"),
    dict(card_id="offset", name="[LoCon/LoRA] Offset noise", tags=["concept", "dark"], triggers=["offset noise"],
         creator="noisy"),
    dict(card_id="madart", name="rMadArt3_NoiseOffset (SD 1.5 Lora)", tags=["style", "noise offset", "dark"],
         triggers=["rmadart3"], creator="rmada"),
    dict(card_id="charlie", name="Charlie Morningstar (Hazbin Hotel)", tags=["character"],
         triggers=["charlie morningstar"], creator="hotel"),
    dict(card_id="trek-uniforms", version="V1", name="Star Trek Uniforms", tags=["clothing", "star trek"],
         triggers=["star trek uniform"], creator="trekkie"),
    dict(card_id="trek-tng", version="v2.0", name="Star Trek TNG uniforms", tags=["clothing", "star trek"],
         triggers=["tng uniform"], creator="enterprise"),
    dict(card_id="trek-tos", version="v1.1", name="Star Trek TOS uniforms", tags=["clothing", "star trek"],
         triggers=["tos uniform"], creator="enterprise"),
    dict(card_id="frenda", name="Frenda Seivelun (Toaru)", tags=["character"], triggers=["frenda"],
         creator="railgun"),
    dict(card_id="gothic", name="Gothic Horror Style", tags=["style", "gothic", "horror"], triggers=["gothic horror"],
         creator="goth"),
    dict(card_id="gothic-ai", name="GothicHorrorAI", tags=["style", "gothic", "horror"],
         triggers=["gothichorrorai"], creator="konyconi"),
    dict(card_id="higuchi", name="Higuchi Madoka 樋口円香 / THE iDOLM@STER ShinyColors", tags=["character"],
         triggers=["higuchi madoka"], creator="idol"),
    dict(card_id="madoka", name="character-Madoka", tags=["character", "higuchi madoka"], triggers=["madoka"],
         creator="other"),
    dict(card_id="saito", name="naoki-saito learned embeds", kind="textual_inversion", tags=["style"],
         triggers=["naoki-saito"], creator="saito"),
    dict(card_id="ayanami", name="Ayanami (Azur Lane)", tags=["character"], triggers=["ayanami"], creator="azur"),
    dict(card_id="summer-style", name="Summer - Style", tags=["style", "summer"], triggers=["summer style"],
         creator="seasons"),
    dict(card_id="summer-dress", name="Summer dress", tags=["clothing", "summer"], triggers=["summer dress"],
         creator="dresses"),
    dict(card_id="cheddar", name="CheddarCheems Style LoRA", tags=["style"], triggers=["cheddarcheems"],
         creator="cheems"),
]  # fmt: skip


@pytest.fixture
def checkin(settings, tmp_path):
    return checkin_among_many(settings, tmp_path / "cards", CARDS)


def test_a_name_said_whole_picks_it_over_a_name_that_only_shares_its_words(checkin):
    result = checkin.ask("lady nagant with the offset noise lora - sniper on a rooftop at night, dark and moody", NOW)
    assert (result.status, picked_ids(result)) == ("selected", ["nagant", "offset"])


def test_a_name_said_whole_picks_it_over_names_with_more_words(checkin):
    result = checkin.ask("Charlie Morningstar in Star Trek Uniforms, standing on the bridge of a starship", NOW)
    assert (result.status, picked_ids(result)) == ("selected", ["charlie", "trek-uniforms"])


def test_the_same_words_in_a_row_in_another_name_stay_a_question(checkin):
    result = checkin.ask("frenda with the gothic horror style, grinning in an abandoned mansion", NOW)
    assert result.status == "clarify"
    assert option_ids(result) == ["gothic", "gothic-ai"]


def test_a_proper_name_another_model_shares_stays_a_question(checkin):
    result = checkin.ask("higuchi madoka waiting for a train at night, in the naoki-saito style", NOW)
    assert result.status == "clarify"
    assert option_ids(result) == ["higuchi", "madoka"]


def test_one_plain_word_of_the_picture_is_still_no_part(checkin):
    result = checkin.ask(
        "Ayanami at 0.7, watching wind chimes from a wooden veranda in summer, CheddarCheems Style LoRA at 0.6", NOW
    )
    assert sorted((c.checkpoint_id, c.weight) for c in result.checkpoints) == [("ayanami", 0.7), ("cheddar", 0.6)]
