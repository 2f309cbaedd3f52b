"""Readings that real requests needed, each general:

- a creator who writes their handle into their models' names ("[justTNP] Bulma") is still who made the model when a
  request says the handle in brackets, as "the X one", or left after a listed name ("Lightning (justTNP, FFXIII)",
  "la mash kyrielight de justTNP ..."), and a handle's possessive owns the words after it even after a preposition
  ("in ishawn944's jkskirt");
- a Japanese "no" inside a title rules nothing out ("Elaina (Majo No Tabitabi) - LoRA"), and French "mai" opening
  "Mai Natsume" is her name;
- a name in brackets after another is one part ("Kanna (Kobayashi-san LoRA)"), a name before what someone does is a
  part ("Frieza knocked out ..."), and so is one a creator is said to have made ("dksdkffiwna's laffey half asleep");
- a model's whole name has no namesake in another's version label ("smol lora", not "Disgaea Style v1.0-Smol"), and
  a WebUI tag names the model called by all its words, not a pack trained on it;
- the prompt keeps what follows a trained word the request opens with ("crpht-4300 red vintage roadster") and a place
  or time said with "new" ("on new year's morning"), and leaves out a last clause that only comments ("it'll be
  hilarious")."""

import datetime as dt

import pytest
from factories import checkin_among_many, chosen_ids

NOW = dt.datetime(2023, 7, 31, 12)
CARDS = [
    dict(card_id="light-tnp", name="Lightning | Final Fantasy XIII", tags=["character"], triggers=["lightning farron"],
         creator="justTNP"),
    dict(card_id="light-vfx", name="LightningVFX - Create more consistent Lightning", tags=["concept"],
         triggers=["lightning"], creator="vfxer"),
    dict(card_id="light-gf", name='Girls\' Frontline-OTs-14"lightning"', tags=["character"], triggers=["ots14"],
         creator="gfmaker"),
    dict(card_id="midna-tnp", name="Midna | The Legend of Zelda: Twilight Princess", tags=["character"],
         triggers=["midnaimp"], creator="justTNP"),
    dict(card_id="midna-tfm", name="TFM Midna LoRA", tags=["character"], triggers=["tfmmidna"], creator="tfm"),
    dict(card_id="makima-tnp", name="[justTNP] Makima | Chainsaw Man", tags=["character"], triggers=["makima"],
         creator="justTNP"),
    dict(card_id="mash-tnp", name="Mash Kyrielight | Fate/Grand Order", tags=["character"], triggers=["mashkyrie"],
         creator="justTNP"),
    dict(card_id="mash-cos", name="Mash Kyrielight COS", tags=["character"], triggers=["mashcos"], creator="cosmaker"),
    dict(card_id="matthew", name="matthew-stone learned embeds", kind="textual_inversion", tags=["style"],
         triggers=["matthew-stone"], creator="embedder"),
    dict(card_id="elaina-lora", name="Elaina (Majo No Tabitabi) - LoRA", tags=["character"], triggers=["elainalora"],
         creator="TheSkinnyRatAI"),
    dict(card_id="elaina-ti", name="Elaina (Majo No Tabitabi) - TI", kind="textual_inversion", tags=["character"],
         triggers=["elainati"], creator="TheSkinnyRatAI"),
    dict(card_id="kanata", name="LoveLive! Konoe Kanata Lora", tags=["character"], triggers=["konoe kanata"],
         creator="llfan"),
    dict(card_id="ll-pack", name="Lovelive! Character + Official Art Style LoRA", tags=["character"],
         triggers=["kanata_konoe", "ayumu_uehara", "setsuna_yuki"], creator="packer"),
    dict(card_id="style15", name="style15", tags=["style"], triggers=["style15"], creator="stylist"),
    dict(card_id="carphoto", name="Car Photography", kind="textual_inversion", tags=["photography"],
         triggers=["crpht-4300"], creator="PublicPrompts"),
    dict(card_id="kimono", name="Kimono Clothes", tags=["clothing"], triggers=["furisode"], creator="Gtonero"),
    dict(card_id="jkskirt", name="JKskirt", tags=["clothing"], triggers=["red skirt"], creator="ishawn944"),
    dict(card_id="jk-uniform", name="JK uniform", tags=["clothing", "jkskirt"], triggers=["jk uniform"],
         creator="Yubeijin"),
    dict(card_id="smol", name="smol", version="v1.0", tags=["style"], triggers=["smol"], creator="tiny"),
    dict(card_id="disgaea", name="Disgaea Style", version="v1.0-Smol", tags=["style"], triggers=["disgaea"],
         creator="nippon"),
    dict(card_id="kanna", name="Kanna - Kobayashi-san", tags=["character"], triggers=["kanna kamui"], creator="kb"),
    dict(card_id="tohru", name="Tohru - Kobayashi-san Chi no Maid Dragon", tags=["character"], triggers=["tohru"],
         creator="kb"),
    dict(card_id="mai-natsume", name="Mai Natsume (BlazBlue) LoRA", tags=["character"], triggers=["mainatsume"],
         creator="bb"),
    dict(card_id="iroha", name="Natsume Iroha", tags=["character"], triggers=["natsumeiroha"], creator="ba"),
    dict(card_id="cheddar", name="CheddarCheems Style LoRA", tags=["style"], triggers=["cheddarcheems"],
         creator="cheese"),
    dict(card_id="kallen-locon", family="kallen", version="V1.0_LoCon", name="Kallen Kaslana | LoRA & LoCon",
         tags=["character"], triggers=["kallen kaslana"], created_at="2023-03-01"),
    dict(card_id="kallen-lora", family="kallen", version="v1.0", name="Kallen Kaslana | LoRA & LoCon",
         tags=["character"], triggers=["kallen kaslana"], created_at="2023-03-02"),
    dict(card_id="frieza", name="Frieza - Dragon Ball Z - Character LORA", tags=["character"], triggers=["frieza"],
         creator="dbz"),
    dict(card_id="yamcha", name="Yamcha Pose | Meme", tags=["pose"], triggers=["yamchapose"], creator="memer"),
    dict(card_id="laffey", name="Laffey (Azur Lane)", tags=["character"], triggers=["laffey"], creator="dksdkffiwna"),
    dict(card_id="liv", name="Punishing Grey Raven--Liv", tags=["character"], triggers=["liv"], creator="pgr"),
    dict(card_id="hands", name="better hands", kind="textual_inversion", tags=["hands"], triggers=["bhands"],
         creator="TangBohu"),
    dict(card_id="turtle", name="Turtle School Uniform", tags=["clothing"], triggers=["TurtleSchoolUniform"],
         creator="uniformer"),
]  # fmt: skip


