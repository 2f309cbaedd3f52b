"""The picture's own words name no model: a role word beside a name says what kind of model, not which; a common
word of the scene that is some character's name does not call them; a place said before a style's name is the
picture's; and words that found a concept by what it draws stay in the prompt, its trained word beside them."""

import datetime as dt

import pytest
from factories import checkin_among_many, option_ids

NOW = dt.datetime(2024, 3, 1, 12)
CARDS = [
    dict(card_id="kodomo-bg", name="Kodomo Pack Background", tags=["background"], triggers=["kdmbg"]),
    dict(card_id="lotte-bg", name="Lotte Pack background", tags=["background"], triggers=["lttbg"]),
    dict(card_id="interior", name="Wabi interior design", triggers=["the whole living room", "light hues"],
         tags=["interior design"]),
    dict(card_id="midnight", name="Midnight [Hero Academy] Character LoRA", tags=["character"],
         triggers=["midnighthero"]),
    dict(card_id="girlish", name="Gender Slider Girlish", tags=["slider"], triggers=["girlish"]),
    # alleys drawn for several games: a word some models are called by
    *(dict(card_id=f"alley-{game}", name=f"{game} alley", tags=["scene"], triggers=[f"{game}alley"])
      for game in ("bowling", "skittles", "kegel", "tenpin")),
    dict(card_id="matrix", name="Enter the Matrix | fighting poses", tags=["pose", "movie"],
         triggers=["enterthematrix"]),
    dict(card_id="bullet", name="Bullet time pose", tags=["pose"], triggers=["bullettime"]),
    dict(card_id="tpose", name="T Pose | 1MB Pose LoRA", tags=["pose"], triggers=["TPose"]),
    dict(card_id="gown", name="Evening Attire | Gowns", tags=["clothing"], triggers=["vnGown"], creator="velvetnib"),
    dict(card_id="coiling", name="Snake coiling", tags=["concept"], triggers=["coils"]),
    dict(card_id="takamichi", name="Takamichi style", version="no trigger words version", tags=["style"]),
    dict(card_id="mira", name="Mira Vale", kind="textual_inversion", tags=["character"], triggers=["miravale"],
         creator="nightowl_ai"),
    dict(card_id="owl-cafe", name="Owl Cafe (Nightowl AI)", tags=["background"], triggers=["owlcafe"]),
    dict(card_id="other-ti", name="Orla Finch", kind="textual_inversion", tags=["character"], triggers=["orlafinch"],
         creator="quillwright"),
    dict(card_id="sunfes", name="[Costume] SunFes marching band uniform", tags=["costume", "clothing"],
         subjects=["uniform", "marching", "band"], triggers=["sunfes"]),
    dict(card_id="anubis", name="Alkemanubis style", tags=["style", "girl"], subjects=["girl"],
         styles=["alkemanubis style"], triggers=["alkemanubis"]),
]  # fmt: skip


@pytest.fixture
def checkin(settings, tmp_path):
    return checkin_among_many(settings, tmp_path / "cards", CARDS)


@pytest.mark.parametrize(
    "request_text",
    [
        # "background" says the kind; no background model has the lighthouse
        "lighthouse background lora, stormy coast at night",
        # "light hues" is no "lighthouse"
        "a lighthouse lora, a lighthouse on a cliff",
        # a character whose name is a common word the scene says ("at midnight") is not asked for
        "a laundromat at midnight, a woman waiting for her laundry to dry",
    ],
)
def test_the_pictures_words_name_no_model(checkin, request_text):
    result = checkin.ask(request_text, NOW)
    assert (result.status, result.checkpoint_id) == ("no_match", None)


def test_a_role_word_beside_a_name_says_only_the_kind(checkin):
    """The alleys are what "alley" names; the background models without one are not asked about."""
    result = checkin.ask("an alley background lora, friends cheering after a strike", NOW)
    assert result.status == "clarify"
    assert option_ids(result) == ["alley-bowling", "alley-kegel", "alley-skittles", "alley-tenpin"]


def test_a_role_word_alone_is_the_name(checkin):
    result = checkin.ask("the background lora from the lotte pack, a quiet street", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "lotte-bg")


def test_a_place_said_before_a_styles_name_stays_in_the_picture(checkin):
    result = checkin.ask("a jackal-eared girl dancing at a night festival in the ALKEMANUBIS style", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "anubis")
    assert "dancing at a night festival" in result.prompt
    assert result.prompt.count("alkemanubis") == 1


def test_a_concept_found_by_what_it_draws_keeps_those_words(checkin):
    result = checkin.ask("a tuba player in a marching band at a football game", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "sunfes")
    assert result.prompt == "sunfes, a tuba player in a marching band at a football game"


def test_a_description_of_the_model_picks_it_and_leaves_the_prompt(checkin):
    """ "trained on" and "based on" describe the model, as "that makes" does; none of the description is drawn."""
    result = checkin.ask("the pose lora trained on the matrix movies, two agents fighting in a subway station", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "matrix")
    assert result.prompt == "enterthematrix, two agents fighting in a subway station"


def test_a_letter_joined_by_a_hyphen_is_part_of_the_word(checkin):
    result = checkin.ask("the T-pose lora, a knight in full plate", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "tpose")
    assert result.prompt == "TPose, a knight in full plate"


def test_a_model_doing_something_is_someone_in_the_picture(checkin):
    result = checkin.ask("velvetnib's evening attire lora, a model strutting down a neon runway", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "gown")
    assert "a model strutting down a neon runway" in result.prompt


def test_a_trained_word_said_as_one_names_its_model(checkin):
    """ "with the 'coils' trigger word" describes the model by its trained word; "trigger words" in another's version
    label is no evidence."""
    result = checkin.ask("the lora with the 'coils' trigger word, a priestess in a ruined shrine", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "coiling")
    assert result.prompt == "coils, a priestess in a ruined shrine"


def test_a_kind_of_model_from_someone_who_only_makes_models(checkin):
    result = checkin.ask("the embedding from nightowl_ai, portrait of her by a rainy window", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "mira")
    assert "nightowl" not in result.prompt
