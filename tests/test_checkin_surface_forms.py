"""The same request typed differently gets the same answer: in capitals ("EDG'S NANOSUIT LORA, ..."), or with an
everyday word mistyped by one slip ("healnig", "fberuary", "pinchin"), which would otherwise read as the name of a
model the repository lacks; the prompt keeps the word as typed. A word some card says as typed is never "mended"."""

import datetime as dt

import pytest
from factories import checkin_among_many

from personalq.checkin.spelling import as_typed, meant, mend

NOW = dt.datetime(2023, 7, 31, 12)
CARDS = [
    dict(card_id="edg-nanosuit", name="Nanosuit", tags=["clothing"], triggers=["nanosuit"], creator="EDG"),
    dict(card_id="other-nanosuit", name="Crysis nanosuit armor", tags=["clothing"], triggers=["crysuit"],
         creator="someone_else"),
    dict(card_id="mercy", name="Mercy (Overwatch)", tags=["character", "overwatch"], triggers=["mercy"]),
    dict(card_id="nanosiut", name="Nanosiut glow", tags=["concept"], triggers=["nanosiut"]),
    dict(card_id="marine-jan", family="marine", version="v1", name="Houshou Marine", tags=["character"],
         triggers=["houshou marine"], created_at="2023-01-10"),
    dict(card_id="marine-feb", family="marine", version="v2", name="Houshou Marine", tags=["character"],
         triggers=["houshou marine"], created_at="2023-02-10"),
]  # fmt: skip


@pytest.fixture
def checkin(settings, tmp_path):
    return checkin_among_many(settings, tmp_path / "cards", CARDS)


def test_a_request_in_capitals_reads_as_in_small_letters(checkin):
    result = checkin.ask("EDG'S NANOSUIT LORA, A DIVER EXPLORING A SUNKEN SHIP", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "edg-nanosuit")
    assert result.prompt == "nanosuit, a diver exploring a sunken ship"


def test_a_few_capitals_stay_as_typed(checkin):
    result = checkin.ask("edg's nanosuit lora, a diver exploring a SUNKEN ship", NOW)
    assert result.prompt == "nanosuit, a diver exploring a SUNKEN ship"


def test_a_mistyped_scene_word_is_no_missing_name(checkin):
    result = checkin.ask("mercy from overwatch healnig a wounded soldier in a field hospital", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "mercy")
    assert result.prompt == "a mercy healnig a wounded soldier in a field hospital"


def test_a_mistyped_answer_still_picks_the_version(checkin):
    asked = checkin.ask("houshou marine steerign a pirate ship through a storm", NOW)
    assert asked.status == "clarify"
    answered = checkin.answer(asked.session, "the one from fberuary")
    assert (answered.status, answered.checkpoint_id) == ("selected", "marine-feb")
    assert answered.prompt == "a houshou marine steerign a pirate ship through a storm"


def test_a_word_a_card_says_is_never_mended(checkin):
    result = checkin.ask("the nanosiut lora, a city at night", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "nanosiut")


@pytest.mark.parametrize(
    ("typed", "word"),
    [("healnig", "healing"), ("everyhting", "everything"), ("rceently", "recently"), ("fberuary", "february")],
)
def test_one_slip_from_a_common_word_is_that_word(typed, word):
    assert meant(typed) == word


@pytest.mark.parametrize(
    "typed",
    [
        "froppy",
        "mudrock",
        "kinrded",
        "shooing",
        "backround",
        "megumin",
        "luchadora",
        "hanfu",
        "suigintou",
        "kimono",
        "lora",
    ],
)
def test_names_words_people_write_and_short_words_stay(typed):
    assert meant(typed) is None


def test_a_rarer_word_is_meant_when_a_card_says_it():
    assert meant("kinrded", says={"kindred"}.__contains__) == "kindred"


def test_mend_keeps_handles_links_and_addresses_and_says_what_it_mended():
    assert mend("Healnig with @everyhting, ?q=everyhting and everyhting@x.com", lambda w: False) == (
        "Healing with @everyhting, ?q=everyhting and everyhting@x.com",
        [("Healing", "Healnig", 0)],
    )


def test_the_prompt_gets_each_word_back_where_it_was_typed():
    text, fixes = mend("a priestess healnig a knight, healing light", lambda w: False)
    assert text == "a priestess healing a knight, healing light"
    # a trigger before the scene says the word too: the scene's own is the one typed
    assert as_typed("healing magic, a priestess healing a knight, healing light", fixes) == (
        "healing magic, a priestess healnig a knight, healing light"
    )


def test_an_answers_typo_stays_out_of_the_prompt(checkin):
    asked = checkin.ask("houshou marine healing a sailor on a ship's deck", NOW)
    answered = checkin.answer(asked.session, "the healnig one from fberuary")
    assert (answered.status, answered.checkpoint_id) == ("selected", "marine-feb")
    assert answered.prompt == "a houshou marine healing a sailor on a ship's deck"