@pytest.fixture
def checkin(settings, tmp_path):
    return checkin_among_many(settings, tmp_path / "cards", CARDS)


def test_a_bracketed_brand_handle_is_who_made_it(checkin):
    result = checkin.ask("Lightning (justTNP, FFXIII) gazing out over a stormy sea at dusk", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "light-tnp")
    assert result.prompt == "lightning farron (FFXIII) gazing out over a stormy sea at dusk"


def test_the_brand_handle_one_is_who_made_it(checkin):
    result = checkin.ask("midna (the justTNP one) causing chaos in a high school hallway", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "midna-tnp")


def test_a_handle_left_after_a_listed_name_picks_that_part(checkin):
    result = checkin.ask(
        "la mash kyrielight de justTNP qui lève son bouclier sur un pont sous la pluie, avec le style matthew-stone",
        NOW,
    )
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["mash-tnp", "matthew"]


def test_a_japanese_no_inside_a_title_rules_out_no_kind(checkin):
    result = checkin.ask("TheSkinnyRatAI's Elaina (Majo No Tabitabi) - LoRA sweeping the porch of a cottage", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "elaina-lora")


def test_a_negation_still_rules_out_a_kind(checkin):
    result = checkin.ask("elaina (majo no tabitabi), not the lora: sweeping the porch of a cottage", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "elaina-ti")


def test_a_tag_names_the_model_called_by_all_its_words(checkin):
    request = "<lora:kanata_konoe:0.8>, dozing on a pile of cushions in the club room, <lora:style15:0.6>"
    assert chosen_ids(checkin, request, NOW) == ["kanata", "style15"]


