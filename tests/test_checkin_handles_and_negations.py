"""A creator's handle that names no model picks that creator's model wherever it stands ("SRestia가 올린 Eula 로라로",
"eula lawrence (JackSpring) ...", "bulma (zetaworks's lora)"), and leaves the prompt with the particle written on
it. A word ruled out that only a candidate's tags carry rules out other models, never the only one the request names
("webcam screenshot lora, not the cctv embedding"). A version label written whole picks it among labels a number
alone cannot tell apart ("the 2.1 - 1.1 update"). A tag list wrapped in WebUI emphasis gives its identity tag
without the brackets."""

import datetime as dt

import pytest
from factories import checkin_among_many

from personalq.repository.card import prompt_trigger

NOW = dt.datetime(2023, 7, 31, 12)
CARDS = [
    dict(card_id="eula-srestia", name="Eula-优菈", tags=["character", "genshin impact"],
         triggers=["(eula, youla, /genshin impact/), "], creator="SRestia"),
    dict(card_id="eula-jack", name="Eula Lawrence (Genshin Impact)", tags=["character", "genshin impact"],
         triggers=["eulalawrencegi"], creator="JackSpring"),
    dict(card_id="eula-other", name="Eula Genshin Impact | Character Lora", tags=["character"],
         triggers=["eula_gi"], creator="loraworks"),
    dict(card_id="webcam", name="Webcam screenshot", tags=["cctv", "webcam", "style"], triggers=["webcamscrenshot"],
         creator="dobro"),
    dict(card_id="cctv", name="Concept CCTV Style", kind="textual_inversion", tags=["style"], triggers=["cctvstyle"],
         creator="someone"),
    dict(card_id="street-day", family="street", version="v1", name="Street photo", tags=["photo", "day"],
         triggers=["streetph"], created_at="2023-01-01"),
    dict(card_id="street-night", family="street", version="v2", name="Street photo", tags=["photo", "night"],
         triggers=["streetph"], created_at="2023-02-01"),
    dict(card_id="bulma-tnp", name="[justTNP] Bulma | Dragon Ball", tags=["character"], triggers=["bulma"],
         creator="justTNP"),
    dict(card_id="bulma-other", name="Bulma (Dragon Ball Z)", tags=["character"], triggers=["bulmadbz"],
         creator="zetaworks"),
    dict(card_id="wff", name="Weird Future Fashion [LoRA]", tags=["clothing"], triggers=["weird future fashion"],
         creator="MachineCode"),
    dict(card_id="rz-10", family="rz", version="2.1 - 1.0", name="RZ Passage", tags=["concept"],
         triggers=["rzpassage"], created_at="2023-02-01"),
    dict(card_id="rz-11", family="rz", version="2.1 - 1.1", name="RZ Passage", tags=["concept"],
         triggers=["rzpassage"], created_at="2023-03-01"),
]  # fmt: skip


@pytest.fixture
def checkin(settings, tmp_path):
    return checkin_among_many(settings, tmp_path / "cards", CARDS)


def test_a_handle_with_a_particle_picks_that_creators_model(checkin):
    result = checkin.ask("SRestia가 올린 Eula 로라로, 눈 덮인 성벽 위에서 검을 든 모습", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "eula-srestia")
    assert result.prompt == "eula, 눈 덮인 성벽 위에서 검을 든 모습"


def test_a_bracketed_handle_picks_that_creators_model(checkin):
    result = checkin.ask("eula lawrence (JackSpring) standing guard at a torch-lit crypt entrance", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "eula-jack")
    assert result.prompt == "a eulalawrencegi standing guard at a torch-lit crypt entrance"


def test_a_possessive_handle_in_brackets_is_who_made_the_model_before_them(checkin):
    result = checkin.ask(
        "bulma (zetaworks's lora) fixing a hover bike, dressed in MachineCode's weird future fashion", NOW
    )
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["bulma-other", "wff"]


def test_a_label_written_whole_picks_its_version(checkin):
    result = checkin.ask("rz passage lora, the 2.1 - 1.1 update: a stone archway over a desert", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "rz-11")


def test_without_a_handle_the_namesakes_are_asked_about(checkin):
    assert checkin.ask("eula standing guard at a crypt entrance", NOW).status == "clarify"


def test_a_tag_ruled_out_never_rules_out_the_model_named(checkin):
    result = checkin.ask("webcam screenshot lora, not the cctv embedding - a moose at a gas station at 3am", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "webcam")
    assert result.prompt == "webcamscrenshot, a moose at a gas station at 3am"


def test_a_tag_ruled_out_still_tells_versions_apart(checkin):
    result = checkin.ask("street photo lora, not the night one: a busker at a subway entrance", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "street-day")


@pytest.mark.parametrize(
    ("trained", "tag"),
    [
        ("(eula, youla, /genshin impact/), ", "eula"),
        ("(eula:1.2), 1girl, long hair", "eula"),
        ("(masterpiece), zhongli", "zhongli"),
        ("sugimori ken \\(style\\)", "sugimori ken (style)"),
    ],
)
def test_a_tag_list_in_emphasis_gives_its_identity_tag(trained, tag):
    assert prompt_trigger(trained) == tag
