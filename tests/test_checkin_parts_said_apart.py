"""Parts a composed request says apart: a version said after a part's kind word is that part's ("ancient-ruin TI
v1.0", "Corneo's Mercy (embedding 2.0.0)", "makima embedding (1.1)"); two of one maker's models joined by "and" stay
two ("Corneo's Brigitte and corneo_dva"); two names listed with "and" before the picture are both its subjects ("Sans
and Toriel telling jokes"), where an everyday word after "and" stays the picture's; a handle said after a part as who
made it is no part ("carrot style by inzaniak", where Inzaniak has a model of their own name); and an embedding a
negative prompt calls by its trained word, kind and maker ("civitai's greyscale embedding") is in the set, the negative
prompt saying its word."""

import datetime as dt
import re

import pytest
from factories import checkin_among_many, weighted_ids

NOW = dt.datetime(2023, 7, 31, 12)
CARDS = [
    dict(card_id="spider", name="Clockworkspider", version="v2.0", tags=["concept"], triggers=["clockworkspider"],
         creator="tinker"),
    dict(card_id="ruin-1", family="ruin", version="v1.0", name="ancient-ruin", kind="textual_inversion",
         tags=["background"], triggers=["ancient-ruin"], creator="ruins", created_at="2023-03-01"),
    dict(card_id="ruin-2", family="ruin", version="v1.1 ( ruin + forest )", name="ancient-ruin",
         kind="textual_inversion", tags=["background"], triggers=["ancient-ruin"], creator="ruins",
         created_at="2023-04-01"),
    dict(card_id="mercy-1", family="mercy", version="v1.0.0", name="Corneo's Mercy (Overwatch) Embedding 1.0",
         kind="textual_inversion", tags=["character"], triggers=["corneo_mercy"], creator="Master_Corneo",
         created_at="2023-01-01"),
    dict(card_id="mercy-2", family="mercy", version="v2.0.0", name="Corneo's Mercy (Overwatch) Embedding 2.0",
         kind="textual_inversion", tags=["character"], triggers=["corneo_mercy"], creator="Master_Corneo",
         created_at="2023-02-01"),
    dict(card_id="chapel", name="Ruined Chapel", tags=["background"], triggers=["ruined chapel"], creator="church"),
    dict(card_id="brigitte", name="Corneo's Brigitte (Overwatch) Embedding", kind="textual_inversion",
         tags=["character"], triggers=["corneo_brigitte"], creator="Master_Corneo"),
    dict(card_id="dva", name="Corneo's D.va (Overwatch) Embedding", kind="textual_inversion", tags=["character"],
         triggers=["corneo_dva"], creator="Master_Corneo"),
    dict(card_id="manga-arch", name="XSarchitectural-22Mangastyle", tags=["background"],
         triggers=["modern architectural renderings"], creator="xs"),
    dict(card_id="sans", name="Sans (Undertale) LoRA", tags=["character"], triggers=["sans"], creator="skeleton"),
    dict(card_id="toriel", name="Toriel (Undertale - Character)", tags=["character"], triggers=["toriel"],
         creator="goatmom"),
    dict(card_id="door", name="Wooden Door", tags=["concept"], triggers=["wooden door"], creator="doors"),
    dict(card_id="crest", name="logo-with-face-on-shield", tags=["concept"], triggers=["logo-with-face-on-shield"],
         creator="logos"),
    dict(card_id="greyscale", name="greyscale", kind="textual_inversion", tags=["style"], triggers=["greyscale"],
         creator="civitai"),
    dict(card_id="mono", name="Monochrome Manga", tags=["style"], triggers=["greyscale", "monochrome"],
         creator="inky"),
    dict(card_id="umbrella", name="Red Umbrella", tags=["concept"], triggers=["red umbrella"], creator="rain"),
    dict(card_id="mistoon", name="Mistoon Anime Style", tags=["style"], triggers=["mistoon"], creator="Mistoon"),
    dict(card_id="makima-1", family="makima", version="1.0", name="makima embedding", kind="textual_inversion",
         tags=["character"], triggers=["EMB_sksmakima"], creator="BBBGaming", created_at="2023-01-01"),
    dict(card_id="makima-2", family="makima", version="1.1", name="makima embedding", kind="textual_inversion",
         tags=["character"], triggers=["EMB_sksmakimatest"], creator="BBBGaming", created_at="2023-02-01"),
    dict(card_id="carrot", version="v1.0", name="Carrot - Style", tags=["style"], triggers=[], creator="Inzaniak"),
    dict(card_id="lazy-notxt", family="lazy", version="NoTxt", name="Inzaniak's Lazy Textual Inversions",
         kind="textual_inversion", tags=["negative"], triggers=["notxt"], creator="Inzaniak"),
    dict(card_id="lazy-nobg", family="lazy", version="NoBG", name="Inzaniak's Lazy Textual Inversions",
         kind="textual_inversion", tags=["negative"], triggers=["nobg"], creator="Inzaniak"),
]  # fmt: skip