def test_a_name_in_brackets_after_another_is_one_part(checkin):
    result = checkin.ask("Kanna (Kobayashi-san LoRA) at 0.8, building a snowman in the park, smol lora 0.5", NOW)
    assert sorted((c.checkpoint_id, c.weight) for c in result.checkpoints) == [("kanna", 0.8), ("smol", 0.5)]


def test_a_models_whole_name_has_no_namesake_in_a_version_label(checkin):
    result = checkin.ask("smol lora, a cat building a snowman in the park", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "smol")


def test_an_everyday_word_opening_a_capitalised_name_is_the_names(checkin):
    request = "Mai Natsume qui révise ses cours à la bibliothèque, avec le style CheddarCheems à 0,7."
    assert chosen_ids(checkin, request, NOW) == ["cheddar", "mai-natsume"]


def test_a_version_said_after_the_version_word_picks_it(checkin):
    result = checkin.ask("faz a kallen kaslana versão locon tocando piano num salão vazio", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "kallen-locon")
    assert result.prompt == "a kallen kaslana tocando piano num salão vazio"


def test_a_name_before_what_someone_does_is_a_part(checkin):
    request = "Frieza knocked out in a smouldering crater on Namek, Yamcha Pose meme LoRA"
    assert chosen_ids(checkin, request, NOW) == ["frieza", "yamcha"]


def test_a_name_a_creator_is_said_to_have_made_is_a_part(checkin):
    result = checkin.ask("pls make dksdkffiwna's laffey half asleep in a ship's cabin, cheddarcheems style on it", NOW)
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["cheddar", "laffey"]
    assert result.prompt.startswith("a laffey half asleep in a ship's cabin")


def test_emb_is_an_embedding(checkin):
    request = "Liv (Punishing Grey Raven) playing piano in an empty concert hall + TangBohu better hands emb"
    assert chosen_ids(checkin, request, NOW) == ["hands", "liv"]


def test_the_words_after_a_trained_word_the_request_opens_with_are_the_picture(checkin):
    result = checkin.ask("crpht-4300 red vintage roadster on a coastal highway", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "carphoto")
    assert result.prompt == "a crpht-4300 red vintage roadster on a coastal highway"


def test_a_handles_possessive_after_a_preposition_is_whose_model(checkin):
    result = checkin.ask("a girl in ishawn944's jkskirt, waiting on a train platform", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "jkskirt")
    assert result.prompt == "a girl in red skirt, waiting on a train platform"


def test_new_said_of_a_place_or_time_is_the_picture(checkin):
    result = checkin.ask("Gtonero's kimono clothes lora, woman in a furisode at a shrine on new year's morning", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "kimono")
    assert result.prompt == "woman in a furisode at a shrine on new year's morning"


def test_a_closing_comment_is_no_part_of_the_picture(checkin):
    result = checkin.ask("turtle school uniform lora on a grandma doing tai chi in the park, it'll be hilarious", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "turtle")
    assert result.prompt == "a TurtleSchoolUniform on a grandma doing tai chi in the park"


@pytest.mark.parametrize(
    "request_, kept",
    [
        ("turtle school uniform lora on a grandma doing tai chi in the park, it'll be snowing", "it'll be snowing"),
        ("turtle school uniform lora, a grandma holding a sign that says (come with me)", "(come with me)"),
        ("turtle school uniform lora, a grandma with a list: 1) tea 2) cake", "1) tea 2) cake"),
    ],
)
def test_the_prompt_keeps_what_only_looks_like_talk(checkin, request_, kept):
    result = checkin.ask(request_, NOW)
    assert result.checkpoint_id == "turtle"
    assert kept in result.prompt


def test_an_everyday_word_before_a_name_is_still_a_word(checkin):
    result = checkin.ask("Ahora Kanna construyendo un muñeco de nieve en el parque", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "kanna")


def test_a_second_model_named_in_brackets_is_a_part_of_its_own(checkin):
    assert chosen_ids(checkin, "kimono clothes lora (turtle school uniform lora) on a grandma", NOW) == [
        "kimono",
        "turtle",
    ]
