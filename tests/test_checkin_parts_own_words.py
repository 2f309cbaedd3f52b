"""What a part of a composed request says of its own model picks among that part's candidates: a number its name holds
("the Backrooms Level 0 LoRA", not "Level 2"), the kind said right after it ("Lucy Heartfilia LoRA ..., with the
Flower girl embedding": the LoRA, though the request says "embedding" too), and the maker no comma or connector parts
from it ("kaltsit + impossiblebearcl4060 scouttrooper suit lora", "KDA Kai'sa v2.2 by Sasukelric, <lora:...>"))."""

import datetime as dt

import pytest
from factories import checkin_among_many, weighted_ids

NOW = dt.datetime(2023, 7, 31, 12)
CARDS = [
    dict(card_id="runner", name="Ghost Runner", tags=["character"], triggers=["ghostrunner"], creator="Eisthol"),
    dict(card_id="level-0", name='Backrooms - Level 0 : "The Lobby"', tags=["background"], triggers=["backrooms"],
         creator="Tomas_Aguilar"),
    dict(card_id="level-2", name='Backrooms - Level 2: " Pipe Dreams "', tags=["background"],
         triggers=["backrooms pipes"], creator="Tomas_Aguilar"),
    dict(card_id="lucy-lora", name="Lucy Heartfilia (Fairy Tail) LoRA", tags=["character"], triggers=["lucy"],
         creator="Balanse"),
    dict(card_id="lucy-ti", name="Lucy Heartfilia (Fairy Tail) TI", kind="textual_inversion", tags=["character"],
         triggers=["lucyti"], creator="Balanse"),
    dict(card_id="flower", name="Flower girl", kind="textual_inversion", tags=["style"], triggers=["flowergirl"],
         creator="blooms"),
    dict(card_id="kaltsit", name="Arknights-Kaltsit", tags=["character"], triggers=["kaltsit"], creator="Archetto"),
    dict(card_id="trooper", name="Star wars Scouttrooper", tags=["clothing"], triggers=["scouttrooper suit"],
         creator="impossiblebearcl4060"),
    dict(card_id="kaisa", version="KDA Kai'sa v2.2", name="KDA Kai'sa Popstar", tags=["character"],
         triggers=["k/da_kai'sa"], creator="Sasukelric"),
    dict(card_id="fantasy", version="v1.1", name="Dark Fantasy", tags=["style"], triggers=["fantasyv1.1"],
         creator="dabbinggoose"),
]  # fmt: skip


@pytest.fixture
def checkin(settings, tmp_path):
    return checkin_among_many(settings, tmp_path / "cards", CARDS)


def test_a_number_the_name_holds_picks_the_model(checkin):
    result = checkin.ask(
        "Eisthol's Ghost Runner sprinting through yellow office rooms, background from the Backrooms Level 0 LoRA", NOW
    )
    assert weighted_ids(result) == [("level-0", 1.0), ("runner", 1.0)]


def test_the_kind_said_after_a_part_is_that_parts(checkin):
    result = checkin.ask(
        "Balanse's Lucy Heartfilia LoRA summoning a spirit on a beach, with the Flower girl embedding at 0.6", NOW
    )
    assert weighted_ids(result) == [("flower", 0.6), ("lucy-lora", 1.0)]


def test_a_maker_goes_with_the_name_no_comma_parts_it_from(checkin):
    result = checkin.ask(
        "kaltsit + impossiblebearcl4060 scouttrooper suit lora, taking off the helmet in a snowy outpost", NOW
    )
    assert weighted_ids(result) == [("kaltsit", 1.0), ("trooper", 1.0)]


def test_a_maker_said_with_by_goes_with_the_name_before_it(checkin):
    result = checkin.ask(
        "KDA Kai'sa Popstar v2.2 by Sasukelric, <lora:fantasyv1.1:0.7>, standing in a burning cathedral", NOW
    )
    assert weighted_ids(result) == [("fantasy", 0.7), ("kaisa", 1.0)]
