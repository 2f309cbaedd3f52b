"""Who made a model and on which day, as requests say it: a creator and a day with no name between them pick among
that creator's models alone ("the lora by reevemusk from march 6", "la lora de reevemusk del 6 de marzo"), however
many others share the day; a day written in another language's order or in Chinese and Japanese ("6 de marzo",
"1月3日"); a handle before "did" or "made" and a kind word is who made it ("alicefir did a ... lora"); and a word
after a date that the reading cut is no maker ("hoshi119 lora from apr 23, guy licking his lips ...")."""

import datetime as dt

import pytest
from factories import checkin_among_many

NOW = dt.datetime(2023, 7, 31, 12)
# many models of the same day by others, so that the day alone does not pick
OTHERS = [
    dict(card_id=f"other-{n}", name=f"Quill study {n}", tags=["style"], triggers=[f"quill{n}"], creator=f"maker{n}",
         created_at="2023-03-06")
    for n in range(6)
]  # fmt: skip
CARDS = [
    *OTHERS,
    dict(card_id="reeve-mar", name="ChilloutMixss3.0", tags=["person"], triggers=["girl"], creator="ReeveMusk",
         created_at="2023-03-06"),
    dict(card_id="reeve-may", name="Garden girl", tags=["person"], triggers=["gardengirl"], creator="ReeveMusk",
         created_at="2023-05-02"),
    dict(card_id="persei-jan3", name="Ink wash TI", kind="textual_inversion", tags=["style"], triggers=["inkw-3"],
         creator="agntperseus", created_at="2023-01-03"),
    dict(card_id="persei-jan5", name="Gold leaf TI", kind="textual_inversion", tags=["style"], triggers=["gold-5"],
         creator="agntperseus", created_at="2023-01-05"),
    dict(card_id="hoshi", name="hoshi119", tags=["concept"], triggers=["licking lips"], creator="hoshiko",
         created_at="2023-04-23"),
    dict(card_id="guy-grill", name="Grill master", tags=["concept"], triggers=["grillmaster"], creator="guy",
         created_at="2023-02-01"),
    dict(card_id="alice-gf", name="Girls' Frontline lolita outfits", tags=["clothing"], triggers=["gflolita"],
         creator="AliceFir", created_at="2023-02-01"),
    dict(card_id="mika-gf", name="Girls' Frontline lolita dress", tags=["clothing"], triggers=["gfdress"],
         creator="mikasa_ai", created_at="2023-02-03"),
]  # fmt: skip


@pytest.fixture
def checkin(settings, tmp_path):
    return checkin_among_many(settings, tmp_path / "cards", CARDS)


@pytest.mark.parametrize(
    "request_text",
    [
        "the lora by ReeveMusk from march 6: a woman with a straw hat at a flower market",
        "La lora de ReeveMusk del 6 de marzo: una mujer con sombrero de paja en un mercado de flores",
    ],
)
def test_a_creator_and_a_day_pick_among_that_creators_models(checkin, request_text):
    result = checkin.ask(request_text, NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "reeve-mar")
    assert result.prompt.startswith("girl, a woman with a straw hat") or "una mujer con sombrero" in result.prompt
    assert ":" not in result.prompt


@pytest.mark.parametrize(
    ("said", "days"),
    [
        ("la lora del 6 de marzo", [dt.date(2022, 3, 6), dt.date(2023, 3, 6)]),
        ("1月3日に入れたTIで", [dt.date(2022, 1, 3), dt.date(2023, 1, 3)]),
        ("2023年3月6日的lora", [dt.date(2023, 3, 6)]),
    ],
)
def test_a_day_in_another_languages_order_is_that_day(said, days):
    from personalq.checkin.intent import parse_intent

    windows = parse_intent(said, NOW).created
    assert [w.start.date() for w in windows][-len(days) :] == days
    assert all(w.end - w.start == dt.timedelta(days=1) for w in windows)


def test_a_handle_that_did_a_lora_made_it(checkin):
    result = checkin.ask("AliceFir did a girls' frontline lora, can I get it for her reading in a library?", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "alice-gf")


def test_a_word_after_a_cut_date_is_no_maker(checkin):
    result = checkin.ask("hoshi119 lora from apr 23, guy licking his lips at a barbecue grill", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "hoshi")