@pytest.fixture
def checkin(settings, tmp_path):
    return checkin_among_many(settings, tmp_path / "cards", CARDS)


def test_a_version_after_a_parts_kind_word_is_that_parts(checkin):
    result = checkin.ask(
        "Clockworkspider v2.0 @0.7, ancient-ruin TI v1.0 @0.5: a swarm of brass spiders over sandstone pillars", NOW
    )
    assert weighted_ids(result) == [("ruin-1", 0.5), ("spider", 0.7)]


def test_a_version_of_three_numbers_in_brackets_after_a_kind_word(checkin):
    result = checkin.ask("Corneo's Mercy (embedding 2.0.0) healing a knight, with the Ruined Chapel lora", NOW)
    assert weighted_ids(result) == [("chapel", 1.0), ("mercy-2", 1.0)]


def test_two_models_of_one_maker_joined_by_and_stay_two(checkin):
    result = checkin.ask(
        "Corneo's Brigitte and corneo_dva sharing fries outside a concrete building, XSarchitectural-22Mangastyle "
        "lora for the background",
        NOW,
    )
    assert weighted_ids(result) == [("brigitte", 1.0), ("dva", 1.0), ("manga-arch", 1.0)]


def test_two_names_listed_with_and_are_both_the_pictures_subjects(checkin):
    result = checkin.ask("Sans and Toriel telling knock-knock jokes through a closed door in the ruins", NOW)
    assert weighted_ids(result) == [("sans", 1.0), ("toriel", 1.0)]
    assert result.prompt.startswith("sans") and "toriel telling knock-knock jokes" in result.prompt


def test_an_everyday_word_after_and_stays_the_pictures(checkin):
    result = checkin.ask("Sans and wooden door telling knock-knock jokes in the ruins", NOW)
    assert weighted_ids(result) == [("sans", 1.0)]


def test_an_embedding_a_negative_prompt_calls_by_word_and_maker_is_in_the_set(checkin):
    result = checkin.ask(
        "logo-with-face-on-shield for a football club crest -- neg: civitai's greyscale embedding", NOW
    )
    assert weighted_ids(result) == [("crest", 1.0), ("greyscale", 1.0)]
    assert result.negative_prompt == "greyscale"


def test_an_everyday_word_in_a_negative_prompt_names_no_embedding(checkin):
    result = checkin.ask("logo-with-face-on-shield for a football club crest -- neg: greyscale, lowres", NOW)
    assert weighted_ids(result) == [("crest", 1.0)]
    assert result.negative_prompt == "greyscale, lowres"


def test_a_handle_after_a_part_is_who_made_it_and_a_bracketed_number_its_version(checkin):
    result = checkin.ask(
        "bbbgaming's makima embedding (1.1) + carrot style by inzaniak: drizzling syrup over pancakes in a diner", NOW
    )
    assert weighted_ids(result) == [("carrot", 1.0), ("makima-2", 1.0)]
    assert result.prompt == "EMB_sksmakimatest: drizzling syrup over pancakes in a diner"


def test_a_number_in_brackets_or_a_date_is_no_version():
    from personalq.checkin.intent import parse_intent

    for text in ("makima lora, holding a cat (1.2)", "a calendar showing 12.05.2024", "a scoreboard reading 3.1.4"):
        assert parse_intent(text, NOW).version is None, text


def test_a_title_case_request_lists_no_everyday_words(checkin):
    result = checkin.ask("Sans And Red Umbrella Standing In The Rain", NOW)
    assert weighted_ids(result) == [("sans", 1.0)]


def test_a_style_of_an_artist_in_a_romance_language_stays_a_part(checkin):
    result = checkin.ask("sans lora estilo de mistoon, en la playa", NOW)
    assert weighted_ids(result) == [("mistoon", 1.0), ("sans", 1.0)]


def test_an_emoticon_tag_keeps_its_comma(checkin):
    result = checkin.ask("Sans and Toriel, :d, blush, telling jokes by a door", NOW)
    assert re.search(r"toriel,\s*:d, blush", result.prompt)
